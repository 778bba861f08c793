# frozen_string_literal: true

# Platform gems (prebuilt extension and compiler, nothing to build at install)
# and the compiler package's pinned integrity. (rakelib/: rake loads it.)

require_relative '../tasks/native_build'

namespace :native do
  desc 'Build the extension as a platform gem carries it: on glibc Linux linked against glibc ' \
       "#{SassEmbeddedBuild::Glibc::FLOOR}'s symbol versions by zig (RISC-V's: " \
       "#{SassEmbeddedBuild::Glibc::FLOORS['riscv64']}; SASS_EMBEDDED_GLIBC: another, or system)"
  task compile: :compiler do
    compile_extension(glibc: SassEmbeddedBuild::Glibc.requested(SassEmbeddedBuild::Glibc.floor_for))
  end

  desc 'Build this machine\'s platform gem (sass-embedded-VERSION-<platform>.gem) with every ' \
       'lib/sass/<minor>/ extension present (or SASS_EMBEDDED_RUBY_MINORS), into SASS_EMBEDDED_GEM_DIR or .; ' \
       "on glibc Linux it refuses an extension that needs glibc > #{SassEmbeddedBuild::Glibc::FLOOR} " \
       "(RISC-V: #{SassEmbeddedBuild::Glibc::FLOORS['riscv64']}; SASS_EMBEDDED_MAX_GLIBC)"
  task gem: 'native:compile' do
    gem = SassEmbeddedBuild::PlatformGem
    path = gem.build(ROOT, ENV.fetch('SASS_EMBEDDED_GEM_DIR', nil) || ROOT)
    minors = gem.ruby_minors(ROOT)
    glibc = SassEmbeddedBuild::Glibc.floor(gem.binaries(ROOT, minors))
    extensions = SassEmbeddedBuild::Glibc.floor(gem.extensions(ROOT).values_at(*minors))
    needs = ", needs glibc >= #{glibc} (its extensions: #{extensions})" if glibc
    puts "built #{path} (#{(File.size(path) / 1024.0 / 1024).round(1)} MiB#{needs})"
  end

  desc "Record every platform's compiler package integrity at the pinned version (run after changing the pin)"
  task :integrity do
    packages = SassEmbeddedBuild::IntegrityFile.refresh(Sass::Embedded::VERSION)
    packages.each { |package, integrity| puts "#{package}@#{Sass::Embedded::VERSION} #{integrity}" }
  end
end

desc 'Build the platform gem for this Ruby (or SASS_EMBEDDED_RUBY_MINORS), install it into an empty GEM_HOME ' \
     'with no cargo, clang, npm or network, and use it'
task 'test:native_gem' => 'native:compile' do
  # The gem is installed and used by this Ruby, so it packs this Ruby's build
  # unless told otherwise: other minors left under lib/sass/ by `rake
  # test:rubies` (3.1, 3.3, 3.4: a gap RubyGems cannot express) are not what
  # this test proves.
  platform_gem = SassEmbeddedBuild::PlatformGem
  minors = ENV.fetch(platform_gem::MINORS_ENV, '').strip.empty? ? [RUBY_MINOR] : platform_gem.ruby_minors(ROOT)
  Dir.mktmpdir('sass-embedded-native-gem') do |tmp|
    gem = platform_gem.build(ROOT, tmp, minors:)
    sh RbConfig.ruby, File.join(ROOT, 'test', 'install', 'platform_gem.rb'), gem
  end
end
