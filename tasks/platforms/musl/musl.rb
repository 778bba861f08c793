# frozen_string_literal: true

require 'open3'

module SassEmbeddedBuild
  module Rubies
    # rake test:musl, test:musl_arm64 and test:musl_armhf: x86_64-linux-musl,
    # aarch64-linux-musl and arm-linux-musleabihf proven with a musl Ruby, in
    # a Debian sid root (the machine itself never gets musl's loader: the gem
    # would take the machine's glibc Ruby for musl); the arm64 and armhf ones
    # are roots of that architecture entered through user-mode emulation
    # (Emulation), as test:arm64's. There, once and
    # cached (tasks/platforms/musl/toolchain.sh, one recipe for both CPUs): a
    # Ruby of each minor the gems carry (MINORS) built with musl-gcc from
    # Debian's upstream tarball, and a stand-in for musl's missing libgcc_s.
    # Then, in a copy of the checkout (CheckoutCopy), under each of those
    # Rubies: the extension built through extconf.rb's own musl path (what
    # `gem install` runs; sid's rustc builds std for the musl target from
    # rust-src); the platform gem packed with all of them; and under each
    # again, the gem installed offline with only `ruby` and `gem` on PATH and
    # the whole Ruby suite with the musl compiler package. The gem is copied
    # into the checkout's pkg/.
    #
    # Decided for arm64 (and armhf after it): everything is built inside the emulated root with the
    # x86-64 task's own recipe (no second copy of it), but its C parts (zlib,
    # OpenSSL, the Rubies) compiled by zig, which the kernel runs natively
    # there (tasks/platforms/musl/zig-cc): gcc under qemu took about three hours
    # for one Ruby. rustc still runs under qemu; the toolchain and cargo's
    # target directory are then cached.
    MUSL_PACKAGES = %w[ruby3.3 rustc cargo rust-src musl musl-dev musl-tools dpkg-dev xz-utils].freeze
    MUSL = Ruby.new(minor: '3.3', suite: 'sid', extra_suites: [], purpose: 'musl', deb_src: %w[sid],
                    packages: MUSL_PACKAGES + RACK3, label: 'musl (sid root)')
    MUSL_ARM64 = Ruby.new(minor: '3.3', suite: 'sid', extra_suites: [], architecture: 'arm64', purpose: 'musl',
                          deb_src: %w[sid], packages: MUSL_PACKAGES + RACK3,
                          label: 'musl on arm64 (sid root, emulated)')
    # A 32-bit guest of qemu-user has its whole address space reserved, so
    # the probe with which musl finds the main thread's stack (mremap one
    # page lower until that fails with other than ENOMEM) runs down to
    # address 0: Ruby then takes the stack to be a gigabyte and touches its
    # far end at start (reserve_stack), and every Ruby, even miniruby during
    # its build, dies at once. Ruby skips that where the stack has no limit,
    # which must be set before entering the root: qemu-user ignores a
    # guest's setrlimit of the stack. Emulation's only: on an ARM machine
    # the probe stops at the stack's guard page.
    MUSL_ARMHF = Ruby.new(minor: '3.3', suite: 'sid', extra_suites: [], architecture: 'armhf', purpose: 'musl',
                          deb_src: %w[sid], packages: MUSL_PACKAGES + RACK3, unlimited_stack: true,
                          label: 'musl on 32-bit ARM (sid root, emulated)')

    # The steps of rake test:musl, test:musl_arm64 and test:musl_armhf around the run in the root.
    module Musl
      # One musl platform: its name (SASS_PLATFORMS') and task, root, gem
      # platform, compiler package, Rust target, GNU triple (zig's target,
      # and where Debian's musl-dev keeps its headers), the ELF machine
      # (e_machine and name) and loader its binaries must have, and its time
      # limit per Ruby minor (a release's).
      Target = Struct.new(:name, :ruby, :platform, :compiler, :rust, :triple, :machine, :cpu, :loader, :limit,
                          keyword_init: true) do
        def task = "test:#{name}"
        def emulated = ruby.foreign?
      end

      X86_64 = Target.new(name: 'musl', ruby: MUSL, platform: 'x86_64-linux-musl',
                          compiler: 'sass-embedded-linux-musl-x64', rust: 'x86_64-unknown-linux-musl',
                          triple: 'x86_64-linux-musl', machine: 62, cpu: 'x86-64', loader: 'ld-musl-x86_64',
                          limit: 3600)
      # Cold, the musl Rubies and the extension are built under qemu.
      AARCH64 = Target.new(name: 'musl_arm64', ruby: MUSL_ARM64, platform: 'aarch64-linux-musl',
                           compiler: 'sass-embedded-linux-musl-arm64', rust: 'aarch64-unknown-linux-musl',
                           triple: 'aarch64-linux-musl', machine: Ports::AARCH64, cpu: 'aarch64',
                           loader: 'ld-musl-aarch64', limit: 10_800)
      ARMHF = Target.new(name: 'musl_armhf', ruby: MUSL_ARMHF, platform: 'arm-linux-musleabihf',
                         compiler: 'sass-embedded-linux-musl-arm', rust: 'armv7-unknown-linux-musleabihf',
                         triple: 'arm-linux-musleabihf', machine: Ports::ARM, cpu: '32-bit ARM',
                         loader: 'ld-musl-armhf', limit: 10_800)
      TARGETS = [X86_64, AARCH64, ARMHF].freeze

      # Where the root keeps the musl Ruby and the unwinder (toolchain.sh).
      PREFIX = '/opt/sass-embedded-musl'
      # OpenSSL for the musl Ruby's openssl extension (RubyGems needs it to
      # build or install a gem): upstream's 3.5 LTS tarball, which Debian's
      # mirror keeps as the orig tarball, checked against upstream's SHA-256.
      OPENSSL_VERSION = '3.5.4'
      OPENSSL_SHA256 = '967311f84955316969bdb1d8d4b983718ef42338639c621ec4c34fddef355e99'

      module_function

      # +compiler_cache+: the directory of verified compiler packages.
      def call(target, checkout, compiler_cache)
        ruby = target.ruby
        Rubies.prepare([ruby])
        Emulation.prepare(target.ruby) if target.emulated
        archive = CompilerPackage.cached_copy(target.compiler, Sass::Embedded::VERSION,
                                              compiler_cache)
        copy = CheckoutCopy.mirror(ruby, checkout, archive, compiler_cache)
        environment = { 'SASS_EMBEDDED_COMPILER_ARCHIVE' => archive.sub(checkout, copy),
                        'SASS_MUSL_OPENSSL' => openssl_tarball(copy), 'SASS_MUSL_RUBIES' => ruby_tarballs(copy),
                        'SASS_EMBEDDED_RUBY_MINORS' => Rubies.minor_names.join(','),
                        'SASS_EMBEDDED_GEM_DIR' => File.join(copy, 'pkg') }
        # The toolchain (cached), then the extension's build and the suite for each minor.
        limit = ENV.fetch('SASS_MUSL_TIMEOUT') do
          ((target.emulated ? 5400 : 1800) * (1 + Rubies.minor_names.size)).to_s
        end
        environment.merge!(emulated_environment(target, checkout, copy)) if target.emulated
        puts "\n== #{target.task}: Ruby #{Rubies.minor_names.join(', ')} built for musl " \
             "(root #{Roots.path(ruby)}), in #{copy}"
        run = Rubies.run(ruby, script(target), environment, limit:, checkout: copy)
        built = run.output[%r{^built (/\S+\.gem) }, 1]
        Check.call(target, CheckoutCopy.keep(built, checkout)) if run.success? || built
        Suite.summarize([[ruby, run]], target.task)
      end

      # An emulated root's: the suite's time budgets scaled as test:arm64's,
      # and zig (kept in the copy's tmp/zig) as the toolchain's C compiler.
      def emulated_environment(target, checkout, copy)
        zig = Zig.executable(File.join(copy, 'tmp', 'zig'),
                             wheels: File.join(checkout, 'tmp', 'zig'))
        { 'SASS_TEST_TIME_SCALE' => Ports::TIME_SCALE, 'SASS_TEST_TIMEOUT' => ENV.fetch('SASS_TEST_TIMEOUT', '300'),
          'SASS_MUSL_CC' => File.join(copy, 'tasks', 'platforms', 'musl', 'zig-cc'), 'SASS_MUSL_ZIG' => zig,
          'SASS_MUSL_ZIG_TARGET' => target.triple }
      end

      # OpenSSL's tarball in +copy+'s tmp/ (kept there), fetched from the
      # Debian mirror and verified.
      def openssl_tarball(copy)
        Mirror.file("pool/main/o/openssl/openssl_#{OPENSSL_VERSION}.orig.tar.gz", OPENSSL_SHA256,
                    File.join(copy, 'tmp', 'musl-sources', "openssl-#{OPENSSL_VERSION}.tar.gz"))
      end

      # Each minor's Ruby tarball in +copy+'s tmp/, verified, as the
      # toolchain takes them: "MINOR=TARBALL ...".
      def ruby_tarballs(copy)
        directory = File.join(copy, 'tmp', 'musl-sources')
        Rubies.minor_names.map { |minor| "#{minor}=#{Mirror.ruby_tarball(minor, directory)}" }.join(' ')
      end

      # The sh that makes the musl Ruby of +minor+ $RUBY and first on PATH
      # (before the root's own PATH, kept in $root_path), its gems and
      # Debian's pure-Ruby ones (Rack) on GEM_PATH.
      # How `rake release:install` installs +target+'s gem under +minor+
      # (Platforms.table's +install+).
      def install(target, minor)
        [target.ruby, target.compiler, "root_path=$PATH; #{use_ruby(minor)}",
         "Ruby #{minor} built for musl (#{target.ruby.root_name} root)"]
      end

      def use_ruby(minor) = CheckoutCopy.use_built_ruby("#{PREFIX}/ruby-#{minor}/bin")

      # In the root: the toolchain (cached), then under the musl Rubies the
      # platform gem (each one's extension built through extconf.rb by rake
      # native:compile, then packed together), its offline install and the
      # suite under each. Cargo builds for the musl target with std from
      # rust-src, linked by musl-gcc, bindgen reading musl's headers;
      # extconf.rb adds -crt-static to these RUSTFLAGS itself.
      def script(target)
        rust = target.rust
        rubies = Rubies.minor_names.map { |minor| [minor, use_ruby(minor)] }
        <<~SH.tr("\n", ';')
          set -e
          echo "uname -m in the root: $(uname -m)"
          sh tasks/platforms/musl/toolchain.sh #{PREFIX} "$SASS_MUSL_OPENSSL" $SASS_MUSL_RUBIES
          root_path=$PATH
          #{rubies.last.last}
          "$RUBY" -e 'puts "Gem::Platform.local: \#{Gem::Platform.local}"'
          llvm=$(ls -d /usr/lib/llvm-[0-9]* | sort -V | tail -1)
          export LIBCLANG_PATH=$llvm/lib
          export BINDGEN_EXTRA_CLANG_ARGS_#{rust.tr('-', '_')}="-isystem /usr/include/#{target.triple} -isystem $(ls -d $llvm/lib/clang/*/include | tail -1)"
          export RUSTC_BOOTSTRAP=1 CARGO_BUILD_TARGET=#{rust} CARGO_UNSTABLE_BUILD_STD="std panic_unwind"
          export CARGO_TARGET_#{rust.upcase.tr('-', '_')}_LINKER=musl-gcc
          export RUSTFLAGS="-L native=#{PREFIX}/unwind"
          rustc --version
          #{CheckoutCopy.gem_and_suite(target.platform, rubies).chomp}
        SH
      end

      # The gem left in pkg/ must carry musl binaries: an extension of the
      # target's CPU for each minor, that needs musl's C library and no glibc
      # symbol version, and the musl compiler package (its Dart runtime asks
      # for musl's loader).
      module Check
        module_function

        def call(target, gem)
          CheckoutCopy.unpacked(gem, target.task) do |tmp|
            extensions = CheckoutCopy.extensions(tmp, target.task, gem)
            extensions.each { |extension| check_extension(target, gem, tmp, extension) }
            dart = File.join(tmp, 'lib', 'sass', 'embedded', 'dart-sass', 'src', 'dart')
            check_machine(target, gem, 'the compiler', dart)
            interpreter = SassEmbeddedBuild::ElfInterpreter.of(dart)
            unless interpreter&.include?(target.loader)
              raise "#{target.task}: the compiler in #{gem} asks for #{interpreter.inspect}, not musl's loader"
            end

            puts "#{gem}: the compiler's Dart runtime is an #{target.cpu} ELF running under #{interpreter}"
          end
        end

        def check_machine(target, gem, name, binary)
          machine = File.binread(binary, 20).unpack('a4@18v')
          return if machine == ["\x7FELF".b, target.machine]

          raise "#{target.task}: #{name} in #{gem} is not an #{target.cpu} ELF binary"
        end

        def check_extension(target, gem, tmp, extension)
          name = extension.delete_prefix("#{tmp}/")
          check_machine(target, gem, name, extension)
          dynamic, = Open3.capture2('readelf', '--dynamic', '--wide', extension)
          versions, = Open3.capture2('readelf', '--version-info', '--wide', extension)
          needed = dynamic.scan(/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/).flatten
          unless needed.include?('libc.so') && needed.none? { |library| library.start_with?('libc.so.') }
            raise "#{target.task}: #{name} needs #{needed.inspect}, not musl's libc.so"
          end
          raise "#{target.task}: #{name} asks for glibc symbol versions" if versions.include?('GLIBC_')

          puts "#{gem}: #{name} is an #{target.cpu} ELF needing #{needed.join(', ')}, with no glibc symbol version"
        end
      end
    end
  end
end
