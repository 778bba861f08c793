# frozen_string_literal: true

module Sass
  module Value
    # What functions, mixins and modules received from Sass have in common:
    # the compiler knows them by an id within one compilation, so they are
    # equal when both match. (The host sets +@id+ and +@compilation+.)
    module CompilerReference
      # @return [::Boolean] whether +other+ is the same compiler object
      def ==(other)
        other.instance_of?(self.class) && other.compiler_identity == compiler_identity
      end

      # @return [Integer]
      def hash
        compiler_identity.hash
      end

      protected

      def compiler_identity
        [@compilation, @id]
      end
    end

    private_constant :CompilerReference
  end
end
