# frozen_string_literal: true

require_relative '../arguments'

module Sass
  class Compiler
    class Session
      # The custom functions of one compile: global functions by name, and the
      # host functions ({Value::Function} with a block) returned to Sass during
      # it, by id. Answers +FunctionCallRequest+s.
      class FunctionRegistry
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

        # @param functions [Hash{String, Symbol => #call}, nil] keyed by
        #   signature; whether a signature is valid is for the compiler to
        #   judge (it fails the compile if not)
        def initialize(functions)
          functions = {} if functions.nil?
          unless functions.respond_to?(:each_pair)
            raise TypeError, "functions must be a Hash of signatures to callables, got #{functions.inspect[0, 80]}"
          end

          # Most compiles have no functions: they share the empty ones.
          @by_name = EMPTY_HASH
          @by_id = nil
          @signatures = EMPTY_LIST
          return if functions.empty?

          @by_name = {}
          @signatures = []
          functions.each_pair do |signature, callable|
            signature = FunctionRegistry.signature(signature)
            unless callable.respond_to?(:call)
              raise ArgumentError, "function #{signature.inspect} must respond to call, got #{callable.inspect}"
            end

            @by_name[FunctionRegistry.name(signature)] = callable
            @signatures << signature
          end
        end

        # Calls the function the compiler asked for.
        # @param name_or_id [String, Integer]
        # @param arguments [Array<Value>]
        # @return [Value]
        def call(name_or_id, arguments)
          callable = if name_or_id.is_a?(Integer)
                       (@by_id || EMPTY_HASH).fetch(name_or_id) do
                         raise "unknown host function id #{name_or_id}"
                       end.callback
                     else
                       @by_name.fetch(name_or_id) { raise "unknown function #{name_or_id}" }
                     end
          callable.call(arguments)
        end

        # Gives a host function an id the compiler can call it by.
        # @param function [Value::Function]
        # @return [Array(Integer, String)] the id and the signature
        def register(function)
          @by_id ||= {}
          id = @by_id.key(function) || FunctionRegistry.next_id.tap { |new_id| @by_id[new_id] = function }
          [id, function.signature]
        end

        # @return [String] the signature as the compiler gets it
        def self.signature(signature)
          Arguments.utf8(signature.to_s, 'function signature')
        end

        # The name the compiler calls a signature's function by: what precedes
        # the parameters.
        def self.name(signature)
          signature[0, signature.index('(') || signature.length]
        end
      end
    end
  end
end
