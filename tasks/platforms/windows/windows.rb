# frozen_string_literal: true

require 'digest'
require 'fileutils'
require 'shellwords'

module SassEmbeddedBuild
  module Rubies
    # rake test:windows_core: the Ruby-free core's tests built for Windows
    # (x86_64-pc-windows-gnu) in a Debian sid root, with sid's rustc, std from
    # its rust-src and mingw-w64's UCRT toolchain as the linker, then every test
    # binary run under Wine 10 in a Debian trixie root (bookworm's Wine 8 lacks
    # bcryptprimitives.dll, which Rust's std imports), against the Windows
    # compiler (`dart.exe` and its snapshot): spawning, pipes, the reader and
    # writer threads, socket bells, killing the compiler, all through Windows
    # APIs as Wine implements them.
    # Debian's Ruby of each minor the gem carries (MINORS) reads the Windows
    # Ruby's RbConfig of that minor for rb-sys (test:windows).
    WINDOWS_BUILD = Ruby.new(minor: '3.3', suite: 'sid', extra_suites: MINORS.flat_map(&:extra_suites).uniq,
                             purpose: 'windows',
                             packages: MINORS.map { |minor| "ruby#{minor.minor}" } +
                                       %w[rustc cargo rust-src gcc-mingw-w64-ucrt64 binutils-mingw-w64-x86-64],
                             label: "Debian sid's Rust for Windows")
    # Trixie: Wine 10, and the toolchain the Windows Ruby is cross-built with
    # (tasks/platforms/windows/ruby.sh): mingw-w64's UCRT gcc 14 (sid's 16 does
    # not build Ruby 3.3), the Ruby's sources and its baseruby; Rack for the
    # suite (pure Ruby, read by the Windows Ruby too).
    WINE = Ruby.new(minor: '3.3', suite: 'trixie', extra_suites: [], purpose: 'wine', deb_src: %w[trixie],
                    packages: %w[ruby3.3 wine64 wine gcc-mingw-w64-ucrt64 mingw-w64-ucrt64-dev
                                 binutils-mingw-w64-x86-64 make xz-utils dpkg-dev autoconf automake
                                 libtool libltdl-dev] + RACK3,
                    label: "Debian trixie's Wine 10")

    # The Windows Rubies (x64-mingw-ucrt), one per minor the gem carries,
    # cross-built in the Wine root (tasks/platforms/windows/ruby.sh) and kept
    # outside it, in the roots' cache (a root is remade whenever its packages
    # change; a Ruby takes a quarter of an hour to build): put back into a new
    # root, so the script finds it made, and remade only when the script
    # changes. Copied into a checkout's tmp/windows/ruby-<minor>, where the
    # extension's build (in the sid root) reads its headers, import library
    # and RbConfig, and Wine runs it.
    module WindowsRuby
      # Where the Wine root keeps them.
      PREFIX = '/opt/sass-embedded-windows-ruby'
      # What they are made from, with OpenSSL's tarball (musl's, the same
      # release) and each one's Ruby tarball: their checksum is the stamp, as
      # ruby.sh computes it.
      INPUTS = %w[ruby.sh wine-pioinfo.c].map { |name| File.expand_path(name, __dir__) }.freeze

      module_function

      def kept(minor) = File.join(File.expand_path(Roots.cache_dir), "windows-ruby-#{minor}")

      # The copy of +minor+'s Ruby in +checkout+ (a path relative to it).
      def in_checkout(minor) = File.join('tmp', 'windows', "ruby-#{minor}")

      # Makes (or finds) the Rubies, and copies each into +checkout+.
      def call(checkout)
        Rubies.prepare([WINE])
        minors = Rubies.minor_names
        puts "\n== the Windows Rubies #{minors.join(', ')} (root #{Roots.path(WINE)}, kept in #{kept('<minor>')})"
        openssl = Musl.openssl_tarball(checkout)
        tarballs = minors.to_h { |minor| [minor, Mirror.ruby_tarball(minor, File.join(checkout, 'tmp', 'windows'))] }
        stamps = stamps(openssl, tarballs)
        restore = minors.map { |minor| restore_script(minor, stamps[minor], checkout) }
        build = ['sh', 'tasks/platforms/windows/ruby.sh', PREFIX, openssl,
                 *tarballs.map { |minor, tarball| "#{minor}=#{tarball}" }].shelljoin
        run = Rubies.run(WINE, [*restore, build].join('; '), {},
                         limit: ENV.fetch('SASS_WINDOWS_RUBY_TIMEOUT', '5400'), checkout:)
        abort "the Windows Rubies were not made (#{run.place})" unless run.success?

        minors.each do |minor|
          keep(minor, File.join(Roots.path(WINE), PREFIX, "ruby-#{minor}"), stamps[minor])
          copy_into(checkout, minor, stamps[minor])
        end
      end

      # Each minor's stamp, as ruby.sh writes it.
      def stamps(openssl, tarballs)
        inputs = Digest::SHA256.hexdigest(INPUTS.map { |input| File.binread(input) }.join +
                                          "#{File.basename(openssl)}\n")
        tarballs.transform_values { |tarball| "#{inputs} #{File.basename(tarball)}" }
      end

      # In the root, before ruby.sh: +minor+'s kept Ruby put back (through the
      # checkout, the one directory both sides see) if it is current.
      def restore_script(minor, stamp, checkout)
        return ':' unless stamp_of(kept(minor)) == stamp

        staged = File.join(checkout, 'tmp', 'windows', "kept-ruby-#{minor}")
        FileUtils.rm_rf(staged)
        FileUtils.mkdir_p(File.dirname(staged))
        FileUtils.cp_r(kept(minor), staged)
        installed = "#{PREFIX}/ruby-#{minor}"
        "[ \"$(cat #{installed}/stamp 2>/dev/null)\" = #{stamp.shellescape} ] || { rm -rf #{installed}; " \
          "mkdir -p #{PREFIX}; cp -a #{staged} #{installed}; }; rm -rf #{staged}"
      end

      # The stamp a kept or copied Ruby was made with (nil: none there).
      def stamp_of(directory)
        File.read(File.join(directory, 'stamp')).strip
      rescue Errno::ENOENT
        nil
      end

      # The root's Ruby of +minor+ into the cache, unless it is there already.
      def keep(minor, made, stamp)
        return if stamp_of(kept(minor)) == stamp

        FileUtils.rm_rf("#{kept(minor)}.new")
        FileUtils.cp_r(made, "#{kept(minor)}.new")
        FileUtils.rm_rf(kept(minor))
        File.rename("#{kept(minor)}.new", kept(minor))
      end

      def copy_into(checkout, minor, stamp)
        copy = File.join(checkout, in_checkout(minor))
        return copy if stamp_of(copy) == stamp

        FileUtils.rm_rf(copy)
        FileUtils.mkdir_p(File.dirname(copy))
        FileUtils.cp_r(kept(minor), copy)
        copy
      end
    end

    # How the Wine root runs Windows programs: headless, in a prefix made once
    # in the root (wineboot: seconds), with one persistent wineserver for the
    # whole run (each `wine` starts in 1-2 s instead of 6-10).
    module Wine
      PREFIX = '/opt/sass-embedded-wine'

      module_function

      # +lines+ (sh) in that setting; the script exits 1 if a line set
      # failed=1.
      def script(lines)
        [
          "export WINEPREFIX=#{PREFIX} WINEDEBUG=-all WINEDLLOVERRIDES='mscoree,mshtml=' WINEARCH=win64 " \
          'XDG_RUNTIME_DIR=/tmp',
          'unset DISPLAY', 'wine --version', 'failed=0',
          # A new prefix: wineboot's own processes finish before anything runs.
          "[ -f #{PREFIX}/system.reg ] || { timeout 300 wine wineboot -i >/dev/null 2>&1 </dev/null; " \
          'timeout 300 wineserver -w; }',
          'wineserver -p >/dev/null 2>&1 </dev/null',
          # The TCP/IP settings Windows keeps in its registry and Wine's
          # prefix lacks: RubyGems' resolver reads them on Windows (any gem
          # install), and raises where the key is missing.
          "wine reg add 'HKLM\\System\\CurrentControlSet\\Services\\Tcpip\\Parameters\\Interfaces' /f " \
          '>/dev/null 2>&1 </dev/null',
          *lines,
          'wineserver -k', 'exit $failed'
        ].join('; ')
      end
    end

    # The steps of rake test:windows_core around the runs in the roots.
    module WindowsCore
      TARGET = 'x86_64-pc-windows-gnu'
      # The Windows compiler package (compiler_integrity.json pins it).
      COMPILER = 'sass-embedded-win32-x64'

      module_function

      def call(checkout, compiler_cache)
        Rubies.prepare([WINDOWS_BUILD, WINE])
        work = File.join(checkout, 'tmp', 'windows')
        compiler = compiler(work, compiler_cache)
        puts "\n== test:windows_core: the core's tests for #{TARGET} (root #{Roots.path(WINDOWS_BUILD)})"
        build = Rubies.run(WINDOWS_BUILD, build_script, {}, limit: ENV.fetch('SASS_WINDOWS_TIMEOUT', '3600'))
        binaries = build.output.scan(/^windows test binary: (\S+)$/).flatten
        abort "test:windows_core: the build failed (#{build.place})" unless build.success? && !binaries.empty?

        puts "\n== test:windows_core: #{binaries.size} test binaries under Wine (root #{Roots.path(WINE)})"
        run = Rubies.run(WINE, wine_script(binaries, work), wine_environment(compiler),
                         limit: ENV.fetch('SASS_WINDOWS_TIMEOUT', '3600'))
        summarize(binaries, run, build)
      end

      # The Windows compiler (a verified copy in +compiler_cache+), installed
      # in +work+; its directory as Windows sees it.
      def compiler(work, compiler_cache)
        archive = CompilerPackage.cached_copy(COMPILER, Sass::Embedded::VERSION, compiler_cache)
        installed = File.join(work, 'compiler', 'dart-sass')
        CompilerPackage.install(installed, Sass::Embedded::VERSION, archive:, package: COMPILER)
        "Z:#{File.join(installed, 'src').tr('/', '\\')}"
      end

      # In the sid root: the test binaries, linked by mingw-w64's UCRT gcc;
      # prints each one's path.
      def build_script
        <<~'SH'.tr("\n", ';')
          set -e
          rustc --version
          export RUSTC_BOOTSTRAP=1 CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32ucrt-gcc
          mkdir -p target/windows
          started=$(date +%s)
          cargo test --locked -p sass-embedded-core --no-run -Zbuild-std=std,panic_unwind --target x86_64-pc-windows-gnu --target-dir target/windows --message-format=json > target/windows/tests.json
          echo "windows: built in $(( $(date +%s) - started )) s"
          ruby3.3 -rjson -ne 'j = (JSON.parse($_) rescue next); puts "windows test binary: #{j["executable"]}" if j["reason"] == "compiler-artifact" && j.dig("profile", "test") && j["executable"]' target/windows/tests.json
        SH
      end

      def wine_environment(compiler)
        { 'SASS_EMBEDDED_COMPILER' => "#{compiler}\\dart.exe",
          'SASS_EMBEDDED_COMPILER_ARGS' => "#{compiler}\\sass.snapshot" }
      end

      # In the Wine root: one persistent wineserver for the run, and each test
      # in a process of its own, in the package's directory, as cargo-nextest
      # runs them on Linux (the tests count process-wide things: spins,
      # threads). Output goes to a file first (Wine's services inherit the
      # output of the program that started them, and would hold a pipe open),
      # then is printed.
      def wine_script(binaries, work)
        runs = binaries.map do |binary|
          name = File.basename(binary, '.exe')
          list = File.join(work, "#{name}.list")
          output = File.join(work, "#{name}.txt")
          "started=$(date +%s); wine #{binary.shellescape} --list --format terse </dev/null " \
            ">#{list.shellescape}.raw 2>/dev/null; sed -n 's/: test\\r\\{0,1\\}$//p' #{list.shellescape}.raw " \
            "> #{list.shellescape}; : > #{output.shellescape}; while IFS= read -r test; do timeout -k 10 300 " \
            "wine #{binary.shellescape} --exact \"$test\" --test-threads=1 </dev/null >>#{output.shellescape} 2>&1 " \
            "|| { failed=1; echo \"windows: FAILED $test\"; }; done < #{list.shellescape}; " \
            "grep -v '^$' #{output.shellescape} | grep -v '^running 1 test' | " \
            "grep -v '^executor '; echo \"windows: #{name}: $(wc -l < #{list.shellescape}) tests in " \
            '$(( $(date +%s) - started )) s"'
        end
        Wine.script(['cd ext/sass_embedded/core', *runs])
      end

      def summarize(binaries, run, build)
        totals = run.output.scan(/^test result: \S+ (\d+) passed; (\d+) failed; (\d+) ignored/)
                    .map { |line| line.map { |count| Integer(count) } }.transpose.map(&:sum)
        passed, failed, ignored = totals.empty? ? [0, 0, 0] : totals
        puts "\n== test:windows_core summary"
        puts "#{binaries.size} test binaries: #{passed} passed, #{failed} failed, #{ignored} ignored under " \
             "#{run.output[/^wine-\S+/]}; build #{Rubies.duration(build.seconds)} (#{build.place}), " \
             "Wine #{Rubies.duration(run.seconds)} (#{run.place})"
        listed = run.output.scan(/^windows: \S+: (\d+) tests in/).flatten.sum { |count| Integer(count) }
        puts "#{listed} tests listed, each run in a process of its own"
        abort 'test:windows_core failed' unless run.success? && failed.zero? && passed + ignored == listed &&
                                                listed.positive?
      end
    end
  end
end
