# frozen_string_literal: true

require 'fileutils'
require 'shellwords'
require_relative '../../formats/pe'

module SassEmbeddedBuild
  module Rubies
    # rake test:windows: the gem on real Windows Rubies, under Wine. In a copy
    # of the checkout (CheckoutCopy; its lib/sass/<minor> and compiler are
    # Windows's): the Windows Ruby of each minor the gem carries (WindowsRuby,
    # cached), the extension cross-built for each in the sid root
    # (x86_64-pc-windows-gnu, mingw-w64's UCRT gcc as the linker, std from
    # rust-src, rb-sys reading the Windows Ruby's RbConfig through Debian's
    # Ruby of the same minor), the Windows compiler package; then, under Wine
    # 10 in the trixie root, under each Ruby in turn, the x64-mingw-ucrt gem
    # installed offline and used from another directory, and the whole Ruby
    # suite. minitest and Rack are the root's Debian packages (pure Ruby),
    # read by the Windows Rubies.
    module Windows
      PLATFORM = 'x64-mingw-ucrt'
      TARGET = 'x86_64-pc-windows-gnu'
      COMPILER = 'sass-embedded-win32-x64'
      # Where the copy keeps the build's and the suite's outputs.
      WORK = File.join('tmp', 'windows')

      module_function

      def call(checkout, compiler_cache)
        Rubies.prepare([WINDOWS_BUILD, WINE])
        archive = CompilerPackage.cached_copy(COMPILER, Sass::Embedded::VERSION, compiler_cache)
        copy = CheckoutCopy.mirror(WINE, checkout, archive, compiler_cache)
        WindowsRuby.call(copy)
        CompilerPackage.install(File.join(copy, 'lib', 'sass', 'embedded', 'dart-sass'),
                                Sass::Embedded::VERSION, archive:, package: COMPILER)
        build = build_extension(copy)
        gem = pack(copy, checkout)
        puts "\n== test:windows: the #{PLATFORM} gem and the suite under Wine (root #{Roots.path(WINE)})"
        script = Wine.script(UnderWine.suite_lines(File.join(copy, 'pkg', File.basename(gem))))
        run = Rubies.run(WINE, script, suite_environment, limit: ENV.fetch('SASS_WINDOWS_TIMEOUT', '3600'),
                                                          checkout: copy)
        UnderWine.summarize(run, build, gem)
      end

      def minors = Rubies.minor_names

      # In the sid root: the extension for each minor, into the copy's
      # lib/sass/<minor>.
      def build_extension(copy)
        puts "\n== test:windows: the extension for #{TARGET}, Ruby #{minors.join(', ')} " \
             "(root #{Roots.path(WINDOWS_BUILD)})"
        build = Rubies.run(WINDOWS_BUILD, extension_script, {},
                           limit: ENV.fetch('SASS_WINDOWS_TIMEOUT', '3600'), checkout: copy)
        dlls = minors.to_h { |minor| [minor, File.join(copy, 'lib', 'sass', minor, 'sass_embedded.so')] }
        unless build.success? && dlls.values.all? { |dll| File.file?(dll) }
          abort "test:windows: the extension was not built (#{build.place})"
        end

        dlls.each { |minor, dll| check_dll(dll, minor) }
        build
      end

      # Each minor's build in a cargo target directory of its own (the
      # bindings are generated from that Ruby's headers).
      def extension_script
        builds = minors.map do |minor|
          <<~SH
            arch_dir=$(ls -d "$PWD"/#{WindowsRuby.in_checkout(minor)}/lib/ruby/#{minor}.0/#{PLATFORM})
            printf '#!/bin/sh\\nexec /usr/bin/ruby#{minor} -I%s "$@"\\n' "$arch_dir" > #{WORK}/rb-sys-ruby
            chmod +x #{WORK}/rb-sys-ruby
            started=$(date +%s)
            cargo build --release --locked --manifest-path ext/sass_embedded/Cargo.toml -Zbuild-std=std,panic_unwind --target #{TARGET} --target-dir target/windows-ext-#{minor}
            mkdir -p lib/sass/#{minor}
            cp target/windows-ext-#{minor}/#{TARGET}/release/sass_embedded.dll lib/sass/#{minor}/sass_embedded.so
            echo "windows: the Ruby #{minor} extension built in $(( $(date +%s) - started )) s"
          SH
        end
        <<~SH.tr("\n", ';')
          set -e
          rustc --version
          llvm=$(ls -d /usr/lib/llvm-[0-9]* | sort -V | tail -1)
          export RUBY="$PWD/#{WORK}/rb-sys-ruby" LIBCLANG_PATH=$llvm/lib RUSTC_BOOTSTRAP=1
          export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32ucrt-gcc
          export BINDGEN_EXTRA_CLANG_ARGS_x86_64_pc_windows_gnu="--sysroot=/usr/x86_64-w64-mingw32ucrt -isystem $(ls -d $llvm/lib/clang/*/include | tail -1)"
          #{builds.join.chomp}
        SH
      end

      # What the gem must carry: a PE32+ x86-64 DLL that imports the UCRT and
      # not msvcrt.dll, and the Ruby it was built for.
      def check_dll(path, minor)
        image = PE.read(path)
        problems = image.problems(ruby_dll: "x64-ucrt-ruby#{minor.delete('.')}0.dll")
        abort "test:windows: #{path}: #{problems.join('; ')}" unless problems.empty?

        puts "#{path}: PE32+ x86-64 DLL importing #{image.imports.join(', ')}"
      end

      # The gem, packed on the machine from the copy (its Windows extension
      # and compiler), into the copy's pkg/ and the checkout's.
      def pack(copy, checkout)
        path = PlatformGem.build(copy, File.join(copy, 'pkg'), minors:,
                                                               platform: Gem::Platform.new(PLATFORM))
        CheckoutCopy.unpacked(path, 'test:windows') do |tmp|
          minors.each { |minor| check_dll(File.join(tmp, 'lib', 'sass', minor, 'sass_embedded.so'), minor) }
          dart = File.join(tmp, 'lib', 'sass', 'embedded', 'dart-sass', 'src', 'dart.exe')
          x64_dart = File.file?(dart) && PE.read(dart).x86_64?
          abort "test:windows: #{path} carries no x86-64 dart.exe" unless x64_dart
        end
        CheckoutCopy.keep(path, checkout)
        path
      end

      # What the Windows Ruby reads: the root's Debian gems (GEM_PATH), and the
      # suite's time budgets scaled for Wine.
      def suite_environment
        { 'SASS_WINDOWS_GEM_PATH' => 'Z:/usr/share/rubygems-integration/all',
          'SASS_TEST_TIME_SCALE' => ENV.fetch('SASS_TEST_TIME_SCALE', '4'),
          'SASS_TEST_TIMEOUT' => ENV.fetch('SASS_TEST_TIMEOUT', '180') }
      end

      # The run under Wine: its lines, and its summary.
      module UnderWine
        module_function

        def minors = Windows.minors

        # The Windows Ruby of +minor+, run by Wine.
        def ruby(minor) = "wine #{WindowsRuby.in_checkout(minor)}/bin/ruby.exe"

        # Under Wine, under each Ruby in turn: the gem installed and used, then
        # the suite; each output written to a file first (see Wine), then
        # printed.
        def suite_lines(gem)
          [
            # The root Ruby's bundled minitest as a gem directory of its own (its
            # gem directory also holds gems with Linux extensions, which
            # RubyGems would warn about at every start).
            "rm -rf #{WORK}/gems; mkdir -p #{WORK}/gems/gems #{WORK}/gems/specifications; for part in gems " \
            "specifications; do cp -r /usr/lib/ruby/gems/3.3.0/$part/minitest-* #{WORK}/gems/$part/; done",
            # minitest 5.20 requires mutex_m, a bundled gem from Ruby 3.4 on,
            # which the Windows Rubies do not install: the root Ruby's (pure
            # Ruby) is on their load path (RUBYLIB: the suite's child Rubies'
            # too).
            "rm -rf #{WORK}/rubylib; mkdir -p #{WORK}/rubylib; cp /usr/lib/ruby/3.3.0/mutex_m.rb #{WORK}/rubylib/",
            "export GEM_PATH=\"$SASS_WINDOWS_GEM_PATH;Z:$PWD/#{WORK}/gems\" RUBYLIB=\"Z:$PWD/#{WORK}/rubylib\"",
            *minors.flat_map { |minor| minor_lines(gem, minor) }
          ]
        end

        def minor_lines(gem, minor)
          ruby = ruby(minor)
          out = File.join(WORK, "suite-#{minor}")
          files = "$(find test -name '*_test.rb' | sort)"
          [
            "echo '#{Suite.section(PLATFORM, minor)}'",
            "#{ruby} -v > #{out}-v.txt 2>&1 </dev/null; cat #{out}-v.txt",
            "timeout -k 10 600 #{ruby} test/install/platform_gem.rb Z:#{gem} > #{out}-gem.txt 2>&1 </dev/null " \
            '|| failed=1',
            "cat #{out}-gem.txt",
            "started=$(date +%s); timeout -k 10 #{ENV.fetch('SASS_WINDOWS_SUITE_TIMEOUT', '2400')} #{ruby} -w -Ilib " \
            "-Itest -e '$stdout.sync = true; files = ARGV.grep(/_test\\.rb\\z/); " \
            "ARGV.replace(ARGV - files); files.each { |file| require File.expand_path(file) }' #{files} " \
            "#{Shellwords.split(ENV.fetch('TESTOPTS', '')).shelljoin} > #{out}-suite.txt 2>&1 </dev/null || failed=1",
            "cat #{out}-suite.txt", "echo \"windows: the suite under Ruby #{minor} in $(( $(date +%s) - started )) s\""
          ]
        end

        # A line per minor; fails unless the gem was installed and used and the
        # suite passed under each.
        def summarize(run, build, gem)
          # The Windows Rubies end their lines with CRLF.
          output = run.output.delete("\r")
          puts "\n== test:windows summary"
          puts "extensions built in #{Rubies.duration(build.seconds)} (#{build.place}); #{gem}"
          parts = Suite.sections(output).to_h
          passed = minors.map do |minor|
            part = parts[minor] || parts[nil] || ''
            runs, assertions, failures, errors, skips = Suite.counts(part)&.values
            installed = part[/^platform gem .* installed in .*$/]
            puts "Ruby #{minor}: #{installed ? "the gem #{installed}" : 'the gem was NOT installed and used'}; " \
                 "suite under #{output[/^wine-\S+/]} with #{part[/^ruby 3\S+ .*$/]}: #{runs} runs, #{assertions} " \
                 "assertions, #{failures} failures, #{errors} errors, #{skips} skips"
            installed && runs&.positive? && (failures + errors).zero?
          end
          puts "under Wine: #{Rubies.duration(run.seconds)} (#{run.place})"
          abort 'test:windows failed' unless run.success? && passed.all?
        end
      end
    end
  end
end
