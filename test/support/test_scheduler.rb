# frozen_string_literal: true

require 'io/nonblock'

# A small Fiber::Scheduler built on IO.select, modelled on the one Ruby's own
# test suite keeps: it runs the same hooks the async gem's scheduler does
# (io_wait, kernel_sleep, block, unblock, fiber), so the fiber tests also
# run on Rubies for which the async gem is not installed here. Fibers made
# with #fiber (Fiber.schedule) run until they wait; #run (called by #close at
# the end of the thread's scheduled block) resumes them as their waits end.
class TestScheduler
  def initialize
    @readable = {}
    @writable = {}
    @sleeping = {}
    @blocked = 0
    @ready = []
    @lock = Thread::Mutex.new
    @wakeup, @waker = IO.pipe
  end

  def fiber(&)
    Fiber.new(blocking: false, &).tap(&:resume)
  end

  def run
    while @readable.any? || @writable.any? || @sleeping.any? || @blocked.positive? || @ready.any?
      readable, writable = IO.select([@wakeup, *@readable.keys], @writable.keys, [], timeout)
      @wakeup.read_nonblock(1024, exception: false) if readable&.delete(@wakeup)
      ready = (readable || []).map { |io| @readable.delete(io) }
      ready.concat((writable || []).map { |io| @writable.delete(io) })
      resume_all(ready)
      now = monotonic
      due = @sleeping.select { |_, deadline| deadline && deadline <= now }.keys
      due.each { |fiber| @sleeping.delete(fiber) }
      resume_all(due)
      resume_all(@lock.synchronize { @ready.slice!(0..) })
    end
  end

  def close
    run
    @wakeup.close
    @waker.close
  end

  def io_wait(io, events, timeout)
    fiber = Fiber.current
    @readable[io] = fiber if events.anybits?(IO::READABLE)
    @writable[io] = fiber if events.anybits?(IO::WRITABLE)
    @sleeping[fiber] = timeout && (monotonic + timeout)
    Fiber.yield
    events
  ensure
    @readable.delete(io)
    @writable.delete(io)
    @sleeping.delete(fiber)
  end

  def kernel_sleep(duration = nil)
    @sleeping[Fiber.current] = duration && (monotonic + duration)
    Fiber.yield
  ensure
    @sleeping.delete(Fiber.current)
  end

  def block(_blocker, timeout = nil)
    @blocked += 1
    @sleeping[Fiber.current] = monotonic + timeout if timeout
    Fiber.yield
  ensure
    @blocked -= 1
    @sleeping.delete(Fiber.current)
  end

  def unblock(_blocker, fiber)
    @lock.synchronize { @ready << fiber }
    @waker.write_nonblock('.', exception: false)
  end

  private

  def timeout
    deadlines = @sleeping.values.compact
    return nil if deadlines.empty? || @ready.any?

    [deadlines.min - monotonic, 0].max
  end

  def resume_all(fibers)
    fibers.each { |fiber| fiber.resume if fiber.alive? }
  end

  def monotonic
    Process.clock_gettime(Process::CLOCK_MONOTONIC)
  end
end
