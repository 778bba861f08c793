# frozen_string_literal: true

require_relative 'test_helper'
require 'rbconfig'

# Signals reach a program that waits on compiles at once, however many of its
# threads wait, and no compiler process outlives the program, however it
# ends. Each case runs a child Ruby process (a signal to the test process
# itself would stop the suite), which reports on its stdout.
class SignalTest < Minitest::Test
  LIB = File.expand_path('../lib', __dir__)

  # What every child runs first: Ruby's own SIGINT handler (a child of a
  # background job inherits SIGINT ignored), and a helper that prints.
  PRELUDE = <<~'RUBY'
    trap('INT', 'DEFAULT')
    require 'sass-embedded'
    $stdout.sync = true
    def report(key, value) = puts("#{key} #{value}")
    def compiler_pids(*compilers)
      compilers.flat_map { |c| c.send(:host).compiler_pids }
    end
    SLOW = "$x: 0; @for $i from 1 through 50000000 { $x: $x + 1; } slow { n: $x }"
  RUBY

  # Runs +script+ in a child Ruby and yields its pid and a reader of the
  # lines it reports, as a Hash filled as they come. The child is killed if
  # still running afterwards.
  def with_child(script)
    @reaped ||= []
    reader, writer = IO.pipe
    pid = spawn(RbConfig.ruby, "-I#{LIB}", '-e', PRELUDE + script, out: writer, err: File::NULL)
    writer.close
    reports = {}
    next_report = lambda do |key|
      until reports.key?(key)
        line = reader.gets or flunk("the child ended before reporting #{key}: #{reports.inspect}")
        name, value = line.chomp.split(' ', 2)
        reports[name] = value
      end
      reports[key]
    end
    yield pid, next_report
  ensure
    reader&.close
    kill_child(pid) unless @reaped.include?(pid)
  end

  # Waits for the child to end; returns its status and how long it took.
  def wait_child(pid, since)
    _, status = Process.wait2(pid)
    @reaped << pid
    [status, monotonic_now - since]
  end

  def assert_compilers_gone(pids)
    refute_empty pids
    wait_until(timeout: 5, message: "compilers #{pids.select do |pid|
                                                   process_running?(pid)
                                                 end} outlived their program") do
      pids.none? { |pid| process_running?(pid) }
    end
  end

  # The main thread and four others wait on long compiles, through the
  # shared compiler and an unclosed compiler of their own.
  BUSY = <<~'RUBY'
    own = Sass::Compiler.new
    threads = Array.new(4) { |i| Thread.new { (i.even? ? own : Sass).compile_string(SLOW) } }
    Sass.compile_string('a { b: c }')
    sleep 0.05 until compiler_pids(own, Sass.send(:compiler)).size >= 2
    report :compilers, compiler_pids(own, Sass.send(:compiler)).join(',')
    sleep 0.3
    report :ready, 1
    Sass.compile_string(SLOW)
    report :finished, 1
  RUBY

  def test_term_and_int_end_a_program_whose_threads_all_wait_on_compiles
    skip_on_windows('no SIGTERM, and SIGINT only as a console event')
    %i[TERM INT TERM INT].each do |signal|
      with_child(BUSY) do |pid, report|
        compilers = report.call('compilers').split(',').map { |p| Integer(p) }
        report.call('ready')
        sent = monotonic_now
        Process.kill(signal, pid)
        status, took = wait_child(pid, sent)
        assert_equal Signal.list.fetch(signal.to_s), status.termsig, "#{signal}: #{status.inspect}"
        assert_operator took, :<, budget(0.2), "#{signal} took #{(took * 1000).round} ms to end the program"
        assert_compilers_gone(compilers)
      end
    end
  end

  def test_a_signal_from_a_short_lived_thread_interrupts_a_compile_on_a_stopped_compiler
    skip_on_windows('no SIGSTOP to stop the compiler with')
    script = <<~'RUBY'
      compiler = Sass::Compiler.new
      compiler.compile_string('a { b: c }')
      pid = compiler_pids(compiler).first
      Process.kill(:STOP, pid)
      begin
        Thread.new { sleep 0.3; $sent = Process.clock_gettime(Process::CLOCK_MONOTONIC); Process.kill(:INT, Process.pid) }
        compiler.compile_string('d { e: f }')
        report :result, 'compiled'
      rescue Interrupt
        report :result, Process.clock_gettime(Process::CLOCK_MONOTONIC) - $sent
      ensure
        Process.kill(:CONT, pid)
      end
      compiler.close
    RUBY
    with_child(script) do |pid, report|
      result = report.call('result')
      refute_equal 'compiled', result
      assert_operator Float(result), :<, budget(0.1), 'the signal reached the compile late'
      status, = wait_child(pid, monotonic_now)
      assert status.success?, status.inspect
    end
  end

  def test_no_compiler_outlives_a_program_however_it_ends
    endings = {
      'exit' => 'exit',
      'exit!' => 'exit!',
      'an exception' => 'raise "boom"',
      'SIGKILL' => 'sleep'
    }
    endings.each do |name, ending|
      script = <<~RUBY
        own = Sass::Compiler.new
        own.compile_string('a { b: c }')
        Sass.compile_string('a { b: c }')
        report :compilers, compiler_pids(own, Sass.send(:compiler)).join(',')
        #{ending}
      RUBY
      with_child(script) do |pid, report|
        compilers = report.call('compilers').split(',').map { |p| Integer(p) }
        Process.kill(:KILL, pid) if name == 'SIGKILL'
        wait_child(pid, monotonic_now)
        assert_compilers_gone(compilers)
      end
    end
  end

  def test_close_ends_a_compiler_that_does_not_cooperate
    skip_on_windows('no SIGSTOP to stop the compiler with')
    compiler = new_compiler
    compiler.compile_string('a { b: c }')
    pid = compiler_pid(compiler)
    Process.kill(:STOP, pid)
    started = monotonic_now
    compiler.close
    assert_operator elapsed_since(started), :<, budget(5)
    refute process_running?(pid), 'the stopped compiler is still running after close'
  end
end
