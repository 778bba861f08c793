# frozen_string_literal: true

require 'English'

module SassEmbeddedBuild
  # A command's run in a root (or in place): its output streamed as it comes
  # and kept, and what tasks/roots.rb reports of it.
  module Rubies
    # What one run did: its exit status and output, and where and how long.
    Run = Struct.new(:status, :output, :root_state, :root_seconds, :seconds, keyword_init: true) do
      def success? = status.success?
      def description = output[/^ruby \d.*$/]

      def status_label
        status.exitstatus ? "exit #{status.exitstatus}" : "signal #{status.termsig}"
      end

      def place
        case root_state
        when :host then "the machine's Ruby"
        when :created then "root created in #{Rubies.duration(root_seconds)}"
        else 'root reused'
        end
      end
    end

    module_function

    # Runs +command+, echoing its output as it comes; returns its status and
    # output. If this process is interrupted, the command gets a TERM (enter.rb then
    # ends the run and unmounts) and is waited for.
    def stream(environment, command)
      output = String.new(encoding: Encoding::BINARY)
      IO.popen(environment, command, err: %i[child out], chdir: CHECKOUT) do |io|
        finished = false
        begin
          loop do
            chunk = io.readpartial(65_536)
            $stdout.write(chunk)
            $stdout.flush
            output << chunk
          rescue EOFError
            break
          end
          finished = true
        ensure
          unless finished
            begin
              Process.kill(:TERM, io.pid)
            rescue Errno::ESRCH
              nil
            end
          end
        end
      end
      [$CHILD_STATUS, output.force_encoding(Encoding::UTF_8).scrub]
    end
  end
end
