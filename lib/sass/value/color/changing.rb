# frozen_string_literal: true

module Sass
  module Value
    class Color
      # {Color#change}: converts to the space being changed in, sets the
      # channels given, and converts back. Without an explicit +space:+, a
      # legacy color keeps its historical behaviour: the channel names pick
      # rgb, hsl or hwb, and nil means "unchanged" rather than "missing".
      module Changing
        module_function

        # @param color [Color]
        # @param options [Hash{Symbol => Object}] channels to change, and
        #   optionally +space:+
        # @return [Color] in +color+'s space
        def change(color, options)
          initial = Space.fetch(color.space)
          explicit = !options[:space].nil?
          changes = options.except(:space).transform_keys(&:to_s)
          space = explicit ? Space.fetch(options[:space]) : initial
          space = legacy_space(initial, changes) if initial.legacy? && !explicit
          if space != initial && !explicit
            Color.deprecation('color-4-api', "Changing a #{initial.name} color's #{space.name} channels without " \
                                             "space: #{space.name.inspect} is deprecated.")
          end
          check(space, changes)
          converted = color.to_space(space.name)
          changed = space.legacy? && !explicit ? legacy(converted, space, changes) : build(converted, space, changes)
          changed.to_space(initial.name)
        end

        # @return [Space] the legacy space the changed channels belong to
        def legacy_space(initial, changes)
          names = changes.keys
          if names.intersect?(%w[whiteness blackness]) || (names.include?('hue') && initial.name == 'hwb')
            Space.fetch('hwb')
          elsif names.intersect?(%w[hue saturation lightness])
            Space.fetch('hsl')
          elsif names.intersect?(%w[red green blue])
            Space.fetch('rgb')
          else
            initial
          end
        end

        # @raise [ScriptError] for a channel not in +space+ or a bad alpha
        def check(space, changes)
          unknown = changes.keys.find { |name| !space.channels.include?(name) && name != 'alpha' }
          raise Sass::ScriptError.new("`#{unknown}` is not a valid channel in `#{space.name}`.", unknown) if unknown

          Construction.alpha_value(changes['alpha'])
        end

        # The legacy behaviour: a nil or absent channel keeps its value (or
        # stays missing).
        # @return [Color] in +space+
        def legacy(color, space, changes)
          if (space.channels & changes.keys).any? { |name| changes[name].nil? }
            Color.deprecation('color-4-api', 'Passing nil for a channel without space: is deprecated.')
          end
          if changes.key?('alpha') && changes['alpha'].nil?
            Color.deprecation('null-alpha', 'Passing alpha: nil without setting space: is deprecated.')
          end
          values = space.channels.each_with_index.map do |name, i|
            changes[name].nil? ? color.channels_or_nil[i] : changes[name]
          end
          alpha = changes['alpha'].nil? ? color.send(:alpha_or_nil) : changes['alpha']
          Color.new(**keywords(space, values), alpha:, space: space.name)
        end

        # The color-4 behaviour: a nil channel becomes missing.
        # @return [Color] in +space+
        def build(color, space, changes)
          values = space.channels.each_with_index.map do |name, i|
            changes.key?(name) ? changes[name] : color.channels_or_nil[i]
          end
          alpha = changes.key?('alpha') ? changes['alpha'] : color.send(:alpha_or_nil)
          Color.new(**keywords(space, values), alpha:, space: space.name)
        end

        # @return [Hash{Symbol => Object}] the constructor keywords for +values+
        def keywords(space, values)
          space.channels.map(&:to_sym).zip(values).to_h
        end
      end

      private_constant :Changing
    end
  end
end
