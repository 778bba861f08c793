# frozen_string_literal: true

module Sass
  module Embedded
    # Finds the Dart Sass compiler: +SASS_EMBEDDED_COMPILER+ if set, else the
    # one installed with the gem under +lib/sass/embedded/dart-sass+.
    module CompilerCommand
      # Where the gem installs the compiler.
      DIRECTORY = File.expand_path('dart-sass', __dir__)

      # The environment variable that overrides the compiler.
      ENV_NAME = 'SASS_EMBEDDED_COMPILER'

      module_function

      # The command that starts the compiler: the program and the arguments that
      # precede +--embedded+. The bundled compiler is run as its Dart runtime
      # and snapshot directly, saving the shell script's extra process.
      # @return [Array<String>]
      def resolve
        override = ENV.fetch(ENV_NAME, nil)
        return [File.absolute_path(override)] if override && !override.empty?

        dart = File.join(DIRECTORY, 'src', 'dart')
        snapshot = File.join(DIRECTORY, 'src', 'sass.snapshot')
        return [dart, snapshot] if File.executable?(dart) && File.file?(snapshot)

        [File.join(DIRECTORY, 'sass')]
      end
    end

    private_constant :CompilerCommand
  end
end
