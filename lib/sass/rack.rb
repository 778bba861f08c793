# frozen_string_literal: true

require 'fileutils'
require 'time'
require_relative '../sass-embedded'
require_relative 'rack/source_path'
require_relative 'rack/snapshot'
require_relative 'rack/loader'
require_relative 'rack/build'
require_relative 'rack/stylesheet'
require_relative 'rack/precompile'

module Sass
  # A Rack middleware that serves the stylesheets of a directory compiled,
  # and recompiles one only when a file it depends on changed.
  #
  # @example config.ru
  #   require 'sass/rack'
  #   use Sass::Rack, root: 'styles', prefix: '/css'
  #   run MyApp
  #
  # +GET /css/app.css+ answers with +styles/app.scss+ (or +.sass+, or +.css+)
  # compiled; every other request goes on to the application. Partials,
  # hidden files and anything outside +root+ are never served.
  #
  # While +recompile+ is on (the default, unless +APP_ENV+ or +RACK_ENV+ is
  # +production+), a request costs a stat of each file the last compile loaded
  # and of the directories where a file could appear that would win one of
  # its loads; only a change recompiles. Concurrent requests for one
  # stylesheet wait for one compile. A stylesheet that fails to compile
  # answers with an error page like {CompileError#to_css} (the Sass error,
  # without the server's backtrace) shown at the top of the page, is
  # compiled again by the next request, and the error is logged once to
  # +rack.errors+. With +recompile:
  # false+ each stylesheet is compiled once and kept; a failure then answers
  # 500 without its message (which is logged).
  #
  # Responses carry +ETag+ and +Last-Modified+, and conditional requests get
  # 304.
  class Rack
    # The request methods the middleware answers; others go on to the app.
    SERVED_METHODS = %w[GET HEAD].freeze
    # The most bytes of compiled output (CSS and maps) a middleware keeps by
    # default (see #kept): a real app's stylesheets take a few MiB at most.
    CACHE_BYTES = 64 * 1024 * 1024
    private_constant :SERVED_METHODS, :CACHE_BYTES

    # @param app [#call] the Rack application
    # @param root [String] the directory of the stylesheets
    # @param prefix [String] the URL path they are served under
    # @param recompile [Boolean] whether to check the files on each request
    #   and recompile what changed (off: compile each stylesheet once)
    # @param source_map [Boolean] whether to serve +name.css.map+ beside each
    #   +name.css+ and point the CSS at it
    # @param source_map_include_sources [Boolean] whether the maps embed the
    #   text of every loaded file (the default; off: developer tools fetch
    #   each source by its URL)
    # @param cache_control [String, nil] the +Cache-Control+ of compiled
    #   stylesheets (nil: none)
    # @param cache_bytes [Integer] the most bytes of compiled output (CSS
    #   and maps) kept; beyond it the least recently requested stylesheets'
    #   outputs are let go (and compiled again if asked for again)
    # @param max_source_bytes [Integer] the largest file read (default 16
    #   MiB): a larger stylesheet, or a larger file it loads from disk, is
    #   not read, and its request is answered as a compile error that says so
    #   (logged); a compile that loaded a larger file through a custom
    #   importer (read by the compiler) is not served either
    # @param options [Hash] {Sass.compile}'s options: +load_paths+, +style+,
    #   +functions+, +importers+, +logger+, the deprecation options, ...
    # @raise [ArgumentError, TypeError] for a root that is not a directory, a
    #   prefix that is not a plain absolute URL path, or an option (or an
    #   option's value) that the middleware or {Sass.compile} refuses: when
    #   the middleware is made, not at the first request
    def initialize(app, root:, prefix: '/', recompile: Rack.recompile_default, source_map: false,
                   source_map_include_sources: true, cache_control: 'no-cache', cache_bytes: CACHE_BYTES,
                   max_source_bytes: SourcePath::MAX_BYTES, **options)
      check_boolean(recompile:, source_map:, source_map_include_sources:)
      unless cache_control.nil? || cache_control.is_a?(String)
        raise TypeError, "cache_control must be a String or nil, got #{cache_control.inspect}"
      end
      unless cache_bytes.is_a?(Integer) && cache_bytes.positive?
        raise ArgumentError, "cache_bytes must be a positive Integer, got #{cache_bytes.inspect}"
      end

      @app = app
      @paths = SourcePath.new(root, prefix, maps: source_map, max_bytes: max_source_bytes)
      @build = Build.new(options, paths: @paths, maps: source_map, sources: source_map_include_sources)
      @recompile = recompile
      @cache_control = cache_control
      @cache_bytes = cache_bytes
      # Real path => [Stylesheet, the bytes its output was counted at], the
      # least recently requested first; @bytes is their sum.
      @stylesheets = {}
      @bytes = 0
      @mutex = Mutex.new
    end

    # @param env [Hash] the Rack environment
    # @return [Array] the Rack response
    def call(env)
      arrived = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      method = env['REQUEST_METHOD']
      return @app.call(env) unless SERVED_METHODS.include?(method)

      target = @paths.resolve(env['PATH_INFO'].to_s)
      return @app.call(env) if target.nil?

      response = answer(target, arrived, env)
      response[2] = [] if method == 'HEAD'
      response
    end

    # Compiles every stylesheet under +root+ that the middleware would serve
    # into +output+, keeping their paths (+styles/sub/app.scss+ becomes
    # +output/sub/app.css+, with +app.css.map+ beside it when +source_map+),
    # for a server that serves them as files.
    # @param root [String] the directory of the stylesheets
    # @param output [String] the directory to write the CSS into
    # @param source_map [Boolean] whether to write source maps beside the CSS
    # @param options [Hash] {Sass.compile}'s options, as for {#initialize}
    # @return [Array<String>] the files written
    # @raise [CompileError] when a stylesheet fails to compile
    def self.precompile(root:, output:, source_map: false, source_map_include_sources: true,
                        max_source_bytes: SourcePath::MAX_BYTES, **options)
      paths = SourcePath.new(root, '/', maps: source_map, max_bytes: max_source_bytes)
      build = Build.new(options, paths:, maps: source_map, sources: source_map_include_sources)
      Precompile.new(paths, build, output).call
    end

    # Whether the middleware recompiles by default: unless +APP_ENV+ (as
    # Sinatra reads it) or +RACK_ENV+ says +production+.
    # @return [Boolean]
    def self.recompile_default
      ENV.fetch('APP_ENV') { ENV.fetch('RACK_ENV', 'development') } != 'production'
    end

    private_constant :SourcePath, :Snapshot, :Loader, :Build, :Stylesheet, :Precompile

    private

    # Raises TypeError for any of +options+ that is not true or false.
    def check_boolean(**options)
      options.each do |name, value|
        raise TypeError, "#{name} must be true or false, got #{value.inspect}" unless [true, false].include?(value)
      end
    end

    def answer(target, arrived, env)
      return plain(404, 'Not Found') if target == SourcePath::REFUSED

      stylesheet = stylesheet(target)
      output = stylesheet.fetch(arrived, env['rack.errors'])
      kept(target.source, stylesheet)
      output.nil? ? plain(404, 'Not Found') : respond(output, target.kind, env)
    end

    # The stylesheet of +target+, kept by its real path (so every spelling
    # of one file shares one compile and one entry), and now the most
    # recently requested. Entries are made only for stylesheets that exist
    # in the root, so there are at most as many as the root holds.
    def stylesheet(target)
      @mutex.synchronize do
        entry = @stylesheets.delete(target.source) ||
                [Stylesheet.new(@recompile) { @build.call(target.source, target.name) }, 0]
        @stylesheets[target.source] = entry
        entry.first
      end
    end

    # Counts the output +stylesheet+ keeps now, then lets the least recently
    # requested outputs go while all of them exceed +cache_bytes+ (never the
    # one just served). Outputs, not entries, are what is bounded: with
    # +recompile+ off nothing is let go below the bound, however many
    # stylesheets the root has (counting entries made a root of 600 compile
    # at every request, round after round).
    def kept(source, stylesheet)
      @mutex.synchronize do
        entry = @stylesheets[source]
        next unless entry&.first.equal?(stylesheet)

        bytes = stylesheet.bytes
        @bytes += bytes - entry.last
        entry[1] = bytes
        while @bytes > @cache_bytes
          oldest = @stylesheets.each_key.find { |key| key != source } or break
          @bytes -= @stylesheets.delete(oldest).last
        end
      end
    end

    def respond(output, kind, env)
      if output.error
        return plain(500, "Sass compile error (logged)\n") unless @recompile

        return kind == :map ? plain(404, 'Not Found') : css(output.css, { 'cache-control' => 'no-store' })
      end
      return plain(404, 'Not Found') if kind == :map && output.source_map.nil?

      body, etag = kind == :map ? [output.source_map, output.map_etag] : [output.css, output.css_etag]
      last_modified = given_last_modified(output)
      validators = { 'etag' => etag, 'last-modified' => last_modified&.httpdate }
      headers = { 'cache-control' => @cache_control, **validators }.compact
      return [304, headers, []] if not_modified?(env, etag, last_modified)

      kind == :map ? [200, content('application/json', body).merge(headers), [body]] : css(body, headers)
    end

    # RFC 9110 8.8.2.1: never a Last-Modified later than the response; and
    # none at all before the second a changed result was dated to begins
    # (Stylesheet#dated).
    def given_last_modified(output)
      now = Time.now
      return if output.dated_from && now.to_i < output.dated_from.to_i

      output.last_modified&.then { |time| [time, now].min }
    end

    def css(body, headers)
      [200, content('text/css; charset=utf-8', body).merge(headers), [body]]
    end

    def plain(status, body)
      [status, content('text/plain; charset=utf-8', body), [body]]
    end

    def content(type, body)
      { 'content-type' => type, 'content-length' => body.bytesize.to_s }
    end

    # RFC 9110 13.2.2: If-None-Match decides when present; If-Modified-Since
    # only without it.
    def not_modified?(env, etag, last_modified)
      if (match = env['HTTP_IF_NONE_MATCH'])
        tags = match.split(',').map { |tag| tag.strip.delete_prefix('W/') }
        tags.include?('*') || tags.include?(etag)
      elsif (since = env['HTTP_IF_MODIFIED_SINCE']) && last_modified
        last_modified.to_i <= Time.httpdate(since).to_i
      else
        false
      end
    rescue ArgumentError
      false
    end
  end
end
