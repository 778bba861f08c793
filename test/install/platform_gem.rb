# frozen_string_literal: true

# Run by `rake test:native_gem` with the path of a freshly built platform gem:
# installs it into an empty GEM_HOME the way a user without any build tools
# would, then runs check_installed_gem.rb against it from another directory.
# With `--source DIR PLATFORM` (rake release:install), installs
# `sass-embedded` from the gem source DIR (a `gem generate_index` directory,
# as file://) the way users install, by name, and checks that RubyGems picked
# the PLATFORM gem.
#
# - PATH holds only `ruby` and `gem`, plus tripwires named cargo, rustc, clang,
#   npm, make, tar and the like that record any call: the install and the
#   check must call none of them. (On Windows, PATH holds the tripwires alone,
#   as .cmd files, and RubyGems runs through ruby.exe's full path.)
# - Without a network: inside a new network namespace (`unshare -n`) when the
#   machine allows one, and always with `gem install --local` and proxies that
#   lead nowhere.
# - Nothing may run extconf: no extension directory, no gem_make.out, no
#   extensions in the installed specification.
#
# Prints the install time. Exits non-zero with a message on the first failure.

require 'fileutils'
require 'rbconfig'
require 'tmpdir'

def check(condition, message)
  return if condition

  warn "platform gem install test failed: #{message}"
  exit 1
end

def which(name)
  ENV.fetch('PATH', '').split(File::PATH_SEPARATOR).map { |dir| File.join(dir, name) }
     .find { |path| File.file?(path) && File.executable?(path) }
end

# The way to run a command without a network here, if any.
def offline_prefix
  unshare = which('unshare') or return []
  [[unshare, '-n'], [unshare, '-rn']].find { |prefix| system(*prefix, 'true', err: File::NULL) } || []
end

USAGE = "usage: #{$PROGRAM_NAME} sass-embedded-VERSION-PLATFORM.gem | --source DIR PLATFORM".freeze
if ARGV.first == '--source'
  _, source, platform = ARGV
  abort USAGE unless source && platform
  source = File.expand_path(source)
  check(File.file?(File.join(source, 'specs.4.8.gz')), "#{source} is not a gem source (no specs.4.8.gz)")
  require_relative '../../lib/sass/embedded/version'
  # A Windows path (Z:/...) takes a third slash: file:///Z:/... (RubyGems
  # drops the slash before the drive when it opens the file).
  url = "file://#{'/' unless source.start_with?('/')}#{source}/"
  what = "sass-embedded from #{url}"
  install = ['install', '--no-document', '--clear-sources', '--source', url, 'sass-embedded']
else
  gem_file = File.expand_path(ARGV.fetch(0) { abort USAGE })
  check(File.file?(gem_file), "#{gem_file} does not exist")
  version, platform = File.basename(gem_file, '.gem').match(/\Asass-embedded-(\d+(?:\.\d+)*)-(.+)\z/)&.captures
  check(platform, "#{gem_file} is not a platform gem's file name")
  what = gem_file
  install = ['install', '--local', '--no-document', gem_file]
end

# The installed specification's name: the platform as this RubyGems reads
# it (before 3.3.22, x86_64-linux-gnu reads as x86_64-linux).
full_name = "sass-embedded-#{version || Sass::Embedded::VERSION}-#{Gem::Platform.new(platform)}"

WINDOWS = RbConfig::CONFIG['host_os'].match?(/mswin|mingw/)

TRIPWIRES = %w[cargo rustc rustup clang clang++ cc gcc c++ make cmake npm npx node tar gzip curl wget git].freeze

Dir.mktmpdir('sass-embedded-platform-gem') do |tmp|
  bin = File.join(tmp, 'bin')
  home = File.join(tmp, 'home')
  elsewhere = File.join(tmp, 'elsewhere')
  tripped = File.join(tmp, 'tripped.log')
  FileUtils.mkdir_p([bin, home, elsewhere])
  if WINDOWS
    # RubyGems' own command (gem.cmd runs the same), by ruby.exe's full
    # path: Windows finds a program's DLLs beside it, not through PATH.
    gem_command = [RbConfig.ruby, '-rrubygems/gem_runner', '-e', 'Gem::GemRunner.new.run(ARGV.clone)', '--']
    TRIPWIRES.each do |name|
      File.write(File.join(bin, "#{name}.cmd"), "@echo #{name} %* >> \"#{tripped}\"\r\n@exit /b 127\r\n")
    end
  else
    gem_command = [which('gem') || check(false, 'no gem command on PATH')]
    File.symlink(RbConfig.ruby, File.join(bin, 'ruby'))
    File.symlink(gem_command.first, File.join(bin, 'gem'))
    TRIPWIRES.each do |name|
      File.write(File.join(bin, name), "#!/bin/sh\necho \"#{name} $*\" >> '#{tripped}'\nexit 127\n")
      File.chmod(0o755, File.join(bin, name))
    end
  end

  # Proxies that lead nowhere; not on Windows, where a proxy makes RubyGems
  # load its resolver's registry code, which needs fiddle, which the Windows
  # Ruby cross-built for rake test:windows lacks (Debian has no libffi for
  # mingw-w64): there --local alone keeps the install off the network.
  nowhere = WINDOWS ? nil : 'http://127.0.0.1:9'
  env = {
    'PATH' => bin, 'GEM_HOME' => home, 'GEM_PATH' => [home, *Gem.path].join(File::PATH_SEPARATOR),
    'HOME' => tmp, 'RUBYLIB' => nil, 'RUBYOPT' => nil, 'BUNDLE_GEMFILE' => nil,
    'http_proxy' => nowhere, 'https_proxy' => nowhere, 'HTTP_PROXY' => nowhere, 'HTTPS_PROXY' => nowhere,
    'SASS_EMBEDDED_COMPILER' => nil, 'SASS_EMBEDDED_COMPILER_ARCHIVE' => nil, 'CARGO' => nil,
    'LIBCLANG_PATH' => nil, 'SASS_EMBEDDED_TARGET_DIR' => nil
  }
  offline = offline_prefix
  if offline.empty?
    guard = url ? "--clear-sources with #{url} the only source" : '--local'
    puts "note: no network namespace here (unshare -n); relying on #{guard}" \
         "#{' and proxies that lead nowhere' if nowhere}"
  else
    puts "without a network: #{offline.join(' ')}"
  end

  started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  installed = system(env, *offline, *(WINDOWS ? gem_command : ['gem']), *install, chdir: elsewhere)
  check(installed, "gem install #{what} failed#{", calling:\n#{File.read(tripped)}" if File.file?(tripped)}")
  seconds = Process.clock_gettime(Process::CLOCK_MONOTONIC) - started

  calls = File.file?(tripped) ? File.read(tripped) : ''
  check(calls.empty?, "the install called build or network tools:\n#{calls}")
  built = Dir.glob(File.join(home, '**', 'gem_make.out')) + Dir.glob(File.join(home, 'extensions', '*'))
  check(built.empty?, "something ran extconf: #{built.join(', ')}")
  specs = Dir.glob(File.join(home, 'specifications', 'sass-embedded-*.gemspec'))
  check(specs.map { |path| File.basename(path, '.gemspec') } == [full_name],
        "installed specifications: #{specs.map { |path| File.basename(path) }.inspect}, not #{full_name}")

  check_env = env.merge('SASS_EMBEDDED_EXPECT_PLATFORM' => platform)
  check(system(check_env, *offline, RbConfig.ruby, File.expand_path('check_installed_gem.rb', __dir__),
               chdir: elsewhere),
        'the installed platform gem does not work')
  calls = File.file?(tripped) ? File.read(tripped) : ''
  check(calls.empty?, "using the gem called build or network tools:\n#{calls}")

  gem_file ||= File.join(home, 'cache', "#{full_name}.gem")
  size = File.size(gem_file) / 1024.0 / 1024
  puts format('platform gem %<name>s (%<size>.1f MiB) installed%<from>s in %<seconds>.1f s with PATH=ruby+gem, ' \
              'offline, no extconf', name: File.basename(gem_file), size:, seconds:,
                                     from: url ? " by name from #{url}" : '')
end
