# frozen_string_literal: true

module Sass
  module Value
    # A first-class Sass module (Embedded Sass Protocol 3.3), received from
    # Sass. Like a {Mixin}, it can be returned to Sass within the compilation
    # it came from and has no public constructor.
    class CompilerModule
      include Value

      class << self
        private :new
      end

      # @return [::Boolean]
      def ==(other)
        other.is_a?(Sass::Value::CompilerModule) && other.compiler_identity == compiler_identity
      end

      # @return [Integer]
      def hash
        compiler_identity.hash
      end

      # @return [::String]
      def inspect
        "module(#{@id})"
      end

      protected

      def compiler_identity
        [@compilation, @id]
      end
    end
  end
end
