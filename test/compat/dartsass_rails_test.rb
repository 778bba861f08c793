# frozen_string_literal: true

require_relative '../test_helper'
require 'open3'
require 'rbconfig'

# dartsass-rails builds an app's stylesheets by running, in a new Ruby
# process, a script that does `load Gem.bin_path('sass-embedded', 'sass')`
# with the Dart Sass command line in ARGV (--style, --no-source-map,
# --load-path, input:output pairs). The gem is not installed here, so
# Gem.bin_path is answered with this checkout's exe/sass, which is what
# RubyGems resolves for an installed gem; the script is then run the way
# rails runs it.
class DartsassRailsCompatTest < Minitest::Test
  EXE = File.expand_path('../../exe/sass', __dir__)
  LIB = File.expand_path('../../lib', __dir__)

  # The runner script, as a Rails app has it, with +preamble+ before the load.
  def runner(dir, preamble = '')
    path = File.join(dir, 'dartsass')
    File.write(path, <<~RUBY)
      #!/usr/bin/env ruby
      # frozen_string_literal: true

      #{preamble}
      Gem.singleton_class.send(:define_method, :bin_path) do |name, exe, *|
        raise Gem::GemNotFoundException, name unless [name, exe] == %w[sass-embedded sass]

        #{EXE.inspect}
      end
      load Gem.bin_path('sass-embedded', 'sass')
      raise 'load returned: the command line did not replace the process'
    RUBY
    path
  end

  def app
    in_tmpdir do |dir|
      FileUtils.mkdir_p(File.join(dir, 'app/assets/stylesheets'))
      FileUtils.mkdir_p(File.join(dir, 'app/assets/builds'))
      FileUtils.mkdir_p(File.join(dir, 'vendor/stylesheets'))
      File.write(File.join(dir, 'vendor/stylesheets/_grid.scss'), '.grid { display: grid; }')
      File.write(File.join(dir, 'app/assets/stylesheets/application.scss'),
                 "@use 'grid';\n$c: #ff0000;\nbody { color: $c; }\n")
      yield dir
    end
  end

  def build_arguments
    %w[--style=compressed --no-source-map --load-path app/assets/stylesheets --load-path vendor/stylesheets
       app/assets/stylesheets/application.scss:app/assets/builds/application.css]
  end

  def test_a_build_through_load_gem_bin_path
    app do |dir|
      _out, err, status = Open3.capture3(RbConfig.ruby, runner(dir), *build_arguments, chdir: dir)
      assert status.success?, err
      css = File.read(File.join(dir, 'app/assets/builds/application.css'))
      assert_equal ".grid{display:grid}body{color:red}\n", css
    end
  end

  def test_a_build_in_a_process_that_already_loaded_the_gem
    app do |dir|
      preamble = "$LOAD_PATH.unshift(#{LIB.inspect})\nrequire 'sass-embedded'\nSass.compile_string('a { b: c }')"
      _out, err, status = Open3.capture3(RbConfig.ruby, runner(dir, preamble), *build_arguments, chdir: dir)
      assert status.success?, err
      assert File.file?(File.join(dir, 'app/assets/builds/application.css'))
    end
  end

  def test_a_failing_build_keeps_the_compilers_exit_status_and_message
    app do |dir|
      File.write(File.join(dir, 'app/assets/stylesheets/application.scss'), 'body { color: }')
      _out, err, status = Open3.capture3(RbConfig.ruby, runner(dir), *build_arguments, chdir: dir)
      assert_equal 65, status.exitstatus
      assert_match(/Error: Expected expression\./, err)
    end
  end

  def test_version_through_load_gem_bin_path
    in_tmpdir do |dir|
      out, err, status = Open3.capture3(RbConfig.ruby, runner(dir), '--version', chdir: dir)
      assert status.success?, err
      assert_equal "#{Sass::Embedded::VERSION}\n", out
    end
  end
end
