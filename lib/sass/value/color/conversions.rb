# frozen_string_literal: true

module Sass
  module Value
    class Color
      # Converts channels from one space to another, as Sass does: the numbers
      # go through the spaces' linear-light hubs (missing channels counting as
      # 0), then channels of the result are marked missing where an analogous
      # channel of the original was missing, and a hue that conversion makes
      # powerless is marked missing too.
      module Conversions
        module_function

        # The spaces whose channels derive from gamma-encoded sRGB directly.
        SRGB_FAMILY = %w[rgb hsl hwb srgb].freeze

        # Pairs converted straight between their rectangular and polar forms.
        POLAR_PAIRS = [%w[lab lch], %w[lch lab], %w[oklab oklch], %w[oklch oklab]].freeze

        # Which channels stand for the same thing across spaces ("analogous"),
        # by channel name; RGB and XYZ channels pair up by position instead.
        ROLES = { 'lightness' => :lightness, 'saturation' => :chroma, 'chroma' => :chroma,
                  'hue' => :hue, 'a' => :a, 'b' => :b }.freeze

        # From a space's channels to its hub's linear-light vector.
        TO_LINEAR = {
          'srgb-linear' => ->(values) { values },
          'display-p3' => ->(values) { values.map { |value| Formulas.srgb_to_linear(value) } },
          'display-p3-linear' => ->(values) { values },
          'a98-rgb' => ->(values) { values.map { |value| Formulas.a98_to_linear(value) } },
          'prophoto-rgb' => ->(values) { values.map { |value| Formulas.prophoto_to_linear(value) } },
          'rec2020' => ->(values) { values.map { |value| Formulas.rec2020_to_linear(value) } },
          'xyz' => ->(values) { values },
          'xyz-d50' => ->(values) { values },
          'lab' => ->(values) { Formulas.lab_to_xyz(*values) },
          'lch' => ->(values) { Formulas.lab_to_xyz(*Formulas.to_rectangular(*values)) },
          'oklab' => ->(values) { Formulas.oklab_to_lms(*values) },
          'oklch' => ->(values) { Formulas.oklab_to_lms(*Formulas.to_rectangular(*values)) }
        }.freeze

        # From a hub's linear-light vector to a space's channels.
        FROM_LINEAR = {
          'srgb-linear' => ->(vector) { vector },
          'display-p3' => ->(vector) { vector.map { |value| Formulas.srgb_from_linear(value) } },
          'display-p3-linear' => ->(vector) { vector },
          'a98-rgb' => ->(vector) { vector.map { |value| Formulas.a98_from_linear(value) } },
          'prophoto-rgb' => ->(vector) { vector.map { |value| Formulas.prophoto_from_linear(value) } },
          'rec2020' => ->(vector) { vector.map { |value| Formulas.rec2020_from_linear(value) } },
          'xyz' => ->(vector) { vector },
          'xyz-d50' => ->(vector) { vector },
          'lab' => ->(vector) { Formulas.xyz_to_lab(*vector) },
          'lch' => ->(vector) { Formulas.to_polar(*Formulas.xyz_to_lab(*vector)) },
          'oklab' => ->(vector) { Formulas.lms_to_oklab(*vector) },
          'oklch' => ->(vector) { Formulas.to_polar(*Formulas.lms_to_oklab(*vector)) }
        }.freeze

        # @param from [Space]
        # @param channels [Array<Numeric, nil>] in +from+, nil for missing
        # @param to [Space]
        # @return [Array<Float, nil>] the channels in +to+, nil for missing
        def convert(from, channels, to)
          return channels if from == to

          values = numbers(from, channels.map { |value| value.nil? ? 0.0 : value.to_f }, to)
          mark_missing(from, channels, to, values)
        end

        # @return [Array<Float>] the channels' values in +to+
        def numbers(from, values, to)
          if SRGB_FAMILY.include?(from.name) && SRGB_FAMILY.include?(to.name)
            from_srgb(to, to_srgb(from, values))
          elsif POLAR_PAIRS.include?([from.name, to.name])
            to.polar? ? Formulas.to_polar(*values) : Formulas.to_rectangular(*values)
          else
            from_linear(to, Matrices.transform(from.hub, to.hub, to_linear(from, values)))
          end
        end

        # @return [Array<Float>] gamma-encoded sRGB of a color in {SRGB_FAMILY}
        def to_srgb(space, values)
          case space.name
          when 'rgb' then values.map { |value| value / 255 }
          when 'hsl' then HslHwb.hsl_to_srgb(*values)
          when 'hwb' then HslHwb.hwb_to_srgb(*values)
          else values
          end
        end

        # @return [Array<Float>] a color in {SRGB_FAMILY} from gamma-encoded sRGB
        def from_srgb(space, values)
          case space.name
          when 'rgb' then values.map { |value| value * 255 }
          when 'hsl' then HslHwb.srgb_to_hsl(*values)
          when 'hwb' then HslHwb.srgb_to_hwb(*values)
          else values
          end
        end

        # @return [Array<Float>]
        def to_linear(space, values)
          if SRGB_FAMILY.include?(space.name)
            to_srgb(space, values).map { |value| Formulas.srgb_to_linear(value) }
          else
            TO_LINEAR.fetch(space.name).call(values)
          end
        end

        # @return [Array<Float>]
        def from_linear(space, vector)
          if SRGB_FAMILY.include?(space.name)
            from_srgb(space, vector.map { |value| Formulas.srgb_from_linear(value) })
          else
            FROM_LINEAR.fetch(space.name).call(vector)
          end
        end

        # Marks as missing (nil) the channels of a converted color whose
        # analogous channels were missing in the original, and hues the
        # conversion made powerless.
        # @return [Array<Float, nil>]
        def mark_missing(from, channels, to, values)
          return carry_by_position(from, channels, values) if to.rectangular_rgb_or_xyz?

          roles = from.channels.zip(channels).filter_map { |name, value| ROLES[name] if value.nil? }
          result = to.channels.zip(values).map { |name, value| roles.include?(ROLES[name]) ? nil : value }
          hue = to.hue_index
          result[hue] = nil if hue && powerless_hue?(to.name, values)
          result[1] = result[2] = nil if from.name == 'lch' && to.name == 'lab' && dark?(channels[0])
          result
        end

        # @return [Array<Float, nil>] +values+, missing where the original RGB
        #   or XYZ channel in the same position was missing
        def carry_by_position(from, channels, values)
          return values unless from.rectangular_rgb_or_xyz?

          values.each_with_index.map { |value, i| channels[i].nil? ? nil : value }
        end

        # @return [::Boolean] whether the hue of a color in an HSL, HWB, LCH or
        #   OKLCh space with these channels is powerless
        def powerless_hue?(space, values)
          return FuzzyMath.greater_than_or_equals(values[1] + values[2], 100) if space == 'hwb'

          FuzzyMath.equals(values[1], 0)
        end

        # @return [::Boolean] whether an LCH lightness leaves a and b powerless
        #   in Lab (Sass treats a missing or zero lightness so)
        def dark?(lightness)
          lightness.nil? || FuzzyMath.equals(lightness, 0)
        end
      end

      private_constant :Conversions
    end
  end
end
