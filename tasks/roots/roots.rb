# frozen_string_literal: true

require 'digest'
require 'fileutils'
require 'json'
require 'shellwords'

module SassEmbeddedBuild
  module Rubies
    # The Debian roots: made with mmdebstrap, cached under SASS_RUBIES_CACHE and
    # reused while the arguments they were made with stay the same (a stamp in
    # the root keeps them), made anew otherwise. A root is never removed while
    # anything is mounted in it or runs in it.
    module Roots
      # What the build and the suite need besides the Ruby: rake, cargo's linker
      # and bindgen's libclang (the Rust toolchain comes from the host), TLS
      # roots in case cargo must fetch a crate, ps for the tests, and mount for
      # the test that overlays a musl loader in a mount namespace.
      COMMON_PACKAGES = %w[rake libclang-dev build-essential ca-certificates procps mount].freeze

      module_function

      def cache_dir
        ENV.fetch('SASS_RUBIES_CACHE') do
          File.join(ENV.fetch('XDG_CACHE_HOME', File.join(Dir.home, '.cache')), 'sass-embedded', 'rubies')
        end
      end

      def mirror = ENV.fetch('SASS_RUBIES_MIRROR', 'http://deb.debian.org/debian')

      def path(ruby) = File.join(File.expand_path(cache_dir), ruby.root_name)

      def stamp_path(root) = File.join(root, 'etc', 'sass-embedded-root.json')

      # mmdebstrap's arguments, :target standing for the directory. The mirror
      # may serve a snapshot older than a Release file's Valid-Until (sid's is a
      # week), hence Check-Valid-Until false. Debian's `rake` pulls in the
      # suite's default Ruby (3.3 on sid), so a hook points /usr/local/bin/ruby
      # at the root's own; another checks that minitest and rake load in it.
      def mmdebstrap_arguments(ruby)
        sources = [ruby.suite, *ruby.extra_suites].map { |suite| "deb #{mirror} #{suite} main" } +
                  Array(ruby.deb_src).map { |suite| "deb-src #{mirror} #{suite} main" }
        check = "require 'minitest'; require 'rake'; " \
                "puts \"#{ruby.executable}: minitest \#{Minitest::VERSION}, rake \#{Rake::VERSION}\""
        [
          *("--architectures=#{ruby.architecture}" if ruby.foreign?),
          '--variant=apt', '--aptopt=Acquire::Check-Valid-Until "false"',
          "--include=#{(ruby.packages + COMMON_PACKAGES).join(',')}",
          %(--customize-hook=ln -sf #{ruby.executable} "$1/usr/local/bin/ruby"),
          %(--customize-hook=chroot "$1" #{ruby.executable} -e #{check.shellescape}),
          ruby.suite, :target, *sources
        ]
      end

      # What a root made with +arguments+ keeps in its stamp.
      def stamp(arguments) = JSON.generate(arguments.map(&:to_s))

      # Whether +ruby+'s root is there, made with the arguments it would be
      # made with now.
      def current?(ruby)
        stamp_file = stamp_path(path(ruby))
        File.file?(stamp_file) && File.read(stamp_file) == stamp(mmdebstrap_arguments(ruby))
      end

      # Yields the root's lock file, locked (shared: runs; exclusive: making or
      # removing the root), or nil if LOCK_NB was asked and another run holds it.
      def with_lock(ruby, mode)
        FileUtils.mkdir_p(cache_dir)
        File.open(File.join(cache_dir, "#{ruby.root_name}.lock"), File::RDWR | File::CREAT, 0o644) do |lock|
          yield(lock.flock(mode) ? lock : nil)
        end
      end

      # Makes the root unless one made with the same arguments is there; called
      # with the lock held shared, which it holds again on return. Returns
      # :reused or :created.
      def ensure_root(ruby, lock)
        return :reused if current?(ruby)

        # Exclusive while making it, which waits for runs in an older root.
        lock.flock(File::LOCK_EX)
        return :reused if current?(ruby) # another run made it meanwhile

        arguments = mmdebstrap_arguments(ruby)
        create(ruby, path(ruby), arguments, stamp(arguments))
        :created
      ensure
        lock.flock(File::LOCK_SH)
      end

      # Made in ROOT.new and renamed when complete, so a root is never half
      # made. mmdebstrap runs in a mount namespace of its own too, so that what
      # it mounts in the new root cannot outlive it even if it is killed.
      def create(ruby, root, arguments, stamp)
        fresh = "#{root}.new"
        delete_root(fresh) # left by an interrupted creation
        puts "== creating the Ruby #{ruby.minor} root (Debian #{ruby.suite}) in #{root}"
        command = ['unshare', '--mount', '--propagation', 'private', '--',
                   'mmdebstrap', *arguments.map { |argument| argument == :target ? fresh : argument }]
        unless system(*command)
          delete_root(fresh)
          raise "mmdebstrap failed: #{command.shelljoin}"
        end
        File.write(stamp_path(fresh), stamp)
        delete_root(root) # made with other arguments
        File.rename(fresh, root)
      end

      # Mount points (seen from any process, so in any mount namespace) and
      # chrooted processes inside +root+.
      def busy(root)
        inside = ->(other) { other == root || other.start_with?("#{root}/") }
        mounts = Dir.glob('/proc/[0-9]*/mountinfo').flat_map do |file|
          File.read(file).lines.map do |line|
            line.split[4].gsub(/\\([0-7]{3})/) do
              Integer(Regexp.last_match(1), 8).chr
            end
          end
        rescue SystemCallError
          []
        end
        processes = Dir.glob('/proc/[0-9]*/root').select do |link|
          inside.call(File.readlink(link))
        rescue SystemCallError
          false
        end
        mounts.uniq.select(&inside).map { |mount| "mount #{mount}" } +
          processes.map { |link| "process #{link.split('/')[2]}" }
      end

      # Removes +root+ if it exists, refusing while it is in use.
      def delete_root(root)
        return unless File.exist?(root)

        root = File.expand_path(root)
        cache = File.expand_path(cache_dir)
        raise "refusing to remove #{root}: not under #{cache}" unless root.start_with?("#{cache}/")

        in_use = busy(root)
        raise "refusing to remove #{root} while in use: #{in_use.join(', ')}" unless in_use.empty?

        puts "removing #{root}"
        FileUtils.rm_rf(root)
      end

      # rake rubies:clean
      def clean
        abort 'rake rubies:clean needs root (the roots belong to root)' unless Process.euid.zero?
        [*RUBIES, *Platforms.table.flat_map(&:roots)].uniq.each do |ruby|
          roots = [path(ruby), "#{path(ruby)}.new", "#{path(ruby)}.checkout"].select { |root| File.exist?(root) }
          next if roots.empty?

          with_lock(ruby, File::LOCK_EX | File::LOCK_NB) do |lock|
            abort "#{path(ruby)} is in use by another run" unless lock
            roots.each { |root| delete_root(root) }
          end
        end
      end
    end

    # Files fetched from the Debian mirror for a platform's build (sources
    # Debian's indexes no longer name), each pinned to its SHA-256.
    module Mirror
      # Ruby's sources by minor (MINORS), for the Rubies built from source
      # (musl, the darwin cross builds, the old-glibc root's Ruby): Debian's
      # orig tarballs on its mirror, pinned to their SHA-256 (Debian repacks
      # them, so they are not byte for byte ruby-lang.org's; sid's and
      # experimental's indexes already name newer ones that the mirror no
      # longer keeps). Each already holds configure and its bundled gems.
      RUBY_TARBALLS = MINORS.to_h { |minor| [minor.minor, [minor.tarball, minor.sha256]] }.freeze

      module_function

      # The MINORS line for Ruby +minor+ (rake rubies:minor[4.0]): Debian's
      # ruby<minor> from sid, or else experimental (with sid), and the newest
      # orig tarball those indexes name that the mirror still keeps, with the
      # SHA-256 the index gives it.
      def minor_line(minor)
        found = %w[sid experimental].filter_map do |suite|
          sources = IO.popen(['sh', '-c', "curl -fsSL #{Roots.mirror}/dists/#{suite}/main/source/Sources.xz | xz -dc"],
                             &:read)
          stanza = sources.split("\n\n").find { |text| text.start_with?("Package: ruby#{minor}\n") }
          stanza && [suite, stanza.scan(/^ (\h{64}) \d+ (ruby#{Regexp.escape(minor)}_(\S+)\.orig\.tar\.xz)$/)]
        end
        raise "no ruby#{minor} in Debian sid or experimental" if found.empty?

        suite = found.first.first
        tarballs = found.flat_map(&:last).uniq.sort_by { |_, _, version| Gem::Version.new(version) }.reverse
        sha256, name = tarballs.find { |_, file, _| kept?("pool/main/r/ruby#{minor}/#{file}") } ||
                       raise("the mirror keeps none of #{tarballs.map { |tarball| tarball[1] }.join(', ')}")
        extra = suite == 'sid' ? '[]' : '%w[experimental]'
        indent = ' ' * 10
        "Minor.new(minor: '#{minor}', suite: 'sid', extra_suites: #{extra}, packages: [],\n#{indent}" \
          "tarball: 'ruby#{minor}/#{name}',\n#{indent}sha256: '#{sha256}')"
      end

      def kept?(path) = system('curl', '-fsSI', '-o', File::NULL, "#{Roots.mirror}/#{path}")

      # Ruby +minor+'s tarball, kept in +directory+.
      def ruby_tarball(minor, directory)
        path, sha256 = RUBY_TARBALLS.fetch(minor)
        file("pool/main/r/#{path}", sha256, File.join(directory, File.basename(path)))
      end

      # The file at +path+ on the Debian mirror, kept at +kept+ once its
      # SHA-256 is +sha256+ (fetched again otherwise); +kept+.
      def file(path, sha256, kept)
        return kept if File.file?(kept) && Digest::SHA256.file(kept).hexdigest == sha256

        url = "#{Roots.mirror}/#{path}"
        FileUtils.mkdir_p(File.dirname(kept))
        system('curl', '--fail', '--silent', '--show-error', '--location', '--output', "#{kept}.part", url,
               exception: true)
        digest = Digest::SHA256.file("#{kept}.part").hexdigest
        raise "#{url}: SHA-256 #{digest}, not the pinned #{sha256}" unless digest == sha256

        File.rename("#{kept}.part", kept)
        kept
      end
    end
  end
end
