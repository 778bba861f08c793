# frozen_string_literal: true

module Sass
  module Value
    class Color
      # The CSS-like text of {Color#inspect}: +rgb(255 0 0)+,
      # +hsl(120deg 50% 50% / 0.5)+, +oklch(62.8% 0.26 29.2deg)+,
      # +color(display-p3 1 none 0)+, with +none+ for missing channels.
      module Serialization
        module_function

        # Channels written with a percent sign, by space.
        PERCENT_CHANNELS = {
          'hsl' => %w[saturation lightness], 'hwb' => %w[whiteness blackness],
          'lab' => %w[lightness], 'lch' => %w[lightness], 'oklab' => %w[lightness], 'oklch' => %w[lightness]
        }.freeze

        # Spaces written with their own function rather than +color()+.
        FUNCTIONS = %w[rgb hsl hwb lab lch oklab oklch].freeze

        # @param space [Space]
        # @param channels [Array<Float, nil>]
        # @param alpha [Float, nil]
        # @return [::String]
        def css(space, channels, alpha)
          body = space.channels.zip(channels).map { |name, value| channel(space, name, value) }.join(' ')
          body += " / #{alpha.nil? ? 'none' : number(alpha)}" unless alpha == 1
          FUNCTIONS.include?(space.name) ? "#{space.name}(#{body})" : "color(#{space.name} #{body})"
        end

        # @return [::String] one channel, with its unit
        def channel(space, name, value)
          return 'none' if value.nil?
          return "#{number(value)}deg" if name == 'hue'
          return number(value) unless PERCENT_CHANNELS.fetch(space.name, []).include?(name)

          %w[oklab oklch].include?(space.name) ? "#{number(value * 100)}%" : "#{number(value)}%"
        end

        # @return [::String] a number with at most 10 decimals, integers
        #   without a fraction
        def number(value)
          return value.to_s unless value.finite?

          integer = FuzzyMath.to_i(value)
          return integer.to_s if integer

          format('%.10f', value).sub(/\.?0+\z/, '')
        end
      end

      private_constant :Serialization
    end
  end
end
