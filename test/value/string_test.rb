# frozen_string_literal: true

require_relative '../test_helper'

class StringValueTest < Minitest::Test
  S = Sass::Value::String

  def test_constructor_and_accessors
    string = S.new('hello')
    assert_equal 'hello', string.text
    assert string.quoted?
    refute S.new('bare', quoted: false).quoted?
    assert_equal '', S.new.text
    assert_equal Encoding::UTF_8, S.new('x'.encode(Encoding::ISO_8859_1)).text.encoding
    assert_predicate string.text, :frozen?
  end

  def test_equality_ignores_quotes
    assert_equal S.new('a'), S.new('a', quoted: false)
    assert_equal S.new('a').hash, S.new('a', quoted: false).hash
    refute_equal S.new('a'), S.new('b')
    refute_equal S.new('1'), Sass::Value::Number.new(1)
  end

  def test_sass_index_counts_code_points
    string = S.new('añ😀b')
    index = ->(i) { string.sass_index_to_string_index(Sass::Value::Number.new(i)) }
    assert_equal 0, index.call(1)
    assert_equal 2, index.call(3)
    assert_equal 3, index.call(-1)
    assert_equal 0, index.call(-4)
    assert_equal '😀', string.text[index.call(3)]
    assert_raises(Sass::ScriptError) { index.call(0) }
    assert_raises(Sass::ScriptError) { index.call(5) }
    assert_raises(Sass::ScriptError) { index.call(-5) }
    assert_raises(Sass::ScriptError) { index.call(1.5) }
    # As in the established gem, units are ignored.
    assert_equal 0, string.sass_index_to_string_index(Sass::Value::Number.new(1, 'px'))
    error = assert_raises(Sass::ScriptError) { string.sass_index_to_string_index(S.new('x'), 'index') }
    assert_equal '$index: "x" is not a number', error.message
    error = assert_raises(Sass::ScriptError) { index.call(0) }
    assert_equal 'String index may not be 0', error.message
    error = assert_raises(Sass::ScriptError) { string.sass_index_to_string_index(Sass::Value::Number.new(5), 'i') }
    assert_equal '$i: Invalid index 5 for a string with 4 characters', error.message
  end

  def test_assertions_and_list_behaviour
    string = S.new('a')
    assert_same string, string.assert_string
    error = assert_raises(Sass::ScriptError) { string.assert_number('width') }
    assert_equal '$width: "a" is not a number', error.message
    assert_equal [string], string.to_a
    assert_same string, string.at(0)
    assert_same string, string[-1]
    assert_nil string.at(1)
    assert string.to_bool
    assert_nil string.to_map
    assert_same string, string.to_nil
    assert_nil string.separator
    refute string.bracketed?
    assert_equal 0, string.sass_index_to_array_index(Sass::Value::Number.new(1))
  end

  def test_round_trip_through_the_compiler
    echo = { 'echo($s)' => ->(args) { args.first } }
    ['"quoted"', 'unquoted', '"with \"escapes\" and ü"', '""'].each do |literal|
      expected = Sass.compile_string("a { b: #{literal} }").css
      assert_equal expected, Sass.compile_string("a { b: echo(#{literal}) }", functions: echo).css, literal
    end
    seen = nil
    Sass.compile_string('a { b: echo("x") }', functions: { 'echo($s)' => ->(args) { seen = args.first } })
    assert seen.quoted?
  end
end
