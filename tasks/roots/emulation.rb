# frozen_string_literal: true

require 'fileutils'
require 'shellwords'
require 'tmpdir'

module SassEmbeddedBuild
  module Rubies
    # User-mode emulation of arm64 for `rake test:arm64`: Debian 13's
    # qemu-user (10.0, static binaries; bookworm's qemu-user-static 7.2 cannot
    # run the Dart VM, NATIVE-NOTES), fetched with apt from trixie into the
    # cache (apt verifies it against Debian's archive keyring), and registered
    # with binfmt_misc under the F flag: the kernel opens the interpreter at
    # registration, so it runs binaries inside chroots that do not hold it.
    module Emulation
      SUITE = 'trixie'
      ENTRY = 'qemu-aarch64'
      BINFMT = '/proc/sys/fs/binfmt_misc'
      # An aarch64 ELF executable's header, and which of its bits matter (as
      # qemu's own binfmt registration script has them).
      MAGIC = '\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00'
      MASK = '\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff'

      module_function

      def directory = File.join(File.expand_path(Roots.cache_dir), "qemu-user-#{SUITE}")
      def interpreter = File.join(directory, 'usr', 'bin', 'qemu-aarch64')

      # Makes arm64 binaries runnable here: fetches qemu if the cache lacks it,
      # then registers it unless it is registered already.
      def prepare
        fetch unless File.executable?(interpreter)
        register
        version = IO.popen([interpreter, '--version'], &:gets).to_s.strip
        puts "arm64 emulation: #{interpreter} (#{version}), binfmt_misc #{ENTRY} with the F flag"
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

      # Registers the interpreter, replacing an aarch64 entry that names another
      # (an older qemu would fail inside the Dart VM).
      def register
        unless File.exist?(File.join(BINFMT, 'register'))
          system('mount', '-t', 'binfmt_misc', 'binfmt_misc', BINFMT, exception: true)
        end
        entry = File.join(BINFMT, ENTRY)
        if File.exist?(entry)
          current = File.read(entry)
          return if current.include?("interpreter #{interpreter}\n") && current.match?(/^flags: .*F/) &&
                    current.start_with?('enabled')

          puts "binfmt_misc: replacing #{ENTRY} (#{current[/^interpreter (.*)$/, 1]}) with #{interpreter}"
          File.write(entry, '-1')
        end
        File.write(File.join(BINFMT, 'register'), ":#{ENTRY}:M::#{MAGIC}:#{MASK}:#{interpreter}:F")
      end
    end
  end
end
