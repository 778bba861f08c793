# frozen_string_literal: true

require_relative 'test_helper'
require_relative 'support/test_scheduler'
require 'etc'
require 'open3'

# Where a waiting caller spins before it sleeps (docs/performance.md, "One
# compile at a time"): a lone thread spins, and nothing else does: not a
# caller while another is in flight, not a fiber under a scheduler, not with
# SASS_EMBEDDED_SPIN_US=0. Counted by the host's own statistics
# (Sass::Embedded::Host.spin_stats: spins, caught, CPU seconds), which are
# process-wide, so each case runs in a process of its own.
class SpinTest < Minitest::Test
  ROOT = File.expand_path('..', __dir__)
  # Warms the compiler: 60 tiny compiles, and on until the default budget
  # has been learnt (ten seconds at most: where tiny compiles take the
  # compiler over 2 ms, under emulation, nothing spins by design).
  WARM = 'host = Sass::Embedded.const_get(:Host); ' \
         'warm_until = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 10; warmed = 0; ' \
         'while warmed < 60 || (host.spin_stats[4].nil? && !ENV.key?("SASS_EMBEDDED_SPIN_US") && ' \
         'Process.clock_gettime(Process::CLOCK_MONOTONIC) < warm_until); ' \
         'Sass.compile_string("a{b:c}"); warmed += 1; end'

  def setup
    skip 'the spin needs two CPUs' if Etc.nprocessors < 2
  end

  # Runs +script+ (after requiring the gem and warming the compiler, with
  # spins counted from there) in a new Ruby; its last line of output, parsed
  # as [spins, caught, declined, learnt, long, paced, waits] (declined: waits that
  # did not spin for want of a free CPU; learnt: whether a budget was there
  # after the warm-up; long: waits that did not spin because recent answers
  # took too long, as on a loaded machine; paced: waits that did not spin
  # because recent spins missed; waits: a lone caller's waits that asked
  # whether to spin). A fresh compiler's first dozen or so compiles take it
  # milliseconds each, which the default budget does not spin for.
  def spins_in(script, env = {})
    prelude = "require 'sass-embedded'; #{WARM}; " \
              'before = Sass::Embedded.const_get(:Host).spin_stats; '
    report = '; after = Sass::Embedded.const_get(:Host).spin_stats; ' \
             'puts [after[0] - before[0], after[1] - before[1], after[3] - before[3], !before[4].nil?, ' \
             'after[6] - before[6], after[7] - before[7], after[8] - before[8]].inspect'
    output, status = Open3.capture2e(env, RbConfig.ruby, '-I', File.join(ROOT, 'lib'), '-I', __dir__, '-e',
                                     prelude + script + report)
    assert status.success?, output
    eval(output.lines.last) # rubocop:disable Security/Eval
  end

  # (Whether a spin catches its answer depends on the machine and its load:
  # only a spin that catches keeps the next wait spinning. And a compile
  # whose answer was routed before its caller first looked, as a reader
  # thread can, waits for nothing and so does not spin: 19 of 20 spun once
  # under Wine, none of 20 once on Linux with the reader thread beside a
  # cold build. Where no CPU is free, the gate declines the spins: 0 spins
  # in 20 compiles under qemu with a Wine suite beside it.)
  def test_a_lone_thread_spins_before_each_wait_while_its_spins_catch
    spins, caught, declined, learnt, long, paced, waits = spins_in('20.times { Sass.compile_string("a{b:c}") }')
    skip 'tiny compiles take the compiler over 2 ms here: nothing spins' unless learnt
    assert_equal waits, spins + declined + long + paced, 'each wait spun or was counted as not spun, once'
    skip 'every answer was routed before its caller looked: no wait to spin in' if waits.zero?
    assert_operator spins + declined + long, :>=, 1, 'no wait spun or was declined a spin'
    # Every spin caught: no wait went without its spin for pacing. (How many
    # waits there are depends on the machine: on a loaded one an answer is
    # often there before its caller looks, and answers slow down until they
    # are too long to spin for: 12 spins in 20 compiles, all caught, beside
    # an emulated suite; on a quiet one every compile waits and spins.)
    assert_equal 0, paced, "#{spins} spins, all caught, yet #{paced} waits paused" if caught == spins
    steady = caught == spins && (declined + long).zero? && quiet?
    assert_operator spins, :>=, 15, "#{spins} spins, all caught" if steady
    # The compiler writes an answer's length and its body apart: a caller
    # whose spin caught the length reads on for the body (spin::settle)
    # instead of waiting again, so each compile waits once (twice without:
    # 31-40 waits in 20 compiles).
    assert_operator waits, :<=, 25, "#{waits} waits in 20 compiles" if steady
  end

  # Whether the machine is quiet enough that every tiny compile's caller
  # waits for its answer: less than a CPU's worth of load per CPU over the
  # last minute.
  def quiet?
    File.read('/proc/loadavg').split.first.to_f < Etc.nprocessors
  rescue Errno::ENOENT
    true
  end

  # A budget no compile can meet (1 us): spins miss, and the pause between
  # spins doubles (1, 3, 7, ... 63 waits) instead of every wait burning its
  # budget: 9 spins in 300 waits (fewer where the machine has no CPU to
  # spare: under qemu with a CI run on both CPUs beside it the gate declined
  # every one). A spin can still catch an answer that came before it began
  # (on a busy machine), which ends the pause: six more misses before it is
  # back at 63.
  def test_spins_that_keep_missing_back_off_to_a_probe_now_and_then
    spins, caught, declined = spins_in('300.times { Sass.compile_string("a{b:c}") }', 'SASS_EMBEDDED_SPIN_US' => '1')
    assert_operator spins + declined, :>=, 1, 'no wait spun or was declined a spin'
    assert_operator spins - caught, :<=, 12 + (6 * caught), "#{spins} spins, #{caught} caught, in 300 compiles"
  end

  def test_a_budget_that_is_no_whole_number_is_an_error_at_the_first_compile
    script = "require 'sass-embedded'; begin; Sass.compile_string('a{b:c}'); rescue ArgumentError => e; " \
             'puts e.message; end'
    %w[fast 1.5 -3].each do |value|
      output, status = Open3.capture2e({ 'SASS_EMBEDDED_SPIN_US' => value }, RbConfig.ruby, '-I',
                                       File.join(ROOT, 'lib'), '-e', script)
      assert status.success?, output
      assert_equal 'SASS_EMBEDDED_SPIN_US must be a whole number of microseconds to spin before sleeping (0 turns ' \
                   "spinning off, at most 5000), got #{value.inspect}", output.lines.last.chomp
    end
  end

  # A GVL-free call with an unblocking function on the main thread of a
  # program without other threads makes Ruby start a Ruby thread to call
  # it, and kill it afterwards: about 20 us a spin. There the spin has none
  # (see gvl.rs), and a lone main thread that spins has no more threads than
  # one that does not.
  def test_spinning_on_a_lone_main_thread_starts_no_thread
    skip 'counts threads in /proc (Linux)' unless RUBY_PLATFORM.include?('linux')

    script = "require 'sass-embedded'; 20.times { Sass.compile_string('a{b:c}') }; " \
             'puts Dir.children("/proc/self/task").size'
    counts = [{}, { 'SASS_EMBEDDED_SPIN_US' => '0' }].map do |env|
      output, status = Open3.capture2e(env, RbConfig.ruby, '-I', File.join(ROOT, 'lib'), '-e', script)
      assert status.success?, output
      Integer(output.lines.last)
    end
    assert_equal counts.last, counts.first, 'threads with spinning, and without'
  end

  # The budget follows how long answers take (wait::spin::answers): twice what
  # nine in ten of the recent ones took, so a tiny compile's is well under
  # the 2 ms beyond which nothing spins; a stylesheet that takes the
  # compiler milliseconds gets no spin at all once that is learnt (four of
  # the last 32 answers long: eight compiles of it are plenty), and a set
  # budget is kept. How many of the first eight spun depends on the
  # machine's load (11 of 12 once under qemu beside two other suites), so
  # only the four after them are counted.
  def test_the_budget_follows_the_answers_and_long_ones_get_none
    script = <<~'RUBY'
      tiny = host.spin_stats[4]
      long = "@for $i from 1 through 3000 { .a-#{$i} { width: $i * 1px; } }"
      8.times { Sass.compile_string(long) }
      before = host.spin_stats
      4.times { Sass.compile_string(long) }
      after = host.spin_stats
      puts [tiny, before[4], after[4], after[0] - before[0]].inspect
    RUBY
    output, status = Open3.capture2e({ 'SASS_EMBEDDED_SPIN_US' => '700' }, RbConfig.ruby, '-I',
                                     File.join(ROOT, 'lib'), '-e',
                                     "require 'sass-embedded'; #{WARM}\n#{script}")
    assert status.success?, output
    assert_equal [0.0007] * 3, eval(output.lines.last).first(3) # rubocop:disable Security/Eval

    output, status = Open3.capture2e(RbConfig.ruby, '-I', File.join(ROOT, 'lib'), '-e',
                                     "require 'sass-embedded'; #{WARM}\n#{script}")
    assert status.success?, output
    tiny, learnt, long, spins = eval(output.lines.last) # rubocop:disable Security/Eval
    assert_nil learnt, 'a budget after eight answers that took milliseconds'
    assert_nil long, 'a budget for answers that take milliseconds'
    assert_equal 0, spins, 'spins for long answers, once learnt'
    skip 'tiny compiles take the compiler over 2 ms here: nothing spins' if tiny.nil?

    assert_operator tiny, :>, 0, output
    assert_operator tiny, :<=, 0.004, 'a tiny compile\'s budget is at most 4 ms'
  end

  # A CPU quota (cgroup v1's cpu.cfs_quota_us, as a container's CPU limit
  # sets) of 1.5 CPUs, on a machine with two idle ones: the machine's idle
  # time says spin, but a lone compile uses more than half a CPU of the
  # quota, so a spinning thread's whole CPU would not fit in it, and the
  # gate declines every spin. With a quota of 4 CPUs the same compiles may
  # spin: the quota is read, and it is not what declines.
  def test_nothing_spins_beyond_a_cpu_quota
    cpu, cpuacct = v1_cpu_hierarchies
    skip 'needs root and cgroup v1\'s cpu and cpuacct controllers (this machine\'s kind has them)' unless cpu

    script = '300.times { Sass.compile_string("a{b:c}") }; ' \
             'puts Sass::Embedded.const_get(:Host).spin_stats[5].inspect'
    quotas = { 150_000 => 1.5, 400_000 => 4.0 }.to_h do |quota_us, cpus|
      within_cpu_quota(cpu, cpuacct, quota_us) do |enter|
        # A fixed budget: the gate is asked at every wait, whatever the
        # answers here take.
        output, status = Open3.capture2e({ 'SASS_EMBEDDED_SPIN_US' => '1000' }, RbConfig.ruby, '-e', enter, '-I',
                                         File.join(ROOT, 'lib'), '-I', __dir__,
                                         '-e', "require 'sass-embedded'; #{WARM}; " \
                                               'before = Sass::Embedded.const_get(:Host).spin_stats; ' \
                                               "#{script}; after = Sass::Embedded.const_get(:Host).spin_stats; " \
                                               'puts [after[0] - before[0], after[3] - before[3]].inspect')
        assert status.success?, output
        seen = eval(output.lines[-2]) # rubocop:disable Security/Eval
        assert_in_delta cpus, seen, 0.001, "the quota the gate read: #{output}"
        [cpus, eval(output.lines.last)] # rubocop:disable Security/Eval
      end
    end
    spins, declined = quotas[1.5]
    assert_equal 0, spins, 'spins under a quota of 1.5 CPUs'
    assert_operator declined, :>=, 1, 'the gate was asked and declined'
  end

  def test_nobody_spins_with_a_budget_of_zero
    assert_equal [0, 0, 0],
                 spins_in('20.times { Sass.compile_string("a{b:c}") }', 'SASS_EMBEDDED_SPIN_US' => '0').first(3)
  end

  def test_a_fiber_under_a_scheduler_never_spins
    script = <<~'RUBY'
      require 'support/test_scheduler'
      Thread.new do
        Fiber.set_scheduler(TestScheduler.new)
        Fiber.schedule { 20.times { Sass.compile_string("a{b:c}") } }
      end.join
    RUBY
    assert_equal [0, 0], spins_in(script).first(2)
  end

  # While one caller is in flight (its compile waits in a function), another
  # caller's compile does not spin: the CPU could serve the first.
  def test_a_caller_does_not_spin_while_another_is_in_flight
    script = <<~'RUBY'
      entered = Queue.new
      release = Queue.new
      busy = Thread.new do
        Sass.compile_string('a { b: hold() }', functions: { 'hold()' => lambda { |_|
          entered << true
          release.pop
          Sass::Value::String.new('x', quoted: false)
        } })
      end
      entered.pop
      during = Sass::Embedded.const_get(:Host).spin_stats
      10.times { Sass.compile_string("a{b:c}") }
      puts "during #{Sass::Embedded.const_get(:Host).spin_stats[0] - during[0]}"
      release << true
      busy.join
    RUBY
    output, status = Open3.capture2e(RbConfig.ruby, '-I', File.join(ROOT, 'lib'), '-e',
                                     "require 'sass-embedded'\n#{script}")
    assert status.success?, output
    assert_equal 'during 0', output.lines.grep(/\Aduring/).last&.strip
  end

  private

  # Where cgroup v1's cpu and cpuacct controllers are mounted (writable, as
  # root), or nil.
  def v1_cpu_hierarchies
    return unless RUBY_PLATFORM.include?('linux') && Process.euid.zero?

    mounts = File.readlines('/proc/self/mountinfo').filter_map do |line|
      fields, after = line.split(' - ', 2)
      type, _, options = after.split
      [options.split(','), fields.split[4]] if type == 'cgroup'
    end
    found = %w[cpu cpuacct].map { |controller| mounts.find { |options, _| options.include?(controller) }&.last }
    found if found.all? { |dir| dir && File.writable?(dir) }
  end

  # Makes a cgroup of its own in both hierarchies with a CPU quota of
  # +quota_us+ per 100 ms and yields the Ruby code that moves the process
  # running it there; removes the cgroup afterwards.
  def within_cpu_quota(cpu, cpuacct, quota_us)
    name = "sass-embedded-test-#{Process.pid}-#{quota_us}"
    dirs = [cpu, cpuacct].uniq.map { |root| File.join(root, name) }
    dirs.each { |dir| Dir.mkdir(dir) }
    File.write(File.join(cpu, name, 'cpu.cfs_period_us'), '100000')
    File.write(File.join(cpu, name, 'cpu.cfs_quota_us'), quota_us.to_s)
    yield dirs.map { |dir| "File.write(#{File.join(dir, 'cgroup.procs').inspect}, Process.pid.to_s)" }.join('; ')
  ensure
    dirs&.each do |dir|
      # Its processes have ended (the compiler with the Ruby that started
      # it); the kernel lets go of a cgroup a moment after.
      50.times do
        Dir.rmdir(dir)
        break
      rescue Errno::ENOENT
        break
      rescue Errno::EBUSY
        sleep 0.1
      end
    end
  end
end
