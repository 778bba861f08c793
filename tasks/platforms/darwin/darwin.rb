# frozen_string_literal: true

require 'digest'
require 'fileutils'
require 'shellwords'
require_relative 'gem'
require_relative '../../zig'

module SassEmbeddedBuild
  module Rubies
    # rake native:darwin: the arm64-darwin and x86_64-darwin platform gems,
    # cross-built in a Debian sid root, since nothing here can run macOS code.
    # In the root (tasks/platforms/darwin/build.sh): zig's darwin SDK, Rubies
    # configured for macOS, and the extension for each CPU and Ruby minor,
    # linked by LLVM's ld64.lld. Here: each gem packed with its bundles and
    # the darwin compiler of its CPU, then checked (tasks/formats/mach_o.rb); a gem
    # that fails a check is removed. Debian's Ruby of each minor (sid's, or
    # the suite's that MINORS names) is the baseruby of the darwin Ruby of
    # that minor.
    DARWIN = Ruby.new(minor: '3.3', suite: 'sid', extra_suites: MINORS.flat_map(&:extra_suites).uniq, purpose: 'darwin',
                      deb_src: %w[sid experimental],
                      packages: MINORS.map { |minor| "ruby#{minor.minor}" } +
                                %w[rustc cargo rust-src llvm clang lld unzip xz-utils dpkg-dev],
                      label: 'macOS cross builds (sid root)')

    # The steps of rake native:darwin around the run in the root.
    module Darwin
      # The Ruby minors each gem carries (all of MINORS: contiguous, as
      # RubyGems needs; 3.1 would need 3.2, which Debian does not have, so
      # Rubies before 3.3 on a Mac get the source gem), each darwin Ruby
      # configured from Debian's orig tarball of its minor
      # (Mirror::RUBY_TARBALLS). Only their headers and configuration reach
      # the bundle, and the ABI is the same across a minor's patch releases.
      MINORS = Rubies.minor_names.freeze
      # Per gem: Rust's CPU name and the oldest macOS the extension asks for,
      # Rust's own minimum for the target (`rustc --print deployment-target`).
      # The bundled compilers need macOS 14; the extension alone runs on older
      # systems with a compiler of the user's (SASS_EMBEDDED_COMPILER).
      GEMS = {
        'arm64-darwin' => { cpu: 'aarch64', deployment_target: '11.0', compiler: 'sass-embedded-darwin-arm64' },
        'x86_64-darwin' => { cpu: 'x86_64', deployment_target: '10.12', compiler: 'sass-embedded-darwin-x64' }
      }.freeze
      # Where the root keeps the kit (build.sh).
      PREFIX = '/opt/sass-embedded-darwin'

      module_function

      # Builds, packs and checks both gems into +checkout+/pkg.
      # @return [Array<String>] the gems
      def call(checkout, compiler_cache)
        Rubies.prepare([DARWIN])
        work = File.join(checkout, 'tmp', 'darwin')
        out = File.join(work, 'out')
        FileUtils.rm_rf(out)
        FileUtils.mkdir_p(work)
        cpus = GEMS.values.map { |gem| "#{gem[:cpu]}:#{gem[:deployment_target]}" }.join(' ')
        tarballs = MINORS.map { |minor| Mirror.ruby_tarball(minor, work) }
        wheel = Zig.wheel(work)
        script = ['sh', 'tasks/platforms/darwin/build.sh', PREFIX, wheel, out, cpus, *tarballs].shelljoin
        puts "\n== native:darwin: #{GEMS.keys.join(', ')} for Ruby #{MINORS.join(', ')} (root #{Roots.path(DARWIN)})"
        run = Rubies.run(DARWIN, script, {}, limit: ENV.fetch('SASS_DARWIN_TIMEOUT', '5400'))
        abort "native:darwin: the build failed (#{Rubies.duration(run.seconds)}, #{run.place})" \
          unless run.success?

        gems = GEMS.map { |platform, gem| pack(checkout, out, platform, gem, compiler_cache) }
        puts "native:darwin: built #{gems.join(', ')} in #{Rubies.duration(run.seconds)} (#{run.place})"
        gems
      end

      # Packs +platform+'s gem from a stage holding its bundles and compiler,
      # checks it, and leaves it in pkg/.
      def pack(checkout, out, platform, gem, compiler_cache)
        stage = File.join(File.dirname(out), platform)
        FileUtils.rm_rf(File.join(stage, 'lib'))
        MINORS.each do |minor|
          FileUtils.mkdir_p(File.join(stage, 'lib', 'sass', minor))
          FileUtils.cp(File.join(out, "#{gem[:cpu]}-#{minor}", 'sass_embedded.bundle'),
                       File.join(stage, 'lib', 'sass', minor, 'sass_embedded.bundle'))
        end
        archive = CompilerPackage.cached_copy(gem[:compiler], Sass::Embedded::VERSION,
                                              compiler_cache)
        CompilerPackage.install(File.join(stage, 'lib', 'sass', 'embedded', 'dart-sass'),
                                Sass::Embedded::VERSION, archive:, package: gem[:compiler])
        path = PlatformGem.build(checkout, File.join(checkout, 'pkg'),
                                 minors: MINORS, platform: Gem::Platform.new(platform), native: stage)
        rbconfigs = MINORS.to_h { |minor| [minor, File.join(out, "#{gem[:cpu]}-#{minor}", 'rbconfig.rb')] }
        begin
          DarwinGem.check(path, deployment_target: gem[:deployment_target], rbconfigs:)
        rescue DarwinGem::Failure
          FileUtils.rm_f(path)
          raise
        end
        path
      end
    end
  end
end
