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
      # @raise [ScriptError] for keywords that are not a Hash of values (and
      #   as {List#initialize})
      def initialize(contents = [], keywords = {}, separator = ',')
        super(contents, separator:)
        raise Sass::ScriptError, "invalid keywords #{keywords.inspect}" unless keywords.respond_to?(:each_pair)

        @keywords = keywords.to_h.to_h do |name, value|
          raise Sass::ScriptError, "invalid keyword value #{value.inspect}" unless value.is_a?(Value)

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
