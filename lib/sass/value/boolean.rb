# frozen_string_literal: true

module Sass
  module Value
    # The Sass booleans, {TRUE} and {FALSE}.
    # @see https://sass-lang.com/documentation/js-api/classes/sassboolean/
    class Boolean
      include Value

      # @return [::Boolean]
      attr_reader :value

      # @param value [::Boolean]
      def initialize(value)
        @value = value
      end

      # Sass's +true+.
      TRUE = new(true).freeze
      # Sass's +false+.
      FALSE = new(false).freeze

      class << self
        # @return [Boolean] {TRUE} or {FALSE}
        def new(value)
          value ? Boolean::TRUE : Boolean::FALSE
        end
      end

      # @return [::Boolean]
      def to_bool
        @value
      end

      # @return [Boolean] self
      def assert_boolean(_name = nil)
        self
      end

      # @return [Boolean] {FALSE} for {TRUE} and the other way round
      def !
        value ? Boolean::FALSE : Boolean::TRUE
      end

      # @return [::Boolean]
      def ==(other)
        other.is_a?(Sass::Value::Boolean) && other.value == value
      end

      # @return [Integer]
      def hash
        value.hash
      end
    end
  end
end
