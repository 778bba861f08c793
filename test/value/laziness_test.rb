# frozen_string_literal: true

require_relative '../test_helper'

# Value constructors accept what the established gem's accept, and check
# only what it checks there (a List's separator rule, a Number's units); a
# value that is not what it should be fails where it is used, with the
# established message, and only that compile fails.
class ValueLazinessTest < Minitest::Test
  N = Sass::Value::Number
  S = Sass::Value::String
  L = Sass::Value::List
  M = Sass::Value::Map

  def returning(value)
    { 'f()' => ->(_args) { value } }
  end

  def test_constructors_accept_what_the_established_gem_accepts
    assert_equal '1', N.new('1').value
    assert_equal 42, S.new(42).text
    assert_equal [1], L.new([1]).to_a
    assert_equal ';', L.new([], separator: ';').separator
    assert_equal({ 'a' => N.new(1) }, M.new({ 'a' => N.new(1) }).contents)
    assert_equal({ a: 1 }, Sass::Value::ArgumentList.new([], { a: 1 }).keywords)
    # What the established gem does check, this gem checks too.
    assert_raises(Sass::ScriptError) { L.new([N.new(1), N.new(2)], separator: nil) }
    assert_raises(Sass::ScriptError) { N.new(1, 42) }
  end

  def test_a_string_number_fails_where_a_calculation_is_simplified
    error = assert_raises(Sass::ScriptError) { Sass::Value::Calculation.clamp(N.new('1')) }
    assert_equal 'Argument must be an unquoted SassString.', error.message
  end

  def test_a_number_is_sent_as_its_value_to_f
    assert_equal "a {\n  b: 1.5px;\n}",
                 Sass.compile_string('a { b: f() }', functions: returning(N.new('1.5', 'px'))).css
  end

  def test_values_that_are_not_values_fail_their_compile_only
    compiler = new_compiler
    { 'String.new(42)' => S.new(42), 'List.new([1])' => L.new([1]),
      "List.new(separator: ';')" => L.new([N.new(1)], separator: ';'),
      "Map.new('a' => 1)" => M.new({ 'a' => N.new(1) }) }.each do |label, value|
      error = assert_raises(Sass::CompileError, label) do
        compiler.compile_string('a { b: f() }', functions: returning(value))
      end
      refute_empty error.message, label
    end
    assert_equal "a {\n  b: c;\n}", compiler.compile_string('a { b: c }').css
  end
end
