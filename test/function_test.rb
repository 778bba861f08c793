# frozen_string_literal: true

require_relative 'test_helper'

# Custom functions: arguments, results, errors, first-class functions and
# mixins, against the real compiler.
class FunctionTest < Minitest::Test
  S = Sass::Value::String
  N = Sass::Value::Number

  def compile(source, functions, **options)
    Sass.compile_string(source, functions:, **options).css
  end

  def test_positional_default_and_rest_arguments
    seen = nil
    functions = { 'f($a, $b: 10px, $rest...)' => lambda { |args|
      seen = args
      S.new('ok', quoted: false)
    } }
    compile('a { b: f(1) }', functions)
    assert_equal [N.new(1), N.new(10, 'px')], seen[0, 2]
    assert_kind_of Sass::Value::ArgumentList, seen[2]
    assert_empty seen[2].to_a
    compile('a { b: f(1, 2, 3, 4) }', functions)
    assert_equal [N.new(3), N.new(4)], seen[2].to_a
    assert_equal ',', seen[2].separator
    compile('a { b: f($b: 5, $a: 6) }', functions)
    assert_equal [N.new(6), N.new(5)], seen[0, 2]
  end

  def test_keyword_arguments_are_reported_as_used_only_when_read
    reads = { 'f($args...)' => lambda { |args|
      S.new(args[0].keywords.keys.join('-'), quoted: false)
    } }
    assert_equal "a {\n  b: x-y;\n}", compile('a { b: f($x: 1, $y: 2) }', reads)

    ignores = { 'f($args...)' => ->(_args) { S.new('ignored', quoted: false) } }
    error = assert_raises(Sass::CompileError) { compile('a { b: f($x: 1) }', ignores) }
    assert_match(/No parameter named \$x/, error.message)
  end

  def test_signature_names_with_hyphens_and_underscores
    functions = { 'my-func($x)' => ->(args) { args[0] }, 'other_func()' => ->(_) { S.new('o', quoted: false) } }
    assert_equal "a {\n  b: 1;\n  c: o;\n}", compile('a { b: my_func(1); c: other-func() }', functions)
  end

  def test_any_callable_works
    callable = Object.new
    def callable.call(args) = Sass::Value::Number.new(args[0].value + 1)
    assert_equal "a {\n  b: 2;\n}", compile('a { b: inc(1) }', { 'inc($n)' => callable })
    assert_equal "a {\n  b: 4;\n}", compile('a { b: inc(3) }', { 'inc($n)': callable })
  end

  def test_ruby_errors_become_compile_errors_with_the_ruby_backtrace
    functions = { 'boom()' => ->(_) { raise ArgumentError, 'Ruby says no' } }
    error = assert_raises(Sass::CompileError) { compile('a { b: boom() }', functions) }
    assert_equal 'Ruby says no (ArgumentError)', error.message.lines.first.chomp # (then error_highlight's, 3.3+)
    assert_kind_of ArgumentError, error.cause
    assert(error.cause.backtrace.any? { |line| line.include?(__FILE__) })
    assert_equal 'boom()', error.span.text

    functions = { 'bad()' => ->(_) { raise Sass::ScriptError.new('must be positive', 'n') } }
    error = assert_raises(Sass::CompileError) { compile('a { b: bad() }', functions) }
    assert_equal '$n: must be positive (Sass::ScriptError)', error.message
  end

  def test_wrong_return_types
    {
      ->(_) { 42 } => '42 is not a Sass::Value',
      ->(_) {} => 'nil is not a Sass::Value',
      ->(_) { 'text' } => '"text" is not a Sass::Value',
      ->(_) { Sass::Value::List.new([N.new(1)]).to_a } => 'is not a Sass::Value'
    }.each do |callable, message|
      error = assert_raises(Sass::CompileError) { compile('a { b: f() }', { 'f()' => callable }) }
      assert_includes error.message, message
    end
  end

  def test_invalid_signatures_are_compile_errors_from_the_compiler
    compiler = new_compiler
    {
      'f' => 'Invalid signature "f": expected "(".',
      'f(' => 'Invalid signature "f(": expected ")".',
      '(x)' => 'Invalid signature "(x)": Expected identifier.',
      '1f()' => 'Invalid signature "1f()": Expected identifier.',
      '' => 'Invalid signature "": Expected identifier.',
      'f($a $b)' => 'Invalid signature "f($a $b)": expected ")".',
      ' f()' => 'Invalid signature " f()": Expected identifier.'
    }.each do |signature, message|
      error = assert_raises(Sass::CompileError, signature) do
        compiler.compile_string('a { b: c }', functions: { signature => ->(_) {} })
      end
      assert_equal message, error.message
      assert_equal "a {\n  b: c;\n}", compiler.compile_string('a { b: c }').css, 'the compiler keeps serving'
    end
  end

  def test_an_invalid_host_function_signature_is_the_functions_error
    bad = Sass::Value::Function.new('bad') { |args| args[0] }
    error = assert_raises(Sass::CompileError) do
      compile("@use 'sass:meta'; a { b: meta.call(get(), 1) }", { 'get()' => ->(_) { bad } })
    end
    assert_equal 'Invalid signature "bad": expected "(".', error.message
  end

  def test_host_functions_as_first_class_values
    double = Sass::Value::Function.new('double($n)') { |args| N.new(args[0].value * 2) }
    functions = { 'get-double()' => ->(_) { double } }
    source = "@use 'sass:meta'; a { b: meta.call(get-double(), 21); }"
    assert_equal "a {\n  b: 42;\n}", compile(source, functions)
    assert_raises(ArgumentError) { Sass::Value::Function.new('f()') }
    assert_equal double, double
    assert_same double, double.assert_function
  end

  def test_compiler_functions_and_mixins_return_within_their_compilation
    functions = { 'pass($v)' => ->(args) { args[0] } }
    source = <<~SCSS
      @use 'sass:meta';
      @function triple($n) { @return $n * 3; }
      @mixin red { color: red; }
      a { b: meta.call(pass(meta.get-function('triple')), 5); @include meta.apply(pass(meta.get-mixin('red'))); }
    SCSS
    assert_equal "a {\n  b: 15;\n  color: red;\n}", compile(source, functions)
  end

  def test_compiler_functions_and_mixins_are_equal_within_their_compilation
    captured = []
    keep = { 'keep($v)' => lambda { |args|
      captured << args[0]
      Sass::Value::Null::NULL
    } }
    compile(<<~SCSS, keep)
      @use 'sass:meta';
      @function f() { @return 1; }
      @function g() { @return 2; }
      @mixin m { x: y; }
      a { b: keep(meta.get-function('f')); c: keep(meta.get-function('f')); d: keep(meta.get-function('g'));
          e: keep(meta.get-mixin('m')); f: keep(meta.get-mixin('m')); }
    SCSS
    f1, f2, g, m1, m2 = captured
    assert_equal f1, f2
    assert_equal f1.hash, f2.hash
    refute_equal f1, g
    assert_equal m1, m2
    refute_equal f1, m1
    assert_kind_of Sass::Value::Mixin, m1
    assert_same m1, m1.assert_mixin
    assert_raises(Sass::ScriptError) { f1.assert_mixin }
  end

  def test_compiler_functions_cannot_cross_compilations
    kept = nil
    keep = { 'keep($v)' => lambda { |args|
      kept = args[0]
      Sass::Value::Null::NULL
    } }
    compile("@use 'sass:meta'; @function f() { @return 1; } a { b: keep(meta.get-function('f')) }", keep)
    assert_kind_of Sass::Value::Function, kept
    assert_nil kept.callback
    compiler = new_compiler
    error = assert_raises(Sass::CompileError) do
      compiler.compile_string("@use 'sass:meta'; a { b: meta.call(give(), 1) }", functions: { 'give()' => lambda { |_|
                                                                                                            kept
                                                                                                          } })
    end
    assert_match(/can only be used in the compilation that created it/, error.message)
    assert_equal "a {\n  b: c;\n}", compiler.compile_string('a { b: c }').css
  end

  def test_nested_functions_compile_inside_a_function
    functions = { 'inner($n)' => lambda { |args|
      css = Sass.compile_string("x { y: #{args[0].value.to_i + 1} }", style: :compressed).css
      S.new(css, quoted: true)
    } }
    assert_equal "a {\n  b: \"x{y:2}\";\n}", compile('a { b: inner(1) }', functions)
  end
end
