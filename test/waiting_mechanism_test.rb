# frozen_string_literal: true

require_relative 'test_helper'

# The build waits with the mechanism it was made for: epoll and eventfds on
# Linux, poll(2) and pipes elsewhere (and on Linux under `rake
# test:portable`, which sets SASS_EMBEDDED_EXPECT_WAIT=poll and runs this
# whole suite through that mechanism), a reader thread per compiler under
# `rake test:reader` (SASS_EMBEDDED_EXPECT_WAIT=reader; Windows's mechanism).
class WaitingMechanismTest < Minitest::Test
  include SassTestHelpers

  def expected
    ENV.fetch('SASS_EMBEDDED_EXPECT_WAIT') do
      if WINDOWS then 'reader'
      elsif RUBY_PLATFORM.include?('linux') then 'epoll'
      else
        'poll'
      end
    end
  end

  def test_the_extension_waits_with_the_mechanism_this_run_expects
    assert_equal expected, Sass::Embedded.const_get(:Host)::WAIT_MECHANISM
  end

  # The threads of this process named +name+ (Linux's comm).
  def threads_named(name)
    Dir.glob('/proc/self/task/*/comm').count do |comm|
      File.read(comm).chomp == name
    rescue Errno::ENOENT
      false
    end
  end

  def test_each_compiler_has_a_reader_thread_only_under_the_reader_mechanism
    skip 'counts threads in /proc (Linux)' unless RUBY_PLATFORM.include?('linux')

    before = threads_named('sass-reader')
    compiler = new_compiler
    assert_equal "a {\n  b: c;\n}", compiler.compile_string('a { b: c }').css
    assert_equal before + (expected == 'reader' ? 1 : 0), threads_named('sass-reader')
    compiler.close
    wait_until(message: 'a reader thread outlived its compiler') { threads_named('sass-reader') == before }
  end
end
