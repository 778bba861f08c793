# frozen_string_literal: true

module Sass
  module Value
    # A Sass map. As a list it is a comma-separated list of two-element
    # space-separated key/value lists.
    # @see https://sass-lang.com/documentation/js-api/classes/sassmap/
    class Map
      include Value

      # @return [Hash{Value => Value}]
      attr_reader :contents

      # @param contents [Hash{Value => Value}]
      # As in the established gem, the entries are not checked here: keys or
      # values that are not values fail where the map is used.
      def initialize(contents = {})
        @contents = contents.respond_to?(:to_h) ? contents.to_h.dup.freeze : contents
      end

      # @return [::String] +','+ (or nil when empty)
      def separator
        contents.empty? ? nil : ','
      end

      # @return [Array<List>] the entries as key/value lists
      def to_a
        contents.map { |key, value| Sass::Value::List.new([key, value], separator: ' ') }
      end

      # @return [Hash{Value => Value}] the contents
      def to_h
        contents
      end

      # @return [Map] self
      def to_map
        self
      end

      # @return [Map] self
      def assert_map(_name = nil)
        self
      end

      # With a number: the entry at that 0-based index (as {Value#at}).
      # Otherwise: the value for that key.
      # @return [Value, nil]
      def at(index)
        index.is_a?(Numeric) ? super : contents[index]
      end
      alias [] at

      # Maps are equal with equal entries, in any order; an empty map equals
      # an empty list.
      # @return [::Boolean]
      def ==(other)
        return contents.empty? && other.to_a.empty? if other.is_a?(Sass::Value::List)

        other.is_a?(Sass::Value::Map) && other.contents == contents
      end

      # @return [Integer]
      def hash
        return EMPTY_HASH if contents.empty?

        @hash ||= contents.hash
      end
    end
  end
end
