# frozen_string_literal: true

module Sass
  # Raised when a Sass compilation fails.
  # @see https://sass-lang.com/documentation/js-api/classes/exception/
  class CompileError < StandardError
    # @return [String, nil] the Sass stack trace: the loads, function calls and
    #   mixin includes active when the error happened
    attr_reader :sass_stack

    # @return [Logger::SourceSpan, nil] where in which stylesheet it happened
    attr_reader :span

    # @return [Array<String>] the canonical URLs of the stylesheets loaded before
    #   the failure
    attr_reader :loaded_urls

    # @param message [String] the Sass error message alone
    # @param full_message [String, nil] the compiler's formatted message (with
    #   span and stack; with ANSI colors if +alert_color+ was on)
    # @param sass_stack [String, nil]
    # @param span [Logger::SourceSpan, nil]
    # @param loaded_urls [Array<String>]
    def initialize(message, full_message, sass_stack, span, loaded_urls)
      super(message)
      @full_message = full_message
      @sass_stack = sass_stack
      @span = span
      @loaded_urls = loaded_urls
    end

    # @return [String] the Sass error message, without span or stack
    def sass_message
      message
    end

    # The compiler's formatted message: the error, the source it points at and
    # the Sass stack.
    # @param highlight [Boolean, nil] keep ANSI colors (when the compile asked
    #   for them with +alert_color+); defaults to whether +$stderr+ is a TTY
    # @return [String]
    def full_message(highlight: nil, order: nil, **)
      return super if @full_message.nil?

      highlight = Exception.to_tty? if highlight.nil?
      highlight ? +@full_message : @full_message.gsub(/\e\[[0-9;]*m/, '')
    end

    # A stylesheet that shows this error at the top of the page: a comment with
    # the message, and a +body::before+ rule that displays it.
    # @return [String]
    def to_css
      content = full_message(highlight: false, order: :top)
      comment = content.gsub('*/', "*\u2060/").gsub("\r\n", "\n").split("\n").join("\n * ")
      <<~CSS
        /* #{comment} */

        body::before {
          position: static;
          display: block;
          padding: 1em;
          margin: 0 0 1em;
          border-width: 0 0 2px;
          border-bottom-style: solid;
          font-family: monospace, monospace;
          white-space: pre;
          content: #{CompileError.css_string(content)};
        }
      CSS
    end

    # Quotes +text+ as a CSS string that any CSS parser reads back unchanged:
    # quotes and backslashes escaped, everything outside printable ASCII as a
    # hexadecimal escape.
    # @return [String]
    # @!visibility private
    def self.css_string(text)
      escaped = text.each_char.with_index.map do |char, index|
        case char
        when '"', '\\' then "\\#{char}"
        when /[ -~]/ then char
        else
          following = text[index + 1]
          "\\#{char.ord.to_s(16)}#{' ' if following&.match?(/[0-9a-fA-F ]/)}"
        end
      end
      "\"#{escaped.join}\""
    end
  end
end
