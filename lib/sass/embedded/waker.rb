# frozen_string_literal: true

module Sass
  module Embedded
    # What a compile waiting for the compiler sleeps on when it is not the one
    # watching the compiler's output: woken by the Ruby thread that routes its
    # message (the native host calls #wake), so any number of threads and
    # fibers wait without a descriptor each. It is Ruby's own wait: it takes
    # part in signal handling and wakes for +Thread#raise+, +Thread#kill+ and
    # +Timeout+.
    #
    # One per thread (and FiberWaker one per fiber under a fiber scheduler)
    # that has waited, kept in a fiber-local; the native host registers it in
    # PARKED under the id of each compile that may park, until the compile
    # ends.
    class Waker
      # Wake id => Waker or FiberWaker, for the compiles in flight that may
      # park. Only the native host touches it, with the GVL held.
      PARKED = {} # rubocop:disable Style/MutableConstant

      def initialize
        @mutex = Thread::Mutex.new
        @condition = Thread::ConditionVariable.new
        @woken = false
      end

      # Sleeps until #wake (called since the last park) or for +timeout+
      # seconds (nil: no limit).
      # @return [nil]
      def park(timeout)
        @mutex.synchronize do
          @condition.wait(@mutex, timeout) unless @woken
          @woken = false
        end
        nil
      end

      # Wakes the parked thread, or lets its next park return at once.
      # @return [nil]
      def wake
        @mutex.synchronize do
          @woken = true
          @condition.signal
        end
        nil
      end
    end

    # A Waker for a fiber under a fiber scheduler. It parks in a +Queue#pop+,
    # which goes through the scheduler's block and unblock hooks, where a
    # timeout or stop of the fiber reaches it (and where Ruby cleans up after
    # it: a condition variable's wait under a scheduler leaves its mutex
    # unlocked when the fiber is interrupted, on Ruby 3.1). A fiber never
    # parks with a timeout.
    class FiberWaker
      def initialize
        @queue = Thread::Queue.new
      end

      # Sleeps until #wake (called since the last park).
      # @return [nil]
      def park(_timeout = nil)
        @queue.pop
        nil
      end

      # Wakes the parked fiber, or lets its next park return at once.
      # @return [nil]
      def wake
        @queue.push(true) if @queue.empty?
        nil
      end

      # The watcher's wait: until one of +fds+ (the host's waitables: on
      # Windows sockets, which each helper holds as a descriptor of Ruby's
      # only while it waits) is readable, or +timeout+
      # seconds (nil: no limit). The fiber does not wait in the scheduler's
      # +io_wait+ itself: a scheduler may swallow an exception raised into a
      # fiber waiting there (async 1.x rescues its own TimeoutError, which its
      # +with_timeout+ raises, and returns as if the wait had ended), and the
      # compile would then never end. Helper fibers wait there instead and wake
      # this one, which parks meanwhile, where a timeout or stop reaches it. (A
      # helper still waiting when the fiber leaves ends at the compiler's next
      # output, at the next ring of the kick, which the host rings when a
      # watcher leaves unwoken, or at its timeout.)
      # @return [nil]
      def watch(fds, timeout)
        fds.each do |waitable|
          Fiber.schedule do
            fd = Host.waitable_fd(waitable)
            Fiber.scheduler.io_wait(IO.for_fd(fd, autoclose: false), IO::READABLE, timeout)
          rescue StandardError
            nil
          ensure
            Host.release_fd(fd) if fd
            wake
          end
        end
        park
      end
    end

    private_constant :Waker
    private_constant :FiberWaker
  end
end
