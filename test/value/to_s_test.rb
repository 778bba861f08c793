# frozen_string_literal: true

require_relative '../test_helper'

# How values print, against the compiler itself: every row is sent to Sass by
# a custom function, and
#
# - +inspect+ must be what +meta.inspect()+ writes for it (all digits);
# - +to_s+ must be what interpolation (+#{...}+) writes for it (plain CSS,
#   ten decimals), or raise the same error Sass raises for a value that is
#   not CSS; but a String's +to_s+ keeps its quotes, as the established
#   gem's does, so it is what +meta.inspect()+ writes.
#
# The rows of a kind are checked in one compilation, each line tagged with
# its row, so that a failure names the value.
class ToSTest < Minitest::Test
  V = Sass::Value
  S = V::String
  N = V::Number
  L = V::List
  M = V::Map
  C = V::Color
  Calc = V::Calculation
  Op = Sass::CalculationValue::CalculationOperation
  Interp = Sass::CalculationValue::CalculationInterpolation

  def self.units(numerators, denominators = [])
    { numerator_units: numerators, denominator_units: denominators }
  end

  STRINGS = ['c', '"', "'", %('"), %("'"), %('"'), "a\tb", '\\1x', "a\nb", "a\n  b", "a\n\tb", "\u0000x", "\x7F",
             "\x01a", "\x01g", "\x01 ", "\r\n", "\x1FF", "\u{E000}", "\u{F0000}", 'é 😀', ''].freeze

  NUMBERS = [
    N.new(1), N.new(-1.5), N.new(1.5, 'px'), N.new(2, '%'), N.new(1 / 3.0), N.new(2 / 3.0, 'em'), N.new(0.1 + 0.2),
    N.new(Rational(1, 3)), N.new(1e21), N.new(-1.5e21), N.new(1e300), N.new(1e20), N.new(12_345_678_901_234_567_890),
    N.new(2.0**52), N.new((2.0**51) + 0.5), N.new(-(2.0**53)), N.new(2.0**63), N.new(9.3e18), N.new(1e16 + 2),
    N.new(123_456_789_012_345.67), N.new(123_456.00000000001), N.new(123_456_789_012.123456), N.new(1e-6),
    N.new(1e-7), N.new(-1e-7), N.new(1.5e-7), N.new(1.23456789012345e-5), N.new(1e-11), N.new(4.9e-11),
    N.new(5e-11), N.new(-5e-11), N.new(2.5e-11), N.new(5e-324), N.new(-1.234e-20), N.new(0.999999999999),
    N.new(1.0000000000049), N.new(1.00000000005), N.new(1.99999999995), N.new(-1.99999999995),
    N.new(9.99999999995), N.new(0.1234567890123),
    N.new(Float::NAN), N.new(Float::INFINITY), N.new(-Float::INFINITY), N.new(Float::INFINITY, 'px'),
    N.new(Float::NAN, units(%w[px em])), N.new(Float::INFINITY, units([], %w[s])),
    N.new(-Float::INFINITY, units(%w[px], %w[s])),
    N.new(1, units(%w[px em])), N.new(-1.5, units(%w[px em])), N.new(1, units(%w[px], %w[s])),
    N.new(1, units([], %w[s])), N.new(-2, units([], %w[s ms])), N.new(1 / 3.0, units(%w[px em], %w[s ms]))
  ].freeze

  ONE = N.new(1)
  TWO = N.new(2)
  LISTS = [
    L.new, L.new([], separator: nil), L.new([], separator: ' '), L.new([], bracketed: true),
    L.new([], separator: '/', bracketed: true),
    L.new([ONE]), L.new([ONE], separator: ' '), L.new([ONE], separator: '/'), L.new([ONE], separator: nil),
    L.new([ONE], bracketed: true), L.new([ONE], separator: '/', bracketed: true),
    L.new([ONE], separator: ' ', bracketed: true),
    L.new([ONE, TWO]), L.new([ONE, TWO], separator: ' '), L.new([ONE, TWO], separator: '/'),
    L.new([ONE, TWO], bracketed: true),
    L.new([L.new([ONE, TWO]), TWO]), L.new([L.new([ONE, TWO], separator: ' '), TWO]),
    L.new([L.new([ONE, TWO], separator: ' '), TWO], separator: ' '),
    L.new([L.new([ONE, TWO], separator: '/'), TWO], separator: '/'), L.new([L.new([ONE, TWO]), TWO], separator: '/'),
    L.new([L.new([ONE, TWO], separator: ' '), TWO], separator: '/'),
    L.new([L.new([ONE, TWO], bracketed: true), TWO], separator: ' '), L.new([L.new([ONE]), TWO], separator: ' '),
    L.new([L.new, TWO], separator: ' '), L.new([L.new([ONE], separator: nil), TWO]),
    L.new([S.new('a'), S.new('b', quoted: false)], separator: ' '),
    L.new([S.new("a\nb"), S.new("x\n y", quoted: false), S.new('', quoted: false), S.new('')], separator: ' '),
    L.new([V::Null::NULL, ONE], separator: ' '), L.new([V::Null::NULL]),
    L.new([V::Null::NULL, V::Null::NULL], bracketed: true),
    L.new([V::Null::NULL, L.new([V::Null::NULL], separator: ' ')]), L.new([M.new({ ONE => TWO }), TWO]),
    V::ArgumentList.new([ONE, TWO], { a: ONE }, ' '), V::ArgumentList.new([], {}, ','),
    V::ArgumentList.new([ONE], {}, ',')
  ].freeze

  MAPS_AND_SINGLETONS = [
    M.new, M.new({ ONE => TWO }),
    M.new({ S.new('a') => L.new([ONE, TWO]), L.new([ONE, TWO], separator: ' ') => L.new([ONE, TWO], separator: '/') }),
    M.new({ L.new([ONE, TWO], bracketed: true) => M.new({ ONE => TWO }), L.new => V::Null::NULL }),
    V::Boolean::TRUE, V::Boolean::FALSE, V::Null::NULL,
    V::Function.new('foo($x)') { |args| args[0] }, L.new([V::Function.new('b()') { |_| ONE }], separator: ' ')
  ].freeze

  COLORS = [
    # Legacy colors: names, hex, rgb()/rgba() with integers or percentages,
    # hsl()/hsla(), hwb(); as CSS, hwb and out-of-gamut rgb become hsl.
    C.new(red: 255, green: 0, blue: 0), C.new(red: 0, green: 255, blue: 255), C.new(red: 102, green: 51, blue: 153),
    C.new(red: 18, green: 52, blue: 86), C.new(red: 17, green: 34, blue: 51),
    C.new(red: 254.9999999999999, green: 0, blue: 0), C.new(red: 255, green: 255, blue: 255, alpha: 0.999999999999),
    C.new(red: 255, green: 0, blue: 0, alpha: 0.5), C.new(red: 0, green: 0, blue: 0, alpha: 0),
    C.new(red: 1, green: 2, blue: 3, alpha: 1 / 3.0), C.new(red: 10.5, green: 20, blue: 30),
    C.new(red: 127.5, green: 0, blue: 0), C.new(red: 254.5, green: 0, blue: 0), C.new(red: 0.1, green: 0.2, blue: 0.3),
    C.new(red: 1 / 3.0, green: 2, blue: 3, alpha: 1 / 3.0), C.new(red: 300, green: -5, blue: 0),
    C.new(red: 256, green: 0, blue: 0), C.new(red: 255.999999999999, green: 0, blue: 0),
    C.new(red: 255.5, green: 0, blue: 0), C.new(red: -5.5, green: 0, blue: 0, alpha: 0.5),
    C.new(red: -1, green: 0, blue: 0),
    C.new(red: 300, green: 300, blue: 300), C.new(red: 300, green: 0, blue: 0, alpha: 0.5),
    C.new(hue: 120, saturation: 50, lightness: 50), C.new(hue: 120, saturation: 50, lightness: 50, alpha: 0.25),
    C.new(hue: 1 / 3.0, saturation: 50, lightness: 50), C.new(hue: 400, saturation: 50, lightness: 50),
    C.new(hue: -30, saturation: 150, lightness: -10), C.new(hue: 0, saturation: 0, lightness: 100),
    C.new(hue: 123.456, saturation: 12.345, lightness: 67.891),
    C.new(space: 'hsl', hue: 20, saturation: -10, lightness: 50),
    C.new(hue: 0, whiteness: 0, blackness: 0), C.new(hue: 0, whiteness: 0, blackness: 0, alpha: 0.5),
    C.new(hue: 30, whiteness: 10, blackness: 20), C.new(hue: 30, whiteness: 10, blackness: 20, alpha: 0.5),
    C.new(hue: 30, whiteness: 70, blackness: 60), C.new(hue: 200, whiteness: 60, blackness: 60, alpha: 0.3),
    C.new(hue: 1 / 3.0, whiteness: 1 / 3.0, blackness: 0, alpha: 0.123456789012345),
    # Legacy colors with a missing channel or alpha use the modern syntax.
    C.new(space: 'rgb', red: nil, green: 0, blue: 1 / 3.0), C.new(space: 'rgb', red: 1, green: 2, blue: 3, alpha: nil),
    C.new(space: 'hsl', hue: nil, saturation: 50, lightness: 50),
    C.new(space: 'hsl', hue: 10, saturation: 20, lightness: 30, alpha: nil),
    C.new(space: 'hwb', hue: 30, whiteness: nil, blackness: 20, alpha: 0.5),
    # Every other space.
    C.new(space: 'lab', lightness: 50, a: 10, b: -20),
    C.new(space: 'lab', lightness: 1 / 3.0, a: 1 / 3.0, b: 0, alpha: 0.5),
    C.new(space: 'lab', lightness: 50, a: nil, b: -20, alpha: nil),
    C.new(space: 'lch', lightness: 50, chroma: 10, hue: 20),
    C.new(space: 'lch', lightness: 50, chroma: -10, hue: 20), C.new(space: 'oklab', lightness: 0.5, a: 0.1, b: -0.1),
    C.new(space: 'oklab', lightness: 1 / 3.0, a: 0, b: 0), C.new(space: 'oklch', lightness: 0.5, chroma: 0.1, hue: 200),
    C.new(space: 'oklch', lightness: nil, chroma: 0.1, hue: nil),
    C.new(space: 'srgb', red: 0.5, green: 0.25, blue: 1), C.new(space: 'srgb', red: 1.5, green: 0, blue: 0),
    C.new(space: 'srgb-linear', red: 0.5, green: 0.25, blue: 1),
    C.new(space: 'display-p3', red: nil, green: 0.25, blue: 1, alpha: 0.3),
    C.new(space: 'display-p3-linear', red: 0.5, green: 0.25, blue: 1),
    C.new(space: 'a98-rgb', red: 0.5, green: 0.25, blue: 1),
    C.new(space: 'prophoto-rgb', red: 0.5, green: 0.25, blue: 1),
    C.new(space: 'rec2020', red: 0.5, green: 0.25, blue: 1), C.new(space: 'xyz', x: 1 / 3.0, y: 2, z: -1),
    C.new(space: 'xyz-d65', x: 0.1, y: 0.2, z: 0.3), C.new(space: 'xyz-d50', x: 0.1, y: 0.2, z: 0.3, alpha: 0.75),
    # As CSS, a lightness out of range goes through color-mix().
    C.new(space: 'lch', lightness: 150, chroma: 10, hue: 720.5), C.new(space: 'lab', lightness: -10, a: 10, b: 20),
    C.new(space: 'oklab', lightness: 1.5, a: 0, b: 0, alpha: 0.5),
    C.new(space: 'oklch', lightness: 1.5, chroma: 0, hue: 10)
  ].freeze

  PX = N.new(1, 'px')
  EM = N.new(2, 'em')
  PERCENT = N.new(50, '%')
  VAR = S.new('var(--x)', quoted: false)
  # Calculations Sass keeps as they are (it simplifies what it can).
  CALCULATIONS = [
    Calc.calc(Op.new('+', PX, EM)), Calc.calc(Op.new('-', PX, EM)), Calc.calc(Op.new('*', Op.new('+', PX, EM), TWO)),
    Calc.calc(Op.new('*', TWO, Op.new('+', PX, EM))), Calc.calc(Op.new('-', PX, Op.new('+', EM, PERCENT))),
    Calc.calc(Op.new('-', PX, Op.new('-', EM, PERCENT))), Calc.calc(Op.new('+', PX, Op.new('-', EM, PERCENT))),
    Calc.min([PX, EM]), Calc.max([PX, EM, PERCENT]), Calc.clamp(PX, EM, PERCENT), Calc.clamp(PX, VAR, PERCENT),
    Calc.clamp(VAR), Calc.calc(VAR), Calc.calc(Interp.new('1px + 2em')), Calc.calc(Op.new('+', Interp.new('a'), PX)),
    Calc.min([VAR, Interp.new('1 + 2')]), Calc.min([Calc.max([PX, EM]), PERCENT]),
    Calc.calc(Op.new('+', Calc.min([PX, EM]), PX)),
    Calc.calc(Op.new('*', VAR, N.new(1, units(%w[px em], %w[s])))),
    Calc.calc(Op.new('/', VAR, N.new(1, units(%w[px em], %w[s])))),
    Calc.calc(Op.new('/', VAR, N.new(Float::INFINITY, 'px'))), Calc.calc(Op.new('/', VAR, N.new(Float::INFINITY))),
    Calc.calc(Op.new('*', VAR, N.new(Float::INFINITY, 'px'))), Calc.calc(Op.new('*', N.new(Float::INFINITY), VAR)),
    Calc.calc(Op.new('*', N.new(-Float::INFINITY, units(%w[px], %w[s em])), VAR)),
    Calc.calc(Op.new('*', VAR, N.new(-2))),
    Calc.calc(Op.new('/', VAR, Op.new('/', VAR, VAR))), Calc.calc(Op.new('*', VAR, Op.new('*', VAR, VAR))),
    Calc.calc(Op.new('*', VAR, Op.new('/', VAR, VAR))), Calc.calc(Op.new('/', Op.new('*', VAR, VAR), VAR)),
    Calc.calc(Op.new('-', Op.new('-', VAR, VAR), VAR)), Calc.calc(Op.new('*', Op.new('+', VAR, VAR), VAR)),
    Calc.calc(Op.new('+', VAR, Op.new('*', VAR, VAR))), Calc.calc(Op.new('-', VAR, Op.new('*', VAR, VAR))),
    Calc.calc(Op.new('*', VAR, Op.new('-', VAR, VAR))), Calc.calc(Op.new('/', VAR, Op.new('+', VAR, VAR))),
    Calc.calc(Op.new('+', VAR, Interp.new('b'))), Calc.calc(Op.new('+', VAR, N.new(1 / 3.0, 'px'))),
    Calc.calc(Op.new('+', VAR, N.new(1e21, 'px'))), Calc.calc(S.new('a  b', quoted: false)),
    Calc.calc(S.new("a\nb", quoted: false))
  ].freeze

  # Runs +source+ (which may call +v(i)+, the i-th row) and returns what it
  # logged with @debug, by tag.
  def debugged(rows, source)
    messages = {}
    logger = { debug: lambda { |message, _|
      tag, text = message.split(':', 2)
      messages[Integer(tag)] = text
    } }
    functions = { 'v($i)' => ->(args) { rows.fetch(args[0].assert_number.to_i) } }
    Sass.compile_string("@use 'sass:meta';\n#{source}", functions:, logger:)
    messages
  end

  # Checks +inspect+ and +to_s+ of every row against the compiler.
  def check_rows(rows, strings: false)
    inspected = debugged(rows, rows.each_index.map { |i| "@debug '#{i}:' + meta.inspect(v(#{i}));" }.join("\n"))
    rows.each_with_index do |row, i|
      assert_equal inspected.fetch(i), row.inspect, "inspect of row #{i}"
      assert_equal inspected.fetch(i), row.to_s, "to_s of string row #{i}" if strings
    end
    return if strings

    check_to_s(rows)
  end

  # Rows that are CSS are interpolated together; each row whose +to_s+
  # raises must make Sass fail with the same message.
  def check_to_s(rows)
    invalid, valid = rows.each_index.partition { |i| script_error?(rows[i]) }
    interpolated = debugged(rows, valid.map { |i| "@debug '#{i}:\#{v(#{i})}';" }.join("\n"))
    valid.each { |i| assert_equal interpolated.fetch(i), rows[i].to_s, "to_s of row #{i}: #{rows[i].inspect}" }
    invalid.each do |i|
      error = assert_raises(Sass::CompileError, "row #{i}: #{rows[i].inspect}") do
        debugged(rows, "@debug '#{i}:\#{v(#{i})}';")
      end
      assert_equal error.message, assert_raises(Sass::ScriptError) { rows[i].to_s }.message, "row #{i}"
    end
  end

  def script_error?(value)
    value.to_s
    false
  rescue Sass::ScriptError
    true
  end

  def test_quoted_strings
    check_rows(STRINGS.map { |text| S.new(text) }, strings: true)
  end

  def test_unquoted_strings
    check_rows(STRINGS.map { |text| S.new(text, quoted: false) }, strings: true)
  end

  def test_numbers
    check_rows(NUMBERS)
  end

  def test_lists_and_argument_lists
    check_rows(LISTS)
  end

  def test_maps_booleans_null_and_functions
    check_rows(MAPS_AND_SINGLETONS)
  end

  def test_colors
    check_rows(COLORS)
  end

  def test_calculations
    check_rows(CALCULATIONS)
  end

  # The examples the task names, spelled out.
  def test_string_examples
    assert_equal %('"'), S.new('"').to_s
    assert_equal %("a\tb"), S.new("a\tb").to_s
    assert_equal '"\\\\1x"', S.new('\\1x').to_s
    assert_equal '\\1x', S.new('\\1x', quoted: false).to_s
    assert_equal 'a b', S.new("a\n   b", quoted: false).to_s
    assert_equal %("'\\""), S.new(%('")).to_s
    assert_equal S.new('"').to_s, S.new('"').inspect
  end

  # A quoted string's to_s is Sass source for the same string, as the
  # established gem's is: written into a stylesheet, it compiles as the
  # string itself does. (Not for U+0000, which Sass writes as "\0" but
  # reads back, as CSS says, as U+FFFD.)
  def test_string_to_s_reads_back_as_the_same_string
    (STRINGS + [(1..255).to_a.pack('U*')]).reject { |text| text.include?("\0") }.each do |text|
      string = S.new(text)
      from_function = Sass.compile_string('a { b: f() }', functions: { 'f()' => ->(_) { string } }).css
      assert_equal from_function, Sass.compile_string("a { b: #{string} }").css, text.inspect
    end
  end

  # Functions, mixins and modules the compiler made: Ruby does not know their
  # names, so they inspect as Ruby objects (as the established gem's do, which
  # cannot send them to another compilation) and are no CSS.
  def test_compiler_functions_mixins_and_modules
    received = []
    keep = lambda do |args|
      received << args[0]
      V::Null::NULL
    end
    Sass.compile_string(<<~SCSS, functions: { 'keep($v)' => keep })
      @use 'sass:meta';
      @mixin m {}
      $_: keep(meta.get-function('rgb'));
      $_: keep(meta.get-mixin('m'));
      $_: keep(meta.get-module('meta'));
      $_: keep((1, meta.get-function('rgb')));
    SCSS
    function, mixin, mod, list = received
    assert_match(/\A#<Sass::Value::Function:0x\h+ /, function.inspect)
    assert_match(/\A#<Sass::Value::Mixin:0x\h+ /, mixin.inspect)
    assert_match(/\A#<Sass::Value::List:0x\h+ /, list.inspect)
    assert_equal 'get-module(<anonymous>)', mod.inspect
    assert_kind_of Sass::Value::Module, mod
    [function, mixin, list].each do |value|
      assert_match(/ isn't a valid CSS value\.\z/, assert_raises(Sass::ScriptError) { value.to_s }.message)
    end
    assert_equal "get-module(<anonymous>) isn't a valid CSS value.",
                 assert_raises(Sass::ScriptError) { mod.to_s }.message
    error = assert_raises(Sass::ScriptError) { mod.assert_number('x') }
    assert_equal '$x: get-module(<anonymous>) is not a number', error.message
  end

  # Errors name values as Sass shows them.
  def test_errors_show_values_as_sass_does
    {
      -> { N.new(1 / 3.0, 'px').assert_string('s') } => '$s: 0.3333333333333333px is not a string',
      -> { L.new([ONE, TWO]).assert_number } => '1, 2 is not a number',
      -> { M.new({ ONE => TWO }).assert_color('c') } => '$c: (1: 2) is not a color',
      -> { V::Null::NULL.assert_map } => 'null is not a map',
      -> { C.new(red: 255, green: 0, blue: 0).assert_boolean } => 'red is not a boolean',
      -> { S.new('a').assert_function('f') } => '$f: "a" is not a function',
      -> { Calc.min([PX, EM]).assert_mixin } => 'min(1px, 2em) is not a mixin',
      -> { V::Boolean::TRUE.assert_calculation } => 'true is not a calculation',
      -> { ONE.assert_module } => '1 is not a module'
    }.each do |raise_it, message|
      assert_equal message, assert_raises(Sass::ScriptError) { raise_it.call }.message
    end
  end
end
