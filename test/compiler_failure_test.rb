# frozen_string_literal: true

require_relative 'test_helper'

# A compiler that is missing, broken, killed or speaks another protocol gives
# a clear error that says what happened, and the next compile starts afresh.
class CompilerFailureTest < Minitest::Test
  def test_missing_compiler_names_the_path
    with_compiler_env('/nonexistent/bin/sass') do
      error = assert_raises(Errno::ENOENT) { new_compiler.compile_string('a { b: c }') }
      assert_match(%r{could not start the Sass compiler `(?:[A-Za-z]:)?/nonexistent/bin/sass --embedded`},
                   error.message)
    end
  end

  def test_compiler_that_is_not_executable
    skip_on_windows('no execute permission to take away')
    in_tmpdir do |dir|
      path = File.join(dir, 'sass')
      File.write(path, 'not a program')
      with_compiler_env(path) do
        error = assert_raises(Errno::EACCES) { new_compiler.compile_string('a { b: c }') }
        assert_includes error.message, path
      end
    end
  end

  def test_compiler_that_exits_at_once_reports_status_and_stderr
    in_tmpdir do |dir|
      path = fake_compiler(dir, "echo 'dart: snapshot is corrupt' >&2\necho 'giving up' >&2\nexit 3")
      with_compiler_env(path) do
        compiler = new_compiler
        error = assert_raises(IOError) { compiler.compile_string('a { b: c }') }
        assert_match(/the Sass compiler `#{Regexp.escape(path)} --embedded` exited with status 3/, error.message)
        assert_match(/dart: snapshot is corrupt\n  giving up\z/, error.message)
        assert_raises(IOError) { compiler.info }
      end
    end
  end

  def test_compiler_writing_an_undecodable_packet_is_a_protocol_error_and_is_killed
    in_tmpdir do |dir|
      # A whole packet (length 5, compilation 0) whose payload is not protobuf.
      path = fake_compiler(dir, "printf '\\005\\000\\377\\377\\377\\377'\nexec sleep 30")
      with_compiler_env(path) do
        compiler = new_compiler
        error = assert_raises(Errno::EPROTO) { compiler.compile_string('a { b: c }') }
        assert_match(/broke the protocol: undecodable OutboundMessage for compilation 0/, error.message)
        assert_nil compiler_pid(compiler)
      end
    end
  end

  def test_compiler_writing_text_and_exiting_is_a_protocol_error
    in_tmpdir do |dir|
      path = fake_compiler(dir, "echo 'Unhandled exception: this is not protobuf at all'\necho oops >&2\nexit 255")
      with_compiler_env(path) do
        error = assert_raises(Errno::EPROTO) { new_compiler.compile_string('a { b: c }') }
        assert_match(/output ended inside a packet .* it exited with status 255; its last lines on stderr:\n  oops/,
                     error.message)
      end
    end
  end

  def test_compiler_of_another_protocol_version_is_refused
    skip_on_windows('the stand-in compiler is a script run by its #! line')
    in_tmpdir do |dir|
      script = File.join(dir, 'old-sass')
      File.write(script, <<~RUBY)
        #!#{RbConfig.ruby}
        def field(number, text) = [(number << 3) | 2, text.bytesize].pack('CC') + text.b
        response = field(1, '2.0.0') + field(2, '0.9.0') + field(3, '0.9.0') + field(4, 'old-sass')
        outbound = [(8 << 3) | 2, response.bytesize].pack('CC') + response
        packet = "\\0".b + outbound
        $stdout.write([packet.bytesize].pack('C') + packet)
        $stdout.flush
        sleep 30
      RUBY
      File.chmod(0o755, script)
      with_compiler_env(script) do
        error = assert_raises(Errno::EPROTO) { new_compiler.compile_string('a { b: c }') }
        assert_match(/\(version 0\.9\.0\) speaks Embedded Sass Protocol 2\.0\.0, but this host needs protocol 3\.x/,
                     error.message)
      end
    end
  end

  def test_compiler_that_never_answers_and_floods_stderr_fails_at_the_startup_timeout
    in_tmpdir do |dir|
      path = fake_compiler(dir, "exec yes 'flooding stderr instead of answering' >&2")
      with_compiler_env(path, SASS_EMBEDDED_STARTUP_TIMEOUT: '1') do
        start = monotonic_now
        error = assert_raises(Errno::EPROTO) { new_compiler.compile_string('a { b: c }') }
        assert_operator elapsed_since(start), :<, budget(10)
        assert_match(/did not answer the version request within 1\.0 s of starting; its last lines on stderr:/,
                     error.message)
        assert_match(/(  flooding stderr instead of answering\n){5}/, error.message)
        assert_operator error.message.bytesize, :<, 8192, 'the stderr tail is bounded'
      end
    end
  end

  def test_compiler_flooding_stderr_while_working_keeps_working
    real = Sass::Embedded.const_get(:CompilerCommand).resolve
    in_tmpdir do |dir|
      command = real.map { |part| "'#{part}'" }.join(' ')
      path = fake_compiler(dir, "yes 'noise on stderr' >&2 &\nexec #{command} \"$@\"")
      with_compiler_env(path) do
        compiler = new_compiler
        200.times { |i| assert_equal "a {\n  b: #{i};\n}", compiler.compile_string("a { b: #{i} }").css }
        rss = File.read("/proc/#{Process.pid}/status")[/VmRSS:\s+(\d+)/, 1].to_i
        assert_operator rss, :<, 512 * 1024, 'the flood did not pile up in memory'
      end
    end
  end

  def test_invalid_startup_timeout
    with_compiler_env(Sass::Embedded.const_get(:CompilerCommand).resolve.first,
                      SASS_EMBEDDED_STARTUP_TIMEOUT: 'soon') do
      error = assert_raises(ArgumentError) { new_compiler.compile_string('a { b: c }') }
      assert_match(/SASS_EMBEDDED_STARTUP_TIMEOUT must be a positive number/, error.message)
    end
  end

  # The compile had answered something (a log event: its logger ran), so it
  # is not run again: its caller gets the compiler's end.
  def test_compiler_killed_mid_compile_fails_that_compile_and_the_next_starts_a_new_one
    compiler = new_compiler
    compiler.compile_string('a { b: c }')
    pid = compiler_pid(compiler)
    logger = RecordingLogger.new
    thread = Thread.new { compiler.compile_string("@debug started; #{slow_source}", logger:) }
    thread.report_on_exception = false
    wait_until { logger.debugs.any? }
    Process.kill(:KILL, pid)
    error = assert_raises(IOError) { thread.value }
    assert_match(/#{KILLED_COMPILER}; it wrote nothing to stderr\z/, error.message)

    assert_equal "a {\n  b: c;\n}", compiler.compile_string('a { b: c }').css
    refute_equal pid, compiler_pid(compiler)
  end

  # Killed while it compiled, before it answered anything: nothing of the
  # compile reached its caller, so it runs again on a fresh compiler, once.
  # Killed there too, it fails with the second compiler's end. Each kill
  # waits long enough (scaled: a fresh compiler starts slowly under Wine or
  # qemu) for the compiler to have read the compile, which must then still
  # be running (20 million iterations take the compiler 2-5 seconds here).
  def test_a_compile_its_compiler_died_on_unanswered_runs_again_once
    compiler = new_compiler
    compiler.compile_string('a { b: c }')
    [1, 2].map do |kills|
      pids = [compiler_pid(compiler)]
      source = slow_source(20_000_000)
      thread = Thread.new { compiler.compile_string(source).css }
      thread.report_on_exception = false
      kills.times do |kill|
        sleep budget(0.5)
        Process.kill(:KILL, pids.last)
        next if kill == kills - 1

        # The compile runs again, on a fresh compiler.
        wait_until { ![nil, pids.last].include?(compiler_pid(compiler)) }
        pids << compiler_pid(compiler)
      end
      if kills == 1
        assert_equal "slow {\n  n: 20000000;\n}", thread.value
      else
        error = assert_raises(IOError) { thread.value }
        assert_match(KILLED_COMPILER, error.message)
      end
    end
  end

  # Two compilers, both dead while idle before the host noticed: a compile
  # sent to the first, which never read it, goes on to the second, which
  # never reads it either, and then to a fresh one; its caller sees only
  # the result. (Each is stopped first, so the request is certainly in its
  # input when it dies.)
  def test_a_compile_sent_to_compilers_that_died_idle_runs_on_a_fresh_one
    skip_on_windows('no SIGSTOP')
    compiler = new_compiler
    first, second = two_compilers(compiler)
    [first, second].each { |pid| Process.kill(:STOP, pid) }
    thread = Thread.new { compiler.compile_string('after { kill: ok }').css }
    thread.report_on_exception = false
    sleep 0.1
    Process.kill(:KILL, first)
    wait_until { !compiler.send(:host).compiler_pids.include?(first) }
    sleep 0.1
    Process.kill(:KILL, second)
    assert_equal "after {\n  kill: ok;\n}", thread.value
    refute_includes compiler.send(:host).compiler_pids, second
  ensure
    [first, second].compact.each { |pid| Process.kill(:KILL, pid) rescue nil } # rubocop:disable Style/RescueModifier
  end

  def test_compiler_killed_inside_a_callback_fails_that_compile_when_the_callback_returns
    compiler = new_compiler
    started = Queue.new
    functions = { 'slow()' => lambda { |_args|
      started << true
      sleep 0.5
      Sass::Value::Null::NULL
    } }
    thread = Thread.new { compiler.compile_string('a { b: slow() }', functions:) }
    thread.report_on_exception = false
    started.pop
    Process.kill(:KILL, compiler_pid(compiler))
    assert_raises(IOError) { thread.value }
    assert_equal "a {\n  b: c;\n}", compiler.compile_string('a { b: c }').css
  end

  def test_compiler_killed_while_idle_is_replaced
    compiler = new_compiler
    compiler.compile_string('a { b: c }')
    pid = compiler_pid(compiler)
    Process.kill(:KILL, pid)
    wait_until { compiler_pid(compiler) != pid }
    assert_equal "a {\n  b: c;\n}", compiler.compile_string('a { b: c }').css
  end

  # Killed while idle, and compiled on before the host noticed: the request
  # went to a compiler that was already dying and never read it, so it runs
  # on a fresh compiler instead of failing with IOError.
  def test_a_compile_right_after_the_compiler_died_runs_on_a_fresh_one
    compiler = new_compiler
    results = Array.new(30) do |i|
      compiler.compile_string('a { b: c }')
      Process.kill(:KILL, compiler_pid(compiler))
      begin
        compiler.compile_string("after#{i} { v: #{i} }").css
      rescue IOError => e
        e
      end
    end
    failed = results.grep(IOError)
    assert_empty failed, "#{failed.size} of 30 compiles right after a kill failed: #{failed.first&.message}"
    results.each_with_index { |css, i| assert_equal "after#{i} {\n  v: #{i};\n}", css }
  end

  private

  # Makes +compiler+ run two compilers (more compiles at once than one
  # takes), idle again; their pids, the first (where compiles go first)
  # first.
  def two_compilers(compiler)
    pids = hold_compiles(compiler, slots_per_compiler + 5) { compiler.send(:host).compiler_pids }
    assert_operator pids.size, :>=, 2, 'the compiles did not need two compilers'
    pids.first(2)
  end
end
