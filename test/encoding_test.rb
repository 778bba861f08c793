# frozen_string_literal: true

require_relative 'test_helper'

# Strings reach the compiler by the established gem's rules: through
# +to_str+, whatever the String's class; what is not UTF-8 in a UTF-8 String
# becomes U+FFFD, wherever the String comes from; other encodings are
# transcoded, raising Ruby's EncodingErrors where they cannot be; and a
# logger's fields are Strings where the established gem's are.
class EncodingTest < Minitest::Test
  # Bytes that are not UTF-8: a stray byte, a surrogate half, an overlong
  # form, a truncated sequence; and what the compiler makes of each.
  BAD = "\xff \xed\xa0\x80 \xc0\x80 \xf0\x9f"
  REPLACED = "\uFFFD \uFFFD\uFFFD\uFFFD \uFFFD\uFFFD \uFFFD"

  def bad_utf8(text)
    text.dup.force_encoding(Encoding::UTF_8).tap { |string| refute string.valid_encoding? }
  end

  def css_with(text)
    "@charset \"UTF-8\";\na {\n  b: \"#{text}\";\n}"
  end

  def test_a_string_subclass_is_read_through_its_to_str
    subclass = Class.new(String) { def to_str = 'x { y: z }' }
    compiler = new_compiler
    # Plain, and through Request's checks (a style given as a String).
    assert_equal "x {\n  y: z;\n}", compiler.compile_string(subclass.new('a { b: c }')).css
    assert_equal "x {\n  y: z;\n}", compiler.compile_string(subclass.new('a { b: c }'), style: 'expanded').css
    # A subclass that keeps String's to_str is its contents.
    assert_equal "a {\n  b: c;\n}", compiler.compile_string(Class.new(String).new('a { b: c }')).css
    to_str = Object.new
    def to_str.to_str = 'o { p: q }'
    assert_equal "o {\n  p: q;\n}", compiler.compile_string(to_str).css
  end

  def test_invalid_utf8_in_a_source_becomes_replacement_characters
    compiler = new_compiler
    source = bad_utf8("a { b: '#{BAD}' }".b)
    assert_equal css_with(REPLACED), compiler.compile_string(source).css
    assert_equal css_with(REPLACED), compiler.compile_string(source, style: 'expanded').css
    assert_equal css_with(REPLACED), compiler.compile_string(source, url: 'file:///bad.scss').css
  end

  # Request's own checks (here, that the URL parses) read what the compiler
  # will read, not the invalid bytes.
  def test_invalid_utf8_in_a_url_becomes_a_replacement_character
    result = new_compiler.compile_string('a { b: c }', url: bad_utf8("file:///bad\xff.scss".b))
    assert_equal ['file:///bad%EF%BF%BD.scss'], result.loaded_urls
  end

  def test_invalid_utf8_from_an_importer_becomes_replacement_characters
    importer = {
      canonicalize: ->(url, _) { "bad:#{url}" },
      load: ->(_) { { contents: bad_utf8("a { b: '#{BAD}' }".b), syntax: :scss } }
    }
    css = new_compiler.compile_string("@use 'x';", importers: [importer]).css
    assert_equal css_with(REPLACED), css
  end

  def test_invalid_utf8_from_a_function_becomes_replacement_characters
    functions = {
      'bad()' => ->(_) { Sass::Value::String.new(bad_utf8(BAD.b)) },
      'bad-list()' => lambda { |_|
        Sass::Value::List.new([Sass::Value::String.new(bad_utf8("\xff".b), quoted: false)])
      }
    }
    compiler = new_compiler
    assert_equal css_with(REPLACED), compiler.compile_string('a { b: bad() }', functions:).css
    assert_equal "@charset \"UTF-8\";\na {\n  b: \uFFFD;\n}",
                 compiler.compile_string('a { b: bad-list() }', functions:).css
  end

  def test_other_encodings_that_cannot_be_utf8_raise_encoding_errors
    compiler = new_compiler
    [{}, { style: 'expanded' }].each do |options|
      assert_raises(Encoding::UndefinedConversionError) { compiler.compile_string("a { b: '\xff' }".b, **options) }
      assert_raises(Encoding::InvalidByteSequenceError) do
        compiler.compile_string("a { b: '\xff' }".dup.force_encoding(Encoding::US_ASCII), **options)
      end
    end
    # The host keeps serving.
    assert_equal "a {\n  b: c;\n}", compiler.compile_string('a { b: c }').css
  end

  def test_transcodable_and_binary_utf8_sources_compile
    compiler = new_compiler
    assert_equal css_with('é'), compiler.compile_string("a { b: 'é' }".encode(Encoding::ISO_8859_1)).css
    # The established gem refuses a binary String with bytes above 127; this
    # gem reads it as UTF-8 when it is (docs/usage.md).
    assert_equal css_with('é'), compiler.compile_string("a { b: 'é' }".b).css
  end

  def test_a_loggers_stack_is_a_string_when_the_compiler_sends_none
    stacks = []
    logger = Object.new
    logger.define_singleton_method(:warn) { |message, options| stacks << [message, options.stack] }
    source = 'a { b: 1/2 * (3/4) }' * 7
    new_compiler.compile_string(source, logger:)
    omitted = stacks.find { |message, _| message.include?('repetitive deprecation warnings omitted') }
    refute_nil omitted, stacks.inspect
    assert_equal '', omitted[1]
    stacks.each { |_, stack| assert_kind_of String, stack }
  end
end
