# frozen_string_literal: true

require_relative 'test_helper'
require 'open3'
require 'rbconfig'

# Installing the source gem where the host cannot run (JRuby, TruffleRuby,
# Windows but on x64 with MinGW's toolchain) stops at once with one sentence naming the platform and what
# works instead. Each case is a real `gem install --local` of the source gem,
# with the platform faked inside extconf.rb only (RUBYOPT loads a file that
# changes RUBY_ENGINE or RbConfig when the running script is extconf.rb).
class PlatformRefusalTest < Minitest::Test
  ROOT = File.expand_path('..', __dir__)

  FAKES = {
    'jruby' => "Object.send(:remove_const, :RUBY_ENGINE)\nRUBY_ENGINE = 'jruby'",
    'truffleruby' => "Object.send(:remove_const, :RUBY_ENGINE)\nRUBY_ENGINE = 'truffleruby'",
    'windows_arm64' => "RbConfig::CONFIG['host_os'] = 'mingw32'\nRbConfig::CONFIG['host_cpu'] = 'aarch64'",
    'windows_x86' => "RbConfig::CONFIG['host_os'] = 'mingw32'\nRbConfig::CONFIG['host_cpu'] = 'i686'",
    'mswin' => "RbConfig::CONFIG['host_os'] = 'mswin64_140'",
    'cygwin' => "RbConfig::CONFIG['host_os'] = 'cygwin'"
  }.freeze

  SENTENCES = {
    'jruby' => /\Asass-embedded does not support JRuby: .*; use CRuby 3\.1 or newer\.\z/,
    'truffleruby' => /\Asass-embedded does not support TruffleRuby: .*; use CRuby 3\.1 or newer\.\z/,
    'windows_arm64' => /\Asass-embedded does not support Windows on aarch64: .*; use RubyInstaller's x64 Ruby .*\.\z/,
    'windows_x86' => /\Asass-embedded does not support Windows on i686: .*; use RubyInstaller's x64 Ruby .*\.\z/,
    'mswin' => /\Asass-embedded does not support a Ruby built with Visual C\+\+ \(mswin64_140\): .*\.\z/,
    'cygwin' => /\Asass-embedded does not support Cygwin \(cygwin\): .*; use RubyInstaller's x64 Ruby, or WSL 2\.\z/
  }.freeze

  def self.source_gem
    @source_gem ||= begin
      dir = Dir.mktmpdir('sass-embedded-refusal-gem')
      Minitest.after_run { FileUtils.rm_rf(dir) }
      path = File.join(dir, 'sass-embedded.gem')
      output, status = Open3.capture2e('gem', 'build', File.join(ROOT, 'sass-embedded.gemspec'), '--output', path,
                                       chdir: ROOT)
      raise "gem build failed:\n#{output}" unless status.success?

      path
    end
  end

  # `gem install` with +platform+ faked in extconf.rb; a cargo on PATH that
  # records any call (none may happen).
  def install_faking(platform, dir)
    skip_on_windows('a POSIX shell script stands in for cargo')
    fake = File.join(dir, 'fake_platform.rb')
    File.write(fake, "if File.basename($PROGRAM_NAME) == 'extconf.rb'\n#{FAKES.fetch(platform)}\nend\n")
    bin = File.join(dir, 'bin')
    FileUtils.mkdir_p(bin)
    File.write(File.join(bin, 'cargo'), "#!/bin/sh\necho cargo >> #{File.join(dir, 'cargo-called')}\nexit 1\n")
    File.chmod(0o755, File.join(bin, 'cargo'))
    home = File.join(dir, 'home')
    env = { 'GEM_HOME' => home, 'GEM_PATH' => home, 'RUBYOPT' => "-r#{fake}", 'RUBYLIB' => nil,
            'PATH' => "#{bin}:#{ENV.fetch('PATH')}", 'SASS_EMBEDDED_COMPILER_ARCHIVE' => nil }
    output, status = Open3.capture2e(env, 'gem', 'install', '--local', '--no-document', self.class.source_gem,
                                     chdir: dir)
    [output, status, Dir.glob(File.join(home, '**', 'gem_make.out')).first]
  end

  FAKES.each_key do |platform|
    define_method("test_installing_on_#{platform}_stops_with_one_sentence") do
      in_tmpdir do |dir|
        output, status, log = install_faking(platform, dir)
        refute status.success?, "gem install succeeded on faked #{platform}:\n#{output}"
        assert log, "no gem_make.out:\n#{output}"
        # What extconf.rb printed: gem_make.out holds the directory and the
        # command, then that, then RubyGems' "extconf failed".
        lines = File.read(log).lines.map(&:strip).reject(&:empty?)
        printed = lines.drop_while { |line| !line.end_with?('extconf.rb') }.drop(1)
                       .take_while { |line| !line.start_with?('extconf failed') }
        assert_equal 1, printed.size, "extconf.rb printed more than one line:\n#{printed.join("\n")}"
        assert_match SENTENCES.fetch(platform), printed.first
        assert_includes output, printed.first
        refute_path_exists File.join(dir, 'cargo-called'), 'cargo was run'
        refute_match(/mkmf|bindgen|Makefile/, output)
      end
    end
  end
end
