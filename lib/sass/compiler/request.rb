# frozen_string_literal: true

require_relative 'arguments'
require_relative 'session/structure'
require_relative 'session/function_registry'
require_relative 'session/importer_registry'
require_relative 'session/logger_registry'

module Sass
  class Compiler
    # The options of one compile, checked and normalized before anything is
    # sent, by the established gem's rules: +nil+ for a boolean is false (its
    # protobuf default; +alert_color: nil+ asks whether +$stderr+ is a TTY),
    # +nil+ for a list or a Hash is empty, a value of the wrong type is a
    # +TypeError+ and a wrong choice an +ArgumentError+, each naming the
    # option. What only the compiler can judge (function signatures,
    # non-canonical schemes, deprecation ids, URLs) goes to the compiler, which
    # answers with a {CompileError}. {#to_a} is the plain data the native host
    # turns into a +CompileRequest+.
    class Request
      STYLES = %i[expanded compressed].freeze

      attr_reader :functions, :importers, :logger

      # The options come positionally, as Compiler#run's options list them:
      # keywords passed through +new+, a C method, would be collected into a
      # Hash first, which costs a tiny compile a microsecond. {#to_a} keeps
      # that order ({FIELDS}), and the native host reads both by it (a plain
      # compile's options as given, and this request), refusing to load if
      # these parameters differ from its own list.
      def initialize(path, source, importer, syntax, url, load_paths, charset, source_map,
                     source_map_include_sources, style, functions, importers, alert_ascii, alert_color,
                     fatal_deprecations, future_deprecations, logger, quiet_deps, silence_deprecations, verbose)
        if path.nil?
          source = Arguments.utf8(source, 'source')
          syntax = Arguments.choice(syntax, Arguments::SYNTAXES, 'syntax')
          url = Request.url(url) unless url.nil?
        else
          path = File.absolute_path(Arguments.utf8(Arguments.path(path, 'path'), 'path'))
        end
        style = Arguments.choice(style, STYLES, 'style')
        charset = Arguments.boolean(charset, 'charset')
        source_map = Arguments.boolean(source_map, 'source_map')
        source_map_include_sources = Arguments.boolean(source_map_include_sources, 'source_map_include_sources')
        alert_ascii = Arguments.boolean(alert_ascii, 'alert_ascii')
        alert_color = alert_color.nil? ? Exception.to_tty? : Arguments.boolean(alert_color, 'alert_color')
        quiet_deps = Arguments.boolean(quiet_deps, 'quiet_deps')
        verbose = Arguments.boolean(verbose, 'verbose')
        fatal_deprecations = Request.deprecations(fatal_deprecations, 'fatal_deprecations')
        future_deprecations = Request.deprecations(future_deprecations, 'future_deprecations')
        silence_deprecations = Request.deprecations(silence_deprecations, 'silence_deprecations')
        importers, importer, load_paths = callbacks(functions, importers, importer, load_paths, logger)
        # An Array, not a Hash: a tiny compile's whole Ruby part is a few
        # microseconds, and a 20-entry Hash alone took one of them.
        @data = [
          path, source, importer, syntax, url, load_paths,
          charset, source_map, source_map_include_sources, style,
          @functions.signatures, importers, alert_ascii, alert_color,
          fatal_deprecations, future_deprecations, @logger.silent?,
          quiet_deps, silence_deprecations, verbose
        ]
      end

      # The request's fields: the parameters of {#initialize}, in their
      # order.
      FIELDS = instance_method(:initialize).parameters.map(&:last).freeze

      # @return [Array] the request as plain Ruby data, the values of
      #   {FIELDS} in order: each option checked and normalized; the
      #   callbacks (+importer+, +functions+, +importers+) registered, as
      #   their descriptors and signatures; +load_paths+ as +[:path, dir]+
      #   descriptors (the compiler tries them after the importers);
      #   +logger+ as whether it is silent
      def to_a
        @data
      end

      private

      # The registries of the callbacks, and the importer descriptors for the
      # request. Most compiles have none: they share registries that hold
      # nothing (frozen, since nothing registers into them without a callback
      # to begin with).
      def callbacks(functions, importers, importer, load_paths, logger)
        @functions = if functions.nil? || functions.equal?(EMPTY_HASH)
                       NO_FUNCTIONS
                     else
                       Session::FunctionRegistry.new(functions)
                     end

        importers = Arguments.list(importers, 'importers')
        if importers.empty? && importer.nil?
          @importers = NO_IMPORTERS
          registered = EMPTY_LIST
        else
          @importers = Session::ImporterRegistry.new
          registered = @importers.register_all(importers)
        end
        load_paths = Request.load_paths(load_paths)
        importer = @importers.register(importer, 'importer') unless importer.nil?

        @logger = logger.nil? ? NO_LOGGER : Session::LoggerRegistry.new(logger)
        [registered, importer, load_paths]
      end

      class << self
        # The entrypoint's URL, which the compiler must be able to parse (it
        # stops altogether on one it cannot).
        def url(value)
          url = Arguments.utf8(value.respond_to?(:to_str) ? value : value.to_s, 'url')
          error = Embedded.const_get(:Url).syntax_error(url)
          raise ArgumentError, "url #{url.inspect} is not a valid URL: #{error}" if error

          url
        end

        # Deprecation ids or Dart Sass versions, as Strings (+to_s+ of each
        # element, as the established gem sends them); the compiler judges
        # them.
        def deprecations(value, name)
          list = Arguments.list(value, name)
          return EMPTY_LIST if list.empty?

          list.map { |deprecation| Arguments.utf8(deprecation.to_s, name) }
        end

        def load_paths(value)
          list = Arguments.list(value, 'load_paths')
          return EMPTY_LIST if list.empty?

          list.map do |path|
            [:path, File.absolute_path(Arguments.utf8(Arguments.path(path, 'load_paths'), 'load_paths'))]
          end
        end
      end
    end

    private_constant :Request
  end
end
