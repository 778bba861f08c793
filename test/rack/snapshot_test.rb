# frozen_string_literal: true

require 'rack_helper'

# What an unchanged stylesheet's check watches: exactly the directories where
# a new file could win one of its loads, so the check grows with the loads,
# not with their product, and a new winner is still always seen.
class RackSnapshotTest < Minitest::Test
  include RackStylesheets

  COMPONENTS = 200

  def setup
    @dir = Dir.mktmpdir('sass-rack')
    @root = File.join(@dir, 'styles')
    @vendor = File.join(@dir, 'vendor')
    write_tree(@vendor, '_tokens.scss' => '$gap: 1px;')
    files = (1..COMPONENTS).to_h do |n|
      ["components/c#{n}/_c.scss", "@use 'tokens'; .c#{n} { gap: tokens.$gap; }"]
    end
    uses = (1..COMPONENTS).map { |n| "@use 'components/c#{n}/c' as c#{n};" }
    write_tree(@root, files.merge('app.scss' => "#{uses.join("\n")}\na { b: compiled(); }"))
    settle
    @app = Sass::Rack.new(teapot, root: @root, prefix: '/css', load_paths: [@vendor], functions: counting_function)
  end

  def teardown
    FileUtils.rm_rf(@dir) if @dir
    super
  end

  def watched
    stylesheet, = @app.instance_variable_get(:@stylesheets).each_value.first
    stylesheet.instance_variable_get(:@output).snapshot.instance_variable_get(:@stats).keys
  end

  def test_the_check_grows_with_the_loads_not_their_product
    assert_equal 200, @app.call(rack_env('/css/app.css'))[0]
    paths = watched
    # 201 files and their 201 directories, the vendor file and its directory,
    # and for each component's load of "tokens" (relative, then the load
    # path) components/cN/tokens/.
    assert_operator paths.size, :<=, (2 * (COMPONENTS + 2)) + COMPONENTS + 2, paths.size
    refute(paths.any? { |path| path.include?('components/c1/components') }, 'a directory no load could look in')
    assert_includes paths, File.join(@root, 'components', 'c7', 'tokens')

    2.times { assert_equal 200, @app.call(rack_env('/css/app.css'))[0] }
    assert_equal 1, compiles
  end

  def test_a_new_file_where_a_load_looks_first_wins
    assert_match 'gap: 1px', @app.call(rack_env('/css/app.css'))[2].join
    # Relative to the component, before the load path.
    write_file(File.join(@root, 'components', 'c9', 'tokens', '_index.scss'), '$gap: 9px;')
    body = @app.call(rack_env('/css/app.css'))[2].join
    assert_match ".c9 {\n  gap: 9px;", body
    assert_match ".c8 {\n  gap: 1px;", body
    settle
    write_file(File.join(@root, 'components', 'c3', '_tokens.scss'), '$gap: 3px;')
    assert_match ".c3 {\n  gap: 3px;", @app.call(rack_env('/css/app.css'))[2].join
    assert_equal 3, compiles
  end
end
