# frozen_string_literal: true

module Sass
  module Value
    # A first-class Sass module (Embedded Sass Protocol 3.3), received from
    # Sass. Like a {Mixin}, it can be returned to Sass within the compilation
    # it came from and has no public constructor.
    # @see https://sass-lang.com/documentation/js-api/classes/sassmodule/
    class Module
      include Value
      include CompilerReference

      class << self
        private :new
      end

      # @return [Module] self
      def assert_module(_name = nil)
        self
      end

      # @raise [ScriptError] always: a module is not a CSS value
      def to_s
        raise Sass::ScriptError, "#{inspect} isn't a valid CSS value."
      end

      # @return [::String] as Sass shows a module it knows no name for
      def inspect
        'get-module(<anonymous>)'
      end
    end
  end
end
