# frozen_string_literal: true

require_relative 'test_helper'

# The wait_for dispatch (the benchmark's baseline) runs the same API through
# the calling thread's own reads: one compilation at a time, same results.
class WaitForTest < Minitest::Test
  def compiler
    @compiler ||= new_compiler(dispatch: :wait_for)
  end

  def test_compiles_with_functions_importers_and_loggers
    assert_equal :wait_for, compiler.send(:host).dispatch
    importer = { canonicalize: ->(url, _) { "m:#{url.delete_prefix('m:')}" },
                 load: ->(_) { { contents: '$c: red;', syntax: :scss } } }
    logger = RecordingLogger.new
    css = compiler.compile_string("@use 'lib'; @warn 'w'; a { b: twice(2); c: lib.$c }",
                                  functions: { 'twice($n)' => ->(args) { Sass::Value::Number.new(args[0].value * 2) } },
                                  importers: [importer], logger:).css
    assert_equal "a {\n  b: 4;\n  c: red;\n}", css
    assert_equal(['w'], logger.warnings.map { |w| w[:message] })
    assert_match(/dart-sass/, compiler.info)
    assert_raises(Sass::CompileError) { compiler.compile_string('a {') }
  end

  def test_threads_take_turns_on_one_compiler_and_get_their_own_results
    threads = Array.new(8) do |t|
      Thread.new { Array.new(30) { |i| [i, compiler.compile_string(".t#{t} { i: #{i} }").css] } }
    end
    threads.each_with_index do |thread, t|
      thread.value.each { |i, css| assert_equal ".t#{t} {\n  i: #{i};\n}", css }
    end
    assert_equal 1, compiler.send(:host).compiler_pids.length
  end

  def test_nested_compile_runs_under_the_callers_turn
    functions = { 'inner()' => lambda { |_|
      Sass::Value::String.new(compiler.compile_string('x { y: z }', style: :compressed).css, quoted: true)
    } }
    assert_equal "a {\n  b: \"x{y:z}\";\n}", compiler.compile_string('a { b: inner() }', functions:).css
  end

  def test_timeout_interrupts_the_read_and_the_next_compile_works
    compiler.compile_string('a { b: c }')
    start = monotonic_now
    assert_raises(Timeout::Error) { Timeout.timeout(0.3) { compiler.compile_string(slow_source) } }
    assert_operator elapsed_since(start), :<, budget(2)
    assert_equal "a {\n  b: d;\n}", compiler.compile_string('a { b: d }').css
  end

  def test_timeout_while_waiting_for_the_turn
    release = Queue.new
    entered = Queue.new
    holder = Thread.new do
      compiler.compile_string('a { b: hold() }', functions: { 'hold()' => lambda { |_|
        entered << true
        release.pop
        Sass::Value::Null::NULL
      } })
    end
    entered.pop
    start = monotonic_now
    assert_raises(Timeout::Error) { Timeout.timeout(0.3) { compiler.compile_string('a { b: c }') } }
    assert_operator elapsed_since(start), :<, budget(2)
    release << true
    holder.join
    assert_equal "a {\n  b: c;\n}", compiler.compile_string('a { b: c }').css
  end

  def test_killed_compiler_is_reported_and_replaced
    compiler.compile_string('a { b: c }')
    pid = compiler_pid(compiler)
    Process.kill(:KILL, pid)
    # Nobody reads a wait_for compiler between compiles: the host notices the
    # death when it next looks for a compiler.
    wait_until { compiler_pid(compiler) != pid }
    assert_equal "a {\n  b: c;\n}", compiler.compile_string('a { b: c }').css
    refute_equal pid, compiler_pid(compiler)
  end

  def test_invalid_dispatch
    error = assert_raises(ArgumentError) { Sass::Compiler.new(dispatch: :async) }
    assert_match(/dispatch must be :multiplexed or :wait_for/, error.message)
  end
end
