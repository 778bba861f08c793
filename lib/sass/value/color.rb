# frozen_string_literal: true

module Sass
  module Value
    # A Sass color, in any of the color spaces of CSS Color 4 that Sass knows:
    # the legacy +rgb+, +hsl+ and +hwb+; +srgb+, +srgb-linear+, +display-p3+,
    # +display-p3-linear+, +a98-rgb+, +prophoto-rgb+ and +rec2020+; +xyz+
    # (also called +xyz-d65+) and +xyz-d50+; +lab+, +lch+, +oklab+ and +oklch+.
    #
    # A color holds three channels, in its space's own units (+rgb+ from 0 to
    # 255, hues in degrees, HSL and HWB percentages from 0 to 100, Lab
    # lightness from 0 to 100 and OKLab lightness from 0 to 1, ...), and an
    # alpha from 0 to 1. Any of them may be _missing_ (+none+ in CSS), which
    # this API gives as nil. Colors are immutable.
    # @see https://sass-lang.com/documentation/js-api/classes/sasscolor/
    class Color
      include Value

      # @overload initialize(red:, green:, blue:, alpha: 1, space: 'rgb')
      #   A legacy RGB color, channels from 0 to 255.
      # @overload initialize(hue:, saturation:, lightness:, alpha: 1, space: 'hsl')
      #   A legacy HSL color: hue in degrees, saturation and lightness in percent.
      # @overload initialize(hue:, whiteness:, blackness:, alpha: 1, space: 'hwb')
      #   A legacy HWB color: hue in degrees, whiteness and blackness in percent.
      # @overload initialize(space:, lightness:, a:, b:, alpha: 1)
      #   A color in +lab+ (lightness 0-100) or +oklab+ (lightness 0-1).
      # @overload initialize(space:, lightness:, chroma:, hue:, alpha: 1)
      #   A color in +lch+ or +oklch+.
      # @overload initialize(space:, red:, green:, blue:, alpha: 1)
      #   A color in +srgb+, +srgb-linear+, +display-p3+, +display-p3-linear+,
      #   +a98-rgb+, +prophoto-rgb+ or +rec2020+ (channels from 0 to 1).
      # @overload initialize(space:, x:, y:, z:, alpha: 1)
      #   A color in +xyz+, +xyz-d50+ or +xyz-d65+.
      #
      # Every channel keyword is required; nil makes that channel missing.
      # Without +space:+, the keywords imply +rgb+, +hsl+ or +hwb+. Channels
      # are kept as given, out of gamut or not, except that hues are reduced
      # modulo 360 and a negative HSL saturation or LCH/OKLCh chroma is made
      # positive by turning the hue half round.
      # @param alpha [Numeric, nil] from 0 to 1; nil is missing; 1 if omitted
      # @param space [::String, Symbol]
      # @raise [ArgumentError] for an unknown space, a missing or unexpected
      #   keyword, a non-numeric channel or an alpha outside 0..1
      def initialize(**options)
        space, channels, alpha = Construction.parse(options)
        assign(space, channels, alpha)
      end

      # @return [::String] the name of this color's space (+xyz-d65+ is
      #   reported as +xyz+)
      attr_reader :space

      # @param space [::String, Symbol]
      # @return [Color] this color converted to +space+ (self if already in
      #   it). Channels analogous to missing ones stay missing, and a hue the
      #   conversion makes powerless becomes missing; as in Sass, a missing
      #   alpha becomes 0.
      def to_space(space)
        target = Space.fetch(space)
        return self if target.name == @space

        Color.send(:for_space, target, Conversions.convert(Space.fetch(@space), @channels, target), alpha)
      end

      # @return [::Boolean] whether the color is in +rgb+, +hsl+ or +hwb+
      def legacy?
        Space.fetch(@space).legacy?
      end

      # @param space [::String, Symbol] the space whose gamut to check
      # @return [::Boolean] whether the color, converted to +space+, is within
      #   that space's gamut (always true for an unbounded space)
      def in_gamut?(space = @space)
        target = Space.fetch(space || @space)
        Gamut.in_gamut?(target, to_space(target.name).channels_or_nil)
      end

      # @param method [::String, Symbol] +'clip'+ (clamp the channels) or
      #   +'local-minde'+ (CSS Color 4 gamut mapping, reducing OKLCh chroma)
      # @param space [::String, Symbol] the space whose gamut to map into
      # @return [Color] the color mapped into +space+'s gamut, in this
      #   color's space
      def to_gamut(method:, space: @space)
        unless (method.is_a?(::String) || method.is_a?(Symbol)) && Gamut::METHODS.include?(method.to_s)
          raise ArgumentError, "method: must be one of #{Gamut::METHODS.join(', ')}, got #{method.inspect}"
        end

        target = Space.fetch(space || @space)
        Gamut.map(to_space(target.name), method.to_s).to_space(@space)
      end

      # @return [Array<Float, nil>] the three channels, nil for missing
      def channels_or_nil
        @channels
      end

      # @return [Array<Float>] the three channels, 0 for missing
      def channels
        @channels.map { |value| value || 0.0 }.freeze
      end

      # @param name [::String, Symbol] a channel of +space+, or +'alpha'+
      # @param space [::String, Symbol] the space to read the channel in
      # @return [Float] the channel's value (0 if missing) once converted to
      #   +space+
      # @raise [ArgumentError] if +space+ has no such channel
      def channel(name, space: @space)
        target = Space.fetch(space || @space)
        name = target.check_channel(name)
        return alpha if name == 'alpha'

        to_space(target.name).channels_or_nil[target.index(name)] || 0.0
      end

      # @return [Float] alpha, 0 if missing
      def alpha
        @alpha || 0.0
      end

      # @param name [::String, Symbol] a channel of this color's space, or
      #   +'alpha'+
      # @return [::Boolean] whether that channel is missing
      def channel_missing?(name)
        space = Space.fetch(@space)
        name = space.check_channel(name)
        name == 'alpha' ? @alpha.nil? : @channels[space.index(name)].nil?
      end

      # A hue is powerless when it makes no difference: in HSL when the
      # saturation is 0, in HWB when whiteness and blackness add up to 100%
      # or more, in LCH and OKLCh when the chroma is 0.
      # @param name [::String, Symbol] a channel of +space+, or +'alpha'+
      # @param space [::String, Symbol] the space to check in
      # @return [::Boolean] whether the channel is powerless once converted
      def channel_powerless?(name, space: @space)
        target = Space.fetch(space || @space)
        return false unless target.check_channel(name) == 'hue'

        Conversions.powerless_hue?(target.name, to_space(target.name).channels)
      end

      # Mixes this color with +other+ in this color's space, as +color.mix()+.
      # @param other [Color]
      # @param method [::String, Symbol, nil] for a polar space, the hue
      #   interpolation method: +shorter+ (the default), +longer+,
      #   +increasing+ or +decreasing+; must be nil for other spaces
      # @param weight [Numeric] how much of this color, from 0 to 1
      # @return [Color]
      def interpolate(other, method: nil, weight: 0.5)
        raise ArgumentError, "can only interpolate with a color, got #{other.inspect}" unless other.is_a?(Color)

        space = Space.fetch(@space)
        Interpolation.mix(self, other, space, Interpolation.hue_method(space, method), Interpolation.weight(weight))
      end

      # Changes channels, in this color's space or in +space:+ (converting
      # there and back). A nil channel becomes missing; but for a legacy color
      # without +space:+, nil leaves the channel as it is, and HSL or HWB
      # channel names change it in that space (both deprecated).
      # @param space [::String, Symbol, nil] the space of the channels
      # @return [Color] in this color's space
      # @raise [ArgumentError] for a channel the space lacks, or a bad value
      def change(**options)
        Changing.change(self, options)
      end

      # @!group Legacy channels (computed in rgb, hsl or hwb)

      # @return [Float] the red channel in +rgb+, from 0 to 255
      def red
        channel('red', space: 'rgb')
      end

      # @return [Float] the green channel in +rgb+, from 0 to 255
      def green
        channel('green', space: 'rgb')
      end

      # @return [Float] the blue channel in +rgb+, from 0 to 255
      def blue
        channel('blue', space: 'rgb')
      end

      # @return [Float] the hue in +hsl+, in degrees
      def hue
        channel('hue', space: 'hsl')
      end

      # @return [Float] the saturation in +hsl+, in percent
      def saturation
        channel('saturation', space: 'hsl')
      end

      # @return [Float] the lightness in +hsl+, in percent
      def lightness
        channel('lightness', space: 'hsl')
      end

      # @return [Float] the whiteness in +hwb+, in percent
      def whiteness
        channel('whiteness', space: 'hwb')
      end

      # @return [Float] the blackness in +hwb+, in percent
      def blackness
        channel('blackness', space: 'hwb')
      end

      # @!endgroup

      # @return [Color] self
      def assert_color(_name = nil)
        self
      end

      # Colors are equal when in the same space with the same channels and
      # alpha (within 1e-11; missing only equals missing). Legacy colors in
      # different legacy spaces are compared in +rgb+.
      # @return [::Boolean]
      def ==(other)
        return false unless other.is_a?(Sass::Value::Color) && legacy? == other.legacy?
        return same_channels?(other) && same_alpha?(other) if other.space == @space
        return false unless legacy?

        same_alpha?(other) && to_space('rgb').send(:same_channels?, other.to_space('rgb'))
      end

      # @return [Integer] consistent with {#==}
      def hash
        if legacy?
          [to_space('rgb').channels.map { |value| FuzzyMath.hash_number(value) }, FuzzyMath.hash_number(alpha)].hash
        else
          [@space, channels.map { |value| FuzzyMath.hash_number(value) }, FuzzyMath.hash_number(alpha)].hash
        end
      end

      # @return [::String] the color in CSS syntax, such as +rgb(255 0 0)+,
      #   +lab(50% 20 30 / 0.5)+ or +color(display-p3 1 none 0)+
      def inspect
        Serialization.css(Space.fetch(@space), @channels, @alpha)
      end

      # Emits a deprecation warning, shown when Ruby's +:deprecated+ warnings
      # are enabled.
      # @param name [::String] the deprecation's name, as Sass calls it
      # @param message [::String]
      # @return [void]
      # @api private
      def self.deprecation(name, message)
        Kernel.warn("DEPRECATION WARNING [#{name}]: #{message}", category: :deprecated)
      end

      # A color from channels already in +space+'s units, as conversions make
      # them (normalized as {#initialize} does, but not checked).
      # @param space [Space]
      # @param channels [Array<Numeric, nil>]
      # @param alpha [Numeric, nil]
      # @return [Color]
      def self.for_space(space, channels, alpha)
        allocate.tap { |color| color.send(:assign, space, channels, alpha) }
      end
      private_class_method :for_space

      private

      # @return [Float, nil] alpha, nil if missing
      def alpha_or_nil
        @alpha
      end

      def assign(space, channels, alpha)
        channels = channels.map { |value| value&.to_f }
        hue = space.hue_index
        if hue && %w[hsl lch oklch].include?(space.name) && channels[1]&.negative?
          channels[1] = -channels[1]
          channels[hue] += 180 unless channels[hue].nil?
        end
        channels[hue] = normalize_hue(channels[hue]) if hue
        @space = space.name
        @channels = channels.freeze
        @alpha = alpha&.to_f
        freeze
      end

      def normalize_hue(hue)
        hue.nil? || (hue >= 0 && hue < 360) ? hue : hue % 360
      end

      def same_channels?(other)
        @channels.zip(other.channels_or_nil).all? { |a, b| Color.send(:fuzzy_equal?, a, b) }
      end

      def same_alpha?(other)
        Color.send(:fuzzy_equal?, @alpha, other.send(:alpha_or_nil))
      end

      class << self
        private

        def fuzzy_equal?(value1, value2)
          value1.nil? || value2.nil? ? value1.nil? && value2.nil? : FuzzyMath.equals(value1, value2)
        end
      end
    end
  end
end

require_relative 'color/space'
require_relative 'color/matrices'
require_relative 'color/formulas'
require_relative 'color/hsl_hwb'
require_relative 'color/conversions'
require_relative 'color/gamut'
require_relative 'color/interpolation'
require_relative 'color/construction'
require_relative 'color/changing'
require_relative 'color/serialization'
