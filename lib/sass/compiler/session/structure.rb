# frozen_string_literal: true

module Sass
  class Compiler
    class Session
      # An object view of a Hash of lambdas or values, as users of the
      # established gem write importers, import results and loggers.
      class Structure
        def self.from_hash(hash)
          structure = new
          hash.each_pair do |key, value|
            if value.is_a?(Proc) || value.is_a?(Method)
              # Keeps the callable's parameters visible (loggers are called
              # with the keywords they declare).
              structure.define_singleton_method(key.to_sym, value)
            elsif value.respond_to?(:call)
              structure.define_singleton_method(key.to_sym) { |*args, **kwargs| value.call(*args, **kwargs) }
            else
              structure.define_singleton_method(key.to_sym) { value }
            end
          end
          structure
        end
      end

      private_constant :Structure
    end
  end
end
