# frozen_string_literal: true

module Sass
  class Rack
    # What one compile depended on, as file-system stats taken right after it,
    # and whether they still hold: the check an unchanged stylesheet costs.
    #
    # It watches every file the compile loaded (its +loaded_urls+) and every
    # directory where a file could appear that would now win one of its
    # loads, under Sass's rules (a load looks relative to the file that loads
    # it first, then in each load path in turn):
    #
    # - the directory of each loaded file (a rival beside it: +_x.scss+ beside
    #   +x.css+, +x.import.scss+), and the one above an +_index+ file (an
    #   +x.scss+ beside +x/+ wins over +x/_index.scss+);
    # - for each load that did not resolve relative to its file (the compiler
    #   asked the Spy, the first importer, about it), the directory it names
    #   relative to that file and under every load path, and the +x/+ there
    #   (for a new +x/_index.scss+), whether they exist or not.
    #
    # - for each +pkg:+ load, the +package.json+ a Node package resolution
    #   reads or would read: +node_modules/<package>/package.json+ in the
    #   loading file's directory and in every directory above it, and above
    #   each NodePackageImporter's entry point (its +sass+, +style+ or
    #   +exports+ entry edited in place, or a package installed nearer, now
    #   resolves elsewhere).
    #
    # A load that resolved relative to its file cannot lose to a new file
    # anywhere but beside the one it found. So the set grows with the loads,
    # not with their product. A new +_name.scss+, +name/_index.scss+ or
    # +name.import.scss+ changes one of those directories' modification time,
    # or makes a missing one appear.
    #
    # A stat is a file's device, inode, size and modification and change
    # times. On Windows Ruby's change time is the creation time, so a file
    # copied in with its directory's time set back (tar, robocopy /DCOPY:T)
    # would change nothing a stat says: there a directory's stat also holds
    # a digest of its entries' names.
    #
    # Times have a granularity (a jiffy on Linux file systems, seconds
    # or two on others), so an edit made while the compile ran, in the same
    # tick as the previous one and keeping the size, would leave the stat as
    # it was. A snapshot with any time within MARGIN of the compile's start
    # (before or after) is therefore not +settled+, and is never trusted by a
    # later request.
    #
    # A compile that loaded anything not on disk (a custom importer's URL)
    # cannot be checked, nor can a failed one (whatever made a load fail,
    # a file or package not there yet, can be fixed anywhere): their
    # snapshot is never +current+ ({unchecked}).
    # @!visibility private
    class Snapshot
      # Seconds a time must lie before the compile started for the stat to be
      # trusted: above every common file system's time granularity (FAT's
      # two seconds included).
      MARGIN = 2.5

      # Whether a stat's change time is a creation time (see above).
      WINDOWS = Gem.win_platform?

      # An importer that answers nothing and notes what it was asked: the
      # loads that did not resolve relative to the file that made them, each
      # as its URL and that file's URL. One per compile, first among the
      # compile's importers.
      class Spy
        # @return [Array<Array(String, String)>] the URL and the containing URL of each load
        attr_reader :loads

        def initialize
          @loads = []
        end

        def canonicalize(url, context)
          @loads << [url, context.containing_url]
          nil
        end

        def load(_canonical_url)
          nil
        end
      end

      # @param loaded_urls [Array<String>] the compile's canonical URLs
      # @param loads [Array<Array(String, String)>] what the Spy saw
      # @param load_paths [Array<String>] the compile's absolute load paths
      # @param started_at [Float] when the compile started (Unix time)
      # @param package_roots [Array<String>] the NodePackageImporters' entry
      #   point directories
      def self.take(loaded_urls, loads, load_paths, started_at, package_roots: [])
        files = loaded_urls.map { |url| Embedded.const_get(:Url).local_path(url) }
        return unchecked if files.include?(nil)

        paths = watched(files, loads, load_paths) + manifests(loads, package_roots)
        stats = paths.uniq.to_h { |path| [path, stat(path)] }
        # A time within MARGIN of the start may hide an edit; one well in the
        # future (a clock ahead, `touch -d`) cannot: an edit sets the change
        # time to now.
        doubtful = ((started_at - MARGIN) * 1e9).to_i..((started_at + MARGIN) * 1e9).to_i
        settled = stats.each_value.all? { |stat| stat.nil? || stat.last(2).none? { |time| doubtful.cover?(time) } }
        modified = stats.each_value.filter_map { |stat| stat&.last(2)&.max }.max
        new(stats, settled, modified && Time.at(Rational(modified, 1_000_000_000)))
      end

      # A snapshot that is never current: the next request compiles again.
      def self.unchecked
        new(nil, false, nil)
      end

      # The loaded +files+, their directories (and the one above an index
      # file), and for each of +loads+ the directory it names, and its last
      # segment as a directory, relative to its file and under each load path.
      def self.watched(files, loads, load_paths)
        beside = files.flat_map do |file|
          directory = File.dirname(file)
          File.basename(file).match?(/\A_?index\./) ? [directory, File.dirname(directory)] : [directory]
        end
        candidates = loads.flat_map do |url, containing|
          relative = relative_path(url)
          next [] if relative.nil?

          from = containing && Embedded.const_get(:Url).local_path(containing)
          [*(File.dirname(from) if from), *load_paths].flat_map do |base|
            # "./" first: a URL's leading "~" (an importer's, as in
            # "~bootstrap/scss") is no home directory.
            directory = File.expand_path("./#{File.dirname(relative)}", base)
            [directory, File.join(directory, File.basename(relative))]
          end
        end
        (files + beside + candidates).uniq
      end

      # The package.json files the +pkg:+ loads among +loads+ read or would
      # read (see above).
      def self.manifests(loads, package_roots)
        loads.flat_map do |url, containing|
          name = url[%r{\Apkg:((?:@[^/]+/)?[^/?#]+)}, 1]
          next [] if name.nil?

          from = containing && Embedded.const_get(:Url).local_path(containing)
          starts = [*(File.dirname(from) if from), *package_roots]
          starts.flat_map { |start| ancestors(start) }.uniq.map do |directory|
            File.join(directory, 'node_modules', name, 'package.json')
          end
        end
      end

      # +directory+ and every directory above it.
      def self.ancestors(directory)
        parents = [directory]
        parents << File.dirname(parents.last) until File.dirname(parents.last) == parents.last
        parents
      end

      # The path a load's URL names relative to a base, or nil for a URL with
      # a scheme (+pkg:+, an importer's), which no directory decides.
      def self.relative_path(url)
        return if url.match?(/\A[A-Za-z][A-Za-z0-9+.-]*:/) || url.start_with?('/')

        path = Embedded.const_get(:Url).unescape(url)
        path.valid_encoding? && !path.empty? ? path : nil
      end

      # A path's device, inode, size, (on Windows, for a directory, the
      # digest of its entries' names,) and modification and change times (in
      # nanoseconds since the epoch, always last), or nil where nothing
      # exists.
      def self.stat(path)
        stat = File.stat(path)
        mtime = stat.mtime
        ctime = stat.ctime
        [stat.dev, stat.ino, stat.size, *(Dir.children(path).sort.hash if WINDOWS && stat.directory?),
         (mtime.tv_sec * 1_000_000_000) + mtime.tv_nsec, (ctime.tv_sec * 1_000_000_000) + ctime.tv_nsec]
      rescue Errno::ENOENT, Errno::ENOTDIR
        nil
      end

      private_class_method :new, :watched, :manifests, :ancestors, :relative_path

      # @return [Boolean] whether every stat was old enough, at the compile, to
      #   be trusted
      attr_reader :settled
      alias settled? settled

      # The newest modification or change time of a watched path: on Unix
      # every change a snapshot notices moves one of them forward (a change
      # time cannot be set back, not even by a copy that keeps the
      # modification time); where it can stay (Windows), Stylesheet moves
      # Last-Modified forward itself.
      # @return [Time, nil]
      attr_reader :last_modified

      def initialize(stats, settled, last_modified)
        @stats = stats
        @settled = settled
        @last_modified = last_modified
      end

      # The size +path+ had when the snapshot was taken, or nil if it was not
      # watched (or the snapshot is unchecked).
      def size_of(path)
        @stats&.dig(path, 2)
      end

      # @return [Boolean] whether every watched path is as it was (a path
      # that was missing is checked without a stat, whose failure would cost
      # an exception)
      def current?
        !@stats.nil? && @stats.all? do |path, stat|
          stat.nil? ? !File.exist?(path) : Snapshot.stat(path) == stat
        end
      end
    end
  end
end
