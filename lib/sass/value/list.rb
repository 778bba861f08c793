# frozen_string_literal: true

module Sass
  module Value
    # A Sass list.
    # @see https://sass-lang.com/documentation/js-api/classes/sasslist/
    class List
      include Value

      # @return [::String, nil]
      attr_reader :separator

      # @param contents [Array<Value>]
      # @param separator [::String, nil] +','+, +' '+, +'/'+ or nil
      # @param bracketed [::Boolean]
      # @raise [ScriptError] for no separator for more than one element. As
      #   in the established gem, nothing else is checked here: contents that
      #   are not values, or an unknown separator, fail where the list is used
      #   (sent to the compiler, a value raises there).
      def initialize(contents = [], separator: ',', bracketed: false)
        contents = contents.to_ary.dup.freeze if contents.respond_to?(:to_ary)
        if separator.nil? && contents.length > 1
          raise Sass::ScriptError, 'A list with more than one element must have an explicit separator'
        end

        @contents = contents
        @separator = separator.nil? ? nil : separator.dup.freeze
        @bracketed = bracketed ? true : false
      end

      # @return [Array<Value>]
      def to_a
        @contents
      end

      # @return [::Boolean]
      def bracketed?
        @bracketed
      end

      # @return [Map, nil] an empty {Map} for an empty list
      def to_map
        @contents.empty? ? Sass::Value::Map.new : nil
      end

      # Lists are equal with the same elements, separator and brackets; an
      # empty list equals an empty map.
      # @return [::Boolean]
      def ==(other)
        return @contents.empty? && other.contents.empty? if other.is_a?(Sass::Value::Map)

        other.is_a?(Sass::Value::List) &&
          other.to_a == to_a &&
          other.separator == separator &&
          other.bracketed? == bracketed?
      end

      # @return [Integer]
      def hash
        return EMPTY_HASH if @contents.empty?

        @hash ||= [@contents, @separator, @bracketed].hash
      end
    end
  end
end
