# frozen_string_literal: true

module Sass
  # Loggers receive the warnings and debug messages of a compilation. Any
  # object (or Hash of lambdas) with +warn+ and/or +debug+ works:
  #
  #   logger = Object.new
  #   def logger.warn(message, deprecation:, deprecation_type:, span:, stack:); end
  #   def logger.debug(message, span:); end
  #
  # Without a logger, messages go to +$stderr+ as the compiler formats them.
  # @see https://sass-lang.com/documentation/js-api/interfaces/logger/
  module Logger
    # A logger that drops everything. Passing it also tells the compiler not to
    # send any messages at all.
    module Silent
      module_function

      # @return [nil]
      def warn(message, **); end

      # @return [nil]
      def debug(message, **); end
    end

    private_constant :Silent

    module_function

    # @return [Object] a logger that does nothing
    def silent
      Silent
    end
  end
end
