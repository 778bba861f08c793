# frozen_string_literal: true

# Platform gems (prebuilt extension and compiler, nothing to build at install)
# and the compiler package's pinned integrity. Loaded by the Rakefile.

require_relative 'native_build'

namespace :native do
  desc 'Build this machine\'s platform gem (sass-embedded-VERSION-<platform>.gem) with every ' \
       'lib/sass/<minor>/ extension present (or SASS_EMBEDDED_RUBY_MINORS), into SASS_EMBEDDED_GEM_DIR or .'
  task gem: :compile do
    gem = SassEmbeddedBuild::PlatformGem
    path = gem.build(ROOT, ENV.fetch('SASS_EMBEDDED_GEM_DIR', nil) || ROOT)
    glibc = SassEmbeddedBuild::Glibc.floor(gem.binaries(ROOT, gem.ruby_minors(ROOT)))
    puts "built #{path} (#{(File.size(path) / 1024.0 / 1024).round(1)} MiB#{", needs glibc >= #{glibc}" if glibc})"
  end

  desc "Record every platform's compiler package integrity at the pinned version (run after changing the pin)"
  task :integrity do
    packages = SassEmbeddedBuild::IntegrityFile.refresh(Sass::Embedded::VERSION)
    packages.each { |package, integrity| puts "#{package}@#{Sass::Embedded::VERSION} #{integrity}" }
  end
end

desc 'Build the platform gem for this Ruby (or SASS_EMBEDDED_RUBY_MINORS), install it into an empty GEM_HOME ' \
     'with no cargo, clang, npm or network, and use it'
task 'test:native_gem' => :compile do
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
