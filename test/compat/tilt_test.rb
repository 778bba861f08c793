# frozen_string_literal: true

require_relative '../test_helper'
require 'uri'

# Tilt's Sass and SCSS templates read the keyword parameters of
# Sass::Compiler#compile_string to decide which of a template's options to
# pass on (dropping SassC-era ones such as +line_comments+), then call
# Sass.compile_string with the template's file URL and syntax.
class TiltCompatTest < Minitest::Test
  ESTABLISHED_KEYS = %i[importer load_paths syntax url charset source_map source_map_include_sources style functions
                        importers alert_ascii alert_color fatal_deprecations future_deprecations logger quiet_deps
                        silence_deprecations verbose].freeze

  # What tilt computes once, at load time.
  def allowed_keys
    (defined?(::Sass::Compiler) ? ::Sass::Compiler : ::Sass::Embedded)
      .instance_method(:compile_string)
      .parameters
      .map { |kind, name| name if kind == :key }
      .compact
  end

  # What a tilt template renders: its options filtered by those keys, with
  # the template's URL and syntax.
  def render(data, options, eval_file:, syntax:)
    path = File.absolute_path(eval_file)
    path = "/#{path}" unless path.start_with?('/')
    options = options.dup
    options[:url] = URI::File.build([nil, URI::DEFAULT_PARSER.escape(path)]).to_s
    options[:syntax] = syntax
    options.delete_if { |key| !allowed_keys.include?(key) }
    Sass.compile_string(data, **options).css
  end

  def test_reflection_finds_every_established_keyword
    assert_equal ESTABLISHED_KEYS.sort, allowed_keys.sort
    assert_equal %i[req source], Sass::Compiler.instance_method(:compile_string).parameters.first
    assert(allowed_keys.none? { |key| %i[line_comments precision cache].include?(key) })
    # Sass.compile_string forwards everything, as the established gem's does.
    assert_equal %i[rest keyrest block], Sass.method(:compile_string).parameters.map(&:first)
  end

  def test_sass_and_scss_templates_with_sassc_era_options
    options = { style: :compressed, line_comments: true, precision: 10, cache: false }
    assert_equal '#main{background-color:#0000f1}',
                 render("#main\n  background-color: #0000f1", options, eval_file: 'views/test.sass', syntax: :indented)
    assert_equal '#main{color:red}',
                 render('#main { color: red; }', options, eval_file: 'views/test.scss', syntax: :scss)
  end

  def test_a_template_path_with_spaces_and_unicode
    in_tmpdir do |dir|
      views = File.join(dir, 'my views')
      Dir.mkdir(views)
      File.write(File.join(views, '_part.scss'), '.part { ok: yes; }')
      css = render("@use 'part';", {}, eval_file: File.join(views, 'café.scss'), syntax: :scss)
      assert_equal ".part {\n  ok: yes;\n}", css
    end
  end

  def test_errors_reach_the_template_caller
    error = assert_raises(Sass::CompileError) { render('a {', {}, eval_file: 'views/bad.scss', syntax: :scss) }
    assert_match(%r{views/bad\.scss}, error.span.url)
  end
end
