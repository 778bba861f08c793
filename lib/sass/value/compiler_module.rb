# frozen_string_literal: true

module Sass
  module Value
    # A first-class Sass module (Embedded Sass Protocol 3.3), received from
    # Sass. Like a {Mixin}, it can be returned to Sass within the compilation
    # it came from and has no public constructor.
    class CompilerModule
      include Value
      include CompilerReference

      class << self
        private :new
      end

      # @return [::String]
      def inspect
        "module(#{@id})"
      end
    end
  end
end
