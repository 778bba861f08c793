# frozen_string_literal: true

require_relative '../test_helper'
require 'json'
require 'uri'

# jekyll-sass-converter compiles each page with Sass.compile_string and a
# Hash of options (load paths from the site, charset, a source map with its
# sources, the style, syntax and page URL, quiet_deps and verbose as
# booleans), rewrites the source map's file: URLs relative to the page, and
# on a CompileError logs +full_message+ and serves +to_css+ while live
# reloading (or raises its own error with +message+).
class JekyllCompatTest < Minitest::Test
  class SyntaxError < ArgumentError; end

  # The converter, reduced to what it asks of sass-embedded.
  class Converter
    attr_reader :logged

    def initialize(site_source, config = {})
      @site_source = site_source
      @config = config
      @logged = []
    end

    def sass_configs(page)
      {
        load_paths: [File.join(@site_source, '_sass')],
        charset: !page.nil?,
        source_map: !page.nil?,
        source_map_include_sources: true,
        style: @config.fetch('style', 'expanded').to_s.delete_prefix(':').to_sym,
        syntax: page&.end_with?('.sass') ? :indented : :scss,
        url: page && "#{FILE_URL_PREFIX}#{File.join(@site_source, page)}",
        quiet_deps: !!@config.fetch('quiet_deps', false), # rubocop:disable Style/DoubleNegation
        verbose: !!@config.fetch('verbose', false) # rubocop:disable Style/DoubleNegation
      }.merge(@config.fetch('extra', {}))
    end

    def convert(content, page)
      output = Sass.compile_string(content, **sass_configs(page))
      map = output.source_map && JSON.parse(output.source_map)
      map&.fetch('sources')&.map! do |source|
        source.start_with?('file:') ? URI(source).route_from("#{FILE_URL_PREFIX}#{@site_source}/").to_s : source
      end
      [output.css, map]
    rescue Sass::CompileError => e
      @logged << e.full_message
      raise SyntaxError, e.message unless @config['livereload']

      [e.to_css, nil]
    end
  end

  def site
    in_tmpdir do |dir|
      Dir.mkdir(File.join(dir, '_sass'))
      Dir.mkdir(File.join(dir, 'assets'))
      File.write(File.join(dir, '_sass', '_base.scss'), "$accent: navy;\nbody { color: $accent; }")
      yield dir
    end
  end

  def test_a_page_with_a_source_map_of_relative_sources
    site do |dir|
      css, map = Converter.new(dir).convert("@use 'base';\nh1 { b: \"é\" }", 'assets/main.scss')
      assert_equal "@charset \"UTF-8\";\nbody {\n  color: navy;\n}\n\nh1 {\n  b: \"é\";\n}", css
      assert_equal %w[_sass/_base.scss assets/main.scss], map['sources'].sort
      assert_equal 2, map['sourcesContent'].length
    end
  end

  def test_a_compressed_sass_page_and_a_converter_without_a_page
    site do |dir|
      css, = Converter.new(dir, 'style' => ':compressed').convert("@use 'base'\nh1\n  b: c\n", 'assets/a.sass')
      assert_equal 'body{color:navy}h1{b:c}', css
      css, map = Converter.new(dir).convert("@use 'base';", nil)
      assert_equal "body {\n  color: navy;\n}", css
      assert_nil map
    end
  end

  def test_an_importer_from_a_theme_plugin
    site do |dir|
      theme = { canonicalize: ->(url, _context) { "theme:#{url}" if url.start_with?('minima') },
                load: ->(_url) { { contents: '.theme { from: plugin; }', syntax: :scss } } }
      converter = Converter.new(dir, 'extra' => { importers: [theme] })
      css, = converter.convert("@use 'minima';", 'assets/main.scss')
      assert_equal ".theme {\n  from: plugin;\n}", css
    end
  end

  def test_errors_are_logged_in_full_and_shown_as_css_when_live_reloading
    site do |dir|
      converter = Converter.new(dir, 'livereload' => true)
      css, = converter.convert("@use 'base';\nh1 { b: }", 'assets/main.scss')
      assert css.start_with?('/* '), css
      assert_includes css.lines.first, 'Error: Expected expression. (Sass::CompileError)'
      assert_match(%r{content: "(/|[A-Za-z]:)}, css)
      assert_match(/Error: Expected expression/, Sass.compile_string(css).css)
      logged = converter.logged.first
      assert_match(/Expected expression. \(Sass::CompileError\)/, logged)
      assert_match(/\n\tfrom /, logged, 'the log has the Ruby backtrace')

      error = assert_raises(SyntaxError) { Converter.new(dir).convert('h1 { b: }', 'assets/main.scss') }
      assert_equal 'Expected expression.', error.message
    end
  end

  def test_quiet_deps_and_verbose_booleans
    site do |dir|
      File.write(File.join(dir, '_sass', '_old.scss'), 'a { b: (4 / 2) }')
      _out, err = capture_subprocess_io do
        Converter.new(dir, 'quiet_deps' => true).convert("@use 'old';", 'assets/main.scss')
      end
      assert_empty err
      _out, err = capture_subprocess_io do
        Converter.new(dir, 'quiet_deps' => nil).convert("@use 'old';", 'assets/main.scss')
      end
      assert_match(/DEPRECATION WARNING/, err)
    end
  end
end
