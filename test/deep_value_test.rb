# frozen_string_literal: true

require_relative 'test_helper'

begin
  require 'async'
rescue LoadError
  warn 'the async gem is not installed: deep values are tested in plain fibers and threads only'
end

# A value nested a thousand levels deep reaches a function in a fiber (whose
# machine stack is 512 KiB) as it does on a thread, and nothing that goes
# wrong in one compile's native path, however deep its stack or whatever
# Ruby raises in it, leaves another caller waiting.
class DeepValueTest < Minitest::Test
  LEVELS = 1000

  # `depth($v)`: how many one-element lists $v is nested in.
  DEPTH = {
    'depth($v)' => lambda { |args|
      value = args[0]
      levels = 0
      while value.is_a?(Sass::Value::List) && value.to_a.length == 1
        value = value.to_a[0]
        levels += 1
      end
      Sass::Value::Number.new(levels)
    }
  }.freeze

  def deep_source(levels = LEVELS)
    "a { b: depth(#{'[' * levels}x#{']' * levels}) }"
  end

  def expected_css(levels = LEVELS)
    "a {\n  b: #{levels};\n}"
  end

  # Another thread's compile answers (within 10 s, or the test fails).
  def assert_others_answered(compiler)
    thread = Thread.new { compiler.compile_string('o { p: q }').css }
    assert thread.join(10), 'a compile on another thread hung'
    assert_equal "o {\n  p: q;\n}", thread.value
  end

  def test_a_thousand_levels_in_a_plain_fiber
    compiler = new_compiler
    css = Fiber.new { compiler.compile_string(deep_source, functions: DEPTH).css }.resume
    assert_equal expected_css, css
    assert_others_answered(compiler)
  end

  def test_a_thousand_levels_on_a_thread_while_fibers_compile
    compiler = new_compiler
    fibers = Array.new(4) { Fiber.new { compiler.compile_string(deep_source(LEVELS - 1), functions: DEPTH).css } }
    thread = Thread.new { compiler.compile_string(deep_source, functions: DEPTH).css }
    assert_equal Array.new(4) { expected_css(LEVELS - 1) }, fibers.map(&:resume)
    assert thread.join(10), 'the thread hung'
    assert_equal expected_css, thread.value
    assert_others_answered(compiler)
  end

  if defined?(Async)
    def test_a_thousand_levels_in_async_tasks
      compiler = new_compiler
      results = Async do |task|
        # Several at once: some tasks watch the compiler's output (and so
        # decode the others' deep arguments), others park.
        Array.new(4) { task.async { compiler.compile_string(deep_source, functions: DEPTH).css } }.map(&:wait)
      end.wait
      assert_equal Array.new(4) { expected_css }, results
      assert_others_answered(compiler)
    end
  end

  # Calls `block` from `levels` Ruby frames down.
  def descend(levels, &block)
    levels.zero? ? block.call : descend(levels - 1, &block)
  end

  # Compiles from ever deeper in a fiber's stack, up to where Ruby itself
  # runs out: each compile either compiles or raises SystemStackError, and
  # every other caller keeps getting answers.
  def test_compiles_near_the_end_of_a_fibers_stack
    compiler = new_compiler
    compiler.compile_string('warm { up: 1 }')
    limit = Fiber.new do
      levels = 0
      loop do
        descend(levels) { nil }
        levels += 100
      end
    rescue SystemStackError
      levels
    end.resume
    outcomes = Hash.new(0)
    (limit - 400).step(limit + 100, 20) do |levels|
      outcome = Fiber.new do
        descend(levels) { compiler.compile_string(deep_source(20), functions: DEPTH).css }
      rescue SystemStackError
        :overflow
      end.resume
      outcomes[outcome] += 1
      assert_others_answered(compiler) if (levels % 100).zero?
    end
    assert_equal [expected_css(20), :overflow], outcomes.keys.sort_by(&:to_s), outcomes.inspect
    assert_others_answered(compiler)
  end

  # Raises `error` at the `index`-th Ruby method call (Ruby or C) made on
  # this thread while the block runs; the block raises it (or, raised in a
  # callback, the compile error it became). Returns whether it was raised.
  def raise_at_call(index, error, &)
    thread = Thread.current
    calls = 0
    raised = false
    trace = TracePoint.new(:call, :c_call) do
      next unless Thread.current == thread

      calls += 1
      next unless calls == index

      raised = true
      raise error
    end
    begin
      trace.enable(&)
    rescue error.class => e
      raise unless e.equal?(error)
    rescue Sass::CompileError => e
      # A StandardError raised in a callback is the compile's error.
      raise unless e.message.include?(error.message)
    end
    raised
  end

  # A compile that makes every kind of Ruby call the native path makes: a
  # function (with a nested value), an importer, a logger's warn and debug.
  def busy_compile(compiler)
    importer = {
      canonicalize: ->(url, _) { "busy:#{url}" },
      load: ->(_) { { contents: '@debug "d"; @warn "w"; i { j: k }', syntax: 'scss' } }
    }
    logger = Class.new do
      def warn(*) = nil
      def debug(*) = nil
    end.new
    compiler.compile_string("@use 'x'; a { b: depth([[x]]) }", functions: DEPTH, importers: [importer], logger:)
  end

  # Another caller's compile held open inside its function until released.
  def held_compile(compiler)
    entered = Queue.new
    gate = Queue.new
    functions = { 'hold()' => lambda { |_|
      entered << true
      gate.pop
      Sass::Value::String.new('held', quoted: false)
    } }
    thread = Thread.new { compiler.compile_string('h { i: hold() }', functions:).css }
    entered.pop
    [thread, gate]
  end

  # SystemStackError, and an ordinary error, raised at each Ruby call a
  # compile makes (its callbacks, the value classes it builds, its waits)
  # while another caller's compile is in flight: that caller gets its result,
  # and a fresh compile from another thread answers.
  def test_an_exception_at_any_ruby_call_of_a_compile_strands_no_one
    compiler = new_compiler
    assert_equal "i {\n  j: k;\n}\n\na {\n  b: 2;\n}", busy_compile(compiler).css
    [SystemStackError, RuntimeError].each do |error_class|
      index = 1
      loop do
        thread, gate = held_compile(compiler)
        raised = raise_at_call(index, error_class.new("injected at call #{index}")) { busy_compile(compiler) }
        gate << true
        assert thread.join(10), "#{error_class} at call #{index}: a compile in flight hung"
        assert_equal "h {\n  i: held;\n}", thread.value
        assert_others_answered(compiler)
        break unless raised

        index += 1
      end
      assert_operator index, :>, 20, "only #{index - 1} Ruby calls were tried"
    end
  end
end
