# frozen_string_literal: true

module Sass
  module Value
    # A first-class Sass function: either defined in Ruby (with a signature and
    # a callback, to return to Sass), or received from Sass (usable only within
    # the compilation it came from).
    # @see https://sass-lang.com/documentation/js-api/classes/sassfunction/
    class Function
      include Value
      include CompilerReference

      # @return [::String, nil] the signature of a function defined in Ruby
      attr_reader :signature

      # @return [#call, nil] the body of a function defined in Ruby
      attr_reader :callback

      # @overload initialize(signature, callback)
      #   @param signature [::String] a Sass signature, like +'double($n)'+
      #   @param callback [#call] called with the arguments (an Array of
      #     values), returns a value
      # @overload initialize(signature, &callback)
      #   @param signature [::String]
      #   @yieldparam arguments [Array<Value>]
      #   @yieldreturn [Value]
      # @raise [ArgumentError] without a callback, or if +signature+ is not a
      #   Sass function signature (as for the +functions:+ option)
      def initialize(signature, callback = nil, &block)
        raise ArgumentError, 'give a callback or a block, not both' if callback && block

        callback ||= block
        raise ArgumentError, 'a Sass::Value::Function needs a callback' if callback.nil?

        @signature = Sass::Compiler.const_get(:Session)::FunctionRegistry.signature(signature).freeze
        @callback = callback
        @id = nil
        @compilation = nil
      end

      # @return [Function] self
      def assert_function(_name = nil)
        self
      end

      # Functions are equal when they are the same function: the same Ruby
      # callback, or the same function of the same compilation.
      # @return [::Boolean]
      def ==(other)
        return super if callback.nil?

        other.is_a?(Sass::Value::Function) && other.callback.equal?(callback) && other.signature == signature
      end

      # @return [Integer]
      def hash
        callback.nil? ? super : [callback, signature].hash
      end
    end
  end
end
