# frozen_string_literal: true

require 'fileutils'
require 'json'
require 'net/http'
require 'rbconfig'
require 'rubygems/package'
require_relative '../ext/sass_embedded/compiler_package'
require_relative '../lib/sass/embedded/version'
require_relative 'zig'

module SassEmbeddedBuild
  # Builds a platform gem: the source gem's Ruby files plus this platform's
  # Dart Sass compiler and one prebuilt extension per Ruby minor version
  # (+lib/sass/<minor>/sass_embedded.<so|bundle>+), with no extension to build
  # at install. Used by +rake native:gem+ and +rake test:native_gem+.
  module PlatformGem
    # Which minors to pack (e.g. "3.1,3.3"), instead of every one present.
    MINORS_ENV = 'SASS_EMBEDDED_RUBY_MINORS'

    # RubyGems before 3.3.22 cannot tell musl from glibc Linux: a musl gem
    # asks for a RubyGems that can.
    MUSL_RUBYGEMS = '>= 3.3.22'

    module_function

    # The extension's file name ending on +platform+: Ruby loads +.bundle+
    # files on macOS, +.so+ elsewhere.
    def dlext(platform) = platform.os == 'darwin' ? 'bundle' : 'so'

    # @return [Hash{String => String}] Ruby minor => prebuilt extension, for
    #   every build present under +root/lib/sass/+
    def extensions(root, dlext: RbConfig::CONFIG['DLEXT'])
      Dir.glob(File.join(root, 'lib', 'sass', '*', "sass_embedded.#{dlext}"))
         .to_h { |path| [File.basename(File.dirname(path)), path] }
         .select { |minor, _| minor.match?(/\A\d+\.\d+\z/) }
         .sort_by { |minor, _| Gem::Version.new(minor) }.to_h
    end

    # The minors to pack: those named by +wanted+ (+SASS_EMBEDDED_RUBY_MINORS+),
    # each of which must be present, else every one present.
    # @return [Array<String>]
    def ruby_minors(root, wanted = ENV.fetch(MINORS_ENV, nil))
      present = extensions(root).keys
      if wanted && !wanted.strip.empty?
        minors = wanted.split(/[\s,]+/).reject(&:empty?).uniq.sort_by { |minor| Gem::Version.new(minor) }
        missing = minors - present
        raise "#{MINORS_ENV} names #{missing.join(', ')}, not built under lib/sass/ (#{present.join(', ')})" \
          unless missing.empty?

        return minors
      end
      raise 'no extension built under lib/sass/<minor>/: run `rake compile` first' if present.empty?

      present
    end

    # The Ruby requirement that covers exactly +minors+, e.g. 3.1 alone:
    # +['>= 3.1', '< 3.2.dev']+ (+.dev+ also keeps 3.2's previews out).
    # RubyGems requirements are a conjunction of comparisons, so they can only
    # express one contiguous range: minors with a gap (3.1 and 3.3 without
    # 3.2) are refused, since a gem that claims 3.2 would fail at load there.
    # A new major's first minor follows any minor of the previous one (3.4,
    # then 4.0).
    # @return [Array<String>]
    def required_ruby_version(minors)
      versions = minors.map { |minor| Gem::Version.new(minor) }.sort
      versions.each_cons(2) do |lower, upper|
        next if next_minors(lower).include?(upper)

        raise "cannot pack Ruby #{versions.join(', ')}: RubyGems cannot express a gap between #{lower} and " \
              "#{upper}; build the minors between them, or name a contiguous range in #{MINORS_ENV}"
      end
      major, minor = versions.last.segments
      [">= #{versions.first}", "< #{major}.#{minor + 1}.dev"]
    end

    def next_minors(version)
      major, minor = version.segments
      [Gem::Version.new("#{major}.#{minor + 1}"), Gem::Version.new("#{major + 1}.0")]
    end

    # Raises unless +root+'s compiler is +package+ at +version+, verified
    # against the integrity file when it was installed.
    def check_compiler(root, version, package: CompilerPackage.name)
      directory = File.join(root, 'lib', 'sass', 'embedded', 'dart-sass')
      expected = CompilerIntegrity.expected(package, version)
      return if CompilerPackage.installed?(directory, "#{package}@#{version}", expected)

      found = File.file?(CompilerPackage.marker(directory)) ? File.read(CompilerPackage.marker(directory)).split : []
      raise "#{directory} holds #{found.first || 'no compiler'}, not #{package}@#{version} verified as #{expected}: " \
            'run `rake compiler` (or set SASS_EMBEDDED_COMPILER_ARCHIVE to the package and run it)'
    end

    # The native files a platform gem of +minors+ carries: the extensions and
    # the compiler's runtime.
    def binaries(root, minors, dlext: RbConfig::CONFIG['DLEXT'])
      minors.map { |minor| extensions(root, dlext:).fetch(minor) } +
        [File.join(root, 'lib', 'sass', 'embedded', 'dart-sass', 'src', 'dart')].select { |path| File.file?(path) }
    end

    # The platform gem's specification, and each of its files' path here:
    # its Ruby files come from +root+, its extensions and compiler from
    # +native+ (the checkout's own by default; a stage of another
    # platform's for a cross build).
    def specification(root, minors:, platform: CompilerPackage.gem_platform, native: root)
      source = load_gemspec(root)
      spec = source.dup
      built = extensions(native, dlext: dlext(platform))
      compiler = Dir.chdir(native) do
        Dir.glob('lib/sass/embedded/dart-sass/**/*', File::FNM_DOTMATCH).select { |file| File.file?(file) }
      end
      sources = source.files.grep_v(%r{\A(ext/|Cargo\.)}).to_h { |file| [file, File.join(root, file)] }
      compiler.each { |file| sources[file] = File.join(native, file) }
      minors.each { |minor| sources[built.fetch(minor).delete_prefix("#{native}/")] = built.fetch(minor) }
      spec.platform = platform
      spec.extensions = []
      spec.files = sources.keys.sort
      spec.required_ruby_version = required_ruby_version(minors)
      musl = platform.os == 'linux' && platform.version.to_s.start_with?('musl')
      spec.required_rubygems_version = MUSL_RUBYGEMS if musl
      [spec, sources]
    end

    # The source gem's specification, evaluated afresh in +root+ (its file
    # globs are relative; Gem::Specification.load would return a copy cached
    # from wherever it was first loaded).
    def load_gemspec(root)
      path = File.join(root, 'sass-embedded.gemspec')
      spec = Dir.chdir(root) { eval(File.read(path), TOPLEVEL_BINDING.dup, path) } # rubocop:disable Security/Eval
      raise "#{path} did not evaluate to a Gem::Specification" unless spec.is_a?(Gem::Specification)

      spec
    end

    # Builds the platform gem into +out_dir+, from +root+'s Ruby files and
    # +native+'s extensions and compiler.
    # @return [String] the gem's path
    def build(root, out_dir, minors: ruby_minors(root), platform: CompilerPackage.gem_platform, native: root)
      unless CompilerPackage::GEM_PLATFORMS.value?(platform.to_s)
        raise "no platform gem for #{platform}: the compiler packages cover #{CompilerPackage::GEM_PLATFORMS.values}"
      end

      check_compiler(native, Sass::Embedded::VERSION, package: CompilerPackage.of_gem_platform(platform))
      spec, sources = specification(root, minors:, platform:, native:)
      # The compiler's own floor is Dart's (2.18): only the extensions are ours to hold down.
      Glibc.check(extensions(native, dlext: dlext(platform)).values_at(*minors)) if platform.os == 'linux'
      FileUtils.mkdir_p(out_dir)
      target = File.join(File.expand_path(out_dir), spec.file_name)
      # Packed from a copy of exactly its files, where the extensions lose
      # their debug info (line tables: three quarters of their size).
      Dir.mktmpdir('sass-embedded-platform-gem') do |stage|
        spec.files.each do |file|
          FileUtils.mkdir_p(File.join(stage, File.dirname(file)))
          FileUtils.cp(sources.fetch(file), File.join(stage, file), preserve: true)
        end
        # macOS bundles are linked without debug symbols (-Wl,-S), and
        # stripping one after the link would void its arm64 signature.
        strip_debug_info(extensions(stage, dlext: dlext(platform)).values_at(*minors)) unless platform.os == 'darwin'
        Dir.chdir(stage) { FileUtils.mv(Gem::Package.build(spec), target) }
      end
      target
    end

    # Removes debug info with +strip -S+ (GNU and Apple strip alike) unless
    # +SASS_EMBEDDED_STRIP=0+; symbol names stay, so panics still name their
    # functions.
    def strip_debug_info(paths)
      return if ENV['SASS_EMBEDDED_STRIP'] == '0'

      strip = ENV.fetch('STRIP', 'strip')
      paths.each do |path|
        next if system(strip, '-S', path)

        warn "#{strip} -S #{path} failed: packing it with its debug info (set STRIP or install binutils)"
      end
    end
  end

  # What makes two builds of one commit give the same bytes.
  module Reproducible
    module_function

    # RUSTFLAGS (the caller's, then these) that keep build paths out of a
    # platform gem's binary: the checkout's (cargo's target directory is in
    # it: build scripts' OUT_DIR lands in panic locations) and cargo's home
    # (the crates' sources), so a build of one commit elsewhere gives the
    # same bytes. RUSTFLAGS is split at spaces: a path holding one is left
    # as it is, with a warning.
    def path_free_rustflags(checkout, cargo_home: ENV.fetch('CARGO_HOME', File.join(Dir.home, '.cargo')))
      remaps = { checkout => '.', cargo_home => 'cargo' }.filter_map do |path, name|
        next "--remap-path-prefix=#{path}=#{name}" unless path.match?(/\s/)

        warn "#{path} holds a space: it stays in the extension's binary (RUSTFLAGS cannot carry it)"
      end
      [ENV.fetch('RUSTFLAGS', nil), *remaps].compact.reject(&:empty?).join(' ')
    end
  end

  # The glibc a Linux platform gem needs: its extensions are linked against
  # an old glibc's symbol versions (FLOOR) by zig, whatever glibc the
  # machine has (tasks/platforms/glibc/zig-cc), and checked from their binaries.
  module Glibc
    # What a Linux glibc platform gem's extensions are linked against, and
    # the most they may need (the bundled compiler's own floor is Dart's,
    # 2.18: a user with an older glibc runs a compiler of their own through
    # SASS_EMBEDDED_COMPILER, and the extension still loads).
    FLOOR = '2.17'
    # Where glibc begins later than FLOOR, by Ruby's CPU: RISC-V's first
    # glibc is 2.27 (zig offers no older one).
    FLOORS = { 'riscv64' => '2.27' }.freeze
    # The glibc to link a build against: a version (`rake compile` links
    # with the machine's linker unless told; `rake native:gem` with FLOOR
    # unless told), or "system" for the machine's linker.
    FLOOR_ENV = 'SASS_EMBEDDED_GLIBC'
    # The newest glibc a platform gem's extensions may require (FLOOR unless
    # told; e.g. 2.28); empty, any.
    MAX_GLIBC_ENV = 'SASS_EMBEDDED_MAX_GLIBC'

    module_function

    # The glibc +SASS_EMBEDDED_GLIBC+ names (nil: the machine's linker),
    # +default+ when unset. Only a glibc Linux build has one.
    def requested(default = nil)
      return nil unless glibc_linux?

      wanted = ENV.fetch(FLOOR_ENV, '').strip
      wanted = default.to_s if wanted.empty?
      return nil if wanted.empty? || wanted == 'system'
      raise "#{FLOOR_ENV}=#{wanted}: a glibc version (e.g. #{FLOOR}) or system" unless wanted.match?(/\A2\.\d+\z/)

      wanted
    end

    def glibc_linux?
      RbConfig::CONFIG['host_os'].start_with?('linux') && !CompilerPackage.musl?
    end

    # What a gem for +cpu+ (Ruby's or RubyGems' name) links against: FLOOR,
    # or the CPU's first glibc where that came later.
    def floor_for(cpu = RbConfig::CONFIG['host_cpu']) = FLOORS.fetch(cpu, FLOOR)

    # Rust's and zig's names of a glibc Linux target, by Ruby's CPU: 32-bit
    # ARM is ARMv7 with hard float (what Debian's armhf rustc builds for),
    # RISC-V the general-purpose 64-bit ISA.
    TRIPLES = { 'arm' => %w[armv7-unknown-linux-gnueabihf arm-linux-gnueabihf],
                'riscv64' => %w[riscv64gc-unknown-linux-gnu riscv64-linux-gnu] }.freeze

    # cargo's environment for a build linked by zig against +glibc+'s symbol
    # versions (zig unpacked under tmp/zig first, fetched with pip once: a
    # build in a root finds it there, through the checkout).
    def link_environment(root, glibc, cpu: RbConfig::CONFIG['host_cpu'])
      cpu = 'arm' if cpu.match?(Prebuilt::ARM32)
      rust, zig = TRIPLES.fetch(cpu) { ["#{cpu}-unknown-linux-gnu", "#{cpu}-linux-gnu"] }
      { "CARGO_TARGET_#{rust.upcase.tr('-', '_')}_LINKER" => File.join(root, 'tasks', 'platforms', 'glibc', 'zig-cc'),
        'SASS_EMBEDDED_ZIG' => Zig.executable(File.join(root, 'tmp', 'zig')),
        'SASS_EMBEDDED_ZIG_TARGET' => "#{zig}.#{glibc}" }
    end

    # The oldest glibc that can load every file of +paths+: the newest symbol
    # version they ask of it (the build machine's glibc decides it, so a
    # release builds on an old one). nil for files that need no glibc.
    # @return [Gem::Version, nil]
    def floor(paths)
      paths.flat_map { |path| File.binread(path).scan(/GLIBC_(\d+\.\d+(?:\.\d+)?)\0/).flatten }
           .map { |version| Gem::Version.new(version) }.max
    end

    # Raises if the extensions +paths+ (for +cpu+) need a glibc newer than
    # +SASS_EMBEDDED_MAX_GLIBC+ (the CPU's floor_for unless set).
    def check(paths, cpu: RbConfig::CONFIG['host_cpu'], max: ENV.fetch(MAX_GLIBC_ENV) { floor_for(cpu) })
      needed = floor(paths)
      return needed if needed.nil? || max.nil? || max.empty? || needed <= Gem::Version.new(max)

      raise "the platform gem's extensions would need glibc >= #{needed}, above #{max} (#{MAX_GLIBC_ENV}): build its " \
            "extensions with `rake native:compile` (linked against glibc #{floor_for(cpu)} by zig; under " \
            "#{FLOOR_ENV}=system, by the machine's linker)"
    end
  end

  # Rewrites +compiler_integrity.json+ with every platform's package
  # integrity at a version, from the npm registry's metadata.
  module IntegrityFile
    REGISTRY = 'https://registry.npmjs.org'

    module_function

    def refresh(version, file: CompilerIntegrity::FILE,
                registry: ENV.fetch('npm_config_registry', nil) || REGISTRY)
      packages = CompilerPackage::PLATFORMS.to_h do |platform|
        package = "sass-embedded-#{platform}"
        [package, fetch(registry, package, version)]
      end
      File.write("#{file}.tmp", "#{JSON.pretty_generate({ 'version' => version, 'packages' => packages })}\n")
      File.rename("#{file}.tmp", file)
      packages
    end

    # npm's +dist.integrity+ of +package+@+version+.
    def fetch(registry, package, version)
      uri = URI("#{registry.chomp('/')}/#{package}/#{version}")
      response = Net::HTTP.get_response(uri)
      raise "#{package}@#{version} is not on #{registry} (HTTP #{response.code} from #{uri})" \
        unless response.is_a?(Net::HTTPSuccess)

      integrity = JSON.parse(response.body).dig('dist', 'integrity')
      return integrity if integrity.to_s.match?(%r{\Asha512-[A-Za-z0-9+/]{86}==\z})

      raise "#{uri} gives no SHA-512 integrity (#{integrity.inspect})"
    end
  end
end
