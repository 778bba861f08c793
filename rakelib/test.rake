# frozen_string_literal: true

# The tests of this machine's platform: the Rust tests, the Ruby suite
# (also through the other waiting mechanisms), and the source gem installed
# as users install it. Other platforms: platforms.rake.

# The core's tests run under cargo-nextest: a process per test, and a deadline
# per test (.config/nextest.toml), so a hang fails within a minute naming the
# test. The outer timeout is a last resort.
def cargo_core_tests(*features)
  env = { 'SASS_EMBEDDED_COMPILER' => ENV.fetch('SASS_EMBEDDED_COMPILER', File.join(COMPILER_DIR, 'sass')) }
  sh env, 'timeout', '900', 'cargo', 'nextest', 'run', '--locked', '--no-tests', 'fail', '-p', 'sass-embedded-core',
     *features
end

desc 'Run the Rust tests with cargo-nextest: the core (framing, routing, the compiler process) with and without ' \
     "tokio, and the extension's value conversion in an embedded Ruby"
task 'test:cargo' => :compiler do
  cargo_core_tests
  # The built-in executor alone: everything tokio-specific is behind the feature.
  cargo_core_tests '--no-default-features'
  # The extension's own tests link libruby (magnus's embed, a dev-dependency:
  # the extension itself never links it).
  sh 'timeout', '600', 'cargo', 'nextest', 'run', '--locked', '--no-tests', 'fail', '-p', 'sass_embedded'
end

OTHER_WAIT_NAMES.each do |name, what|
  desc "The core and the whole Ruby suite through #{what}, on Linux (needs root, for a mount namespace)"
  task "test:#{name}" => :compiler do
    cargo_core_tests '--features', OTHER_WAITS.fetch(name).first
    sh other_wait_env(name), 'timeout', '1800',
       *with_other_wait_build(name, "#{RbConfig.ruby.shellescape} -S rake test:ruby")
  end
end

# SASS_TESTS='a_test.rb b/*_test.rb' runs only those (rake test:async2 does):
# unlike TEST, which only rake 13.1 and later split into several.
Rake::TestTask.new('test:ruby') do |t|
  t.libs << 'test' << 'lib'
  t.test_files = FileList[*ENV.fetch('SASS_TESTS', 'test/**/*_test.rb').split]
  t.warning = true
end
task 'test:ruby' => :compile

desc 'The stress suite with GC.stress on, at a reduced scale (slow, so not part of CI)'
task 'test:gc_stress' => :compile do
  env = { 'SASS_GC_STRESS' => '1', 'STRESS_SCALE' => ENV.fetch('STRESS_SCALE', '0.05'), 'SASS_TEST_TIMEOUT' => '1800' }
  sh env, RbConfig.ruby, '-Ilib', '-Itest', 'test/stress_test.rb', '-v'
end

desc 'Run every test: cargo, then minitest against the real compiler'
task test: ['test:cargo', 'test:ruby']

desc 'Build the source gem, install it into an empty GEM_HOME (reusing cargo\'s cache) and use it from elsewhere'
task 'test:gem' => :compiler do
  Dir.mktmpdir('sass-embedded-gem') do |tmp|
    sh 'gem', 'build', File.join(ROOT, 'sass-embedded.gemspec'), '--output', File.join(tmp, 'sass-embedded.gem')
    home = File.join(tmp, 'home')
    # The compiler package comes from the verified copy `rake compiler` kept,
    # as an air-gapped install takes it (SASS_EMBEDDED_COMPILER_ARCHIVE).
    archive = SassEmbeddedBuild::CompilerPackage.cached_archive(
      COMPILER_CACHE, "#{SassEmbeddedBuild::CompilerPackage.name}@#{Sass::Embedded::VERSION}"
    )
    env = { 'GEM_HOME' => home, 'GEM_PATH' => [home, *Gem.path].join(File::PATH_SEPARATOR), 'RUBYLIB' => nil,
            'RUBYOPT' => nil, 'SASS_EMBEDDED_TARGET_DIR' => File.join(ROOT, 'target', "ruby-#{RUBY_MINOR}"),
            'SASS_EMBEDDED_COMPILER_ARCHIVE' => archive }
    sh env, 'gem', 'install', '--local', '--no-document', File.join(tmp, 'sass-embedded.gem')
    sh env, RbConfig.ruby, File.join(ROOT, 'test', 'install', 'check_installed_gem.rb'), chdir: tmp
  end
end
