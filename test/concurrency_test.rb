# frozen_string_literal: true

require_relative 'test_helper'
require 'open3'
require 'rbconfig'

# Many threads share one compiler; each gets its own result, and an interrupt
# reaches only the thread it was sent to.
class ConcurrencyTest < Minitest::Test
  def expected_css(thread, index)
    ".t#{thread}-#{index} {\n  v: #{(thread * 1000) + index};\n}"
  end

  def source(thread, index)
    ".t#{thread}-#{index} { v: #{thread} * 1000 + #{index} }"
  end

  # slow(): a function that says it started (into +entered+) and sleeps 30 s.
  def slow_function(entered = nil)
    { 'slow()' => lambda { |_args|
      entered&.push(true)
      sleep 30
      Sass::Value::Null::NULL
    } }
  end

  def test_sixteen_threads_times_two_hundred_compiles_each_get_their_own_css
    compiler = new_compiler
    threads = Array.new(16) do |t|
      Thread.new do
        Array.new(200) { |i| [i, compiler.compile_string(source(t, i)).css] }
      end
    end
    threads.each_with_index do |thread, t|
      results = thread.value
      assert_equal 200, results.length
      results.each { |i, css| assert_equal expected_css(t, i), css }
    end
  end

  def test_threads_with_functions_get_their_own_arguments
    compiler = new_compiler
    functions = { 'echo($v)' => ->(args) { args.first } }
    threads = Array.new(8) do |t|
      Thread.new do
        Array.new(50) { |i| [i, compiler.compile_string("a { b: echo(#{t}_#{i}) }", functions:).css] }
      end
    end
    threads.each_with_index do |thread, t|
      thread.value.each { |i, css| assert_equal "a {\n  b: #{t}_#{i};\n}", css }
    end
  end

  def test_callbacks_run_on_the_calling_thread
    seen = []
    functions = { 'where()' => lambda { |_args|
      seen << [Thread.current, Thread.current[:marker]]
      Sass::Value::String.new('here')
    } }
    Thread.current[:marker] = :caller
    Sass.compile_string('a { b: where() }', functions:)
    assert_equal [[Thread.current, :caller]], seen
  ensure
    Thread.current[:marker] = nil
  end

  def test_nested_compile_inside_a_function
    compiler = new_compiler
    functions = {
      'inner($n)' => lambda { |args|
        depth = args.first.assert_number.to_i
        css = compiler.compile_string("x { y: #{depth} }", functions: {
                                        'deeper()' => ->(_) { Sass::Value::Number.new(depth + 1) }
                                      }).css
        Sass::Value::String.new(css.gsub(/\s+/, ' '), quoted: true)
      }
    }
    css = compiler.compile_string('a { b: inner(1) }', functions:).css
    assert_equal "a {\n  b: \"x { y: 1; }\";\n}", css
  end

  # Nested compiles within the compiler's 15 concurrent compilations (7 on
  # 32-bit CPUs; more need a second compiler process: the pool), in a
  # thread of Ruby's own (a server's request thread). Not the main thread:
  # on musl, Ruby takes the main thread's machine stack to be what was
  # mapped when it started (musl's pthread_getattr_np), about 150 KiB, and
  # each level keeps about 6 KiB of it, so there a compile about 11 deep
  # raises SystemStackError (docs/platform-gems.md); a thread's stack is the
  # 1 MiB Ruby asks for.
  def test_nested_compiles_ten_deep_from_one_thread
    compiler = new_compiler
    nest = nil
    nest = lambda do |depth|
      return "leaf#{depth}" if depth.zero?

      functions = { 'down()' => ->(_) { Sass::Value::String.new(nest.call(depth - 1), quoted: false) } }
      compiler.compile_string('a { b: down() }', functions:).css[/b: (.*);/, 1]
    end
    assert_equal 'leaf0', Thread.new { nest.call(10) }.value
  end

  def test_timeout_around_a_compile_whose_function_sleeps_then_compiles_return_their_own_css
    compiler = new_compiler
    functions = slow_function
    start = monotonic_now
    assert_raises(Timeout::Error) do
      Timeout.timeout(0.5) { compiler.compile_string('a { b: slow() }', functions:) }
    end
    assert_operator elapsed_since(start), :<, budget(5)
    10.times do |i|
      assert_equal expected_css(0, i), compiler.compile_string(source(0, i)).css
    end
  end

  # Ruby 3.1 and 3.2's Timeout raises a Timeout::Error into the thread from a
  # timer. One that its block no longer catches (a timer left running when
  # an interrupt struck the block's own set-up; the stress test's chaos
  # makes them) is an interrupt of the thread wherever it lands, in a
  # callback too: it propagates, as from the established gem's wait, and is
  # not the callback's failure (a CompileError).
  def test_a_stray_timeout_timer_in_a_callback_propagates_and_compiles_go_on
    skip 'timeout 0.4 (Ruby 3.3+) raises an Exception, no StandardError' unless Timeout::Error.respond_to?(:catch)
    compiler = new_compiler
    entered = Queue.new
    functions = slow_function(entered)
    stray = Queue.new
    thread = Thread.new do
      Thread.current.report_on_exception = false # the Timeout::Error is expected
      # What the timer raises, for this thread, once its catch is gone.
      stray << Timeout::Error.catch('execution expired') { |timer| timer }
      compiler.compile_string('a { b: slow() }', functions:)
    end
    timer = stray.pop
    entered.pop
    thread.raise(timer)
    error = assert_raises(Timeout::Error) { thread.join(budget(10)) }
    assert_equal 'execution expired', error.message
    3.times { |i| assert_equal expected_css(3, i), compiler.compile_string(source(3, i)).css }
  end

  def test_timeout_while_waiting_for_the_compiler
    compiler = new_compiler
    compiler.compile_string('a { b: c }')
    start = monotonic_now
    assert_raises(Timeout::Error) { Timeout.timeout(0.3) { compiler.compile_string(slow_source) } }
    assert_operator elapsed_since(start), :<, budget(2), 'the wait was not interrupted promptly'
    5.times { |i| assert_equal expected_css(1, i), compiler.compile_string(source(1, i)).css }
  end

  def test_thread_kill_of_a_compiling_thread
    compiler = new_compiler
    entered = Queue.new
    functions = slow_function(entered)
    inside_callback = Thread.new { compiler.compile_string('a { b: slow() }', functions:) }
    waiting = Thread.new { compiler.compile_string(slow_source) }
    entered.pop
    sleep 0.2
    start = monotonic_now
    inside_callback.kill
    waiting.kill
    assert inside_callback.join(5), 'the thread inside a callback did not die'
    assert waiting.join(5), 'the thread waiting for the compiler did not die'
    assert_operator elapsed_since(start), :<, budget(5)
    assert_nil inside_callback.value
    3.times { |i| assert_equal expected_css(2, i), compiler.compile_string(source(2, i)).css }
  end

  def test_thread_raise_reaches_only_its_thread
    compiler = new_compiler
    compiler.compile_string('a { b: c }')
    stop = false
    workers = Array.new(6) do |t|
      Thread.new do
        count = 0
        until stop
          css = compiler.compile_string(source(t, count)).css
          raise "thread #{t} got #{css.inspect}" unless css == expected_css(t, count)

          count += 1
        end
        count
      end
    end
    victim = Thread.new { compiler.compile_string(slow_source) }
    victim.report_on_exception = false
    sleep 0.3
    victim.raise(IndexError, 'only for the victim')
    error = assert_raises(IndexError) { victim.value }
    assert_equal 'only for the victim', error.message
    sleep 0.2
    stop = true
    workers.each { |worker| assert_operator worker.value, :>, 0 }
  end

  def test_abandoned_compilation_answers_its_callbacks_and_frees_nothing_early
    compiler = new_compiler
    # Started before the clock runs: the timeout must fall inside the first
    # call even when the CPU is busy (an abandoned slow compile of another
    # test may still be running).
    compiler.compile_string('a { b: c }')
    calls = 0
    functions = { 'counted()' => lambda { |_args|
      calls += 1
      sleep 1
      Sass::Value::Number.new(calls)
    } }
    # Each of five calls would sleep; the timeout abandons the compile in the
    # first one, and the compiler's later calls are answered by the host.
    source = 'a { b: counted() counted() counted() counted() counted() }'
    assert_raises(Timeout::Error) { Timeout.timeout(0.5) { compiler.compile_string(source, functions:) } }
    assert_equal 1, calls
    20.times { |i| assert_equal expected_css(3, i), compiler.compile_string(source(3, i)).css }
    assert_equal 1, calls, 'an abandoned compilation called back into Ruby'
  end

  def test_throw_and_exit_inside_a_callback_propagate_and_the_host_keeps_serving
    compiler = new_compiler
    thrower = { 'jump()' => ->(_) { throw :out, :thrown } }
    assert_equal :thrown, catch(:out) { compiler.compile_string('a { b: jump() }', functions: thrower) }

    exiter = { 'leave()' => ->(_) { exit 7 } }
    error = assert_raises(SystemExit) { compiler.compile_string('a { b: leave() }', functions: exiter) }
    assert_equal 7, error.status

    assert_equal "a {\n  b: c;\n}", compiler.compile_string('a { b: c }').css
  end

  # Waits until +thread+ sleeps (in a compile: watching or parked).
  def sleeping(thread)
    deadline = monotonic_now + budget(10)
    sleep 0.01 until thread.status == 'sleep' || monotonic_now > deadline
    assert_equal 'sleep', thread.status
  end

  # A watcher W and a parked caller P on one compiler, stopped so that
  # neither compile can end; +faults+ runs in W's thread at each call of
  # Waker#wake (which W makes when it passes the watch to P or routes P's
  # answer). Yields W, P and the compiler's pid.
  def watcher_and_parked(faults, &)
    skip_on_windows('SIGSTOP and SIGCONT, which stop the compiler so that neither compile can end')
    compiler = new_compiler(max_processes: 1)
    compiler.compile_string('a { b: c }')
    pid = compiler_pid(compiler)
    Process.kill(:STOP, pid)
    calls = 0
    watcher = Thread.new do
      trace = TracePoint.new(:call) do |tp|
        next unless Thread.current == watcher && tp.method_id == :wake

        calls += 1
        faults.fetch(calls - 1, -> {}).call
      end
      catch(:jump) { trace.enable { compiler.compile_string('w { x: y }').css } }
    end
    watcher.report_on_exception = false
    sleeping(watcher)
    parked = Thread.new { compiler.compile_string('p { q: r }').css }
    sleeping(parked)
    yield watcher, parked, pid
    assert_equal "p {\n  q: r;\n}", parked.value
    assert_operator calls, :>=, faults.length, 'the watcher did not wake the parked caller'
    assert_equal "s {\n  t: u;\n}", compiler.compile_string('s { t: u }').css
  ensure
    Process.kill(:CONT, pid) if pid
    [watcher, parked].compact.each { |thread| thread.join(budget(10)) || thread.kill }
  end

  # A jump held in the host ($! then holds a throw's data, or a kill's tag,
  # which are no exceptions) while the host still calls Ruby, and a call
  # then raises: magnus puts $! back after catching the raise, and Ruby
  # refuses a non-exception ("assigning non-exception to $!", a TypeError
  # raised past every Rust frame). Here a throw in the first wake and an
  # error in the retry: the throw reaches its catch, and the parked caller
  # is woken by the next try.
  def test_a_throw_held_while_waking_and_an_error_in_the_retry
    thrown = -> { throw :jump, :thrown }
    failed = -> { raise 'wake failed' }
    watcher_and_parked([thrown, failed]) do |watcher, _parked, pid|
      Process.kill(:CONT, pid)
      assert watcher.join(budget(10)), 'the watcher hung'
      assert_equal :thrown, watcher.value
    end
  end

  # Thread#kill of the watcher while it watches, and its wake of the parked
  # caller (passing the watch on) raises: the thread dies quietly, and the
  # parked caller is woken by the retry.
  def test_a_kill_of_the_watcher_and_an_error_while_it_passes_the_watch
    failed = -> { raise 'wake failed' }
    watcher_and_parked([failed]) do |watcher, _parked, pid|
      watcher.kill
      assert watcher.join(budget(10)), 'the killed watcher hung'
      assert_nil watcher.value
      Process.kill(:CONT, pid)
    end
  end

  def test_sigint_interrupts_the_compile_and_spares_the_compiler
    skip_on_windows('SIGINT to a process group')
    script = <<~RUBY
      trap('INT', 'DEFAULT') # a child of a background job inherits SIGINT ignored
      require 'sass-embedded'
      compiler = Sass::Compiler.new
      compiler.compile_string('a { b: c }')
      pid = compiler.send(:host).compiler_pid
      $stdout.sync = true
      puts 'ready'
      started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      begin
        compiler.compile_string(#{slow_source(100_000_000).inspect})
        puts 'not interrupted'
      rescue Interrupt
        puts format('interrupted after %.2f', Process.clock_gettime(Process::CLOCK_MONOTONIC) - started)
      end
      puts compiler.compile_string('d { e: f }', style: :compressed).css
      puts compiler.send(:host).compiler_pid == pid ? 'same compiler' : 'new compiler'
      compiler.close
    RUBY
    lib = File.expand_path('../lib', __dir__)
    Open3.popen2(RbConfig.ruby, '-I', lib, '-e', script, pgroup: true) do |stdin, stdout, wait|
      stdin.close
      assert_equal "ready\n", stdout.gets
      sleep 0.3
      # Like Ctrl-C in a terminal: the signal goes to the whole process group.
      Process.kill(:INT, -Process.getpgid(wait.pid))
      assert_match(/\Ainterrupted after 0\.\d+\n\z/, stdout.gets)
      assert_equal "d{e:f}\n", stdout.gets
      assert_equal "same compiler\n", stdout.gets
      assert wait.value.success?
    end
  end

  def test_first_compiles_on_many_threads_at_once_do_not_deadlock
    # The first use of each native class races to look it up; a lookup done
    # lazily under a lock once deadlocked two threads against the GVL.
    script = <<~RUBY
      require 'sass-embedded'
      threads = Array.new(16) do |i|
        Thread.new { Sass::Compiler.new.tap { |c| c.compile_string("a\#{i} { b: f() }", functions: { 'f()' => ->(_) { Sass::Value::Null::NULL } }) }.close }
      end
      threads.each(&:join)
      puts 'done'
    RUBY
    lib = File.expand_path('../lib', __dir__)
    5.times do
      out, status = Open3.capture2(RbConfig.ruby, '-I', lib, '-e', script)
      assert_equal "done\n", out
      assert status.success?
    end
  end

  # The context switches of every thread of this process.
  def context_switches
    Dir.glob('/proc/self/task/*/status').sum do |status|
      File.read(status).scan(/^(?:non)?voluntary_ctxt_switches:\s+(\d+)/).flatten.sum(&:to_i)
    rescue Errno::ENOENT
      0
    end
  end

  # Waiting on a compiler that answers nothing costs a few wake-ups a second
  # (the watcher's and one parked thread's safety nets), not some per waiter.
  def test_sixty_four_threads_waiting_on_a_stopped_compiler_cost_few_wake_ups
    skip_on_windows('no SIGSTOP, and no /proc to count context switches in')
    compiler = new_compiler(max_processes: 1)
    compiler.compile_string('a { b: c }')
    pid = compiler_pid(compiler)
    Process.kill(:STOP, pid)
    threads = Array.new(64) do |i|
      Thread.new do
        compiler.compile_string("s#{i} { v: #{i} }").css
      rescue IOError => e
        e
      end
    end
    # Every thread waiting (a thread in the host's wait reports "sleep"),
    # then a moment more: under qemu, where threads start slowly, a fixed
    # half second once counted their start (111.5 switches a second).
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + budget(30)
    sleep 0.01 until threads.all? { |thread| thread.status == 'sleep' } ||
                     Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
    sleep budget(0.5)
    before = context_switches
    sleep 2
    per_second = (context_switches - before) / 2.0
    assert_operator per_second, :<, 60, "#{per_second} context switches a second"
  ensure
    Process.kill(:CONT, pid) if pid
    threads&.each(&:join)
  end
end
