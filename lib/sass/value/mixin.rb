# frozen_string_literal: true

module Sass
  module Value
    # A first-class Sass mixin, received from Sass. It can be returned to Sass
    # within the compilation it came from; it has no public constructor.
    # @see https://sass-lang.com/documentation/js-api/classes/sassmixin/
    class Mixin
      include Value
      include CompilerReference

      class << self
        private :new
      end

      # @return [Mixin] self
      def assert_mixin(_name = nil)
        self
      end
    end
  end
end
