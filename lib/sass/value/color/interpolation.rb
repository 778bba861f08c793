# frozen_string_literal: true

module Sass
  module Value
    class Color
      # Mixing two colors in a space, as +color.mix()+ does: channels are
      # premultiplied by alpha, a channel missing in one color takes the other
      # color's value, and hues go round the wheel as the hue interpolation
      # method says.
      module Interpolation
        module_function

        # The hue interpolation methods.
        HUE_METHODS = %w[shorter longer increasing decreasing].freeze

        # Channels that stand for one another across spaces, by name.
        ANALOGOUS = { 'red' => :red, 'x' => :red, 'green' => :green, 'y' => :green, 'blue' => :blue, 'z' => :blue,
                      'chroma' => :chroma, 'saturation' => :chroma, 'lightness' => :lightness,
                      'hue' => :hue }.freeze

        # @param color1 [Color]
        # @param color2 [Color]
        # @param space [Space] the space to mix in
        # @param hue_method [::String, nil] one of {HUE_METHODS} (polar spaces)
        # @param weight [Float] how much of +color1+ there is, from 0 to 1
        # @return [Color] in +space+ (or +color1+ or +color2+ themselves for a
        #   weight of 1 or 0)
        def mix(color1, color2, space, hue_method, weight)
          return color2 if FuzzyMath.equals(weight, 0)
          return color1 if FuzzyMath.equals(weight, 1)

          in1 = color1.to_space(space.name)
          in2 = color2.to_space(space.name)
          missing1 = Array.new(3) { |i| analogous_missing?(color1, in1, i) }
          missing2 = Array.new(3) { |i| analogous_missing?(color2, in2, i) }
          values1 = Array.new(3) { |i| (missing1[i] ? in2 : in1).channels[i] }
          values2 = Array.new(3) { |i| (missing2[i] ? in1 : in2).channels[i] }
          alpha, multipliers = mix_alpha(color1, color2, weight)
          channels = Array.new(3) do |i|
            next if missing1[i] && missing2[i]
            next hue(values1[i], values2[i], hue_method, weight) if i == space.hue_index

            ((values1[i] * multipliers[0]) + (values2[i] * multipliers[1])) / (alpha || 1)
          end
          Color.send(:for_space, space, channels, alpha)
        end

        # @return [Array(Float or nil, Array(Float, Float))] the mixed alpha
        #   (nil if both are missing) and each color's premultiplying factor
        def mix_alpha(color1, color2, weight)
          alpha1 = color1.send(:alpha_or_nil)
          alpha2 = color2.send(:alpha_or_nil)
          multipliers = [(alpha1 || 1) * weight, (alpha2 || 1) * (1 - weight)]
          return [nil, multipliers] if alpha1.nil? && alpha2.nil?

          [((alpha1 || color2.alpha) * weight) + ((alpha2 || color1.alpha) * (1 - weight)), multipliers]
        end

        # @return [::Boolean] whether channel +index+ of +converted+ (which is
        #   +original+ in the mixing space) is missing, or is analogous to a
        #   channel missing in +original+
        def analogous_missing?(original, converted, index)
          return true if converted.channels_or_nil[index].nil?
          return false if original.equal?(converted)

          role = ANALOGOUS[Space.fetch(converted.space).channels[index]]
          source = Space.fetch(original.space).channels.find { |name| role && ANALOGOUS[name] == role }
          !source.nil? && original.channel_missing?(source)
        end

        # @return [Float] a hue between +hue1+ and +hue2+ (+weight+ of +hue1+)
        def hue(hue1, hue2, method, weight)
          hue1, hue2 = unwrap(hue1, hue2, method)
          (hue1 * weight) + (hue2 * (1 - weight))
        end

        # @return [Array(Float, Float)] the hues, one turned a full circle if
        #   need be so that going from one to the other follows +method+
        def unwrap(hue1, hue2, method)
          case method
          when 'shorter' then shorter(hue1, hue2)
          when 'longer' then longer(hue1, hue2)
          when 'increasing' then hue2 < hue1 ? [hue1, hue2 + 360] : [hue1, hue2]
          else hue1 < hue2 ? [hue1 + 360, hue2] : [hue1, hue2]
          end
        end

        # @return [Array(Float, Float)]
        def shorter(hue1, hue2)
          difference = hue2 - hue1
          if difference > 180
            [hue1 + 360, hue2]
          elsif difference < -180
            [hue1, hue2 + 360]
          else
            [hue1, hue2]
          end
        end

        # @return [Array(Float, Float)]
        def longer(hue1, hue2)
          difference = hue2 - hue1
          if difference.positive? && difference < 180
            [hue1, hue2 + 360]
          elsif difference > -180 && difference <= 0
            [hue1 + 360, hue2]
          else
            [hue1, hue2]
          end
        end

        # @param space [Space] the space to mix in
        # @param method [::String, Symbol, nil]
        # @return [::String, nil] the hue interpolation method, +shorter+ by
        #   default for a polar space
        # @raise [ScriptError] for an unknown method, or one for a rectangular
        #   space
        def hue_method(space, method)
          return (space.polar? ? 'shorter' : nil) if method.nil?

          unless (method.is_a?(::String) || method.is_a?(Symbol)) && HUE_METHODS.include?(method.to_s)
            raise Sass::ScriptError, "Unknown hue interpolation method \"#{method}\"."
          end

          unless space.polar?
            raise Sass::ScriptError,
                  "Hue interpolation method may not be set for rectangular color space #{space.name}."
          end

          method.to_s
        end

        # @return [Numeric] the weight (0.5 for nil), 0 or 1 if it fuzzily
        #   equals one
        # @raise [ScriptError] unless it is a number from 0 to 1
        def weight(weight)
          return 0.5 if weight.nil?

          number = FuzzyMath.between(weight, 0, 1) if weight.is_a?(Numeric) && weight.real?
          return number unless number.nil?

          raise Sass::ScriptError.new("Expected #{weight.inspect} to be within 0 and 1.", 'weight')
        end
      end

      private_constant :Interpolation
    end
  end
end
