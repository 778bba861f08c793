# frozen_string_literal: true

# Every platform beyond the machine's own: the suite under other Rubies, the
# platform gems built (natively, emulated or cross) and tested where they
# can run, and the whole matrix in turn (needs root: Debian roots).

require_relative '../tasks/roots'

desc "Build the extension and run the Ruby suite under Ruby #{SassEmbeddedRubies::RUBIES.map(&:minor).join(', ')} " \
     '(Debian roots; needs root)'
task 'test:rubies' => :compiler do
  SassEmbeddedRubies::Suite.call
end

desc 'The fiber tests and Sass::Rack\'s fiber-server tests under the async gem 2 (Debian sid\'s Ruby 3.3, in a ' \
     'Debian root; needs root)'
task 'test:async2' => :compiler do
  SassEmbeddedRubies::Suite.call([SassEmbeddedRubies::ASYNC2], tests: SassEmbeddedRubies::ASYNC2_TESTS,
                                                               task: 'test:async2')
end

desc 'Build for arm64 Linux natively in an emulated Debian root, pack and install its aarch64-linux-gnu platform gem ' \
     'there without a toolchain (left in pkg/), and run the Ruby suite under emulation (needs root)'
task 'test:arm64' do
  SassEmbeddedRubies::Arm64.call(ROOT, COMPILER_CACHE)
end

desc 'Build a Ruby for musl and, under it, the extension through extconf.rb for x86_64-linux-musl in a Debian ' \
     'root; pack and install its x86_64-linux-musl platform gem offline (left in pkg/), run the Ruby suite (needs root)'
task 'test:musl' do
  SassEmbeddedRubies::Musl.call(SassEmbeddedRubies::Musl::X86_64, ROOT, COMPILER_CACHE)
end

desc 'The same for aarch64-linux-musl (Alpine on arm64) in an emulated arm64 Debian root: a musl Ruby and the ' \
     'extension built there, its aarch64-linux-musl gem packed and installed offline (left in pkg/), the Ruby ' \
     'suite run under emulation (needs root)'
task 'test:musl_arm64' do
  SassEmbeddedRubies::Musl.call(SassEmbeddedRubies::Musl::AARCH64, ROOT, COMPILER_CACHE)
end

desc "The x86_64-linux-gnu gem's Ruby 3.3 extension linked against glibc 2.17 (in the Ruby 3.3 root), packed, " \
     'installed offline and the whole suite run against it in a Debian bullseye root (glibc 2.31) with a Ruby ' \
     '3.3 built there (needs root)'
task 'test:old_glibc' => :compiler do
  SassEmbeddedRubies::OldGlibc.call(ROOT)
end

desc 'Cross-build the arm64-darwin and x86_64-darwin platform gems (Ruby ' \
     "#{SassEmbeddedRubies.minor_names.join(', ')}, zig and ld64.lld in a Debian root; needs root), check " \
     'every binary in them (Mach-O CPU, macOS floor, signature, symbols, ' \
     'libraries, compiler, loader layout) and leave them in pkg/: built and linked, not run'
task 'native:darwin' do
  SassEmbeddedRubies::Darwin.call(ROOT, COMPILER_CACHE)
end

desc "Build the Ruby-free core's tests for Windows (x86_64-pc-windows-gnu, mingw-w64 UCRT) and run every one " \
     'under Wine 10 against the Windows compiler (Debian roots; needs root)'
task 'test:windows_core' do
  SassEmbeddedRubies::WindowsCore.call(ROOT, COMPILER_CACHE)
end

desc 'The x64-mingw-ucrt gem: the extension cross-built for a Windows Ruby of each minor the gems carry (UCRT, ' \
     'cross-built once and cached), installed and used under Wine 10 under each, and the whole Ruby suite run ' \
     'there under each; the gem left in pkg/ (Debian roots; needs root)'
task 'test:windows' do
  SassEmbeddedRubies::Windows.call(ROOT, COMPILER_CACHE)
end

desc 'Cross-build the Windows Rubies (each minor the gems carry, x64-mingw-ucrt, mingw-w64 UCRT in a Debian ' \
     'trixie root; once, cached) into tmp/windows/ruby-<minor> (needs root)'
task 'rubies:windows' do
  SassEmbeddedRubies::WindowsRuby.call(ROOT)
end

desc 'Type-check and lint (clippy -D warnings) the Ruby-free core for macOS (both CPUs), FreeBSD, musl Linux and ' \
     'Windows ' \
     "(Debian sid's Rust with -Zbuild-std, in a Debian root; needs root)"
task 'check:targets' do
  SassEmbeddedRubies::Targets.call
end

# platforms: every platform beyond the machine's own, in turn (tasks/platforms.rb).
require_relative '../tasks/platforms'

desc 'Every platform in turn (other Rubies, async 2, other targets, arm64, musl on both CPUs, old glibc, darwin; ' \
     'SASS_PLATFORMS=a,b for some), going on after a failure, then a line per platform; fails if any failed ' \
     '(needs root)'
task 'test:platforms' => :compiler do
  SassEmbeddedPlatforms.call
end

desc 'Print the line of tasks/minors.rb for a Ruby minor (rake "rubies:minor[4.0]"): Debian\'s packages of it ' \
     'and its newest orig tarball the mirror keeps, with its SHA-256 (docs/platform-gems.md, "Adding a Ruby minor")'
task 'rubies:minor', [:minor] do |_, args|
  abort 'rake "rubies:minor[4.0]": name the minor' unless args[:minor]&.match?(/\A\d+\.\d+\z/)

  puts SassEmbeddedRubies::Mirror.minor_line(args[:minor])
end

desc 'Remove the cached Debian roots of test:rubies (refuses while one is in use)'
task 'rubies:clean' do
  SassEmbeddedRubies::Roots.clean
end
