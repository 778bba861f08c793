# frozen_string_literal: true

# release: every gem of a version, its SHA256SUMS and a gem source index (tasks/release.rb).
require_relative '../tasks/roots'
require_relative '../tasks/release'

namespace :release do
  desc 'From a clean checkout, every gem this machine can build (the source gem, and each platform gem for Ruby ' \
       "#{SassEmbeddedBuild::Rubies.minor_names.join(', ')}: x86_64-linux-gnu from test:rubies' roots, each other " \
       'by its platform task) into pkg/release/gems, with SHA256SUMS and a gem source index; a line per gem, ' \
       'fails if any is missing (SASS_RELEASE_PLATFORMS=ruby,x86_64-linux-gnu for some; needs root)'
  task build: :compiler do
    SassEmbeddedBuild::Release.build(ROOT)
  end

  desc 'Install from pkg/release\'s index by name, offline, as users install: x86_64-linux-gnu under Ruby 3.3, the ' \
       'source gem under this machine\'s Ruby, what RubyGems picks for each platform, and Bundler from a ' \
       'multi-platform lockfile (needs root)'
  task install: :compiler do
    SassEmbeddedBuild::Release::Install.call(ROOT, COMPILER_CACHE)
  end

  desc 'Build the source and x86_64-linux-gnu gems of HEAD twice, from two clean clones in directories of different ' \
       'names, and compare them byte for byte (needs root)'
  task :reproduce do
    SassEmbeddedBuild::Release::Reproduce.call(ROOT)
  end
end
