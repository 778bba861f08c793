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

  # A misspelled option fails when the Rakefile defines the task (`rake -T`),
  # not when the task runs at deploy.
  def test_the_rake_task_refuses_a_misspelled_option_when_defined
    File.write(File.join(@dir, 'Rakefile'), <<~RUBY)
      require 'sass/rack/task'
      Sass::Rack::Task.new(root: 'styles', output: 'public/css', stlye: :compressed)
    RUBY
    lib = File.expand_path('../../lib', __dir__)
    out, status = Open3.capture2e({ 'RUBYLIB' => lib }, RbConfig.ruby, '-S', 'rake', '-T', chdir: @dir)
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
    out, status = Open3.capture2e({ 'RUBYLIB' => lib }, RbConfig.ruby, '-S', 'rake', '-T', chdir: @dir)
    assert status.success?, out
    assert_match 'rake sass:precompile  # Compile the stylesheets in styles into public/css', out
    out, status = Open3.capture2e({ 'RUBYLIB' => lib }, RbConfig.ruby, '-S', 'rake', 'sass:precompile', 'css',
                                  chdir: @dir)
    assert status.success?, out
    assert_match "wrote #{File.join(@output, 'app.css')}", out
    assert_equal 'a{b:red}', File.read(File.join(@output, 'app.css'))
    assert_equal "a {\n  b: red;\n}", File.read(File.join(@dir, 'other', 'app.css'))
  end
end
