# frozen_string_literal: true

require 'rack_helper'

# Sass::Rack served by WEBrick (threads) under Rack::Lint: what a request
# gets, when it recompiles, validators and 304s, errors, source maps.
class RackMiddlewareTest < Minitest::Test
  include RackServers
  include RackStylesheets

  def setup
    skip_unless_threaded
    @dir = Dir.mktmpdir('sass-rack')
    @root = File.join(@dir, 'styles')
  end

  def teardown
    FileUtils.rm_rf(@dir) if @dir
    super
  end

  def skip_unless_threaded
    # Debian's ruby-rack and ruby-webrick (bin/setup, every root) are part of
    # the test setup: missing, they are a failure, not a skip.
    assert RackServers.threaded?, 'Rack and WEBrick must be installed (ruby-rack, ruby-webrick, ruby-rackup on Rack 3)'
  end

  # Serves the middleware with +options+; what it logs goes to @errors.
  def serve(**options, &)
    @errors = StringIO.new
    app = Sass::Rack.new(teapot, root: @root, prefix: '/css', **options)
    with_threaded_server(->(env) { app.call(env.merge('rack.errors' => @errors)) }, &)
  end

  def test_serves_a_compiled_stylesheet_and_passes_every_other_request_on
    write_tree(@root, 'app.scss' => '@use "colors"; a { color: colors.$main; }', '_colors.scss' => '$main: red;',
                      'plain.sass' => "p\n  margin: 0\n", 'raw.css' => 'q { x: y }', 'sub/deep.scss' => 'b { c: d }')
    serve(style: :compressed) do |base|
      response = http(base, '/css/app.css')
      assert_equal '200', response.code
      assert_equal 'text/css; charset=utf-8', response['content-type']
      assert_equal 'a{color:red}', response.body
      assert_equal response.body.bytesize, Integer(response['content-length'])
      assert_equal 'p{margin:0}', http(base, '/css/plain.css').body
      assert_equal 'q{x:y}', http(base, '/css/raw.css').body
      assert_equal 'b{c:d}', http(base, '/css/sub/deep.css').body
      # Not a stylesheet path, or no stylesheet there, or not a GET: the app.
      %w[/css/app.scss /css/missing.css /other/app.css /css/app.png].each do |path|
        assert_equal ['418', 'passed on'], [http(base, path).code, http(base, path).body], path
      end
      assert_equal '418',
                   http(base, '/css/app.css', method: 'POST', body: 'x',
                                              headers: { 'Content-Type' => 'text/plain' }).code
      head = http(base, '/css/app.css', method: 'HEAD')
      assert_equal ['200', nil, '12'], [head.code, head.body, head['content-length']]
    end
  end

  def test_recompiles_when_a_loaded_file_changes_and_only_then
    write_tree(@root, 'app.scss' => '@use "theme"; a { b: compiled(); color: theme.$c; }',
                      '_theme.scss' => '@forward "deep/tone";', 'deep/_tone.scss' => '$c: red;')
    settle
    serve(functions: counting_function) do |base|
      assert_match 'color: red', http(base, '/css/app.css').body
      3.times { assert_match 'color: red', http(base, '/css/app.css').body }
      assert_equal 1, compiles, 'an unchanged stylesheet costs only the checks'

      write_file(File.join(@root, 'deep', '_tone.scss'), '$c: blue;')
      assert_match 'color: blue', http(base, '/css/app.css').body
      assert_equal 2, compiles

      File.write(File.join(@root, 'deep', '_tone.scss'), '$c: lime;') # same size, same second
      assert_match 'color: lime', http(base, '/css/app.css').body, 'an edit right after a compile is never missed'

      File.delete(File.join(@root, 'deep', '_tone.scss'))
      assert_match "Can't find stylesheet to import.", http(base, '/css/app.css').body
    end
  end

  def test_recompiles_when_a_file_that_now_wins_an_import_appears
    vendor = File.join(@dir, 'vendor')
    write_tree(vendor, 'widgets/_button.scss' => '$color: red;', '_grid.scss' => '$gap: 1px;')
    write_tree(@root, 'app.scss' => '@use "widgets/button"; @use "grid"; a { color: button.$color; gap: grid.$gap; }')
    settle
    serve(load_paths: [vendor]) do |base|
      assert_match(/color: red;\s+gap: 1px/, http(base, '/css/app.css').body)
      # Relative loads win over load paths: a new file beside app.scss wins,
      # in a directory that did not exist (widgets/) and in one that did.
      write_file(File.join(@root, 'widgets', '_button.scss'), '$color: blue;')
      assert_match 'color: blue', http(base, '/css/app.css').body
      write_file(File.join(@root, 'grid', '_index.scss'), '$gap: 2px;')
      assert_match 'gap: 2px', http(base, '/css/app.css').body
      # An entry point that appears beside the served one: .scss wins over .sass.
      write_file(File.join(@root, 'other.sass'), "i\n  j: sass\n")
      assert_match 'j: sass', http(base, '/css/other.css').body
      write_file(File.join(@root, 'other.scss'), 'i { j: scss }')
      assert_match 'j: scss', http(base, '/css/other.css').body
    end
  end

  def test_a_stylesheet_that_loaded_a_custom_importers_url_recompiles_on_every_request
    write_tree(@root, 'app.scss' => '@use "theme:colors"; a { b: compiled(); c: colors.$c; }')
    color = +'red'
    importer = { canonicalize: ->(url, _) { url if url.start_with?('theme:') },
                 load: ->(_) { { contents: "$c: #{color};", syntax: :scss } } }
    settle
    serve(functions: counting_function, importers: [importer], cache_control: 'private, max-age=0') do |base|
      first = http(base, '/css/app.css')
      assert_match 'c: red', first.body
      assert_equal 'private, max-age=0', first['cache-control']
      color.replace('blue') # nothing on disk tells of this change
      assert_match 'c: blue', http(base, '/css/app.css').body
      assert_equal 2, compiles
    end
  end

  def test_validators_and_conditional_requests
    write_tree(@root, 'app.scss' => 'a { b: c }')
    written = Time.now.to_i
    File.utime(Time.at(1_700_000_000), Time.at(1_700_000_000), File.join(@root, 'app.scss'))
    serve do |base|
      first = http(base, '/css/app.css')
      etag = first['etag']
      assert_match(/\A"\h{32}"\z/, etag)
      # The newest change of what the compile depended on: here the utime.
      assert_operator Time.httpdate(first['last-modified']).to_i, :>=, written
      assert_equal 'no-cache', first['cache-control']

      not_modified = http(base, '/css/app.css', headers: { 'If-None-Match' => etag })
      assert_equal ['304', nil], [not_modified.code, not_modified.body]
      assert_equal etag, not_modified['etag']
      assert_equal '304', http(base, '/css/app.css', headers: { 'If-None-Match' => %("x", W/#{etag}) }).code
      assert_equal '200', http(base, '/css/app.css', headers: { 'If-None-Match' => '"other"' }).code
      assert_equal '304', http(base, '/css/app.css', headers: { 'If-Modified-Since' => first['last-modified'] }).code
      assert_equal '200',
                   http(base, '/css/app.css', headers: { 'If-Modified-Since' => Time.at(1_600_000_000).httpdate }).code
      # If-None-Match decides when both are sent.
      assert_equal '200', http(base, '/css/app.css', headers: { 'If-None-Match' => '"other"',
                                                                'If-Modified-Since' => first['last-modified'] }).code
      assert_equal '200', http(base, '/css/app.css', headers: { 'If-Modified-Since' => 'not a date' }).code

      write_file(File.join(@root, 'app.scss'), 'a { b: d }')
      changed = http(base, '/css/app.css', headers: { 'If-None-Match' => etag })
      assert_equal '200', changed.code
      refute_equal etag, changed['etag']
    end
  end

  def test_last_modified_moves_forward_for_a_copy_that_keeps_an_old_time
    vendor = File.join(@dir, 'vendor')
    write_tree(vendor, '_tone.scss' => '$c: red;')
    write_tree(@root, 'app.scss' => '@use "tone"; a { b: tone.$c; }')
    old = Time.at(1_600_000_000)
    [File.join(vendor, '_tone.scss'), File.join(@root, 'app.scss'), vendor, @root].each do |path|
      File.utime(old, old, path)
    end
    sleep 1.1 # so that the copy's change time is a later second
    serve(load_paths: [vendor]) do |base|
      first = http(base, '/css/app.css')
      # As `cp -p` leaves it: a file that now wins the load, with an old time.
      copy = File.join(@root, '_tone.scss')
      File.write(copy, '$c: blue;')
      File.utime(old, old, copy)
      File.utime(old, old, @root)
      second = http(base, '/css/app.css', headers: { 'If-Modified-Since' => first['last-modified'] })
      assert_equal '200', second.code
      assert_match 'b: blue', second.body
      assert_operator Time.httpdate(second['last-modified']), :>, Time.httpdate(first['last-modified'])
    end
  end

  # Two edits within one second, and the requests between them in that
  # second too: the second result is dated past the first one's
  # Last-Modified, and carries none until that second begins, so a client
  # holding the first result and sending only If-Modified-Since never gets a
  # 304 for the second; nor from a compile that the unsettled snapshot
  # forces, which reads the same times again.
  def test_edits_within_one_second_never_answer_a_stale_304
    write_tree(@root, 'app.scss' => '@use "part"; a { b: part.$c; }')
    part = File.join(@root, '_part.scss')
    serve do |base|
      tried = 0
      begin
        tried += 1
        sleep(1.02 - (Time.now.to_f % 1)) # just after a second begins
        second = Time.now.to_i
        write_file(part, '$c: red;')
        File.utime(Time.at(second), Time.at(second), part)
        first = http(base, '/css/app.css')
        write_file(part, '$c: blue;')
        File.utime(Time.at(second), Time.at(second), part)
        since = { 'If-Modified-Since' => first['last-modified'] }
        changed = http(base, '/css/app.css', headers: since)
        again = http(base, '/css/app.css', headers: since)
        raise 'the second turned' unless Time.now.to_i == second
      rescue RuntimeError => e
        raise unless e.message == 'the second turned' && tried < 3

        retry
      end
      assert_match 'b: red', first.body
      assert_equal ['200', "a {\n  b: blue;\n}"], [changed.code, changed.body]
      assert_equal ['200', "a {\n  b: blue;\n}"], [again.code, again.body]
      sleep(1.02 - (Time.now.to_f % 1))
      later = http(base, '/css/app.css', headers: since)
      assert_equal '200', later.code
      assert_operator Time.httpdate(later['last-modified']), :>, Time.httpdate(first['last-modified'])
    end
  end

  # A pkg: load is resolved through the package's package.json: edited in
  # place (its "sass" entry now names another file), the next request
  # compiles the file it now names.
  def test_a_pkg_load_recompiles_when_its_package_json_changes
    package = File.join(@dir, 'node_modules', 'tones')
    write_tree(package, 'package.json' => '{"name": "tones", "sass": "red.scss"}',
                        'red.scss' => '$c: red;', 'blue.scss' => '$c: blue;')
    write_tree(@root, 'app.scss' => '@use "pkg:tones"; a { b: tones.$c; }')
    settle
    serve(importers: [Sass::NodePackageImporter.new(@dir)]) do |base|
      assert_equal "a {\n  b: red;\n}", http(base, '/css/app.css').body
      settle # so that the snapshot is trusted
      assert_equal "a {\n  b: red;\n}", http(base, '/css/app.css').body
      write_file(File.join(package, 'package.json'), '{"name": "tones", "sass": "blue.scss"}')
      assert_equal "a {\n  b: blue;\n}", http(base, '/css/app.css').body
    end
  end

  # A failing stylesheet compiles again at each request, by design; the
  # requests that arrive while one of its compiles runs share it (20
  # threads sending 5 requests each made 43 compiles per 100 requests).
  def test_requests_for_a_failing_stylesheet_share_the_compile_running_when_they_arrive
    write_tree(@root, 'broken.scss' => '@error "broken " + slow();')
    calls = Queue.new
    slow = { 'slow()' => lambda { |_|
      calls << true
      sleep 0.05
      Sass::Value::String.new('x')
    } }
    app = Sass::Rack.new(teapot, root: @root, prefix: '/css', functions: slow)
    env = rack_env('/css/broken.css').merge('rack.errors' => StringIO.new)
    threads = Array.new(20) { Thread.new { Array.new(5) { app.call(env.dup)[0] } } }
    assert_equal [200], threads.flat_map(&:value).uniq
    assert_operator calls.size, :<=, 25, "#{calls.size} compiles for 100 requests"
    # Fixed, the next request compiles and serves it.
    write_file(File.join(@root, 'broken.scss'), 'a { b: c; }')
    assert_equal "a {\n  b: c;\n}", app.call(rack_env('/css/broken.css'))[2].join
  end

  def test_a_failing_stylesheet_shows_its_error_logs_it_once_and_fixing_it_fixes_the_next_request
    write_tree(@root, 'app.scss' => '@use "part"; a { b: part.$c }', '_part.scss' => '$c: red;')
    serve do |base|
      assert_match 'b: red', http(base, '/css/app.css').body
      write_file(File.join(@root, '_part.scss'), '$c: red !!;')
      settle
      broken = http(base, '/css/app.css')
      assert_equal ['200', 'text/css; charset=utf-8', 'no-store'],
                   [broken.code, broken['content-type'], broken['cache-control']]
      assert_nil broken['etag']
      assert_match 'body::before', broken.body
      assert_match 'Expected identifier.', broken.body
      # The Sass error alone: no Ruby backtrace with the server's paths.
      refute_match(/\.rb:\d+:in /, broken.body)
      3.times { http(base, '/css/app.css') }
      assert_equal 1, @errors.string.scan('Sass::Rack: ').length, @errors.string
      assert_match(/Expected identifier\..*_part\.scss 1:10/m, @errors.string)

      write_file(File.join(@root, '_part.scss'), '$c: blue;')
      assert_equal "a {\n  b: blue;\n}", http(base, '/css/app.css').body
    end
  end

  # A load that failed because its file did not exist yet (written in that
  # order, or a branch switch, or a package not yet installed) succeeds as
  # soon as the file exists, wherever it appears: a failed compile is never
  # trusted, as Dart Sass's own --watch recompiles.
  def test_a_stylesheet_whose_load_was_missing_compiles_once_the_file_exists
    write_tree(@root, 'app.scss' => '@use "lib/forms/inputs"; a { b: inputs.$c }', 'lib/forms/_buttons.scss' => '')
    vendor = File.join(@dir, 'vendor')
    write_tree(vendor, 'theme/_base.scss' => '')
    write_tree(@root, 'vendored.scss' => '@use "theme/colors"; a { b: colors.$c }')
    settle
    serve(load_paths: [vendor]) do |base|
      assert_match "Can't find stylesheet to import.", http(base, '/css/app.css').body
      assert_match "Can't find stylesheet to import.", http(base, '/css/vendored.css').body
      settle
      write_file(File.join(@root, 'lib', 'forms', '_inputs.scss'), '$c: red;')
      write_file(File.join(vendor, 'theme', '_colors.scss'), '$c: blue;')
      assert_equal "a {\n  b: red;\n}", http(base, '/css/app.css').body
      assert_equal "a {\n  b: blue;\n}", http(base, '/css/vendored.css').body
    end
  end

  # A file dated in the future (a clock ahead, `touch -d`) is trusted like
  # any other once settled, and Last-Modified is never later than the
  # response (RFC 9110 8.8.2.1).
  def test_a_file_dated_in_the_future_neither_recompiles_nor_dates_the_response_ahead
    write_tree(@root, 'app.scss' => 'a { b: compiled(); }')
    tomorrow = Time.now + 86_400
    File.utime(tomorrow, tomorrow, File.join(@root, 'app.scss'))
    settle
    serve(functions: counting_function) do |base|
      responses = Array.new(3) { http(base, '/css/app.css') }
      assert_equal 1, compiles
      responses.each do |response|
        assert_operator Time.httpdate(response['last-modified']), :<=,
                        Time.httpdate(response['date'] || Time.now.httpdate)
      end
      # In a later second too: the output is dated when it was made, not at
      # each response.
      sleep(1.05 - (Time.now.to_f % 1))
      assert_equal '304',
                   http(base, '/css/app.css', headers: { 'If-Modified-Since' => responses.last['last-modified'] }).code
    end
  end

  # A response's body is shared by every later one: a middleware downstream
  # that appends to a chunk cannot change them.
  def test_bodies_are_frozen_so_nothing_downstream_changes_later_responses
    write_tree(@root, 'app.scss' => 'a { b: c; }')
    app = Sass::Rack.new(teapot, root: @root, prefix: '/css', source_map: true)
    %w[/css/app.css /css/app.css.map /css/_nope.css].each do |path|
      body = app.call(rack_env(path))[2]
      assert(body.all?(&:frozen?), path)
      assert_raises(FrozenError) { body.first << 'appended' }
      refute_includes app.call(rack_env(path))[2].join, 'appended'
    end
  end

  # HEAD gets no body whatever the answer; cache_control: nil sends no
  # Cache-Control; all of it under Rack::Lint.
  def test_head_is_bodiless_on_every_answer_and_cache_control_nil_sends_none
    write_tree(@root, 'app.scss' => 'a { b: c; }', '_partial.scss' => '', 'bad.scss' => 'a {')
    app = ::Rack::Lint.new(Sass::Rack.new(teapot, root: @root, prefix: '/css', cache_control: nil))
    %w[/css/app.css /css/_partial.css /css/bad.css /css/x%00.css].each do |path|
      status, headers, body = app.call(::Rack::MockRequest.env_for(path, method: 'HEAD'))
      chunks = []
      body.each { |chunk| chunks << chunk }
      body.close if body.respond_to?(:close)
      assert_empty chunks, "HEAD #{path} (#{status})"
      assert_nil headers['cache-control'], path unless path.end_with?('bad.css')
    end
  end

  def test_source_maps_beside_the_stylesheet
    vendor = File.join(@dir, 'vendor')
    write_tree(vendor, '_lib.scss' => '$x: 1px;')
    write_tree(@root, 'sub/app.scss' => "@use 'lib';\n@use '../shared';\na { width: lib.$x; }",
                      '_shared.scss' => 'b { c: d }')
    serve(source_map: true, load_paths: [vendor]) do |base|
      css = http(base, '/css/sub/app.css').body
      assert css.end_with?("\n\n/*# sourceMappingURL=app.css.map */\n"), css
      response = http(base, '/css/sub/app.css.map')
      assert_equal ['200', 'application/json'], [response.code, response['content-type']]
      map = JSON.parse(response.body)
      assert_equal 'app.css', map['file']
      # Relative to the map, so the browser resolves them under the prefix;
      # the contents are embedded, so developer tools show every source.
      assert_equal %w[../_shared.scss app.scss ../../vendor/_lib.scss].sort, map['sources'].sort
      sources = map['sources'].zip(map['sourcesContent']).to_h
      # The file's bytes, as the compiler reads a file (on Windows, with the
      # CRLFs File.write wrote and File.read would take out).
      assert_equal File.binread(File.join(@root, 'sub', 'app.scss')), sources['app.scss']
      assert_equal '$x: 1px;', sources['../../vendor/_lib.scss']
      assert_equal URI("#{base}/css/_shared.scss"), URI.join("#{base}/css/sub/app.css.map", '../_shared.scss')
      assert_equal '304', http(base, '/css/sub/app.css.map', headers: { 'If-None-Match' => response['etag'] }).code
    end
    serve(load_paths: [vendor]) do |base|
      assert_equal '418', http(base, '/css/sub/app.css.map').code, 'no maps unless asked for'
      refute_match 'sourceMappingURL', http(base, '/css/sub/app.css').body
    end
  end

  def test_source_map_sources_are_escaped_and_never_read_as_a_scheme
    skip_on_windows('a colon cannot be in a Windows file name')
    write_tree(@root, 'x:y.scss' => "@use 'a b' as ab;\nc { d: e }", '_a b.scss' => 'f { g: h }')
    serve(source_map: true) do |base|
      assert_match 'sourceMappingURL=x:y.css.map', http(base, '/css/x:y.css').body
      sources = JSON.parse(http(base, '/css/x:y.css.map').body)['sources']
      assert_equal ['./x:y.scss', '_a%20b.scss'], sources.sort
    end
  end

  def test_production_compiles_once_and_never_checks
    write_tree(@root, 'app.scss' => 'a { b: compiled(); c: one }', 'bad.scss' => 'a {')
    serve(recompile: false, functions: counting_function) do |base|
      assert_match 'c: one', http(base, '/css/app.css').body
      write_file(File.join(@root, 'app.scss'), 'a { b: compiled(); c: two }')
      3.times { assert_match 'c: one', http(base, '/css/app.css').body }
      assert_equal 1, compiles
      # A failure answers 500 without its message, which goes to the log.
      broken = http(base, '/css/bad.css')
      assert_equal '500', broken.code
      refute_match 'expected', broken.body
      assert_match 'bad.scss 1:4', @errors.string
    end
  end

  def test_recompile_default_follows_the_environment
    { nil => true, 'development' => true, 'production' => false }.each do |environment, expected|
      with_compiler_env(ENV.fetch('SASS_EMBEDDED_COMPILER', nil), 'APP_ENV' => environment, 'RACK_ENV' => nil) do
        assert_equal expected, Sass::Rack.recompile_default, environment.inspect
      end
    end
    with_compiler_env(ENV.fetch('SASS_EMBEDDED_COMPILER', nil), 'APP_ENV' => nil, 'RACK_ENV' => 'production') do
      refute Sass::Rack.recompile_default
    end
  end

  def test_only_the_middleware_and_its_rake_task_are_public
    assert_empty Sass::Rack.constants(false) - %i[Task]
    assert_raises(NameError) { Sass::Rack::Snapshot }
    out = IO.popen([RbConfig.ruby, '-I', File.expand_path('../../lib', __dir__), '-rsass-embedded', '-e',
                    'print defined?(Sass::Rack).inspect'], &:read)
    assert_equal 'nil', out, "require 'sass-embedded' alone leaves Sass::Rack out"
  end

  # Every mistake surfaces when the middleware is made, naming the option: a
  # misspelled one, a wrong value (checked by compiling an empty stylesheet
  # with the options), a root that is not a directory, a prefix that could
  # never match.
  def test_options_are_checked_when_the_middleware_is_made
    FileUtils.mkdir_p(@root)
    error = assert_raises(ArgumentError) { Sass::Rack.new(teapot, root: @root, sytle: :compressed) }
    assert_equal 'unknown keyword: :sytle', error.message
    assert_raises(ArgumentError) { Sass::Rack.new(teapot) }
    {
      { style: :compresed } => [ArgumentError, /style must be one of/],
      { load_paths: 'vendor' } => [TypeError, /load_paths must be an Array/],
      { functions: 'x' } => [TypeError, /functions must be a Hash/],
      { importers: [Object.new] } => [ArgumentError, /importer must be/],
      { root: File.join(@dir, 'missing') } => [ArgumentError, /root must be a directory/],
      { root: __FILE__ } => [ArgumentError, /root must be a directory/],
      { prefix: nil } => [TypeError, /prefix must be a String/],
      { prefix: 'css' } => [ArgumentError, /prefix must be a path that starts with/],
      { prefix: '/my css' } => [ArgumentError, /needs no percent-encoding/],
      { prefix: '/café' } => [ArgumentError, /needs no percent-encoding/],
      { cache_control: 3600 } => [TypeError, /cache_control must be a String or nil/],
      { recompile: 'yes' } => [TypeError, /recompile must be true or false/],
      { source_map: nil } => [TypeError, /source_map must be true or false/]
    }.each do |options, (error_class, message)|
      error = assert_raises(error_class, options.inspect) { Sass::Rack.new(teapot, root: @root, **options) }
      assert_match message, error.message, options.inspect
    end
  end

  # source_map_include_sources: false makes maps without the sources' text.
  def test_maps_can_leave_the_sources_text_out
    write_tree(@root, 'app.scss' => '@use "part"; a { b: part.$c; }', '_part.scss' => '$c: red; x { y: z; }')
    with = Sass::Rack.new(teapot, root: @root, prefix: '/css', source_map: true)
    without = Sass::Rack.new(teapot, root: @root, prefix: '/css', source_map: true, source_map_include_sources: false)
    map = ->(app) { JSON.parse(app.call(rack_env('/css/app.css.map'))[2].join) }
    assert_equal 2, map.call(with)['sourcesContent'].compact.size
    assert_nil map.call(without)['sourcesContent']
    assert_equal map.call(with)['sources'], map.call(without)['sources']
  end
end
