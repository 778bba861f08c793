# frozen_string_literal: true

require_relative 'test_helper'

class CompileErrorTest < Minitest::Test
  def compile_error(source, **options)
    assert_raises(Sass::CompileError) { Sass.compile_string(source, alert_color: false, **options) }
  end

  def test_message_span_and_stack
    error = compile_error("a {\n  b: 1px + 1em;\n}", url: 'file:///tmp/broken.scss')
    assert_equal '1px and 1em have incompatible units.', error.message
    assert_equal error.message, error.sass_message
    assert_kind_of StandardError, error

    span = error.span
    assert_kind_of Sass::Logger::SourceSpan, span
    assert_equal '1px + 1em', span.text
    assert_equal 'file:///tmp/broken.scss', span.url
    assert_equal 1, span.start.line
    assert_equal 5, span.start.column
    assert_equal 9, span.start.offset
    assert_equal 1, span.end.line
    assert_equal 14, span.end.column
    assert_equal 18, span.end.offset
    assert_includes span.context, '  b: 1px + 1em;'
    assert_match(/broken\.scss 2:6\s+root stylesheet/, error.sass_stack)
    assert_equal ['file:///tmp/broken.scss'], error.loaded_urls
  end

  def test_span_without_url_is_nil_url
    error = compile_error('a { b: }')
    assert_nil error.span.url
    assert_equal '', error.span.text
    assert_equal error.span.start, error.span.end
  end

  def test_loaded_urls_of_a_failed_compile
    in_tmpdir do |dir|
      File.write(File.join(dir, '_ok.scss'), '$x: 1;')
      error = compile_error("@use 'ok';\na { b: ok.$x + 1px + 1em }", url: "file://#{dir}/entry.scss")
      assert_includes error.loaded_urls, "file://#{dir}/_ok.scss"
    end
  end

  def test_full_message_is_the_formatted_message
    error = compile_error('a { b: }')
    assert_equal "Error: Expected expression.\n  ╷\n1 │ a { b: }\n  │        ^\n  ╵\n  - 1:8  root stylesheet",
                 error.full_message
    assert_equal error.full_message, error.full_message(highlight: false, order: :top)
  end

  def test_full_message_keeps_colors_only_when_highlighting
    error = compile_error('a { b: }', alert_color: true)
    assert_match(/\e\[31m/, error.full_message(highlight: true))
    refute_match(/\e/, error.full_message(highlight: false))
    assert_equal error.full_message(highlight: false), compile_error('a { b: }').full_message
  end

  def test_to_css_shows_the_error_in_a_page
    error = compile_error('a { b: "*/ é" + }')
    css = error.to_css
    assert_match(%r{\A/\* Error: Expected expression\.}, css)
    refute_match(%r{\*/ é}, css.split("\n\n").first.sub(%r{ \*/\z}, ''), 'the comment cannot be closed early')
    assert_match(/body::before \{/, css)
    assert_match(/content: "Error: Expected expression\.\\a /, css)
    # The result is itself valid CSS.
    parsed = Sass.compile_string(css, syntax: :css, alert_color: false).css
    assert_match(/body::before/, parsed)
  end

  def test_css_string_escapes
    assert_equal '"a\"b\\\\c"', Sass::CompileError.css_string('a"b\\c')
    assert_equal '"x\ay"', Sass::CompileError.css_string("x\ny")
    assert_equal '"\a  z"', Sass::CompileError.css_string("\n z")
    assert_equal '"\a\7f"', Sass::CompileError.css_string("\n\u007f")
    assert_equal '"\e9"', Sass::CompileError.css_string('é')
    assert_equal '"\e9 a"', Sass::CompileError.css_string('éa')
  end

  def test_errors_raised_by_a_function_become_compile_errors_with_the_ruby_cause
    functions = { 'fail()' => ->(_args) { raise ArgumentError, 'bad input from Ruby' } }
    error = compile_error('a { b: fail() }', functions:)
    assert_equal 'bad input from Ruby', error.message
    assert_kind_of ArgumentError, error.cause
    assert(error.cause.backtrace.any? { |line| line.include?(__FILE__) })
    assert_match(/fail\(\)/, error.span.text)
  end
end
