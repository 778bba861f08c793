# frozen_string_literal: true

# Building the extension: the compiler package it drives, the extension into
# lib/sass/<minor>/ as gem install builds it, and the builds with another
# waiting mechanism than Linux's (mounted only where a command wants them).

require_relative '../tasks/native_build'

desc 'Fetch the pinned Dart Sass compiler into lib/sass/embedded/dart-sass (verified against its pinned integrity)'
task :compiler do
  spec = SassEmbeddedBuild::CompilerPackage.install(COMPILER_DIR, Sass::Embedded::VERSION, cache: COMPILER_CACHE)
  puts "compiler: #{spec}"
end

# The extension's cargo features (SASS_EMBEDDED_CARGO_FEATURES, which
# extconf.rb passes to cargo), as a suffix of the build's directories.
CARGO_FEATURES = ENV.fetch('SASS_EMBEDDED_CARGO_FEATURES', '').split(/[\s,]+/).reject(&:empty?)

# Builds the extension into lib/sass/<minor>/ through extconf.rb and make,
# as gem install does; with +glibc+ (a version), linked against that glibc's
# symbol versions by zig (what a Linux platform gem needs: see
# SassEmbeddedBuild::Glibc), in build and cargo target directories of its
# own so that both builds stay warm. Every build keeps the checkout's and
# cargo's paths out of the binary, as a platform gem's must (its bytes the
# same from any checkout): with the same RUSTFLAGS, the suite's build after
# `rake native:gem` (the platform tasks' roots) reuses the gem's instead of
# building it again (16 minutes under qemu).
def compile_extension(glibc: nil)
  name = [RUBY_MINOR, *CARGO_FEATURES, *("glibc#{glibc}" if glibc)].join('-')
  build_dir = File.join(ROOT, 'tmp', "ext-#{name}")
  install_dir = File.join(ROOT, 'lib', 'sass', RUBY_MINOR)
  mkdir_p build_dir
  # One cargo target directory per Ruby (and set of features): the bindings
  # are generated from that Ruby's headers, so sharing one would rebuild them
  # at every switch.
  env = { 'SASS_EMBEDDED_TARGET_DIR' => File.join(ROOT, 'target', "ruby-#{name}"),
          'SASS_EMBEDDED_SKIP_COMPILER' => '1' }
  env.merge!(SassEmbeddedBuild::Glibc.link_environment(ROOT, glibc)) if glibc
  env['RUSTFLAGS'] = SassEmbeddedBuild::Reproducible.path_free_rustflags(ROOT)
  Dir.chdir(build_dir) do
    sh env, RbConfig.ruby, File.join(ROOT, 'ext', 'sass_embedded', 'extconf.rb')
    sh env, 'make', 'install', "sitearchdir=#{install_dir}", "sitelibdir=#{install_dir}"
  end
end

desc 'Build the native extension into lib/sass/<ruby minor>/ (extconf.rb + make, as gem install does; ' \
     'SASS_EMBEDDED_GLIBC=2.17 links it as a platform gem\'s)'
task compile: :compiler do
  compile_extension(glibc: SassEmbeddedBuild::Glibc.requested)
end

# The extension built with another waiting mechanism than Linux's: each
# build, by the cargo feature that picks its mechanism, and the mechanism's
# name (Sass::Embedded::Host::WAIT_MECHANISM). `portable`: poll(2) and pipes,
# as on macOS and the BSDs; `reader`: a reader thread per compiler, as on
# Windows (docs/internals.md).
OTHER_WAITS = { 'portable' => %w[portable-wait poll], 'reader' => %w[reader-wait reader] }.freeze

# Where such a build lives: mounted where the gem loads it (lib/sass/<minor>)
# only inside the mount namespace of a command that wants it, so the
# checkout's own build stays in place.
def other_wait_lib(name) = File.join(ROOT, 'tmp', "#{name}-lib-#{RUBY_MINOR}")

# What builds and tests the +name+ build.
def other_wait_env(name)
  feature, mechanism = OTHER_WAITS.fetch(name)
  { 'SASS_EMBEDDED_CARGO_FEATURES' => feature, 'SASS_EMBEDDED_EXPECT_WAIT' => mechanism }
end

# +command+ (a shell command) in a mount namespace where lib/sass/<minor> is
# the +name+ build (needs root).
def with_other_wait_build(name, command)
  installed = File.join(ROOT, 'lib', 'sass', RUBY_MINOR)
  mkdir_p [other_wait_lib(name), installed], verbose: false
  ['unshare', '--mount', '--propagation', 'private', '--', 'sh', '-c',
   "mount --bind #{other_wait_lib(name).shellescape} #{installed.shellescape} && exec #{command}"]
end

# What each other build waits with, in words.
OTHER_WAIT_NAMES = {
  'portable' => 'the waiting mechanism of macOS and the BSDs (poll(2) and pipes)',
  'reader' => "Windows's waiting mechanism (a reader thread per compiler)"
}.freeze

OTHER_WAIT_NAMES.each do |name, what|
  desc "Build the extension with #{what} into tmp/#{name}-lib-<minor> (needs root)"
  task "compile:#{name}" => :compiler do
    sh other_wait_env(name), *with_other_wait_build(name, "#{RbConfig.ruby.shellescape} -S rake compile")
  end
end
