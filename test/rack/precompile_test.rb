# frozen_string_literal: true

require 'rack_helper'
require 'rbconfig'
require 'open3'

# Sass::Rack.precompile and its rake task: every stylesheet the middleware
# would serve, compiled into a directory at deploy time.
class RackPrecompileTest < Minitest::Test
  include RackStylesheets

  def setup
    @dir = Dir.mktmpdir('sass-rack')
    @root = File.join(@dir, 'styles')
    @output = File.join(@dir, 'public', 'css')
    write_tree(@root, 'app.scss' => '@use "part"; a { b: part.$c; }', '_part.scss' => '$c: red;',
                      'sub/deep.sass' => "p\n  margin: 0\n", 'plain.css' => 'q { x: y }',
                      'both.scss' => 'i { j: scss }', 'both.sass' => "i\n  j: sass\n", '.hidden.scss' => 'h { i: j }')
    File.symlink(File.join(@dir, 'outside.scss'), File.join(@root, 'outside.scss'))
    File.write(File.join(@dir, 'outside.scss'), 'o { p: q }')
  end

  def teardown
    FileUtils.rm_rf(@dir) if @dir
    super
  end

  def written = Dir.glob('**/*', base: @output).select { |path| File.file?(File.join(@output, path)) }.sort

  # A custom importer's "~" URL (webpack's "~bootstrap/..." spelling) is a
  # URL like any other: what it loads is served and precompiled, its "~"
  # never taken for a home directory (which raised in every request).
  def test_an_importers_tilde_url_is_served_and_precompiled
    vendor = File.join(@dir, 'node_modules')
    write_tree(vendor, 'bootstrap/scss/_variables.scss' => '$primary: blue;')
    importer = { find_file_url: lambda { |url, _|
      "#{FILE_URL_PREFIX}#{vendor}/#{url.delete_prefix('~')}" if url.start_with?('~')
    } }
    tree = File.join(@dir, 'tilde')
    write_tree(tree, 'app.scss' => '@use "~bootstrap/scss/variables"; a { b: variables.$primary; }')
    app = Sass::Rack.new(->(_) { [418, {}, []] }, root: tree, importers: [importer])
    status, _, body = app.call(rack_env('/app.css'))
    assert_equal [200, "a {\n  b: blue;\n}"], [status, body.join]
    Sass::Rack.precompile(root: tree, output: @output, importers: [importer])
    assert_equal "a {\n  b: blue;\n}", File.read(File.join(@output, 'app.css'))
  end

  def test_writes_every_entry_stylesheet_and_only_those
    files = Sass::Rack.precompile(root: @root, output: @output, style: :compressed, source_map: true)
    expected = %w[app.css app.css.map both.css both.css.map plain.css plain.css.map sub/deep.css sub/deep.css.map]
    assert_equal expected, written
    assert_equal expected.map { |path| File.join(@output, path) }, files.sort
    assert_equal "a{b:red}\n\n/*# sourceMappingURL=app.css.map */\n", File.read(File.join(@output, 'app.css'))
    assert_match 'i{j:scss}', File.read(File.join(@output, 'both.css')), 'what a request would get'
    assert_includes JSON.parse(File.read(File.join(@output, 'app.css.map')))['sources'], 'app.scss'

    # The same as the middleware serves.
    app = Sass::Rack.new(teapot, root: @root, prefix: '/css', style: :compressed, source_map: true)
    expected.each do |path|
      assert_equal File.read(File.join(@output, path)), app.call(rack_env("/css/#{path}"))[2].join, path
    end
  end

  def test_an_output_inside_the_root_is_not_read_back
    inside = File.join(@root, 'build')
    Sass::Rack.precompile(root: @root, output: inside)
    Sass::Rack.precompile(root: @root, output: inside)
    assert_equal %w[app.css both.css plain.css sub/deep.css], Dir.glob('**/*.css', base: inside).sort
  end

  def test_a_failing_stylesheet_fails_the_precompile
    File.write(File.join(@root, 'broken.scss'), 'a {')
    error = assert_raises(Sass::CompileError) { Sass::Rack.precompile(root: @root, output: @output) }
    assert_match 'broken.scss 1:4', error.detailed_message(highlight: false)
    assert_raises(ArgumentError) { Sass::Rack.precompile(root: @root, output: @output, stlye: :compressed) }
  end

  # An output that is the root itself would write the CSS over nothing it
  # reads back: refused, whichever way it is spelled.
  def test_the_root_as_output_is_refused
    [@root, "#{@root}/", File.join(@root, 'sub', '..')].each do |output|
      error = assert_raises(ArgumentError) { Sass::Rack.precompile(root: @root, output:) }
      assert_match 'output must not be the root', error.message
    end
    assert_equal ['plain.css'], Dir.glob('**/*.css', base: @root)
  end

  # A stylesheet that fails part-way leaves the output as it was: nothing is
  # written until everything compiled.
  def test_a_failure_part_way_writes_nothing
    Sass::Rack.precompile(root: @root, output: @output)
    before = written.to_h { |path| [path, File.read(File.join(@output, path))] }
    File.write(File.join(@root, 'app.scss'), 'a { b: blue; }')
    File.write(File.join(@root, 'zz_broken.scss'), 'a {')
    assert_raises(Sass::CompileError) { Sass::Rack.precompile(root: @root, output: @output) }
    assert_equal(before, written.to_h { |path| [path, File.read(File.join(@output, path))] })
  end

  # A replaced file keeps its mode; a new one gets what File.write gives; a
  # write that fails leaves no temporary file behind.
  def test_files_keep_their_mode_and_a_failed_write_leaves_no_temporary_file
    FileUtils.mkdir_p(@output)
    File.write(File.join(@output, 'app.css'), 'old')
    File.chmod(0o640, File.join(@output, 'app.css'))
    Sass::Rack.precompile(root: @root, output: @output)
    unless WINDOWS # no Unix modes there: a file is read-only or not
      assert_equal 0o640, File.stat(File.join(@output, 'app.css')).mode & 0o7777
      assert_equal 0o666 & ~File.umask, File.stat(File.join(@output, 'plain.css')).mode & 0o7777
    end

    # sub/deep.css cannot be renamed into place: a directory stands there.
    FileUtils.rm_rf(File.join(@output, 'sub'))
    FileUtils.mkdir_p(File.join(@output, 'sub', 'deep.css', 'x'))
    assert_raises(SystemCallError) { Sass::Rack.precompile(root: @root, output: @output) }
    assert_empty Dir.glob('**/*.tmp', base: @output)
  end

  # What the middleware serves under a symlinked directory inside the root
  # is precompiled under the same name; a symlink loop is not followed.
  def test_stylesheets_under_a_symlinked_directory_are_precompiled_and_loops_are_not_followed
    skip_without_symlinks
    File.symlink('sub', File.join(@root, 'linked'))
    File.symlink('.', File.join(@root, 'loop'))
    File.symlink(@dir, File.join(@root, 'out'))
    Sass::Rack.precompile(root: @root, output: @output)
    assert_equal %w[app.css both.css linked/deep.css plain.css sub/deep.css], written
    app = Sass::Rack.new(teapot, root: @root, prefix: '/css')
    assert_equal File.read(File.join(@output, 'linked/deep.css')), app.call(rack_env('/css/linked/deep.css'))[2].join
  end

  # A misspelled option fails when the Rakefile defines the task (`rake -T`),
  # not when the task runs at deploy.
  def test_the_rake_task_refuses_a_misspelled_option_when_defined
    File.write(File.join(@dir, 'Rakefile'), <<~RUBY)
      require 'sass/rack/task'
      Sass::Rack::Task.new(root: 'styles', output: 'public/css', stlye: :compressed)
    RUBY
    lib = File.expand_path('../../lib', __dir__)
    out, status = Open3.capture2e({ 'RUBYLIB' => lib }, RbConfig.ruby, Gem.bin_path('rake', 'rake'), '-T', chdir: @dir)
    refute status.success?, out
    assert_match 'unknown keyword: :stlye', out
  end

  def test_the_rake_task
    File.write(File.join(@dir, 'Rakefile'), <<~RUBY)
      require 'sass/rack/task'
      Sass::Rack::Task.new(root: 'styles', output: 'public/css', style: :compressed)
      Sass::Rack::Task.new(:css, root: 'styles', output: 'other')
    RUBY
    lib = File.expand_path('../../lib', __dir__)
    out, status = Open3.capture2e({ 'RUBYLIB' => lib }, RbConfig.ruby, Gem.bin_path('rake', 'rake'), '-T', chdir: @dir)
    assert status.success?, out
    assert_match 'rake sass:precompile  # Compile the stylesheets in styles into public/css', out
    rake = Gem.bin_path('rake', 'rake')
    out, status = Open3.capture2e({ 'RUBYLIB' => lib }, RbConfig.ruby, rake, 'sass:precompile', 'css',
                                  chdir: @dir)
    assert status.success?, out
    assert_match "wrote #{File.join(@output, 'app.css')}", out
    assert_equal 'a{b:red}', File.read(File.join(@output, 'app.css'))
    assert_equal "a {\n  b: red;\n}", File.read(File.join(@dir, 'other', 'app.css'))
  end
end
