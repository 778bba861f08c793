# frozen_string_literal: true

module Sass
  class Compiler
    class Session
      # The logger of one compile. Answers +LogEvent+s: calls the logger's
      # +warn+ or +debug+ if it has one, else prints the compiler's formatted
      # message to +$stderr+ (through +Kernel#warn+, so +$VERBOSE = nil+
      # silences it).
      class LoggerRegistry
        # What a two-argument +warn(message, options)+ logger receives.
        WarnOptions = Struct.new(:deprecation, :deprecation_type, :span, :stack, keyword_init: true)
        # What a two-argument +debug(message, options)+ logger receives.
        DebugOptions = Struct.new(:span, keyword_init: true)

        def initialize(logger)
          @silent = logger.equal?(Logger.silent)
          logger = Structure.from_hash(logger) if logger.is_a?(Hash)
          @warn = LoggerRegistry.method_of(logger, :warn)
          @debug = LoggerRegistry.method_of(logger, :debug)
          return if logger.nil? || @warn || @debug

          raise ArgumentError, "logger must respond to warn and/or debug, got #{logger.inspect}"
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

        # Calls +method+ with the keywords it accepts. A method without
        # keywords but with a second positional parameter gets an options
        # object instead (+options.span+, ...).
        def self.invoke(method, message, options)
          parameters = method.parameters
          if parameters.any? { |kind, _| kind == :keyrest }
            method.call(message, **options)
          elsif parameters.any? { |kind, _| %i[key keyreq].include?(kind) }
            accepted = parameters.filter_map { |kind, name| name if %i[key keyreq].include?(kind) }
            method.call(message, **options.slice(*accepted))
          elsif method.arity.abs >= 2 || parameters.any? { |kind, _| kind == :rest }
            struct = options.key?(:stack) ? WarnOptions : DebugOptions
            method.call(message, struct.new(**options))
          else
            method.call(message)
          end
        end
      end
    end
  end
end
