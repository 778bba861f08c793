# frozen_string_literal: true

module Sass
  class Rack
    # One stylesheet's latest Build::Output, and the single flight that keeps
    # it: requests for this stylesheet take turns under one mutex (a fiber
    # scheduler's fibers too), so while one compiles the others wait for it,
    # and requests for other stylesheets compile beside it.
    #
    # A request may take the output when the compile that made it started
    # after the request arrived (it read every file after any edit the
    # request could know of: so the requests that waited for one compile all
    # take it), or when its Snapshot is settled and still current. Otherwise
    # it compiles. Without +recompile+ the first output is kept for good.
    # @!visibility private
    class Stylesheet
      # @param recompile [Boolean] whether to check the files and recompile
      # @param build [Proc] compiles the stylesheet, returning a Build::Output
      #   (nil if its file is no longer one to serve)
      def initialize(recompile, &build)
        @recompile = recompile
        @build = build
        @mutex = Mutex.new
        @output = nil
      end

      # @param arrived [Float] when the request arrived (monotonic clock)
      # @param errors [#write, nil] where a compile error is logged: once, by
      #   the compile that first produced it
      # @return [Build::Output, nil] nil if the file is no longer one to
      #   serve (the request is refused; nothing is kept)
      def fetch(arrived, errors)
        @mutex.synchronize do
          return @output if current?(arrived)

          output = @build.call
          return if output.nil?

          log(output.error, errors) unless output.error.nil? || same_error?(@output&.error, output.error)
          @output = dated(output)
        end
      end

      # The bytes of output kept: its CSS and map (0 before the first).
      def bytes
        output = @output
        output.nil? ? 0 : output.css.bytesize + output.source_map.to_s.bytesize
      end

      private

      # +output+, with a Last-Modified that never goes back: past every one
      # this stylesheet gave when its content changed (also when its files'
      # times do not say so: a copy that keeps an old modification time, on
      # Windows, where Ruby reads no change time, or a second edit within
      # the second of the first), and no earlier than the last when it did
      # not (a compile forced by a snapshot not yet settled reads the same
      # times again). Where that date is a second not yet begun, responses
      # carry none until it begins (Sass::Rack#respond): dated the current
      # second instead, as HTTP dates go, it would equal the one a client of
      # the older result holds, which would then get a 304 for it.
      def dated(output)
        latest = @latest_modified
        if latest.nil? || output.last_modified.nil?
          nil
        elsif changed?(output)
          dated_past(output, latest) if output.last_modified.to_i <= latest.to_i
        elsif output.last_modified < latest
          output.last_modified = latest
          output.dated_from = @output.dated_from
        end
        @latest_modified = [latest, output.last_modified].compact.max
        output
      end

      # Dates +output+ past +latest+: the next second, or now if later.
      def dated_past(output, latest)
        output.last_modified = [Time.at(latest.to_i + 1), Time.now].max
        output.dated_from = output.last_modified if output.last_modified.to_i > Time.now.to_i
      end

      def changed?(output)
        @output.nil? || output.css != @output.css || output.source_map != @output.source_map
      end

      def current?(arrived)
        return false if @output.nil?
        return true unless @recompile

        @output.started >= arrived || (@output.snapshot.settled? && @output.snapshot.current?)
      end

      def same_error?(previous, error)
        !previous.nil? && previous.detailed_message(highlight: false) == error.detailed_message(highlight: false)
      end

      def log(error, errors)
        (errors || $stderr).write("Sass::Rack: #{error.detailed_message(highlight: false)}\n")
      end
    end
  end
end
