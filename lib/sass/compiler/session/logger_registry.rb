# frozen_string_literal: true

module Sass
  class Compiler
    class Session
      # The logger of one compile. Answers +LogEvent+s: calls the logger's
      # +warn+ or +debug+ if it has one, else prints the compiler's formatted
      # message to +$stderr+ (through +Kernel#warn+, so +$VERBOSE = nil+
      # silences it). Any object is a logger, as in the established gem: one
      # without +warn+ and +debug+ leaves every message to +$stderr+. A Hash
      # logger's +:warn+ and +:debug+ must be callables, which are called as
      # they are (a lambda keeps its own +self+).
      class LoggerRegistry
        # What a two-argument +warn(message, options)+ logger receives.
        WarnOptions = Struct.new(:deprecation, :deprecation_type, :span, :stack, keyword_init: true)
        # What a two-argument +debug(message, options)+ logger receives.
        DebugOptions = Struct.new(:span, keyword_init: true)

        def initialize(logger)
          @silent = logger.equal?(Logger.silent)
          if logger.is_a?(Hash)
            logger = Structure.new(logger, 'logger', callables: %i[warn debug])
            @warn = logger[:warn]
            @debug = logger[:debug]
          else
            @warn = LoggerRegistry.method_of(logger, :warn)
            @debug = LoggerRegistry.method_of(logger, :debug)
          end
        end

        # @return [Boolean] whether nothing should be logged at all
        def silent?
          @silent
        end

        def log(type, message, span, stack, formatted, deprecation_type)
          if type == :debug
            return Kernel.warn(formatted) if @debug.nil?

            LoggerRegistry.invoke(@debug, message, { span: })
          else
            return Kernel.warn(formatted) if @warn.nil?

            LoggerRegistry.invoke(@warn, message, {
                                    deprecation: type == :deprecation_warning,
                                    deprecation_type:,
                                    span:,
                                    stack:
                                  })
          end
          nil
        end

        # The logger's method, unless the logger is nil or lacks it. Kernel's
        # private +warn+ does not count.
        def self.method_of(logger, name)
          return nil if logger.nil? || !logger.respond_to?(name)

          logger.method(name)
        end

        # Calls +callable+ (a Method, a lambda or any object with +call+) with
        # the keywords it accepts. One without keywords but with a second
        # positional parameter gets an options object instead (+options.span+,
        # ...), as the established gem passes it.
        def self.invoke(method, message, options)
          parameters = LoggerRegistry.parameters(method)
          kinds = parameters.map(&:first)
          if kinds.include?(:keyrest)
            method.call(message, **options)
          elsif kinds.intersect?(%i[key keyreq])
            accepted = parameters.filter_map { |kind, name| name if %i[key keyreq].include?(kind) }
            method.call(message, **options.slice(*accepted))
          elsif kinds.count { |kind| %i[req opt].include?(kind) } >= 2 || kinds.include?(:rest)
            struct = options.key?(:stack) ? WarnOptions : DebugOptions
            method.call(message, struct.new(**options))
          else
            method.call(message)
          end
        end

        # The parameters +callable+ declares; an object whose +call+ cannot be
        # inspected is taken to accept anything.
        def self.parameters(callable)
          return callable.parameters if callable.respond_to?(:parameters)

          callable.method(:call).parameters
        rescue NameError
          [[:rest], [:keyrest]]
        end
      end
    end
  end
end
