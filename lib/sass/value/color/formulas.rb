# frozen_string_literal: true

module Sass
  module Value
    class Color
      # The non-linear parts of color conversion, after CSS Color 4: transfer
      # functions of the RGB spaces, Lab and OKLab against XYZ and LMS, the
      # polar forms, and HSL and HWB against gamma-encoded sRGB. Channels are
      # plain Floats here; missing channels are handled by {Conversions}.
      module Formulas
        module_function

        # Lab's epsilon, (6/29)^3.
        LAB_EPSILON = 216.0 / 24_389
        # Lab's kappa, (29/3)^3.
        LAB_KAPPA = 24_389.0 / 27
        # The D50 white point, as Lab uses it.
        D50 = [0.3457 / 0.3585, 1.0, (1.0 - 0.3457 - 0.3585) / 0.3585].freeze

        # @return [Float] +magnitude+ with the sign of +value+
        def signed(value, magnitude)
          value.negative? ? -magnitude : magnitude
        end

        # @return [Float] a gamma-encoded sRGB (or display-p3) channel made linear
        def srgb_to_linear(value)
          abs = value.abs
          abs <= 0.04045 ? value / 12.92 : signed(value, ((abs + 0.055) / 1.055)**2.4)
        end

        # @return [Float] a linear sRGB (or display-p3) channel gamma-encoded
        def srgb_from_linear(value)
          abs = value.abs
          abs > 0.0031308 ? signed(value, (1.055 * (abs**(1 / 2.4))) - 0.055) : 12.92 * value
        end

        # @return [Float]
        def a98_to_linear(value)
          signed(value, value.abs**(563.0 / 256))
        end

        # @return [Float]
        def a98_from_linear(value)
          signed(value, value.abs**(256.0 / 563))
        end

        # @return [Float]
        def prophoto_to_linear(value)
          abs = value.abs
          abs <= 16.0 / 512 ? value / 16 : signed(value, abs**1.8)
        end

        # @return [Float]
        def prophoto_from_linear(value)
          abs = value.abs
          abs >= 1.0 / 512 ? signed(value, abs**(1 / 1.8)) : 16 * value
        end

        # rec2020 uses the pure 2.4 gamma of BT.1886, as CSS Color 4 now does.
        # @return [Float]
        def rec2020_to_linear(value)
          signed(value, value.abs**2.4)
        end

        # @return [Float]
        def rec2020_from_linear(value)
          signed(value, value.abs**(1 / 2.4))
        end

        # @return [Array<Float>] XYZ (D50) of a Lab color
        def lab_to_xyz(lightness, a, b)
          f1 = (lightness + 16) / 116
          y = lightness > LAB_KAPPA * LAB_EPSILON ? f1**3 : lightness / LAB_KAPPA
          [lab_f_inverse((a / 500) + f1) * D50[0], y * D50[1], lab_f_inverse(f1 - (b / 200)) * D50[2]]
        end

        # @return [Float]
        def lab_f_inverse(value)
          cubed = value**3
          cubed > LAB_EPSILON ? cubed : ((116 * value) - 16) / LAB_KAPPA
        end

        # @return [Array<Float>] Lab of an XYZ (D50) color
        def xyz_to_lab(*xyz)
          f0, f1, f2 = xyz.zip(D50).map { |value, white| lab_f(value / white) }
          [(116 * f1) - 16, 500 * (f0 - f1), 200 * (f1 - f2)]
        end

        # @return [Float]
        def lab_f(value)
          value > LAB_EPSILON ? value**(1.0 / 3) : ((LAB_KAPPA * value) + 16) / 116
        end

        # @return [Array<Float>] OKLab's LMS (linear) of an OKLab color
        def oklab_to_lms(lightness, a, b)
          Matrices.apply(Matrices::OKLAB_TO_LMS, [lightness, a, b]).map { |value| value**3 }
        end

        # @return [Array<Float>] OKLab of an LMS (linear) color
        def lms_to_oklab(long, medium, short)
          roots = [long, medium, short].map { |value| signed(value, value.abs**(1.0 / 3)) }
          Matrices.apply(Matrices::LMS_TO_OKLAB, roots)
        end

        # @return [Array<Float>] lightness, chroma and hue (degrees) of a
        #   rectangular Lab or OKLab color
        def to_polar(lightness, a, b)
          hue = Math.atan2(b, a) * 180 / Math::PI
          [lightness, Math.sqrt((a * a) + (b * b)), hue.negative? ? hue + 360 : hue]
        end

        # @return [Array<Float>] lightness, a and b of a polar color
        def to_rectangular(lightness, chroma, hue)
          radians = hue * Math::PI / 180
          [lightness, chroma * Math.cos(radians), chroma * Math.sin(radians)]
        end
      end

      private_constant :Formulas
    end
  end
end
