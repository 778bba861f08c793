# frozen_string_literal: true

require_relative 'number/units'

module Sass
  module Value
    # A Sass number: a double with numerator and denominator units. Compatible
    # units (+px+ and +in+, +s+ and +ms+, ...) convert into each other; a
    # numerator and a compatible denominator cancel out when the number is
    # made. Two numbers are equal when their units are compatible and their
    # values are within 1e-11 of each other once converted.
    # @see https://sass-lang.com/documentation/js-api/classes/sassnumber/
    class Number
      include Value
      include CalculationValue

      # @return [Numeric]
      attr_reader :value

      # @return [Array<::String>]
      attr_reader :numerator_units

      # @return [Array<::String>]
      attr_reader :denominator_units

      # @param value [Numeric] kept as given (an Integer stays an Integer)
      #   unless units cancel out
      # @param unit [::String, Hash, nil] a single numerator unit, or
      #   +{ numerator_units: [...], denominator_units: [...] }+
      # @raise [ScriptError] for a value that is not a real number, or units
      #   that are not a String or Arrays of Strings
      def initialize(value, unit = nil)
        numerators, denominators = Units.parse(unit)
        unless numerators.empty? || denominators.empty?
          value, numerators, denominators = Units.simplify(value, numerators, denominators)
        end
        @value = value
        @numerator_units = numerators.freeze
        @denominator_units = denominators.freeze
        freeze
      end

      # @return [::Boolean] whether the number has no units
      def unitless?
        numerator_units.empty? && denominator_units.empty?
      end

      # @return [::Boolean] whether the number has units
      def units?
        !unitless?
      end

      # @param unit [::String]
      # @return [::Boolean] whether +unit+ is the number's only unit
      def unit?(unit)
        denominator_units.empty? && numerator_units == [unit]
      end

      # @param unit [::String]
      # @return [::Boolean] whether the number converts to +unit+
      def compatible_with_unit?(unit)
        Units.compatible?(numerator_units, [unit]) && denominator_units.empty?
      end

      # @return [::Boolean] whether the value is an integer (within 1e-11)
      def integer?
        FuzzyMath.integer?(value)
      end

      # @return [Integer, nil] the integer value, if it is one
      def to_i
        FuzzyMath.to_i(value)
      end

      # @return [Number] self
      def assert_number(_name = nil)
        self
      end

      # @return [Integer] the integer value
      # @raise [ScriptError] unless the value is an integer (within 1e-11)
      def assert_integer(name = nil)
        to_i || raise(Sass::ScriptError.new("#{inspect} is not an integer", name))
      end

      # @param min [Numeric]
      # @param max [Numeric]
      # @return [Numeric] the value, or +min+ or +max+ if it is within 1e-11 of
      #   one of them
      # @raise [ScriptError] if the value is outside the range
      def assert_between(min, max, name = nil)
        result = FuzzyMath.between(value, min, max)
        return result unless result.nil?

        raise Sass::ScriptError.new("#{value} must be between #{min} and #{max}.", name)
      end

      # @return [Number] self
      # @raise [ScriptError] if the number has units
      def assert_unitless(name = nil)
        return self if unitless?

        raise Sass::ScriptError.new("Expected #{inspect} to have no units", name)
      end

      # @return [Number] self
      # @raise [ScriptError] unless +unit+ is the number's only unit
      def assert_unit(unit, name = nil)
        return self if unit?(unit)

        raise Sass::ScriptError.new("Expected #{inspect} to have unit #{unit.inspect}", name)
      end

      # The same quantity in other (compatible) units.
      # @param new_numerator_units [Array<::String>]
      # @param new_denominator_units [Array<::String>]
      # @return [Number]
      # @raise [ScriptError] if the units are not compatible
      def convert(new_numerator_units, new_denominator_units, name = nil)
        Number.new(convert_value(new_numerator_units, new_denominator_units, name),
                   { numerator_units: Array(new_numerator_units), denominator_units: Array(new_denominator_units) })
      end

      # @return [Numeric] the value of {#convert}
      def convert_value(new_numerator_units, new_denominator_units, name = nil)
        converted([Array(new_numerator_units), Array(new_denominator_units)], allow_unitless: false, name:)
      end

      # {#convert} to +other+'s units.
      # @param other [Number]
      # @return [Number]
      def convert_to_match(other, name = nil, other_name = nil)
        Number.new(convert_value_to_match(other, name, other_name),
                   { numerator_units: other.numerator_units, denominator_units: other.denominator_units })
      end

      # @return [Numeric] the value of {#convert_to_match}
      def convert_value_to_match(other, name = nil, other_name = nil)
        converted([other.numerator_units, other.denominator_units], allow_unitless: false, name:, other:, other_name:)
      end

      # Like {#convert}, except that a unitless number takes the new units as
      # they are, and units convert to no units at all.
      # @return [Number]
      def coerce(new_numerator_units, new_denominator_units, name = nil)
        Number.new(coerce_value(new_numerator_units, new_denominator_units, name),
                   { numerator_units: Array(new_numerator_units), denominator_units: Array(new_denominator_units) })
      end

      # @return [Numeric] the value of {#coerce}
      def coerce_value(new_numerator_units, new_denominator_units, name = nil)
        converted([Array(new_numerator_units), Array(new_denominator_units)], allow_unitless: true, name:)
      end

      # @param unit [::String]
      # @return [Numeric] the value of {#coerce} to the single unit +unit+
      def coerce_value_to_unit(unit, name = nil)
        coerce_value([unit], [], name)
      end

      # {#coerce} to +other+'s units.
      # @param other [Number]
      # @return [Number]
      def coerce_to_match(other, name = nil, other_name = nil)
        Number.new(coerce_value_to_match(other, name, other_name),
                   { numerator_units: other.numerator_units, denominator_units: other.denominator_units })
      end

      # @return [Numeric] the value of {#coerce_to_match}
      def coerce_value_to_match(other, name = nil, other_name = nil)
        converted([other.numerator_units, other.denominator_units], allow_unitless: true, name:, other:, other_name:)
      end

      # @return [::Boolean] whether both have compatible units and values
      #   within 1e-11 once converted
      def ==(other)
        return false unless other.is_a?(Sass::Value::Number)
        return FuzzyMath.equals(value, other.value) if unitless? && other.unitless?
        return false unless Units.compatible?(numerator_units, other.numerator_units) &&
                            Units.compatible?(denominator_units, other.denominator_units)

        FuzzyMath.equals(value, other.convert_value(numerator_units, denominator_units))
      end

      # @return [Integer] the same for numbers that are {#==}: the value in
      # canonical units (px, deg, ms, Hz, dppx), rounded as equality rounds it
      def hash
        canonical, numerators, denominators = Units.canonical(value, numerator_units, denominator_units)
        [FuzzyMath.hash_number(canonical), numerators.sort, denominators.sort].hash
      end

      private

      # @param units [Array(Array<::String>, Array<::String>)] the numerator
      #   and denominator units to convert to
      def converted(units, allow_unitless:, name: nil, other: nil, other_name: nil)
        numerators, denominators = units
        return value if numerators == numerator_units && denominators == denominator_units
        return value if allow_unitless && (unitless? || (numerators.empty? && denominators.empty?))

        unless Units.compatible?(numerator_units, numerators) && Units.compatible?(denominator_units, denominators)
          raise Sass::ScriptError.new(incompatible_message(numerators, denominators, other, other_name), name)
        end

        Units.convert(Units.convert(value, numerator_units, numerators, :numerator),
                      denominator_units, denominators, :denominator)
      end

      # The message Sass gives when units do not convert: naming the other
      # number if there is one, otherwise the units expected (or their kind).
      def incompatible_message(numerators, denominators, other, other_name)
        target_unitless = numerators.empty? && denominators.empty?
        unless other.nil?
          message = +"#{inspect} and"
          message << " $#{other_name}:" unless other_name.nil?
          message << " #{other.inspect} have incompatible units"
          message << " (one has units and the other doesn't)" if unitless? || target_unitless
          return message
        end
        return "Expected #{inspect} to have no units" if target_unitless

        type = Units.type(numerators.first) if numerators.length == 1 && denominators.empty?
        if type
          article = type.start_with?('a', 'e', 'i', 'o', 'u') ? 'an' : 'a'
          return "Expected #{inspect} to have #{article} #{type} unit (#{Units::UNITS_BY_TYPE[type].join(', ')})"
        end

        plural = numerators.length + denominators.length > 1 ? 's' : ''
        "Expected #{inspect} to have unit#{plural} #{Units.describe(numerators, denominators)}"
      end
    end
  end
end
