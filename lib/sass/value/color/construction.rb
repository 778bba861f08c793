# frozen_string_literal: true

module Sass
  module Value
    class Color
      # Reads the keyword arguments of {Color#initialize}: which space they
      # describe, the channels (nil for missing) and alpha.
      module Construction
        module_function

        # The legacy spaces, by the channel keywords that imply them when no
        # +space:+ is given.
        IMPLIED_SPACES = {
          'rgb' => %i[red green blue], 'hsl' => %i[hue saturation lightness], 'hwb' => %i[hue whiteness blackness]
        }.freeze

        # @param options [Hash{Symbol => Object}]
        # @return [Array(Space, Array<Numeric, nil>, Numeric or nil)]
        # @raise [ScriptError] for a wrong space, keyword or value
        def parse(options)
          space = construction_space(options)
          keys = space.channels.map(&:to_sym)
          check_keywords(space, options.keys - [:space], keys)
          channels = keys.map { |key| channel_value(options[key], key) }
          if options.key?(:alpha) && options[:alpha].nil? && options[:space].nil?
            Color.deprecation('null-alpha', 'Passing alpha: nil without setting space: is deprecated.')
          end
          [space, channels, options.key?(:alpha) ? alpha_value(options[:alpha]) : 1]
        end

        # @return [Space] the space named by +space:+, or the legacy space
        #   whose three channels are all given
        def construction_space(options)
          return Space.fetch(options[:space]) unless options[:space].nil?

          name, = IMPLIED_SPACES.find { |_, keys| keys.all? { |key| options.key?(key) } }
          raise Sass::ScriptError.new('No color space found', 'space') if name.nil?

          Space.fetch(name)
        end

        # @raise [ScriptError] for a keyword that is neither a channel of
        #   +space+ nor +alpha:+
        def check_keywords(space, given, keys)
          unknown = given.find { |key| !keys.include?(key) && key != :alpha }
          return if unknown.nil?

          raise Sass::ScriptError.new("`#{unknown}` is not a valid channel in `#{space.name}`.", unknown)
        end

        # @return [Numeric, nil] +value+ as given (nil for missing)
        # @raise [ScriptError] unless +value+ is a real number or nil
        def channel_value(value, name)
          return nil if value.nil?
          return value if value.is_a?(Numeric) && value.real?

          raise Sass::ScriptError.new("#{value.inspect} is not a number", name)
        end

        # @return [Numeric, nil] +value+ as given (nil for missing)
        # @raise [ScriptError] unless +value+ is nil or (fuzzily) between 0
        #   and 1
        def alpha_value(value)
          return nil if channel_value(value, :alpha).nil?
          return value unless FuzzyMath.between(value, 0, 1).nil?

          raise Sass::ScriptError.new("#{value} must be between 0 and 1.", 'alpha')
        end
      end

      private_constant :Construction
    end
  end
end
