# frozen_string_literal: true

require_relative '../test_helper'

class CalculationTest < Minitest::Test
  C = Sass::Value::Calculation
  N = Sass::Value::Number
  S = Sass::Value::String
  Op = Sass::CalculationValue::CalculationOperation
  Interp = Sass::CalculationValue::CalculationInterpolation

  def test_constructors
    calc = C.calc(Op.new('+', N.new(1, 'px'), N.new(10, '%')))
    assert_equal 'calc', calc.name
    assert_equal [Op.new('+', N.new(1, 'px'), N.new(10, '%'))], calc.arguments
    assert_predicate calc, :frozen?
    assert_equal 'min', C.min([N.new(1), N.new(2)]).name
    assert_equal 'max', C.max([N.new(1), S.new('var(--x)', quoted: false)]).name
    assert_equal 3, C.clamp(N.new(1), N.new(2), N.new(3)).arguments.length
    assert_equal 1, C.clamp(S.new('var(--all)', quoted: false)).arguments.length
    assert_equal 2, C.clamp(Interp.new('$a'), N.new(2)).arguments.length
    assert_raises(NoMethodError) { C.new('calc', []) }
  end

  def test_constructor_errors
    {
      -> { C.calc(S.new('quoted')) } => 'Expected "quoted" to be an unquoted string.',
      -> { C.min([N.new(1), S.new('quoted')]) } => 'Expected "quoted" to be an unquoted string.',
      -> { C.calc(Sass::Value::Boolean::TRUE) } => 'true is not a calculation value',
      -> { C.calc(1) } => '1 is not a calculation value',
      -> { C.min(N.new(1)) } => 'invalid arguments 1',
      -> { C.clamp(N.new(1), nil, N.new(3)) } => 'Argument must be an unquoted SassString.',
      -> { C.clamp(N.new(1), N.new(2)) } => 'Argument must be an unquoted SassString.',
      -> { C.clamp(S.new('a', quoted: false), nil, N.new(3)) } => 'Value must be set when max is set.',
      -> { Op.new('%', N.new(1), N.new(2)) } => 'Invalid operator: %',
      -> { Op.new('+', S.new('q'), N.new(2)) } => '$left: Expected "q" to be an unquoted string.',
      -> { Op.new('+', N.new(2), Sass::Value::Null::NULL) } => '$right: null is not a calculation value',
      -> { Interp.new(1) } => 'invalid value 1'
    }.each do |make, message|
      error = assert_raises(Sass::ScriptError, message) { make.call }
      assert_equal message, error.message
    end
    number = N.new(1)
    assert_same number, number.assert_calculation_value
    assert_kind_of Sass::CalculationValue, S.new('a', quoted: false)
    assert_kind_of Sass::CalculationValue, N.new(1)
  end

  def test_equality_and_hash
    a = C.calc(Op.new('*', N.new(2), Interp.new('$x')))
    b = C.calc(Op.new('*', N.new(2), Interp.new('$x')))
    assert_equal a, b
    assert_equal a.hash, b.hash
    refute_equal a, C.calc(Op.new('/', N.new(2), Interp.new('$x')))
    refute_equal C.min([N.new(1)]), C.max([N.new(1)])
    assert_equal Interp.new('a'), Interp.new('a')
    assert_equal Op.new('+', N.new(1), N.new(2)).hash, Op.new('+', N.new(1), N.new(2)).hash
    assert_same a, a.assert_calculation
    assert_raises(Sass::ScriptError) { N.new(1).assert_calculation }
  end

  def test_round_trip_through_the_compiler
    echo = { 'echo($v)' => ->(args) { args.first } }
    ['calc(1px + 10%)', 'min(1px, 2vw)', 'max(10%, 3rem)', 'clamp(1px, 5vw, 10px)', 'calc(var(--x) * 2)',
     'calc(1px + (2em - 3%) / 4)', 'calc(1px + min(2em, 3%))'].each do |literal|
      assert_equal Sass.compile_string("a { b: #{literal} }").css,
                   Sass.compile_string("a { b: echo(#{literal}) }", functions: echo).css, literal
    end
  end

  # Sass sends calculations of every kind, but takes back only calc, min, max
  # and clamp: others are a clear error of the function, and the compiler
  # keeps serving.
  def test_other_calculations_arrive_but_cannot_be_returned
    compiler = new_compiler
    received = nil
    echo = { 'echo($v)' => lambda { |args|
      received = args.first
      args.first
    } }
    error = assert_raises(Sass::CompileError) do
      compiler.compile_string('a { b: echo(round(nearest, 1.5px, 1vw)) }', functions: echo)
    end
    assert_equal 'round', received.name
    assert_equal 3, received.arguments.length
    assert_includes error.message, 'Value.Calculation.name "round" is not a recognized calculation type.'
    assert_equal "a {\n  b: c;\n}", compiler.compile_string('a { b: c }').css
  end

  def test_calculations_from_ruby_are_simplified_by_sass
    functions = {
      'sum()' => ->(_) { C.calc(Op.new('+', N.new(1, 'px'), N.new(2, 'px'))) },
      'mixed()' => ->(_) { C.calc(Op.new('-', N.new(100, '%'), Interp.new('$gap'))) },
      'var()' => ->(_) { C.max([S.new('var(--a)', quoted: false), N.new(1, 'px')]) }
    }
    css = Sass.compile_string('a { b: sum(); c: mixed(); d: var() }', functions:).css
    assert_equal "a {\n  b: 3px;\n  c: calc(100% - ($gap));\n  d: max(var(--a), 1px);\n}", css
    error = assert_raises(Sass::CompileError) do
      Sass.compile_string('a { b: bad() }', functions: { 'bad()' => lambda { |_|
                                                                      C.calc(Op.new('+', N.new(1, 'px'), N.new(1, 's')))
                                                                    } })
    end
    assert_match(/incompatible/, error.message)
  end

  def test_received_structure
    received = nil
    capture = { 'capture($v)' => lambda { |args|
      received = args.first
      Sass::Value::Null::NULL
    } }
    Sass.compile_string('a { b: capture(calc(1px + 10%)) }', functions: capture)
    assert_equal C.calc(Op.new('+', N.new(1, 'px'), N.new(10, '%'))), received
  end
end
