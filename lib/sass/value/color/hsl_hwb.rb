# frozen_string_literal: true

module Sass
  module Value
    class Color
      # HSL and HWB to and from gamma-encoded sRGB (channels from 0 to 1),
      # with CSS Color 4's formulas, in their order of operations (as the
      # established gem computes them, so that equal inputs give equal
      # floats: hsl(120, 42%, 42%) has whiteness 24.36, not
      # 24.360000000000003). Hues are in degrees, the other HSL and HWB
      # channels in percent.
      module HslHwb
        module_function

        # @return [Array<Float>] sRGB of an HSL color
        def hsl_to_srgb(hue, saturation, lightness)
          hue = (hue % 360) / 30.0
          saturation /= 100.0
          lightness /= 100.0
          chroma = saturation * [lightness, 1 - lightness].min
          [0, 8, 4].map do |n|
            k = (n + hue) % 12
            lightness - (chroma * [-1, [k - 3, 9 - k, 1].min].max)
          end
        end

        # @return [Array<Float>] sRGB of an HWB color
        def hwb_to_srgb(hue, whiteness, blackness)
          whiteness /= 100.0
          blackness /= 100.0
          sum = whiteness + blackness
          return [whiteness / sum] * 3 if sum >= 1

          factor = 1 - whiteness - blackness
          hsl_to_srgb(hue, 100, 50).map { |channel| (channel * factor) + whiteness }
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
