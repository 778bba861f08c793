# frozen_string_literal: true

module Sass
  module Value
    # Writes values the way the compiler writes them, so that Ruby shows a
    # value as Sass would without a round trip to the compiler:
    #
    # - {.inspect} as +meta.inspect()+ (and +@debug+) does: every value, and
    #   numbers with all their digits;
    # - {.css} as interpolation (+#{...}+) does: plain CSS, numbers rounded to
    #   ten decimals, blank list elements left out, and an error for a value
    #   CSS cannot hold (a map, an empty list, a function).
    #
    # Both follow the compiler's expanded style.
    module Serializer
      # Raised inside the writer for a function, mixin or module the compiler
      # made: Ruby does not know its name, so it cannot be written.
      class Unwritable < StandardError; end

      module_function

      # @return [::String] +value+ as +meta.inspect()+ writes it
      # @raise [Unwritable] if +value+ holds a compiler function, mixin or module
      def inspect(value)
        Writer.new(inspect: true).write(value).to_s
      end

      # @return [::String] +value+ as +#{value}+ interpolates it
      # @raise [ScriptError] if +value+ is not valid CSS
      # @raise [Unwritable] if +value+ holds a compiler function, mixin or module
      def css(value)
        return value.text if value.is_a?(Sass::Value::String)

        Writer.new(inspect: false).write(value).to_s
      end

      # @return [::String] a quoted string's text in quotes, escaped as Sass
      #   escapes it: double quotes unless the text holds a double quote and no
      #   single quote, and escapes for control and private-use characters
      def quoted_string(text)
        quote = text.include?('"') && !text.include?("'") ? "'" : '"'
        body = +''
        each_char_with_next(text) do |char, following|
          body << case char
                  when quote then "\\#{quote}"
                  when '\\' then '\\\\'
                  when "\t" then char
                  else escaped(char, following, control: true)
                  end
        end
        "#{quote}#{body}#{quote}"
      end

      # @return [::String] an unquoted string's text as Sass writes it: each
      #   newline, with the spaces after it, becomes a single space
      def unquoted_string(text)
        result = +''
        after_newline = false
        each_char_with_next(text) do |char, following|
          case char
          when "\n"
            result << ' '
            after_newline = true
          when ' '
            result << ' ' unless after_newline
          else
            after_newline = false
            result << escaped(char, following, control: false)
          end
        end
        result
      end

      # Characters Sass writes as hex escapes: control characters (in quoted
      # strings, but tabs) and private-use characters, which have no useful
      # glyph of their own.
      def escape?(char, control:)
        code = char.ord
        return true if control && (code < 0x20 || code == 0x7F)

        (code >= 0xE000 && code <= 0xF8FF) || code >= 0xF0000
      end

      # @return [::String] +char+, or its hex escape followed by a space when
      #   the next character would otherwise read as part of the escape
      def escaped(char, following, control:)
        return char unless escape?(char, control:)

        separator = following&.match?(/[0-9a-fA-F \t]/) ? ' ' : ''
        "\\#{char.ord.to_s(16)}#{separator}"
      end

      def each_char_with_next(text)
        chars = text.chars
        chars.each_with_index { |char, i| yield char, chars[i + 1] }
      end

      # Numbers as the compiler writes them. Ruby's shortest round-trip digits
      # are the same as the compiler's; only their layout differs.
      module Numbers
        # The decimals CSS output keeps.
        PRECISION = 10

        module_function

        # @param value [Numeric]
        # @param inspect [::Boolean] all digits (inspect) or at most ten
        #   decimals (CSS)
        # @return [::String]
        def text(value, inspect:)
          value = value.to_f
          return '-0' if value.zero? && (1 / value).negative?
          return value.to_s unless value.finite?

          integer = FuzzyMath.to_i(value)
          return integer.to_s if integer

          digits = plain(value)
          inspect || digits.length < PRECISION + 2 ? digits : rounded(digits)
        end

        # @return [::String] +value+ without exponent, as the compiler's
        #   shortest form: an integral double below 1e21 keeps a ".0"
        def plain(value)
          sign, int, frac, exponent = value.to_s.match(/\A(-?)(\d+)\.(\d+)(?:e([-+]\d+))?\z/).captures
          digits = "#{int}#{frac}".sub(/0+\z/, '')
          point = int.length + exponent.to_i
          leading = digits[/\A0*/].length
          digits = digits[leading..]
          point -= leading
          body = if point <= 0
                   "0.#{'0' * -point}#{digits}"
                 elsif point >= digits.length
                   "#{digits}#{'0' * (point - digits.length)}#{'.0' if value.abs < 1e21}"
                 else
                   "#{digits[0, point]}.#{digits[point..]}"
                 end
          "#{sign}#{body}"
        end

        # Rounds a plain decimal to ten decimals, as the compiler rounds
        # numbers for CSS: on the decimal digits, half up, without trailing
        # zeros, and "0" (not "-0") for a number that rounds to zero.
        def rounded(text)
          return text.delete_suffix('.0') if text.end_with?('.0')

          negative = text.start_with?('-')
          int, frac = text.delete_prefix('-').split('.')
          return text if frac.nil? || frac.length <= PRECISION

          digits = "0#{int}#{frac[0, PRECISION]}".chars.map(&:to_i)
          round_up(digits) if frac[PRECISION].to_i >= 5
          int_digits = digits[0, int.length + 1].join.sub(/\A0+(?=\d)/, '')
          frac_digits = digits[(int.length + 1)..].join.sub(/0+\z/, '')
          return '0' if int_digits == '0' && frac_digits.empty?

          "#{'-' if negative}#{int_digits}#{".#{frac_digits}" unless frac_digits.empty?}"
        end

        def round_up(digits)
          index = digits.length - 1
          loop do
            digits[index] += 1
            break if digits[index] < 10

            digits[index] = 0
            index -= 1
          end
        end
      end

      # How {Writer} writes calculations: arguments separated by commas,
      # operations with the parentheses their precedence needs, and numbers
      # Sass could not write alone (NaN, the infinities, complex units) as
      # products of their value and units.
      module Calculations
        OPERATOR_PRECEDENCE = { '+' => 1, '-' => 1, '*' => 2, '/' => 2 }.freeze

        private

        def calculation(value)
          @buffer << value.name << '('
          value.arguments.each_with_index do |argument, i|
            @buffer << ', ' unless i.zero?
            calculation_value(argument)
          end
          @buffer << ')'
        end

        def calculation_value(value)
          case value
          when Sass::Value::Number then @buffer << calculation_number(value)
          when Sass::CalculationValue::CalculationInterpolation
            @buffer << Serializer.unquoted_string("(#{value.value})")
          when Sass::CalculationValue::CalculationOperation then operation(value)
          else write(value)
          end
        end

        def operation(value)
          operator = value.operator
          left = value.left
          right = value.right
          parenthesize_left = left.is_a?(Sass::CalculationValue::CalculationOperation) &&
                              OPERATOR_PRECEDENCE[left.operator] < OPERATOR_PRECEDENCE[operator]
          parenthesized(parenthesize_left) { calculation_value(left) }
          @buffer << " #{operator} "
          parenthesized(parenthesize_right?(operator, right)) { calculation_value(right) }
        end

        def parenthesized(parenthesize)
          @buffer << '(' if parenthesize
          yield
          @buffer << ')' if parenthesize
        end

        # The right operand of an operation is parenthesized where it would
        # otherwise bind to its left: after a division always, and after a
        # subtraction or multiplication when it is a sum or difference. A
        # number written as a product (complex units, infinities with units)
        # counts as an operation after a division.
        def parenthesize_right?(operator, right)
          case right
          when Sass::CalculationValue::CalculationOperation
            operator == '/' || (operator != '+' && %w[+ -].include?(right.operator))
          when Sass::Value::Number
            operator == '/' && product?(right)
          else
            false
          end
        end

        def product?(number)
          return number.units? unless number.value.to_f.finite?

          !number.denominator_units.empty? || number.numerator_units.length > 1
        end

        # @return [::String] a number inside a calculation: with complex units
        #   or not finite, as a product of its value and one of each unit
        def calculation_number(value)
          amount = value.value.to_f
          numerators = value.numerator_units
          head = if amount.finite?
                   "#{number_text(amount)}#{numerators.first}"
                 else
                   numerators = [nil, *numerators]
                   infinity_text(amount)
                 end
          numerators.drop(1).each { |unit| head += " * 1#{unit}" }
          value.denominator_units.each { |unit| head += " / 1#{unit}" }
          head
        end

        def infinity_text(amount)
          return 'NaN' if amount.nan?

          amount.positive? ? 'infinity' : '-infinity'
        end
      end

      # Walks a value and writes it.
      class Writer
        include Calculations

        def initialize(inspect:)
          @inspect = inspect
          @buffer = +''
        end

        # @return [::String]
        def to_s
          @buffer
        end

        # @return [Writer] self
        def write(value)
          case value
          when Sass::Value::String then string(value)
          when Sass::Value::Number then number(value)
          when Sass::Value::Boolean then @buffer << value.value.to_s
          when Sass::Value::Null then @buffer << 'null' if @inspect
          when Sass::Value::List then list(value)
          when Sass::Value::Map then map(value)
          when Sass::Value::Color then @buffer << Color.send(:serialize, value, inspect: @inspect)
          when Sass::Value::Calculation then calculation(value)
          when Sass::Value::Function then function(value)
          else raise Unwritable
          end
          self
        end

        private

        def number_text(value)
          Numbers.text(value, inspect: @inspect)
        end

        def invalid!(value)
          raise Sass::ScriptError, "#{Serializer.inspect(value)} isn't a valid CSS value."
        end

        def string(value)
          text = value.text
          @buffer << (value.quoted? && @inspect ? Serializer.quoted_string(text) : Serializer.unquoted_string(text))
        end

        # A number with a single unit (or none) is written as is; NaN, the
        # infinities and complex units only exist in CSS inside calc().
        def number(value)
          if value.value.to_f.finite? && value.denominator_units.empty? && value.numerator_units.length <= 1
            @buffer << number_text(value.value) << (value.numerator_units.first || '')
          else
            @buffer << 'calc(' << calculation_number(value) << ')'
          end
        end

        def list(value)
          if value.bracketed?
            @buffer << '['
          elsif value.to_a.empty?
            invalid!(value) unless @inspect
            @buffer << '()'
            return
          end

          # Inspection marks a one-element comma or slash list with a
          # trailing separator, so that it reads back as a list.
          singleton = @inspect && value.to_a.length == 1 && [',', '/'].include?(value.separator)
          @buffer << '(' if singleton && !value.bracketed?
          list_elements(value)
          @buffer << value.separator << (value.bracketed? ? '' : ')') if singleton
          @buffer << ']' if value.bracketed?
        end

        def list_elements(value)
          elements = @inspect ? value.to_a : value.to_a.reject { |element| blank?(element) }
          elements.each_with_index do |element, i|
            @buffer << separator_text(value.separator) unless i.zero?
            parenthesized(@inspect && needs_parentheses?(value.separator, element)) { write(element) }
          end
        end

        def separator_text(separator)
          case separator
          when ',' then ', '
          when '/' then ' / '
          when ' ' then ' '
          else ''
          end
        end

        # Whether a list inside a list needs parentheses to read back as one.
        def needs_parentheses?(separator, element)
          return false unless element.is_a?(Sass::Value::List) && element.to_a.length > 1 && !element.bracketed?

          case separator
          when ',' then element.separator == ','
          when '/' then [',', '/'].include?(element.separator)
          else !element.separator.nil?
          end
        end

        # Values CSS output leaves out of a list.
        def blank?(value)
          case value
          when Sass::Value::Null then true
          when Sass::Value::String then !value.quoted? && value.text.empty?
          when Sass::Value::List then !value.bracketed? && value.to_a.all? { |element| blank?(element) }
          else false
          end
        end

        def map(value)
          invalid!(value) unless @inspect

          @buffer << '('
          value.contents.each_with_index do |(key, element), i|
            @buffer << ', ' unless i.zero?
            map_element(key)
            @buffer << ': '
            map_element(element)
          end
          @buffer << ')'
        end

        def map_element(value)
          parenthesize = value.is_a?(Sass::Value::List) && value.separator == ',' && !value.bracketed?
          @buffer << '(' if parenthesize
          write(value)
          @buffer << ')' if parenthesize
        end

        def function(value)
          raise Unwritable if value.signature.nil?

          invalid!(value) unless @inspect
          @buffer << 'get-function(' << Serializer.quoted_string(value.signature[/\A[^(]*/].strip) << ')'
        end
      end

      # @return [::String] a number as the compiler writes it (see {.inspect}
      #   and {.css} for +inspect:+)
      def number_text(value, inspect:)
        Numbers.text(value, inspect:)
      end

      private_constant :Numbers, :Calculations, :Writer
    end

    private_constant :Serializer
  end
end
