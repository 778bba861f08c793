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

  def setup
    skip 'the spin needs two CPUs' if Etc.nprocessors < 2
  end

  # Runs +script+ (after requiring the gem, with spins counted from there)
  # in a new Ruby; its last line of output, parsed as [spins, caught,
  # declined] (declined: waits that did not spin for want of a free CPU).
  def spins_in(script, env = {})
    prelude = "require 'sass-embedded'; Sass.compile_string('a{b:c}'); " \
              'before = Sass::Embedded.const_get(:Host).spin_stats; '
    report = '; after = Sass::Embedded.const_get(:Host).spin_stats; ' \
             'puts [after[0] - before[0], after[1] - before[1], after[3] - before[3]].inspect'
    output, status = Open3.capture2e(env, RbConfig.ruby, '-I', File.join(ROOT, 'lib'), '-I', __dir__, '-e',
                                     prelude + script + report)
    assert status.success?, output
    eval(output.lines.last) # rubocop:disable Security/Eval
  end

  # (Whether a spin catches its answer depends on the machine and its load:
  # only a spin that catches keeps the next wait spinning. And a compile
  # whose answer was routed before its caller first looked, as a reader
  # thread can under Wine, waits for nothing and so does not spin: 19 of 20
  # spun once there. Where no CPU is free, the gate declines the spins:
  # 0 spins in 20 compiles under qemu with a Wine suite beside it.)
  def test_a_lone_thread_spins_before_each_wait_while_its_spins_catch
    spins, caught, declined = spins_in('20.times { Sass.compile_string("a{b:c}") }')
    assert_operator spins + declined, :>=, 1, 'no wait spun or was declined a spin'
    # Every spin caught, and none was declined for want of a CPU: every
    # wait spun.
    assert_operator spins, :>=, 15, "#{spins} spins, all caught" if caught == spins && declined.zero?
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

  def test_nobody_spins_with_a_budget_of_zero
    assert_equal [0, 0, 0], spins_in('20.times { Sass.compile_string("a{b:c}") }', 'SASS_EMBEDDED_SPIN_US' => '0')
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
end
