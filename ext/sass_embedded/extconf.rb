# frozen_string_literal: true

# Builds the native host with cargo (no rb_sys gem needed) and installs the
# Dart Sass compiler (verified against compiler_integrity.json). RubyGems runs
# this when it installs the source gem; in a checkout, `rake compile` does.
# Platform gems carry both prebuilt and never run it.

require 'rbconfig'

# What a source build needs, and what to do when it is missing.
module SassEmbeddedBuild
  # Where the host cannot run, installing stops here with one sentence that
  # names the platform and what works instead: before mkmf (which raises on
  # JRuby), cargo or bindgen could fail with an error of their own.
  module Support
    module_function

    # @return [String, nil] why this Ruby cannot have the gem, or nil
    def refusal(engine: RUBY_ENGINE, host_os: RbConfig::CONFIG['host_os'], host_cpu: RbConfig::CONFIG['host_cpu'])
      case engine
      when 'jruby'
        'sass-embedded does not support JRuby: its host is a CRuby native extension, which the JVM cannot load; ' \
        'use CRuby 3.1 or newer.'
      when 'truffleruby'
        "sass-embedded does not support TruffleRuby: its host is built for CRuby's C API and process model; " \
        'use CRuby 3.1 or newer.'
      else
        windows_refusal(host_os, host_cpu)
      end
    end

    # Windows builds with the MinGW toolchain Rust's x86_64-pc-windows-gnu
    # target uses, for x64 only: the CPU and toolchain proven (under Wine).
    def windows_refusal(host_os, host_cpu)
      case host_os
      when /cygwin/
        "sass-embedded does not support Cygwin (#{host_os}): its host is built for native Windows; " \
        "use RubyInstaller's x64 Ruby, or WSL 2."
      when /mswin/
        "sass-embedded does not support a Ruby built with Visual C++ (#{host_os}): its host is built with MinGW; " \
        "use RubyInstaller's x64 Ruby (x64-mingw-ucrt)."
      when /mingw/
        return if host_cpu.match?(/\A(x86_64|x64|amd64)\z/)

        "sass-embedded does not support Windows on #{host_cpu}: its host is built for x64 Windows only; " \
          "use RubyInstaller's x64 Ruby (x64-mingw-ucrt)."
      end
    end
  end
end

if (refusal = SassEmbeddedBuild::Support.refusal)
  warn refusal
  exit 1
end

require 'mkmf'
require 'shellwords'
require_relative 'compiler_package'
require_relative '../../lib/sass/embedded/version'

module SassEmbeddedBuild
  # Checks for cargo and libclang (bindgen, run by rb-sys on Ruby's headers,
  # loads it) before anything is built, so a missing tool fails in a second
  # with a message that says what to install, not after minutes in cargo.
  module Requirements
    module_function

    # The libclang file names clang-sys accepts.
    LIBCLANG = %w[libclang.so libclang.so.* libclang-*.so libclang-*.so.* libclang.dylib libclang.dll].freeze

    # Where clang-sys looks for libclang when LIBCLANG_PATH is not set.
    LIBCLANG_DIRECTORIES = %w[
      /usr/local/llvm*/lib* /usr/local/lib*/*/* /usr/local/lib*/* /usr/local/lib*
      /usr/lib*/*/* /usr/lib*/* /usr/lib*
      /usr/local/opt/llvm*/lib/llvm*/lib /usr/local/opt/llvm*/lib /opt/homebrew/opt/llvm*/lib
      /Library/Developer/CommandLineTools/usr/lib
      /Applications/Xcode.app/Contents/Developer/Toolchains/XcodeDefault.xctoolchain/usr/lib
    ].freeze

    # @return [String, nil] a libclang the build will find, searched the way
    #   clang-sys searches: only LIBCLANG_PATH (a file or a directory) when it
    #   is set, else llvm-config's prefix, LD_LIBRARY_PATH, LIBRARY_PATH and
    #   the usual system directories.
    def libclang
      explicit = ENV.fetch('LIBCLANG_PATH', nil)
      if explicit && !explicit.empty?
        return explicit if File.file?(explicit) && LIBCLANG.any? { |name| File.fnmatch?(name, File.basename(explicit)) }

        return libclang_in([explicit])
      end

      directories = llvm_config_directories
      directories += %w[LD_LIBRARY_PATH LIBRARY_PATH].flat_map do |name|
        ENV.fetch(name, '').split(File::PATH_SEPARATOR)
      end
      libclang_in(directories.reject(&:empty?)) || libclang_in(LIBCLANG_DIRECTORIES)
    end

    def libclang_in(patterns)
      patterns.each do |pattern|
        found = Dir.glob(LIBCLANG.map { |name| File.join(pattern, name) }).find { |path| File.file?(path) }
        return found if found
      end
      nil
    end

    def llvm_config_directories
      llvm_config = ENV.fetch('LLVM_CONFIG_PATH', nil) || find_executable0('llvm-config')
      return [] unless llvm_config

      prefix = IO.popen([llvm_config, '--prefix'], err: File::NULL, &:read).lines.first&.strip
      prefix ? %w[bin lib lib64].map { |dir| File.join(prefix, dir) } : []
    rescue SystemCallError
      []
    end

    # How to install libclang on common systems.
    def libclang_hint
      'Debian/Ubuntu: apt-get install libclang-dev; Alpine: apk add clang-dev; ' \
        'Fedora: dnf install clang-devel; macOS: xcode-select --install. ' \
        'If it is installed elsewhere, set LIBCLANG_PATH to the directory that holds it.'
    end

    # Why this machine builds from source, and the platform gems that need no build.
    def platform_gem_note
      local = CompilerPackage.gem_platform
      platforms = CompilerPackage::GEM_PLATFORMS.values
      note = 'Precompiled platform gems of sass-embedded need neither Rust nor libclang nor npm to install; they ' \
             "exist for #{platforms.join(', ')}."
      unless platforms.include?(local.to_s)
        return "#{note} This machine is #{local}, which has none: build from source."
      end

      old = local.version == 'musl' && Gem::Version.new(Gem::VERSION) < Gem::Version.new('3.3.22')
      old_rubygems = ", RubyGems #{Gem::VERSION} is older than the 3.3.22 its musl gems need" if old
      "#{note} This machine is #{local}, so RubyGems picked the source gem because the platform gem does not " \
        "cover Ruby #{RUBY_VERSION}#{old_rubygems}, installs are forced to the ruby platform (`--platform ruby`, " \
        'BUNDLE_FORCE_RUBY_PLATFORM), or your Gemfile.lock lacks the platform ' \
        "(`bundle lock --add-platform #{local}`)."
    end

    def missing!(missing, hint)
      abort "sass-embedded: building from source needs #{missing}.\n  #{hint}\n#{platform_gem_note}"
    end
  end
end

requirements = SassEmbeddedBuild::Requirements
cargo = ENV.fetch('CARGO', nil) || find_executable('cargo')
if cargo.nil?
  requirements.missing!('Rust (cargo), which is not on PATH',
                        'Install it with https://rustup.rs (or your system\'s cargo package), ' \
                        'or set CARGO=/path/to/cargo.')
end
if requirements.libclang.nil?
  explicit = ENV.fetch('LIBCLANG_PATH', nil)
  where = explicit ? "LIBCLANG_PATH=#{explicit} holds none" : 'none was found where bindgen looks'
  requirements.missing!("libclang (bindgen reads Ruby's headers with it), and #{where}",
                        requirements.libclang_hint)
end

root = File.expand_path('../..', __dir__)
if ENV.fetch('SASS_EMBEDDED_COMPILER', '').empty? && !ENV['SASS_EMBEDDED_SKIP_COMPILER']
  begin
    SassEmbeddedBuild::CompilerPackage.install(File.join(root, 'lib', 'sass', 'embedded', 'dart-sass'),
                                               Sass::Embedded::VERSION)
  rescue SassEmbeddedBuild::IntegrityError, RuntimeError => e
    abort "sass-embedded: #{e.message}"
  end
elsif !ENV.fetch('SASS_EMBEDDED_COMPILER', '').empty?
  message 'sass-embedded: SASS_EMBEDDED_COMPILER is set, so no compiler is installed with the gem; ' \
          "keep it set wherever the gem runs\n"
end

# A checkout (or `rake compile`) keeps cargo's target directory for fast
# rebuilds; a gem install builds in a temporary one and removes it.
target_dir = ENV.fetch('SASS_EMBEDDED_TARGET_DIR', nil)
remove_target = target_dir.nil?
target_dir ||= File.join(Dir.pwd, 'cargo-target')

library = case RbConfig::CONFIG['host_os']
          when /darwin/ then 'libsass_embedded.dylib'
          when /mingw/ then 'sass_embedded.dll'
          else 'libsass_embedded.so'
          end
dlext = RbConfig::CONFIG['DLEXT']
manifest = File.join(__dir__, 'Cargo.toml')
# cargo puts a build for a target it was told (CARGO_BUILD_TARGET, as a
# cross build sets it) under a directory of that target's name.
release_dir = File.join('$(TARGET_DIR)', *ENV.fetch('CARGO_BUILD_TARGET', nil), 'release')

# Flags for the extension's own link only (`cargo rustc --lib -- ...`), as the
# rb_sys gem passes them: on macOS the cdylib leaves Ruby's symbols to the
# process that loads it (rb-sys's build script cannot pass that to our crate).
link_flags = []
link_flags += ['-C', 'link-arg=-Wl,-undefined,dynamic_lookup'] if RbConfig::CONFIG['host_os'].include?('darwin')
subcommand, passed = link_flags.empty? ? ['build', ''] : ['rustc --lib', " -- #{link_flags.shelljoin}"]

# On musl a cdylib needs the C runtime linked dynamically: rustup's musl
# toolchains link it statically by default, and then cannot make a cdylib at
# all. cargo asks rustc which crate types the target allows with the flags it
# reads from RUSTFLAGS (or the target's config), never with those after
# `cargo rustc --`, so only RUSTFLAGS turns it off everywhere (a musl host's
# build scripts and proc macros need it as much). A user's RUSTFLAGS are kept.
cargo_env = ['RUBY=$(RUBY)']
if SassEmbeddedBuild::CompilerPackage.musl?
  rustflags = [ENV.fetch('RUSTFLAGS', nil), '-C target-feature=-crt-static'].compact.reject(&:empty?).join(' ')
  cargo_env << "RUSTFLAGS=#{rustflags.shellescape.gsub('$', '$$')}"
  if ENV['CARGO_ENCODED_RUSTFLAGS']
    message 'sass-embedded: CARGO_ENCODED_RUSTFLAGS is set, so cargo ignores RUSTFLAGS: for a musl build it ' \
            "must hold -C target-feature=-crt-static\n"
  end
end
# SASS_EMBEDDED_CARGO_FEATURES=portable-wait builds the waiting mechanism of
# every Unix but Linux (what `rake test:portable` tests on Linux).
features = ENV.fetch('SASS_EMBEDDED_CARGO_FEATURES', '').split(/[\s,]+/).reject(&:empty?)
subcommand += " --features #{features.join(',').shellescape}" unless features.empty?

File.write('Makefile', <<~MAKEFILE)
  # Generated by #{File.basename(__FILE__)}.
  SHELL = /bin/sh
  CARGO = #{cargo.shellescape}
  RUBY = #{RbConfig.ruby.shellescape}
  TARGET_DIR = #{target_dir.shellescape}
  DLLIB = sass_embedded.#{dlext}
  sitearchdir = #{RbConfig::CONFIG['sitearchdir'].shellescape}
  sitelibdir = #{RbConfig::CONFIG['sitelibdir'].shellescape}
  DESTDIR =

  .PHONY: all install clean $(DLLIB)

  all: $(DLLIB)

  $(DLLIB):
  \tenv #{cargo_env.join(' ')} $(CARGO) #{subcommand} --release --locked --manifest-path #{manifest.shellescape} --target-dir $(TARGET_DIR)#{passed}
  \tcp #{release_dir}/#{library} $(DLLIB)

  install: all
  \tmkdir -p $(DESTDIR)$(sitearchdir)
  \tcp $(DLLIB) $(DESTDIR)$(sitearchdir)/$(DLLIB)
  #{"\trm -rf $(TARGET_DIR)" if remove_target}

  clean:
  \trm -f $(DLLIB)
MAKEFILE
