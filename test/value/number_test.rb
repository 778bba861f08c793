# frozen_string_literal: true

require_relative '../test_helper'

class NumberTest < Minitest::Test
  N = Sass::Value::Number

  def units(numerators, denominators = [])
    { numerator_units: numerators, denominator_units: denominators }
  end

  def test_constructors
    assert_equal 1.5, N.new(1.5).value
    # Values are kept as given, as the established gem keeps them.
    assert_same 1, N.new(1).value
    assert_equal Rational(1, 3), N.new(Rational(1, 3)).value
    assert_same 3, N.new(3, units(%w[px px], %w[px])).value
    assert_equal [], N.new(1).numerator_units
    assert_equal ['px'], N.new(1, 'px').numerator_units
    number = N.new(2, units(%w[px em], %w[s]))
    assert_equal %w[px em], number.numerator_units
    assert_equal %w[s], number.denominator_units
    assert_predicate number, :frozen?
    assert_equal 'invalid unit 42', assert_raises(Sass::ScriptError) { N.new(1, 42) }.message
    assert_equal 'invalid numerator_units [1]', assert_raises(Sass::ScriptError) { N.new(1, units([1])) }.message
    assert_equal 'invalid denominator_units "s"',
                 assert_raises(Sass::ScriptError) { N.new(1, { denominator_units: 's' }) }.message
  end

  def test_compatible_units_cancel_out_when_made
    assert_equal N.new(1), N.new(96, units(['px'], ['in']))
    number = N.new(1, units(%w[px ms], %w[in]))
    assert_equal ['ms'], number.numerator_units
    assert_empty number.denominator_units
    assert_in_delta 1 / 96.0, number.value, 1e-15
    number = N.new(3, units(%w[px px], %w[px]))
    assert_equal ['px'], number.numerator_units
    assert_equal 3, number.value
    number = N.new(1, units(%w[em], %w[px]))
    assert_equal [%w[em], %w[px]], [number.numerator_units, number.denominator_units]
  end

  def test_integers
    assert N.new(3).integer?
    assert N.new(3.000000000001).integer?
    refute N.new(3.0001).integer?
    assert_equal 3, N.new(2.99999999999999).to_i
    assert_nil N.new(2.5).to_i
    assert_equal 3, N.new(3).assert_integer
    error = assert_raises(Sass::ScriptError) { N.new(2.5).assert_integer('n') }
    assert_equal '$n: 2.5 is not an integer', error.message
    # Sass's integers are the compiler's: 64-bit.
    assert N.new(2.0**62).integer?
    refute N.new(1e19).integer?
    refute N.new(123_456.00000000001).integer?
  end

  def test_assert_between
    assert_equal 5, N.new(5).assert_between(0, 10)
    assert_equal 0, N.new(-0.000000000001).assert_between(0, 10)
    assert_equal 10, N.new(10.000000000001).assert_between(0, 10)
    error = assert_raises(Sass::ScriptError) { N.new(11, 'px').assert_between(0, 10, 'width') }
    assert_equal '$width: 11 must be between 0 and 10.', error.message
  end

  def test_unit_assertions_and_predicates
    px = N.new(1, 'px')
    assert px.unit?('px')
    refute px.unit?('em')
    refute N.new(1, units(['px'], ['s'])).unit?('px')
    assert px.units?
    assert N.new(1).unitless?
    assert_same px, px.assert_unit('px')
    error = assert_raises(Sass::ScriptError) { px.assert_unit('em', 'size') }
    assert_equal '$size: Expected 1px to have unit "em"', error.message
    error = assert_raises(Sass::ScriptError) { px.assert_unitless('n') }
    assert_equal '$n: Expected 1px to have no units', error.message
    assert px.compatible_with_unit?('in')
    refute px.compatible_with_unit?('em')
    refute N.new(1).compatible_with_unit?('px')
    refute N.new(1, units(['px'], ['s'])).compatible_with_unit?('px')
  end

  def test_convert_and_coerce
    assert_equal N.new(1, 'in'), N.new(96, 'px').convert(['in'], [])
    assert_in_delta 1, N.new(96, 'px').convert_value(['in'], []), 1e-15
    assert_in_delta 1000, N.new(1, units(['px'], ['s'])).convert_value(['px'], ['ms']) * 1000 * 1000, 1e-6
    assert_in_delta 0.5, N.new(180, 'deg').convert_value(['turn'], []), 1e-15
    assert_in_delta Math::PI, N.new(180, 'deg').convert_value(['rad'], []), 1e-15
    assert_in_delta 1, N.new(96, 'dpi').convert_value(['dppx'], []), 1e-15
    assert_raises(Sass::ScriptError) { N.new(1).convert(['px'], []) }
    error = assert_raises(Sass::ScriptError) { N.new(1, 'px').convert(['s'], [], 'time') }
    assert_equal '$time: Expected 1px to have a time unit (s, ms)', error.message
    error = assert_raises(Sass::ScriptError) { N.new(1, 'px').convert(['deg'], []) }
    assert_equal 'Expected 1px to have an angle unit (deg, grad, rad, turn)', error.message
    error = assert_raises(Sass::ScriptError) { N.new(1, 'px').convert(%w[em], %w[s]) }
    assert_equal 'Expected 1px to have units em/s', error.message
    error = assert_raises(Sass::ScriptError) { N.new(1, 'px').convert([], %w[s]) }
    assert_equal 'Expected 1px to have unit s^-1', error.message
    error = assert_raises(Sass::ScriptError) { N.new(1, 'px').convert([], []) }
    assert_equal 'Expected 1px to have no units', error.message
    assert_equal 2, N.new(2, 'px').coerce_value_to_unit('px')
    assert_in_delta 1, N.new(96, 'px').coerce_value_to_unit('in'), 1e-15
    assert_equal N.new(1, 'px'), N.new(1).coerce(['px'], [])
    assert_equal N.new(5), N.new(5, 'px').coerce([], [])
    assert_equal N.new(1, 'in'), N.new(96, 'px').coerce_to_match(N.new(3, 'in'))
    assert_in_delta 1, N.new(96, 'px').coerce_value_to_match(N.new(3, 'in')), 1e-15
    assert_equal N.new(1, 'in'), N.new(96, 'px').convert_to_match(N.new(3, 'in'))
    assert_in_delta 1, N.new(96, 'px').convert_value_to_match(N.new(3, 'in')), 1e-15
    error = assert_raises(Sass::ScriptError) { N.new(1, 'px').convert_to_match(N.new(1, 's'), 'a', 'b') }
    assert_equal '$a: 1px and $b: 1s have incompatible units', error.message
    error = assert_raises(Sass::ScriptError) { N.new(1, 'px').convert_to_match(N.new(1)) }
    assert_equal "1px and 1 have incompatible units (one has units and the other doesn't)", error.message
  end

  def test_equality_and_hash
    assert_equal N.new(1, 'in'), N.new(96, 'px')
    assert_equal N.new(1, 'in').hash, N.new(96, 'px').hash
    assert_equal N.new(1), N.new(1.000000000001)
    assert_equal N.new(1).hash, N.new(1.000000000001).hash
    refute_equal N.new(1), N.new(1.0001)
    refute_equal N.new(1), N.new(1, 'px')
    refute_equal N.new(1, 'px'), N.new(1, 'em')
    assert_equal N.new(1, units(%w[px em])), N.new(1, units(%w[em px]))
    assert N.new(1, 's').eql?(N.new(1000, 'ms'))
    hash = { N.new(1, 'in') => :found }
    assert_equal :found, hash[N.new(96, 'px')]
  end

  def test_as_a_value
    number = N.new(2)
    assert_equal [number], number.to_a
    assert_same number, number.assert_number
    assert_raises(Sass::ScriptError) { number.assert_string }
    # (More in to_s_test.rb, against the compiler.)
    assert_equal '0.3333333333333333', N.new(1 / 3.0).inspect
    assert_equal '0.3333333333', N.new(1 / 3.0).to_s
    assert_equal 'calc(2px * 1em / 1s)', N.new(2, units(%w[px em], %w[s])).inspect
  end

  def test_round_trip_through_the_compiler
    received = []
    functions = { 'echo($n)' => lambda { |args|
      received << args.first
      args.first
    } }
    %w[1 -2.5px 3em 10% 1px*2em/3s 1e20 0.0000001 100000000000.5].each do |literal|
      source = literal.include?('*') ? 'a { b: echo(math.div(1px * 2em, 3s)) }' : "a { b: echo(#{literal}) }"
      source = "@use 'sass:math'; #{source}"
      plain = Sass.compile_string(source.sub(/echo\((.*)\) \}/, '\1 }'), logger: Sass::Logger.silent).css
      assert_equal plain, Sass.compile_string(source, functions:, logger: Sass::Logger.silent).css, literal
    end
    assert_equal %w[px em], received[4].numerator_units
    assert_equal ['s'], received[4].denominator_units
  end
end
