# frozen_string_literal: true

module Sass
  module Value
    class Number
      # The unit arithmetic of numbers: parsing, compatibility, conversion,
      # simplification, canonical forms for hashing, and how messages name them.
      module Units
        # Units with a conversion factor: the canonical unit of their kind, and
        # how many of it one of them is.
        CONVERSIONS = {
          'px' => ['px', 1.0], 'cm' => ['px', 96 / 2.54], 'mm' => ['px', 96 / 25.4], 'Q' => ['px', 96 / 101.6],
          'in' => ['px', 96.0], 'pc' => ['px', 16.0], 'pt' => ['px', 4 / 3.0],
          'deg' => ['deg', 1.0], 'grad' => ['deg', 9 / 10.0], 'rad' => ['deg', 180 / Math::PI],
          'turn' => ['deg', 360.0],
          'ms' => ['ms', 1.0], 's' => ['ms', 1000.0],
          'Hz' => ['Hz', 1.0], 'kHz' => ['Hz', 1000.0],
          'dppx' => ['dppx', 1.0], 'dpi' => ['dppx', 1 / 96.0], 'dpcm' => ['dppx', 2.54 / 96]
        }.freeze

        module_function

        # The kinds of units, as error messages name them, with the units of
        # each kind in the order Sass lists them.
        UNITS_BY_TYPE = {
          'length' => %w[in cm pc mm q pt px], 'angle' => %w[deg grad rad turn], 'time' => %w[s ms],
          'frequency' => %w[Hz kHz], 'pixel density' => %w[dpi dpcm dppx]
        }.freeze

        # @return [::String, nil] the kind of +unit+ (+length+, +angle+, ...)
        def type(unit)
          UNITS_BY_TYPE.find { |_, units| units.include?(unit) || (unit == 'Q' && units.include?('q')) }&.first
        end

        # @return [Array(Array<::String>, Array<::String>)]
        # @raise [ScriptError] unless +unit+ is nil, a String or a Hash of unit
        #   lists
        def parse(unit)
          case unit
          when nil then [[], []]
          when ::String then [[unit.dup.freeze], []]
          when Hash
            [unit_list(unit.fetch(:numerator_units, []), 'numerator_units'),
             unit_list(unit.fetch(:denominator_units, []), 'denominator_units')]
          else
            raise Sass::ScriptError, "invalid unit #{unit.inspect}"
          end
        end

        def unit_list(units, name)
          unless units.is_a?(Array) && units.all? { |unit| unit.is_a?(::String) }
            raise Sass::ScriptError, "invalid #{name} #{units.inspect}"
          end

          units.map { |unit| unit.dup.freeze }
        end

        # @return [::String] units as Sass writes them in messages: +px*em/s+,
        #   +s^-1+, +(s*ms)^-1+, or +no units+
        def describe(numerators, denominators)
          if numerators.empty?
            return 'no units' if denominators.empty?

            return denominators.length == 1 ? "#{denominators.first}^-1" : "(#{denominators.join('*')})^-1"
          end
          return numerators.join('*') if denominators.empty?

          "#{numerators.join('*')}/#{denominators.join('*')}"
        end

        # Whether two unit lists pair up one to one with each pair identical
        # or of the same kind.
        def compatible?(units1, units2)
          return false unless units1.length == units2.length

          remaining = units2.dup
          units1.all? do |unit|
            index = remaining.index { |other| other == unit || same_kind?(unit, other) }
            index && remaining.delete_at(index)
          end
        end

        def same_kind?(unit1, unit2)
          kind1 = CONVERSIONS[unit1]
          kind2 = CONVERSIONS[unit2]
          !kind1.nil? && !kind2.nil? && kind1.first == kind2.first
        end

        # Converts +value+ from +from+ units to the compatible +to+ units, as
        # the numerator or denominator side.
        def convert(value, from, to, side)
          remaining = to.dup
          from.each do |unit|
            index = remaining.index(unit) || remaining.index { |other| same_kind?(unit, other) }
            target = remaining.delete_at(index)
            next if target == unit

            factor_from = CONVERSIONS[unit].last
            factor_to = CONVERSIONS[target].last
            value = side == :numerator ? value * factor_from / factor_to : value * factor_to / factor_from
          end
          value
        end

        # Cancels numerator units against identical or compatible denominator
        # units.
        def simplify(value, numerators, denominators)
          remaining = denominators.dup
          kept = numerators.reject do |unit|
            index = remaining.index(unit) || remaining.index { |other| same_kind?(unit, other) }
            next false if index.nil?

            other = remaining.delete_at(index)
            value = value * CONVERSIONS[unit].last / CONVERSIONS[other].last unless other == unit
            true
          end
          [value, kept, remaining]
        end

        # The value in canonical units, and those units (units without a
        # conversion factor are kept as they are).
        def canonical(value, numerators, denominators)
          numerators = numerators.map do |unit|
            kind, factor = CONVERSIONS[unit]
            value *= factor if factor
            kind || unit
          end
          denominators = denominators.map do |unit|
            kind, factor = CONVERSIONS[unit]
            value /= factor if factor
            kind || unit
          end
          [value, numerators, denominators]
        end
      end

      private_constant :Units
    end
  end
end
