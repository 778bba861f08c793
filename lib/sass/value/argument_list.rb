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
      # @raise [ScriptError] as {List#initialize}; the keywords' values are
      #   not checked here (as in the established gem)
      def initialize(contents = [], keywords = {}, separator = ',')
        super(contents, separator:)
        @keywords = keywords.to_h.transform_keys(&:to_sym).freeze
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
