# frozen_string_literal: true

module Sass
  class Rack
    # One stylesheet's latest Build::Output, and the single flight that keeps
    # it: one compile of a stylesheet at a time (a fiber scheduler's fibers
    # too), the requests that come meanwhile waiting for it and then looking
    # again, each in turn, before a later request can start another; requests
    # for other stylesheets compile beside it.
    #
    # A request may take the output when the compile that made it started
    # after the request arrived (it read every file after any edit the
    # request could know of: so the requests that waited for one compile all
    # take it), or when its Snapshot is settled and still current, or, for a
    # failed compile, when the request arrived while it ran. Otherwise it
    # compiles. Without +recompile+ the first output is kept for good.
    # @!visibility private
    class Stylesheet
      # @param recompile [Boolean] whether to check the files and recompile
      # @param build [Proc] compiles the stylesheet, returning a Build::Output
      #   (nil if its file is no longer one to serve)
      def initialize(recompile, &build)
        @recompile = recompile
        @build = build
        @mutex = Mutex.new
        @compiled = ConditionVariable.new
        @compiling = false
        @output = nil
        @finished = nil
      end

      # @param arrived [Float] when the request arrived (monotonic clock)
      # @param errors [#write, nil] where a compile error is logged: once, by
      #   the compile that first produced it
      # @return [Build::Output, nil] nil if the file is no longer one to
      #   serve (the request is refused; nothing is kept)
      def fetch(arrived, errors)
        @mutex.synchronize do
          loop do
            return @output if current?(arrived)
            break unless @compiling

            # Woken when it ends, every waiter looks at its output before
            # any later request can start the next compile: a mutex held
            # through the compile went, more often than not, to the request
            # its own caller sent next, and the waiters took turns compiling.
            @compiled.wait(@mutex)
          end
          @compiling = true
        end
        compile(errors)
      end

      # The bytes of output kept: its CSS and map (0 before the first).
      def bytes
        output = @output
        output.nil? ? 0 : output.css.bytesize + output.source_map.to_s.bytesize
      end

      private

      # Compiles (outside the mutex, which the waiters need), keeps the
      # output, and wakes the waiters, whatever happened.
      def compile(errors)
        output = @build.call
      ensure
        @mutex.synchronize do
          @compiling = false
          keep(output, errors) if output
          @compiled.broadcast
        end
      end

      def keep(output, errors)
        @finished = Process.clock_gettime(Process::CLOCK_MONOTONIC)
        log(output.error, errors) unless output.error.nil? || same_error?(@output&.error, output.error)
        @output = dated(output)
      end

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
        # A file dated in the future (a clock ahead, `touch -d`) dates the
        # output when it was made: a time that moved with every response
        # would answer 200 to a client's If-Modified-Since once a second.
        now = Time.now
        output.last_modified = now if output.last_modified && output.last_modified > now
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

      # Whether a request that arrived at +arrived+ takes the output kept:
      # made by a compile that started after it arrived, or checked and
      # still current; and a failed one (never trusted, so compiled again at
      # the next request) also by every request that arrived while it ran,
      # so that many requests for a failing stylesheet share its compiles
      # instead of each waiting for one of its own.
      def current?(arrived)
        return false if @output.nil?
        return true unless @recompile
        return true if @output.started >= arrived || (@output.error && arrived <= @finished)

        @output.snapshot.settled? && @output.snapshot.current?
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
