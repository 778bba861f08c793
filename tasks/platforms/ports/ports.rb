# frozen_string_literal: true

module SassEmbeddedBuild
  module Rubies
    # rake test:arm64, test:armhf, test:riscv64: a glibc Linux gem for a CPU
    # Debian ports, its extension built natively in a Debian sid root of that
    # architecture entered through user-mode emulation (Emulation), with
    # Debian's Ruby of each minor the gems carry (MINORS: sid's, and
    # experimental's where sid has none; a minor Debian does not package for
    # the architecture is built from its tarball in the root, once, and kept
    # there: tasks/roots/source_ruby.sh), cargo and rustc, under each Ruby;
    # its platform gem packed
    # there with all of them and installed without a toolchain or network
    # under each; then the Ruby suite under each, emulated. The extension is
    # linked against glibc 2.17 (RISC-V: 2.27, its first) by zig (`rake
    # native:compile`), whose x86-64
    # binary the copy keeps in its tmp/zig (unpacked from the checkout's
    # wheel): the kernel runs it natively inside the emulated root.
    #
    # The root works in a copy of the checkout kept beside it (rsync'd before
    # each run, the machine's builds and compiler left out), so that its
    # builds, its compiler and cargo's target directory stay apart from the
    # machine's, and cached for the next run. The gem is copied back into the
    # checkout's pkg/.
    #
    # A port is one Port: its task's name, Debian's architecture, the gem's
    # platform, the compiler package it carries, the ELF machine (and its
    # name) of its binaries, and glibc's loader there, which the compiler's
    # runtime must ask for.
    Port = Struct.new(:name, :architecture, :platform, :compiler, :machine, :cpu, :loader, :label,
                      keyword_init: true) do
      def task = "test:#{name}"

      # The root: sid, with every minor's Ruby Debian packages for the
      # architecture, and what builds the others.
      def root
        @root ||= Ruby.new(minor: packaged.first.minor, suite: 'sid',
                           extra_suites: packaged.flat_map(&:extra_suites).uniq, architecture:,
                           packages: packaged.flat_map { |minor| %W[ruby#{minor.minor} ruby#{minor.minor}-dev] } +
                                     %w[ruby-async cargo rustc] + RACK3 + (built.empty? ? [] : Ports::SOURCE_BUILD),
                           label: "#{label} (sid root, emulated)")
      end

      # The minors whose Ruby Debian packages for the architecture, and the
      # others (built in the root).
      def packaged = MINORS.select { |minor| minor.packaged_for?(architecture) }
      def built = MINORS - packaged

      # +compiler_cache+: the directory of verified compiler packages.
      def call(checkout, compiler_cache)
        Rubies.prepare([root])
        Emulation.prepare(root)
        archive = CompilerPackage.cached_copy(compiler, Sass::Embedded::VERSION, compiler_cache)
        copy = mirror(checkout, archive, compiler_cache)
        puts "\n== #{task}: Ruby #{Rubies.minor_names.join(', ')} (#{root.name}), in #{copy}"
        # The extension's build and the suite under emulation, for each minor.
        limit = ENV.fetch("SASS_#{name.upcase}_TIMEOUT") { (4800 * Rubies.minor_names.size).to_s }
        run = Rubies.run(root, script, environment(archive.sub(checkout, copy), copy), limit:, checkout: copy)
        gem = run.output[%r{^built (/\S+\.gem) }, 1]
        check_gem(CheckoutCopy.keep(gem, checkout)) if run.success? || gem
        Suite.summarize([[root, run]], task)
      end

      # The copy of +checkout+ the root works in, with the compiler package
      # +archive+, zig, and the tarballs of the Rubies the root builds.
      def mirror(checkout, archive, compiler_cache)
        copy = CheckoutCopy.mirror(root, checkout, archive, compiler_cache)
        built.each { |minor| Mirror.ruby_tarball(minor.minor, File.join(copy, Ports::TARBALLS)) }
        Zig.executable(File.join(copy, 'tmp', 'zig'), wheels: File.join(checkout, 'tmp', 'zig'))
        copy
      end

      # The run's environment in the root: the compiler package +archive+,
      # the minors, where the gem goes, the suite's time budgets.
      def environment(archive, copy)
        { 'SASS_EMBEDDED_COMPILER_ARCHIVE' => archive, 'SASS_EMBEDDED_RUBY_MINORS' => Rubies.minor_names.join(','),
          'SASS_EMBEDDED_GEM_DIR' => File.join(copy, 'pkg'), 'SASS_TEST_TIME_SCALE' => Ports::TIME_SCALE,
          'SASS_TEST_TIMEOUT' => ENV.fetch('SASS_TEST_TIMEOUT', '300') }
      end

      # The sh that makes the Ruby of +minor+ $RUBY and first on PATH (before
      # the root's own, kept in $root_path): Debian's, or the one built in
      # the root, with Debian's pure-Ruby gems (Rack) on its GEM_PATH, as the
      # musl Rubies have them.
      def use_ruby(minor)
        keep = 'root_path=${root_path:-$PATH}; '
        if built.any? { |source| source.minor == minor }
          "#{keep}#{CheckoutCopy.use_built_ruby("#{prefix(minor)}/bin")}"
        else
          "#{keep}export PATH=$root_path RUBY=/usr/bin/ruby#{minor}; unset GEM_PATH; \"$RUBY\" -v"
        end
      end

      # Where the root keeps the Ruby of +minor+ it builds.
      def prefix(minor) = "/opt/sass-embedded-ruby#{minor}"

      # In the root: the machine, the Rubies it builds (cached there), the
      # platform gem, its install, the suite.
      def script
        rubies = Rubies.minor_names.map { |minor| [minor, use_ruby(minor)] }
        sources = built.map do |minor|
          tarball = File.join(Ports::TARBALLS, File.basename(minor.tarball))
          "sh tasks/roots/source_ruby.sh #{prefix(minor.minor)} #{tarball}\n"
        end
        <<~SH.tr("\n", ';')
          set -e
          echo "uname -m in the root: $(uname -m)"
          cargo --version
          #{sources.join}#{CheckoutCopy.gem_and_suite(platform, rubies).chomp}
        SH
      end

      # The gem left in pkg/ must carry the CPU's binaries: the extensions,
      # needing no newer glibc than the CPU's floor, and the compiler's Dart
      # runtime, asking for glibc's loader.
      def check_gem(gem)
        CheckoutCopy.unpacked(gem, task) do |tmp|
          extensions = CheckoutCopy.extensions(tmp, task, gem)
          Glibc.check(extensions, cpu: Gem::Platform.new(platform).cpu)
          dart = File.join(tmp, 'lib', 'sass', 'embedded', 'dart-sass', 'src', 'dart')
          interpreter = SassEmbeddedBuild::ElfInterpreter.of(dart) if File.file?(dart)
          raise "#{task}: the compiler in #{gem} asks for #{interpreter.inspect}, not #{loader}" \
            unless interpreter&.include?(loader)

          binaries = extensions + [dart]
          binaries.each do |binary|
            elf = File.file?(binary) && File.binread(binary, 20).unpack('a4@18v')
            unless elf == ["\x7FELF".b, machine]
              raise "#{task}: #{binary.delete_prefix("#{tmp}/")} in #{gem} is not an #{cpu} ELF binary"
            end

            glibc = Glibc.floor([binary])
            puts "#{gem}: #{binary.delete_prefix("#{tmp}/")} is an ELF binary for #{cpu} needing glibc >= #{glibc}"
          end
        end
      end
    end

    # The ports this machine builds gems for.
    module Ports
      # What a root needs to build a Ruby (tasks/roots/source_ruby.sh).
      SOURCE_BUILD = %w[gcc make pkgconf libssl-dev libyaml-dev zlib1g-dev libffi-dev xz-utils].freeze
      # Where a copy keeps the tarballs of the Rubies its root builds.
      TARBALLS = File.join('tmp', 'ruby-tarballs')
      # How much longer than natively the suite's time budgets are under
      # emulation (SASS_TEST_TIME_SCALE, test_helper.rb); qemu runs the Dart VM
      # and Ruby about ten times slower.
      TIME_SCALE = '10'
      # ELF e_machine of each CPU.
      AARCH64 = 183
      ARM = 40
      RISCV = 243

      ARM64 = Port.new(name: 'arm64', architecture: 'arm64', platform: 'aarch64-linux-gnu',
                       compiler: 'sass-embedded-linux-arm64', machine: AARCH64, cpu: 'aarch64',
                       loader: 'ld-linux-aarch64.so.1', label: 'arm64 Linux')
      ARMHF = Port.new(name: 'armhf', architecture: 'armhf', platform: 'arm-linux-gnueabihf',
                       compiler: 'sass-embedded-linux-arm', machine: ARM, cpu: '32-bit ARM',
                       loader: 'ld-linux-armhf.so.3', label: '32-bit ARM Linux')
      RISCV64 = Port.new(name: 'riscv64', architecture: 'riscv64', platform: 'riscv64-linux-gnu',
                         compiler: 'sass-embedded-linux-riscv64', machine: RISCV, cpu: '64-bit RISC-V',
                         loader: 'ld-linux-riscv64-lp64d.so.1', label: 'RISC-V Linux')
      ALL = [ARM64, ARMHF, RISCV64].freeze
    end

    # test:arm64's root (test:rubies' rootless list and the release name it).
    ARM64 = Ports::ARM64.root
  end
end
