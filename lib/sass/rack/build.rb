# frozen_string_literal: true

require 'digest'
require 'json'
require 'pathname'

module Sass
  class Rack
    # One stylesheet's compile, and what it serves: the CSS (with its
    # +sourceMappingURL+ comment when maps are on), the source map, their
    # validators, and the Snapshot a later request checks. Used by the
    # middleware for each request that needs a compile and by
    # {Rack.precompile} for each entry stylesheet.
    # @!visibility private
    class Build
      # What one compile serves. +error+ is the CompileError of a failed
      # compile, whose +css+ is then the error page and +source_map+ nil.
      # Its strings are frozen: they are every later response's body, which
      # a middleware downstream must not be able to change.
      Output = Struct.new(:css, :source_map, :error, :snapshot, :started, keyword_init: true) do
        def initialize(css:, source_map: nil, **rest)
          super(css: css.freeze, source_map: source_map.freeze, **rest)
        end

        def css_etag = (@css_etag ||= Build.etag(css))
        def map_etag = (@map_etag ||= Build.etag(source_map))

        # The newest time of the files it read, unless Stylesheet set a later
        # one (see Stylesheet#dated).
        attr_writer :last_modified

        def last_modified = @last_modified || snapshot&.last_modified

        # The second before which no response may carry its Last-Modified
        # (Stylesheet#dated dated it past one given before, into a second
        # not yet begun), or nil.
        attr_accessor :dated_from
      end

      # The options {Sass.compile} takes that a Build passes on: every keyword
      # but the source map's, which +maps+ decides.
      COMPILE_OPTIONS = (Compiler.instance_method(:compile).parameters.filter_map do |type, name|
        name if type == :key
      end - %i[source_map source_map_include_sources]).freeze

      # The syntax of an entry stylesheet, by its extension.
      SYNTAXES = { '.sass' => :indented, '.css' => :css }.freeze

      # @param options [Hash] {Sass.compile}'s options
      # @param paths [SourcePath] where the stylesheets are, and how one is
      #   read
      # @param maps [Boolean] whether to build source maps
      # @param sources [Boolean] whether maps embed every source's text (so
      #   developer tools show them without fetching anything)
      # @raise [ArgumentError, TypeError, CompileError] for an option, or an
      #   option's value, that {Sass.compile} refuses: found now, by
      #   compiling an empty stylesheet with them, not at the first request
      def initialize(options, paths:, maps:, sources: true)
        Build.check_keywords(options.keys)
        @options = options.merge(source_map: maps, source_map_include_sources: maps && sources).freeze
        Sass.compile_string('', **@options)
        @paths = paths
        @load_paths = Array(options[:load_paths]).map { |path| File.expand_path(path) }.freeze
        # The files the compile loads from disk are read by Loaders, which
        # refuse one above the bound before reading it: the entry's
        # importer, and the load paths' after the compile's own importers.
        @entry_loader = Loader.new(paths.max_bytes)
        @importers = [*Array(options[:importers]), Loader.new(paths.max_bytes, @load_paths)].freeze
        # Where pkg: loads start looking for node_modules (see Snapshot).
        importers = Array(options[:importers]).grep(NodePackageImporter)
        @package_roots = importers.map { |importer| File.expand_path(importer.entry_point_directory) }.uniq.freeze
        @maps = maps
      end

      # Compiles +source+ (a real path SourcePath#resolve returned), served
      # as +name+ (+sub/app.css+). The compiler gets the text of the file
      # SourcePath#read checked, with the file's URL (so its loads, errors
      # and map are the file's), never a path to open again.
      # @return [Output, nil] nil when the file is no longer one to serve
      # @raise [CompileError] unless +rescue_errors+, when it fails
      def call(source, name, rescue_errors: true)
        started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
        started_at = Process.clock_gettime(Process::CLOCK_REALTIME)
        text = @paths.read(source)
        return if text == SourcePath::REFUSED
        return too_large(source, text, started, rescue_errors) if text.is_a?(SourcePath::TooLarge)

        spy = Snapshot::Spy.new
        begin
          result = compile(text, source, spy)
        rescue CompileError => e
          raise unless rescue_errors

          # Never trusted: the next request compiles again (a failing compile
          # usually stops early, and only development serves one).
          # The page shows the Sass error alone, not the server's backtrace.
          page = CompileError.css_page("#{e.detailed_message(highlight: false)}\n")
          return Output.new(css: page, error: e, snapshot: Snapshot.unchecked, started:)
        end
        snapshot = Snapshot.take(result.loaded_urls, spy.loads, @load_paths, started_at, package_roots: @package_roots)
        loaded_too_large(result, source, snapshot, started, rescue_errors) ||
          Output.new(css: css(result, name), source_map: (map(result.source_map, source, name) if @maps),
                     snapshot:, started:)
      end

      # What a stylesheet above max_source_bytes gets: nothing compiled, an
      # error that says why (the error page, logged once), never trusted.
      def too_large(source, too_large, started, rescue_errors)
        message = "#{source} is #{too_large.bytes} bytes, above max_source_bytes (#{@paths.max_bytes}): " \
                  'not compiled'
        error = CompileError.new(message, message, '', nil, [])
        raise error unless rescue_errors

        Output.new(css: CompileError.css_page("#{message}\n"), error:, snapshot: Snapshot.unchecked, started:)
      end

      # A file the compile loaded that is above max_source_bytes makes its
      # result one not served: an error that says which (the error page,
      # logged once). Only a file a custom importer or a pkg: URL resolved
      # gets here (the compiler read it; the Loaders refuse the others before
      # reading them); the refusal keeps the compile's snapshot, so while the
      # files stay as they are it stands and nothing compiles again. Sizes
      # come from the snapshot's stats (a file it did not stat is stat'ed
      # here).
      def loaded_too_large(result, source, snapshot, started, rescue_errors)
        result.loaded_urls.each do |url|
          path = Embedded.const_get(:Url).local_path(url)
          size = path && path != source && (snapshot.size_of(path) || File.size?(path))
          next unless size && size > @paths.max_bytes

          message = "#{path} (loaded by #{source}) is #{size} bytes, above max_source_bytes (#{@paths.max_bytes}): " \
                    'not served'
          error = CompileError.new(message, message, '', nil, [])
          raise error unless rescue_errors

          return Output.new(css: CompileError.css_page("#{message}\n"), error:, snapshot:, started:)
        end
        nil
      end

      # Raises ArgumentError for a keyword {Sass.compile} does not take (or
      # that the middleware sets itself).
      def self.check_keywords(keywords, allowed = COMPILE_OPTIONS)
        unknown = keywords - allowed
        return if unknown.empty?

        raise ArgumentError, "unknown keyword#{'s' if unknown.length > 1}: #{unknown.map(&:inspect).join(', ')}"
      end

      # A strong validator for +body+.
      def self.etag(body)
        %("#{Digest::SHA256.hexdigest(body)[0, 32]}")
      end

      private

      def compile(text, source, spy)
        url = Embedded.const_get(:Url).path_to_file_url(source)
        # What the compiler says of a file it reads that is not UTF-8.
        unless text.valid_encoding?
          raise CompileError.new('Invalid UTF-8.', "Error: Invalid UTF-8.\n    #{source}  root stylesheet", nil, nil,
                                 [url])
        end

        options = @options.except(:load_paths).merge(importers: [spy, *@importers], importer: @entry_loader)
        Sass.compile_string(text, url:, syntax: SYNTAXES.fetch(File.extname(source), :scss), **options)
      end

      def css(result, name)
        return result.css unless @maps

        "#{result.css}\n\n/*# sourceMappingURL=#{Embedded.const_get(:Url).escape(File.basename(name))}.map */\n"
      end

      # The compiler's map with +file+ the CSS file's name and each +file:+
      # source a URL relative to the map (so sources under the root keep their
      # place under the prefix, and no absolute server path is shown); the
      # sources' contents are embedded, so developer tools open them without
      # fetching anything.
      def map(json, source, name)
        map = JSON.parse(json)
        directory = Pathname.new(File.dirname(source))
        map['file'] = File.basename(name)
        map['sources'] = map['sources'].map do |url|
          path = Embedded.const_get(:Url).local_path(url)
          next url if path.nil?

          relative = Embedded.const_get(:Url).escape(Pathname.new(path).relative_path_from(directory).to_s)
          # A first segment with a colon would read as a scheme.
          relative.split('/', 2).first.include?(':') ? "./#{relative}" : relative
        end
        JSON.generate(map)
      end
    end
  end
end
