# frozen_string_literal: true

require 'fileutils'
require 'shellwords'
require_relative '../pe'

module SassEmbeddedRubies
  # rake test:windows: the gem on a real Windows Ruby, under Wine. In a copy
  # of the checkout (CheckoutCopy; its lib/sass/3.3 and compiler are
  # Windows's): the Windows Ruby (WindowsRuby, cached), the extension
  # cross-built for it in the sid root (x86_64-pc-windows-gnu, mingw-w64's
  # UCRT gcc as the linker, std from rust-src, rb-sys reading the Windows
  # Ruby's RbConfig through a native Ruby of the same minor), the Windows
  # compiler package; then, under Wine 10 in the trixie root, the
  # x64-mingw-ucrt gem installed offline and used from another directory,
  # and the whole Ruby suite. minitest and Rack are the root's Debian
  # packages (pure Ruby), read by the Windows Ruby.
  module Windows
    PLATFORM = 'x64-mingw-ucrt'
    TARGET = 'x86_64-pc-windows-gnu'
    COMPILER = 'sass-embedded-win32-x64'
    MINOR = '3.3'
    # Where the copy keeps the build's and the suite's outputs.
    WORK = File.join('tmp', 'windows')

    module_function

    def call(checkout, compiler_cache)
      SassEmbeddedRubies.prepare([WINDOWS_BUILD, WINE])
      archive = SassEmbeddedBuild::CompilerPackage.cached_copy(COMPILER, Sass::Embedded::VERSION, compiler_cache)
      copy = CheckoutCopy.mirror(WINE, checkout, archive, compiler_cache)
      WindowsRuby.call(copy)
      SassEmbeddedBuild::CompilerPackage.install(File.join(copy, 'lib', 'sass', 'embedded', 'dart-sass'),
                                                 Sass::Embedded::VERSION, archive:, package: COMPILER)
      build = build_extension(copy)
      gem = pack(copy, checkout)
      puts "\n== test:windows: the #{PLATFORM} gem and the suite under Wine (root #{Roots.path(WINE)})"
      script = Wine.script(suite_lines(File.join(copy, 'pkg', File.basename(gem))))
      run = SassEmbeddedRubies.run(WINE, script, suite_environment, limit: ENV.fetch('SASS_WINDOWS_TIMEOUT', '3600'),
                                                                    checkout: copy)
      summarize(run, build, gem)
    end

    # In the sid root: the extension, into the copy's lib/sass/3.3.
    def build_extension(copy)
      puts "\n== test:windows: the extension for #{TARGET} (root #{Roots.path(WINDOWS_BUILD)})"
      build = SassEmbeddedRubies.run(WINDOWS_BUILD, extension_script, {},
                                     limit: ENV.fetch('SASS_WINDOWS_TIMEOUT', '3600'), checkout: copy)
      dll = File.join(copy, 'lib', 'sass', MINOR, 'sass_embedded.so')
      abort "test:windows: the extension was not built (#{build.place})" unless build.success? && File.file?(dll)

      check_dll(dll)
      build
    end

    def extension_script
      <<~SH.tr("\n", ';')
        set -e
        rustc --version
        arch_dir=$(ls -d "$PWD"/#{WORK}/ruby/lib/ruby/3.3.0/#{PLATFORM})
        printf '#!/bin/sh\\nexec /usr/bin/ruby#{MINOR} -I%s "$@"\\n' "$arch_dir" > #{WORK}/rb-sys-ruby
        chmod +x #{WORK}/rb-sys-ruby
        llvm=$(ls -d /usr/lib/llvm-[0-9]* | sort -V | tail -1)
        export RUBY="$PWD/#{WORK}/rb-sys-ruby" LIBCLANG_PATH=$llvm/lib RUSTC_BOOTSTRAP=1
        export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32ucrt-gcc
        export BINDGEN_EXTRA_CLANG_ARGS_x86_64_pc_windows_gnu="--sysroot=/usr/x86_64-w64-mingw32ucrt -isystem $(ls -d $llvm/lib/clang/*/include | tail -1)"
        started=$(date +%s)
        cargo build --release --locked --manifest-path ext/sass_embedded/Cargo.toml -Zbuild-std=std,panic_unwind --target #{TARGET} --target-dir target/windows-ext
        mkdir -p lib/sass/#{MINOR}
        cp target/windows-ext/#{TARGET}/release/sass_embedded.dll lib/sass/#{MINOR}/sass_embedded.so
        echo "windows: extension built in $(( $(date +%s) - started )) s"
      SH
    end

    # What the gem must carry: a PE32+ x86-64 DLL that imports the UCRT and
    # not msvcrt.dll, and the Ruby it was built for.
    def check_dll(path)
      image = SassEmbeddedBuild::PE.read(path)
      problems = image.problems(ruby_dll: "x64-ucrt-ruby#{MINOR.delete('.')}0.dll")
      abort "test:windows: #{path}: #{problems.join('; ')}" unless problems.empty?

      puts "#{path}: PE32+ x86-64 DLL importing #{image.imports.join(', ')}"
    end

    # The gem, packed on the machine from the copy (its Windows extension
    # and compiler), into the copy's pkg/ and the checkout's.
    def pack(copy, checkout)
      path = SassEmbeddedBuild::PlatformGem.build(copy, File.join(copy, 'pkg'), minors: [MINOR],
                                                                                platform: Gem::Platform.new(PLATFORM))
      CheckoutCopy.unpacked(path, 'test:windows') do |tmp|
        check_dll(File.join(tmp, 'lib', 'sass', MINOR, 'sass_embedded.so'))
        dart = File.join(tmp, 'lib', 'sass', 'embedded', 'dart-sass', 'src', 'dart.exe')
        x64_dart = File.file?(dart) && SassEmbeddedBuild::PE.read(dart).x86_64?
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

    # Under Wine: the gem installed and used, then the suite; each output
    # written to a file first (see Wine), then printed.
    def suite_lines(gem)
      ruby = "wine #{WORK}/ruby/bin/ruby.exe"
      files = "$(find test -name '*_test.rb' | sort)"
      [
        # The root Ruby's bundled minitest as a gem directory of its own (its
        # gem directory also holds gems with Linux extensions, which
        # RubyGems would warn about at every start).
        "rm -rf #{WORK}/gems; mkdir -p #{WORK}/gems/gems #{WORK}/gems/specifications; for part in gems " \
        "specifications; do cp -r /usr/lib/ruby/gems/3.3.0/$part/minitest-* #{WORK}/gems/$part/; done",
        "export GEM_PATH=\"$SASS_WINDOWS_GEM_PATH;Z:$PWD/#{WORK}/gems\"",
        "#{ruby} -v > #{WORK}/ruby-v.txt 2>&1 </dev/null; cat #{WORK}/ruby-v.txt",
        "timeout -k 10 600 #{ruby} test/install/platform_gem.rb Z:#{gem} > #{WORK}/gem.txt 2>&1 </dev/null " \
        '|| failed=1',
        "cat #{WORK}/gem.txt",
        "started=$(date +%s); timeout -k 10 #{ENV.fetch('SASS_WINDOWS_SUITE_TIMEOUT', '2400')} #{ruby} -w -Ilib " \
        "-Itest -e '$stdout.sync = true; files = ARGV.grep(/_test\\.rb\\z/); " \
        "ARGV.replace(ARGV - files); files.each { |file| require File.expand_path(file) }' #{files} " \
        "#{Shellwords.split(ENV.fetch('TESTOPTS', '')).shelljoin} > #{WORK}/suite.txt 2>&1 </dev/null || failed=1",
        "cat #{WORK}/suite.txt", 'echo "windows: suite in $(( $(date +%s) - started )) s"'
      ]
    end

    def summarize(run, build, gem)
      # The Windows Ruby ends its lines with CRLF.
      runs, assertions, failures, errors, skips = Suite.counts(run.output.delete("\r"))&.values
      installed = run.output.delete("\r")[/^platform gem .* installed in .*$/]
      puts "\n== test:windows summary"
      puts "extension built in #{SassEmbeddedRubies.duration(build.seconds)} (#{build.place}); #{gem}"
      puts installed ? "under Wine: #{installed}" : 'under Wine: the gem was NOT installed and used'
      puts "suite under #{run.output[/^wine-\S+/]} with #{run.output[/^ruby 3\S+ .*$/]}: #{runs} runs, " \
           "#{assertions} assertions, #{failures} failures, #{errors} errors, #{skips} skips " \
           "(#{SassEmbeddedRubies.duration(run.seconds)}, #{run.place})"
      abort 'test:windows failed' unless run.success? && installed && runs&.positive? && (failures + errors).zero?
    end
  end
end
