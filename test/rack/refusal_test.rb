# frozen_string_literal: true

require 'rack_helper'

# Sass::Rack serves only entry stylesheets inside its root: every other path
# under the prefix compiles nothing, and is a plain 404 if a stylesheet exists
# where it points (or it cannot name a file at all), else goes on to the
# application, whose own files it may name; whether the server passes the
# path on as it came (a direct call, as Puma does) or normalizes it first
# (WEBrick).
class RackRefusalTest < Minitest::Test
  include RackServers
  include RackStylesheets

  # Paths under the prefix that must not be served, each with what it aims
  # at. Those in PASSED_ON point nowhere in the root: the app gets them.
  REFUSED = {
    '/css/_partial.css' => 'a partial',
    '/css/sub/_partial.css' => 'a partial in a directory',
    '/css/%5Fpartial.css' => 'an encoded partial',
    '/css/../secret.css' => 'a parent directory',
    '/css/sub/../../secret.css' => 'a parent directory, deeper',
    '/css/%2e%2e/secret.css' => 'an encoded parent directory',
    '/css/%2E%2E%2Fsecret.css' => 'an encoded parent directory and slash',
    '/css/..%2fsecret.css' => 'a parent directory with an encoded slash',
    '/css/sub/..%5C..%5Csecret.css' => 'backslashes',
    '/css/./app.css' => 'a dot segment',
    '/css//app.css' => 'an empty segment',
    '/css/%2Fsecret.css' => 'an encoded absolute path',
    '/css//tmp/secret.css' => 'an absolute path',
    '/css/app%00.css' => 'a NUL byte',
    '/css/app%00/x.css' => 'a NUL byte in a directory',
    '/css/%ff.css' => 'invalid UTF-8',
    '/css/app%zz.css' => 'a broken escape',
    '/css/.hidden.css' => 'a hidden file'
  }.freeze
  # Symlinks in the root that lead out of it (where symlinks can be made).
  LEADING_OUT = {
    '/css/outside.css' => 'a symlink leading out',
    '/css/linked/secret.css' => 'a symlinked directory leading out'
  }.freeze
  PASSED_ON = ['/css/../secret.css', '/css/sub/../../secret.css', '/css/%2e%2e/secret.css', '/css/%2E%2E%2Fsecret.css',
               '/css/..%2fsecret.css', '/css/%2Fsecret.css', '/css//tmp/secret.css'].freeze

  def setup
    @dir = Dir.mktmpdir('sass-rack')
    @root = File.join(@dir, 'styles')
    compiled = 'a { b: compiled(); }'
    write_tree(@dir, 'secret.scss' => compiled, 'styles/app.scss' => compiled, 'styles/_partial.scss' => compiled,
                     'styles/sub/_partial.scss' => compiled, 'styles/.hidden.scss' => compiled,
                     'styles/inside.scss' => compiled)
    File.symlink(File.join(@dir, 'secret.scss'), File.join(@root, 'outside.scss'))
    File.symlink(@dir, File.join(@root, 'linked'))
    File.symlink(File.join(@root, 'inside.scss'), File.join(@root, 'alias.scss'))
    @app = Sass::Rack.new(teapot, root: @root, prefix: '/css', functions: counting_function)
  end

  def teardown
    FileUtils.rm_rf(@dir) if @dir
    super
  end

  def test_every_refused_path_is_a_404_or_the_apps_and_compiles_nothing
    REFUSED.each do |path, what|
      status, headers, body = @app.call(rack_env(path))
      expected = if PASSED_ON.include?(path)
                   [418, 'text/plain',
                    ['passed on']]
                 else
                   [404, 'text/plain; charset=utf-8', ['Not Found']]
                 end
      assert_equal expected, [status, headers['content-type'], body], what
    end
    assert_equal 0, compiles
    # What is meant to be served still is.
    assert_equal 200, @app.call(rack_env('/css/app.css'))[0]
  end

  def test_a_symlink_leading_out_is_a_404_that_compiles_nothing_and_one_staying_inside_is_served
    skip_without_symlinks
    LEADING_OUT.each do |path, what|
      assert_equal [404, ['Not Found']], @app.call(rack_env(path)).values_at(0, 2), what
    end
    assert_equal 0, compiles
    assert_equal 200, @app.call(rack_env('/css/alias.css'))[0]
  end

  def test_through_a_server_every_refused_path_is_a_4xx_that_compiles_nothing
    assert RackServers.threaded?, 'Rack and WEBrick must be installed (ruby-rack, ruby-webrick, ruby-rackup on Rack 3)'
    with_threaded_server(@app) do |base|
      REFUSED.merge(LEADING_OUT).each do |path, what|
        # WEBrick answers 400 itself for a path it cannot normalize.
        assert_includes [400, 404, 418], raw_status(base, path), what
      end
      assert_equal 200, raw_status(base, '/css/app.css')
    end
    assert_equal 1, compiles
  end

  # A path of thousands of segments (8 KB, under Puma's limit) goes on to
  # the application (a deep static file of its own) before anything is
  # joined or looked up; a deep stylesheet still is served.
  def test_a_path_of_more_segments_than_any_tree_has_is_the_apps_and_looks_nothing_up
    bound = Sass::Rack.const_get(:SourcePath)::MAX_SEGMENTS
    deep = Array.new(bound - 1) { 'd' }.join('/')
    write_tree(@root, "#{deep}/app.scss" => 'a { b: compiled(); }')
    assert_equal 200, @app.call(rack_env("/css/#{deep}/app.css"))[0]
    assert_equal 1, compiles

    [bound + 1, 4000].each do |count|
      path = "/css/#{Array.new(count - 1) { 'd' }.join('/')}/app.css"
      assert_equal [418, ['passed on']], @app.call(rack_env(path)).values_at(0, 2), "#{count} segments"
    end
    assert_equal 1, compiles
    # Behind the middleware at /, the application's deep static file is its.
    app = Sass::Rack.new(teapot, root: @root)
    deep_static = "/#{Array.new(bound + 5) { 'static' }.join('/')}/file.css"
    assert_equal 418, app.call(rack_env(deep_static))[0]
  end

  # PATH_INFO as a server may pass it: raw bytes that are not UTF-8, tagged
  # binary or UTF-8. A 404, never an exception (a 500).
  def test_a_raw_path_that_is_not_utf8_is_a_404
    ["/css/\xFF.css".b, (+"/css/\xFF.css").force_encoding(Encoding::UTF_8), "/css/a\xC3(.css".b].each do |path|
      assert_equal [404, ['Not Found']], @app.call(rack_env(path)).values_at(0, 2), path.inspect
    end
    assert_equal 0, compiles
  end

  # A request path is never a home directory: a "~name" segment is a name
  # in the root like any other, so no user is looked up (an account-name
  # oracle, and a lookup per request) and nothing raises.
  def test_a_tilde_segment_is_a_name_in_the_root_never_a_home_directory
    app = Sass::Rack.new(teapot, root: @root, functions: counting_function)
    %w[/~nosuchuser/_x.css /~root/_x.css /~/_x.css /~nosuchuser/x.css].each do |path|
      assert_equal 418, app.call(rack_env(path))[0], path
    end
    write_tree(@root, '~user/_x.scss' => 'a { b: compiled(); }', '~user/y.scss' => 'a { b: compiled(); }')
    assert_equal 404, app.call(rack_env('/~user/_x.css'))[0]
    assert_equal 200, app.call(rack_env('/~user/y.css'))[0]
    assert_equal 1, compiles
  end

  # Requests +path+ from +app+ +times+ times, logging to +errors+: each
  # answer an error page (200, never stored) that says each of +texts+,
  # given to the block if any.
  def error_pages(app, path, errors, times, *texts)
    times.times do
      status, headers, body = app.call(rack_env(path).merge('rack.errors' => errors))
      assert_equal [200, 'no-store'], [status, headers['cache-control']], path
      texts.each { |text| assert_includes body.join, text }
      yield body.join if block_given?
    end
  end

  # A stylesheet above max_source_bytes (16 MiB by default) is neither read
  # nor compiled (a sparse file of gigabytes made Ruby and the compiler take
  # 4 GiB each): its request gets an error saying so (the error page; 500 in
  # production), logged once, and precompile raises it.
  def test_a_stylesheet_above_the_size_bound_is_neither_read_nor_compiled
    huge = File.join(@root, 'huge.scss')
    File.write(huge, 'a { b: compiled(); }')
    File.truncate(huge, 17 * 1024 * 1024) # sparse
    errors = StringIO.new
    app = Sass::Rack.new(teapot, root: @root, functions: counting_function)
    error_pages(app, '/huge.css', errors, 2, 'above max_source_bytes (16777216): not compiled')
    assert_equal 0, compiles
    assert_equal 1, errors.string.scan("huge.scss is #{17 * 1024 * 1024} bytes, above max_source_bytes").size

    File.write(File.join(@root, 'small.scss'), 'a { b: c; }')
    production = Sass::Rack.new(teapot, root: @root, recompile: false, max_source_bytes: 10)
    assert_equal 500, production.call(rack_env('/small.css').merge('rack.errors' => StringIO.new))[0]
    assert_equal 200, Sass::Rack.new(teapot, root: @root, max_source_bytes: 11).call(rack_env('/small.css'))[0]
    error = assert_raises(Sass::CompileError) { Sass::Rack.precompile(root: @root, output: File.join(@dir, 'out')) }
    assert_match(/huge\.scss is \d+ bytes, above max_source_bytes/, error.message)
    assert_raises(ArgumentError) { Sass::Rack.new(teapot, root: @root, max_source_bytes: 0) }
  end

  # A file a stylesheet loads above max_source_bytes is not read, by a
  # relative load, a load from a file it loaded, or a load path's (Loaders
  # read those, not the compiler): the text below would fail to parse if
  # anything read it. The compile fails at the load with an error naming
  # the file (the error page, logged once; 500 in production; precompile
  # raises it); made small again, the file is served.
  def test_a_loaded_file_above_the_size_bound_is_not_read
    big = "$x: #{'1' * 200}; }}} not sass"
    lib = write_tree(File.join(@dir, 'lib'), '_deep.scss' => big)
    write_tree(@root, 'app.scss' => "@use 'big'; a { b: compiled(); }", '_big.scss' => big,
                      'nested.scss' => "@use 'sub/a';", 'sub/_a.scss' => "@use '../big';",
                      'from_lib.scss' => "@use 'deep';")
    app = Sass::Rack.new(teapot, root: @root, load_paths: [lib], functions: counting_function, max_source_bytes: 100)
    { 'app' => '_big', 'nested' => '_big', 'from_lib' => '_deep' }.each do |name, loaded|
      errors = StringIO.new
      error_pages(app, "/#{name}.css", errors, 2,
                  "#{loaded}.scss is #{big.bytesize} bytes, above max_source_bytes (100): not read") do |page|
        refute_includes page, 'expected'
      end
      assert_equal 1, errors.string.scan(/#{loaded}\.scss is \d+ bytes/).size, name
    end
    assert_equal 0, compiles

    huge = File.join(@root, '_huge.scss')
    File.write(huge, 'a { b: c; }')
    File.truncate(huge, 17 * 1024 * 1024) # sparse
    write_file(File.join(@root, 'uses_huge.scss'), "@use 'huge';")
    body = Sass::Rack.new(teapot, root: @root).call(rack_env('/uses_huge.css'))[2].join
    assert_includes body, "_huge.scss is #{17 * 1024 * 1024} bytes, above max_source_bytes (16777216): not read"

    production = Sass::Rack.new(teapot, root: @root, recompile: false, max_source_bytes: 100)
    assert_equal 500, production.call(rack_env('/app.css').merge('rack.errors' => StringIO.new))[0]
    error = assert_raises(Sass::CompileError) do
      Sass::Rack.precompile(root: @root, output: File.join(@dir, 'out'), max_source_bytes: 100)
    end
    assert_match(/_big\.scss is \d+ bytes, above max_source_bytes \(100\): not read/, error.message)

    write_file(File.join(@root, '_big.scss'), '$x: 1;')
    status, _, body = app.call(rack_env('/app.css'))
    assert_equal [200, "a {\n  b: yes;\n}"], [status, body.join.strip]
  end

  # A file a custom FileImporter resolves is read by the compiler itself:
  # above max_source_bytes, the compile's result is not served (an error
  # naming the file, logged once; 500 in production; precompile raises it),
  # and while the files stay as they are no request compiles again. Made
  # small again, the stylesheet is served.
  def test_a_file_an_importer_resolves_above_the_size_bound_is_not_served_and_not_compiled_again
    vendor = write_tree(File.join(@dir, 'vendor'), '_big.scss' => "$x: #{'1' * 200};")
    importer = { find_file_url: ->(url, _) { "#{FILE_URL_PREFIX}#{vendor}/big" if url == 'vendor:big' } }
    write_file(File.join(@root, 'app.scss'), "@use 'vendor:big'; a { b: compiled(); }")
    errors = StringIO.new
    app = Sass::Rack.new(teapot, root: @root, importers: [importer], functions: counting_function,
                                 max_source_bytes: 100)
    settle
    error_pages(app, '/app.css', errors, 3, '_big.scss (loaded by ', 'above max_source_bytes (100): not served')
    assert_equal 1, compiles
    assert_equal 1, errors.string.scan(/_big\.scss \(loaded by .*app\.scss\) is 205 bytes/).size

    production = Sass::Rack.new(teapot, root: @root, importers: [importer], recompile: false, max_source_bytes: 100)
    assert_equal 500, production.call(rack_env('/app.css').merge('rack.errors' => StringIO.new))[0]
    error = assert_raises(Sass::CompileError) do
      Sass::Rack.precompile(root: @root, output: File.join(@dir, 'out'), importers: [importer], max_source_bytes: 100)
    end
    assert_match(/_big\.scss \(loaded by .*\) is 205 bytes, above max_source_bytes/, error.message)

    write_file(File.join(vendor, '_big.scss'), '$x: 1;')
    status, _, body = app.call(rack_env('/app.css').merge('rack.errors' => errors))
    assert_equal [200, "a {\n  b: yes;\n}"], [status, body.join.strip]
  end

  # With the default prefix the middleware sees every path: the app's own
  # files that only look like refused stylesheets (a partial, a hidden
  # directory, an empty segment, as Rack::Static would serve them from
  # public/) still reach the app, and compile nothing.
  def test_an_apps_own_files_shaped_like_refused_paths_still_reach_it
    app = Sass::Rack.new(teapot, root: @root, functions: counting_function)
    %w[/vendor/_reset.css /.well-known/theme.css /assets//app.css /sub/./x.css].each do |path|
      assert_equal 418, app.call(rack_env(path))[0], path
    end
    # Where a stylesheet does exist, the refusal stands.
    %w[/_partial.css /sub/_partial.css /.hidden.css //app.css /sub/../app.css].each do |path|
      assert_equal 404, app.call(rack_env(path))[0], path
    end
    assert_equal 0, compiles
  end

  def test_requests_that_are_not_get_or_head_pass_through
    %w[POST PUT DELETE OPTIONS PATCH].each do |method|
      assert_equal 418, @app.call(rack_env('/css/app.css', method:))[0], method
      assert_equal 418, @app.call(rack_env('/css/../secret.css', method:))[0], method
    end
    assert_equal 0, compiles
  end
end
