# frozen_string_literal: true

require 'rack_helper'

# Symlinks inside Sass::Rack's root: what is checked is what is compiled (a
# symlink swapped between the check and the read never leads outside the
# root), and a stylesheet is one stylesheet however a request spells it.
class RackSymlinkTest < Minitest::Test
  include RackStylesheets

  def setup
    @dir = Dir.mktmpdir('sass-rack')
    @root = File.join(@dir, 'styles')
    write_tree(@dir, 'styles/inside.scss' => "a { b: compiled(); c: inside; }\n",
                     'outside.txt' => "secret { b: outside; }\n")
  end

  def teardown
    FileUtils.rm_rf(@dir) if @dir
    super
  end

  def cached(app) = app.instance_variable_get(:@stylesheets).size

  # `ln -sfn`: a new symlink renamed over the old one, atomically.
  def point(link, target, spare)
    File.symlink(target, spare)
    File.rename(spare, link)
  end

  def test_a_symlink_swapped_while_requests_come_never_serves_the_outside_file
    skip_without_symlinks
    app = Sass::Rack.new(teapot, root: @root, prefix: '/css', functions: counting_function)
    link = File.join(@root, 'theme.scss')
    File.symlink('inside.scss', link)
    stop = false
    swapper = Thread.new do
      swaps = 0
      until stop
        swaps += 1
        point(link, swaps.odd? ? File.join(@dir, 'outside.txt') : 'inside.scss', File.join(@dir, "spare#{swaps}"))
        Thread.pass
      end
    end
    bodies = Array.new(1000) do
      status, _, body = app.call(rack_env('/css/theme.css'))
      [status, body.join]
    end
    stop = true
    swapper.join

    leaked = bodies.count { |_, body| body.include?('outside') || body.include?('secret') }
    assert_equal 0, leaked, "#{leaked} of #{bodies.size} responses carried the outside file's text"
    served = bodies.count { |status, body| status == 200 && body.include?('inside') }
    assert_operator served, :>, 0, 'the symlink was never served while it pointed inside'
    assert_empty(bodies.map(&:first).uniq - [200, 404])
  end

  def test_every_spelling_through_symlink_loops_is_one_stylesheet_compiled_once
    skip_without_symlinks
    File.symlink('.', File.join(@root, 'a'))
    File.symlink('.', File.join(@root, 'b'))
    settle
    app = Sass::Rack.new(teapot, root: @root, prefix: '/css', functions: counting_function)
    spellings = (1..300).map { |n| "/css/#{n.to_s(2).tr('01', 'ab').chars.join('/')}/inside.css" }
    responses = spellings.map { |path| app.call(rack_env(path)) }

    assert_equal [200], responses.map(&:first).uniq
    assert_equal 1, responses.map { |_, _, body| body.join }.uniq.size
    assert_equal 1, compiles
    assert_equal 1, cached(app)
  end

  # What is bounded is the bytes of output kept (cache_bytes), the least
  # recently requested let go first.
  def test_the_cache_keeps_the_most_recently_requested_outputs_up_to_its_bytes
    20.times { |n| File.write(File.join(@root, "s#{n}.scss"), "a#{n} { b: compiled(); c: '#{'x' * 1000}'; }\n") }
    settle
    app = Sass::Rack.new(teapot, root: @root, prefix: '/css', functions: counting_function, cache_bytes: 10_000)
    20.times { |n| assert_equal 200, app.call(rack_env("/css/s#{n}.css"))[0] }
    assert_equal 20, compiles
    kept = app.instance_variable_get(:@bytes)
    assert_operator kept, :<=, 10_000
    assert_operator kept, :>, 8_000
    assert_includes 8..10, cached(app) # outputs of about 1 KB each

    # The newest are kept; the oldest were let go, and compile again.
    app.call(rack_env('/css/s19.css'))
    assert_equal 20, compiles
    app.call(rack_env('/css/s0.css'))
    assert_equal 21, compiles
    assert_raises(ArgumentError) { Sass::Rack.new(teapot, root: @root, cache_bytes: 0) }
  end

  # In production (recompile: false) each stylesheet compiles once, however
  # many the root holds: 600 requested in turn, twice, compile 600 times
  # (an entry bound of 512 compiled all 1 200).
  def test_in_production_a_root_of_600_stylesheets_compiles_each_once
    600.times { |n| File.write(File.join(@root, "s#{n}.scss"), "a { b: compiled(); }\n") }
    app = Sass::Rack.new(teapot, root: @root, prefix: '/css', recompile: false, functions: counting_function)
    2.times { 600.times { |n| assert_equal 200, app.call(rack_env("/css/s#{n}.css"))[0] } }
    assert_equal 600, compiles
    assert_equal 600, cached(app)
  end

  # The compiler gets the checked file's text, not its path: a file that is
  # not UTF-8 still fails as the compiler would fail it, naming the file, and
  # its fix is seen.
  def test_an_entry_that_is_not_utf8_shows_the_compilers_error_until_fixed
    path = File.join(@root, 'latin.scss')
    File.binwrite(path, "a { b: \"caf\xE9\"; }\n")
    app = Sass::Rack.new(teapot, root: @root, prefix: '/css')
    status, headers, body = app.call(rack_env('/css/latin.css'))
    assert_equal [200, 'no-store'], [status, headers['cache-control']]
    assert_includes body.join, 'Invalid UTF-8.'
    assert_includes body.join, path

    File.binwrite(path, "a { b: \"caf\u00E9\"; }\n")
    assert_equal "a {\n  b: \"caf\u00E9\";\n}",
                 app.call(rack_env('/css/latin.css'))[2].join.delete_prefix("@charset \"UTF-8\";\n")
  end
end
