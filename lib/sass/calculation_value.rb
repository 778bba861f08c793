# frozen_string_literal: true

module Sass
  # A value that can be part of a {Value::Calculation}: a {Value::Number}, an
  # unquoted {Value::String}, a {Value::Calculation}, a
  # {CalculationValue::CalculationOperation} or a
  # {CalculationValue::CalculationInterpolation}.
  # @see https://sass-lang.com/documentation/js-api/types/calculationvalue/
  module CalculationValue
    # @return [CalculationValue] self
    def assert_calculation_value(_name = nil)
      self
    end

    # @param value [Object]
    # @param name [::String, nil] the argument's name, for the error message
    # @return [CalculationValue] +value+, if it may be part of a calculation
    # @raise [ScriptError] for a quoted string or anything else
    def self.check(value, name = nil)
      return value.assert_calculation_value(name) if value.is_a?(Sass::Value) || value.is_a?(CalculationValue)

      raise Sass::ScriptError.new("#{value.inspect} is not a calculation value", name)
    end
  end
end

require_relative 'calculation_value/calculation_operation'
require_relative 'calculation_value/calculation_interpolation'
