# frozen_string_literal: true

require 'minitest/autorun'
require 'rbconfig'
require 'timeout'
require 'tmpdir'
require 'sass-embedded'

# What a test puts before an absolute path to make its file: URL: on Windows
# the path starts with a drive letter, after a third slash
# (file:///C:/dir/a.scss).
FILE_URL_PREFIX = RbConfig::CONFIG['host_os'].match?(/mswin|mingw/) ? 'file:///' : 'file://'

# How a compile's error describes a compiler ended by Process.kill(:KILL):
# on Windows Ruby ends the process with TerminateProcess and exit code 0,
# and no signal is left to name.
KILLED_COMPILER = if RbConfig::CONFIG['host_os'].match?(/mswin|mingw/)
                    /exited with status \d+/
                  else
                    /was killed by signal 9 \(SIGKILL\)/
                  end

# Shared helpers: every test runs under a time limit (a hang fails instead of
# stalling the suite), and compilers a test makes are closed after it.
module SassTestHelpers
  def teardown
    @compilers&.each(&:close)
    super
  end

  # A compiler closed after the test.
  def new_compiler(**options)
    (@compilers ||= []) << Sass::Compiler.new(**options)
    @compilers.last
  end

  # Whether the suite runs on Windows (rake test:windows, under Wine).
  WINDOWS = RbConfig::CONFIG['host_os'].match?(/mswin|mingw/)

  # Whether process +pid+ is running (neither gone nor a zombie): from
  # /proc on Linux; on Windows, Ruby's signal 0 (OpenProcess, and an exit
  # code still STILL_ACTIVE).
  def process_running?(pid)
    if WINDOWS
      Process.kill(0, pid)
      return true
    end
    File.read("/proc/#{pid}/stat").sub(/\A\d+ \(.*\) /m, '')[0] != 'Z'
  rescue Errno::ENOENT, Errno::ESRCH
    false
  end

  # Skips the test on Windows, saying why (+reason+: what it needs that
  # Windows does not have).
  def skip_on_windows(reason)
    skip "not on Windows: #{reason}" if WINDOWS
  end

  # Skips the test where this process cannot make symlinks, saying why.
  def skip_without_symlinks
    reason = SassTestHelpers.symlink_failure
    skip "no symlinks here: #{reason}" if reason
  end

  # Why File.symlink makes no symlink in this process, or nil when it does:
  # Windows makes them only for an administrator or in Developer Mode, and
  # under Wine File.symlink reports success and makes nothing. Asked once.
  def self.symlink_failure
    return @symlink_failure if defined?(@symlink_failure)

    @symlink_failure = Dir.mktmpdir('sass-symlink') do |dir|
      link = File.join(dir, 'link')
      File.symlink('target', link)
      File.symlink?(link) ? nil : 'File.symlink reported success but made no symlink (Wine does this)'
    rescue NotImplementedError, SystemCallError => e
      "File.symlink fails: #{e.message}"
    end
  end

  # The pids of this process's children that are still running (not zombies).
  def child_pids
    return windows_child_pids if WINDOWS

    Dir.glob('/proc/[0-9]*/stat').filter_map do |stat|
      fields = File.read(stat).sub(/\A\d+ \(.*\) /m, '').split
      pid = Integer(File.basename(File.dirname(stat)))
      pid if Integer(fields[1]) == Process.pid && fields[0] != 'Z' && pid != SassTestTimeout::WATCHDOG_PID
    rescue Errno::ENOENT, Errno::ESRCH
      nil
    end
  end

  # Windows has no /proc: the process table from wmic (UTF-16), which must
  # list this process, so that a table that comes back empty fails instead
  # of finding no children.
  def windows_child_pids
    io = IO.popen(%w[wmic process get ParentProcessId,ProcessId], 'rb', err: File::NULL)
    wmic = io.pid
    table = io.read
    io.close
    text = table.start_with?("\xFF\xFE".b) ? table.byteslice(2..).force_encoding('UTF-16LE').encode('UTF-8') : table
    rows = text.lines.map { |line| line.split.map { |field| Integer(field, exception: false) } }
               .select { |row| row.size == 2 && row.all? }
    flunk "wmic listed no process #{Process.pid} (this one):\n#{text}" unless rows.any? { |_, pid| pid == Process.pid }
    rows.filter_map do |parent, pid|
      pid if parent == Process.pid && pid != wmic && pid != SassTestTimeout::WATCHDOG_PID
    end
  end

  # Whether this Ruby (and so the host and its compiler) is a 32-bit build:
  # a C pointer of 4 bytes.
  def thirty_two_bit?
    [nil].pack('p').bytesize == 4
  end

  # How many compiles one compiler runs at once: Dart Sass's isolate limit,
  # 15 on 64-bit CPUs, 7 on 32-bit ones (the host's count of it).
  def slots_per_compiler
    Sass::Embedded.const_get(:Host)::SLOTS_PER_COMPILER
  end

  # Runs +count+ compiles on +compiler+ at once, each held inside a
  # function call, yields once every one is inside it, then lets them finish
  # and waits for them.
  def hold_compiles(compiler, count)
    release = Queue.new
    entered = Queue.new
    functions = { 'hold()' => lambda { |_args|
      entered << true
      release.pop
      Sass::Value::Null::NULL
    } }
    threads = Array.new(count) { Thread.new { compiler.compile_string('a { b: hold() }', functions:) } }
    count.times { entered.pop }
    yield
  ensure
    threads&.size&.times { release << true }
    threads&.each(&:join)
  end

  # Waits until +block+ is true (or fails after +timeout+ seconds, scaled by
  # TIME_SCALE).
  def wait_until(timeout: 10, message: 'condition never became true')
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + budget(timeout)
    until yield
      flunk message if Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
      sleep 0.01
    end
  end

  # A temporary directory removed after the block.
  def in_tmpdir(&)
    Dir.mktmpdir('sass-embedded-test', &)
  end

  # An executable script standing in for a broken compiler.
  def fake_compiler(dir, body)
    skip_on_windows('the stand-in compiler is a POSIX shell script')
    path = File.join(dir, 'fake-sass')
    File.write(path, "#!/bin/sh\n#{body}\n")
    File.chmod(0o755, path)
    path
  end

  # Runs the block with SASS_EMBEDDED_COMPILER set to +path+ (and other
  # variables as given).
  def with_compiler_env(path, **variables)
    variables = { 'SASS_EMBEDDED_COMPILER' => path }.merge(variables.transform_keys(&:to_s))
    previous = variables.keys.to_h { |name| [name, ENV.fetch(name, nil)] }
    variables.each { |name, value| ENV[name] = value }
    yield
  ensure
    previous.each { |name, value| ENV[name] = value }
  end

  # A stylesheet that keeps the compiler busy for seconds without any callback,
  # so its caller waits in the host (without the GVL) the whole time.
  def slow_source(iterations = 20_000_000)
    "$x: 0; @for $i from 1 through #{iterations} { $x: $x + 1; } slow { n: $x }"
  end

  # How many times longer than here a timed assertion may take where
  # everything is slower: 10 under emulation (rake test:arm64).
  TIME_SCALE = Float(ENV.fetch('SASS_TEST_TIME_SCALE', '1'))

  # +seconds+, a timed assertion's budget, scaled by TIME_SCALE.
  def budget(seconds)
    seconds * TIME_SCALE
  end

  # Seconds since +start+ (a monotonic clock reading).
  def elapsed_since(start)
    Process.clock_gettime(Process::CLOCK_MONOTONIC) - start
  end

  def monotonic_now
    Process.clock_gettime(Process::CLOCK_MONOTONIC)
  end

  # Kills and reaps a forked child the test gave up on.
  def kill_child(pid)
    return if pid.nil?

    Process.kill(:KILL, pid)
    Process.wait(pid)
  rescue Errno::ESRCH, Errno::ECHILD
    nil
  end

  # The host of a compiler, to find its compiler process.
  # Runs the block with +variables+ set in ENV (nil: unset), then puts
  # back what was there.
  def with_env(variables)
    saved = variables.keys.to_h { |name| [name, ENV.fetch(name, nil)] }
    variables.each { |name, value| ENV[name] = value }
    yield
  ensure
    saved&.each { |name, value| ENV[name] = value }
  end

  def compiler_pid(compiler)
    compiler.send(:host).compiler_pid
  end
end

# Records what a compile logs.
class RecordingLogger
  attr_reader :warnings, :debugs

  def initialize
    @warnings = []
    @debugs = []
  end

  def warn(message, deprecation:, deprecation_type:, span:, stack:)
    @warnings << { message:, deprecation:, deprecation_type:, span:, stack: }
  end

  def debug(message, span:)
    @debugs << { message:, span: }
  end
end

# Bounds every test in time, twice: Timeout fails a test that runs past
# TEST_TIMEOUT (it needs Ruby's threads to run), and a watchdog process
# (test/support/watchdog.rb) kills the suite, naming the test and dumping its
# threads, if a hang Ruby cannot interrupt outlasts that by WATCHDOG_GRACE.
module SassTestTimeout
  # Seconds one test may take before it fails (SASS_TEST_TIMEOUT: scaled up
  # where the suite runs under emulation, or under GC.stress).
  TEST_TIMEOUT = Integer(ENV.fetch('SASS_TEST_TIMEOUT', 60))
  # Seconds past TEST_TIMEOUT before the watchdog kills the suite.
  WATCHDOG_GRACE = Integer(ENV.fetch('SASS_WATCHDOG_GRACE', 30))

  # The watchdog's end of a pipe, and its pid; the suite writes a line to it
  # as each test starts and ends.
  def self.start_watchdog
    reader, writer = IO.pipe
    script = File.join(__dir__, 'support', 'watchdog.rb')
    pid = Process.spawn(RbConfig.ruby, '--disable-gems', script, Process.pid.to_s,
                        (TEST_TIMEOUT + WATCHDOG_GRACE).to_s, in: reader)
    reader.close
    writer.sync = true
    [writer, pid]
  end

  WATCHDOG, WATCHDOG_PID = start_watchdog
  WATCHDOG_OWNER = Process.pid

  def self.tell_watchdog(line)
    # A forked child's tests are its parent's.
    WATCHDOG.write("#{line}\n") if Process.pid == WATCHDOG_OWNER
  rescue IOError, SystemCallError
    nil
  end

  def run
    SassTestTimeout.tell_watchdog("start #{self.class}##{name}")
    Timeout.timeout(TEST_TIMEOUT, Minitest::Assertion, "test did not finish within #{TEST_TIMEOUT}s") { super }
  ensure
    SassTestTimeout.tell_watchdog('done')
  end
end

Minitest::Test.include(SassTestHelpers)
Minitest::Test.prepend(SassTestTimeout)

# After the whole suite (and the shared compiler's at_exit close), no
# compiler process may be left running.
Minitest.after_run do
  Sass.instance_variable_get(:@compiler)&.close
  leftover = Object.new.extend(SassTestHelpers).child_pids
  unless leftover.empty?
    warn "compiler processes left behind: #{leftover.inspect}"
    exit!(1)
  end
end
