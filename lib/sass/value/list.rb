# frozen_string_literal: true

module Sass
  module Value
    # A Sass list.
    # @see https://sass-lang.com/documentation/js-api/classes/sasslist/
    class List
      include Value

      # The separators a list may have; nil means undecided (allowed only for
      # lists of fewer than two elements).
      SEPARATORS = [',', ' ', '/', nil].freeze

      # @return [::String, nil]
      attr_reader :separator

      # @param contents [Array<Value>]
      # @param separator [::String, nil] +','+, +' '+, +'/'+ or nil
      # @param bracketed [::Boolean]
      def initialize(contents = [], separator: ',', bracketed: false)
        unless contents.respond_to?(:to_ary)
          raise ArgumentError, "list contents must be an Array of Sass::Value, got #{contents.inspect}"
        end

        contents = contents.to_ary.dup.freeze
        contents.each do |element|
          raise ArgumentError, "list elements must be Sass::Value, got #{element.inspect}" unless element.is_a?(Value)
        end
        unless SEPARATORS.include?(separator)
          raise ArgumentError, "separator must be one of #{SEPARATORS.inspect}, got #{separator.inspect}"
        end
        if separator.nil? && contents.length > 1
          raise ArgumentError, 'A list with more than one element must have an explicit separator'
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
        return Map::EMPTY_HASH if @contents.empty?

        @hash ||= [@contents, @separator, @bracketed].hash
      end

      # @return [::String]
      def inspect
        separator = @separator == ' ' || @separator.nil? ? ' ' : "#{@separator} "
        body = @contents.map(&:inspect).join(separator)
        body = "(#{body},)" if @contents.length == 1 && @separator == ',' && !bracketed?
        body = '()' if @contents.empty? && !bracketed?
        bracketed? ? "[#{body}]" : body
      end
    end
  end
end
