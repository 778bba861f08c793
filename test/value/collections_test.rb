# frozen_string_literal: true

require_relative '../test_helper'

class CollectionsTest < Minitest::Test
  S = Sass::Value::String
  N = Sass::Value::Number
  L = Sass::Value::List
  M = Sass::Value::Map

  def test_list_constructor_and_accessors
    list = L.new([N.new(1), N.new(2)], separator: ' ', bracketed: true)
    assert_equal [N.new(1), N.new(2)], list.to_a
    assert_equal ' ', list.separator
    assert list.bracketed?
    assert_predicate list.to_a, :frozen?
    assert_equal ',', L.new.separator
    assert_nil L.new([N.new(1)], separator: nil).separator
    assert_equal '/', L.new([N.new(1), N.new(2)], separator: '/').separator
    error = assert_raises(Sass::ScriptError) { L.new([N.new(1), N.new(2)], separator: nil) }
    assert_equal 'A list with more than one element must have an explicit separator', error.message
  end

  def test_list_indices
    list = L.new([S.new('a'), S.new('b'), S.new('c')])
    assert_equal S.new('c'), list.at(-1)
    assert_equal S.new('b'), list[1]
    assert_equal 2, list.sass_index_to_array_index(N.new(-1))
    assert_equal 0, list.sass_index_to_array_index(N.new(1))
    error = assert_raises(Sass::ScriptError) { list.sass_index_to_array_index(N.new(4), 'n') }
    assert_equal '$n: Invalid index 4 for a list with 3 elements', error.message
    error = assert_raises(Sass::ScriptError) { list.sass_index_to_array_index(N.new(0), 'n') }
    assert_equal '$n: List index may not be 0', error.message
    error = assert_raises(Sass::ScriptError) { list.sass_index_to_array_index(N.new(1.5), 'n') }
    assert_equal '$n: 1.5 is not an integer', error.message
    # As in the established gem (and Sass, which only warns), units are ignored.
    assert_equal 1, list.sass_index_to_array_index(N.new(2, 'px'))
  end

  def test_list_equality
    a = L.new([N.new(1)], separator: ',')
    assert_equal a, L.new([N.new(1)], separator: ',')
    assert_equal a.hash, L.new([N.new(1)], separator: ',').hash
    refute_equal a, L.new([N.new(1)], separator: ' ')
    refute_equal a, L.new([N.new(1)], separator: ',', bracketed: true)
    assert_equal L.new, M.new
    assert_equal L.new.hash, M.new.hash
    assert_equal L.new([], separator: ' '), M.new
  end

  def test_map
    map = M.new({ S.new('a') => N.new(1), S.new('b') => N.new(2) })
    assert_equal N.new(1), map[S.new('a', quoted: false)]
    assert_equal L.new([S.new('a'), N.new(1)], separator: ' '), map.at(0)
    assert_equal L.new([S.new('b'), N.new(2)], separator: ' '), map[-1]
    assert_equal 2, map.to_a.length
    assert_equal ',', map.separator
    assert_nil M.new.separator
    assert_same map, map.assert_map
    assert_same map, map.to_map
    assert_equal M.new, L.new.assert_map
    assert_raises(Sass::ScriptError) { L.new([N.new(1)]).assert_map }
    assert_equal map, M.new({ S.new('b') => N.new(2), S.new('a') => N.new(1) })
    assert_equal map.hash, M.new({ S.new('b') => N.new(2), S.new('a') => N.new(1) }).hash
    assert_nil map['a']
    assert_equal({ S.new('a') => N.new(1), S.new('b') => N.new(2) }, map.to_h)
    assert_predicate map.contents, :frozen?
  end

  def test_argument_list
    list = Sass::Value::ArgumentList.new([N.new(1)], { size: N.new(2) }, ' ')
    assert_kind_of L, list
    assert_equal [N.new(1)], list.to_a
    assert_equal({ size: N.new(2) }, list.keywords)
    assert_equal L.new([N.new(1)], separator: ' '), list
  end

  def test_booleans_and_null
    t = Sass::Value::Boolean::TRUE
    f = Sass::Value::Boolean::FALSE
    assert t.to_bool
    refute f.to_bool
    assert_same t, Sass::Value::Boolean.new(true)
    assert_same f, Sass::Value::Boolean.new(nil)
    assert_same f, !t
    assert_same t, t.assert_boolean
    assert_raises(Sass::ScriptError) { N.new(1).assert_boolean }
    null = Sass::Value::Null::NULL
    refute null.to_bool
    assert_nil null.to_nil
    assert_same t, !null
    assert_raises(NoMethodError) { Sass::Value::Null.new }
    assert_equal null, Sass::Value::Null::NULL
    refute_equal null, f
  end

  def test_round_trips_through_the_compiler
    echo = { 'echo($v)' => ->(args) { args.first } }
    ['(1, 2, 3)', '1 2 3', '[a, b]', '[]', '()', '(a: 1, b: (c: d))', 'true', 'false', 'null',
     '1 / 2 / 3', '(a b, c d)'].each do |literal|
      source = "@use 'sass:meta'; @use 'sass:list'; a { b: meta.inspect(#{literal}); }"
      echoed = "@use 'sass:meta'; @use 'sass:list'; a { b: meta.inspect(echo(#{literal})); }"
      literal = 'list.slash(1, 2, 3)' if literal == '1 / 2 / 3'
      source = source.sub('1 / 2 / 3', literal)
      echoed = echoed.sub('1 / 2 / 3', literal)
      assert_equal Sass.compile_string(source).css, Sass.compile_string(echoed, functions: echo).css, literal
    end
  end

  def depth_of(value)
    depth = 0
    while value.is_a?(L) || value.is_a?(M)
      depth += 1
      value = value.is_a?(M) ? value.contents.values.first : value.to_a.first
    end
    depth
  end

  # From the compiler, values of any depth it can send arrive, on any Ruby's
  # main thread: 1 000 levels (Dart Sass 1.105.0 overflows its own stack a
  # little past 1 050; on 32-bit ARM, maps of 800 levels pass and of 900
  # overflow it). musl's main thread, whose stack Ruby sees as ~124 KiB,
  # raised SystemStackError from 371 levels while conversion recursed.
  def test_hundreds_of_levels_from_the_compiler
    depth = thirty_two_bit? ? 800 : 1000
    functions = { 'depth($v)' => ->(args) { N.new(depth_of(args.first)) } }
    list = "#{'[' * depth}x#{']' * depth}"
    map = (1..depth).reduce('x') { |inner, _| "(k: #{inner})" }
    assert_equal "a {\n  b: #{depth};\n  c: #{depth};\n}",
                 Sass.compile_string("a { b: depth(#{list}); c: depth(#{map}) }", functions:).css
  end

  # To the compiler, as deep as its protobuf reader goes (48 lists, 32 maps);
  # deeper is a clear error of the function, and the compiler keeps serving.
  def test_deepest_values_to_the_compiler
    compiler = new_compiler
    build = lambda do |depth, kind|
      (1..depth).reduce(S.new('leaf', quoted: false)) do |inner, _|
        kind == :list ? L.new([inner], separator: nil, bracketed: true) : M.new({ S.new('k') => inner })
      end
    end
    inspect = lambda do |value|
      compiler.compile_string("@use 'sass:meta'; a { b: meta.inspect(deep()) }",
                              functions: { 'deep()' => ->(_) { value } }).css
    end
    assert_equal "a {\n  b: #{'[' * 48}leaf#{']' * 48};\n}", inspect.call(build.call(48, :list))
    assert_match(/(\("k": ){32}leaf\){32}/, inspect.call(build.call(32, :map)))
    [build.call(49, :list), build.call(33, :map), build.call(2000, :list), build.call(2000, :map)].each do |value|
      error = assert_raises(Sass::CompileError) { inspect.call(value) }
      assert_match(/nested too deeply for the compiler to read/, error.message)
      assert_equal "a {\n  b: c;\n}", compiler.compile_string('a { b: c }').css
    end
  end

  def test_echo_of_moderately_deep_values
    list = "#{'[' * 40}x#{']' * 40}"
    echo = { 'echo($v)' => ->(args) { args.first } }
    source = "@use 'sass:meta'; a { b: meta.inspect(#{list}); }"
    echoed = "@use 'sass:meta'; a { b: meta.inspect(echo(#{list})); }"
    assert_equal Sass.compile_string(source).css, Sass.compile_string(echoed, functions: echo).css
  end
end
