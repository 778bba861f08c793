# frozen_string_literal: true

module Sass
  class Rack
    # What one compile depended on, as file-system stats taken right after it,
    # and whether they still hold: the check an unchanged stylesheet costs.
    #
    # It watches every file the compile loaded (its +loaded_urls+) and every
    # directory where a file could appear that would now win one of its loads:
    # for each directory a loaded file sits in relative to a base (a load path,
    # the root, or a loaded file's own directory, where relative loads look
    # first), that directory and its ancestors under every base, whether they
    # exist or not. A new +_name.scss+, +name/_index.scss+ or +name.import.scss+
    # changes one of those directories' modification time, or makes a missing
    # one appear.
    #
    # A stat is a file's device, inode, size and modification and change
    # times. Times have a granularity (a jiffy on Linux file systems, seconds
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

      # @param loaded_urls [Array<String>] the compile's canonical URLs
      # @param bases [Array<String>] absolute directories loads resolve against
      # @param started_at [Float] when the compile started (Unix time)
      def self.take(loaded_urls, bases, started_at)
        files = loaded_urls.map { |url| path_of(url) }
        return unchecked if files.include?(nil)

        stats = watched(files, bases).to_h { |path| [path, stat(path)] }
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

      # The loaded +files+, and under every base (the +bases+ and the files'
      # directories) each directory a file sits in relative to a base.
      def self.watched(files, bases)
        directories = (bases + files.map { |file| File.dirname(file) }).uniq
        relative = files.flat_map { |file| relative_directories(file, directories) }.uniq
        (files + directories.product(relative).map { |base, dir| dir == '.' ? base : File.join(base, dir) }).uniq
      end

      # The file path of a local +file:+ URL, nil for any other URL.
      def self.path_of(url)
        return unless url.start_with?('file:')

        path = Embedded.const_get(:Url).file_url_to_path(url)
        path.valid_encoding? ? path : nil
      rescue ArgumentError
        nil
      end

      # The directories +file+ sits in relative to each base it is under, each
      # with its ancestors ('.' included).
      def self.relative_directories(file, bases)
        bases.flat_map do |base|
          next [] unless file.start_with?("#{base}/")

          directory = File.dirname(file.delete_prefix("#{base}/"))
          ancestors = [directory]
          ancestors << (directory = File.dirname(directory)) until directory == '.'
          ancestors
        end
      end

      # A path's device, inode, size, and modification and change times (in
      # nanoseconds since the epoch), or nil where nothing exists.
      def self.stat(path)
        stat = File.stat(path)
        mtime = stat.mtime
        ctime = stat.ctime
        [stat.dev, stat.ino, stat.size, (mtime.tv_sec * 1_000_000_000) + mtime.tv_nsec,
         (ctime.tv_sec * 1_000_000_000) + ctime.tv_nsec]
      rescue Errno::ENOENT, Errno::ENOTDIR
        nil
      end

      private_class_method :new, :watched, :relative_directories

      # @return [Boolean] whether every stat was old enough, at the compile, to
      #   be trusted
      attr_reader :settled
      alias settled? settled

      # The newest modification or change time of a watched path: every
      # change a snapshot notices moves one of them forward (a change time
      # cannot be set back, not even by a copy that keeps the modification
      # time), so a later result never has an earlier Last-Modified.
      # @return [Time, nil]
      attr_reader :last_modified

      def initialize(stats, settled, last_modified)
        @stats = stats
        @settled = settled
        @last_modified = last_modified
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
