# frozen_string_literal: true

# Run by `rake release:install` under a Ruby that every platform gem of the
# release claims, with the release's directory (a `gem generate_index`
# source): checks what RubyGems and Bundler pick from it, by name, offline.
#
# 0. Every platform gem claims each minor SASS_RELEASE_MINORS names.
# 1. RubyGems' own resolver (Gem::RequestSet, what `gem install` runs), with
#    Gem.platforms set as `gem install --platform` sets it, for a local
#    platform of each gem platform (arm64-darwin-23, x86_64-darwin-22, ...)
#    and Gem.ruby_version set to a Ruby of each minor from 3.1 to 4.0: each
#    must pick its platform's gem when the release has one that claims that
#    Ruby, and the source gem otherwise: never another platform's gem (a
#    gem named x86_64-linux, with no C library, would be taken on musl).
# 2. Bundler: a Gemfile whose only source is the release, `bundle lock
#    --add-platform` for every gem platform (the lockfile must name each
#    platform gem the release has), then `bundle install` from that lockfile
#    into an empty path, and `bundle exec` compiling with the gem it picked
#    for this machine.
#
# Exits non-zero with a message on the first failure.

require 'fileutils'
require 'open3'
require 'rbconfig'
require 'rubygems/package'
require 'rubygems/request_set'
require 'tmpdir'
require_relative '../../lib/sass/embedded/version'

def check(condition, message)
  return if condition

  warn "release index check failed: #{message}"
  exit 1
end

source = File.expand_path(ARGV.fetch(0) { abort "usage: #{$PROGRAM_NAME} RELEASE_DIR" })
check(File.file?(File.join(source, 'specs.4.8.gz')), "#{source} is not a gem source (no specs.4.8.gz)")
url = "file://#{source}/"
version = Sass::Embedded::VERSION
# The Rubies each released gem claims, by its platform (as packed: a
# RubyGems before 3.3.22 would read x86_64-linux-gnu as x86_64-linux).
claims = Dir.glob(File.join(source, 'gems', "sass-embedded-#{version}*.gem")).to_h do |gem|
  spec = Gem::Package.new(gem).spec
  [spec.original_platform.to_s, spec.required_ruby_version]
end
released = claims.keys
check(released.include?('ruby'), "the release has no source gem: #{released.inspect}")
# The minors every platform gem must carry (SASS_RELEASE_MINORS, the build's
# list): a gem that claims fewer would send users of the others to the
# source gem.
ENV.fetch('SASS_RELEASE_MINORS', '').split(',').each do |minor|
  claims.each do |platform, requirement|
    next if platform == 'ruby'

    check(requirement.satisfied_by?(Gem::Version.new("#{minor}.0")),
          "the #{platform} gem claims #{requirement}, not Ruby #{minor}")
  end
end

# A machine of each gem platform, as RubyGems names the local one there
# (before 3.3.22 a glibc Linux machine is x86_64-linux; a Raspberry Pi OS
# Ruby is arm-linux-gnueabihf, or arm-linux). Platforms the release has no
# gem for take the source gem: each is checked either way.
LOCAL = {
  'x86_64-linux-gnu' => %w[x86_64-linux-gnu x86_64-linux], 'aarch64-linux-gnu' => %w[aarch64-linux-gnu aarch64-linux],
  'arm-linux-gnueabihf' => %w[arm-linux-gnueabihf arm-linux armv7l-linux-gnueabihf],
  'riscv64-linux-gnu' => %w[riscv64-linux-gnu riscv64-linux],
  'x86_64-linux-musl' => %w[x86_64-linux-musl], 'aarch64-linux-musl' => %w[aarch64-linux-musl],
  'arm-linux-musleabihf' => %w[arm-linux-musleabihf armv7l-linux-musleabihf],
  'riscv64-linux-musl' => %w[riscv64-linux-musl],
  'arm64-darwin' => %w[arm64-darwin-23], 'x86_64-darwin' => %w[x86_64-darwin-22],
  'x64-mingw-ucrt' => %w[x64-mingw-ucrt], 'aarch64-mingw-ucrt' => %w[aarch64-mingw-ucrt]
}.freeze
# A Ruby of each minor a user may run, the first and last outside every
# platform gem's range.
RUBIES = %w[3.1.7 3.2.9 3.3.8 3.4.5 3.5.0 4.0.0].map { |ruby| Gem::Version.new(ruby) }.freeze

# The platform of the gem RubyGems' resolver picks with Gem.platforms and
# Gem.ruby_version as set.
def pick(version)
  requests = Gem::RequestSet.new(Gem::Dependency.new('sass-embedded', version))
  requests.resolve.map(&:spec).find { |spec| spec.name == 'sass-embedded' }&.platform.to_s
end

Gem.sources = Gem::SourceList.from([url])
# This machine's pick, by the platforms RubyGems takes for it, which Bundler
# must agree with below.
native = pick(version)
puts "RubyGems #{Gem::VERSION} on this machine (#{Gem::Platform.local}, Ruby #{RUBY_VERSION}): picks the #{native} gem"
real_ruby_version = Gem.ruby_version
picks = Hash.new { |hash, key| hash[key] = [] }
begin
  RUBIES.each do |ruby|
    Gem.singleton_class.define_method(:ruby_version) { ruby }
    LOCAL.each do |gem_platform, locals|
      want = claims[gem_platform]&.satisfied_by?(ruby) ? gem_platform : 'ruby'
      locals.each do |local|
        Gem.platforms = [Gem::Platform::RUBY, Gem::Platform.new(local)]
        picked = pick(version)
        check(picked == want, "RubyGems picked the #{picked.inspect} gem on #{local} with Ruby #{ruby}, not #{want}")
        picks[local] << "#{ruby.segments.first(2).join('.')}: #{want}"
      end
    end
  end
ensure
  Gem.platforms = nil
  Gem.singleton_class.define_method(:ruby_version) { real_ruby_version }
end
picks.each { |local, picked| puts "RubyGems on #{local}: #{picked.join(', ')}" }

Dir.mktmpdir('sass-embedded-bundler') do |tmp|
  bundle = [RbConfig.ruby, Gem.bin_path('bundler', 'bundle')]
  env = { 'BUNDLE_GEMFILE' => File.join(tmp, 'Gemfile'), 'BUNDLE_PATH' => File.join(tmp, 'bundle'),
          'BUNDLE_USER_HOME' => File.join(tmp, 'home'), 'HOME' => tmp, 'RUBYOPT' => nil, 'RUBYLIB' => nil,
          'GEM_HOME' => nil, 'GEM_PATH' => nil }
  File.write(env['BUNDLE_GEMFILE'], "source #{url.inspect}\n\ngem 'sass-embedded'\n")
  run = lambda do |*command|
    out, status = Open3.capture2e(env, *command, chdir: tmp)
    check(status.success?, "#{command.last(3).join(' ')} failed:\n#{out}")
    out
  end
  run.call(*bundle, 'lock', '--add-platform', *released.reject { |platform| platform == 'ruby' })
  lockfile = File.read(File.join(tmp, 'Gemfile.lock'))
  released.each do |platform|
    entry = platform == 'ruby' ? "sass-embedded (#{version})" : "sass-embedded (#{version}-#{platform})"
    check(lockfile.include?(entry), "the lockfile lacks #{entry}:\n#{lockfile}")
  end
  puts "bundle lock --add-platform: the lockfile names #{released.size} gems"
  run.call(*bundle, 'install')
  expected = native == 'ruby' ? "sass-embedded-#{version}" : "sass-embedded-#{version}-#{native}"
  used = run.call(*bundle, 'exec', RbConfig.ruby, '-e', <<~RUBY)
    require 'sass-embedded'
    print Gem.loaded_specs.fetch('sass-embedded').full_name, ' ', Sass.compile_string('a { b: 1 + 1 }').css.inspect
  RUBY
  check(used == "#{expected} \"a {\\n  b: 2;\\n}\"", "bundle exec used #{used.inspect}, not #{expected}")
  puts "bundle install from that lockfile here: #{expected}, and it compiles"
end
