# frozen_string_literal: true

module Sass
  class Compiler
    class Session
      # A Hash of callables (and plain values) standing for an object, as users
      # of the established gem write importers and loggers:
      # +{ canonicalize: ->(url, context) { ... }, load: method(:load) }+. Each
      # callable is called as it is (+call+), so a lambda keeps its own +self+
      # and its own parameters; nothing is defined on another object.
      class Structure
        # @param hash [Hash] keyed by Symbols or Strings
        # @param name [String] what the Hash is, for error messages
        # @param callables [Array<Symbol>] the entries that must be callable
        #   when present (an entry that is +nil+ counts as absent)
        # @param values [Array<Symbol>] the entries that are plain values
        # @raise [ArgumentError] naming an entry that does not respond to +call+
        def initialize(hash, name, callables: [], values: [])
          @entries = {}
          (callables + values).each do |key|
            value = hash.fetch(key) { hash.fetch(key.to_s, nil) }
            next if value.nil?

            if callables.include?(key) && !value.respond_to?(:call)
              raise ArgumentError, "#{name}[#{key.inspect}] must respond to call, got #{value.inspect[0, 80]}"
            end

            @entries[key] = value
          end
        end

        # @return [Boolean] whether the Hash has the entry
        def key?(key)
          @entries.key?(key)
        end

        # @return [Object, nil] the entry (a callable or a value)
        def [](key)
          @entries[key]
        end

        # Calls the callable entry +key+ with the arguments as given.
        def call(key, ...)
          @entries.fetch(key).call(...)
        end
      end

      private_constant :Structure
    end
  end
end
