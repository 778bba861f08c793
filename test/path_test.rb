# frozen_string_literal: true

require_relative 'test_helper'
require 'open3'
require 'rbconfig'

# Every path a user reads (error stacks and messages, the error page CSS, a
# logger's stack, warnings, debug and deprecation output on $stderr) is
# printed absolute, as the established gem prints it: the compiler runs in a
# directory of the gem's own, so Dart Sass never shortens a user's path to
# one relative to its working directory. The `sass` command still prints
# paths as Dart Sass does, relative to the user's directory.
class PathTest < Minitest::Test
  ROOT = File.expand_path('..', __dir__)

  def setup
    @dir = File.realpath(Dir.mktmpdir('sass-embedded-paths'))
  end

  def teardown
    FileUtils.rm_rf(@dir)
    super
  end

  def write(name, contents)
    path = File.join(@dir, name)
    FileUtils.mkdir_p(File.dirname(path))
    File.write(path, contents)
    path
  end

  # +path+ as Dart Sass prints it: on Windows with backslashes, as the
  # established gem's messages show it there.
  def shown(path) = WINDOWS ? path.tr('/', '\\') : path

  # +text+ names +path+ absolute (in CSS text, on Windows, with its
  # backslashes escaped), and never without its leading slash.
  def assert_absolute(path, text, what = 'text')
    forms = [shown(path), shown(path).gsub('\\') { '\\\\' }]
    assert forms.any? { |form| text.include?(form) }, "#{what} does not name #{shown(path)}:\n#{text}"
    return if WINDOWS # no leading slash to lose: a drive letter starts the path

    relative = Regexp.escape(path.delete_prefix('/'))
    refute_match(%r{(?<![/\w.])#{relative}}, text, "#{what} names #{path} without its leading slash")
  end

  def compile_error(&)
    assert_raises(Sass::CompileError, &)
  end

  def assert_error_names(path, error)
    assert_absolute(path, error.sass_stack, 'sass_stack')
    assert_absolute(path, error.full_message(highlight: false), 'full_message')
    assert_absolute(path, error.full_message(highlight: true), 'highlighted full_message')
    assert_absolute(path, error.detailed_message, 'detailed_message') if error.respond_to?(:detailed_message)
    assert_absolute(path, error.to_css, 'to_css')
  end

  def test_an_error_in_a_file
    path = write('app/err.scss', "a {\n  b: c(;\n}\n")
    error = compile_error { Sass.compile(path) }
    assert_equal "#{shown(path)} 2:8  root stylesheet\n", error.sass_stack
    assert_error_names(path, error)
  end

  def test_an_error_in_a_file_given_relative_to_the_working_directory
    path = write('err.scss', "a { b: c(; }\n")
    error = Dir.chdir(@dir) { compile_error { Sass.compile('err.scss') } }
    assert_error_names(path, error)
  end

  def test_an_error_in_a_string_with_a_file_url
    path = File.join(@dir, 'input.scss')
    error = compile_error { Sass.compile_string("a {\n  b: c(;\n}\n", url: "#{FILE_URL_PREFIX}#{path}") }
    assert_equal "#{shown(path)} 2:8  root stylesheet\n", error.sass_stack
    assert_error_names(path, error)
  end

  def test_an_error_in_a_file_found_through_load_paths
    library = write('lib/_broken.scss', "@mixin m { b: c(; }\n")
    error = compile_error do
      Sass.compile_string("@use 'broken';\na { @include broken.m; }", load_paths: [File.join(@dir, 'lib')])
    end
    assert_error_names(library, error)
  end

  def test_an_error_in_a_file_from_a_file_importer
    library = write('lib/_broken.scss', "a { b: c(; }\n")
    importer = Object.new
    importer.define_singleton_method(:find_file_url) do |url, _context|
      "#{FILE_URL_PREFIX}#{library}" if url == 'broken'
    end
    error = compile_error { Sass.compile_string("@use 'broken';", importers: [importer]) }
    assert_error_names(library, error)
  end

  def test_an_error_in_a_stylesheet_an_importer_loads_from_a_file_url
    library = File.join(@dir, 'virtual', '_lib.scss')
    importer = {
      canonicalize: lambda { |url, _context|
                      "#{FILE_URL_PREFIX}#{library}" if ['lib', "#{FILE_URL_PREFIX}#{library}"].include?(url)
                    },
      load: ->(_url) { { contents: "a {\n  b: c(;\n}\n", syntax: :scss } }
    }
    error = compile_error { Sass.compile_string("@use 'lib';", importers: [importer]) }
    assert_error_names(library, error)
  end

  def test_a_logger_gets_an_absolute_stack
    path = write('app/warn.scss', "@mixin m { @warn 'careful'; }\na { @include m; }\n@debug 'dbg';\n")
    logger = RecordingLogger.new
    Sass.compile(path, logger:)
    assert_absolute(path, logger.warnings.first[:stack], 'the logger\'s stack')
    assert_equal "#{FILE_URL_PREFIX}#{path}", logger.debugs.first[:span].url.to_s
  end

  def test_warnings_debug_and_deprecations_on_stderr_are_absolute
    path = write('app/warn.scss', "@warn 'careful';\n@debug 'dbg';\na { b: (4 / 2); c: 1 + 1 }\n")
    _, err = capture_subprocess_io_of("Sass.compile(#{path.dump})")
    assert_match(/WARNING: careful/, err)
    assert_match(/DEBUG: dbg/, err)
    assert_match(/DEPRECATION WARNING \[slash-div\]/, err)
    assert_absolute(path, err, '$stderr')
    assert_equal 3, err.scan(shown(path)).size, "each of warn, debug and the deprecation names #{path}:\n#{err}"
  end

  # Runs +code+ in a Ruby of its own (so that what reaches $stderr is the
  # host's, through Kernel#warn, not a test's capture).
  def capture_subprocess_io_of(code, chdir: @dir)
    output, error, status = Open3.capture3(RbConfig.ruby, '-I', File.join(ROOT, 'lib'), '-rsass-embedded', '-e', code,
                                           chdir:)
    assert status.success?, "ruby -e #{code} failed:\n#{error}"
    [output, error]
  end

  def test_the_host_works_in_a_deleted_working_directory
    skip_on_windows('a process cannot remove the directory it works in')
    path = write('app/err.scss', "a { b: c(; }\n")
    ok = write('app/ok.scss', "a { b: 1 + 1 }\n")
    gone = File.join(@dir, 'gone')
    FileUtils.mkdir_p(gone)
    code = <<~RUBY
      Dir.chdir(#{gone.dump})
      Dir.rmdir(#{gone.dump})
      compiler = Sass::Compiler.new
      puts compiler.compile(#{ok.dump}).css
      puts Sass.compile_string('a { b: 2 * 3 }').css
      begin
        Sass.compile(#{path.dump})
      rescue Sass::CompileError => e
        puts e.sass_stack
      end
      compiler.close
    RUBY
    output, = capture_subprocess_io_of(code)
    assert_includes output, "a {\n  b: 2;\n}"
    assert_includes output, "a {\n  b: 6;\n}"
    assert_absolute(path, output, 'the stack')
  end

  def test_the_sass_command_prints_paths_relative_to_the_users_directory
    write('app/err.scss', "a { b: c(; }\n")
    _, err, status = Open3.capture3(RbConfig.ruby, File.join(ROOT, 'exe', 'sass'), 'app/err.scss', chdir: @dir)
    refute status.success?
    assert_match(%r{^  app[/\\]err\.scss 1:10  root stylesheet\r?$}, err)
  end
end
