# frozen_string_literal: true

require_relative 'test_helper'
require 'json'
require 'minitest/mock'

class CompileTest < Minitest::Test
  def test_compile_string_returns_css
    result = Sass.compile_string('a { b: c; .d { e: 1px + 2px } }')
    assert_equal "a {\n  b: c;\n}\na .d {\n  e: 3px;\n}", result.css
    assert_nil result.source_map
    assert_empty result.loaded_urls
    assert_equal Encoding::UTF_8, result.css.encoding
  end

  def test_compile_reads_a_file_relative_to_the_working_directory
    in_tmpdir do |dir|
      File.write(File.join(dir, 'style.scss'), "@use 'partial';\na { b: partial.$x }")
      File.write(File.join(dir, '_partial.scss'), '$x: 42px;')
      result = Dir.chdir(dir) { Sass.compile('style.scss') }
      assert_equal "a {\n  b: 42px;\n}", result.css
      expected = ["#{FILE_URL_PREFIX}#{File.realpath(dir)}/style.scss",
                  "#{FILE_URL_PREFIX}#{File.realpath(dir)}/_partial.scss"]
      assert_equal expected.sort, (result.loaded_urls.sort.map { |url| url.sub(dir, File.realpath(dir)) })
    end
  end

  def test_compile_accepts_a_pathname
    require 'pathname'
    in_tmpdir do |dir|
      path = Pathname(dir) / 'style.sass'
      path.write("a\n  b: c\n")
      assert_equal "a {\n  b: c;\n}", Sass.compile(path).css
    end
  end

  def test_missing_file_is_a_compile_error
    error = assert_raises(Sass::CompileError) { Sass.compile('/nonexistent/dir/style.scss') }
    assert_match(/no such file|Cannot open file/i, error.message)
  end

  def test_style_compressed_and_expanded
    assert_equal 'a{b:c}', Sass.compile_string('a { b: c }', style: :compressed).css
    assert_equal 'a{b:c}', Sass.compile_string('a { b: c }', style: 'compressed').css
    assert_equal "a {\n  b: c;\n}", Sass.compile_string('a { b: c }', style: :expanded).css
  end

  def test_syntax_indented_and_css
    assert_equal "a {\n  b: c;\n}", Sass.compile_string("a\n  b: c", syntax: :indented).css
    assert_equal "a {\n  b: c;\n}", Sass.compile_string('a { b: c }', syntax: :css).css
    assert_raises(Sass::CompileError) { Sass.compile_string('$x: 1; a { b: $x }', syntax: :css) }
  end

  def test_source_map_and_included_sources
    result = Sass.compile_string('a { b: c }', source_map: true, url: 'file:///tmp/in.scss')
    map = JSON.parse(result.source_map)
    assert_equal 3, map['version']
    assert_equal ['file:///tmp/in.scss'], map['sources']
    refute map.key?('sourcesContent')

    result = Sass.compile_string('a { b: c }', source_map: true, source_map_include_sources: true)
    assert_equal ['a { b: c }'], JSON.parse(result.source_map)['sourcesContent']
  end

  def test_charset
    assert_equal "@charset \"UTF-8\";\na {\n  b: \"é\";\n}", Sass.compile_string('a { b: "é" }').css
    assert_equal "a {\n  b: \"é\";\n}", Sass.compile_string('a { b: "é" }', charset: false).css
    assert_equal "\uFEFFa{b:\"é\"}", Sass.compile_string('a { b: "é" }', style: :compressed).css
  end

  def test_url_resolves_relative_loads_and_is_a_loaded_url
    in_tmpdir do |dir|
      File.write(File.join(dir, '_other.scss'), 'c { d: e }')
      url = "#{FILE_URL_PREFIX}#{dir}/entry.scss"
      result = Sass.compile_string("@use 'other';", url:)
      assert_equal "c {\n  d: e;\n}", result.css
      assert_includes result.loaded_urls, url
      assert_includes result.loaded_urls, "#{FILE_URL_PREFIX}#{dir}/_other.scss"

      require 'uri'
      assert_equal "c {\n  d: e;\n}", Sass.compile_string("@use 'other';", url: URI(url)).css
    end
  end

  def test_load_paths_are_resolved_against_the_working_directory_and_come_after_importers
    in_tmpdir do |dir|
      Dir.mkdir(File.join(dir, 'lib'))
      File.write(File.join(dir, 'lib', '_lib.scss'), 'from { load: path }')
      css = Dir.chdir(dir) { Sass.compile_string("@use 'lib';", load_paths: ['lib']).css }
      assert_equal "from {\n  load: path;\n}", css

      importer = {
        canonicalize: ->(url, _context) { url == 'lib' ? 'memory:lib' : nil },
        load: ->(_url) { { contents: 'from { an: importer }', syntax: :scss } }
      }
      css = Dir.chdir(dir) { Sass.compile_string("@use 'lib';", load_paths: ['lib'], importers: [importer]).css }
      assert_equal "from {\n  an: importer;\n}", css
    end
  end

  def test_simplest_importer_and_function_through_the_callback_path
    importer = Class.new do
      def canonicalize(url, _context)
        "memory:#{url}" unless url.start_with?('memory:')
      end

      def load(url)
        { contents: "x { from: #{url.delete_prefix('memory:')}; v: double(21) }", syntax: :scss }
      end
    end.new
    functions = { 'double($n)' => ->(args) { Sass::Value::Number.new(args[0].assert_number.value * 2) } }
    result = Sass.compile_string("@use 'thing';", importers: [importer], functions:)
    assert_equal "x {\n  from: thing;\n  v: 42;\n}", result.css
    assert_equal ['memory:thing'], result.loaded_urls
  end

  def test_importer_for_the_entrypoint
    importer = {
      canonicalize: ->(url, _context) { url.start_with?('mem:') ? url : "mem:#{url}" },
      load: ->(url) { { contents: "y { z: #{url.delete_prefix('mem:')} }", syntax: :scss } }
    }
    result = Sass.compile_string("@use 'sibling';", importer:, url: 'mem:entry')
    assert_equal "y {\n  z: sibling;\n}", result.css
  end

  def test_file_importer
    in_tmpdir do |dir|
      File.write(File.join(dir, '_found.scss'), 'f { g: h }')
      importer = { find_file_url: ->(url, _context) { "#{FILE_URL_PREFIX}#{dir}/#{url}" if url == 'found' } }
      assert_equal "f {\n  g: h;\n}", Sass.compile_string("@use 'found';", importers: [importer]).css
    end
  end

  def test_alert_ascii_and_alert_color_shape_the_formatted_message
    error = assert_raises(Sass::CompileError) { Sass.compile_string('a {', alert_ascii: true, alert_color: false) }
    assert_match(/^  ,$/, error.full_message)
    refute_match(/[^\x00-\x7f]/, error.full_message)

    error = assert_raises(Sass::CompileError) { Sass.compile_string('a {', alert_ascii: false, alert_color: true) }
    assert_match(/\e\[/, error.full_message(highlight: true))
    refute_match(/\e\[/, error.full_message(highlight: false))
    assert_match(/│/, error.full_message)
  end

  def test_deprecation_options
    source = 'a { b: (4 / 2) }'
    logger = RecordingLogger.new
    Sass.compile_string(source, logger:)
    assert_equal(['slash-div'], logger.warnings.map { |w| w[:deprecation_type] })

    error = assert_raises(Sass::CompileError) { Sass.compile_string(source, fatal_deprecations: ['slash-div']) }
    assert_match(/slash/i, error.message)
    assert_raises(Sass::CompileError) { Sass.compile_string(source, fatal_deprecations: [:'slash-div']) }

    logger = RecordingLogger.new
    Sass.compile_string(source, silence_deprecations: ['slash-div'], logger:)
    assert_empty logger.warnings

    # Dart Sass 1.105 has no future deprecation left to opt into; that it
    # answers about the one passed shows the option reaches the compiler.
    logger = RecordingLogger.new
    Sass.compile_string('a { b: c }', future_deprecations: ['import'], logger:)
    assert_equal(['import is not a future deprecation, so it does not need to be explicitly enabled.'],
                 logger.warnings.map { |w| w[:message] })
    logger = RecordingLogger.new
    Sass.compile_string('a { b: c }', future_deprecations: [], logger:)
    assert_empty logger.warnings
  end

  def test_quiet_deps_silences_warnings_from_load_paths
    in_tmpdir do |dir|
      File.write(File.join(dir, '_dep.scss'), 'a { b: (4 / 2) }')
      logger = RecordingLogger.new
      Sass.compile_string("@use 'dep';", load_paths: [dir], logger:)
      assert_equal 1, logger.warnings.length

      logger = RecordingLogger.new
      Sass.compile_string("@use 'dep';", load_paths: [dir], quiet_deps: true, logger:)
      assert_empty logger.warnings
    end
  end

  def test_verbose_reports_every_repeated_deprecation
    source = (1..8).map { |i| "a#{i} { b: (#{i} / 2) }" }.join("\n")
    logger = RecordingLogger.new
    Sass.compile_string(source, logger:)
    terse = logger.warnings.count { |w| w[:deprecation] }
    logger = RecordingLogger.new
    Sass.compile_string(source, logger:, verbose: true)
    assert_equal(8, logger.warnings.count { |w| w[:deprecation] })
    assert_operator terse, :<, 8
  end

  def test_keyword_parameters_match_the_established_api
    expected_string = %i[importer load_paths syntax url charset source_map source_map_include_sources style functions
                         importers alert_ascii alert_color fatal_deprecations future_deprecations logger quiet_deps
                         silence_deprecations verbose]
    parameters = Sass::Compiler.instance_method(:compile_string).parameters
    assert_equal %i[req source], parameters.first
    assert_equal expected_string.sort, parameters.select { |kind, _| kind == :key }.map(&:last).sort
    parameters = Sass::Compiler.instance_method(:compile).parameters
    assert_equal expected_string - %i[importer syntax url],
                 parameters.select { |kind, _| kind == :key }.map(&:last) & expected_string
    assert_equal (expected_string - %i[importer syntax url]).sort,
                 parameters.select { |kind, _| kind == :key }.map(&:last).sort
  end

  def test_unknown_keyword_is_an_argument_error
    error = assert_raises(ArgumentError) { Sass.compile_string('a {b: c}', no_such_option: 1) }
    assert_match(/no_such_option/, error.message)
    assert_raises(ArgumentError) { Sass.compile('x.scss', syntax: :scss) }
  end

  def test_nil_booleans_are_false_as_in_the_established_gem
    source = 'a { b: "é" }'
    result = Sass.compile_string(source, charset: nil, source_map: nil, source_map_include_sources: nil,
                                         alert_ascii: nil, quiet_deps: nil, verbose: nil)
    assert_equal "a {\n  b: \"é\";\n}", result.css, 'charset: nil leaves the charset out'
    assert_nil result.source_map
    result = Sass.compile_string(source, source_map: true, source_map_include_sources: nil)
    refute JSON.parse(result.source_map).key?('sourcesContent')

    error = assert_raises(Sass::CompileError) { Sass.compile_string('a {', alert_ascii: nil, alert_color: false) }
    assert_match(/│/, error.detailed_message(highlight: false), 'alert_ascii: nil allows Unicode')

    in_tmpdir do |dir|
      File.write(File.join(dir, '_dep.scss'), 'a { b: (4 / 2) }')
      logger = RecordingLogger.new
      Sass.compile_string("@use 'dep';", load_paths: [dir], quiet_deps: nil, logger:)
      assert_equal 1, logger.warnings.length, 'quiet_deps: nil reports warnings from dependencies'
    end
    source = (1..8).map { |i| "a#{i} { b: (#{i} / 2) }" }.join("\n")
    logger = RecordingLogger.new
    Sass.compile_string(source, logger:, verbose: nil)
    assert_operator(logger.warnings.count { |w| w[:deprecation] }, :<, 8, 'verbose: nil is terse')
  end

  def test_alert_color_nil_asks_whether_stderr_is_a_tty
    [true, false].each do |tty|
      Exception.stub(:to_tty?, tty) do
        error = assert_raises(Sass::CompileError) { Sass.compile_string('a {', alert_color: nil) }
        assert_equal tty, error.detailed_message(highlight: true).include?("\e[31m"), "tty: #{tty}"
      end
    end
  end

  def test_nil_lists_and_hashes_are_empty
    result = Sass.compile_string('a { b: c }', load_paths: nil, importers: nil, functions: nil,
                                               fatal_deprecations: nil, future_deprecations: nil,
                                               silence_deprecations: nil, logger: nil, importer: nil, url: nil)
    assert_equal "a {\n  b: c;\n}", result.css
  end

  def test_options_of_the_wrong_type_are_type_errors_that_name_the_option
    {
      { source_map: 'yes' } => /source_map must be true, false or nil, got "yes"/,
      { charset: 1 } => /charset must be true, false or nil, got 1/,
      { alert_color: 'auto' } => /alert_color must be true, false or nil/,
      { quiet_deps: :yes } => /quiet_deps must be true, false or nil/,
      { load_paths: 'dir' } => /load_paths must be an Array/,
      { load_paths: [42] } => /load_paths must be a String or Pathname/,
      { importers: {} } => /importers must be an Array/,
      { functions: [] } => /functions must be a Hash/,
      { fatal_deprecations: 'slash-div' } => /fatal_deprecations must be an Array/,
      { style: 42 } => /style must be a Symbol or String, got 42/,
      { syntax: 1.5 } => /syntax must be a Symbol or String, got 1.5/
    }.each do |options, message|
      error = assert_raises(TypeError, options.inspect) { Sass.compile_string('a {b: c}', **options) }
      assert_match message, error.message, options.inspect
    end
    assert_raises(TypeError) { Sass.compile_string(42) }
    assert_raises(TypeError) { Sass.compile(42) }
  end

  def test_invalid_choices_and_missing_inputs_are_argument_errors
    {
      { style: :nested } => /style must be one of :expanded, :compressed/,
      { style: nil } => /style must be one of :expanded, :compressed/,
      { syntax: :less } => /syntax must be one of :scss, :indented, :css/,
      { functions: { 'f()' => 42 } } => /must respond to call/,
      { importers: [Object.new] } => /\Aimporter must be an Importer or a FileImporter\z/,
      { importer: 42 } => /\Aimporter must be an Importer or a FileImporter\z/
    }.each do |options, message|
      error = assert_raises(ArgumentError, options.inspect) { Sass.compile_string('a {b: c}', **options) }
      assert_match message, error.message, options.inspect
    end
    assert_equal 'source must be set', assert_raises(ArgumentError) { Sass.compile_string(nil) }.message
    assert_equal 'path must be set', assert_raises(ArgumentError) { Sass.compile(nil) }.message
  end

  def test_what_the_compiler_judges_is_a_compile_error
    # A URL that is not absolute, an unknown deprecation id: Sass's business.
    Sass.compile_string('a {b: c}', url: 42, logger: Sass::Logger.silent)
    logger = RecordingLogger.new
    Sass.compile_string('a {b: c}', fatal_deprecations: [:'no-such-deprecation'], logger:)
    assert_match(/no-such-deprecation/, logger.warnings.map { |w| w[:message] }.join)
  end

  def test_source_may_be_any_to_str_object_in_any_encoding
    safe_buffer = Class.new(String) { def html_safe? = true }
    assert_equal "a {\n  b: c;\n}", Sass.compile_string(safe_buffer.new('a { b: c }')).css

    to_str = Object.new
    def to_str.to_str = 'a { b: d }'
    assert_equal "a {\n  b: d;\n}", Sass.compile_string(to_str).css

    latin1 = 'a { b: "café" }'.encode(Encoding::ISO_8859_1)
    css = Sass.compile_string(latin1, charset: false).css
    assert_equal "a {\n  b: \"café\";\n}", css
    assert_equal Encoding::UTF_8, css.encoding

    utf16 = 'a { b: "ü" }'.encode(Encoding::UTF_16LE)
    assert_equal "a {\n  b: \"ü\";\n}", Sass.compile_string(utf16, charset: false).css

    binary = 'a { b: "ñ" }'.b
    assert_equal "a {\n  b: \"ñ\";\n}", Sass.compile_string(binary, charset: false).css
  end

  # Invalid UTF-8 and untranscodable sources: test/encoding_test.rb.

  def test_default_internal_encoding_does_not_break_anything
    previous = Encoding.default_internal
    verbose = $VERBOSE
    $VERBOSE = nil
    Encoding.default_internal = Encoding::UTF_16LE
    result = Sass.compile_string('a { b: "ä" }', charset: false)
    assert_equal Encoding::UTF_8, result.css.encoding
    assert_equal "a {\n  b: \"ä\";\n}", result.css
  ensure
    Encoding.default_internal = previous
    $VERBOSE = verbose
  end
end
