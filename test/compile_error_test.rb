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
      error = compile_error("@use 'ok';\na { b: ok.$x + 1px + 1em }", url: "#{FILE_URL_PREFIX}#{dir}/entry.scss")
      assert_includes error.loaded_urls, "#{FILE_URL_PREFIX}#{dir}/_ok.scss"
    end
  end

  FORMATTED = "Error: Expected expression.\n  ╷\n1 │ a { b: }\n  │        ^\n  ╵\n  - 1:8  root stylesheet"

  def test_detailed_message_is_the_formatted_message_naming_the_class
    error = compile_error('a { b: }')
    assert_equal 'Expected expression.', error.message
    assert_equal FORMATTED.sub('expression.', 'expression. (Sass::CompileError)'),
                 error.detailed_message(highlight: false)
  end

  def test_detailed_message_keeps_colors_only_when_highlighting
    error = compile_error('a { b: }', alert_color: true)
    highlighted = error.detailed_message(highlight: true)
    assert_match(/\e\[31m/, highlighted)
    assert_includes highlighted, "\e[1mExpected expression. (\e[1;4mSass::CompileError\e[m\e[1m)\e[m"
    refute_match(/\e/, error.detailed_message(highlight: false))
    assert_equal error.detailed_message(highlight: false), compile_error('a { b: }').detailed_message(highlight: false)
  end

  # What Ruby 3.2 and later print for an exception whose detailed message is
  # +detailed+: the first backtrace line, the message, then the rest.
  def expected_full_message(error, detailed)
    "#{error.backtrace.first}: #{detailed}\n#{error.backtrace.drop(1).map { |line| "\tfrom #{line}\n" }.join}"
  end

  def test_full_message_is_the_detailed_message_then_the_backtrace
    error = compile_error('a { b: }')
    assert_equal expected_full_message(error, error.detailed_message(highlight: false)),
                 error.full_message(highlight: false)
    assert_equal error.full_message(highlight: false), error.full_message(highlight: false, order: :top)
    assert(error.backtrace.any? { |line| line.include?(__FILE__) })

    bottom = error.full_message(highlight: false, order: :bottom)
    assert bottom.start_with?("Traceback (most recent call last):\n")
    assert bottom.end_with?("#{error.backtrace.first}: #{error.detailed_message(highlight: false)}\n")

    highlighted = compile_error('a { b: }', alert_color: true).full_message(highlight: true)
    assert_includes highlighted, "\e[31m"
    refute_match(/\e/, compile_error('a { b: }', alert_color: true).full_message(highlight: false))
    assert_raises(ArgumentError) { error.full_message(highlight: 'yes') }
    assert_raises(ArgumentError) { error.full_message(order: :middle) }
  end

  def test_full_message_follows_ruby_3_2_for_plain_messages_too
    # Without a formatted message, the detailed message is Ruby's default; the
    # format is then Ruby's own, which this Ruby (3.1 or later) prints the
    # same way for a message without trailing newlines.
    error = Sass::CompileError.new("first line\nsecond", nil, nil, nil, [])
    begin
      raise error, cause: IOError.new('the cause')
    rescue Sass::CompileError => e
      error = e
    end
    native = Exception.instance_method(:full_message)
    [true, false].each do |highlight|
      %i[top bottom].each do |order|
        assert_equal native.bind_call(error, highlight:, order:), error.full_message(highlight:, order:),
                     "highlight: #{highlight}, order: #{order}"
      end
    end
  end

  def test_to_css_shows_the_error_in_a_page
    error = compile_error('a { b: "*/ é" + }')
    css = error.to_css
    assert_match(%r{\A/\* #{Regexp.escape(error.backtrace.first)}: Error: Expected expression\.}, css)
    refute_match(%r{\*/ é}, css.split("\n\n").first.sub(%r{ \*/\z}, ''), 'the comment cannot be closed early')
    assert_match(/body::before \{/, css)
    assert_match(/content: ".*Error: Expected expression\. \(Sass::CompileError\)\\a /, css)
    # The result is itself valid CSS, and shows the message.
    parsed = Sass.compile_string(css, syntax: :css, alert_color: false).css
    assert_match(/body::before/, parsed)
    assert_includes Sass.compile_string(css).css, 'Error: Expected expression.'
  end

  def test_css_string_escapes
    assert_equal '"a\"b\\\\c"', Sass::CompileError.css_string('a"b\\c')
    assert_equal '"x\ay"', Sass::CompileError.css_string("x\ny")
    assert_equal '"\a  z"', Sass::CompileError.css_string("\n z")
    assert_equal '"\a\7f"', Sass::CompileError.css_string("\n\u007f")
    assert_equal '"\e9"', Sass::CompileError.css_string('é')
    assert_equal '"\e9 a"', Sass::CompileError.css_string('éa')
  end

  # Against a plain per-character reading of the rule, on random text.
  def test_css_string_escapes_random_text_as_the_rule_says
    alphabet = ['a', 'F', 'g', '0', ' ', '"', '\\', "\n", "\0", 'é', '😀', "\u007f", '~']
    reference = lambda do |text|
      chars = text.chars
      escaped = chars.each_with_index.map do |char, index|
        if ['"', '\\'].include?(char) then "\\#{char}"
        elsif char.match?(/[ -~]/) then char
        else
          "\\#{char.ord.to_s(16)}#{' ' if chars[index + 1]&.match?(/[0-9a-fA-F ]/)}"
        end
      end
      "\"#{escaped.join}\""
    end
    random = Random.new(42)
    500.times do
      text = Array.new(random.rand(12)) { alphabet.sample(random:) }.join
      assert_equal reference.call(text), Sass::CompileError.css_string(text), text.inspect
    end
  end

  # A huge message (a failing stylesheet whose line is 1 MiB of NULs or of
  # "é") builds its page in one pass (it took minutes, looking at the next
  # character by index), and the page shows a bounded excerpt of it.
  def test_a_huge_message_builds_a_bounded_page_in_one_pass
    { "\0" => '\\0', 'é' => '\\e9' }.each do |char, escape|
      huge = char * 1_048_576
      Timeout.timeout(budget(10)) do
        assert_equal (escape.length * 1_048_576) + 2, Sass::CompileError.css_string(huge).length
        page = Sass::CompileError.css_page("Error: #{huge}")
        assert_operator page.length, :<, 300 * 1024
        assert_includes page, "... (#{1_048_576 + 7 - (64 * 1024)} more characters)"
      end
    end
  end

  def test_errors_raised_by_a_function_become_compile_errors_with_the_ruby_story
    functions = { 'fail()' => ->(_args) { raise ArgumentError, 'bad input from Ruby' } }
    line = __LINE__ - 1
    error = compile_error('a { b: fail() }', functions:)
    # What the established gem tells the compiler: the detailed message
    # (followed, from Ruby 3.3 on, by error_highlight's excerpt of the code).
    assert_equal 'bad input from Ruby (ArgumentError)', error.message.lines.first.chomp
    assert_kind_of ArgumentError, error.cause
    assert_equal error.cause.backtrace, error.backtrace
    assert_equal "#{__FILE__}:#{line}", error.backtrace.first[/\A(?:[A-Za-z]:)?[^:]+:\d+/]
    assert_match(/fail\(\)/, error.span.text)
    full = error.full_message(highlight: false)
    first_line = "#{error.backtrace.first}: Error: bad input from Ruby (ArgumentError) (Sass::CompileError)\n"
    assert full.start_with?(first_line), full
    assert_includes full, "#{error.cause.backtrace.first}: bad input from Ruby (ArgumentError)", 'the cause is shown'
  end

  def test_errors_raised_by_importers_keep_their_backtrace_and_cause
    importer = Object.new
    def importer.canonicalize(*) = raise(IOError, 'disk on fire')
    def importer.load(*) = nil
    error = compile_error("@use 'x';", importers: [importer])
    assert_kind_of IOError, error.cause
    assert_equal error.cause.backtrace, error.backtrace
    # (Ruby 3.4 quotes the method with ' where earlier Rubies use `.)
    assert_match(/\A#{Regexp.escape(__FILE__)}:\d+:in [`']canonicalize'/, error.backtrace.first)

    file_importer = { find_file_url: ->(*) { raise KeyError, 'no such key' } }
    error = compile_error("@use 'x';", importers: [file_importer])
    assert_kind_of KeyError, error.cause
    assert_match(/\A#{Regexp.escape(__FILE__)}:\d+/, error.backtrace.first)
  end

  def test_errors_without_a_callback_failure_have_no_cause
    error = compile_error('a { b: }', functions: { 'ok()' => ->(_) { Sass::Value::Null::NULL } })
    assert_nil error.cause
    assert_match(/compiler\.rb/, error.backtrace.first)
  end
end
