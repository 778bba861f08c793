# frozen_string_literal: true

module Sass
  class Rack
    # Maps a request path to the stylesheet it names, and refuses every path
    # that could name anything else: this is the one place that decides what
    # the middleware may serve.
    #
    # +/css/sub/app.css+ under the prefix +/css+ names +sub/app.scss+,
    # +sub/app.sass+ or +sub/app.css+ in the root, the first that exists;
    # +/css/sub/app.css.map+ names its source map. A path under the prefix is
    # refused (a 404, whatever exists) when it has a broken +%+ escape or,
    # percent-decoded, holds a NUL or a backslash, is not valid UTF-8, or
    # names a file whose real path (symlinks followed) lies outside the
    # root's. A path of more than MAX_SEGMENTS segments is the application's,
    # looked up nowhere here. A path with an empty,
    # +.+, +..+ or dot-led segment, or that names a partial (+_name+), is
    # never served either: it is refused when a stylesheet exists in the root
    # where it points (so nothing reveals it), and otherwise goes on to the
    # application, whose own files it may name (+/.well-known/...+,
    # +/vendor/_reset.css+).
    #
    # What was checked is what is compiled: a stylesheet is known by its real
    # path, and {#read} opens that path and checks the file it opened (the
    # descriptor's own path), so a symlink swapped between the check and the
    # read cannot lead it outside the root.
    # @!visibility private
    class SourcePath
      # What a request path names: +kind+ is +:css+ or +:map+, +source+ the
      # stylesheet's real path (symlinks followed: one stylesheet has one
      # however many ways a request can spell it), +name+ the CSS file's
      # path under the prefix (+sub/app.css+).
      Target = Struct.new(:kind, :source, :name)

      # More segments than any stylesheet tree has: a longer path goes on to
      # the application before anything is looked up.
      MAX_SEGMENTS = 64

      # The stylesheet extensions, in the order a request tries them.
      EXTENSIONS = %w[.scss .sass .css].freeze

      # Whether files are Windows's (see #opened_path).
      WINDOWS = Gem.win_platform?

      # How a stylesheet is opened: without blocking, so that a FIFO put in
      # its place is refused, not waited on. Not on Windows, which has no
      # FIFOs, and where Ruby's File::NONBLOCK is 1, the bit of O_WRONLY, so
      # that the file would be opened for writing only.
      OPEN_FLAGS = WINDOWS ? File::RDONLY : File::RDONLY | File::NONBLOCK

      # Returned for a path under the prefix that must not be served.
      REFUSED = :refused

      # What #read returns for a stylesheet above +max_bytes+: its size.
      TooLarge = Struct.new(:bytes)

      # The largest stylesheet read by default: far above any real one, and
      # a bound on what a request can make the middleware and the compiler
      # hold.
      MAX_BYTES = 16 * 1024 * 1024

      attr_reader :root, :max_bytes

      # @param root [String] the directory of the stylesheets
      # @param prefix [String] the URL path they are served under
      # @param maps [Boolean] whether +.css.map+ paths name source maps
      # @param max_bytes [Integer] the largest stylesheet #read reads
      # @raise [ArgumentError, TypeError] for a root that is not a directory,
      #   a prefix that is not a plain absolute URL path, or a +max_bytes+
      #   that is not a positive Integer
      def initialize(root, prefix, maps:, max_bytes: MAX_BYTES)
        raise TypeError, "root must be a String, got #{root.inspect}" unless root.is_a?(String)
        raise TypeError, "prefix must be a String, got #{prefix.inspect}" unless prefix.is_a?(String)
        unless max_bytes.is_a?(Integer) && max_bytes.positive?
          raise ArgumentError, "max_source_bytes must be a positive Integer, got #{max_bytes.inspect}"
        end

        @max_bytes = max_bytes

        @root = File.expand_path(root)
        raise ArgumentError, "root must be a directory: #{@root} is not one" unless File.directory?(@root)

        @prefix = "#{prefix.chomp('/')}/"
        unless @prefix.start_with?('/')
          raise ArgumentError,
                "prefix must be a path that starts with /: #{prefix.inspect}"
        end
        # A request path comes percent-encoded: a prefix that needs encoding
        # would never match one.
        unless Embedded.const_get(:Url).escape(@prefix) == @prefix
          raise ArgumentError, "prefix must be a URL path that needs no percent-encoding: #{prefix.inspect}"
        end

        @maps = maps
      end

      # @param path [String] the request's +PATH_INFO+ (still percent-encoded)
      # @return [Target, REFUSED, nil] what it names, REFUSED, or nil when it
      #   is not a stylesheet path under the prefix (or no stylesheet exists
      #   there), for the application to answer
      def resolve(path)
        # Bytes: a path that is not valid UTF-8 is refused below, not raised on.
        path = path.b
        return unless path.start_with?(@prefix)

        kind, stem = split(path.byteslice(@prefix.bytesize..))
        return if kind.nil?

        segments = segments(stem)
        return segments unless segments.is_a?(Array)

        source = find(segments)
        return source if source.nil? || source == REFUSED

        Target.new(kind, source, "#{segments.join('/')}.css")
      end

      # @param source [String] an absolute path
      # @return [String, nil] the path under the prefix that serves +source+
      #   (+sub/app.css+), when a request for it resolves to +source+
      def name_of(source)
        relative = source.delete_prefix("#{@root}/")
        return if relative == source

        extension = File.extname(relative)
        return unless EXTENSIONS.include?(extension)

        name = "#{relative.delete_suffix(extension)}.css"
        target = resolve(@prefix + Embedded.const_get(:Url).escape(name))
        name if target.is_a?(Target) && target.source == File.realpath(source)
      rescue SystemCallError
        nil
      end

      # The text of the stylesheet at +source+ (a real path {#resolve}
      # returned), read from the file it names now if that file is a regular
      # file inside the root; otherwise REFUSED. Opened without blocking, so a
      # FIFO put in its place is refused, not waited on. A file above
      # +max_bytes+ is not read (TooLarge), however it grows meanwhile.
      # @return [String, REFUSED, TooLarge]
      def read(source)
        File.open(source, OPEN_FLAGS) do |file|
          stat = file.stat
          return REFUSED unless stat.file?

          opened = opened_path(file, source)
          return REFUSED unless opened && inside?(opened)
          return TooLarge.new(stat.size) if stat.size > @max_bytes

          text = SourcePath.read_bounded(file, stat.size, @max_bytes)
          return TooLarge.new(text.bytesize) if text.bytesize > @max_bytes

          text.force_encoding(Encoding::UTF_8)
        end
      rescue SystemCallError, IOError
        REFUSED
      end

      # At most +max_bytes+ + 1 bytes of +file+, whose stat said +size+ (at
      # most +max_bytes+): as many as the stat said (a read of the whole
      # bound would allocate it), and if the file grew meanwhile, up to the
      # bound. Binary: the caller says what encoding the text is in.
      def self.read_bounded(file, size, max_bytes)
        text = file.read(size + 1) || +''
        text << (file.read(max_bytes + 1 - text.bytesize) || '') if text.bytesize > size
        text
      end

      private

      # The kind a path's ending asks for, and the path without it.
      def split(rest)
        if @maps && rest.end_with?('.css.map')
          [:map, rest.delete_suffix('.css.map')]
        elsif rest.end_with?('.css')
          [:css, rest.delete_suffix('.css')]
        end
      end

      # The decoded segments of +stem+; REFUSED, or nil (not the middleware's)
      # for a path that is not to be served.
      def segments(stem)
        return REFUSED if stem.match?(/%(?!\h\h)/)

        decoded = Embedded.const_get(:Url).unescape(stem)
        return REFUSED if !decoded.valid_encoding? || decoded.match?(/[\0\\]/)

        segments = decoded.split('/', MAX_SEGMENTS + 1)
        # Deeper than any tree the middleware serves: not its path, and the
        # application's own (a deep static file) without a lookup here.
        return if segments.length > MAX_SEGMENTS
        return segments unless unservable?(segments)

        source_where?(segments) ? REFUSED : nil
      end

      # Whether +segments+ have an empty, dot or dot-led segment, or name a
      # partial.
      def unservable?(segments)
        segments.empty? || segments.last.start_with?('_') ||
          segments.any? { |segment| segment.empty? || segment.start_with?('.') }
      end

      # Whether a stylesheet exists in the root where +segments+ point once
      # normalized (empty and +.+ segments dropped, +..+ applied): a stat,
      # never a read.
      def source_where?(segments)
        # "./" first: a leading "~name" is a name in the root, never a home
        # directory (File.expand_path would look the user up).
        base = File.expand_path("./#{segments.reject(&:empty?).join('/')}", @root)
        base.start_with?("#{@root}/") && EXTENSIONS.any? { |extension| File.file?(base + extension) }
      end

      # The real path of the first stylesheet that exists for +segments+;
      # REFUSED if it leaves the root.
      def find(segments)
        base = "#{@root}/#{segments.join('/')}"
        source = EXTENSIONS.lazy.map { |extension| base + extension }.find { |file| File.file?(file) }
        return if source.nil?

        real = File.realpath(source)
        inside?(real) ? real : REFUSED
      rescue SystemCallError
        REFUSED
      end

      def inside?(path)
        path.start_with?("#{File.realpath(@root)}/")
      end

      # The path of the file +file+ has open: on Linux the descriptor's own
      # (/proc), which names exactly the file opened. Elsewhere +path+ (what
      # was opened) if it still is that file's real path once opened. (On
      # Windows Ruby numbers a device one way for a path's stat, the drive,
      # and another for an open file's, so there the file's index alone,
      # unique within its volume, tells them apart.)
      def opened_path(file, path)
        File.readlink("/proc/self/fd/#{file.fileno}")
      rescue SystemCallError
        now = File.stat(path)
        opened = file.stat
        same_device = WINDOWS || now.dev == opened.dev
        path if File.realpath(path) == path && same_device && now.ino == opened.ino
      end
    end
  end
end
