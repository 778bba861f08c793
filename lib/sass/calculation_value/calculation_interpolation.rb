# frozen_string_literal: true

module Sass
  module CalculationValue
    # Interpolated text inside a calculation (the legacy +#{...}+ form), kept
    # as text; Sass treats it like an unquoted string in parentheses.
    # @see https://sass-lang.com/documentation/js-api/classes/calculationinterpolation/
    class CalculationInterpolation
      include CalculationValue

      # @return [::String]
      attr_reader :value

      # @param value [::String]
      # @raise [ScriptError] if +value+ is not a String
      def initialize(value)
        raise Sass::ScriptError, "invalid value #{value.inspect}" unless value.respond_to?(:to_str)

        @value = value.to_str.dup.freeze
        freeze
      end

      # @return [::Boolean]
      def ==(other)
        other.is_a?(CalculationInterpolation) && other.value == value
      end
      alias eql? ==

      # @return [Integer]
      def hash
        value.hash
      end
    end
  end
end
