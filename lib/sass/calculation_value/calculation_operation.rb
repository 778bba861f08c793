# frozen_string_literal: true

module Sass
  module CalculationValue
    # A binary operation inside a calculation, such as +1px + 2em+.
    # @see https://sass-lang.com/documentation/js-api/classes/calculationoperation/
    class CalculationOperation
      include CalculationValue

      # The operators a calculation can use.
      OPERATORS = %w[+ - * /].freeze
      private_constant :OPERATORS

      # @return [::String] +'+'+, +'-'+, +'*'+ or +'/'+
      attr_reader :operator

      # @return [CalculationValue]
      attr_reader :left

      # @return [CalculationValue]
      attr_reader :right

      # @param operator [::String]
      # @param left [CalculationValue]
      # @param right [CalculationValue]
      # @raise [ScriptError] for an unknown operator, or an operand that cannot
      #   be part of a calculation
      def initialize(operator, left, right)
        raise Sass::ScriptError, "Invalid operator: #{operator}" unless OPERATORS.include?(operator)

        @operator = operator.dup.freeze
        @left = CalculationValue.check(left, 'left')
        @right = CalculationValue.check(right, 'right')
        freeze
      end

      # @return [::Boolean]
      def ==(other)
        other.is_a?(CalculationOperation) && other.operator == operator && other.left == left &&
          other.right == right
      end
      alias eql? ==

      # @return [Integer]
      def hash
        [operator, left, right].hash
      end
    end
  end
end
