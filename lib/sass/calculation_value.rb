# frozen_string_literal: true

module Sass
  # A value that can be part of a {Value::Calculation}: a {Value::Number}, an
  # unquoted {Value::String}, a {Value::Calculation}, a
  # {CalculationValue::CalculationOperation} or a
  # {CalculationValue::CalculationInterpolation}.
  # @see https://sass-lang.com/documentation/js-api/types/calculationvalue/
  module CalculationValue
    # @return [CalculationValue] self, if it may be part of a calculation
    # @raise [ScriptError] for a quoted string or anything else
    def self.check(value, name = nil)
      case value
      when Value::Number, Value::Calculation, CalculationOperation, CalculationInterpolation
        value
      when Value::String
        raise Sass::ScriptError.new("Expected #{value} to be unquoted.", name) if value.quoted?

        value
      else
        raise Sass::ScriptError.new("#{value.inspect} is not a calculation value.", name)
      end
    end
  end
end

require_relative 'calculation_value/calculation_operation'
require_relative 'calculation_value/calculation_interpolation'
