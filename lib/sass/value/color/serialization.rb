# frozen_string_literal: true

module Sass
  module Value
    class Color
      # How Sass writes colors, as inspection (+meta.inspect()+) and as CSS
      # (interpolation) do in the expanded style.
      #
      # A legacy color (+rgb+, +hsl+, +hwb+) with no missing channel keeps the
      # old syntaxes: a name or +#rrggbb+ when it is opaque with integer
      # channels from 0 to 255, otherwise +rgb()+/+rgba()+ (channels as
      # percentages unless all are integers), +hsl()+/+hsla()+, or +hwb()+.
      # As CSS, an +hwb+ color, and an +rgb+ color out of its gamut, are
      # written as +hsl()+ for older browsers. Other colors use the CSS Color
      # 4 syntax, +none+ for a missing channel; as CSS, a Lab-like color
      # whose lightness is out of range is written through +color-mix()+ so
      # that browsers do not clamp it.
      module Serialization
        module_function

        # The Lab-like spaces, written with their lightness as a percentage.
        LAB_LIKE = %w[lab lch oklab oklch].freeze

        # Spaces written with their own function rather than +color()+.
        FUNCTIONS = %w[rgb hsl hwb lab lch oklab oklch].freeze

        # @param color [Color]
        # @param inspect [::Boolean] inspection (all digits) or CSS
        # @return [::String]
        def write(color, inspect:)
          number = ->(value) { Serializer.number_text(value, inspect:) }
          if color.legacy? && !color.channels_or_nil.include?(nil) && !color.send(:alpha_or_nil).nil?
            inspect ? legacy_inspect(color, number) : legacy_css(color, number)
          elsif !inspect && out_of_range?(color)
            color_mix(color, number)
          else
            modern(color, number)
          end
        end

        def legacy_inspect(color, number)
          case color.space
          when 'hsl' then hsl(color, number)
          when 'hwb' then hwb(color, number)
          else rgb(color, number)
          end
        end

        def legacy_css(color, number)
          case color.space
          when 'hsl' then hsl(color, number)
          when 'hwb' then (opaque?(color) && hex(color.to_space('rgb'))) || hsl(color.to_space('hsl'), number)
          else color.in_gamut? ? rgb(color, number) : hsl(color.to_space('hsl'), number)
          end
        end

        def opaque?(color)
          FuzzyMath.equals(color.alpha, 1)
        end

        # @return [::String, nil] the name or +#rrggbb+ of an +rgb+ color with
        #   integer channels from 0 to 255, nil for any other
        def hex(rgb)
          integers = rgb.channels.map { |value| FuzzyMath.to_i(value) }
          return nil unless integers.all? { |value| value&.between?(0, 255) }

          code = integers.map { |value| format('%02x', value) }.join
          NAMES.fetch(code) { "##{code}" }
        end

        def rgb(color, number)
          opaque = opaque?(color)
          named = hex(color) if opaque
          return named if named

          channels = if color.channels.all? { |value| FuzzyMath.integer?(value) }
                       color.channels.map { |value| number.call(value) }
                     else
                       color.channels.map { |value| "#{number.call(value.to_f * 100 / 255)}%" }
                     end
          channels << number.call(color.alpha) unless opaque
          "#{opaque ? 'rgb' : 'rgba'}(#{channels.join(', ')})"
        end

        def hsl(color, number)
          hue, saturation, lightness = color.channels
          channels = [number.call(hue), "#{number.call(saturation)}%", "#{number.call(lightness)}%"]
          opaque = opaque?(color)
          channels << number.call(color.alpha) unless opaque
          "#{opaque ? 'hsl' : 'hsla'}(#{channels.join(', ')})"
        end

        def hwb(color, number)
          hue, whiteness, blackness = color.channels
          "hwb(#{number.call(hue)} #{number.call(whiteness)}% #{number.call(blackness)}%#{slash_alpha(color, number)})"
        end

        # The CSS Color 4 syntax: +rgb(r g b)+, +hsl(hdeg s% l%)+,
        # +lab(l% a b)+, +oklch(l% c hdeg)+, +color(space r g b)+, each with
        # +/ alpha+ unless opaque.
        def modern(color, number)
          space = Space.fetch(color.space)
          channels = space.channels.zip(color.channels_or_nil).map do |name, value|
            modern_channel(space, name, value, number)
          end
          body = "#{channels.join(' ')}#{slash_alpha(color, number)}"
          FUNCTIONS.include?(space.name) ? "#{space.name}(#{body})" : "color(#{space.name} #{body})"
        end

        def modern_channel(space, name, value, number)
          return 'none' if value.nil?
          return "#{number.call(value)}deg" if name == 'hue'
          return "#{number.call(value)}%" if %w[hsl hwb].include?(space.name)
          return "#{number.call(value.to_f * 100 / space.ranges[0][1])}%" if name == 'lightness'

          number.call(value)
        end

        def slash_alpha(color, number)
          return '' if opaque?(color)

          alpha = color.send(:alpha_or_nil)
          " / #{alpha.nil? ? 'none' : number.call(alpha)}"
        end

        # Whether a Lab-like color's lightness is outside the range CSS clamps
        # it to.
        def out_of_range?(color)
          return false unless LAB_LIKE.include?(color.space)

          lightness = color.channels_or_nil[0]
          maximum = Space.fetch(color.space).ranges[0][1]
          !lightness.nil? && (FuzzyMath.less_than(lightness, 0) || FuzzyMath.greater_than(lightness, maximum))
        end

        # A Lab-like color CSS would clamp, as the same color in XYZ mixed
        # into its own space.
        def color_mix(color, number)
          xyz = color.to_space('xyz').channels.map { |value| number.call(value) }.join(' ')
          "color-mix(in #{color.space}, color(xyz #{xyz}#{slash_alpha(color, number)}) 100%, black)"
        end
      end

      private_constant :Serialization
    end
  end
end
