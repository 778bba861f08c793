# frozen_string_literal: true

module Sass
  class Compiler
    # The Ruby side of one compilation. The native host calls these methods on
    # the compiling thread, one per message of the compiler, each named after
    # the protocol message it answers; they return plain data, which the host
    # converts back to protobuf. A +StandardError+ raised here becomes the
    # error the compiler receives for that request.
    class Session
      # @param functions [FunctionRegistry]
      # @param importers [ImporterRegistry]
      # @param logger [LoggerRegistry]
      def initialize(functions, importers, logger)
        @functions = functions
        @importers = importers
        @logger = logger
        @callback_errors = nil
      end

      # What the compiler is told of a callback's exception, as the
      # established gem tells it: the detailed message, unhighlighted
      # (+bad input (ArgumentError)+), built the Ruby 3.2 way on Ruby 3.1.
      # @param exception [Exception]
      # @return [String]
      def self.describe(exception)
        return exception.detailed_message(highlight: false) if exception.respond_to?(:detailed_message)

        CompileError.const_get(:ErrorFormat).decorate(exception.class, exception.message, false)
      end

      # @return [Value]
      def function_call_request(name_or_id, arguments)
        record { @functions.call(name_or_id, arguments) }
      end

      # @return [Array(Integer, String)]
      def register_host_function(function)
        @functions.register(function)
      end

      # @return [Array(String, Boolean), Array(nil, Boolean)]
      def canonicalize_request(importer_id, url, from_import, containing_url)
        record { @importers.canonicalize(importer_id, url, from_import, containing_url) }
      end

      # @return [Array(String, Symbol, String), nil]
      def import_request(importer_id, url)
        record { @importers.import(importer_id, url) }
      end

      # @return [Array(String, Boolean), Array(nil, Boolean)]
      def file_import_request(importer_id, url, from_import, containing_url)
        record { @importers.file_import(importer_id, url, from_import, containing_url) }
      end

      # @return [nil]
      def log_event(type, message, span, stack, formatted, deprecation_type)
        @logger.log(type, message, span, stack, formatted, deprecation_type)
      end

      # @return [StandardError, nil] the last exception a callback raised: the
      #   cause of the compile error it led to, so its backtrace is not lost
      def callback_error
        @callback_errors&.last
      end

      private

      def record
        yield
      rescue StandardError => e
        (@callback_errors ||= []) << e
        raise
      end
    end

    private_constant :Session
  end
end
