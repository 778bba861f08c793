# frozen_string_literal: true

require_relative 'test_helper'
require_relative '../tasks/native_build'

# The platform gem's specification: its platform name, the Ruby versions it
# claims (exactly the minors it carries) and its files. Building and
# installing it for real is `rake test:native_gem`.
class PlatformGemTest < Minitest::Test
  GEM = SassEmbeddedBuild::PlatformGem
  GLIBC = SassEmbeddedBuild::Glibc
  ROOT = File.expand_path('..', __dir__)

  def platform(name) = platform_of(Gem::Platform.new(name))
  def platform_of(local) = SassEmbeddedBuild::CompilerPackage.gem_platform(local).to_s

  def test_platform_names_follow_rubygems_with_glibc_and_musl_apart
    assert_equal 'x86_64-linux-gnu', platform('x86_64-linux')
    assert_equal 'x86_64-linux-gnu', platform_of(Gem::Platform.new(%w[x86_64 linux gnu]))
    assert_equal 'x86_64-linux-musl', platform('x86_64-linux-musl')
    assert_equal 'aarch64-linux-gnu', platform('aarch64-linux')
    assert_equal 'aarch64-linux-musl', platform('aarch64-linux-musl')
    assert_equal 'arm64-darwin', platform('arm64-darwin-23')
    assert_equal 'x86_64-darwin', platform('x86_64-darwin-19')
    assert_equal 'x64-mingw-ucrt', platform('x64-mingw-ucrt')
    # 32-bit ARM: hard float, named as the established gem names it, whether
    # RubyGems keeps the ABI (3.3.22 on) or drops it, and for armv7l too.
    assert_equal 'arm-linux-gnueabihf', platform_of(Gem::Platform.new(%w[arm linux gnueabihf]))
    assert_equal 'arm-linux-gnueabihf', platform('arm-linux')
    assert_equal 'arm-linux-gnueabihf', platform('armv7l-linux-gnueabihf')
    assert_equal 'arm-linux-musleabihf', platform('arm-linux-musleabihf')
    assert_equal 'arm-linux-musleabihf', platform('armv7l-linux-musleabihf')
    assert_equal 'riscv64-linux-gnu', platform('riscv64-linux')
    assert_equal 'riscv64-linux-musl', platform('riscv64-linux-musl')
    assert_equal 'aarch64-linux-gnu', platform_of(Gem::Platform.new(%w[aarch64 linux gnu]))
    assert_includes SassEmbeddedBuild::CompilerPackage::GEM_PLATFORMS.values,
                    SassEmbeddedBuild::CompilerPackage.gem_platform.to_s
  end

  # The 32-bit ARM gem's extension is ARMv7 code: on an ARMv6 CPU (a
  # Raspberry Pi Zero or 1, armhf too) loading it is refused with a sentence,
  # before an illegal instruction could kill the process; every other
  # machine, and 32-bit ARM Rubies on ARMv7 and 64-bit CPUs, load it.
  def test_the_32_bit_arm_extension_is_refused_on_armv6_only
    prebuilt = Sass::Embedded.const_get(:Prebuilt)
    %w[armv6l armv5tel armv6].each do |machine|
      assert_match(/needs an ARMv7 CPU or newer, and this is #{machine}; .*--platform ruby/,
                   prebuilt.refusal(host_cpu: 'arm', machine:))
    end
    assert prebuilt.refusal(host_cpu: 'armv6l', machine: 'armv6l')
    [%w[arm armv7l], %w[arm armv8l], %w[arm aarch64], %w[aarch64 aarch64], %w[x86_64 x86_64],
     %w[arm64 arm64]].each do |host_cpu, machine|
      assert_nil prebuilt.refusal(host_cpu:, machine:), "#{host_cpu} on #{machine}"
    end
    assert_nil prebuilt.refusal, 'this machine'
  end

  def requirement(minors)
    Gem::Requirement.new(GEM.required_ruby_version(minors))
  end

  def test_required_ruby_version_covers_exactly_the_minors_carried
    assert_equal ['>= 3.1', '< 3.2.dev'], GEM.required_ruby_version(['3.1'])
    one = requirement(['3.1'])
    %w[3.1.0 3.1.2 3.1.7].each { |version| assert one.satisfied_by?(Gem::Version.new(version)), version }
    %w[3.0.7 3.2.0 3.2.0.preview1 3.3.0].each { |version| refute one.satisfied_by?(Gem::Version.new(version)), version }

    assert_equal ['>= 3.1', '< 3.5.dev'], GEM.required_ruby_version(%w[3.4 3.1 3.3 3.2])
    assert_equal ['>= 3.3', '< 4.1.dev'], GEM.required_ruby_version(%w[3.3 3.4 4.0])
  end

  def test_minors_with_a_gap_are_refused
    error = assert_raises(RuntimeError) { GEM.required_ruby_version(%w[3.1 3.3]) }
    assert_match(/cannot express a gap between 3\.1 and 3\.3/, error.message)
    assert_raises(RuntimeError) { GEM.required_ruby_version(%w[3.4 4.1]) }
  end

  def test_the_minors_come_from_the_builds_present_or_the_env_knob
    in_tmpdir do |root|
      dlext = RbConfig::CONFIG['DLEXT']
      %w[3.1 3.3 3.2 tmp].each do |dir|
        FileUtils.mkdir_p(File.join(root, 'lib', 'sass', dir))
        File.write(File.join(root, 'lib', 'sass', dir, "sass_embedded.#{dlext}"), '')
      end
      assert_equal %w[3.1 3.2 3.3], GEM.ruby_minors(root, nil)
      assert_equal %w[3.1 3.2], GEM.ruby_minors(root, '3.2, 3.1')
      error = assert_raises(RuntimeError) { GEM.ruby_minors(root, '3.1,3.4') }
      assert_match(/names 3\.4, not built/, error.message)
    end
    in_tmpdir do |root|
      assert_raises(RuntimeError) { GEM.ruby_minors(root, nil) }
    end
  end

  def test_the_glibc_floor_is_the_newest_symbol_version_asked_for
    in_tmpdir do |dir|
      old = File.join(dir, 'old.so')
      new = File.join(dir, 'new.so')
      File.binwrite(old, "\x7fELF\0GLIBC_2.2.5\0GLIBC_2.17\0GLIBC_PRIVATE\0")
      File.binwrite(new, "\x7fELF\0GLIBC_2.29\0GLIBC_2.34\0")
      assert_equal Gem::Version.new('2.17'), GLIBC.floor([old])
      assert_equal Gem::Version.new('2.34'), GLIBC.floor([old, new])
      assert_nil GLIBC.floor([File.join(dir, 'none').tap { |path| File.write(path, 'musl') }])
      assert_equal Gem::Version.new('2.34'), GLIBC.check([new], max: '2.34')
      error = assert_raises(RuntimeError) { GLIBC.check([new], max: '2.28') }
      assert_match(/need glibc >= 2\.34, above 2\.28 \(SASS_EMBEDDED_MAX_GLIBC\)/, error.message)
      # Unless told otherwise, a platform gem may need glibc 2.17 at most.
      with_env('SASS_EMBEDDED_MAX_GLIBC' => nil) do
        assert_equal Gem::Version.new('2.17'), GLIBC.check([old])
        error = assert_raises(RuntimeError) { GLIBC.check([new]) }
        assert_match(/need glibc >= 2\.34, above 2\.17 .*rake native:compile/, error.message)
        # RISC-V's first glibc is 2.27: its gem links against that.
        riscv = File.join(dir, 'riscv.so').tap { |path| File.binwrite(path, "\x7fELF\0GLIBC_2.27\0") }
        assert_equal Gem::Version.new('2.27'), GLIBC.check([riscv], cpu: 'riscv64')
        assert_raises(RuntimeError) { GLIBC.check([riscv], cpu: 'x86_64') }
        error = assert_raises(RuntimeError) { GLIBC.check([new], cpu: 'riscv64') }
        assert_match(/above 2\.27 .*linked against glibc 2\.27 by zig/, error.message)
      end
    end
  end

  def test_the_glibc_to_link_against
    skip 'a glibc Linux build only' unless GLIBC.glibc_linux?

    with_env('SASS_EMBEDDED_GLIBC' => nil) do
      assert_nil GLIBC.requested
      assert_equal '2.17', GLIBC.requested(GLIBC::FLOOR)
      assert_equal(%w[2.17 2.17 2.27], %w[x86_64 arm riscv64].map { |cpu| GLIBC.floor_for(cpu) })
    end
    with_env('SASS_EMBEDDED_GLIBC' => '2.28') { assert_equal '2.28', GLIBC.requested(GLIBC::FLOOR) }
    with_env('SASS_EMBEDDED_GLIBC' => 'system') { assert_nil GLIBC.requested(GLIBC::FLOOR) }
    with_env('SASS_EMBEDDED_GLIBC' => '2.17; rm -rf /') do
      assert_raises(RuntimeError) { GLIBC.requested(GLIBC::FLOOR) }
    end
  end

  def test_the_specification_carries_the_extension_and_compiler_and_builds_nothing
    minor = RUBY_VERSION[/\A\d+\.\d+/]
    skip "no build for Ruby #{minor} under lib/sass/" unless GEM.extensions(ROOT).key?(minor)

    local = SassEmbeddedBuild::CompilerPackage.gem_platform
    spec, = GEM.specification(ROOT, minors: [minor], platform: local)
    assert_equal local.to_s, spec.platform.to_s
    assert_empty spec.extensions
    assert_includes spec.files, "lib/sass/#{minor}/sass_embedded.#{RbConfig::CONFIG['DLEXT']}"
    assert_includes spec.files, WINDOWS ? 'lib/sass/embedded/dart-sass/sass.bat' : 'lib/sass/embedded/dart-sass/sass'
    assert_includes spec.files, 'lib/sass/embedded/dart-sass/.package'
    assert_includes spec.files, 'lib/sass/embedded/version.rb'
    assert_empty spec.files.grep(%r{\Aext/|\ACargo\.})
    assert spec.required_ruby_version.satisfied_by?(Gem.ruby_version)
    # A musl gem needs a RubyGems that tells musl from glibc (below).
    musl_here = local.version.to_s.start_with?('musl')
    assert_equal Gem::Requirement.new(musl_here ? '>= 3.3.22' : '>= 0'), spec.required_rubygems_version

    musl, = GEM.specification(ROOT, minors: [minor], platform: Gem::Platform.new('x86_64-linux-musl'))
    assert_equal Gem::Requirement.new('>= 3.3.22'), musl.required_rubygems_version

    source = Gem::Specification.load(File.join(ROOT, 'sass-embedded.gemspec'))
    assert_equal Gem::Platform::RUBY, source.platform
    assert_equal ['ext/sass_embedded/extconf.rb'], source.extensions
  end

  # The source gem builds for whatever Ruby installs it, so it claims every
  # Ruby from 3.1 up (Ruby 4.0 included), as a platform gem never does.
  def test_the_source_gem_accepts_every_ruby_from_3_1_up
    source = GEM.load_gemspec(ROOT)
    %w[3.1.0 3.2.0 3.3.6 3.4.1 4.0.0 4.0.1 4.1.0.preview1 5.0.0].each do |version|
      assert source.required_ruby_version.satisfied_by?(Gem::Version.new(version)), version
    end
    refute source.required_ruby_version.satisfied_by?(Gem::Version.new('3.0.7'))
    refute requirement(%w[3.3 3.4]).satisfied_by?(Gem::Version.new('4.0.0'))
  end
end
