# frozen_string_literal: true

require 'rbconfig'

module Sass
  module Embedded
    # Finds the Dart Sass compiler: +SASS_EMBEDDED_COMPILER+ if set, else the
    # one installed with the gem under +lib/sass/embedded/dart-sass+.
    module CompilerCommand
      # Where the gem installs the compiler.
      DIRECTORY = File.expand_path('dart-sass', __dir__)

      # Where the compiler runs: a directory of the gem's own, as the
      # established gem's compiler runs in one. Dart Sass prints a file
      # relative to its working directory when that is shorter; no user file
      # lives under this one, so every path in a message stays absolute.
      WORKING_DIRECTORY = __dir__

      # The Windows package has dart.exe and sass.bat.
      WINDOWS = RbConfig::CONFIG['host_os'].match?(/mswin|mingw/)
      EXEEXT = WINDOWS ? '.exe' : ''

      # The environment variable that overrides the compiler.
      ENV_NAME = 'SASS_EMBEDDED_COMPILER'

      # The environment variable with the seconds a starting compiler may take
      # to answer (default 30).
      STARTUP_TIMEOUT_ENV_NAME = 'SASS_EMBEDDED_STARTUP_TIMEOUT'

      module_function

      # The command that starts the compiler: the program and the arguments that
      # precede +--embedded+. The bundled compiler is run as its Dart runtime
      # and snapshot directly, saving the shell script's extra process.
      # @return [Array<String>]
      def resolve
        override = ENV.fetch(ENV_NAME, nil)
        return [File.absolute_path(override)] if override && !override.empty?

        dart = File.join(DIRECTORY, 'src', "dart#{EXEEXT}")
        snapshot = File.join(DIRECTORY, 'src', 'sass.snapshot')
        return [dart, snapshot] if File.executable?(dart) && File.file?(snapshot)

        [File.join(DIRECTORY, WINDOWS ? 'sass.bat' : 'sass')]
      end

      # @return [Float, nil] +SASS_EMBEDDED_STARTUP_TIMEOUT+ in seconds, or nil
      #   for the default
      def startup_timeout
        value = ENV.fetch(STARTUP_TIMEOUT_ENV_NAME, nil)
        return nil if value.nil? || value.empty?

        seconds = Float(value, exception: false)
        return seconds if seconds&.positive?

        raise ArgumentError, "#{STARTUP_TIMEOUT_ENV_NAME} must be a positive number of seconds, got #{value.inspect}"
      end
    end

    private_constant :CompilerCommand
  end
end
