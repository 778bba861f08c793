# frozen_string_literal: true

require_relative '../test_helper'

class FunctionValueTest < Minitest::Test
  F = Sass::Value::Function
  N = Sass::Value::Number

  # As in the established gem, the callback may be the second argument; a
  # block does as well.
  def test_callback_as_argument_or_block
    double = F.new('double($n)', ->(args) { N.new(args[0].value * 2) })
    triple = F.new('triple($n)') { |args| N.new(args[0].value * 3) }
    functions = { 'fns()' => ->(_) { Sass::Value::List.new([double, triple]) } }
    css = Sass.compile_string("@use 'sass:meta'; @use 'sass:list';
                               a { b: meta.call(list.nth(fns(), 1), 21); c: meta.call(list.nth(fns(), 2), 2) }",
                              functions:).css
    assert_equal "a {\n  b: 42;\n  c: 6;\n}", css
    assert_equal 'double($n)', double.signature
    assert_raises(ArgumentError) { F.new('f()', ->(_) {}) { nil } }
    assert_raises(ArgumentError) { F.new('f()') }
  end

  def test_equality_and_printing
    callback = ->(_) { N.new(1) }
    assert_equal F.new('f()', callback), F.new('f()', callback)
    refute_equal F.new('f()', callback), F.new('f()') { |_| N.new(1) }
    assert_equal 'get-function("f")', F.new('f($a, $b: 2)', callback).inspect
    error = assert_raises(Sass::ScriptError) { F.new('f()', callback).to_s }
    assert_equal %(get-function("f") isn't a valid CSS value.), error.message
  end

  def test_module_is_the_established_name
    assert_equal 'Sass::Value::Module', Sass::Value::Module.name
    refute Sass::Value.const_defined?(:CompilerModule), 'no name the established gem lacks'
    assert_raises(NoMethodError) { Sass::Value::Module.new }
  end
end
