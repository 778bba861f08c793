# frozen_string_literal: true

require_relative 'test_helper'
require 'open3'
require 'rbconfig'

# exe/sass: the Dart Sass command line through the installed compiler.
class CliTest < Minitest::Test
  SASS = File.expand_path('../exe/sass', __dir__)

  def sass(*args, stdin: '', **options)
    Open3.capture3(RbConfig.ruby, SASS, *args, stdin_data: stdin, **options)
  end

  def test_version_is_the_pinned_compiler
    out, _err, status = sass('--version')
    assert status.success?
    assert_equal "#{Sass::Embedded::VERSION}\n", out
  end

  def test_compiles_a_file_to_a_file
    in_tmpdir do |dir|
      File.write(File.join(dir, 'in.scss'), '$c: red; a { color: $c; }')
      out, err, status = sass('--no-source-map', 'in.scss', 'out.css', chdir: dir)
      assert status.success?, err
      assert_empty out
      assert_equal "a {\n  color: red;\n}\n", File.read(File.join(dir, 'out.css'))
    end
  end

  def test_reads_stdin
    out, err, status = sass('--stdin', '--style=compressed', stdin: 'a { b: 1 + 2 }')
    assert status.success?, err
    assert_equal "a{b:3}\n", out
  end

  def test_errors_keep_the_compilers_exit_status_and_message
    _out, err, status = sass('--stdin', stdin: 'a {')
    assert_equal 65, status.exitstatus
    assert_match(/Error: expected/, err)
    out, err, status = sass('--no-such-flag')
    assert_equal 64, status.exitstatus
    assert_match(/Could not find an option named "--no-such-flag"/, out + err)
  end

  def test_load_with_bin_path_style_runs_the_command_line
    in_tmpdir do |dir|
      File.write(File.join(dir, 'in.scss'), 'a { b: c }')
      script = "ARGV.replace(['--no-source-map', 'in.scss']); load #{SASS.inspect}"
      out, err, status = Open3.capture3(RbConfig.ruby, '-e', script, chdir: dir)
      assert status.success?, err
      assert_equal "a {\n  b: c;\n}\n", out
    end
  end

  def test_watch_recompiles_on_change
    skip_on_windows('ends the watcher by a signal to its process group')
    in_tmpdir do |dir|
      input = File.join(dir, 'in.scss')
      output = File.join(dir, 'out.css')
      File.write(input, 'a { b: first }')
      Open3.popen3(RbConfig.ruby, SASS, '--watch', '--no-source-map', "#{input}:#{output}",
                   pgroup: true) do |stdin, _out, _err, wait|
        stdin.close
        wait_until(timeout: 30, message: 'no first compile') do
          File.exist?(output) && File.read(output).include?('first')
        end
        sleep 0.2
        File.write(input, 'a { b: second }')
        wait_until(timeout: 30, message: 'no recompile') { File.read(output).include?('second') }
      ensure
        Process.kill(:TERM, -Process.getpgid(wait.pid))
        wait.value
      end
    end
  end

  def test_compiler_override_applies_to_the_command_line
    in_tmpdir do |dir|
      path = fake_compiler(dir, 'echo "override: $*"')
      out, _err, status = Open3.capture3({ 'SASS_EMBEDDED_COMPILER' => path }, RbConfig.ruby, SASS, '--version')
      assert status.success?
      assert_equal "override: --version\n", out
    end
  end
end
