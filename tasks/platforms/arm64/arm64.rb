# frozen_string_literal: true

module SassEmbeddedBuild
  module Rubies
    # rake test:arm64: the extension built natively for arm64 Linux in a Debian
    # sid arm64 root entered through user-mode emulation (Emulation), with
    # Debian's Ruby of each minor the gems carry (MINORS: sid's, and
    # experimental's where sid has none), cargo and rustc, under each Ruby;
    # its aarch64-linux-gnu platform gem packed there with all of them and
    # installed without a toolchain or network under each; then the Ruby
    # suite under each, emulated. The extension is linked against glibc 2.17 by zig (`rake
    # native:compile`), whose x86-64 binary the copy keeps in its tmp/zig
    # (unpacked from the checkout's wheel): the kernel runs it natively inside
    # the emulated root.
    #
    # The root works in a copy of the checkout kept beside it (rsync'd before
    # each run, the machine's builds and compiler left out), so that its
    # builds, its arm64 compiler and cargo's target directory stay apart from
    # the machine's, and cached for the next run. The gem is copied back into
    # the checkout's pkg/.
    ARM64 = Ruby.new(minor: MINORS.first.minor, suite: 'sid', extra_suites: MINORS.flat_map(&:extra_suites).uniq,
                     architecture: 'arm64',
                     packages: MINORS.flat_map { |minor| %W[ruby#{minor.minor} ruby#{minor.minor}-dev] } +
                               %w[ruby-async cargo rustc] + RACK3,
                     label: 'arm64 Linux (sid root, emulated)')

    # The steps of rake test:arm64 around the run in the root.
    module Arm64
      COMPILER = 'sass-embedded-linux-arm64'
      # How much longer than natively the suite's time budgets are under
      # emulation (SASS_TEST_TIME_SCALE, test_helper.rb); qemu runs the Dart VM
      # and Ruby about ten times slower.
      TIME_SCALE = '10'
      # ELF e_machine of aarch64.
      AARCH64 = 183

      module_function

      # +compiler_cache+: the directory of verified compiler packages.
      def call(checkout, compiler_cache)
        Rubies.prepare([ARM64])
        Emulation.prepare
        archive = CompilerPackage.cached_copy(COMPILER, Sass::Embedded::VERSION, compiler_cache)
        copy = CheckoutCopy.mirror(ARM64, checkout, archive, compiler_cache)
        Zig.executable(File.join(copy, 'tmp', 'zig'), wheels: File.join(checkout, 'tmp', 'zig'))
        environment = { 'SASS_EMBEDDED_COMPILER_ARCHIVE' => archive.sub(checkout, copy),
                        'SASS_EMBEDDED_RUBY_MINORS' => Rubies.minor_names.join(','),
                        'SASS_EMBEDDED_GEM_DIR' => File.join(copy, 'pkg'),
                        'SASS_TEST_TIME_SCALE' => TIME_SCALE,
                        'SASS_TEST_TIMEOUT' => ENV.fetch('SASS_TEST_TIMEOUT', '300') }
        puts "\n== test:arm64: Ruby #{Rubies.minor_names.join(', ')} (#{ARM64.name}), in #{copy}"
        # The extension's build and the suite under emulation, for each minor.
        limit = ENV.fetch('SASS_ARM64_TIMEOUT') { (4800 * Rubies.minor_names.size).to_s }
        run = Rubies.run(ARM64, script, environment, limit:, checkout: copy)
        built = run.output[%r{^built (/\S+\.gem) }, 1]
        check_gem(CheckoutCopy.keep(built, checkout)) if run.success? || built
        Suite.summarize([[ARM64, run]], 'test:arm64')
      end

      # The sh that makes Debian's Ruby of +minor+ $RUBY.
      def use_ruby(minor) = "RUBY=/usr/bin/ruby#{minor}; \"$RUBY\" -v"

      # In the root: the machine, the platform gem, its install, the suite.
      def script
        rubies = Rubies.minor_names.map { |minor| [minor, use_ruby(minor)] }
        <<~SH.tr("\n", ';')
          set -e
          echo "uname -m in the root: $(uname -m)"
          cargo --version
          #{CheckoutCopy.gem_and_suite('aarch64-linux-gnu', rubies).chomp}
        SH
      end

      # The gem left in pkg/ must carry aarch64 binaries: the extension and the
      # compiler's Dart runtime.
      def check_gem(gem)
        CheckoutCopy.unpacked(gem, 'test:arm64') do |tmp|
          extensions = CheckoutCopy.extensions(tmp, 'test:arm64', gem)
          binaries = extensions + [File.join(tmp, 'lib', 'sass', 'embedded', 'dart-sass', 'src', 'dart')]
          binaries.each do |binary|
            machine = File.file?(binary) && File.binread(binary, 20).unpack('a4@18v')
            unless machine == ["\x7FELF".b, AARCH64]
              raise "test:arm64: #{binary.delete_prefix("#{tmp}/")} in #{gem} is not an aarch64 ELF binary"
            end

            glibc = Glibc.floor([binary])
            puts "#{gem}: #{binary.delete_prefix("#{tmp}/")} is an aarch64 ELF binary needing glibc >= #{glibc}"
          end
        end
      end
    end
  end
end
