# frozen_string_literal: true

module Sass
  module Value
    class Color
      # HSL and HWB to and from gamma-encoded sRGB (channels from 0 to 1),
      # after CSS Color 4. Hues are in degrees, the other HSL and HWB
      # channels in percent.
      module HslHwb
        module_function

        # @return [Array<Float>] sRGB of an HSL color
        def hsl_to_srgb(hue, saturation, lightness)
          hue = (hue / 360) % 1
          saturation /= 100
          lightness /= 100
          high = if lightness <= 0.5
                   lightness * (saturation + 1)
                 else
                   lightness + saturation - (lightness * saturation)
                 end
          low = (lightness * 2) - high
          [hue + (1.0 / 3), hue, hue - (1.0 / 3)].map { |part| hue_to_channel(low, high, part) }
        end

        # @return [Array<Float>] sRGB of an HWB color
        def hwb_to_srgb(hue, whiteness, blackness)
          hue = (hue % 360) / 360
          whiteness /= 100
          blackness /= 100
          sum = whiteness + blackness
          return [whiteness / sum] * 3 if sum >= 1

          factor = 1 - whiteness - blackness
          [hue + (1.0 / 3), hue, hue - (1.0 / 3)].map do |part|
            (hue_to_channel(0.0, 1.0, part) * factor) + whiteness
          end
        end

        # One channel of a hue between +low+ and +high+, with +hue+ in turns.
        # @return [Float]
        def hue_to_channel(low, high, hue)
          hue += 1 if hue.negative?
          hue -= 1 if hue > 1
          if hue < 1.0 / 6
            low + ((high - low) * hue * 6)
          elsif hue < 0.5
            high
          elsif hue < 2.0 / 3
            low + ((high - low) * ((2.0 / 3) - hue) * 6)
          else
            low
          end
        end

        # @return [Array<Float>] HSL of an sRGB color (a negative saturation,
        #   out of gamut, is made positive by turning the hue half round)
        def srgb_to_hsl(red, green, blue)
          hue, max, min = hue_max_min(red, green, blue)
          lightness = (min + max) / 2
          saturation = if lightness.zero? || lightness == 1
                         0.0
                       else
                         100 * (max - lightness) / [lightness, 1 - lightness].min
                       end
          if saturation.negative?
            hue += 180
            saturation = -saturation
          end
          [hue % 360, saturation, lightness * 100]
        end

        # @return [Array<Float>] HWB of an sRGB color
        def srgb_to_hwb(red, green, blue)
          hue, max, min = hue_max_min(red, green, blue)
          [hue % 360, min * 100, 100 - (max * 100)]
        end

        # @return [Array(Float, Float, Float)] the hue (not yet reduced modulo
        #   360) and the largest and smallest channels of an sRGB color
        def hue_max_min(red, green, blue)
          max = [red, green, blue].max
          min = [red, green, blue].min
          delta = max - min
          hue = if max == min
                  0.0
                elsif max == red
                  (60 * (green - blue) / delta) + 360
                elsif max == green
                  (60 * (blue - red) / delta) + 120
                else
                  (60 * (red - green) / delta) + 240
                end
          [hue, max, min]
        end
      end

      private_constant :HslHwb
    end
  end
end
