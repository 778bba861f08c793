# frozen_string_literal: true

require 'digest'
require 'fileutils'
require 'json'
require 'open3'
require 'rbconfig'
require 'tmpdir'
require_relative '../../lib/sass/embedded/elf_interpreter'
require_relative '../../lib/sass/embedded/prebuilt'

module SassEmbeddedBuild
  # The archive does not have the pinned integrity, or the integrity file does
  # not cover the package.
  class IntegrityError < StandardError; end

  # The ELF reader the gem itself uses to find a program's loader
  # (lib/sass/embedded/elf_interpreter.rb).
  ElfInterpreter = Sass::Embedded.const_get(:ElfInterpreter)
  # Its prebuilt extensions' rules (the one spelling of a 32-bit ARM CPU).
  Prebuilt = Sass::Embedded.const_get(:Prebuilt)

  # The SHA-512 integrity (npm's +dist.integrity+) of each platform's compiler
  # package at the pinned version, kept in +compiler_integrity.json+ beside
  # the build scripts (+rake native:integrity+ rewrites it for a new pin).
  module CompilerIntegrity
    FILE = File.expand_path('compiler_integrity.json', __dir__)

    module_function

    # npm's integrity string of a file: +sha512-<base64 digest>+.
    def of(path)
      "sha512-#{[Digest::SHA512.file(path).digest].pack('m0')}"
    end

    # @return [Hash] the integrity file: +version+ and +packages+ (name => integrity)
    def table(file = FILE)
      JSON.parse(File.read(file))
    end

    # The pinned integrity of +package+ at +version+.
    def expected(package, version, file: FILE)
      table = table(file)
      unless table['version'] == version
        raise IntegrityError, "#{file} records the compiler packages of #{table['version'].inspect}, but the " \
                              "gem is pinned to #{version}: run `rake native:integrity` to record #{version}'s"
      end
      table.fetch('packages').fetch(package) do
        raise IntegrityError, "#{file} has no integrity for #{package}@#{version}, so it cannot be verified"
      end
    end

    # Raises unless +tarball+'s digest is +expected+, naming both.
    # @return [String] the digest
    def verify(tarball, spec, expected, origin:, file: FILE)
      raise IntegrityError, "#{spec}: #{tarball} does not exist (#{origin})" unless File.file?(tarball)

      actual = of(tarball)
      return actual if actual == expected

      other = table(file).fetch('packages', {}).key(actual)
      raise IntegrityError, <<~MESSAGE.chomp
        the Dart Sass compiler package failed its integrity check and was not installed:
          package:  #{spec}
          archive:  #{tarball} (#{origin})
          expected: #{expected} (#{File.basename(file)})
          actual:   #{actual}
        #{other ? "That archive is #{other}'s package, not #{spec.split('@').first}'s." : 'The archive is not the package npm publishes for this version: it was changed, truncated or is another package.'}
      MESSAGE
    end
  end

  # Installs the Dart Sass compiler: the platform's npm package
  # +sass-embedded-<os>-<cpu>+ at the gem's pinned version, fetched with the
  # npm client (or taken from +SASS_EMBEDDED_COMPILER_ARCHIVE+), checked
  # against the SHA-512 integrity recorded in +compiler_integrity.json+ before
  # anything is unpacked, and moved into +lib/sass/embedded/dart-sass+ only
  # once complete. Used by +extconf.rb+ (source gem install) and by
  # +rake compiler+ (checkout).
  module CompilerPackage
    # A local copy of the package to install instead of fetching it.
    ARCHIVE_ENV = 'SASS_EMBEDDED_COMPILER_ARCHIVE'

    # The platforms (+<os>-<cpu>+) the gem knows a package for; the integrity
    # file records each of them. The source gem installs the package of the
    # machine it builds on, so it runs wherever Dart Sass publishes one: 32-bit
    # ARM (hard-float, ARMv7) and RISC-V Linux, and Windows on ARM, too,
    # before platform gems carry them.
    PLATFORMS = %w[linux-x64 linux-arm64 linux-arm linux-riscv64 linux-musl-x64 linux-musl-arm64 linux-musl-arm
                   linux-musl-riscv64 darwin-x64 darwin-arm64 win32-x64 win32-arm64].freeze

    # The RubyGems platform of each platform gem this project builds, by the
    # package it carries (docs/platform-gems.md).
    GEM_PLATFORMS = {
      'linux-x64' => 'x86_64-linux-gnu', 'linux-arm64' => 'aarch64-linux-gnu', 'linux-arm' => 'arm-linux-gnueabihf',
      'linux-riscv64' => 'riscv64-linux-gnu', 'linux-musl-x64' => 'x86_64-linux-musl',
      'linux-musl-arm64' => 'aarch64-linux-musl', 'linux-musl-arm' => 'arm-linux-musleabihf',
      'darwin-x64' => 'x86_64-darwin', 'darwin-arm64' => 'arm64-darwin', 'win32-x64' => 'x64-mingw-ucrt'
    }.freeze

    module_function

    # npm's names of the OSes and CPUs, by RbConfig's. 32-bit ARM is hard
    # float only (armv7l, armv8l, Debian's "arm"): Dart's ARM runtime needs
    # ARMv7 and VFP, which soft-float systems (a host_os ending in "eabi":
    # Debian's armel) do not promise.
    OSES = { /linux/ => 'linux', /darwin/ => 'darwin', /mswin|mingw/ => 'win32' }.freeze
    CPUS = { /\A(x86_64|x64|amd64)\z/ => 'x64', /\A(aarch64|arm64)\z/ => 'arm64', Prebuilt::ARM32 => 'arm',
             /\Ariscv64\z/ => 'riscv64' }.freeze

    # @return [String] the npm package for this platform
    def name(host_os: RbConfig::CONFIG['host_os'], host_cpu: RbConfig::CONFIG['host_cpu'], musl: musl?)
      os = OSES.find { |pattern, _| host_os.match?(pattern) }&.last
      os = 'linux-musl' if os == 'linux' && musl
      cpu = CPUS.find { |pattern, _| host_cpu.match?(pattern) }&.last
      cpu = nil if cpu == 'arm' && host_os.end_with?('eabi')
      platform = "#{os}-#{cpu}"
      return "sass-embedded-#{platform}" if os && cpu && PLATFORMS.include?(platform)

      raise "sass-embedded has no Dart Sass package for #{host_cpu} #{host_os}; set SASS_EMBEDDED_COMPILER"
    end

    # The package a platform gem of +platform+ (a Gem::Platform) carries.
    def of_gem_platform(platform)
      os_cpu = GEM_PLATFORMS.key(platform.to_s) or raise "no compiler package for #{platform}"
      "sass-embedded-#{os_cpu}"
    end

    # The platform of a platform gem built on this machine: RubyGems' own
    # platform without the OS version (+arm64-darwin+, not +arm64-darwin-23+);
    # on Linux the C library, always (+x86_64-linux-gnu+, +x86_64-linux-musl+),
    # as the established gem names them: RubyGems (3.3.22 on) lets a gem
    # named +x86_64-linux+, with none, match a musl machine too, and prefers
    # it there even to the musl gem, which then gets a glibc extension that
    # cannot load. On Windows the C runtime (+x64-mingw-ucrt+). Made from its
    # parts, so that a RubyGems older than 3.3.22 (which reads
    # +x86_64-linux-gnu+ as +x86_64-linux+) keeps the name. This machine's
    # C library is told by the Ruby itself when RubyGems cannot (before
    # 3.3.22 it calls a musl machine +x86_64-linux+). 32-bit ARM is +arm+
    # with the hard-float ABI, +arm-linux-gnueabihf+ and
    # +arm-linux-musleabihf+ (+armv7l+ machines included: RubyGems matches an
    # +arm+ gem to every +armv*+ CPU).
    # @return [Gem::Platform]
    def gem_platform(local = Gem::Platform.local, musl: musl_platform?(local))
      arm32 = local.cpu.to_s.match?(Prebuilt::ARM32)
      runtime = musl ? 'musl' : 'gnu' if local.os == 'linux'
      runtime = "#{runtime}eabihf" if runtime && arm32
      runtime = local.version if local.os == 'mingw'
      Gem::Platform.new([arm32 ? 'arm' : local.cpu, local.os, runtime])
    end

    # Whether +local+ is a musl platform, or, for this machine's, this Ruby
    # runs on musl.
    def musl_platform?(local)
      local.version.to_s.start_with?('musl') || (local == Gem::Platform.local && musl?)
    end

    # Whether this Ruby runs on musl libc (Alpine) rather than glibc, told by
    # the Ruby itself: its +host_os+ (+linux-musl+), or else the program
    # interpreter its executable asks for (+/lib/ld-musl-x86_64.so.1+). Never
    # by what the machine has installed: Debian's +musl+ package puts a musl
    # loader beside glibc.
    def musl?(host_os: RbConfig::CONFIG['host_os'], executable: RbConfig.ruby)
      return false unless host_os.include?('linux')

      host_os.include?('musl') || File.basename(ElfInterpreter.of(executable).to_s).start_with?('ld-musl-')
    end

    # The file that records which package a directory holds: its spec, then
    # its integrity.
    def marker(directory)
      File.join(directory, '.package')
    end

    # Whether +directory+ holds +spec+ installed from an archive with the
    # +expected+ integrity.
    def installed?(directory, spec, expected)
      File.file?(marker(directory)) && File.readlines(marker(directory), chomp: true).first(2) == [spec, expected]
    end

    # Installs this platform's package (or +package+, another platform's, as
    # +rake native:darwin+ packs it) at +version+ into +directory+ unless it
    # is already there.
    # The archive is +archive+ (by default +SASS_EMBEDDED_COMPILER_ARCHIVE+),
    # else a verified copy in +cache+ (a directory, optional), else fetched
    # with +npm pack+. It is verified before it is unpacked; it is unpacked
    # next to +directory+ and renamed into place when complete, so a failure
    # leaves the previous installation (or none), never a partial one.
    # @return [String] the installed package spec
    # @raise [IntegrityError] if the archive's digest is not the pinned one
    def install(directory, version, archive: ENV.fetch(ARCHIVE_ENV, nil), cache: nil, # rubocop:disable Metrics/ParameterLists
                integrity_file: CompilerIntegrity::FILE, package: name)
      spec = "#{package}@#{version}"
      expected = CompilerIntegrity.expected(package, version, file: integrity_file)
      return spec if installed?(directory, spec, expected)

      Dir.mktmpdir('sass-embedded-compiler') do |download|
        tarball, origin = locate(spec, archive, cache, download)
        CompilerIntegrity.verify(tarball, spec, expected, origin: origin_text(origin), file: integrity_file)
        keep_in_cache(tarball, spec, cache) if cache && origin == :npm
        Unpacking.into(directory, tarball, package, version) do |staged|
          File.write(marker(staged), "#{spec}\n#{expected}\n")
        end
      end
      spec
    end

    # A verified copy of +package+@+version+ (another platform's, as +rake
    # test:arm64+ installs it in an arm64 root) in +cache+, fetched with +npm
    # pack+ when the cache holds none that passes the integrity check.
    # @return [String] the archive's path
    def cached_copy(package, version, cache, integrity_file: CompilerIntegrity::FILE)
      spec = "#{package}@#{version}"
      expected = CompilerIntegrity.expected(package, version, file: integrity_file)
      cached = cached_archive(cache, spec)
      return cached if File.file?(cached) && CompilerIntegrity.of(cached) == expected

      Dir.mktmpdir('sass-embedded-compiler') do |download|
        tarball = fetch(spec, download)
        CompilerIntegrity.verify(tarball, spec, expected, origin: origin_text(:npm), file: integrity_file)
        keep_in_cache(tarball, spec, cache)
      end
      cached
    end

    # The archive to install and where it came from.
    def locate(spec, archive, cache, download)
      return [File.expand_path(archive), :archive] if archive && !archive.empty?

      cached = cache && cached_archive(cache, spec)
      return [cached, :cache] if cached && File.file?(cached)

      [fetch(spec, download), :npm]
    end

    # Where +cache+ keeps +spec+'s archive.
    def cached_archive(cache, spec)
      File.join(cache, "#{spec.tr('@', '-')}.tgz")
    end

    # Fetches +spec+ with +npm pack+ into +directory+.
    # @return [String] the tarball
    def fetch(spec, directory)
      unless system('npm', 'pack', spec, '--silent', chdir: directory, out: File::NULL)
        raise "`npm pack #{spec}` failed: the npm client (from Node.js) must be installed and reach its registry. " \
              "Without them, download the package elsewhere (`npm pack #{spec}`) and install with " \
              "#{ARCHIVE_ENV}=/path/to/#{spec.tr('@', '-')}.tgz"
      end
      Dir.glob(File.join(directory, '*.tgz')).first or raise "`npm pack #{spec}` produced no tarball"
    end

    def origin_text(origin)
      { archive: "from #{ARCHIVE_ENV}", cache: 'a cached copy', npm: 'fetched with `npm pack`' }.fetch(origin)
    end

    # Copies a verified archive into the cache (atomically).
    def keep_in_cache(tarball, spec, cache)
      FileUtils.mkdir_p(cache)
      target = cached_archive(cache, spec)
      FileUtils.cp(tarball, "#{target}.tmp")
      File.rename("#{target}.tmp", target)
    end
  end

  # Unpacks a verified package beside its destination and swaps it into
  # place, so that a failure leaves the previous installation or none.
  module Unpacking
    module_function

    # Unpacks +tarball+ into a temporary directory beside +directory+, checks
    # it holds +package+@+version+'s compiler, yields that compiler directory
    # for last touches, then swaps it into place.
    def into(directory, tarball, package, version)
      parent = File.dirname(directory)
      FileUtils.mkdir_p(parent)
      staging = Dir.mktmpdir(".#{File.basename(directory)}-", parent)
      begin
        output, status = Open3.capture2e('tar', '-xzf', tarball, '-C', staging)
        raise "could not unpack #{tarball} with tar: #{output.strip}" unless status.success?

        staged = File.join(staging, 'package', 'dart-sass')
        check_unpacked(File.join(staging, 'package'), package, version)
        yield staged
        replace(directory, staged, File.join(staging, 'previous'))
      ensure
        FileUtils.rm_rf(staging)
      end
    end

    # Raises unless +root+ (an unpacked package) is +package+@+version+ with a compiler.
    def check_unpacked(root, package, version)
      manifest = File.join(root, 'package.json')
      found = File.file?(manifest) ? JSON.parse(File.read(manifest)).values_at('name', 'version') : []
      unless found == [package, version]
        raise "the archive is not #{package}@#{version} (its package.json says #{found.compact.join('@')})"
      end

      script = package.include?('-win32-') ? 'sass.bat' : 'sass'
      return if File.file?(File.join(root, 'dart-sass', script))

      raise "#{package}@#{version} has no dart-sass/#{script}: not a Dart Sass compiler package"
    end

    # Moves +staged+ to +directory+, the previous +directory+ (if any) aside to
    # +aside+ first and back if the move fails.
    def replace(directory, staged, aside)
      previous = File.exist?(directory) || File.symlink?(directory)
      File.rename(directory, aside) if previous
      begin
        File.rename(staged, directory)
      rescue StandardError
        File.rename(aside, directory) if previous
        raise
      end
    end
  end
end
