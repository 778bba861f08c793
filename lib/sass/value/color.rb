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
      # A channel given as nil, or left out when +space:+ is given, is
      # missing. Without +space:+, all three channels of +rgb+, +hsl+ or +hwb+
      # must be given. Channels are kept as given (an Integer stays an
      # Integer), out of gamut or not, except that hues are reduced modulo 360
      # and a negative HSL saturation or LCH/OKLCh chroma is made positive by
      # turning the hue half round.
      # @param alpha [Numeric, nil] from 0 to 1; nil is missing; 1 if omitted
      # @param space [::String, Symbol]
      # @raise [ScriptError] for an unknown space, no space, a keyword that is
      #   not a channel of the space, a channel that is not a number or an
      #   alpha outside 0..1
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
      # @raise [ScriptError] for an unknown method or space
      def to_gamut(method:, space: @space)
        unless (method.is_a?(::String) || method.is_a?(Symbol)) && Gamut::METHODS.include?(method.to_s)
          raise Sass::ScriptError.new("Unknown gamut map method \"#{method}\".", 'method')
        end

        target = Space.fetch(space || @space)
        Gamut.map(to_space(target.name), method.to_s).to_space(@space)
      end

      # @return [Array<Numeric, nil>] the three channels, nil for missing
      def channels_or_nil
        @channels
      end

      # @return [Array<Numeric>] the three channels, 0 for missing
      def channels
        @channels.map { |value| value || 0 }.freeze
      end

      # @param name [::String, Symbol] a channel of +space+, or +'alpha'+
      # @param space [::String, Symbol] the space to read the channel in
      # @return [Numeric] the channel's value (0 if missing) once converted to
      #   +space+
      # @raise [ScriptError] if +space+ has no such channel
      def channel(name, space: @space)
        color = to_space(space || @space)
        name = color.send(:channel_name!, name)
        return alpha if name == 'alpha'

        color.channels[Space.fetch(color.space).index(name)]
      end

      # @return [Numeric] alpha, 0 if missing
      def alpha
        @alpha || 0
      end

      # @param name [::String, Symbol] a channel of this color's space, or
      #   +'alpha'+
      # @return [::Boolean] whether that channel is missing
      # @raise [ScriptError] if this color's space has no such channel
      def channel_missing?(name)
        name = channel_name!(name)
        name == 'alpha' ? @alpha.nil? : @channels[Space.fetch(@space).index(name)].nil?
      end

      # A hue is powerless when it makes no difference: in HSL when the
      # saturation is 0, in HWB when whiteness and blackness add up to 100%
      # or more, in LCH and OKLCh when the chroma is 0.
      # @param name [::String, Symbol] a channel of +space+, or +'alpha'+
      # @param space [::String, Symbol] the space to check in
      # @return [::Boolean] whether the channel is powerless once converted
      # @raise [ScriptError] if +space+ has no such channel
      def channel_powerless?(name, space: @space)
        color = to_space(space || @space)
        return false unless color.send(:channel_name!, name) == 'hue'

        Conversions.powerless_hue?(color.space, color.channels.map(&:to_f))
      end

      # Mixes this color with +other+ in this color's space, as +color.mix()+.
      # @param other [Color]
      # @param method [::String, Symbol, nil] for a polar space, the hue
      #   interpolation method: +shorter+ (the default), +longer+,
      #   +increasing+ or +decreasing+; must be nil for other spaces
      # @param weight [Numeric] how much of this color, from 0 to 1
      # @return [Color]
      # @raise [ScriptError] if +other+ is not a color, for an unknown hue
      #   interpolation method (or one for a rectangular space), or a weight
      #   outside 0..1
      def interpolate(other, method: nil, weight: 0.5)
        raise Sass::ScriptError.new("#{other.inspect} is not a color", 'other') unless other.is_a?(Color)

        space = Space.fetch(@space)
        Interpolation.mix(self, other, space, Interpolation.hue_method(space, method), Interpolation.weight(weight))
      end

      # Changes channels, in this color's space or in +space:+ (converting
      # there and back). A nil channel becomes missing; but for a legacy color
      # without +space:+, nil leaves the channel as it is, and HSL or HWB
      # channel names change it in that space (both deprecated).
      # @param space [::String, Symbol, nil] the space of the channels
      # @return [Color] in this color's space
      # @raise [ScriptError] for a channel the space lacks, or a bad value
      def change(**options)
        Changing.change(self, options)
      end

      # @!group Legacy channels (computed in rgb, hsl or hwb)

      # @return [Integer] the red channel in +rgb+, from 0 to 255, rounded
      def red
        channel('red', space: 'rgb').round
      end

      # @return [Integer] the green channel in +rgb+, from 0 to 255, rounded
      def green
        channel('green', space: 'rgb').round
      end

      # @return [Integer] the blue channel in +rgb+, from 0 to 255, rounded
      def blue
        channel('blue', space: 'rgb').round
      end

      # @return [Numeric] the hue in +hsl+, in degrees (0 for a grey)
      def hue
        channel('hue', space: 'hsl')
      end

      # @return [Numeric] the saturation in +hsl+, in percent
      def saturation
        channel('saturation', space: 'hsl')
      end

      # @return [Numeric] the lightness in +hsl+, in percent
      def lightness
        channel('lightness', space: 'hsl')
      end

      # @return [Numeric] the whiteness in +hwb+, in percent
      def whiteness
        channel('whiteness', space: 'hwb')
      end

      # @return [Numeric] the blackness in +hwb+, in percent
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

      # @param color [Color]
      # @param inspect [::Boolean]
      # @return [::String] +color+ as Sass writes it (see {Serialization})
      def self.serialize(color, inspect:)
        Serialization.write(color, inspect:)
      end
      private_class_method :serialize

      private

      # @return [Numeric, nil] alpha, nil if missing
      def alpha_or_nil
        @alpha
      end

      # @return [::String] +name+ as a String
      # @raise [ScriptError] unless +name+ is +alpha+ or a channel of this
      #   color's space
      def channel_name!(name)
        Space.fetch(@space).channel_name(name) ||
          raise(Sass::ScriptError.new("Color #{inspect} doesn't have a channel named \"#{name}\".", name))
      end

      # Keeps the channels as given, but for the hue, which is reduced modulo
      # 360 (and turned half round for a negative saturation or chroma, which
      # is made positive) exactly as the compiler does, so that both hold the
      # same number.
      def assign(space, channels, alpha)
        channels = channels.dup
        hue = space.hue_index
        if hue
          invert = false
          if %w[hsl lch oklch].include?(space.name) && !channels[1].nil?
            invert = FuzzyMath.less_than(channels[1], 0)
            channels[1] = channels[1].abs
          end
          channels[hue] = ((channels[hue] % 360) + 360 + (invert ? 180 : 0)) % 360 unless channels[hue].nil?
        end
        @space = space.name
        @channels = channels.freeze
        @alpha = alpha
        freeze
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
require_relative 'color/names'
require_relative 'color/serialization'
