# frozen_string_literal: true

require_relative 'test_helper'
require 'open3'

# The suite's last resort (test/support/watchdog.rb): a test that hangs where
# Ruby's Timeout cannot reach it still fails the run, soon, naming itself.
class WatchdogTest < Minitest::Test
  def test_a_hang_timeout_cannot_end_kills_the_suite_naming_the_test
    probe = File.join(__dir__, 'fixtures', 'watchdog', 'hang.rb')
    env = { 'SASS_TEST_TIMEOUT' => '1', 'SASS_WATCHDOG_GRACE' => '1' }
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    output, status = Open3.capture2e(env, RbConfig.ruby, '-Ilib', '-Itest', probe,
                                     chdir: File.expand_path('..', __dir__))
    elapsed = Process.clock_gettime(Process::CLOCK_MONOTONIC) - started

    if WINDOWS
      # taskkill /F: TerminateProcess with exit code 1 (Windows has no signals).
      assert_equal 1, status.exitstatus, "the probe suite was not killed:\n#{output}"
    else
      assert_equal 'KILL', Signal.signame(status.termsig.to_i), "the probe suite was not killed:\n#{output}"
    end
    assert_includes output, 'watchdog: WatchdogProbeTest#test_hangs_where_ruby_cannot_interrupt has run 2 s'
    assert_includes output, 'killing the suite'
    # Its own timeout is a last resort too: the watchdog came long before it.
    assert_operator elapsed, :<, SassTestTimeout::TEST_TIMEOUT, output
  end
end
