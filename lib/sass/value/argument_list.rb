# frozen_string_literal: true

module Sass
  module Value
    # The rest arguments of a function (+$args...+): a list plus the keyword
    # arguments that were passed alongside. Reading {#keywords} tells Sass the
    # function used them, so it does not report them as unknown.
    # @see https://sass-lang.com/documentation/js-api/classes/sassargumentlist/
    class ArgumentList < List
      # @param contents [Array<Value>]
      # @param keywords [Hash{Symbol, ::String => Value}]
      # @param separator [::String, nil]
      def initialize(contents = [], keywords = {}, separator = ',')
        super(contents, separator:)
        unless keywords.respond_to?(:each_pair)
          raise ArgumentError, "keywords must be a Hash of names to Sass::Value, got #{keywords.inspect}"
        end

        @keywords = keywords.to_h.to_h do |name, value|
          raise ArgumentError, "keyword values must be Sass::Value, got #{value.inspect}" unless value.is_a?(Value)

          [name.to_sym, value]
        end.freeze
        @keywords_accessed = false
        @id = 0
        @compilation = nil
      end

      # @return [Hash{Symbol => Value}] the keyword arguments
      def keywords
        @keywords_accessed = true
        @keywords
      end
    end
  end
end
