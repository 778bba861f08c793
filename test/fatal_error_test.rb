# frozen_string_literal: true

require_relative 'test_helper'

# A stylesheet that makes Dart Sass fail and stop (a stack overflow) fails as
# a Sass::CompileError that says so in Sass terms, and costs the other
# compilations on that compiler nothing: they run again on a fresh one.
class FatalErrorTest < Minitest::Test
  ENDLESS_MIXIN = '@mixin a { @include a; } x { @include a; }'
  ENDLESS_FUNCTION = '@function f($n) { @return f($n + 1); } x { y: f(0) }'
  NESTED_BLOCKS = "#{'a { ' * 10_000}b: c;#{' }' * 10_000}".freeze
  NESTED_PARENTHESES = "a { b: #{'(' * 10_000}1#{')' * 10_000}; }".freeze

  def assert_stack_overflow(compiler, source)
    error = assert_raises(Sass::CompileError) { compiler.compile_string(source) }
    assert_match(/\AStack overflow: the stylesheet recursed or nested too deeply/, error.message)
    # The compiler's own words are kept for debugging, not as the message.
    assert_match(/The compiler reported:\n  .*stack overflow/i, error.full_message(highlight: false))
    assert_operator error.message.lines.size, :<, 3
    error
  end

  def test_recursion_and_nesting_too_deep_are_compile_errors
    compiler = new_compiler(max_processes: 1)
    [ENDLESS_MIXIN, ENDLESS_FUNCTION, NESTED_BLOCKS, NESTED_PARENTHESES].each do |source|
      assert_stack_overflow(compiler, source)
    end
    # And the compiler serves the next compile.
    assert_equal "a {\n  b: c;\n}", compiler.compile_string('a { b: c }').css
  end

  def test_bystanders_on_the_same_compiler_run_again_and_succeed
    compiler = new_compiler(max_processes: 1)
    calls = Queue.new
    release = Queue.new
    released = false
    hold = lambda do |args|
      calls << args[0].assert_number.value
      release.pop unless released
      Sass::Value::String.new('held', quoted: false)
    end
    # Three bystanders suspended in a function, three running a slow
    # stylesheet: all on the one compiler the culprit will stop.
    suspended = Array.new(3) do |index|
      Thread.new { compiler.compile_string("h#{index} { v: hold(#{index}) }", functions: { 'hold($i)' => hold }).css }
    end
    running = Array.new(3) do |index|
      Thread.new { compiler.compile_string("#{slow_source(300_000)} s#{index} { i: #{index} }").css }
    end
    3.times { calls.pop }
    pid = compiler_pid(compiler)
    assert_equal [pid], compiler.send(:host).compiler_pids

    assert_stack_overflow(compiler, ENDLESS_MIXIN)
    released = true
    3.times { release << true }

    suspended.each_with_index do |thread, index|
      assert_equal "h#{index} {\n  v: held;\n}", thread.value
    end
    running.each_with_index do |thread, index|
      assert_equal "slow {\n  n: 300000;\n}\n\ns#{index} {\n  i: #{index};\n}", thread.value
    end
    # Each suspended bystander's function ran again in the second run.
    assert_equal 3, calls.size
    refute_includes compiler.send(:host).compiler_pids, pid
  end

  def test_an_unparsable_url_is_refused_before_the_compiler_sees_it
    compiler = new_compiler
    compiler.compile_string('a { b: c }')
    pid = compiler_pid(compiler)
    {
      '::' => 'its scheme is empty',
      '1a:b' => 'its scheme "1a" is not a scheme',
      'http://[::1' => 'its host has a [ without a matching ]',
      'http://[zz]/' => 'its host is not an IP address in brackets',
      'http://host:port/' => 'its port "port" is not a number'
    }.each do |url, reason|
      error = assert_raises(ArgumentError) { compiler.compile_string('a { b: c }', url:) }
      assert_equal "url #{url.inspect} is not a valid URL: #{reason}", error.message
    end
    # What Dart's lenient parser takes is passed on.
    ['file:///a b.scss', 'https://[::1]:8080/x.scss', 'custom:x:y'].each do |url|
      assert_equal [url.sub(' ', '%20')], compiler.compile_string('a { b: c }', url:).loaded_urls
    end
    assert_equal pid, compiler_pid(compiler)
  end
end
