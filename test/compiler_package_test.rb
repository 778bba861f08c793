# frozen_string_literal: true

require_relative 'test_helper'
require 'json'
require 'open3'
require 'rbconfig'
require_relative '../ext/sass_embedded/compiler_package'

# Installing the compiler package: verified against the pinned integrity
# before anything is unpacked, from SASS_EMBEDDED_COMPILER_ARCHIVE too, and
# never half-written. Offline: the real package comes from the cache
# `rake compiler` fills (fetched once with npm if that cache is empty).
class CompilerPackageTest < Minitest::Test
  PACKAGE = SassEmbeddedBuild::CompilerPackage
  INTEGRITY = SassEmbeddedBuild::CompilerIntegrity
  CACHE = File.expand_path('../tmp/compiler-packages', __dir__)
  EXTCONF = File.expand_path('../ext/sass_embedded/extconf.rb', __dir__)
  VERSION = Sass::Embedded::VERSION

  def package
    PACKAGE.name
  end

  def spec
    "#{package}@#{VERSION}"
  end

  def expected
    INTEGRITY.expected(package, VERSION)
  end

  # This platform's real package at the pinned version.
  def real_archive
    path = PACKAGE.cached_archive(CACHE, spec)
    return path if File.file?(path) && INTEGRITY.of(path) == expected

    Dir.mktmpdir do |download|
      tarball = PACKAGE.fetch(spec, download)
      INTEGRITY.verify(tarball, spec, expected, origin: 'npm')
      PACKAGE.keep_in_cache(tarball, spec, CACHE)
    end
    path
  end

  # The real package with one byte changed.
  def tampered_archive(dir)
    path = File.join(dir, File.basename(real_archive))
    bytes = File.binread(real_archive)
    middle = bytes.bytesize / 2
    bytes.setbyte(middle, bytes.getbyte(middle) ^ 0x01)
    File.binwrite(path, bytes)
    path
  end

  def with_archive_env(path)
    previous = ENV.fetch(PACKAGE::ARCHIVE_ENV, nil)
    ENV[PACKAGE::ARCHIVE_ENV] = path
    yield
  ensure
    ENV[PACKAGE::ARCHIVE_ENV] = previous
  end

  # A previous installation whose every byte the test can compare.
  def previous_install(dir)
    FileUtils.mkdir_p(dir)
    File.write(File.join(dir, 'sass'), "#!/bin/sh\necho previous\n")
    File.write(PACKAGE.marker(dir), "sass-embedded-previous@0.0.0\nsha512-previous\n")
    snapshot(dir)
  end

  def snapshot(dir)
    Dir.glob('**/*', File::FNM_DOTMATCH, base: dir).reject { |f| f.end_with?('.') }.sort
       .to_h { |f| [f, File.file?(File.join(dir, f)) ? File.binread(File.join(dir, f)) : :dir] }
  end

  # A small tarball of a package that holds only the given package.json.
  def small_archive(dir, name, manifest)
    root = File.join(dir, name, 'package')
    FileUtils.mkdir_p(root)
    File.write(File.join(root, 'package.json'), JSON.generate(manifest))
    path = File.join(dir, "#{name}.tgz")
    skip_without_tar
    assert system('tar', '-czf', path, '-C', File.join(dir, name), 'package')
    path
  end

  # An integrity file that pins +packages+ at the gem's version.
  def integrity_file(dir, packages, version: VERSION)
    path = File.join(dir, 'integrity.json')
    File.write(path, JSON.generate({ 'version' => version, 'packages' => packages }))
    path
  end

  def test_the_integrity_file_pins_every_platform_at_the_gems_version
    table = INTEGRITY.table
    assert_equal VERSION, table['version'], 'the pin changed: run `rake native:integrity`'
    assert_equal PACKAGE::PLATFORMS.map { |platform| "sass-embedded-#{platform}" }.sort, table['packages'].keys.sort
    table['packages'].each_value do |integrity|
      assert_match(%r{\Asha512-[A-Za-z0-9+/]{86}==\z}, integrity)
      assert_equal 64, integrity.delete_prefix('sha512-').unpack1('m0').bytesize
    end
    assert_empty PACKAGE::GEM_PLATFORMS.keys - PACKAGE::PLATFORMS, 'a platform gem carries an unpinned package'
  end

  # The source gem fetches the package of the machine it builds on: every
  # CPU Dart Sass publishes one for (hard-float 32-bit ARM and RISC-V too),
  # and a clear error elsewhere.
  def test_each_machine_gets_its_own_package_or_a_clear_error
    {
      %w[linux x86_64] => 'linux-x64', %w[linux aarch64] => 'linux-arm64',
      %w[linux-gnueabihf arm] => 'linux-arm', %w[linux-gnueabihf armv7l] => 'linux-arm',
      %w[linux-gnueabihf armv8l] => 'linux-arm', %w[linux riscv64] => 'linux-riscv64',
      %w[darwin23 arm64] => 'darwin-arm64', %w[mingw32 x64] => 'win32-x64', %w[mingw32 aarch64] => 'win32-arm64'
    }.each do |(os, cpu), platform|
      assert_equal "sass-embedded-#{platform}", PACKAGE.name(host_os: os, host_cpu: cpu, musl: false), "#{cpu} #{os}"
    end
    assert_equal 'sass-embedded-linux-musl-arm',
                 PACKAGE.name(host_os: 'linux-musleabihf', host_cpu: 'armv7l', musl: true)
    assert_equal 'sass-embedded-linux-musl-riscv64',
                 PACKAGE.name(host_os: 'linux-musl', host_cpu: 'riscv64', musl: true)
    # Soft-float ARM (Debian's armel) cannot run Dart's ARMv7 runtime; no
    # package exists for 32-bit x86, RISC-V macOS or Windows.
    [%w[linux-gnueabi arm], %w[linux-musleabi armv6l], %w[linux i686], %w[darwin23 riscv64],
     %w[mingw32 riscv64], %w[freebsd14 x86_64]].each do |os, cpu|
      error = assert_raises(RuntimeError) { PACKAGE.name(host_os: os, host_cpu: cpu, musl: false) }
      assert_equal "sass-embedded has no Dart Sass package for #{cpu} #{os}; set SASS_EMBEDDED_COMPILER", error.message
    end
  end

  def test_the_real_package_has_the_pinned_integrity
    assert_equal expected, INTEGRITY.of(real_archive)
  end

  # The package is unpacked with tar, which Windows 10 and later ship and
  # Wine does not.
  def skip_without_tar
    skip 'no tar on PATH' unless system('tar', '--version', out: File::NULL, err: File::NULL)
  rescue SystemCallError
    skip 'no tar on PATH'
  end

  def test_installs_a_local_archive_verified_and_complete
    skip_without_tar
    in_tmpdir do |tmp|
      directory = File.join(tmp, 'lib', 'dart-sass')
      with_archive_env(real_archive) { assert_equal spec, PACKAGE.install(directory, VERSION) }

      assert_equal [spec, expected], File.readlines(PACKAGE.marker(directory), chomp: true)
      out, err, status = Open3.capture3(File.join(directory, 'sass'), '--version')
      assert status.success?, err
      assert_equal "#{VERSION}\n", out
      assert_equal ['dart-sass'], Dir.children(File.join(tmp, 'lib')), 'the staging directory was left behind'

      # Installed already: nothing is read again, not even a missing archive.
      with_archive_env(File.join(tmp, 'missing.tgz')) { assert_equal spec, PACKAGE.install(directory, VERSION) }
    end
  end

  def test_replaces_a_previous_install_from_a_cached_archive
    skip_without_tar
    in_tmpdir do |tmp|
      directory = File.join(tmp, 'dart-sass')
      previous_install(directory)
      cache = File.join(tmp, 'cache')
      PACKAGE.keep_in_cache(real_archive, spec, cache)

      assert_equal spec, PACKAGE.install(directory, VERSION, archive: nil, cache:)
      refute_includes File.read(File.join(directory, 'sass')), 'echo previous'
      assert_equal [spec, expected], File.readlines(PACKAGE.marker(directory), chomp: true)
      assert_equal %w[cache dart-sass], Dir.children(tmp).sort
    end
  end

  def test_a_tampered_archive_is_refused_naming_both_digests_and_the_previous_install_stays
    in_tmpdir do |tmp|
      directory = File.join(tmp, 'lib', 'dart-sass')
      before = previous_install(directory)
      tampered = tampered_archive(tmp)

      error = with_archive_env(tampered) do
        assert_raises(SassEmbeddedBuild::IntegrityError) { PACKAGE.install(directory, VERSION) }
      end
      assert_includes error.message, "expected: #{expected}"
      assert_includes error.message, "actual:   #{INTEGRITY.of(tampered)}"
      refute_equal expected, INTEGRITY.of(tampered)
      assert_includes error.message, spec
      assert_includes error.message, tampered
      assert_includes error.message, PACKAGE::ARCHIVE_ENV
      assert_equal before, snapshot(directory), 'the previous install changed'
      assert_equal ['dart-sass'], Dir.children(File.join(tmp, 'lib')), 'something was left half-written'
    end
  end

  def test_a_tampered_archive_into_an_empty_place_leaves_nothing
    in_tmpdir do |tmp|
      directory = File.join(tmp, 'lib', 'dart-sass')
      assert_raises(SassEmbeddedBuild::IntegrityError) do
        PACKAGE.install(directory, VERSION, archive: tampered_archive(tmp))
      end
      refute File.exist?(File.join(tmp, 'lib')), 'something was written for a refused archive'
    end
  end

  def test_another_platforms_package_is_named
    in_tmpdir do |tmp|
      file = integrity_file(tmp, { package => "sha512-#{['x' * 64].pack('m0')}",
                                   'sass-embedded-elsewhere' => expected })
      error = assert_raises(SassEmbeddedBuild::IntegrityError) do
        PACKAGE.install(File.join(tmp, 'dart-sass'), VERSION, archive: real_archive, integrity_file: file)
      end
      assert_includes error.message, "That archive is sass-embedded-elsewhere's package, not #{package}'s."
      refute File.exist?(File.join(tmp, 'dart-sass'))
    end
  end

  def test_a_pinned_archive_that_is_not_the_compiler_keeps_the_previous_install
    in_tmpdir do |tmp|
      directory = File.join(tmp, 'lib', 'dart-sass')
      before = previous_install(directory)
      [
        [small_archive(tmp, 'other', { name: 'left-pad', version: '1.0.0' }), /is not #{package}@#{VERSION}/],
        [small_archive(tmp, 'empty', { name: package, version: VERSION }), %r{has no dart-sass/sass}]
      ].each do |archive, message|
        file = integrity_file(tmp, { package => INTEGRITY.of(archive) })
        error = assert_raises(RuntimeError) { PACKAGE.install(directory, VERSION, archive:, integrity_file: file) }
        assert_match message, error.message
        assert_equal before, snapshot(directory)
        assert_equal ['dart-sass'], Dir.children(File.join(tmp, 'lib'))
      end

      garbage = File.join(tmp, 'garbage.tgz')
      File.write(garbage, 'not a tarball')
      file = integrity_file(tmp, { package => INTEGRITY.of(garbage) })
      error = assert_raises(RuntimeError) do
        PACKAGE.install(directory, VERSION, archive: garbage, integrity_file: file)
      end
      assert_match(/could not unpack/, error.message)
      assert_equal before, snapshot(directory)
      assert_equal ['dart-sass'], Dir.children(File.join(tmp, 'lib'))
    end
  end

  def test_an_integrity_file_for_another_version_is_refused
    in_tmpdir do |tmp|
      file = integrity_file(tmp, { package => expected }, version: '0.0.1')
      error = assert_raises(SassEmbeddedBuild::IntegrityError) do
        PACKAGE.install(File.join(tmp, 'dart-sass'), VERSION, archive: real_archive, integrity_file: file)
      end
      assert_match(/"0\.0\.1", but the gem is pinned to #{Regexp.escape(VERSION)}: run `rake native:integrity`/,
                   error.message)
      file = integrity_file(tmp, {})
      error = assert_raises(SassEmbeddedBuild::IntegrityError) do
        PACKAGE.install(File.join(tmp, 'dart-sass'), VERSION, archive: real_archive, integrity_file: file)
      end
      assert_match(/has no integrity for #{spec}/, error.message)
      refute File.exist?(File.join(tmp, 'dart-sass'))
    end
  end

  def test_a_missing_archive_is_named
    in_tmpdir do |tmp|
      missing = File.join(tmp, 'nowhere.tgz')
      error = assert_raises(SassEmbeddedBuild::IntegrityError) do
        PACKAGE.install(File.join(tmp, 'dart-sass'), VERSION, archive: missing)
      end
      assert_includes error.message, "#{missing} does not exist (from #{PACKAGE::ARCHIVE_ENV})"
    end
  end

  # extconf.rb in a scratch directory with +env+: its output and status.
  def extconf(env)
    in_tmpdir do |tmp|
      env = { 'SASS_EMBEDDED_SKIP_COMPILER' => '1', 'CARGO' => nil, 'LIBCLANG_PATH' => nil }.merge(env)
      out, status = Open3.capture2e(env, RbConfig.ruby, EXTCONF, chdir: tmp)
      [out, status]
    end
  end

  def test_extconf_without_cargo_says_what_to_install_and_that_platform_gems_exist
    in_tmpdir do |empty|
      out, status = extconf('PATH' => empty)
      refute status.success?
      assert_includes out, 'building from source needs Rust (cargo)'
      assert_includes out, 'https://rustup.rs'
      assert_includes out, 'Precompiled platform gems'
      assert_includes out, SassEmbeddedBuild::CompilerPackage.gem_platform.to_s
    end
  end

  def test_extconf_without_libclang_says_what_to_install
    in_tmpdir do |empty|
      out, status = extconf('CARGO' => '/bin/true', 'LIBCLANG_PATH' => empty)
      refute status.success?
      assert_includes out,
                      "needs libclang (bindgen reads Ruby's headers with it), and LIBCLANG_PATH=#{empty} holds none"
      assert_includes out, 'apt-get install libclang-dev'
      assert_includes out, 'Precompiled platform gems'
    end
  end
end
