# frozen_string_literal: true

require_relative '../test_helper'

class ColorTest < Minitest::Test
  Color = Sass::Value::Color

  SPACES = %w[rgb hsl hwb srgb srgb-linear display-p3 display-p3-linear a98-rgb prophoto-rgb rec2020
              xyz xyz-d50 xyz-d65 lab lch oklab oklch].freeze
  LEGACY = %w[rgb hsl hwb].freeze
  BOUNDED = %w[rgb hsl hwb srgb srgb-linear display-p3 display-p3-linear a98-rgb prophoto-rgb rec2020].freeze
  POLAR = %w[hsl hwb lch oklch].freeze
  KEYWORDS = {
    'rgb' => %i[red green blue], 'hsl' => %i[hue saturation lightness], 'hwb' => %i[hue whiteness blackness],
    'lab' => %i[lightness a b], 'oklab' => %i[lightness a b], 'lch' => %i[lightness chroma hue],
    'oklch' => %i[lightness chroma hue], 'xyz' => %i[x y z], 'xyz-d50' => %i[x y z], 'xyz-d65' => %i[x y z]
  }.tap { |keywords| keywords.default = %i[red green blue] }.freeze

  # Sample channels for every space: in and out of gamut, with missing
  # channels, powerless hues, black.
  RGB_LIKE_SAMPLES = [[1, 0, 0], [0.2, 0.5, 0.8], [1.2, -0.1, 0.5], [nil, 0.3, 0.6], [0.01, 0.02, 0.005]].freeze
  XYZ_SAMPLES = [[0.3, 0.4, 0.5], [0.95, 1, 1.09], [nil, 0.2, 0.3], [-0.1, 0.3, 1.5]].freeze
  SAMPLE_CHANNELS = {
    'rgb' => [[255, 0, 0], [12.5, 200, 99], [128, 128, 128], [300, -20, 40], [nil, 100, 20], [0, 0, 0]],
    'hsl' => [[0, 100, 50], [210, 40, 30], [120, 0, 50], [nil, 50, 50], [30, nil, 50], [30, 50, nil], [40, 150, 120]],
    'hwb' => [[0, 20, 30], [200, 60, 40], [nil, 10, 10], [100, nil, 40], [300, 105, -10]],
    'lab' => [[50, 20, -30], [0, 10, 10], [nil, 10, 10], [50, nil, 10], [75, -120, 100], [150, 30, 30]],
    'lch' => [[50, 30, 120], [0, 10, 30], [nil, 10, 30], [50, nil, 30], [50, 10, nil], [70, 0, 100], [90, 140, 300]],
    'oklab' => [[0.5, 0.1, -0.1], [0, 0.1, 0.1], [nil, 0.1, 0.1], [0.6, nil, 0.05], [0.9, -0.3, 0.35]],
    'oklch' => [[0.5, 0.1, 40], [0, 0.1, 30], [nil, 0.1, 30], [0.7, nil, 30], [0.7, 0.2, nil], [0.4, 0, 90],
                [1.2, 0.5, 200]],
    **%w[srgb srgb-linear display-p3 display-p3-linear a98-rgb prophoto-rgb rec2020].to_h { |s| [s, RGB_LIKE_SAMPLES] },
    **%w[xyz xyz-d50 xyz-d65].to_h { |s| [s, XYZ_SAMPLES] }
  }.freeze

  ALPHAS = [1, 0.5, nil].freeze

  def self.samples
    @samples ||= SAMPLE_CHANNELS.flat_map do |space, list|
      list.each_with_index.map do |channels, i|
        Color.new(space:, **KEYWORDS[space].zip(channels).to_h, alpha: ALPHAS[i % ALPHAS.length])
      end
    end.freeze
  end

  def samples
    self.class.samples
  end

  def color(space, *channels, alpha: 1)
    Color.new(space:, **KEYWORDS[space].zip(channels).to_h, alpha:)
  end

  # Evaluates Sass expressions in one compilation and returns their values,
  # as the compiler sends them back. +sample(i)+ in an expression is the
  # i-th (1-based) of +colors+, sent to the compiler from Ruby.
  def sass_values(colors, expressions)
    results = []
    functions = {
      'sample($i)' => ->(args) { colors.fetch(args[0].assert_number.to_i - 1) },
      'capture($value)' => lambda { |args|
        results << args[0]
        Sass::Value::Null::NULL
      }
    }
    source = +"@use 'sass:color';\n"
    expressions.each { |expression| source << "$_: capture(#{expression});\n" }
    Sass.compile_string(source, functions:)
    assert_equal expressions.length, results.length
    results
  end

  # Whether two colors are in the same space with channels and alpha within
  # +tolerance+ and missing in the same places (hues compare as angles, so
  # 359.99999999999994 is next to 0). With +legacy_zero+, missing counts as 0
  # (Sass's color functions zero the missing channels of legacy results they
  # convert).
  def close_colors?(expected, actual, tolerance: 1e-11, legacy_zero: false)
    return false unless expected.is_a?(Color) && actual.is_a?(Color) && expected.space == actual.space

    zero = legacy_zero && expected.legacy?
    values = ->(c) { zero ? c.channels + [c.alpha] : c.channels_or_nil + [c.send(:alpha_or_nil)] }
    hue = KEYWORDS[expected.space].index(:hue)
    values[expected].zip(values[actual]).each_with_index.all? do |(e, a), i|
      next e.nil? && a.nil? if e.nil? || a.nil?
      next true if e.to_f.nan? && a.to_f.nan?

      difference = (e - a).abs
      difference = [difference % 360, 360 - (difference % 360)].min if i == hue
      difference <= tolerance || (near_zero_gamma?(expected.space, e, a) && difference <= 2e-7)
    end
  end

  # The a98-rgb and rec2020 transfer functions (x ** (256 / 563.0) and
  # x ** (1 / 2.4)) have an infinite slope at 0: a channel that is 0 but for
  # rounding noise of 1e-16 in linear light comes out anywhere up to ~1e-7.
  # Such channels can only agree to that.
  def near_zero_gamma?(space, expected, actual)
    %w[a98-rgb rec2020].include?(space) && expected.abs < 1e-6 && actual.abs < 1e-6
  end

  def assert_hue(expected, actual)
    difference = (expected - actual).abs % 360
    assert_operator [difference, 360 - difference].min, :<=, 1e-11, "hue #{actual}, expected #{expected}"
  end

  def describe(color)
    "#{color.inspect} #{color.channels_or_nil.inspect} alpha #{color.send(:alpha_or_nil).inspect}"
  end

  def assert_close_colors(expected, actual, message = nil, **options)
    assert close_colors?(expected, actual, **options),
           "#{message}\nexpected #{describe(expected)}\n     got #{describe(actual)}"
  end

  # ---------------------------------------------------------------------------
  # Construction

  def test_rgb_constructor
    red = Color.new(red: 255, green: 0, blue: 0)
    assert_equal 'rgb', red.space
    assert_equal [255.0, 0.0, 0.0], red.channels
    assert_equal 1.0, red.alpha
    assert_predicate red, :legacy?
    translucent = Color.new(red: 1, green: 2, blue: 3, alpha: 0.5, space: 'rgb')
    assert_equal [1.0, 2.0, 3.0], translucent.channels
    assert_equal 0.5, translucent.alpha
  end

  def test_legacy_spaces_are_inferred_from_the_keywords
    hsl = Color.new(hue: 120, saturation: 50, lightness: 40)
    assert_equal 'hsl', hsl.space
    assert_equal [120.0, 50.0, 40.0], hsl.channels
    hwb = Color.new(hue: 30, whiteness: 20, blackness: 10, alpha: 0.3)
    assert_equal 'hwb', hwb.space
    assert_equal [30.0, 20.0, 10.0], hwb.channels
    assert_equal 0.3, hwb.alpha
  end

  # CSS Color 4's formulas in their order of operations, as the established
  # gem computes them: equal inputs give equal floats, to the last bit.
  def test_legacy_channels_are_the_established_floats
    hsl = Color.new(hue: 120, saturation: 42, lightness: 42)
    assert_equal 24.36, hsl.whiteness
    assert_equal 40.36000000000001, hsl.blackness
    received = nil
    Sass.compile_string('a { b: f(hsl(120, 42%, 42%)) }', functions: {
                          'f($c)' => ->(args) { (received = args[0]) && Sass::Value::Null::NULL }
                        })
    assert_equal 24.36, received.whiteness
    hwb = Color.new(hue: 210, whiteness: 10, blackness: 30)
    assert_equal [26, 102, 179], [hwb.red, hwb.green, hwb.blue]
  end

  def test_every_space_can_be_constructed
    SPACES.each do |space|
      made = color(space, 0.25, 0.5, 0.125, alpha: 0.75)
      assert_equal(space == 'xyz-d65' ? 'xyz' : space, made.space)
      assert_equal [0.25, 0.5, 0.125], made.channels_or_nil, space
      assert_equal 0.75, made.alpha
      assert_equal LEGACY.include?(space), made.legacy?
    end
  end

  def test_space_names_may_be_symbols_in_any_case
    assert_equal 'display-p3', Color.new(space: :'display-p3', red: 1, green: 0, blue: 0).space
    assert_equal 'oklch', Color.new(space: 'OKLCH', lightness: 0.5, chroma: 0.1, hue: 10).space
    assert_equal 'xyz', Color.new(space: :xyz_d65.to_s.tr('_', '-'), x: 0, y: 0, z: 0).space
  end

  def test_nil_channels_are_missing
    made = Color.new(space: 'lab', lightness: nil, a: 10, b: nil, alpha: nil)
    assert_equal [nil, 10.0, nil], made.channels_or_nil
    assert_equal [0.0, 10.0, 0.0], made.channels
    assert_equal 0.0, made.alpha
    assert made.channel_missing?('lightness')
    refute made.channel_missing?('a')
    assert made.channel_missing?('alpha')
    assert Color.new(red: nil, green: 1, blue: 2).channel_missing?(:red)
  end

  # Alpha is kept as given, as the established gem keeps it, within 1e-11 of
  # its range (the compiler snaps it when it reads the color).
  def test_alpha_is_checked
    assert_equal 1 + 1e-12, Color.new(red: 0, green: 0, blue: 0, alpha: 1 + 1e-12).alpha
    assert_equal(-1e-12, Color.new(red: 0, green: 0, blue: 0, alpha: -1e-12).alpha)
    assert_equal Rational(1, 4), Color.new(red: 0, green: 0, blue: 0, alpha: Rational(1, 4)).alpha
    assert_equal 1 - 1e-12, Color.new(red: 0, green: 0, blue: 0, alpha: 1 - 1e-12).alpha
    assert_instance_of Integer, Color.new(red: 0, green: 0, blue: 0).alpha
    [1.1, -0.1, Float::NAN].each do |alpha|
      error = assert_raises(Sass::ScriptError) { Color.new(red: 0, green: 0, blue: 0, alpha:) }
      assert_equal "$alpha: #{alpha} must be between 0 and 1.", error.message
    end
    error = assert_raises(Sass::ScriptError) { Color.new(red: 0, green: 0, blue: 0, alpha: '1') }
    assert_equal '$alpha: "1" is not a number', error.message
  end

  # As in the established gem: every mistake is a Sass::ScriptError naming
  # the argument; without space:, all three channels of rgb, hsl or hwb are
  # needed; with it, a channel left out is missing.
  def test_constructor_errors
    {
      -> { Color.new(lightness: 50, a: 1, b: 2) } => '$space: No color space found',
      -> { Color.new(red: 1, green: 2) } => '$space: No color space found',
      -> { Color.new(space: 'cmyk', red: 1, green: 2, blue: 3) } => 'Unknown color space "cmyk".',
      -> { Color.new(space: 42, red: 1, green: 2, blue: 3) } => 'Unknown color space "42".',
      -> { Color.new(red: 1, green: 2, blue: 3, x: 4) } => '$x: `x` is not a valid channel in `rgb`.',
      -> { Color.new(space: 'lab', red: 1, green: 2, blue: 3) } => '$red: `red` is not a valid channel in `lab`.',
      -> { Color.new(hue: 1, saturation: 2, whiteness: 3, lightness: 4) } =>
        '$whiteness: `whiteness` is not a valid channel in `hsl`.',
      -> { Color.new(red: '1', green: 2, blue: 3) } => '$red: "1" is not a number',
      -> { Color.new(red: Complex(1, 1), green: 2, blue: 3) } => '$red: (1+1i) is not a number'
    }.each do |construct, message|
      error = assert_raises(Sass::ScriptError, message) { construct.call }
      assert_equal message, error.message
    end
    assert_equal [1, 2, nil], Color.new(space: 'rgb', red: 1, green: 2).channels_or_nil
  end

  def test_channels_are_kept_as_given_even_out_of_gamut
    assert_equal [300.0, -20.0, 40.0], Color.new(red: 300, green: -20, blue: 40).channels
    assert_equal [150.0, 30.0, 30.0], color('lab', 150, 30, 30).channels
    assert_equal [1.2, 0.5, 200.0], color('oklch', 1.2, 0.5, 200).channels
    assert_equal [40.0, 150.0, 120.0], color('hsl', 40, 150, 120).channels
    assert_equal [10.0, 80.0, 70.0], color('hwb', 10, 80, 70).channels
  end

  def test_hues_are_normalized_and_negative_chroma_turns_the_hue
    assert_equal 350.0, color('hsl', -10, 50, 50).channel('hue')
    assert_equal 40.0, color('hwb', 400, 10, 10).channel('hue')
    assert_equal 0.0, color('lch', 50, 10, 720).channel('hue')
    assert_equal [210.0, 10.0, 50.0], color('hsl', 30, -10, 50).channels
    assert_equal [50.0, 5.0, 210.0], color('lch', 50, -5, 30).channels
    assert_equal [0.5, 0.05, 190.0], color('oklch', 0.5, -0.05, 10).channels
    assert_equal [nil, 10.0, 50.0], color('hsl', nil, -10, 50).channels_or_nil
    assert_equal 359.5, color('hsl', 359.5, 1, 1).channel('hue')
  end

  # The contract the native extension relies on: +@space+, +@channels+ (three
  # numbers or nils) and +@alpha+: the values passed to +new+, kept as given
  # (Integers too, as the established gem keeps them), but for the hue, which
  # is normalized with the compiler's own arithmetic so that both sides hold
  # the same double.
  def test_internal_representation
    values = [0.1 + 0.2, nil, 359.99999999999994]
    made = Color.new(space: 'lch', lightness: values[0], chroma: values[1], hue: values[2], alpha: nil)
    assert_equal 'lch', made.instance_variable_get(:@space)
    assert_predicate made.instance_variable_get(:@space), :frozen?
    assert_equal [values[0], nil, ((values[2] % 360) + 360) % 360], made.instance_variable_get(:@channels)
    assert_predicate made.instance_variable_get(:@channels), :frozen?
    assert_nil made.instance_variable_get(:@alpha)
    assert_predicate made, :frozen?
    integers = Color.new(red: 1, green: 2, blue: 3, alpha: 1)
    assert_equal [1, 2, 3], integers.instance_variable_get(:@channels)
    assert(integers.instance_variable_get(:@channels).all?(Integer))
    assert_instance_of Integer, integers.instance_variable_get(:@alpha)
    assert_equal 'xyz', Color.new(space: 'xyz-d65', x: 1.0, y: nil, z: 0.5, alpha: 1.0).instance_variable_get(:@space)
    # What the compiler reads back is what Ruby holds.
    seen = sass_values([Color.new(hue: 1 / 3.0, saturation: 50, lightness: 50)], ['color.channel(sample(1), "hue")'])
    assert_equal Color.new(hue: 1 / 3.0, saturation: 50, lightness: 50).channel('hue'), seen[0].value
  end

  # ---------------------------------------------------------------------------
  # Equality

  def test_equality_of_non_legacy_colors
    base = color('lab', 50, 20, -30, alpha: 0.5)
    assert_equal base, color('lab', 50 + 1e-12, 20, -30 - 1e-12, alpha: 0.5 + 1e-12)
    refute_equal base, color('lab', 50 + 1e-9, 20, -30, alpha: 0.5)
    refute_equal base, color('lab', 50, 20, -30, alpha: 0.6)
    refute_equal base, color('oklab', 50, 20, -30, alpha: 0.5)
    refute_equal color('srgb', 1, 0, 0), color('display-p3', 1, 0, 0)
    refute_equal color('srgb', 1, 0, 0), color('srgb', 1, 0, 0).to_space('display-p3')
    assert_equal color('lab', nil, 1, 2), color('lab', nil, 1, 2)
    refute_equal color('lab', nil, 1, 2), color('lab', 0, 1, 2)
    refute_equal color('lab', 0, 1, 2, alpha: nil), color('lab', 0, 1, 2, alpha: 0)
    refute_equal color('srgb', 1, 0, 0), Color.new(red: 255, green: 0, blue: 0)
    refute_equal color('srgb', 1, 0, 0), Sass::Value::String.new('red')
    assert_equal color('xyz', 0.1, 0.2, 0.3), color('xyz-d65', 0.1, 0.2, 0.3)
  end

  def test_equality_of_legacy_colors
    red = Color.new(red: 255, green: 0, blue: 0)
    assert_equal red, Color.new(hue: 0, saturation: 100, lightness: 50)
    assert_equal red, Color.new(hue: 360, whiteness: 0, blackness: 0)
    assert_equal Color.new(hue: 0, saturation: 100, lightness: 50), Color.new(hue: 0, whiteness: 0, blackness: 0)
    assert_equal red, Color.new(red: 255 - 1e-12, green: 1e-12, blue: 0)
    refute_equal red, Color.new(red: 254.9, green: 0, blue: 0)
    refute_equal red, Color.new(red: 255, green: 0, blue: 0, alpha: 0.5)
    # In the same space, channels compare as they are: a missing hue is not 0.
    refute_equal Color.new(hue: nil, saturation: 0, lightness: 50), Color.new(hue: 0, saturation: 0, lightness: 50)
    # Across legacy spaces, colors compare in rgb, where the hue is gone.
    assert_equal Color.new(hue: nil, saturation: 0, lightness: 50), Color.new(red: 127.5, green: 127.5, blue: 127.5)
    refute_equal Color.new(red: 255, green: 0, blue: nil), red
  end

  def test_hash_is_consistent_with_equality
    pairs = [
      [Color.new(red: 255, green: 0, blue: 0), Color.new(hue: 0, saturation: 100, lightness: 50)],
      [Color.new(red: 255, green: 0, blue: 0), Color.new(hue: 0, whiteness: 0, blackness: 0)],
      [color('lab', 50, 20, -30), color('lab', 50 + 1e-13, 20, -30)],
      [color('xyz', 0.1, 0.2, 0.3), color('xyz-d65', 0.1, 0.2, 0.3)]
    ]
    pairs.each do |a, b|
      assert_equal a, b
      assert_equal a.hash, b.hash, "#{a.inspect} and #{b.inspect}"
      assert a.eql?(b)
    end
    table = { Color.new(red: 255, green: 0, blue: 0) => :red }
    assert_equal :red, table[Color.new(hue: 0, saturation: 100, lightness: 50)]
    distinct = samples.each_with_index.count { |sample, i| samples.first(i).none?(sample) }
    assert_equal distinct, samples.uniq.length
  end

  # ---------------------------------------------------------------------------
  # Channels

  def test_channel
    lab = color('lab', 50, 20, nil, alpha: 0.5)
    assert_equal 50.0, lab.channel('lightness')
    assert_equal 20.0, lab.channel(:a)
    assert_equal 0.0, lab.channel('b')
    assert_equal 0.5, lab.channel('alpha')
    assert_in_delta 20.0, lab.channel('chroma', space: 'lch'), 1e-12
    assert_in_delta 0.0, lab.channel('hue', space: :lch), 1e-12
    red = Color.new(red: 255, green: 0, blue: 0)
    assert_in_delta 1.0, red.channel('red', space: 'srgb'), 1e-15
    assert_in_delta 0.6279553639214313, red.channel('lightness', space: 'oklab'), 1e-15
    error = assert_raises(Sass::ScriptError) { lab.channel('red') }
    assert_equal '$red: Color lab(50% 20 none / 0.5) doesn\'t have a channel named "red".', error.message
    assert_raises(Sass::ScriptError) { lab.channel('Lightness') }
    assert_raises(Sass::ScriptError) { lab.channel('chroma') }
    error = assert_raises(Sass::ScriptError) { lab.channel('red', space: 'cmyk') }
    assert_equal 'Unknown color space "cmyk".', error.message
    assert_raises(Sass::ScriptError) { lab.channel(1) }
  end

  def test_channels_are_frozen_arrays
    made = color('srgb', 0.1, nil, 0.3)
    assert_predicate made.channels, :frozen?
    assert_predicate made.channels_or_nil, :frozen?
    assert_equal [0.1, 0.0, 0.3], made.channels
    assert_equal [0.1, nil, 0.3], made.channels_or_nil
  end

  def test_channel_missing
    made = color('oklch', 0.5, nil, 30, alpha: nil)
    refute made.channel_missing?('lightness')
    assert made.channel_missing?(:chroma)
    refute made.channel_missing?('hue')
    assert made.channel_missing?('alpha')
    assert_raises(Sass::ScriptError) { made.channel_missing?('red') }
  end

  def test_channel_powerless
    assert Color.new(hue: 120, saturation: 0, lightness: 50).channel_powerless?('hue')
    refute Color.new(hue: 120, saturation: 1, lightness: 50).channel_powerless?('hue')
    refute Color.new(hue: 120, saturation: 0, lightness: 50).channel_powerless?('saturation')
    assert Color.new(hue: 120, saturation: nil, lightness: 50).channel_powerless?('hue')
    assert Color.new(hue: 10, whiteness: 60, blackness: 40).channel_powerless?('hue')
    assert Color.new(hue: 10, whiteness: 70, blackness: 40).channel_powerless?('hue')
    refute Color.new(hue: 10, whiteness: 50, blackness: 40).channel_powerless?('hue')
    assert color('lch', 50, 0, 30).channel_powerless?('hue')
    assert color('oklch', 0.5, 1e-12, 30).channel_powerless?('hue')
    refute color('oklch', 0, 0.1, 30).channel_powerless?('hue')
    refute color('lab', 0, 10, 10).channel_powerless?('a')
    refute color('lab', 50, 0, 0).channel_powerless?('alpha')
    assert color('lab', 50, 0, 0).channel_powerless?('hue', space: 'lch')
    assert Color.new(red: 10, green: 10, blue: 10).channel_powerless?('hue', space: 'hsl')
    refute Color.new(red: 10, green: 10, blue: 11).channel_powerless?('hue', space: 'hsl')
    assert_raises(Sass::ScriptError) { color('lab', 50, 0, 0).channel_powerless?('hue') }
  end

  def test_channel_powerless_matches_sass
    expressions = []
    expected = []
    samples.each_with_index do |sample, i|
      POLAR.each do |space|
        expressions << "color.is-powerless(sample(#{i + 1}), \"hue\", #{space})"
        expected << sample.channel_powerless?('hue', space:)
      end
    end
    actual = sass_values(samples, expressions).map(&:to_bool)
    expressions.zip(expected, actual).each do |expression, mine, sass|
      assert_equal sass, mine, expression
    end
  end

  # As in the established gem: red, green and blue are the rgb channels
  # rounded to Integers; hue, saturation, lightness, whiteness and blackness
  # are the hsl and hwb channels as they are (as given for a color in that
  # space, Floats once converted, 0 for a missing or powerless hue); alpha is
  # as given (1 if left out).
  def test_legacy_accessors
    red = Color.new(hue: 0, saturation: 100, lightness: 50, alpha: 0.5)
    assert_same 255, red.red
    assert_same 0, red.green
    assert_same 0, red.blue
    assert_same 0, red.hue
    assert_same 100, red.saturation
    assert_same 50, red.lightness
    assert_equal 0.5, red.alpha
    assert_instance_of Float, red.whiteness
    assert_in_delta 0.0, red.whiteness, 1e-11
    assert_in_delta 0.0, red.blackness, 1e-11
    teal = Color.new(red: 0, green: 128, blue: 128)
    [teal.red, teal.green, teal.blue].each { |channel| assert_instance_of Integer, channel }
    assert_equal [0, 128, 128], [teal.red, teal.green, teal.blue]
    [teal.hue, teal.saturation, teal.lightness, teal.whiteness, teal.blackness].each do |channel|
      assert_instance_of Float, channel
    end
    assert_in_delta 180.0, teal.hue, 1e-11
    assert_in_delta 100.0, teal.saturation, 1e-11
    assert_in_delta 25.098039215686274, teal.lightness, 1e-11
    assert_in_delta 0.0, teal.whiteness, 1e-11
    assert_in_delta 49.80392156862745, teal.blackness, 1e-11
    assert_same 1, teal.alpha
    # Rounding is Ruby's (half away from zero), as the established gem's.
    assert_equal [13, 0, 255], [Color.new(red: 12.5, green: 0.4999, blue: 254.5).red, 0, 255]
    assert_equal 255, Color.new(red: 254.5, green: 0, blue: 0).red
    assert_equal 300, Color.new(red: 300.2, green: 0, blue: 0).red
    # A grey's hue is powerless: 0, as the Integer the established gem gives.
    assert_same 0, Color.new(red: 10, green: 10, blue: 10).hue
    assert_in_delta 3.9215686274509802, Color.new(red: 10, green: 10, blue: 10).lightness, 1e-13
    # Non-legacy colors answer from their conversion to the legacy space.
    p3 = color('display-p3', 1, 0, 0)
    assert_equal p3.channel('red', space: 'rgb').round, p3.red
    assert_in_delta p3.channel('hue', space: 'hsl'), p3.hue, 1e-15
    # A missing channel reads as 0.
    assert_same 0, Color.new(red: nil, green: 1, blue: 2).red
    assert_same 0, Color.new(red: 0, green: 1, blue: 2, alpha: nil, space: 'rgb').alpha
  end

  # The accessors agree with Sass's own functions for colors Sass made.
  def test_legacy_accessors_match_sass
    literals = ['#123456', 'hsl(200deg 30% 40%)', 'hwb(30 10% 20%)', 'rgb(10.6 20.4 30.5)', 'lab(50% 20 -30)']
    accessors = %w[red green blue hue saturation lightness whiteness blackness alpha]
    space = { 'red' => 'rgb', 'green' => 'rgb', 'blue' => 'rgb', 'hue' => 'hsl', 'saturation' => 'hsl',
              'lightness' => 'hsl', 'whiteness' => 'hwb', 'blackness' => 'hwb' }
    expressions = literals.product(accessors).flat_map do |literal, accessor|
      channel = "color.channel(#{literal}, \"#{accessor}\"#{", $space: #{space[accessor]}" if space[accessor]})"
      [literal, channel]
    end
    values = sass_values([], expressions)
    values.each_slice(2).zip(literals.product(accessors)) do |(color, sass), (literal, accessor)|
      mine = color.public_send(accessor)
      expected = %w[red green blue].include?(accessor) ? sass.value.round : sass.value
      assert_in_delta expected, mine, 1e-11, "#{literal} #{accessor}"
    end
  end

  # ---------------------------------------------------------------------------
  # Value protocol

  def test_value_protocol
    made = color('lab', 50, 20, 30)
    assert_same made, made.assert_color
    assert_same made, made.assert_color('c')
    assert_raises(Sass::ScriptError) { made.assert_number }
    assert_raises(Sass::ScriptError) { made.assert_string('x') }
    assert_equal [made], made.to_a
    assert made.to_bool
    assert_same made, made.to_nil
    assert_kind_of Sass::Value, made
    assert_raises(Sass::ScriptError) { Sass::Value::String.new('x').assert_color }
  end

  # (More in to_s_test.rb, against the compiler.)
  def test_inspect
    assert_equal 'red', Color.new(red: 255, green: 0, blue: 0).inspect
    assert_equal 'rgb(1.5 none 3 / 0.5)', Color.new(space: 'rgb', red: 1.5, green: nil, blue: 3, alpha: 0.5).inspect
    assert_equal 'hsl(120, 50%, 25%)', Color.new(hue: 120, saturation: 50, lightness: 25).inspect
    assert_equal 'hwb(none 10% 20% / none)',
                 Color.new(hue: nil, whiteness: 10, blackness: 20, alpha: nil, space: 'hwb').inspect
    assert_equal 'lab(50% 20 30 / 0.5)', color('lab', 50, 20, 30, alpha: 0.5).inspect
    assert_equal 'lch(50% 30 120deg)', color('lch', 50, 30, 120).inspect
    assert_equal 'oklab(50% 0.1 -0.05)', color('oklab', 0.5, 0.1, -0.05).inspect
    assert_equal 'oklch(62.5% 0.25 none)', color('oklch', 0.625, 0.25, nil).inspect
    assert_equal 'color(display-p3 1 none 0.3333333333333333)', color('display-p3', 1, nil, 1 / 3.0).inspect
    assert_equal 'color(display-p3 1 none 0.3333333333)', color('display-p3', 1, nil, 1 / 3.0).to_s
    assert_equal 'color(xyz 0.1 0.2 0.3)', color('xyz-d65', 0.1, 0.2, 0.3).inspect
    assert_equal 'color(xyz-d50 0 0 0 / 0)', color('xyz-d50', 0, 0, 0, alpha: 0).inspect
    assert_equal 'color(srgb 1 1 1)', color('srgb', 1 - 1e-13, 1, 1).to_s
  end

  # ---------------------------------------------------------------------------
  # Conversion

  def test_to_space_returns_self_in_the_same_space
    made = color('lab', 1, 2, 3)
    assert_same made, made.to_space('lab')
    assert_same made, made.to_space(:LAB)
    xyz = color('xyz', 0.1, 0.2, 0.3)
    assert_same xyz, xyz.to_space('xyz-d65')
    assert_raises(Sass::ScriptError) { made.to_space('cmyk') }
    assert_raises(Sass::ScriptError) { made.to_space(nil) }
    # Elsewhere, space: nil means the color's own space.
    assert_equal made.channel('a'), made.channel('a', space: nil)
    assert_equal made.in_gamut?, made.in_gamut?(nil)
  end

  # Every sample converted to every space, by this implementation and by the
  # Dart Sass compiler (+color.to-space()+), to 1e-11 on every channel. The
  # samples come from Ruby, so Sass converts exactly the same values.
  def test_conversions_match_sass_for_every_pair_of_spaces
    pairs = samples.each_with_index.flat_map { |sample, i| SPACES.map { |space| [sample, i, space] } }
    expressions = pairs.map { |_, i, space| "color.to-space(sample(#{i + 1}), #{space})" }
    checked = Hash.new(0)
    pairs.zip(sass_values(samples, expressions)).each do |(sample, _, space), sass|
      mine = sample.to_space(space)
      message = "#{describe(sample)} to #{space}"
      # Sass's color.to-space() gives 0 rather than none for the missing
      # channels of a legacy color it converts to; the channels missing here
      # are checked to be 0 there.
      assert_close_colors sass, mine, message, legacy_zero: true
      if LEGACY.include?(space)
        mine.channels_or_nil.zip(sass.channels).each { |value, zero| assert_equal 0.0, zero, message if value.nil? }
      end
      checked[[sample.space, mine.space]] += 1
    end
    assert_equal 16 * 16, checked.length
  end

  # The channels Sass's own algorithm marks missing, spelled out.
  def test_conversion_of_missing_and_powerless_channels
    # RGB and XYZ channels carry their missingness by position.
    assert_equal [nil, false, false], missing(color('srgb', nil, 0.5, 0.2).to_space('display-p3'))
    assert_equal [false, nil, false], missing(color('srgb', 1, nil, 0).to_space('xyz'))
    assert_equal [false, nil, false], missing(color('xyz', 0.3, nil, 0.2).to_space('srgb'))
    assert_equal [nil, false, false], missing(Color.new(red: nil, green: 100, blue: 20).to_space('srgb'))
    # Lightness, chroma (saturation) and hue carry across polar spaces.
    assert_equal [nil, false, false], missing(color('lab', nil, 10, 10).to_space('oklab'))
    assert_equal [false, nil, false], missing(color('lab', 50, nil, 10).to_space('oklab'))
    assert_equal [false, false, false], missing(color('lab', 50, nil, 10).to_space('lch'))
    assert_equal [false, nil, nil], missing(Color.new(hue: 120, saturation: nil, lightness: 50).to_space('lch'))
    assert_equal [nil, false, nil], missing(Color.new(hue: 120, saturation: 20, lightness: nil).to_space('oklch'))
    assert_equal [false, false, nil], missing(color('oklch', 0.5, 0.1, nil).to_space('lch'))
    assert_equal [nil, false, false], missing(Color.new(hue: nil, whiteness: 10, blackness: 10).to_space('hsl'))
    assert_equal [nil, false, false], missing(color('lch', 50, 10, nil).to_space('hwb'))
    assert_equal [false, false, false], missing(color('lch', 50, nil, 30).to_space('lab'))
    # Conversion makes a powerless hue missing.
    assert_equal [nil, false, false], missing(Color.new(red: 10, green: 10, blue: 10).to_space('hsl'))
    assert_equal [nil, false, false], missing(Color.new(red: 10, green: 10, blue: 10).to_space('hwb'))
    assert_equal [false, false, nil], missing(color('srgb', 0.5, 0.5, 0.5).to_space('oklch'))
    # Sass treats a and b as powerless when LCH lightness is 0 or missing.
    assert_equal [false, nil, nil], missing(color('lch', 0, 10, 30).to_space('lab'))
    assert_equal [nil, nil, nil], missing(color('lch', nil, 10, 30).to_space('lab'))
    assert_equal [false, false, false], missing(color('oklch', 0, 0.1, 30).to_space('oklab'))
    # As in Sass, converting makes a missing alpha 0.
    assert_equal 0.0, color('srgb', 0.5, 0.5, 0.5, alpha: nil).to_space('lab').send(:alpha_or_nil)
  end

  def missing(color)
    color.channels_or_nil.map { |value| value.nil? ? nil : false }
  end

  def test_known_conversions
    red = Color.new(red: 255, green: 0, blue: 0)
    assert_close_colors color('srgb', 1, 0, 0), red.to_space('srgb')
    assert_close_colors color('oklab', 0.6279553639214313, 0.2248630684262742, 0.125846277330585),
                        red.to_space('oklab'), tolerance: 1e-15
    assert_close_colors color('display-p3', 0.5055533425192188, 0.4273469995901958, 0.652362725640013),
                        color('lab', 50, 20, -30).to_space('display-p3'), tolerance: 1e-15
    assert_close_colors color('hsl', 195, 66.66666666666667, 130), color('srgb', 1.5, 1.2, 1.1).to_space('hsl')
    assert_close_colors color('hwb', 15, 110, -50), color('srgb', 1.5, 1.2, 1.1).to_space('hwb')
  end

  # ---------------------------------------------------------------------------
  # Gamut

  def test_in_gamut
    assert Color.new(red: 255, green: 0, blue: 0).in_gamut?
    refute Color.new(red: 256, green: 0, blue: 0).in_gamut?
    assert Color.new(red: 255 + 1e-12, green: 0, blue: 0).in_gamut?
    assert color('srgb', 1, nil, 0).in_gamut?
    refute color('display-p3', 1, 0, 0).in_gamut?('srgb')
    assert color('srgb', 1, 0, 0).in_gamut?('display-p3')
    assert color('lab', 150, 300, 300).in_gamut?
    assert color('xyz', -1, 2, 3).in_gamut?
    refute color('lab', 150, 300, 300).in_gamut?('rec2020')
    refute Color.new(hue: 0, saturation: 150, lightness: 50).in_gamut?
    assert Color.new(hue: 720, saturation: 50, lightness: 50).in_gamut?
  end

  def test_in_gamut_matches_sass
    expressions = []
    expected = []
    samples.each_with_index do |sample, i|
      SPACES.each do |space|
        expressions << "color.is-in-gamut(sample(#{i + 1}), #{space})"
        expected << sample.in_gamut?(space)
      end
    end
    sass_values(samples, expressions).zip(expected, expressions).each do |sass, mine, expression|
      assert_equal sass.to_bool, mine, expression
    end
  end

  def test_to_gamut
    wide = color('display-p3', 1.2, 0.5, -0.1, alpha: 0.5)
    clipped = wide.to_gamut(method: 'clip')
    assert_equal 'display-p3', clipped.space
    assert_equal [1.0, 0.5, 0.0], clipped.channels
    assert_equal 0.5, clipped.alpha
    mapped = wide.to_gamut(method: :'local-minde')
    assert_predicate mapped, :in_gamut?
    assert_close_colors color('display-p3', 1.0, 0.6409970604119597, 0.4390210972325242, alpha: 0.5), mapped
    in_srgb = color('lab', 50, 100, -100).to_gamut(method: 'local-minde', space: 'srgb')
    assert_equal 'lab', in_srgb.space
    assert in_srgb.in_gamut?('srgb')
    inside = color('display-p3', 0.5, 0.25, 1)
    assert_same inside, inside.to_gamut(method: 'clip')
    assert_close_colors inside, inside.to_gamut(method: 'local-minde', space: 'rec2020')
    refute inside.in_gamut?('srgb')
    too_light = color('lab', 150, 100, -100)
    assert_close_colors color('lab', 100, 0, 0), too_light.to_gamut(method: 'local-minde', space: 'srgb')
    error = assert_raises(Sass::ScriptError) { wide.to_gamut(method: 'nearest') }
    assert_equal '$method: Unknown gamut map method "nearest".', error.message
    assert_raises(Sass::ScriptError) { wide.to_gamut(method: nil) }
    assert_raises(ArgumentError) { wide.to_gamut }
    assert_raises(Sass::ScriptError) { wide.to_gamut(method: 'clip', space: 'cmyk') }
  end

  # Both methods, for every sample and every bounded space, against Sass's
  # +color.to-gamut()+. local-minde is a binary search, but it makes the same
  # choices as Sass on the same inputs, so the results agree to 1e-11 too.
  def test_to_gamut_matches_sass
    cases = samples.each_with_index.flat_map do |sample, i|
      BOUNDED.product(%w[clip local-minde]).map { |space, method| [sample, i, space, method] }
    end
    expressions = cases.map { |_, i, space, method| "color.to-gamut(sample(#{i + 1}), #{space}, #{method})" }
    cases.zip(sass_values(samples, expressions)).each do |(sample, _, space, method), sass|
      mine = sample.to_gamut(method:, space:)
      assert_close_colors sass, mine, "#{describe(sample)} into #{space} by #{method}", legacy_zero: true
    end
  end

  # ---------------------------------------------------------------------------
  # Interpolation

  def test_interpolate
    black = Color.new(red: 0, green: 0, blue: 0)
    white = Color.new(red: 255, green: 255, blue: 255)
    assert_equal [127.5, 127.5, 127.5], black.interpolate(white).channels
    black.interpolate(white, weight: 0.8).channels.each { |value| assert_in_delta 51.0, value, 1e-12 }
    assert_same white, black.interpolate(white, weight: 0)
    assert_same black, black.interpolate(white, weight: 1)
    translucent = Color.new(red: 255, green: 0, blue: 0, alpha: 0.2)
    mixed = translucent.interpolate(Color.new(red: 0, green: 0, blue: 255, alpha: 0.6))
    assert_in_delta 0.4, mixed.alpha, 1e-15
    assert_in_delta 63.75, mixed.channel('red'), 1e-11
    assert_in_delta 191.25, mixed.channel('blue'), 1e-11
    # Interpolation happens in the receiver's space.
    assert_equal 'oklch', color('oklch', 0.5, 0.1, 10).interpolate(black).space
    assert_equal 'rgb', black.interpolate(color('oklch', 0.5, 0.1, 10)).space
  end

  def test_interpolate_hue_methods
    from = color('lch', 50, 10, 10)
    to = color('lch', 50, 10, 350)
    # From 10deg to 350deg: the short way crosses 0, the long way 180.
    assert_hue 0, from.interpolate(to).channel('hue')
    assert_hue 0, from.interpolate(to, method: 'shorter').channel('hue')
    assert_hue 180, from.interpolate(to, method: 'longer').channel('hue')
    assert_hue 180, from.interpolate(to, method: :increasing).channel('hue')
    assert_hue 0, from.interpolate(to, method: 'decreasing').channel('hue')
    # From 350deg to 10deg it is the other way round for the directed ones.
    assert_hue 0, to.interpolate(from, method: 'increasing').channel('hue')
    assert_hue 180, to.interpolate(from, method: 'decreasing').channel('hue')
    assert_hue 5, to.interpolate(from, method: 'shorter', weight: 0.25).channel('hue')
    assert_hue 265, to.interpolate(from, method: 'longer', weight: 0.75).channel('hue')
    mixed = color('oklch', 0.5, 0.1, 30).interpolate(color('oklch', 0.5, 0.1, 60), weight: 2 / 3.0)
    assert_hue 40, mixed.channel('hue')
    assert_hue 60, Color.new(hue: 0, saturation: 50, lightness: 50)
                        .interpolate(Color.new(hue: 120, saturation: 50, lightness: 50)).channel('hue')
  end

  def test_interpolate_missing_channels
    # A channel missing in one color takes the other's value.
    mixed = color('lab', 50, nil, 10).interpolate(color('lab', 70, 20, 30))
    assert_equal [60.0, 20.0, 20.0], mixed.channels_or_nil
    both = color('lab', 50, nil, 10).interpolate(color('lab', 70, nil, 30))
    assert_equal [60.0, nil, 20.0], both.channels_or_nil
    # ...including analogous channels of another space.
    hueless = Color.new(hue: nil, saturation: 50, lightness: 50)
    assert_equal 120.0, hueless.interpolate(Color.new(hue: 120, saturation: 50, lightness: 50)).channel('hue')
    alphas = color('srgb', 0, 0, 0, alpha: nil).interpolate(color('srgb', 1, 1, 1, alpha: nil))
    assert_nil alphas.send(:alpha_or_nil)
  end

  def test_interpolate_errors
    lab = color('lab', 50, 0, 0)
    error = assert_raises(Sass::ScriptError) { lab.interpolate(lab, method: 'shorter') }
    assert_equal 'Hue interpolation method may not be set for rectangular color space lab.', error.message
    error = assert_raises(Sass::ScriptError) { color('lch', 50, 0, 0).interpolate(lab, method: 'nearest') }
    assert_equal 'Unknown hue interpolation method "nearest".', error.message
    error = assert_raises(Sass::ScriptError) { lab.interpolate(lab, weight: 1.5) }
    assert_equal '$weight: Expected 1.5 to be within 0 and 1.', error.message
    assert_raises(Sass::ScriptError) { lab.interpolate(lab, weight: -0.5) }
    assert_raises(Sass::ScriptError) { lab.interpolate(lab, weight: '0.5') }
    assert_equal lab.interpolate(color('lab', 70, 0, 0)), lab.interpolate(color('lab', 70, 0, 0), weight: nil)
    error = assert_raises(Sass::ScriptError) { lab.interpolate('red') }
    assert_equal '$other: "red" is not a color', error.message
  end

  # Mixing pairs of samples (the receiver's space, with every hue method for
  # polar spaces, at several weights) against Sass's +color.mix()+.
  def test_interpolate_matches_sass
    picks = samples.each_slice(3).map(&:first)
    methods = [nil, 'shorter', 'longer', 'increasing', 'decreasing']
    cases = picks.each_with_index.flat_map do |color1, i|
      picks.each_with_index.flat_map do |color2, j|
        [0.5, 0.25, 0.9].map do |weight|
          method = POLAR.include?(color1.space) ? methods[(i + j) % methods.length] : nil
          [[color1, i], [color2, j], weight, method]
        end
      end
    end
    expressions = cases.map do |(color1, i), (_, j), weight, method|
      interpolation = method ? "#{color1.space} #{method} hue" : color1.space
      "color.mix(sample(#{i + 1}), sample(#{j + 1}), #{weight * 100}%, $method: #{interpolation})"
    end
    cases.zip(sass_values(picks, expressions)).each do |((color1, _), (color2, _), weight, method), sass|
      mine = color1.interpolate(color2, method:, weight:)
      assert_close_colors sass, mine, "#{describe(color1)} with #{describe(color2)} at #{weight} #{method}"
    end
  end

  # ---------------------------------------------------------------------------
  # Change

  def test_change_in_the_colors_space
    lab = color('lab', 50, 20, 30, alpha: 0.5)
    assert_equal color('lab', 60, 20, 30, alpha: 0.5), lab.change(lightness: 60)
    assert_equal color('lab', 50, nil, 30, alpha: 0.5), lab.change(a: nil)
    assert_equal color('lab', 50, 20, 30, alpha: nil), lab.change(alpha: nil)
    assert_equal color('lab', 50, 20, 30, alpha: 1), lab.change(alpha: 1)
    assert_equal lab, lab.change
    assert_equal color('srgb', nil, 0.5, 1), color('srgb', 0, 0.5, 0).change(red: nil, blue: 1, space: 'srgb')
  end

  def test_change_in_another_space
    red = color('srgb', 1, 0, 0)
    changed = red.change(hue: 120, space: 'oklch')
    assert_equal 'srgb', changed.space
    assert_in_delta 120.0, changed.channel('hue', space: 'oklch'), 1e-9
    assert_in_delta red.channel('lightness', space: 'oklch'), changed.channel('lightness', space: 'oklch'), 1e-11
    assert_equal 'lab', color('lab', 50, 0, 0).change(red: 0.5, space: :srgb).space
  end

  # Runs the block with deprecation warnings (which Minitest turns on) off.
  def without_deprecation_warnings
    previous = Warning[:deprecated]
    Warning[:deprecated] = false
    yield
  ensure
    Warning[:deprecated] = previous
  end

  def test_change_of_legacy_colors_without_a_space
    without_deprecation_warnings { check_change_of_legacy_colors_without_a_space }
  end

  def check_change_of_legacy_colors_without_a_space
    red = Color.new(red: 255, green: 0, blue: 0)
    # HSL channels change in hsl, HWB ones in hwb, the result stays rgb.
    assert_close_colors Color.new(red: 0, green: 255, blue: 0), red.change(hue: 120), legacy_zero: true
    assert_close_colors Color.new(red: 255, green: 127.5, blue: 127.5), red.change(whiteness: 50),
                        legacy_zero: true
    assert_close_colors Color.new(red: 127.5, green: 0, blue: 0), red.change(lightness: 25), legacy_zero: true
    # nil leaves a legacy channel as it is.
    assert_equal Color.new(red: 255, green: 10, blue: 0), red.change(green: 10, blue: nil)
    assert_equal red, red.change(alpha: nil)
    hwb = Color.new(hue: 10, whiteness: 20, blackness: 30)
    assert_equal Color.new(hue: 50, whiteness: 20, blackness: 30), hwb.change(hue: 50)
    assert_equal 'hwb', hwb.change(hue: 50).space
    hsl = Color.new(hue: 10, saturation: 20, lightness: 30)
    assert_equal Color.new(hue: 50, saturation: 20, lightness: 30), hsl.change(hue: 50)
    # With space:, nil is missing even for legacy colors.
    assert_equal [255.0, nil, 0.0], red.change(green: nil, space: 'rgb').channels_or_nil
  end

  def test_change_errors
    lab = color('lab', 50, 20, 30)
    error = assert_raises(Sass::ScriptError) { lab.change(red: 1) }
    assert_equal '$red: `red` is not a valid channel in `lab`.', error.message
    assert_raises(Sass::ScriptError) { lab.change(chroma: 1, space: 'lab') }
    error = assert_raises(Sass::ScriptError) { lab.change(alpha: 1.5) }
    assert_equal '$alpha: 1.5 must be between 0 and 1.', error.message
    assert_raises(Sass::ScriptError) { lab.change(alpha: '1') }
    assert_raises(Sass::ScriptError) { lab.change(lightness: '1') }
    assert_raises(Sass::ScriptError) { lab.change(lightness: 1, space: 'cmyk') }
    error = assert_raises(Sass::ScriptError) { Color.new(red: 1, green: 2, blue: 3).change(x: 1) }
    assert_equal '$x: `x` is not a valid channel in `rgb`.', error.message
  end

  # Changes with an explicit space, against Sass's +color.change()+.
  def test_change_matches_sass
    changes = {
      'srgb' => { green: 0.25 }, 'display-p3' => { red: 0.75, blue: 0.1 }, 'lab' => { lightness: 40 },
      'oklch' => { chroma: 0.05, hue: 200 }, 'xyz-d50' => { y: 0.3 }, 'lch' => { hue: 90 },
      'hsl' => { lightness: 40 }, 'rgb' => { blue: 100 }
    }
    units = { 'lab' => '%', 'hsl' => '%' }
    # Sass's color.change() makes a missing alpha 0 even in the color's own
    # space, where the JS API keeps it missing: those samples are left out.
    picks = samples.each_slice(2).map(&:first).reject { |sample| sample.channel_missing?('alpha') }
    cases = picks.each_with_index.flat_map { |sample, i| changes.map { |space, values| [sample, i, space, values] } }
    expressions = cases.map do |_, i, space, values|
      arguments = values.map { |name, value| "$#{name}: #{value}#{units[space] if name == :lightness}" }
      "color.change(sample(#{i + 1}), #{arguments.join(', ')}, $space: #{space})"
    end
    cases.zip(sass_values(picks, expressions)).each do |(sample, _, space, values), sass|
      mine = sample.change(**values, space:)
      assert_close_colors sass, mine, "#{describe(sample)} change #{values} in #{space}", legacy_zero: true
    end
  end

  def test_deprecation_warnings
    previous = Warning[:deprecated]
    Warning[:deprecated] = true
    assert_output(nil, /null-alpha/) { Color.new(red: 1, green: 2, blue: 3, alpha: nil) }
    assert_output(nil, /color-4-api/) { Color.new(red: 1, green: 2, blue: 3).change(hue: 10) }
    assert_output(nil, '') { Color.new(red: 1, green: 2, blue: 3, alpha: nil, space: 'rgb') }
    Warning[:deprecated] = false
    assert_output(nil, '') { Color.new(red: 1, green: 2, blue: 3, alpha: nil) }
  ensure
    Warning[:deprecated] = previous
  end

  # ---------------------------------------------------------------------------
  # Through the compiler

  # Colors written in Sass, passed through a function that returns them, must
  # print exactly as the originals do.
  def test_round_trip_through_a_function_prints_the_same_css
    # (How a color was written is not kept, as the protocol carries only its
    # channels: #abc comes back as #aabbcc, transparent as rgba(0, 0, 0, 0).)
    literals = ['red', '#aabbcc', '#12345678', 'rgba(1, 2, 3, 0.5)', 'rgb(10.5 20 30)', 'hsl(120deg 50% 40%)',
                'hsl(none 0% 50%)', 'hwb(30 20% 10% / 0.3)', 'lab(50% 20 -30)', 'lab(50% none 10 / none)',
                'lch(60% 40 200deg)', 'oklab(0.6 0.1 -0.05)', 'oklch(70% 0.2 none)', 'color(display-p3 1 0.5 none)',
                'color(srgb-linear 0.2 0.3 0.4)', 'color(xyz 0.3 0.4 0.5)', 'color(xyz-d65 0.3 0.4 0.5)',
                'color(xyz-d50 0.1 0.2 0.3 / 50%)', 'color(a98-rgb 1.2 0 0)', 'color(prophoto-rgb 0.1 0.2 0.3)',
                'color(rec2020 0.5 0.5 0.5)', 'color(display-p3-linear 0.1 0.2 0.3)', 'rgba(0 0 0 / 0)',
                'color.to-space(red, oklch)', 'color.change(red, $red: 300)', 'rgb(0 0 0 / none)']
    received = []
    functions = { 'f($c)' => lambda { |args|
      received << args[0]
      args[0]
    } }
    literals.each do |literal|
      original = Sass.compile_string("@use 'sass:color'; a { b: #{literal} }").css
      through = Sass.compile_string("@use 'sass:color'; a { b: f(#{literal}) }", functions:).css
      assert_equal original, through, literal
    end
    assert(received.all?(Color))
    assert_equal color('xyz', 0.3, 0.4, 0.5), received[literals.index('color(xyz-d65 0.3 0.4 0.5)')]
    assert_equal [nil, 0.0, 50.0], received[literals.index('hsl(none 0% 50%)')].channels_or_nil
  end

  # Colors made in Ruby, returned to Sass, print as Sass prints them.
  def test_colors_made_in_ruby_reach_sass
    cases = {
      Color.new(red: 255, green: 0, blue: 0) => 'red',
      Color.new(hue: 120, saturation: 100, lightness: 25) => 'hsl(120, 100%, 25%)',
      Color.new(space: 'lab', lightness: 50, a: nil, b: 10, alpha: 0.5) => 'lab(50% none 10 / 0.5)',
      Color.new(space: 'display-p3', red: 1, green: 0.5, blue: 0) => 'color(display-p3 1 0.5 0)',
      Color.new(space: 'xyz-d65', x: 0.25, y: 0.5, z: 0.75) => 'color(xyz-d65 0.25 0.5 0.75)',
      Color.new(space: 'oklch', lightness: 0.5, chroma: 0.1, hue: 400) => 'oklch(50% 0.1 40deg)'
    }
    cases.each do |made, literal|
      expected = Sass.compile_string("a { b: #{literal} }").css
      actual = Sass.compile_string('a { b: f() }', functions: { 'f()' => ->(_) { made } }).css
      assert_equal expected, actual, made.inspect
    end
    # Sass sees the same channels.
    seen = sass_values([color('lab', 50, nil, 10, alpha: 0.5)],
                       ['color.space(sample(1))', 'color.is-missing(sample(1), "a")', 'color.channel(sample(1), "b")'])
    assert_equal ['lab', true, 10.0], [seen[0].text, seen[1].to_bool, seen[2].value]
  end
end
