# frozen_string_literal: true

module Sass
  # Raised when a Sass compilation fails.
  #
  # {#message} is the Sass error message alone; {#detailed_message} is the
  # compiler's formatted message (the error, the source it points at and the
  # Sass stack), which +full_message+ follows with the Ruby backtrace, as Ruby
  # 3.2 and later print any exception (and as this class prints itself on Ruby
  # 3.1 too). When a custom function or importer raised, the backtrace is that
  # exception's and {#cause} is the exception.
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
    # @param formatted [String, nil] the compiler's formatted message (with span
    #   and stack; with ANSI colors if +alert_color+ was on)
    # @param sass_stack [String, nil]
    # @param span [Logger::SourceSpan, nil]
    # @param loaded_urls [Array<String>]
    # @!visibility private
    def initialize(message, formatted, sass_stack, span, loaded_urls)
      super(message)
      @formatted = formatted
      @sass_stack = sass_stack
      @span = span
      @loaded_urls = loaded_urls
    end

    # @return [String] the Sass error message, without span or stack
    def sass_message
      message
    end

    # The compiler's formatted message, in which the error message carries the
    # exception's class the way Ruby shows it (+Expected expression.
    # (Sass::CompileError)+).
    # @param highlight [Boolean, nil] whether to keep ANSI colors (the compiler's,
    #   when the compile asked for them with +alert_color+, and Ruby's bold
    #   message); defaults to whether +$stderr+ is a TTY
    # @return [String]
    def detailed_message(highlight: nil, **)
      highlight = Exception.to_tty? if highlight.nil?
      decorated = defined?(super) ? super(highlight:) : ErrorFormat.decorate(self.class, message, highlight)
      return decorated if @formatted.nil?

      detailed = @formatted.sub(message) { decorated }
      highlight ? detailed : detailed.gsub(ErrorFormat::ANSI, '')
    end

    unless Exception.method_defined?(:detailed_message)
      # What Ruby 3.2 and later make of {#detailed_message}: the first
      # backtrace line, the detailed message, the rest of the backtrace, then
      # the cause's. Ruby 3.1 builds +full_message+ from +message+ instead, so
      # here it is built the 3.2 way.
      # @param highlight [Boolean, nil]
      # @param order [Symbol, nil] +:top+ or +:bottom+
      # @return [String]
      def full_message(highlight: nil, order: nil, **)
        # Where an exception that was never raised says it is: the caller.
        here = caller_locations(1, 1).first
        ErrorFormat.full_message(self, highlight, order, "#{here.path}:#{here.lineno}:in `full_message'")
      end
    end

    # A stylesheet that shows this error at the top of the page: a comment with
    # the full message, and a +body::before+ rule that displays it.
    # @return [String]
    def to_css
      CompileError.css_page(full_message(highlight: false, order: :top))
    end

    # The stylesheet #to_css returns, showing +content+.
    # @return [String]
    # @!visibility private
    def self.css_page(content)
      content = excerpt(content)
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

    # The most of a message an error page shows: a message can hold a whole
    # line of the stylesheet, and a stylesheet can be huge.
    PAGE_LIMIT = 64 * 1024
    private_constant :PAGE_LIMIT

    # +content+, cut to PAGE_LIMIT characters with a line saying how many
    # more there were.
    # @!visibility private
    def self.excerpt(content)
      return content if content.length <= PAGE_LIMIT

      "#{content[0, PAGE_LIMIT]}\n... (#{content.length - PAGE_LIMIT} more characters)"
    end

    # Quotes +text+ as a CSS string that any CSS parser reads back unchanged:
    # quotes and backslashes escaped, everything outside printable ASCII as a
    # hexadecimal escape.
    # @return [String]
    # @!visibility private
    def self.css_string(text)
      # One pass over the text (an escape's trailing space, needed where a
      # hex digit or a space follows, is decided by a lookahead: looking at
      # the next character by index was linear per lookup on a non-ASCII
      # String, and a page of a long message quadratic).
      escaped = text.gsub(CSS_ESCAPED) do
        quoted, spaced, alone = Regexp.last_match.captures
        if quoted
          "\\#{quoted}"
        else
          "\\#{(spaced || alone).ord.to_s(16)}#{' ' if spaced}"
        end
      end
      "\"#{escaped}\""
    end

    # What #css_string escapes: a quote or backslash; a character outside
    # printable ASCII followed by what would continue its hex escape; any
    # other such character.
    CSS_ESCAPED = /(["\\])|([^ -~])(?=[0-9a-fA-F ])|([^ -~])/
    private_constant :CSS_ESCAPED

    # How Ruby 3.2 formats an exception (error.c and eval_error.c), for Ruby
    # 3.1, whose +Exception+ has no +detailed_message+.
    module ErrorFormat
      ANSI = /\e\[[0-9;]*m/
      BOLD = "\e[1m"
      UNDERLINE = "\e[1;4m"
      RESET = "\e[m"

      module_function

      # Ruby's default detailed message (+rb_decorate_message+): the message
      # with the class after its first line, bold when highlighting.
      def decorate(klass, message, highlight)
        message = message.to_s
        name = klass.name || klass.inspect
        if message.empty?
          text = klass == RuntimeError ? 'unhandled exception' : name
          return highlight ? "#{UNDERLINE}#{text}#{RESET}" : text
        end

        first, _, rest = message.partition("\n")
        out = highlight ? "#{BOLD}#{first}" : first.dup
        out << class_label(name, highlight) unless name.start_with?('#')
        return out if rest.empty?
        return out << "\n" << rest unless highlight

        out << "\n" << rest.split(/(\n+)/).map do |part|
          part.empty? || part.start_with?("\n") ? part : "#{BOLD}#{part}#{RESET}"
        end.join
      end

      # " (ClassName)" after the first line of a message.
      def class_label(name, highlight)
        highlight ? " (#{UNDERLINE}#{name}#{RESET}#{BOLD})#{RESET}" : " (#{name})"
      end

      # The detailed message of any exception, as Ruby 3.2 asks for it.
      def detailed(exception, highlight)
        return exception.detailed_message(highlight:) if exception.respond_to?(:detailed_message)

        decorate(exception.class, exception.message, highlight)
      end

      def full_message(exception, highlight, order, here)
        unless highlight.nil? || highlight == true || highlight == false
          raise ArgumentError, "expected true or false as highlight: #{highlight.inspect}"
        end
        unless [nil, :top, :bottom, 'top', 'bottom'].include?(order)
          raise ArgumentError, "expected :top or :bottom as order: #{order.inspect}"
        end

        highlight = Exception.to_tty? if highlight.nil?
        out = String.new(encoding: Encoding::UTF_8)
        shown = {}.compare_by_identity
        if order.to_s == 'bottom'
          out << (highlight ? "#{BOLD}Traceback#{RESET}" : 'Traceback') << " (most recent call last):\n"
          cause_reversed(out, exception, highlight, shown, here)
          backtrace(out, exception.backtrace, reverse: true)
          error_info(out, exception, highlight, here)
        else
          error_info(out, exception, highlight, here)
          backtrace(out, exception.backtrace, reverse: false)
          cause(out, exception, highlight, shown, here)
        end
        out
      end

      # The first backtrace line (or, never raised, +here+), then the detailed
      # message.
      def error_info(out, exception, highlight, here)
        out << utf8(exception.backtrace&.first || here) << ': '
        detailed = detailed(exception, highlight)
        detailed = decorate(exception.class, '', highlight) if detailed.nil? || detailed.empty?
        out << utf8(detailed) << "\n"
      end

      # The backtrace after its first line, each line as "\tfrom ...", numbered
      # and last line first when reversed; Ruby's --backtrace-limit applies.
      def backtrace(out, lines, reverse:)
        return if lines.nil? || lines.length < 2

        length = lines.length
        width = (length - 1).to_s.length
        limit = defined?(Thread::Backtrace.limit) ? Thread::Backtrace.limit : -1
        skip = limit + 1 if limit >= 0 && length > limit + 2
        index = 1
        while index < length
          if index == skip
            out << "\t ... #{length - skip} levels...\n"
            break
          end
          line = lines[reverse ? length - index : index]
          out << "\t#{"#{(length - index).to_s.rjust(width)}: " if reverse}from #{utf8(line)}\n" if line.is_a?(String)
          index += 1
        end
      end

      def cause(out, exception, highlight, shown, here)
        cause = exception.cause
        return if !cause.is_a?(Exception) || shown.key?(cause)

        shown[cause] = true
        error_info(out, cause, highlight, here)
        backtrace(out, cause.backtrace, reverse: false)
        cause(out, cause, highlight, shown, here)
      end

      def cause_reversed(out, exception, highlight, shown, here)
        cause = exception.cause
        return if !cause.is_a?(Exception) || shown.key?(cause)

        shown[cause] = true
        cause_reversed(out, cause, highlight, shown, here)
        backtrace(out, cause.backtrace, reverse: true)
        error_info(out, cause, highlight, here)
      end

      def utf8(text)
        text = text.to_s
        text.encoding == Encoding::UTF_8 ? text : text.dup.force_encoding(Encoding::UTF_8)
      end
    end

    private_constant :ErrorFormat
  end
end
