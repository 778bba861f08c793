# frozen_string_literal: true

module Sass
  module Value
    # A Sass calculation, such as +calc(1px + 10%)+. Sass simplifies the
    # calculations a function returns; the host keeps them as built.
    # @see https://sass-lang.com/documentation/js-api/classes/sasscalculation/
    class Calculation
      include Value
      include CalculationValue

      # @return [::String] the calculation's name: +calc+, +min+, +clamp+, ...
      attr_reader :name

      # @return [Array<CalculationValue>]
      attr_reader :arguments

      class << self
        private :new

        # @param argument [CalculationValue]
        # @return [Calculation] +calc(argument)+
        def calc(argument)
          new('calc', [CalculationValue.check(argument)])
        end

        # @param arguments [Array<CalculationValue>]
        # @return [Calculation] +min(arguments...)+
        def min(arguments)
          new('min', Calculation.check_all(arguments))
        end

        # @param arguments [Array<CalculationValue>]
        # @return [Calculation] +max(arguments...)+
        def max(arguments)
          new('max', Calculation.check_all(arguments))
        end

        # @param min [CalculationValue]
        # @param value [CalculationValue, nil]
        # @param max [CalculationValue, nil]
        # @return [Calculation] +clamp(min, value, max)+
        # @raise [ScriptError] where an argument is left out, unless the
        #   arguments before it are unparsed text (an unquoted string or an
        #   interpolation) that may stand for several; or for +max+ without
        #   +value+
        def clamp(min, value = nil, max = nil)
          if (value.nil? && !unparsed?(min)) || (max.nil? && [min, value].none? { |v| unparsed?(v) })
            raise Sass::ScriptError, 'Argument must be an unquoted SassString.'
          end
          raise Sass::ScriptError, 'Value must be set when max is set.' if value.nil? && !max.nil?

          new('clamp', Calculation.check_all([min, value, max].compact))
        end

        # @return [Array<CalculationValue>] +arguments+, checked and frozen
        # @!visibility private
        def check_all(arguments)
          raise Sass::ScriptError, "invalid arguments #{arguments.inspect}" unless arguments.respond_to?(:to_ary)

          arguments.to_ary.map { |argument| CalculationValue.check(argument) }.freeze
        end

        private

        def unparsed?(value)
          (value.is_a?(Value::String) && !value.quoted?) || value.is_a?(CalculationValue::CalculationInterpolation)
        end
      end

      # @param name [::String]
      # @param arguments [Array<CalculationValue>]
      def initialize(name, arguments)
        @name = name.dup.freeze
        @arguments = arguments
        freeze
      end

      # @return [Calculation] self
      def assert_calculation(_name = nil)
        self
      end

      # @return [::Boolean] whether both have the same name and equal arguments
      def ==(other)
        other.is_a?(Sass::Value::Calculation) && other.name == name && other.arguments == arguments
      end

      # @return [Integer]
      def hash
        [name, arguments].hash
      end
    end
  end
end
