# frozen_string_literal: true

require 'open3'

module SassEmbeddedRubies
  # rake test:musl: x86_64-linux-musl proven natively with a musl Ruby, in a
  # Debian sid root (the machine itself never gets musl's loader: the gem
  # would take the machine's glibc Ruby for musl). There, once and cached
  # (tasks/rubies/musl/toolchain.sh): a Ruby 3.3 built with musl-gcc from
  # Debian's upstream tarball, and a stand-in for musl's missing libgcc_s.
  # Then, in a copy of the checkout (CheckoutCopy), under that Ruby: the
  # extension built through extconf.rb's own musl path (what `gem install`
  # runs; sid's rustc builds std for the musl target from rust-src), the
  # x86_64-linux-musl platform gem packed and installed offline with only
  # `ruby` and `gem` on PATH, and the whole Ruby suite with the musl
  # compiler package. The gem is copied into the checkout's pkg/.
  MUSL = Ruby.new(minor: '3.3', suite: 'sid', extra_suites: [], purpose: 'musl', deb_src: %w[sid],
                  packages: %w[ruby3.3 rustc cargo rust-src musl musl-dev musl-tools dpkg-dev xz-utils] + RACK3,
                  label: '3.3 built for musl (sid root)')

  # The steps of rake test:musl around the run in the root.
  module Musl
    COMPILER = 'sass-embedded-linux-musl-x64'
    TARGET = 'x86_64-unknown-linux-musl'
    # Where the root keeps the musl Ruby and the unwinder (toolchain.sh).
    PREFIX = '/opt/sass-embedded-musl'
    # ELF e_machine of x86-64.
    X86_64 = 62
    # OpenSSL for the musl Ruby's openssl extension (RubyGems needs it to
    # build or install a gem): upstream's 3.5 LTS tarball, which Debian's
    # mirror keeps as the orig tarball, checked against upstream's SHA-256.
    OPENSSL_VERSION = '3.5.4'
    OPENSSL_SHA256 = '967311f84955316969bdb1d8d4b983718ef42338639c621ec4c34fddef355e99'

    module_function

    # +compiler_cache+: the directory of verified compiler packages.
    def call(checkout, compiler_cache)
      SassEmbeddedRubies.prepare([MUSL])
      archive = SassEmbeddedBuild::CompilerPackage.cached_copy(COMPILER, Sass::Embedded::VERSION, compiler_cache)
      copy = CheckoutCopy.mirror(MUSL, checkout, archive, compiler_cache)
      environment = { 'SASS_EMBEDDED_COMPILER_ARCHIVE' => archive.sub(checkout, copy),
                      'SASS_MUSL_OPENSSL' => openssl_tarball(copy),
                      'SASS_EMBEDDED_RUBY_MINORS' => MUSL.minor, 'SASS_EMBEDDED_GEM_DIR' => File.join(copy, 'pkg') }
      puts "\n== test:musl: Ruby #{MUSL.name}, in #{copy}"
      run = SassEmbeddedRubies.run(MUSL, script, environment, limit: ENV.fetch('SASS_MUSL_TIMEOUT', '3600'),
                                                              checkout: copy)
      built = run.output[%r{^built (/\S+\.gem) }, 1]
      check_gem(CheckoutCopy.keep(built, checkout)) if run.success? || built
      Suite.summarize([[MUSL, run]], 'test:musl')
    end

    # OpenSSL's tarball in +copy+'s tmp/ (kept there), fetched from the
    # Debian mirror and verified.
    def openssl_tarball(copy)
      Mirror.file("pool/main/o/openssl/openssl_#{OPENSSL_VERSION}.orig.tar.gz", OPENSSL_SHA256,
                  File.join(copy, 'tmp', 'musl-sources', "openssl-#{OPENSSL_VERSION}.tar.gz"))
    end

    # In the root: the toolchain (cached), then under the musl Ruby the
    # platform gem (rake native:gem builds the extension first, through
    # extconf.rb), its offline install, and the suite. Cargo builds for the
    # musl target with std from rust-src, linked by musl-gcc, bindgen reading
    # musl's headers; extconf.rb adds -crt-static to these RUSTFLAGS itself.
    def script
      <<~SH.tr("\n", ';')
        set -e
        sh tasks/rubies/musl/toolchain.sh #{PREFIX} "$SASS_MUSL_OPENSSL"
        export PATH=#{PREFIX}/ruby/bin:$PATH RUBY=#{PREFIX}/ruby/bin/ruby
        export GEM_PATH=$("$RUBY" -e 'print Gem.default_dir'):/usr/share/rubygems-integration/all
        "$RUBY" -v
        "$RUBY" -e 'puts "Gem::Platform.local: \#{Gem::Platform.local}"'
        llvm=$(ls -d /usr/lib/llvm-[0-9]* | sort -V | tail -1)
        export LIBCLANG_PATH=$llvm/lib
        export BINDGEN_EXTRA_CLANG_ARGS_#{TARGET.tr('-', '_')}="-isystem /usr/include/x86_64-linux-musl -isystem $(ls -d $llvm/lib/clang/*/include | tail -1)"
        export RUSTC_BOOTSTRAP=1 CARGO_BUILD_TARGET=#{TARGET} CARGO_UNSTABLE_BUILD_STD="std panic_unwind"
        export CARGO_TARGET_#{TARGET.upcase.tr('-', '_')}_LINKER=musl-gcc
        export RUSTFLAGS="-L native=#{PREFIX}/unwind"
        rustc --version
        #{CheckoutCopy.gem_and_suite('x86_64-linux-musl').chomp}
      SH
    end

    # The gem left in pkg/ must carry musl binaries: an x86-64 extension that
    # needs musl's C library and no glibc symbol version, and the musl
    # compiler package (its Dart runtime asks for musl's loader).
    def check_gem(gem)
      CheckoutCopy.unpacked(gem, 'test:musl') do |tmp|
        extensions = Dir.glob(File.join(tmp, 'lib', 'sass', '*', 'sass_embedded.so'))
        raise "test:musl: #{gem} carries no extension" if extensions.empty?

        extensions.each { |extension| check_extension(gem, tmp, extension) }
        dart = File.join(tmp, 'lib', 'sass', 'embedded', 'dart-sass', 'src', 'dart')
        interpreter = SassEmbeddedBuild::ElfInterpreter.of(dart)
        unless interpreter&.include?('ld-musl-x86_64')
          raise "test:musl: the compiler in #{gem} asks for #{interpreter.inspect}, not musl's loader"
        end

        puts "#{gem}: the compiler's Dart runtime runs under #{interpreter}"
      end
    end

    def check_extension(gem, tmp, extension)
      name = extension.delete_prefix("#{tmp}/")
      machine = File.binread(extension, 20).unpack('a4@18v')
      raise "test:musl: #{name} in #{gem} is not an x86-64 ELF binary" unless machine == ["\x7FELF".b, X86_64]

      dynamic, = Open3.capture2('readelf', '--dynamic', '--wide', extension)
      versions, = Open3.capture2('readelf', '--version-info', '--wide', extension)
      needed = dynamic.scan(/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/).flatten
      unless needed.include?('libc.so') && needed.none? { |library| library.start_with?('libc.so.') }
        raise "test:musl: #{name} needs #{needed.inspect}, not musl's libc.so"
      end
      raise "test:musl: #{name} asks for glibc symbol versions" if versions.include?('GLIBC_')

      puts "#{gem}: #{name} is an x86-64 ELF needing #{needed.join(', ')}, with no glibc symbol version"
    end
  end
end
