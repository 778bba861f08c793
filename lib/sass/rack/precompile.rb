# frozen_string_literal: true

require 'fileutils'

module Sass
  class Rack
    # {Rack.precompile}: every stylesheet the middleware would serve from a
    # root, compiled into an output directory under the name a request would
    # use, for a server that serves them as files.
    #
    # Everything is compiled before anything is written, so a stylesheet that
    # fails leaves the output as it was. Each file is then written whole
    # (through a temporary file renamed over it, removed if that fails),
    # keeping the mode of the file it replaces (a new one gets what
    # +File.write+ would give it).
    # @!visibility private
    class Precompile
      EXTENSIONS = SourcePath::EXTENSIONS

      # @param paths [SourcePath] the root, with the prefix +/+
      # @param build [Build] how one stylesheet compiles
      # @param output [String] the directory to write into
      def initialize(paths, build, output)
        @paths = paths
        @build = build
        @output = File.expand_path(output)
        return unless @output == paths.root || (File.exist?(@output) && File.realpath(@output) == real_root)

        raise ArgumentError, "output must not be the root itself (#{@output}): write the CSS beside the sources"
      end

      # @return [Array<String>] the files written
      # @raise [CompileError] when a stylesheet fails to compile (nothing is
      #   written then)
      def call
        @output_real = File.exist?(@output) ? File.realpath(@output) : nil
        files = sources.flat_map do |source|
          name = @paths.name_of(source)
          next [] if name.nil?

          compiled = @build.call(File.realpath(source), name, rescue_errors: false)
          next [] if compiled.nil?

          { name => compiled.css, "#{name}.map" => compiled.source_map }.compact.to_a
        end
        files.map { |name, body| Precompile.write(File.join(@output, name), body) }
      end

      # Writes +body+ to +path+ through a temporary file, so a server never
      # serves half of it, keeping +path+'s mode if it exists.
      def self.write(path, body)
        FileUtils.mkdir_p(File.dirname(path))
        mode = File.exist?(path) ? File.stat(path).mode & 0o7777 : 0o666 & ~File.umask
        temporary = "#{path}.#{Process.pid}.tmp"
        begin
          File.binwrite(temporary, body)
          File.chmod(mode, temporary)
          File.rename(temporary, path)
        rescue StandardError
          FileUtils.rm_f(temporary)
          raise
        end
        path
      end

      private

      def real_root = File.realpath(@paths.root)

      # Every stylesheet file under the root, as a request spells it: through
      # symlinked directories too (the middleware serves what is under one
      # that stays inside the root), but never around a loop, nor into the
      # output.
      def sources(directory = @paths.root, chain = [real_root])
        Dir.children(directory).sort.flat_map do |entry|
          path = File.join(directory, entry)
          next [] if entry.start_with?('.') || path == @output

          if File.directory?(path)
            real = File.realpath(path)
            next [] if chain.include?(real) || real == @output_real

            sources(path, [*chain, real])
          else
            EXTENSIONS.include?(File.extname(entry)) && File.file?(path) ? [path] : []
          end
        rescue SystemCallError
          []
        end
      end
    end
  end
end
