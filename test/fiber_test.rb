# frozen_string_literal: true

require_relative 'test_helper'
require_relative 'support/test_scheduler'

# Compiles under a fiber scheduler yield to it: other fibers run while a
# compile waits for the compiler, any number of fibers of one thread compile
# at once, callbacks run (and may wait) in the compiling fiber, and stopping a
# fiber ends only its own compile. Every case runs under the async gem's
# scheduler (where the async gem is installed) and under TestScheduler.
module FiberSchedulerCases
  SLOW = '$x: 0; @for $i from 1 through 3000000 { $x: $x + 1; } slow { n: $x }'

  def test_other_fibers_run_while_a_compile_waits
    compiler = new_compiler
    compiler.compile_string('a { b: c }')
    ticks = 0
    elapsed = nil
    reactor do
      ticker = spawn do
        loop do
          ticks += 1
          sleep 0.005
        end
      end
      started = monotonic_now
      assert_equal "slow {\n  n: 3000000;\n}", compiler.compile_string(SLOW).css
      elapsed = elapsed_since(started)
      ticker.stop
    end
    expected = elapsed / 0.005
    assert_operator ticks, :>=, expected / budget(2),
                    "#{ticks} ticks in #{elapsed.round(2)} s (#{expected.round} expected)"
  end

  def test_sixty_four_fibers_compile_at_once
    compiler = new_compiler
    compiler.compile_string('a { b: c }')
    napping = { 'nap($i)' => lambda { |args|
      sleep 0.05
      Sass::Value::String.new("n#{args[0].assert_number.value.to_i}", quoted: false)
    } }
    results = nil
    started = monotonic_now
    reactor do
      tasks = Array.new(64) { |i| spawn { compiler.compile_string("f#{i} { v: nap(#{i}) }", functions: napping).css } }
      results = tasks.map(&:value)
    end
    elapsed = elapsed_since(started)
    assert_equal(Array.new(64) { |i| "f#{i} {\n  v: n#{i};\n}" }, results)
    # Serially, 64 naps are 3.2 s; the compiler runs 15 compilations at once
    # per process (7 on 32-bit CPUs), so a few rounds of 50 ms.
    assert_operator elapsed, :<, budget(1.6), "64 fibers took #{elapsed.round(2)} s"
    assert_operator compiler.send(:host).compiler_pids.size, :<=, compiler.send(:host).max_processes
  end

  def test_callbacks_run_in_the_compiling_fiber_and_may_wait
    compiler = new_compiler
    seen = []
    functions = { 'where()' => lambda { |_|
      sleep 0.01
      seen << Fiber.current
      Sass::Value::String.new('here', quoted: false)
    } }
    compiling = []
    reactor do
      tasks = Array.new(4) do
        spawn do
          compiling << Fiber.current
          compiler.compile_string('a { b: where() }', functions:).css
        end
      end
      tasks.each { |task| assert_equal "a {\n  b: here;\n}", task.value }
    end
    assert_equal compiling.sort_by(&:object_id), seen.sort_by(&:object_id)
  end

  def test_stopping_a_fiber_ends_its_compile_and_no_other
    compiler = new_compiler(max_processes: 1)
    compiler.compile_string('a { b: c }')
    stopped_after = nil
    other = nil
    reactor do
      victim = spawn { compiler.compile_string(SLOW) }
      bystander = spawn { compiler.compile_string("#{SLOW} x { y: z }").css }
      sleep 0.1
      started = monotonic_now
      victim.stop
      stopped_after = elapsed_since(started)
      other = bystander.value
    end
    assert_operator stopped_after, :<, 0.5
    assert_equal "slow {\n  n: 3000000;\n}\n\nx {\n  y: z;\n}", other
    assert_equal "d {\n  e: f;\n}", compiler.compile_string('d { e: f }').css
  end

  # A timeout (Async's with_timeout, or the test scheduler's) raised into a
  # fiber that waits on the compiler ends that compile at once, with that
  # exception, whatever the scheduler does with exceptions raised into its
  # io_wait (async 1.x swallows its own TimeoutError there).
  ENDLESS = '$i: 0; @while true { $i: $i + 1; } a { b: $i }'

  # Compiles +source+ in a fiber under a +seconds+ timeout: the error it
  # ended with and after how long.
  def compile_with_timeout(compiler, seconds, source)
    error = elapsed = nil
    reactor do
      task = spawn do
        started = monotonic_now
        with_timeout(seconds) { compiler.compile_string(source) }
      rescue timeout_error => e
        elapsed = elapsed_since(started)
        [e]
      end
      error, = task.value
    end
    [error, elapsed]
  end

  def test_a_timeout_ends_an_endless_compile_with_the_timeout_error
    compiler = new_compiler
    compiler.compile_string('a { b: c }')
    error, elapsed = compile_with_timeout(compiler, 1, ENDLESS)
    assert_kind_of timeout_error, error
    assert_in_delta 1.0, elapsed, budget(0.5)
    # The compiler cannot cancel the endless compilation; other compiles still run.
    assert_equal "d {\n  e: f;\n}", compiler.compile_string('d { e: f }').css
  end

  def test_a_short_timeout_ends_a_longer_compile_when_it_fires
    compiler = new_compiler
    compiler.compile_string('a { b: c }')
    error, elapsed = compile_with_timeout(compiler, 0.1, SLOW)
    assert_kind_of timeout_error, error
    assert_operator elapsed, :<, budget(0.4)
  end

  def test_a_timeout_of_one_of_many_waiting_fibers_ends_only_its_compile
    compiler = new_compiler
    compiler.compile_string('a { b: c }')
    results = nil
    reactor do
      tasks = Array.new(8) do |i|
        spawn do
          if i.zero?
            with_timeout(0.2) { compiler.compile_string(ENDLESS) }
          else
            compiler.compile_string("#{SLOW} f#{i} { v: #{i} }").css
          end
        rescue timeout_error => e
          [e]
        end
      end
      results = tasks.map(&:value)
    end
    assert_kind_of timeout_error, results.first.first
    results.drop(1).each_with_index do |css, i|
      assert_equal "slow {\n  n: 3000000;\n}\n\nf#{i + 1} {\n  v: #{i + 1};\n}", css
    end
  end

  def test_a_callback_error_under_a_scheduler_is_the_compile_error
    compiler = new_compiler
    error = nil
    reactor do
      task = spawn do
        compiler.compile_string('a { b: fail() }', functions: { 'fail()' => lambda { |_|
          sleep 0.01
          raise ArgumentError, 'refused'
        } })
      rescue Sass::CompileError => e
        [e] # (async 1.x takes a task whose value is an exception for failed)
      end
      error, = task.value
    end
    assert_kind_of Sass::CompileError, error
    assert_match(/refused/, error.message)
    assert_kind_of ArgumentError, error.cause
  end

  def test_nested_compiles_from_every_fiber_inside_a_callback
    compiler = new_compiler(max_processes: 1)
    inner = lambda { |args|
      depth = args[0].assert_number.value.to_i
      sleep 0.005
      css = if depth.zero?
              'leaf'
            else
              compiler.compile_string("i { v: inner(#{depth - 1}) }",
                                      functions: { 'inner($d)' => inner }).css
            end
      Sass::Value::String.new(css.lines.size.to_s, quoted: false)
    }
    results = nil
    reactor do
      tasks = Array.new(20) do
        spawn do
          compiler.compile_string('o { v: inner(3) }', functions: { 'inner($d)' => inner }).css
        end
      end
      results = tasks.map(&:value)
    end
    assert_equal(["o {\n  v: 3;\n}"] * 20, results)
  end

  def test_threads_and_fibers_share_a_compiler
    compiler = new_compiler
    threads = Array.new(4) do |t|
      Thread.new { Array.new(20) { |i| compiler.compile_string(".t#{t}-#{i} { v: #{i} }").css } }
    end
    fibers = nil
    reactor do
      tasks = Array.new(16) do |f|
        spawn do
          Array.new(20) do |i|
            compiler.compile_string(".f#{f}-#{i} { v: #{i} }").css
          end
        end
      end
      fibers = tasks.map(&:value)
    end
    threads.each_with_index do |thread, t|
      assert_equal(Array.new(20) { |i| ".t#{t}-#{i} {\n  v: #{i};\n}" }, thread.value)
    end
    fibers.each_with_index do |css, f|
      assert_equal(Array.new(20) { |i| ".f#{f}-#{i} {\n  v: #{i};\n}" }, css)
    end
  end

  def test_closing_the_compiler_ends_a_waiting_fibers_compile
    compiler = new_compiler
    compiler.compile_string('a { b: c }')
    error = nil
    reactor do
      waiting = spawn do
        compiler.compile_string(SLOW)
      rescue IOError => e
        [e]
      end
      sleep 0.1
      compiler.close
      error, = waiting.value
    end
    assert_kind_of IOError, error
    assert_equal 'closed compiler', error.message
  end
end

# Under TestScheduler: the reactor is a thread whose scheduler runs the
# fibers; a task is a scheduled fiber whose value a Queue hands over.
class TestSchedulerFiberTest < Minitest::Test
  include FiberSchedulerCases

  # What #spawn returns.
  class Task
    # Raised in a stopped fiber.
    class Stop < StandardError; end

    def initialize(&block)
      @result = nil
      @fiber = Fiber.schedule do
        @result = [:ok, block.call]
      rescue Stop
        @result = [:stopped, nil]
      rescue Exception => e # rubocop:disable Lint/RescueException
        @result = [:error, e]
      end
    end

    # Waits (sleeping, so other fibers run) for the fiber's end. Polling keeps
    # the harness to the hooks under test: with a Queue here, this scheduler's
    # unblock hook was once handed a non-fiber on Ruby 3.1.2 (not looked into
    # further; the async gem's scheduler covers Queue hand-offs).
    def value
      sleep 0.001 while @result.nil?
      kind, value = @result
      raise value if kind == :error

      value
    end

    def stop
      @fiber.raise(Stop) if @fiber.alive?
    end
  end

  # Raises Timeout::Error into the calling fiber after +seconds+, unless the
  # block is over by then: from a fiber of the scheduler's own, as a timeout
  # of a fiber scheduler does.
  def with_timeout(seconds)
    fiber = Fiber.current
    armed = true
    Fiber.schedule do
      sleep seconds
      fiber.raise(Timeout::Error, 'execution expired') if armed && fiber.alive?
    end
    yield
  ensure
    armed = false
  end

  def timeout_error = Timeout::Error

  def reactor(&)
    thread = Thread.new do
      Fiber.set_scheduler(TestScheduler.new)
      Task.new(&)
    end
    thread.join
  end

  def spawn(&)
    Task.new(&)
  end
end

begin
  require 'async'
rescue LoadError
  warn 'the async gem is not installed: fiber tests run under TestScheduler only'
end

if defined?(Async)
  # Under the async gem's scheduler (what Falcon runs).
  class AsyncFiberTest < Minitest::Test
    include FiberSchedulerCases

    # What #spawn returns: an Async::Task, as the tests call it.
    AsyncTask = Struct.new(:task) do
      def value = task.wait
      def stop = task.stop
    end

    def reactor(&)
      Async(&).wait
    end

    def spawn(&)
      AsyncTask.new(Async::Task.current.async(&))
    end

    def with_timeout(seconds, &)
      Async::Task.current.with_timeout(seconds, &)
    end

    def timeout_error = Async::TimeoutError
  end
end
