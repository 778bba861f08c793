# frozen_string_literal: true

module Sass
  class Rack
    # The files a compile loads from disk, found and read here instead of by
    # the compiler, so that one above +max_source_bytes+ is refused before
    # anything reads it. One Loader is the entry stylesheet's importer (its
    # relative loads, and so those of every file it loads, arrive here as
    # absolute +file:+ URLs); another, after the compile's own importers,
    # stands for its load paths. A load is resolved as Sass's filesystem
    # importer resolves it ("resolving a file: URL" in the Sass spec:
    # import-only files for +@import+, partials, the +.sass+, +.scss+ and
    # +.css+ extensions, index files, an error for two candidates) to the
    # canonical +file:+ URL the compiler would give it, so loaded URLs,
    # errors and source maps stay what they were.
    #
    # What a custom FileImporter or a +pkg:+ URL resolves is read by the
    # compiler still (Build#loaded_too_large refuses it after the compile).
    # @!visibility private
    class Loader
      SYNTAXES = { '.scss' => :scss, '.sass' => :indented, '.css' => :css }.freeze
      # A URL with a scheme (+pkg:+, +file:+, an importer's own).
      SCHEME = /\A[a-z][a-z\d+.-]*:/i
      # Where the file system may ignore case, the compiler names a file as
      # its directory lists it (+@use 'Foo'+ and +@use 'foo'+ are then one
      # module, under the file's own name); elsewhere as the URL writes it.
      REAL_CASE = Gem.win_platform? || RUBY_PLATFORM.include?('darwin')
      private_constant :SYNTAXES, :SCHEME, :REAL_CASE

      # @param max_bytes [Integer] the largest file read
      # @param load_paths [Array<String>, nil] the absolute directories a
      #   relative URL is looked up in, in order; nil for the entry's
      #   importer, which gets only +file:+ URLs
      def initialize(max_bytes, load_paths = nil)
        @max_bytes = max_bytes
        @load_paths = load_paths
        @directories = {}
        @directories_lock = Mutex.new
      end

      def canonicalize(url, context)
        paths = if url.start_with?('file:')
                  [Embedded.const_get(:Url).local_path(url)].compact
                elsif @load_paths.nil? || url.match?(SCHEME)
                  []
                else
                  relative = Embedded.const_get(:Url).unescape(url)
                  @load_paths.map { |directory| File.expand_path("./#{relative}", directory) }
                end
        paths.each do |path|
          found = Loader.resolve(File.expand_path(path), context.from_import)
          return Embedded.const_get(:Url).path_to_file_url(REAL_CASE ? real_case(found) : found) if found
        end
        nil
      end

      def load(canonical_url)
        path = Embedded.const_get(:Url).local_path(canonical_url)
        { contents: read(path), syntax: SYNTAXES.fetch(File.extname(path), :scss), source_map_url: canonical_url }
      end

      # The file +path+ (without an extension, or with one) names, as Sass
      # finds it; nil if none.
      # @raise [RuntimeError] when two files could be meant
      def self.resolve(path, from_import)
        extension = File.extname(path)
        if SYNTAXES.key?(extension)
          (from_import && one(either("#{path.delete_suffix(extension)}.import#{extension}"))) || one(either(path))
        else
          (from_import && one(with_extensions("#{path}.import"))) || one(with_extensions(path)) ||
            (File.directory?(path) && ((from_import && one(with_extensions(File.join(path, 'index.import')))) ||
                                       one(with_extensions(File.join(path, 'index'))))) || nil
        end
      end

      # The files +path+ with each extension names: .sass and .scss, or
      # else .css.
      def self.with_extensions(path)
        found = either("#{path}.sass") + either("#{path}.scss")
        found.empty? ? either("#{path}.css") : found
      end

      # The partial and the plain file of +path+ that exist.
      def self.either(path)
        [File.join(File.dirname(path), "_#{File.basename(path)}"), path].select { |file| File.file?(file) }
      end

      # +path+ with each name in it as its directory lists it, where exactly
      # one entry there matches it ignoring ASCII case (as the compiler's
      # filesystem importer does on Windows and macOS), and a drive letter
      # upper-case; a name no entry or several match stays as written, and
      # so does the rest of a path whose directory cannot be listed.
      def self.real_case(path)
        path = path.sub(/\A[a-z]:/, &:upcase)
        parent = File.dirname(path)
        parent == path ? path : listed_name(real_case(parent), File.basename(path)) || path
      end

      # +name+ in +directory+ as the directory lists it; nil if it cannot be
      # listed.
      def self.listed_name(directory, name)
        matches = Dir.children(directory).select { |entry| entry.casecmp(name)&.zero? }
        File.join(directory, matches.one? ? matches.first : name)
      rescue SystemCallError
        nil
      end

      def self.one(paths)
        return paths.first if paths.length < 2

        raise "It's not clear which file to import. Found:\n#{paths.map { |path| "  #{path}" }.join("\n")}"
      end

      private

      # The file's text, unless it is above the bound (not read) or not a
      # regular file, which the compile then fails with.
      def read(path)
        # Opened as SourcePath opens a stylesheet: without blocking, so that
        # a FIFO that took a file's place since it was found is refused.
        File.open(path, SourcePath::OPEN_FLAGS) do |file|
          stat = file.stat
          raise "#{path} is not a regular file" unless stat.file?
          raise too_large(path, stat.size) if stat.size > @max_bytes

          text = SourcePath.read_bounded(file, stat.size, @max_bytes)
          raise too_large(path, text.bytesize) if text.bytesize > @max_bytes

          text.force_encoding(Encoding::UTF_8)
          raise 'Invalid UTF-8.' unless text.valid_encoding?

          text
        end
      end

      # Loader.real_case of +path+, its directory's kept (as the compiler
      # keeps them), so that a load lists one directory: listing every one
      # above each of Bootstrap's 86 loads cost 5 to 13 ms of CPU a compile
      # (measured here with REAL_CASE forced on), one each about 3.5 ms.
      def real_case(path)
        directory = File.dirname(path)
        real = @directories_lock.synchronize { @directories[directory] }
        unless real
          real = Loader.real_case(directory)
          @directories_lock.synchronize { @directories[directory] = real }
        end
        Loader.listed_name(real, File.basename(path)) || path
      end

      def too_large(path, bytes)
        "#{path} is #{bytes} bytes, above max_source_bytes (#{@max_bytes}): not read"
      end
    end
  end
end
