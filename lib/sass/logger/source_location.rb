# frozen_string_literal: true

module Sass
  module Logger
    # A single point in a source file.
    # @see https://sass-lang.com/documentation/js-api/interfaces/sourcelocation/
    class SourceLocation
      # @return [Integer] the 0-based offset in the file
      attr_reader :offset

      # @return [Integer] the 0-based line
      attr_reader :line

      # @return [Integer] the 0-based column within the line
      attr_reader :column

      # @param offset [Integer]
      # @param line [Integer]
      # @param column [Integer]
      def initialize(offset, line, column)
        @offset = offset
        @line = line
        @column = column
      end

      # @return [Boolean]
      def ==(other)
        other.is_a?(SourceLocation) && offset == other.offset && line == other.line && column == other.column
      end
      alias eql? ==

      # @return [Integer]
      def hash
        [offset, line, column].hash
      end
    end
  end
end
