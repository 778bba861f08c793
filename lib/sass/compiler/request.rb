# frozen_string_literal: true

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
      SYNTAXES = %i[scss indented css].freeze

      # The request's fields, in the order of {#to_a}; the native host reads
      # them by position (and refuses to load if its own list differs). An
      # Array, not a Hash: a tiny compile's whole Ruby part is a few
      # microseconds, and a 19-entry Hash alone took one of them.
      FIELDS = %i[
        path source syntax url importer
        style charset source_map source_map_include_sources
        alert_ascii alert_color quiet_deps verbose
        fatal_deprecations future_deprecations silence_deprecations
        functions importers silent
      ].freeze

      attr_reader :functions, :importers, :logger

      # The options come positionally, as Compiler#run's options list them
      # (the native host reads a plain compile's options by the same
      # positions, and refuses to load if these parameters differ from its
      # own list): keywords passed through +new+, a C method, would be
      # collected into a Hash first, which costs a tiny compile a microsecond.
      def initialize(path, source, importer, syntax, url, load_paths, charset, source_map,
                     source_map_include_sources, style, functions, importers, alert_ascii, alert_color,
                     fatal_deprecations, future_deprecations, logger, quiet_deps, silence_deprecations, verbose)
        if path.nil?
          source = Request.utf8(source, 'source')
          syntax = Request.choice(syntax, SYNTAXES, 'syntax')
          url = Request.url(url) unless url.nil?
        else
          path = File.absolute_path(Request.utf8(Request.path(path, 'path'), 'path'))
        end
        style = Request.choice(style, STYLES, 'style')
        charset = Request.boolean(charset, 'charset')
        source_map = Request.boolean(source_map, 'source_map')
        source_map_include_sources = Request.boolean(source_map_include_sources, 'source_map_include_sources')
        alert_ascii = Request.boolean(alert_ascii, 'alert_ascii')
        alert_color = alert_color.nil? ? Exception.to_tty? : Request.boolean(alert_color, 'alert_color')
        quiet_deps = Request.boolean(quiet_deps, 'quiet_deps')
        verbose = Request.boolean(verbose, 'verbose')
        fatal_deprecations = Request.deprecations(fatal_deprecations, 'fatal_deprecations')
        future_deprecations = Request.deprecations(future_deprecations, 'future_deprecations')
        silence_deprecations = Request.deprecations(silence_deprecations, 'silence_deprecations')
        importers, importer = callbacks(functions, importers, importer, load_paths, logger)
        @data = [
          path, source, syntax, url, importer,
          style, charset, source_map, source_map_include_sources,
          alert_ascii, alert_color, quiet_deps, verbose,
          fatal_deprecations, future_deprecations, silence_deprecations,
          @functions.signatures, importers, @logger.silent?
        ]
      end

      # @return [Array] the request as plain Ruby data, the values of
      #   {FIELDS} in order
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

        importers = Request.list(importers, 'importers')
        if importers.empty? && importer.nil?
          @importers = NO_IMPORTERS
          registered = EMPTY_LIST
        else
          @importers = Session::ImporterRegistry.new
          registered = @importers.register_all(importers)
        end
        load_paths = Request.load_paths(load_paths)
        importers = registered.empty? ? load_paths : registered + load_paths
        importer = @importers.register(importer, 'importer') unless importer.nil?

        @logger = logger.nil? ? NO_LOGGER : Session::LoggerRegistry.new(logger)
        [importers, importer]
      end

      class << self
        # A String for the compiler from any +to_str+ object, by the
        # established gem's rules: a UTF-8 String as it is, what in it is not
        # UTF-8 becoming U+FFFD (one per maximal invalid subpart, as the
        # compiler's decoder reads it from the established gem, and as the
        # host reads Strings it is given directly); a binary String whose
        # bytes are UTF-8 as UTF-8 (the established gem refuses those); and
        # any other String transcoded to UTF-8, raising Ruby's EncodingError
        # where it cannot be.
        def utf8(value, name)
          raise TypeError, "#{name} must be a String, got #{value.inspect[0, 80]}" unless value.respond_to?(:to_str)

          string = value.to_str
          if string.encoding == Encoding::UTF_8
            # The common case is used as it is: the host reads it before this
            # method's caller returns.
            return string.valid_encoding? ? string : string.scrub
          end

          if string.encoding == Encoding::BINARY
            utf8 = String.new(string, encoding: Encoding::UTF_8)
            return utf8 if utf8.valid_encoding?
          end
          string.encode(Encoding::UTF_8)
        end

        # A filesystem path from a String or Pathname.
        def path(value, name)
          return value.to_path if value.respond_to?(:to_path)
          return value.to_str if value.respond_to?(:to_str)

          raise TypeError, "#{name} must be a String or Pathname, got #{value.inspect[0, 80]}"
        end

        # The entrypoint's URL, which the compiler must be able to parse (it
        # stops altogether on one it cannot).
        def url(value)
          url = utf8(value.respond_to?(:to_str) ? value : value.to_s, 'url')
          error = Embedded.const_get(:Url).syntax_error(url)
          raise ArgumentError, "url #{url.inspect} is not a valid URL: #{error}" if error

          url
        end

        # +true+ or +false+; +nil+ is false, as in the established gem (where
        # it leaves the protobuf field at its default).
        def boolean(value, name)
          return value if value.equal?(true) || value.equal?(false)
          return false if value.nil?

          raise TypeError, "#{name} must be true, false or nil, got #{value.inspect[0, 80]}"
        end

        # One of +choices+, given as a Symbol or String: another name (or
        # +nil+, as in the established gem) is an +ArgumentError+, another type
        # a +TypeError+.
        def choice(value, choices, name)
          unless value.nil? || value.is_a?(Symbol) || value.is_a?(String)
            raise TypeError, "#{name} must be a Symbol or String, got #{value.inspect[0, 80]}"
          end

          symbol = value&.to_sym
          return symbol if choices.include?(symbol)

          raise ArgumentError,
                "#{name} must be one of #{choices.map(&:inspect).join(', ')}, got #{value.inspect}"
        end

        # An Array; +nil+ is an empty one.
        def list(value, name)
          return EMPTY_LIST if value.nil?
          return value.to_ary if value.respond_to?(:to_ary)

          raise TypeError, "#{name} must be an Array, got #{value.inspect[0, 80]}"
        end

        # Deprecation ids or Dart Sass versions, as Strings (+to_s+ of each
        # element, as the established gem sends them); the compiler judges
        # them.
        def deprecations(value, name)
          list = list(value, name)
          return EMPTY_LIST if list.empty?

          list.map { |deprecation| utf8(deprecation.to_s, name) }
        end

        def load_paths(value)
          list = list(value, 'load_paths')
          return EMPTY_LIST if list.empty?

          list.map do |path|
            [:path, File.absolute_path(utf8(self.path(path, 'load_paths'), 'load_paths'))]
          end
        end
      end
    end

    private_constant :Request
  end
end
