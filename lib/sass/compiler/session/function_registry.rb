# frozen_string_literal: true

module Sass
  class Compiler
    class Session
      # The custom functions of one compile: global functions by name, and the
      # host functions ({Value::Function} with a block) returned to Sass during
      # it, by id. Answers +FunctionCallRequest+s.
      class FunctionRegistry
        # A Sass function signature: a name, then parenthesized parameters.
        SIGNATURE = /\A\s*(-?[a-zA-Z_\u0080-\u{10ffff}][-\w\u0080-\u{10ffff}]*)\s*\(.*\)\s*\z/m

        # Host function ids must be unique across all compilations of the
        # process, so they come from one counter.
        @next_id = 0
        @id_mutex = Mutex.new

        class << self
          # @return [Integer] a fresh host function id
          def next_id
            @id_mutex.synchronize { @next_id = (@next_id + 1) % 0xffffffff }
          end
        end

        # @return [Array<String>] the signatures to send to the compiler
        attr_reader :signatures

        # @param functions [Hash{String, Symbol => #call}]
        def initialize(functions)
          unless functions.respond_to?(:each_pair)
            raise ArgumentError, "functions must be a Hash of signatures to callables, got #{functions.inspect}"
          end

          @by_name = {}
          @by_id = {}
          @signatures = []
          functions.each_pair do |signature, callable|
            signature = FunctionRegistry.signature(signature)
            unless callable.respond_to?(:call)
              raise ArgumentError, "function #{signature.inspect} must respond to call, got #{callable.inspect}"
            end

            @by_name[signature[SIGNATURE, 1]] = callable
            @signatures << signature
          end
        end

        # Calls the function the compiler asked for.
        # @param name_or_id [String, Integer]
        # @param arguments [Array<Value>]
        # @return [Value]
        def call(name_or_id, arguments)
          callable = if name_or_id.is_a?(Integer)
                       @by_id.fetch(name_or_id) { raise "unknown host function id #{name_or_id}" }.callback
                     else
                       @by_name.fetch(name_or_id) { raise "unknown function #{name_or_id}" }
                     end
          callable.call(arguments)
        end

        # Gives a host function an id the compiler can call it by.
        # @param function [Value::Function]
        # @return [Array(Integer, String)] the id and the signature
        def register(function)
          id = @by_id.key(function) || FunctionRegistry.next_id.tap { |new_id| @by_id[new_id] = function }
          [id, function.signature]
        end

        # @return [String] a checked signature
        def self.signature(signature)
          unless signature.is_a?(String) || signature.is_a?(Symbol)
            raise ArgumentError, "function signatures must be Strings, got #{signature.inspect}"
          end

          signature = Request.utf8(signature.to_s, 'function signature')
          unless SIGNATURE.match?(signature)
            raise ArgumentError,
                  "#{signature.inspect} is not a Sass function signature (a name, then parameters in " \
                  "parentheses, like 'double($n)')"
          end

          signature
        end
      end
    end
  end
end
