# frozen_string_literal: true

require_relative 'test_helper'

# A plain compile_string's options go to the native host as the caller gave
# them, and the host builds the request itself (Sass::Compiler#run); every
# other compile's go through Sass::Compiler::Request's checks first. For
# plain options both ways must build the same request, byte for byte; for
# any other options the host must decline, so that Request checks them.
class PlainRequestTest < Minitest::Test
  HOST = Sass::Embedded.const_get(:Host)
  REQUEST = Sass::Compiler.const_get(:Request)
  # The options in the order both ways take them.
  ORDER = REQUEST.instance_method(:initialize).parameters.map(&:last)
  DEFAULTS = {
    path: nil, source: 'a {b: c}', importer: nil, syntax: :scss, url: nil, load_paths: [], charset: true,
    source_map: false, source_map_include_sources: false, style: :expanded, functions: {}, importers: [],
    alert_ascii: false, alert_color: nil, fatal_deprecations: [], future_deprecations: [], logger: nil,
    quiet_deps: false, silence_deprecations: [], verbose: false
  }.freeze
  BOOLEANS = %i[charset source_map source_map_include_sources alert_ascii alert_color quiet_deps verbose].freeze
  LISTS = %i[load_paths importers fatal_deprecations future_deprecations silence_deprecations].freeze

  def options(**changes)
    ORDER.map { |name| changes.fetch(name) { DEFAULTS.fetch(name) } }
  end

  def assert_built_alike(changes)
    options = options(**changes)
    plain = HOST.encode_plain(options)
    refute_nil plain, "declined plain options #{changes}"
    assert_equal HOST.encode_request(REQUEST.new(*options).to_a).bytes, plain.bytes, changes.inspect
  end

  def test_plain_options_build_the_request_the_checks_build
    [{}, { source: '' }, { source: "a { content: 'é ☃ 😀' }" }].each { |change| assert_built_alike(change) }
    # What is not UTF-8 in a UTF-8 source is sent as U+FFFD either way.
    ["a {b: '\xff'}", "a {b: '\xed\xa0\x80 \xc0\x80 \xf0\x9f'}"].each do |source|
      assert_built_alike(source: source.dup.force_encoding('UTF-8'))
    end
    %i[scss indented css].product(%i[expanded compressed]).each do |syntax, style|
      assert_built_alike(syntax:, style:)
    end
    BOOLEANS.product([true, false, nil]).each { |name, value| assert_built_alike(name => value) }
    LISTS.product([nil, [], Sass::Compiler.const_get(:EMPTY_LIST)]).each do |name, value|
      assert_built_alike(name => value)
    end
    [nil, {}, Sass::Compiler.const_get(:EMPTY_HASH)].each { |functions| assert_built_alike(functions:) }
  end

  # A String subclass is declined: Request reads a source through its
  # +to_str+, which a subclass may override.
  def test_options_that_need_the_checks_are_declined
    to_str = Object.new
    def to_str.to_str = 'a {b: c}'
    importer = { canonicalize: ->(*) {}, load: ->(*) {} }
    [
      { path: 'style.scss' }, { url: 'file:///style.scss' }, { importer: },
      { load_paths: ['.'] }, { importers: [importer] }, { functions: { 'f()' => ->(_) {} } },
      { logger: Sass::Logger.silent }, { fatal_deprecations: ['import'] }, { silence_deprecations: %w[import] },
      { future_deprecations: %w[import] }, { syntax: 'scss' }, { style: 'compressed' }, { style: :nested },
      { syntax: nil }, { charset: 1 }, { verbose: 'yes' }, { alert_color: 0 },
      { source: to_str }, { source: 'a {b: c}'.encode('ISO-8859-1') }, { source: 'a {b: c}'.b },
      { source: :symbol }, { source: Class.new(String).new('a {b: c}') }
    ].each do |change|
      assert_nil HOST.encode_plain(options(**change)), "took #{change} as plain"
    end
    assert_nil HOST.encode_plain(options[0..-2]), 'took a short list of options as plain'
  end

  # Through the public API: a plain compile and one that needs the checks
  # (a style given as a String) compile alike, and a plain one's failure
  # raises as any compile's (with no cause, even raised in a rescue).
  def test_plain_and_checked_compiles_give_the_same_results
    compiler = new_compiler
    assert_equal 'a{b:c}', compiler.compile_string('a { b: c }', style: :compressed).css
    assert_equal 'a{b:c}', compiler.compile_string('a { b: c }', style: 'compressed').css
    error = assert_raises(Sass::CompileError) do
      raise 'unrelated'
    rescue RuntimeError
      compiler.compile_string('a {')
    end
    assert_match(/expected end of rule/, error.message)
    assert_nil error.cause
  end
end
