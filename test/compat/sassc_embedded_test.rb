# frozen_string_literal: true

require_relative '../test_helper'
require 'json'
require 'uri'

# sassc-embedded (the SassC shim that Sprockets, sassc-rails and bootstrap
# users run) renders every template through one Sass.compile_string call:
# each boolean option straight from the SassC options Hash, so nil unless the
# user set it; the SassC importer wrapped as an importer object given both as
# +importer:+ and in +importers:+; SassC functions as lambdas keyed by their
# Sass signature; a CompileError turned into a SassC::SyntaxError built from
# +full_message+, the span's line and URL, and +loaded_urls+.
class SasscEmbeddedCompatTest < Minitest::Test
  # The path of a file: URL, as the shim reads it (on Windows without the
  # slash before the drive letter).
  def self.url_path(url)
    path = URI.decode_www_form_component(URI(url).path)
    path.match?(%r{\A/[A-Za-z]:/}) ? path.delete_prefix('/') : path
  end

  # Stands for SassC::SyntaxError.
  class SyntaxError < StandardError
    attr_reader :filename, :line

    def initialize(message, filename:, line:)
      super(message)
      @filename = filename
      @line = line
    end
  end

  # The importer shape of the shim: +canonicalize(url, context)+ that reads
  # +context.from_import+, and +load+ returning a Hash with a
  # +source_map_url+. It resolves imports relative to the importing file.
  class ShimImporter
    IMPORT = 'shim-import:'

    def initialize(entry_url)
      @parent_urls = [entry_url]
      @from_import = []
    end

    attr_reader :from_import

    def canonicalize(url, context)
      @from_import << context.from_import
      return url if url.start_with?(IMPORT)
      return nil unless url.start_with?('file:')

      path = SasscEmbeddedCompatTest.url_path(url)
      candidates = [path, "#{File.dirname(path)}/_#{File.basename(path)}"].flat_map { |p| ["#{p}.scss", p] }
      found = candidates.find { |candidate| File.file?(candidate) }
      "#{IMPORT}#{FILE_URL_PREFIX}#{found}" if found
    end

    def load(canonical_url)
      url = canonical_url.delete_prefix(IMPORT)
      { contents: File.read(SasscEmbeddedCompatTest.url_path(url)), syntax: :scss, source_map_url: url }
    end
  end

  # The options of SassC::Engine that the shim reads, as a Sprockets-era
  # caller leaves them: unset (nil).
  def render(template, options = {})
    filename = options[:filename]
    file_url = "#{FILE_URL_PREFIX}#{File.absolute_path(filename || 'stdin')}"
    importer = options[:importer] ? ShimImporter.new(file_url) : nil
    result = Sass.compile_string(
      template,
      importer:,
      load_paths: importer.nil? ? options.fetch(:load_paths, []) : [],
      syntax: options.fetch(:syntax, :scss),
      url: file_url,
      charset: options.fetch(:charset, true),
      source_map: options[:source_map_embed] || !options[:source_map_file].nil?,
      source_map_include_sources: options[:source_map_contents],
      style: :expanded,
      functions: options.fetch(:functions, {}),
      importers: (importer.nil? ? [] : [importer]).concat(options.fetch(:importers, [])),
      alert_ascii: options[:alert_ascii],
      alert_color: options[:alert_color],
      logger: options[:logger],
      quiet_deps: options[:quiet_deps],
      verbose: options[:verbose]
    )
    [result, importer]
  rescue Sass::CompileError => e
    line = e.span&.start&.line
    path = e.span&.url&.then { |url| SasscEmbeddedCompatTest.url_path(url) if url.start_with?('file:') }
    raise SyntaxError.new(e.full_message, filename: path, line: line && (line + 1))
  end

  def test_a_render_with_every_boolean_option_nil
    result, = render('a { b: "é"; c: (1 + 2) }',
                     charset: nil, source_map_contents: nil, alert_ascii: nil, alert_color: nil,
                     quiet_deps: nil, verbose: nil, source_map_embed: nil)
    assert_equal "a {\n  b: \"é\";\n  c: 3;\n}", result.css, 'charset: nil leaves @charset out'
    assert_nil result.source_map
  end

  def test_unset_options_keep_their_defaults
    result, = render('a { b: "é" }')
    assert result.css.start_with?('@charset "UTF-8";')
    result, = render('a { b: c }', source_map_file: 'out.css.map')
    map = JSON.parse(result.source_map)
    refute map.key?('sourcesContent'), 'source_map_contents unset: no sources in the map'
  end

  def test_imports_through_the_importer_given_as_importer_and_in_importers
    in_tmpdir do |dir|
      File.write(File.join(dir, '_vars.scss'), '$color: teal;')
      File.write(File.join(dir, 'theme.scss'), ".theme { color: $color; }\n")
      entry = File.join(dir, 'application.scss')
      result, importer = Dir.chdir(dir) do
        options = { filename: entry, importer: true, functions: {}, quiet_deps: nil, verbose: nil,
                    logger: Sass::Logger.silent }
        render("@import 'vars';\n@import 'theme';", options)
      end
      assert_equal ".theme {\n  color: teal;\n}", result.css
      assert_includes importer.from_import, true
      dependencies = result.loaded_urls.select { |url| url.start_with?('shim-import:') }
      assert_equal 2, dependencies.length
    end
  end

  def test_functions_keyed_by_formatted_signature
    helpers = Class.new do
      def image_url(path) = Sass::Value::String.new("url(/assets/#{path.text})", quoted: false)
    end.new
    functions = {
      'image-url($path)' => ->(args) { helpers.image_url(args[0].assert_string) },
      'asset-path($path, $options: ())' => ->(args) { Sass::Value::String.new("/assets/#{args[0].text}") }
    }
    result, = render("a { b: image-url('x.png'); c: asset-path('y.css') }", functions:, alert_color: nil)
    assert_equal "a {\n  b: url(/assets/x.png);\n  c: \"/assets/y.css\";\n}", result.css
  end

  def test_a_failing_function_is_reported_with_its_ruby_story
    functions = { 'broken($x)' => lambda { |_args|
      begin
        raise ArgumentError, 'inner'
      rescue StandardError
        raise Sass::ScriptError, 'Error: error in C function broken'
      end
    } }
    error = assert_raises(SyntaxError) do
      render("a {\n  b: broken(1);\n}", filename: '/tmp/app.scss', functions:, alert_color: nil)
    end
    assert_equal File.absolute_path('/tmp/app.scss'), error.filename
    assert_equal 2, error.line
    assert_match(/Error: error in C function broken \(Sass::ScriptError\) \(Sass::CompileError\)/, error.message)
    assert_match(/from #{Regexp.escape(__FILE__)}/, error.message, 'the Ruby backtrace is in the message')
  end

  def test_syntax_errors_carry_the_line_and_file
    error = assert_raises(SyntaxError) { render("a {\n  b: ;\n}", filename: '/tmp/broken.scss', alert_color: nil) }
    assert_equal File.absolute_path('/tmp/broken.scss'), error.filename
    assert_equal 2, error.line
    assert_match(/Expected expression/, error.message)
    refute_match(/\e\[/, error.message) unless Exception.to_tty?
  end

  def test_indented_syntax_and_load_paths
    in_tmpdir do |dir|
      File.write(File.join(dir, '_mixins.sass'), "=box\n  border: 1px solid\n")
      result, = render("@use 'mixins'\n.a\n  +mixins.box\n", syntax: :indented, load_paths: [dir], verbose: nil)
      assert_equal ".a {\n  border: 1px solid;\n}", result.css
    end
  end
end
