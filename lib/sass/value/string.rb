# frozen_string_literal: true

module Sass
  module Value
    # A Sass string, quoted or not.
    # @see https://sass-lang.com/documentation/js-api/classes/sassstring/
    class String
      include Value
      include CalculationValue

      # @return [::String] the string's contents, without quotes
      attr_reader :text

      # @param text [::String]
      # @param quoted [Boolean] whether the string is quoted
      # A +text+ that is not a String is kept as it is, as the established gem
      # keeps it: it fails where it is used.
      def initialize(text = '', quoted: true)
        @text = text.respond_to?(:to_str) ? text.to_str.encode(Encoding::UTF_8).freeze : text
        @quoted = quoted ? true : false
      end

      # @return [Boolean] whether the string is quoted
      def quoted?
        @quoted
      end

      # @return [::String] the text, so that a Sass string can stand for a
      #   Ruby one
      def to_str
        text
      end

      # @param other [::String, String] text to append
      # @return [String] a string with +other+'s text after this one's, quoted
      #   as this one is
      # @raise [TypeError] if +other+ is not a string
      def +(other)
        raise TypeError, "no implicit conversion of #{other.class} into String" unless other.respond_to?(:to_str)

        Sass::Value::String.new(text + other.to_str, quoted: quoted?)
      end

      # @return [String] self
      def assert_string(_name = nil)
        self
      end

      # @return [String] self, if unquoted
      # @raise [ScriptError] for a quoted string, which a calculation cannot
      #   hold
      def assert_calculation_value(name = nil)
        raise Sass::ScriptError.new("Expected #{self} to be an unquoted string.", name) if quoted?

        self
      end

      # Converts a Sass index into a Ruby index into {#text}: Sass counts
      # Unicode code points from 1 (negative from the end), as Ruby counts
      # characters of a UTF-8 string from 0.
      # @param sass_index [Number]
      # @param name [::String, nil]
      # @return [Integer]
      def sass_index_to_string_index(sass_index, name = nil)
        index = sass_index.assert_number(name).assert_integer(name)
        raise Sass::ScriptError.new('String index may not be 0', name) if index.zero?

        length = text.length
        if index.abs > length
          raise Sass::ScriptError.new("Invalid index #{sass_index.inspect} for a string with #{length} characters",
                                      name)
        end

        index.negative? ? length + index : index - 1
      end

      # Strings are equal if their texts are, quoted or not.
      # @return [Boolean]
      def ==(other)
        other.is_a?(Sass::Value::String) && other.text == text
      end

      # @return [Integer]
      def hash
        @hash ||= text.hash
      end

      # The string as Sass writes it: a quoted string in quotes, with the
      # escapes Sass uses, so that it reads back as the same string.
      # @return [::String]
      def to_s
        quoted? ? Serializer.quoted_string(text) : Serializer.unquoted_string(text)
      end
      alias inspect to_s
    end
  end
end
