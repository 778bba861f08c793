# frozen_string_literal: true

module Sass
  module Value
    class Color
      # One of the color spaces Sass knows: its name, its three channels with
      # their conventional ranges, and the linear-light space ("hub") its
      # conversions pass through.
      class Space
        # @return [::String] the space's name, lowercase
        attr_reader :name

        # @return [Array<::String>] the names of its three channels, in order
        attr_reader :channels

        # @return [Array<Array(Float, Float), nil>] each channel's conventional
        #   +[lower, upper]+ bounds, nil for a polar hue
        attr_reader :ranges

        # @return [Symbol] the linear space conversions from and to this space
        #   go through (a key of the conversion matrices)
        attr_reader :hub

        # @param name [::String]
        # @param channels [Array<::String>]
        # @param ranges [Array<Array(Numeric, Numeric), nil>]
        # @param hub [Symbol]
        # @param flags [Hash{Symbol => ::Boolean}] +legacy:+ and +bounded:+
        def initialize(name, channels, ranges, hub:, **flags)
          @name = name.freeze
          @channels = channels.map(&:freeze).freeze
          @ranges = ranges.map { |range| range&.map(&:to_f)&.freeze }.freeze
          @hub = hub
          @legacy = flags.fetch(:legacy, false)
          @bounded = flags.fetch(:bounded, false)
          freeze
        end

        # @return [::Boolean] whether this is +rgb+, +hsl+ or +hwb+
        def legacy?
          @legacy
        end

        # @return [::Boolean] whether channels outside their ranges are out of
        #   gamut
        def bounded?
          @bounded
        end

        # @return [::Boolean] whether a channel is a polar-angle hue
        def polar?
          channels.include?('hue')
        end

        # @return [Integer, nil] the index of the hue channel
        def hue_index
          channels.index('hue')
        end

        # @return [Integer, nil] the index of the channel called +channel+
        def index(channel)
          channels.index(channel)
        end

        # @return [::Boolean] whether the channels are red, green and blue or
        #   x, y and z: the spaces whose channels stand for one another
        def rectangular_rgb_or_xyz?
          channels == RGB_CHANNELS || channels == XYZ_CHANNELS
        end

        # @return [::String]
        def to_s
          name
        end

        # @param name [::String, Symbol] a channel of this space, or +alpha+
        # @return [::String, nil] the name as a String, nil if this space has
        #   no such channel
        def channel_name(name)
          return nil unless name.is_a?(::String) || name.is_a?(Symbol)

          name = name.to_s
          name if name == 'alpha' || channels.include?(name)
        end

        # Looks a space up by name (a String or Symbol, any case).
        # @param name [::String, Symbol]
        # @param argument [::String, nil] the argument's name, for the error
        # @return [Space]
        # @raise [ScriptError] for an unknown space
        def self.fetch(name, argument = nil)
          key = name.to_s.downcase if name.is_a?(::String) || name.is_a?(Symbol)
          key = 'xyz' if key == 'xyz-d65'
          SPACES.fetch(key) do
            raise Sass::ScriptError.new("Unknown color space \"#{name}\".", argument)
          end
        end

        RGB_CHANNELS = %w[red green blue].freeze
        XYZ_CHANNELS = %w[x y z].freeze
        UNIT = [[0, 1]] * 3
        RGB_RANGES = [[0, 255]] * 3
        PERCENTS = [[0, 100], [0, 100]].freeze
        LEGACY = { legacy: true, bounded: true }.freeze

        # The spaces, by name.
        SPACES = [
          new('rgb', RGB_CHANNELS, RGB_RANGES, hub: :srgb, **LEGACY),
          new('hsl', %w[hue saturation lightness], [nil, *PERCENTS], hub: :srgb, **LEGACY),
          new('hwb', %w[hue whiteness blackness], [nil, *PERCENTS], hub: :srgb, **LEGACY),
          new('srgb', RGB_CHANNELS, UNIT, hub: :srgb, bounded: true),
          new('srgb-linear', RGB_CHANNELS, UNIT, hub: :srgb, bounded: true),
          new('display-p3', RGB_CHANNELS, UNIT, hub: :p3, bounded: true),
          new('display-p3-linear', RGB_CHANNELS, UNIT, hub: :p3, bounded: true),
          new('a98-rgb', RGB_CHANNELS, UNIT, hub: :a98, bounded: true),
          new('prophoto-rgb', RGB_CHANNELS, UNIT, hub: :prophoto, bounded: true),
          new('rec2020', RGB_CHANNELS, UNIT, hub: :rec2020, bounded: true),
          new('xyz', XYZ_CHANNELS, UNIT, hub: :xyz65),
          new('xyz-d50', XYZ_CHANNELS, UNIT, hub: :xyz50),
          new('lab', %w[lightness a b], [[0, 100], [-125, 125], [-125, 125]], hub: :xyz50),
          new('lch', %w[lightness chroma hue], [[0, 100], [0, 150], nil], hub: :xyz50),
          new('oklab', %w[lightness a b], [[0, 1], [-0.4, 0.4], [-0.4, 0.4]], hub: :lms),
          new('oklch', %w[lightness chroma hue], [[0, 1], [0, 0.4], nil], hub: :lms)
        ].to_h { |space| [space.name, space] }.freeze

        # The names {.fetch} accepts (with +xyz-d65+, an alias of +xyz+).
        NAMES = [*SPACES.keys, 'xyz-d65'].freeze

        private_constant :RGB_CHANNELS, :XYZ_CHANNELS, :UNIT, :RGB_RANGES, :PERCENTS, :LEGACY
      end

      private_constant :Space
    end
  end
end
