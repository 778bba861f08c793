# frozen_string_literal: true

module Sass
  module Value
    # Sass's +null+, the single instance {NULL}.
    # @see https://sass-lang.com/documentation/js-api/variables/sassnull/
    class Null
      include Value

      def initialize
        @value = nil
      end

      # Sass's +null+.
      NULL = new.freeze

      class << self
        private :new
      end

      # @return [nil]
      def value
        nil
      end

      # @return [false]
      def to_bool
        false
      end

      # @return [nil]
      def to_nil
        nil
      end

      # @return [Boolean]
      def !
        Boolean::TRUE
      end

      # @return [::Boolean]
      def ==(other)
        other.is_a?(Sass::Value::Null)
      end

      # @return [Integer]
      def hash
        Null.hash
      end
    end
  end
end
