# frozen_string_literal: true

require_relative 'script_error'
require_relative 'value/fuzzy_math'
require_relative 'value/serializer'

module Sass
  # The values Sass works with, as custom functions receive and return them.
  # Every value is immutable and can be used as a list: a value that is not a
  # list is a list of one element. Indices given by Sass are 1-based and may
  # be negative (from the end); {#sass_index_to_array_index} converts them.
  #
  # Errors of the value model (a failed +assert_*+, a bad index, a channel a
  # color does not have, ...) are {Sass::ScriptError}s naming the argument as
  # +$name: +; raised in a custom function, they become its Sass error.
  # @see https://sass-lang.com/documentation/js-api/classes/value/
  module Value
    # The hash of every empty list and empty map, which are equal.
    EMPTY_HASH = [].hash
    private_constant :EMPTY_HASH

    # @return [Array<Value>] this value as a list
    def to_a
      [self]
    end

    # @return [Hash{Value => Value}] this value's elements as pairs
    def to_h(...)
      to_a.to_h(...)
    end

    # @return [Boolean] whether this value is truthy (all but +false+ and +null+)
    def to_bool
      true
    end

    # @return [Map, nil] this value as a map: a {Map} itself, an empty {List}
    #   as an empty map, otherwise nil
    def to_map
      nil
    end

    # @return [Value, nil] nil for {Null::NULL}, otherwise this value
    def to_nil
      self
    end

    # @return [Boolean] whether this value is a bracketed list
    def bracketed?
      false
    end

    # @return [String, nil] this list's separator: +','+, +' '+, +'/'+, or nil
    #   when undecided or not a list
    def separator
      nil
    end

    # The element at a 0-based +index+ of {#to_a} (negative from the end).
    # @param index [Numeric]
    # @return [Value, nil]
    def at(index)
      to_a[index.floor]
    end
    alias [] at

    # Converts a Sass index (1-based; negative counts from the end) into an
    # index into {#to_a}.
    # @param sass_index [Number]
    # @param name [String, nil] the argument's name, for the error message
    # @return [Integer]
    # @raise [ScriptError] if the index is not an integer or out of range
    def sass_index_to_array_index(sass_index, name = nil)
      index = sass_index.assert_number(name).assert_integer(name)
      raise Sass::ScriptError.new('List index may not be 0', name) if index.zero?

      length = to_a.length
      if index.abs > length
        raise Sass::ScriptError.new("Invalid index #{sass_index.inspect} for a list with #{length} elements", name)
      end

      index.negative? ? length + index : index - 1
    end

    # @raise [ScriptError] unless this is a boolean
    def assert_boolean(name = nil)
      raise Sass::ScriptError.new("#{inspect} is not a boolean", name)
    end

    # @raise [ScriptError] unless this is a calculation
    def assert_calculation(name = nil)
      raise Sass::ScriptError.new("#{inspect} is not a calculation", name)
    end

    # @raise [ScriptError] unless this can be part of a calculation (a number,
    #   an unquoted string, a calculation, an operation or an interpolation)
    def assert_calculation_value(name = nil)
      raise Sass::ScriptError.new("#{inspect} is not a calculation value", name)
    end

    # @raise [ScriptError] unless this is a color
    def assert_color(name = nil)
      raise Sass::ScriptError.new("#{inspect} is not a color", name)
    end

    # @raise [ScriptError] unless this is a function
    def assert_function(name = nil)
      raise Sass::ScriptError.new("#{inspect} is not a function", name)
    end

    # @return [Map] this value as a map (see {#to_map})
    # @raise [ScriptError] unless it can be one
    def assert_map(name = nil)
      to_map || raise(Sass::ScriptError.new("#{inspect} is not a map", name))
    end

    # @raise [ScriptError] unless this is a mixin
    def assert_mixin(name = nil)
      raise Sass::ScriptError.new("#{inspect} is not a mixin", name)
    end

    # @raise [ScriptError] unless this is a module
    def assert_module(name = nil)
      raise Sass::ScriptError.new("#{inspect} is not a module", name)
    end

    # @raise [ScriptError] unless this is a number
    def assert_number(name = nil)
      raise Sass::ScriptError.new("#{inspect} is not a number", name)
    end

    # @raise [ScriptError] unless this is a string
    def assert_string(name = nil)
      raise Sass::ScriptError.new("#{inspect} is not a string", name)
    end

    # @return [Boolean]
    def eql?(other)
      self == other
    end

    # This value as Sass interpolates it (+#{value}+): plain CSS, numbers
    # rounded to ten decimals. ({String} keeps its quotes.)
    # @return [::String]
    # @raise [ScriptError] for a value that is not valid CSS, such as a map
    def to_s
      Serializer.css(self)
    rescue Serializer::Unwritable
      raise Sass::ScriptError, "#{inspect} isn't a valid CSS value."
    end

    # This value as +meta.inspect()+ writes it. A function or mixin the
    # compiler made (whose name Ruby does not know), or a value holding one,
    # shows as a Ruby object instead.
    # @return [::String]
    def inspect
      Serializer.inspect(self)
    rescue Serializer::Unwritable
      super
    end
  end
end

require_relative 'calculation_value'
require_relative 'value/string'
require_relative 'value/number'
require_relative 'value/boolean'
require_relative 'value/null'
require_relative 'value/list'
require_relative 'value/argument_list'
require_relative 'value/map'
require_relative 'value/compiler_reference'
require_relative 'value/function'
require_relative 'value/mixin'
require_relative 'value/compiler_module'
require_relative 'value/calculation'
require_relative 'value/color'
