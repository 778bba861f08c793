# frozen_string_literal: true

require_relative 'test_helper'

# The build waits with the mechanism it was made for: epoll and eventfds on
# Linux, poll(2) and pipes elsewhere (and on Linux under `rake
# test:portable`, which sets SASS_EMBEDDED_EXPECT_WAIT=poll and runs this
# whole suite through that mechanism).
class WaitingMechanismTest < Minitest::Test
  def test_the_extension_waits_with_the_mechanism_this_run_expects
    expected = ENV.fetch('SASS_EMBEDDED_EXPECT_WAIT') { RUBY_PLATFORM.include?('linux') ? 'epoll' : 'poll' }
    assert_equal expected, Sass::Embedded.const_get(:Host)::WAIT_MECHANISM
  end
end
