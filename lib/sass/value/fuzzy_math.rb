# frozen_string_literal: true

module Sass
  module Value
    # Sass's fuzzy number comparisons: two numbers within 1e-11 of each other
    # are equal, and a number within 1e-11 of an integer is that integer.
    # Numbers may be any Ruby Numeric (values keep the type they were given).
    module FuzzyMath
      # The digits of precision Sass compares numbers with.
      PRECISION = 10
      # Numbers closer than this are equal.
      EPSILON = 10.0**(-PRECISION - 1)
      # The inverse of {EPSILON}: hashes round +value * INVERSE_EPSILON+.
      INVERSE_EPSILON = 10.0**(PRECISION + 1)

      # The integers Sass's compiler can hold (a 64-bit int): it rounds a
      # double to an integer within this range, so a larger double is never
      # "an integer" to Sass.
      INT_MIN = -(2**63)
      INT_MAX = (2**63) - 1

      module_function

      # Equal, or both finite, at most 1e-11 apart and equal when rounded to
      # the nearest 1e-11 (the same test as the compiler's).
      def equals(number1, number2)
        return true if number1 == number2
        return false unless number1.finite? && number2.finite?

        (number1 - number2).abs <= EPSILON &&
          (number1 * INVERSE_EPSILON).round == (number2 * INVERSE_EPSILON).round
      end

      def less_than(number1, number2)
        number1 < number2 && !equals(number1, number2)
      end

      def less_than_or_equals(number1, number2)
        number1 < number2 || equals(number1, number2)
      end

      def greater_than(number1, number2)
        number1 > number2 && !equals(number1, number2)
      end

      def greater_than_or_equals(number1, number2)
        number1 > number2 || equals(number1, number2)
      end

      def integer?(number)
        !to_i(number).nil?
      end

      # @return [Integer, nil] the integer +number+ fuzzily equals, nil if none
      def to_i(number)
        return number if number.is_a?(Integer)
        return nil unless number.finite?

        rounded = number.round.clamp(INT_MIN, INT_MAX)
        equals(number, rounded) ? rounded : nil
      end

      # @return [Numeric, nil] +number+, or +min+/+max+ if it fuzzily equals
      #   one of them; nil if outside the range
      def between(number, min, max)
        return min if equals(number, min)
        return max if equals(number, max)
        return number if number > min && number < max

        nil
      end

      # @return [Integer] a hash consistent with {.equals}
      def hash_number(number)
        return number.hash unless number.finite?

        (number * INVERSE_EPSILON).round.hash
      end
    end

    private_constant :FuzzyMath
  end
end
