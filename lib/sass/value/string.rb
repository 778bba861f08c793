# frozen_string_literal: true

module Sass
  module Value
    # A Sass string, quoted or not.
    # @see https://sass-lang.com/documentation/js-api/classes/sassstring/
    class String
      include Value

      # @return [::String] the string's contents, without quotes
      attr_reader :text

      # @param text [::String]
      # @param quoted [Boolean] whether the string is quoted
      def initialize(text = '', quoted: true)
        unless text.respond_to?(:to_str)
          raise ArgumentError, "Sass::Value::String.new needs a String, got #{text.inspect}"
        end

        @text = text.to_str.encode(Encoding::UTF_8).freeze
        @quoted = quoted ? true : false
      end

      # @return [Boolean] whether the string is quoted
      def quoted?
        @quoted
      end

      # @return [String] self
      def assert_string(_name = nil)
        self
      end

      # Converts a Sass index into a Ruby index into {#text}: Sass counts
      # Unicode code points from 1 (negative from the end), as Ruby counts
      # characters of a UTF-8 string from 0.
      # @param sass_index [Number]
      # @param name [::String, nil]
      # @return [Integer]
      def sass_index_to_string_index(sass_index, name = nil)
        index = sass_index.assert_number(name).assert_unitless(name).assert_integer(name)
        raise Sass::ScriptError.new('String index may not be 0.', name) if index.zero?

        length = text.length
        if index.abs > length
          raise Sass::ScriptError.new("Invalid index #{sass_index} for a string with #{length} characters.", name)
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

      # @return [::String]
      def inspect
        quoted? ? Sass::Value::String.quote(text) : text
      end

      # @return [::String] +text+ in double quotes, escaped as Sass would
      def self.quote(text)
        escaped = text.gsub(/["\\]|[\u0000-\u001f\u007f]/) do |char|
          %w[" \\].include?(char) ? "\\#{char}" : "\\#{char.ord.to_s(16)} "
        end
        "\"#{escaped}\""
      end
    end
  end
end
