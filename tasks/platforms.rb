# frozen_string_literal: true

require 'rbconfig'
require_relative 'platforms/table'

module SassEmbeddedBuild
  # `rake test:platforms`: every platform beyond the machine's own, in turn,
  # each as `rake <task>` in a process of its own under a time limit. A failing
  # platform does not stop the others; the run ends with one line per platform
  # (passed or failed, its counts, its time, whether its roots were cached)
  # and fails if any platform did. Each platform stays a task of its own
  # (`rake test:arm64`, ...), and SASS_PLATFORMS=arm64,targets picks some.
  #
  # Needs root (the platforms run in Debian roots; tasks/roots.rb).
  module Platforms
    module_function

    def selected
      wanted = ENV.fetch('SASS_PLATFORMS', '').split(/[\s,]+/).reject(&:empty?)
      return table if wanted.empty?

      known = table.map(&:name)
      unknown = wanted - known
      abort "SASS_PLATFORMS: unknown #{unknown.join(', ')} (known: #{known.join(', ')})" unless unknown.empty?
      table.select { |platform| wanted.include?(platform.name) }
    end

    # What a platform's output says it ran: minitest's totals (summed over
    # its Rubies), check:targets' clean targets or the darwin gems checked.
    def counts(output)
      totals = output.scan(/^(\d+) runs, \d+ assertions, (\d+) failures, (\d+) errors, (\d+) skips$/)
      unless totals.empty?
        runs, failures, errors, skips = totals.map { |line| line.map { |count| Integer(count) } }.transpose.map(&:sum)
        return "#{runs} runs, #{failures} failures, #{errors} errors, #{skips} skips"
      end
      checked = output.scan(/^check:targets: (\S+) clean/).flatten
      return "#{checked.size} targets clean" unless checked.empty?

      gems = output.scan(/^(\S+\.gem): checked /).flatten
      return "#{gems.size} gems built and checked" unless gems.empty?

      output[/^\d+ test binaries: .*? ignored/] || 'no counts'
    end

    def call
      results = selected.map do |platform|
        cached = platform.cached?
        puts "\n==== test:platforms: #{platform.name} (rake #{platform.task}, #{cached ? 'cached' : 'cold'})"
        started = Rubies.clock
        status, output = Rubies.stream(
          {}, ['timeout', '-k', '30', platform.task_limit.to_s, RbConfig.ruby, '-S', 'rake', platform.task]
        )
        [platform, status, output, Rubies.clock - started, cached]
      end
      summarize(results)
    end

    def summarize(results)
      puts "\n==== test:platforms summary"
      results.each do |platform, status, output, seconds, cached|
        verdict = if status.success?
                    'passed'
                  elsif status.exitstatus == 124
                    "FAILED (timed out after #{platform.task_limit} s)"
                  else
                    'FAILED'
                  end
        puts "#{platform.name}: #{verdict}, #{counts(output)}, #{Rubies.duration(seconds)}, " \
             "#{cached ? 'cached' : 'cold'} (rake #{platform.task})"
      end
      failed = results.reject { |_, status| status.success? }.map(&:first).map(&:name)
      puts "test:platforms: #{results.size - failed.size} of #{results.size} platforms passed"
      abort "test:platforms failed: #{failed.join(', ')}" unless failed.empty?
    end
  end
end
