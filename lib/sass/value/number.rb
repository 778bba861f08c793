# frozen_string_literal: true

module Sass
  module Value
    # A Sass number: a double with numerator and denominator units.
    # @see https://sass-lang.com/documentation/js-api/classes/sassnumber/
    class Number
      include Value

      # @return [Numeric]
      attr_reader :value

      # @return [Array<::String>]
      attr_reader :numerator_units

      # @return [Array<::String>]
      attr_reader :denominator_units

      # @param value [Numeric]
      # @param unit [::String, Hash, nil] a single numerator unit, or
      #   +{ numerator_units: [...], denominator_units: [...] }+
      def initialize(value, unit = nil)
        raise ArgumentError, "a Sass number needs a Numeric, got #{value.inspect}" unless value.is_a?(Numeric)

        numerators, denominators = case unit
                                   when nil then [[], []]
                                   when ::String then [[unit], []]
                                   when Hash
                                     [Array(unit.fetch(:numerator_units, [])),
                                      Array(unit.fetch(:denominator_units, []))]
                                   else
                                     raise ArgumentError, "unit must be a String or a Hash, got #{unit.inspect}"
                                   end
        @value = value.to_f
        @numerator_units = numerators.map { |u| u.to_str.dup.freeze }.freeze
        @denominator_units = denominators.map { |u| u.to_str.dup.freeze }.freeze
      end

      # @return [::Boolean]
      def unitless?
        numerator_units.empty? && denominator_units.empty?
      end

      # @return [::Boolean]
      def units?
        !unitless?
      end

      # @return [::Boolean] whether the value is an integer (within 1e-11)
      def integer?
        FuzzyMath.integer?(value)
      end

      # @return [Integer, nil] the integer value, or nil
      def to_i
        FuzzyMath.to_i(value)
      end

      # @return [Number] self
      def assert_number(_name = nil)
        self
      end

      # @return [Integer]
      # @raise [ScriptError] unless the value is an integer
      def assert_integer(name = nil)
        to_i || raise(Sass::ScriptError.new("#{self} is not an int.", name))
      end

      # @return [Number] self
      # @raise [ScriptError] if the number has units
      def assert_unitless(name = nil)
        return self if unitless?

        raise Sass::ScriptError.new("Expected #{self} to have no units.", name)
      end

      # @return [::Boolean]
      def ==(other)
        other.is_a?(Sass::Value::Number) &&
          other.numerator_units.sort == numerator_units.sort &&
          other.denominator_units.sort == denominator_units.sort &&
          FuzzyMath.equals(other.value, value)
      end

      # @return [Integer]
      def hash
        @hash ||= [FuzzyMath.hash_number(value), numerator_units.sort, denominator_units.sort].hash
      end

      # @return [::String]
      def inspect
        number = value.finite? && value == value.round ? value.round.to_s : value.to_s
        units = numerator_units.join('*')
        units += "/#{denominator_units.join('*')}" unless denominator_units.empty?
        "#{number}#{units}"
      end
    end
  end
end
