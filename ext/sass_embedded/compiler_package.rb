# frozen_string_literal: true

require 'fileutils'
require 'rbconfig'
require 'tmpdir'

module SassEmbeddedBuild
  # Fetches the Dart Sass compiler with the npm client: the platform's
  # +sass-embedded-<os>-<cpu>+ package at the gem's pinned version, unpacked
  # to +lib/sass/embedded/dart-sass+. Used by +extconf.rb+ (gem install) and by
  # +rake compiler+ (checkout).
  module CompilerPackage
    module_function

    # @return [String] the npm package for this platform
    def name(host_os: RbConfig::CONFIG['host_os'], host_cpu: RbConfig::CONFIG['host_cpu'], musl: musl?)
      os = case host_os
           when /linux/ then musl ? 'linux-musl' : 'linux'
           when /darwin/ then 'darwin'
           else raise "sass-embedded has no Dart Sass package for #{host_os}; set SASS_EMBEDDED_COMPILER"
           end
      cpu = case host_cpu
            when /\A(x86_64|x64|amd64)\z/ then 'x64'
            when /\A(aarch64|arm64)\z/ then 'arm64'
            else raise "sass-embedded has no Dart Sass package for #{host_cpu}; set SASS_EMBEDDED_COMPILER"
            end
      "sass-embedded-#{os}-#{cpu}"
    end

    # Whether this Ruby runs on musl libc (Alpine) rather than glibc.
    def musl?
      RbConfig::CONFIG['host_os'].include?('musl') || !Dir.glob('/lib/ld-musl-*').empty?
    end

    # The file that records which package a directory holds.
    def marker(directory)
      File.join(directory, '.package')
    end

    # Installs +name@version+ into +directory+ unless it is already there.
    # @return [String] the installed package spec
    def install(directory, version, package: name)
      spec = "#{package}@#{version}"
      return spec if File.file?(marker(directory)) && File.read(marker(directory)).strip == spec

      Dir.mktmpdir('sass-embedded-compiler') do |tmp|
        unless system('npm', 'pack', spec, '--silent', chdir: tmp, out: File::NULL)
          raise "`npm pack #{spec}` failed: the npm client (from Node.js) must be installed and reach its registry"
        end

        tarball = Dir.glob(File.join(tmp, '*.tgz')).first or raise "`npm pack #{spec}` produced no tarball"
        system('tar', '-xzf', tarball, '-C', tmp, exception: true)
        unpacked = File.join(tmp, 'package', 'dart-sass')
        raise "#{spec} has no dart-sass directory" unless File.directory?(unpacked)

        FileUtils.rm_rf(directory)
        FileUtils.mkdir_p(File.dirname(directory))
        FileUtils.cp_r(unpacked, directory)
        File.write(marker(directory), "#{spec}\n")
      end
      spec
    end
  end
end
