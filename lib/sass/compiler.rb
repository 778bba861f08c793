# frozen_string_literal: true

require_relative 'compiler/request'
require_relative 'compiler/session'

module Sass
  # A Dart Sass compiler run by the Rust host inside this process. Each
  # instance has its own compiler processes: one started on first use, more
  # when all 15 compilations a process runs at once (7 on 32-bit CPUs) are
  # taken, each restarted if it dies. Any number of threads may compile
  # through one instance at once, and compiles may nest (a function or
  # importer may compile) to any depth. Callbacks (functions, importers,
  # loggers) run on the thread that called +compile+.
  #
  # @example
  #   sass = Sass::Compiler.new
  #   result = sass.compile_string('h1 { font-size: 40px; }')
  #   result = sass.compile('style.scss')
  #   sass.close
  class Compiler
    # The empty defaults of the list and Hash options, and what the request
    # and session classes nested here use for nothing given: shared, not
    # allocated per compile (they are only read).
    EMPTY_LIST = [].freeze
    EMPTY_HASH = {}.freeze
    # The registries of every compile without functions, importers or a
    # logger (most compiles): they hold nothing, and nothing registers into
    # them without a callback to begin with.
    NO_FUNCTIONS = Session::FunctionRegistry.new(nil).freeze
    NO_IMPORTERS = Session::ImporterRegistry.new.freeze
    NO_LOGGER = Session::LoggerRegistry.new(nil).freeze
    # The session of a plain compile (see #run): no callbacks, so nothing
    # in it ever changes.
    PLAIN_SESSION = Session.new(NO_FUNCTIONS, NO_IMPORTERS, NO_LOGGER).freeze
    private_constant :EMPTY_LIST, :EMPTY_HASH, :NO_FUNCTIONS, :NO_IMPORTERS, :NO_LOGGER, :PLAIN_SESSION

    # @param idle_timeout [Numeric, nil] stop the compiler process after this
    #   many seconds without work (it restarts on demand); nil keeps it running
    #   until {#close}. Extra processes stop after 5 idle seconds regardless.
    # @param max_processes [Integer, nil] how many compiler processes top-level
    #   compiles may use (compiles nested in callbacks may start more, so that
    #   nesting never deadlocks); nil means one per CPU core, at least 2
    # @param dispatch [Symbol] +:multiplexed+ (the default: every compilation
    #   runs at once, the waiting callers reading the compiler's output for
    #   each other) or +:wait_for+ (one compilation at a time under a
    #   process-wide lock: the baseline +rake bench+ compares against)
    # @param executor [Symbol, nil] where the host's background work (timers,
    #   the compiler's stderr, reading for abandoned compilations) runs:
    #   +:tokio+ (a tokio runtime on a thread of its own, the default) or
    #   +:thread+ (a minimal +poll(2)+ loop on a thread of its own); the
    #   callers do all the rest either way
    def initialize(idle_timeout: nil, max_processes: nil, dispatch: :multiplexed, executor: nil)
      unless idle_timeout.nil? || (idle_timeout.is_a?(Numeric) && idle_timeout.positive?)
        raise ArgumentError, "idle_timeout must be a positive number or nil, got #{idle_timeout.inspect}"
      end
      unless max_processes.nil? || (max_processes.is_a?(Integer) && max_processes.positive?)
        raise ArgumentError, "max_processes must be a positive Integer or nil, got #{max_processes.inspect}"
      end

      check_choices(dispatch, executor)

      @options = { idle_timeout: idle_timeout&.to_f, max_processes:, dispatch:, executor: }
      @mutex = Mutex.new
      @host = nil
      @closed = false
    end

    # Compiles the Sass file at +path+ to CSS.
    # @param path [String, Pathname] relative paths resolve against the current
    #   directory
    # @param load_paths [Array<String, Pathname>] directories in which to look
    #   for stylesheets loaded by +@use+ and +@import+, after +importers+
    # @param charset [Boolean] whether to emit a +@charset+ or byte-order mark
    #   for non-ASCII output
    # @param source_map [Boolean] whether to generate a source map
    # @param source_map_include_sources [Boolean] whether the source map embeds
    #   the sources
    # @param style [Symbol, String] +:expanded+ or +:compressed+
    # @param functions [Hash{String => #call}] custom functions, keyed by their
    #   Sass signature (+'double($n)'+); each is called with an Array of
    #   {Value}s and returns a {Value}
    # @param importers [Array<Object>] custom importers, tried in order before
    #   +load_paths+: objects with +canonicalize+ and +load+, file importers
    #   with +find_file_url+, Hashes of those as lambdas, or a
    #   {NodePackageImporter}
    # @param alert_ascii [Boolean] whether messages use ASCII only
    # @param alert_color [Boolean, nil] whether messages use ANSI colors; nil
    #   means whether +$stderr+ is a TTY
    # @param fatal_deprecations [Array<String, Symbol>] deprecation ids (or Dart
    #   Sass versions) to treat as errors
    # @param future_deprecations [Array<String, Symbol>] future deprecations to
    #   opt into
    # @param logger [Object, nil] receives warnings and debug messages (see
    #   {Logger}); nil prints them to +$stderr+
    # @param quiet_deps [Boolean] whether to silence warnings from dependencies
    # @param silence_deprecations [Array<String, Symbol>] deprecation ids to
    #   silence
    # @param verbose [Boolean] whether to report every deprecation warning, not
    #   only the first few of each kind
    # @return [CompileResult]
    # @raise [ArgumentError] for invalid options, before anything is compiled
    # @raise [CompileError] if Sass reports an error
    # @raise [IOError, SystemCallError] if the compiler cannot run
    # @see https://sass-lang.com/documentation/js-api/functions/compile/
    def compile(path,
                load_paths: EMPTY_LIST,

                charset: true,
                source_map: false,
                source_map_include_sources: false,
                style: :expanded,

                functions: EMPTY_HASH,
                importers: EMPTY_LIST,

                alert_ascii: false,
                alert_color: nil,
                fatal_deprecations: EMPTY_LIST,
                future_deprecations: EMPTY_LIST,
                logger: nil,
                quiet_deps: false,
                silence_deprecations: EMPTY_LIST,
                verbose: false)
      raise ArgumentError, 'path must be set' if path.nil?

      run([path, nil, nil, nil, nil,
           load_paths, charset, source_map, source_map_include_sources, style,
           functions, importers, alert_ascii, alert_color, fatal_deprecations,
           future_deprecations, logger, quiet_deps, silence_deprecations, verbose])
    end

    # Compiles a stylesheet whose contents is +source+ to CSS.
    # @param source [String, #to_str]
    # @param importer [Object, nil] the importer that resolves loads relative to
    #   the entrypoint (with +url+)
    # @param load_paths (see #compile)
    # @param syntax [Symbol, String] +:scss+, +:indented+ or +:css+
    # @param url [String, #to_s, nil] the entrypoint's canonical URL; relative
    #   loads resolve against it
    # @param charset (see #compile)
    # @param source_map (see #compile)
    # @param source_map_include_sources (see #compile)
    # @param style (see #compile)
    # @param functions (see #compile)
    # @param importers (see #compile)
    # @param alert_ascii (see #compile)
    # @param alert_color (see #compile)
    # @param fatal_deprecations (see #compile)
    # @param future_deprecations (see #compile)
    # @param logger (see #compile)
    # @param quiet_deps (see #compile)
    # @param silence_deprecations (see #compile)
    # @param verbose (see #compile)
    # @return [CompileResult]
    # @raise (see #compile)
    # @see https://sass-lang.com/documentation/js-api/functions/compilestring/
    def compile_string(source,
                       importer: nil,
                       load_paths: EMPTY_LIST,
                       syntax: :scss,
                       url: nil,

                       charset: true,
                       source_map: false,
                       source_map_include_sources: false,
                       style: :expanded,

                       functions: EMPTY_HASH,
                       importers: EMPTY_LIST,

                       alert_ascii: false,
                       alert_color: nil,
                       fatal_deprecations: EMPTY_LIST,
                       future_deprecations: EMPTY_LIST,
                       logger: nil,
                       quiet_deps: false,
                       silence_deprecations: EMPTY_LIST,
                       verbose: false)
      raise ArgumentError, 'source must be set' if source.nil?

      run([nil, source, importer, syntax, url,
           load_paths, charset, source_map, source_map_include_sources, style,
           functions, importers, alert_ascii, alert_color, fatal_deprecations,
           future_deprecations, logger, quiet_deps, silence_deprecations, verbose])
    end

    # Information about the host and the compiler, one line each:
    #   sass-embedded	1.105.0	(Embedded Host)	[Ruby]
    #   dart-sass	1.105.0	(Sass Compiler)	[Dart]
    # @return [String]
    # @see https://sass-lang.com/documentation/js-api/variables/info/
    def info
      @info ||= begin
        _protocol, _compiler, implementation_version, implementation_name = host.version
        [
          ['sass-embedded', Embedded::VERSION, '(Embedded Host)', '[Ruby]'].join("\t"),
          [implementation_name, implementation_version, '(Sass Compiler)', '[Dart]'].join("\t")
        ].join("\n").freeze
      end
    end

    # Stops the compiler process. Compilations still running fail with
    # +IOError+; later calls raise +IOError+ ("closed compiler").
    # @return [nil]
    def close
      host = @mutex.synchronize do
        @closed = true
        current = @host if @host&.owned?
        @host = nil
        current
      end
      host&.close
      nil
    end

    # @return [Boolean] whether {#close} was called
    def closed?
      @closed
    end

    @exit_hook = nil
    @exit_hook_mutex = Mutex.new

    class << self
      # Makes sure that at exit every compiler process this process started is
      # closed, whichever compiler started it and whether or not it was
      # closed: registered when the first compiler process starts (so after
      # the at_exit handlers of code loaded before, which may still compile).
      # At exit the compilers are killed (nobody will want their work) and
      # reaped within a tenth of a second, so a program stopped by a signal
      # ends at once. (On Linux the kernel also kills them when the process
      # ends without running at_exit, with exit! or SIGKILL.)
      # @!visibility private
      def close_all_at_exit
        @exit_hook || @exit_hook_mutex.synchronize do
          @exit_hook ||= at_exit { Embedded.const_get(:Host).close_all }
        end
      end
    end

    private

    # +dispatch+ and +executor+ are among the names the native host offers
    # (an executor this build lacks is not).
    def check_choices(dispatch, executor)
      host = Embedded.const_get(:Host)
      unless host::DISPATCHES.include?(dispatch)
        raise ArgumentError, "dispatch must be #{host::DISPATCHES.map(&:inspect).join(' or ')}, got #{dispatch.inspect}"
      end
      return if executor.nil? || host::EXECUTORS.include?(executor)

      raise ArgumentError,
            "executor must be #{host::EXECUTORS.map(&:inspect).join(', ')} or nil, got #{executor.inspect}"
    end

    # Compiles with +options+, the arguments of Request.new. Plain options
    # (a UTF-8 source, no file, URL, callbacks, load paths or deprecation
    # lists: a +compile_string+ with its defaults or a few booleans or
    # Symbols) go to the native host as they are, which builds the request
    # itself, or answers nil, having sent nothing, for options that need
    # Request's checks and conversions: on a tiny stylesheet a compile's
    # whole Ruby part is a few microseconds, and each one counts several
    # times over (docs/performance.md).
    #
    # A failure a callback (function, importer) caused keeps the callback's
    # Ruby story: the CompileError takes the callback exception's backtrace as
    # its own (so +full_message+ shows where the Ruby code failed) and the
    # exception as its +cause+.
    def run(options)
      session = PLAIN_SESSION
      result = host.compile_plain(options, session)
      if result.nil?
        request = Request.new(*options)
        session = Session.new(request.functions, request.importers, request.logger)
        result = host.compile(request.to_a, session)
      end
      return result unless result.is_a?(CompileError)

      callback_error = session.callback_error
      result.set_backtrace(callback_error.backtrace) if callback_error&.backtrace
      raise result, cause: callback_error
    end

    # The native host of this process. After +fork+, the child gets a host of
    # its own and never touches the parent's.
    def host
      host = @host
      return host if host&.owned?

      @mutex.synchronize do
        raise IOError, 'closed compiler' if @closed

        unless @host&.owned?
          Compiler.close_all_at_exit
          command = Embedded.const_get(:CompilerCommand)
          @host = Embedded.const_get(:Host).new(command.resolve,
                                                @options.merge(startup_timeout: command.startup_timeout,
                                                               directory: command::WORKING_DIRECTORY))
        end
        @host
      end
    end
  end
end
