# frozen_string_literal: true

# The Ruby suite's last resort against a hang, in a process of its own:
#
#   ruby test/support/watchdog.rb SUITE_PID LIMIT   (test lines on stdin)
#
# The suite writes "start <test name>" before each test and "done" after it
# (test/test_helper.rb). Each test is bounded first by Timeout inside the
# suite, which needs the suite's Ruby threads to run; a hang that stops them
# (a native deadlock holding the GVL, a wait that ignores interrupts) is
# caught here instead: once a test has run LIMIT seconds, this prints its
# name and what each of the suite's threads is doing (with gdb, if the
# machine has it), and kills the suite, so the run fails within a minute and
# says where. Ends when the suite does (its end of the pipe closes, or it is
# gone).

require 'io/wait'

suite = Integer(ARGV.fetch(0))
limit = Float(ARGV.fetch(1))

def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)

def alive?(pid)
  Process.kill(0, pid)
  true
rescue Errno::ESRCH
  false
rescue Errno::EPERM
  true
end

# Native stacks of every thread of +pid+, where gdb is installed; it stops
# the process only while it reads them.
def dump_threads(pid)
  gdb = ENV.fetch('PATH', '').split(File::PATH_SEPARATOR).map { |dir| File.join(dir, 'gdb') }.find do |path|
    File.executable?(path)
  end
  unless gdb
    warn 'watchdog: no gdb on this machine, so no thread stacks'
    return
  end
  system('timeout', '60', gdb, '--batch', '--nx', '-p', pid.to_s, '-ex', 'thread apply all bt',
         out: $stderr, err: File::NULL)
end

# Ends +pid+ so that the run fails: on Windows Ruby's Process.kill(:KILL)
# ends a process with exit code 0, a success, where taskkill /F gives 1.
def kill(pid)
  # (File::ALT_SEPARATOR: Windows, where RubyGems is not loaded here.)
  return if File::ALT_SEPARATOR && system('taskkill', '/F', '/PID', pid.to_s, out: File::NULL, err: File::NULL)

  Process.kill(:KILL, pid)
end

current = nil
started = nil
loop do
  wait = current ? (started + limit - now).clamp(0, 5) : 5
  if $stdin.wait_readable(wait)
    line = $stdin.gets
    break if line.nil?

    case line.chomp
    when /\Astart (.*)\z/m
      current = Regexp.last_match(1)
      started = now
    when 'done'
      current = nil
    end
  end
  break unless alive?(suite)
  next unless current && now - started >= limit

  warn "\nwatchdog: #{current} has run #{limit.round} s, and the suite's own timeout did not end it: " \
       "it hangs where Ruby cannot interrupt it. The suite's threads:"
  dump_threads(suite)
  warn "watchdog: killing the suite (pid #{suite}): #{current} hung"
  kill(suite)
  exit 1
end
