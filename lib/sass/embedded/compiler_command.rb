# frozen_string_literal: true

require 'rbconfig'
require_relative 'elf_interpreter'

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
      # and snapshot directly, saving the shell script's extra process (and,
      # where the loader it names is missing, through Ruby's: {loader}).
      # @return [Array<String>]
      def resolve
        override = ENV.fetch(ENV_NAME, nil)
        return [File.absolute_path(override)] if override && !override.empty?

        dart = File.join(DIRECTORY, 'src', "dart#{EXEEXT}")
        snapshot = File.join(DIRECTORY, 'src', 'sass.snapshot')
        return [*loader(dart), dart, snapshot] if File.executable?(dart) && File.file?(snapshot)

        [File.join(DIRECTORY, WINDOWS ? 'sass.bat' : 'sass')]
      end

      # The program loader to start the bundled Dart runtime +dart+ with: none
      # where the loader it names (its ELF interpreter, e.g.
      # +/lib64/ld-linux-x86-64.so.2+) is there, or +dart+ is no ELF program.
      # Where it is missing, as on NixOS (whose programs name loaders under
      # /nix/store), Ruby's own loader runs it if it is the same loader by
      # name; otherwise nothing here can, and the error says what to do.
      # @return [Array<String>]
      def loader(dart, own: ElfInterpreter.of('/proc/self/exe'))
        wanted = ElfInterpreter.of(dart)
        return [] if wanted.nil? || File.exist?(wanted)
        return [own] if own && File.basename(own) == File.basename(wanted) && File.file?(own)

        raise Errno::ENOENT,
              "the bundled Sass compiler (#{dart}) needs the program loader #{wanted}, which this system lacks" \
              "#{", and this Ruby's own (#{own}) is not one" if own}: set #{ENV_NAME} to a Sass compiler that " \
              'runs here (the dart-sass or sass-embedded package of your system, or its sass executable)'
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
