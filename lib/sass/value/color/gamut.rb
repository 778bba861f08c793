# frozen_string_literal: true

module Sass
  module Value
    class Color
      # Gamut checks and the two gamut-mapping methods, +clip+ and
      # +local-minde+ (CSS Color 4's binary search over OKLCh chroma, judged
      # by deltaEOK).
      module Gamut
        module_function

        # The gamut-mapping methods, by name.
        METHODS = %w[clip local-minde].freeze

        # The just-noticeable deltaEOK difference.
        JND = 0.02

        # How close, in chroma, the binary search gets.
        EPSILON = 0.0001

        # @param space [Space]
        # @param channels [Array<Float, nil>] in +space+
        # @return [::Boolean] whether the channels (missing as 0) are within
        #   the space's ranges, fuzzily; always true for unbounded spaces
        def in_gamut?(space, channels)
          return true unless space.bounded?

          channels.zip(space.ranges).all? do |value, range|
            value ||= 0.0
            range.nil? || (FuzzyMath.greater_than_or_equals(value, range[0]) &&
                           FuzzyMath.less_than_or_equals(value, range[1]))
          end
        end

        # @param color [Color]
        # @param method [::String] one of {METHODS}
        # @return [Color] +color+ mapped into its space's gamut
        def map(color, method)
          space = Space.fetch(color.space)
          return color if in_gamut?(space, color.channels_or_nil)

          method == 'clip' ? clip(color) : local_minde(color, space)
        end

        # @return [Color] the color with each bounded channel clamped
        def clip(color)
          space = Space.fetch(color.space)
          channels = color.channels_or_nil.zip(space.ranges).map do |value, range|
            next value if value.nil? || range.nil?

            value.to_f.nan? ? range[0] : value.clamp(*range)
          end
          Color.send(:for_space, space, channels, color.send(:alpha_or_nil))
        end

        # @return [Color]
        def local_minde(color, space)
          origin = color.to_space('oklch')
          lightness, chroma, hue = origin.channels_or_nil
          alpha = origin.send(:alpha_or_nil)
          return extreme(color, space, lightness || 0.0) if extreme?(lightness || 0.0)

          clipped = clip(color)
          return clipped if delta_eok(clipped, color) < JND

          search(space, [lightness, chroma || 0.0, hue], alpha) || clipped
        end

        # @return [::Boolean] whether an OKLCh lightness maps to white or black
        def extreme?(lightness)
          FuzzyMath.greater_than_or_equals(lightness, 1) || FuzzyMath.less_than_or_equals(lightness, 0)
        end

        # @return [Color] white or black in +space+
        def extreme(color, space, lightness)
          alpha = color.send(:alpha_or_nil)
          if FuzzyMath.greater_than_or_equals(lightness, 1) && !space.legacy?
            return Color.send(:for_space, space, [1.0, 1.0, 1.0], alpha)
          end

          level = FuzzyMath.greater_than_or_equals(lightness, 1) ? 255.0 : 0.0
          Color.send(:for_space, Space.fetch('rgb'), [level] * 3, alpha).to_space(space.name)
        end

        # The binary search over chroma, from the color's chroma down.
        # @return [Color, nil] the mapped color, nil if the search never clips
        def search(space, (lightness, chroma, hue), alpha)
          oklch = Space.fetch('oklch')
          min = 0.0
          max = chroma
          min_in_gamut = true
          clipped = nil
          while max - min > EPSILON
            middle = (min + max) / 2
            current = Color.send(:for_space, space, Conversions.convert(oklch, [lightness, middle, hue], space), alpha)
            if min_in_gamut && in_gamut?(space, current.channels_or_nil)
              min = middle
              next
            end

            clipped = clip(current)
            error = delta_eok(clipped, current)
            return clipped if error < JND && JND - error < EPSILON

            if error < JND
              min_in_gamut = false
              min = middle
            else
              max = middle
            end
          end
          clipped
        end

        # @return [Float] the deltaEOK distance between two colors
        def delta_eok(color1, color2)
          lab1 = color1.to_space('oklab').channels
          lab2 = color2.to_space('oklab').channels
          squares = lab1.zip(lab2).map { |a, b| (a - b)**2 }
          Math.sqrt(squares[0] + squares[1] + squares[2])
        end
      end

      private_constant :Gamut
    end
  end
end
