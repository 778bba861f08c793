# frozen_string_literal: true

module Sass
  module Value
    class Color
      # Reads the keyword arguments of {Color#initialize}: which space they
      # describe, the channels (nil for missing) and alpha.
      module Construction
        module_function

        # @param options [Hash{Symbol => Object}]
        # @return [Array(Space, Array<Float, nil>, Float or nil)]
        # @raise [ArgumentError] for a wrong space, keyword or value
        def parse(options)
          space = construction_space(options)
          keys = space.channels.map(&:to_sym)
          check_keywords(space, options, keys)
          channels = keys.map { |key| channel_value(options[key], key) }
          if options.key?(:alpha) && options[:alpha].nil? && options[:space].nil?
            Color.deprecation('null-alpha', 'Passing alpha: nil without setting space: is deprecated.')
          end
          [space, channels, options.key?(:alpha) ? alpha_value(options[:alpha]) : 1.0]
        end

        # @return [Space] the space named by +space:+, or the legacy space
        #   the channel keywords imply
        def construction_space(options)
          return Space.fetch(options[:space]) unless options[:space].nil?
          return Space.fetch('rgb') if options.key?(:red)
          return Space.fetch('hsl') if options.key?(:saturation)
          return Space.fetch('hwb') if options.key?(:whiteness)

          raise ArgumentError,
                'cannot tell the color space: pass space:, or red:, green:, blue: (rgb), ' \
                'hue:, saturation:, lightness: (hsl) or hue:, whiteness:, blackness: (hwb)'
        end

        # @raise [ArgumentError] unless the keywords are exactly the space's
        #   channels, plus optionally +alpha:+ and +space:+
        def check_keywords(space, options, keys)
          expected = "#{keys.map { |key| "#{key}:" }.join(', ')} (and optionally alpha:)"
          unknown = options.keys - keys - %i[alpha space]
          unless unknown.empty?
            raise ArgumentError,
                  "unknown keyword#{'s' if unknown.length > 1} #{unknown.map(&:inspect).join(', ')} " \
                  "for a color in #{space.name}: expected #{expected}"
          end

          missing = keys - options.keys
          return if missing.empty?

          raise ArgumentError,
                "missing keyword#{'s' if missing.length > 1} #{missing.map(&:inspect).join(', ')} " \
                "for a color in #{space.name} (pass nil for a missing channel): expected #{expected}"
        end

        # @return [Float, nil]
        # @raise [ArgumentError] unless +value+ is a real number or nil
        def channel_value(value, name)
          return nil if value.nil?
          unless value.is_a?(Numeric) && value.real?
            raise ArgumentError, "#{name} must be a real Numeric or nil (missing), got #{value.inspect}"
          end

          value.to_f
        end

        # @return [Float, nil] +value+ as is if from 0 to 1, or 0 or 1 if just
        #   outside but fuzzily equal
        # @raise [ArgumentError] unless +value+ is nil or between 0 and 1
        def alpha_value(value)
          return nil if value.nil?

          number = channel_value(value, :alpha)
          return number if number >= 0 && number <= 1

          FuzzyMath.between(number, 0.0, 1.0) ||
            raise(ArgumentError, "alpha must be between 0 and 1, got #{value.inspect}")
        end
      end

      private_constant :Construction
    end
  end
end
