# frozen_string_literal: true

module Sass
  module Logger
    # A span of text in a source file: where an error or warning happened.
    # @see https://sass-lang.com/documentation/js-api/interfaces/sourcespan/
    class SourceSpan
      # @return [SourceLocation] where the span starts
      attr_reader :start

      # @return [SourceLocation] the location just after the span (equal to
      #   {#start} for an empty span)
      attr_reader :end

      # @return [String, nil] the canonical URL of the file, nil for a string
      #   input without a URL
      attr_reader :url

      # @return [String] the text the span covers
      attr_reader :text

      # @return [String, nil] the text around the span, usually whole lines
      attr_reader :context

      # The established gem's argument order.
      # @param start_location [SourceLocation]
      # @param end_location [SourceLocation]
      # @param text [String]
      # @param url [String, nil]
      # @param context [String, nil]
      def initialize(start_location, end_location, text, url, context)
        @start = start_location
        @end = end_location
        @url = url
        @text = text
        @context = context
      end
    end
  end
end
