# frozen_string_literal: true

require 'fileutils'
require 'shellwords'
require 'tmpdir'

module SassEmbeddedBuild
  module Rubies
    # User-mode emulation of another CPU's Debian root (arm64 for `rake
    # test:arm64` and test:musl_arm64, armhf, riscv64): Debian 13's qemu-user
    # (10.0, static binaries; bookworm's qemu-user-static 7.2 cannot run the
    # Dart VM, NATIVE-NOTES), fetched with apt from trixie into the cache (apt
    # verifies it against Debian's archive keyring), and registered with
    # binfmt_misc under the F flag: the kernel opens the interpreter at
    # registration, so it runs binaries inside chroots that do not hold it.
    # Which ELF headers each interpreter takes is qemu's own binfmt file for
    # it (usr/share/qemu/binfmt.d in the package).
    module Emulation
      SUITE = 'trixie'
      BINFMT = '/proc/sys/fs/binfmt_misc'
      # qemu's name of each Debian architecture it runs here.
      CPUS = { 'arm64' => 'aarch64', 'armhf' => 'arm', 'riscv64' => 'riscv64' }.freeze

      module_function

      def directory = File.join(File.expand_path(Roots.cache_dir), "qemu-user-#{SUITE}")
      def cpu(architecture) = CPUS.fetch(architecture) { raise "no user-mode emulation for #{architecture}" }
      def entry(architecture) = "qemu-#{cpu(architecture)}"
      def interpreter(architecture) = File.join(directory, 'usr', 'bin', entry(architecture))

      # Makes the binaries of +root+'s architecture (a Ruby of Roots) runnable
      # here: fetches qemu if the cache lacks it, then registers it unless it
      # is registered already.
      def prepare(root)
        architecture = root.architecture
        fetch unless File.executable?(interpreter(architecture))
        register(architecture)
        version = IO.popen([interpreter(architecture), '--version'], &:gets).to_s.strip
        puts "#{architecture} emulation: #{interpreter(architecture)} (#{version}), binfmt_misc " \
             "#{entry(architecture)} with the F flag"
      end

      # apt-get with lists, cache and sources of its own, so the machine's apt
      # state is neither used nor changed.
      def fetch
        Dir.mktmpdir('sass-embedded-qemu') do |tmp|
          sources = File.join(tmp, 'sources.list')
          File.write(sources, "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] #{Roots.mirror} " \
                              "#{SUITE} main\n")
          options = ["-oDir::Etc::SourceList=#{sources}", '-oDir::Etc::SourceParts=/dev/null',
                     "-oDir::State::Lists=#{tmp}/lists", "-oDir::Cache=#{tmp}/cache", '-oDebug::NoLocking=1',
                     '-oAPT::Architecture=amd64', '-oAPT::Architectures=amd64', '-oAPT::Sandbox::User=root', '-qq']
          FileUtils.mkdir_p(["#{tmp}/lists/partial", "#{tmp}/cache/archives/partial"])
          puts "fetching qemu-user from Debian #{SUITE} (#{Roots.mirror})"
          system('apt-get', *options, 'update', exception: true)
          system('apt-get', *options, 'download', 'qemu-user', chdir: tmp, exception: true)
          deb = Dir.glob(File.join(tmp, 'qemu-user_*.deb')).first or raise 'apt-get download qemu-user left no .deb'
          fresh = "#{directory}.new"
          FileUtils.rm_rf(fresh)
          system('dpkg-deb', '-x', deb, fresh, exception: true)
          FileUtils.rm_rf(directory)
          File.rename(fresh, directory)
        end
      end

      # The magic and mask of the ELF headers qemu's package registers its
      # interpreter for, from its binfmt file
      # (":qemu-arm:M::<magic>:<mask>:<interpreter>:<flags>").
      def headers(architecture)
        file = File.join(directory, 'usr', 'share', 'qemu', 'binfmt.d', "#{entry(architecture)}.conf")
        fields = File.read(file).strip.split(':')
        raise "#{file}: not a magic binfmt entry" unless fields[1] == entry(architecture) && fields[2] == 'M'

        fields.values_at(4, 5)
      end

      # Registers the interpreter, replacing an entry of the same name that
      # names another (an older qemu would fail inside the Dart VM).
      def register(architecture)
        unless File.exist?(File.join(BINFMT, 'register'))
          system('mount', '-t', 'binfmt_misc', 'binfmt_misc', BINFMT, exception: true)
        end
        path = File.join(BINFMT, entry(architecture))
        if File.exist?(path)
          current = File.read(path)
          return if current.include?("interpreter #{interpreter(architecture)}\n") && current.match?(/^flags: .*F/) &&
                    current.start_with?('enabled')

          puts "binfmt_misc: replacing #{entry(architecture)} (#{current[/^interpreter (.*)$/, 1]}) with " \
               "#{interpreter(architecture)}"
          File.write(path, '-1')
        end
        magic, mask = headers(architecture)
        File.write(File.join(BINFMT, 'register'),
                   ":#{entry(architecture)}:M::#{magic}:#{mask}:#{interpreter(architecture)}:F")
      end
    end
  end
end
