# frozen_string_literal: true

module SassEmbeddedBuild
  module Rubies
    # rake test:async2: the fiber tests, and Sass::Rack's under async-http's
    # fiber server, under async 2 (Falcon's), which Debian sid builds for its
    # Ruby 3.3 (bookworm's and trixie's is 1.30).
    ASYNC2 = Ruby.new(minor: '3.3', suite: 'sid', packages: %w[ruby3.3 ruby3.3-dev ruby-async ruby-async-http] + RACK3,
                      private_build: true, label: '3.3 with async 2 (sid)')
    # What rake test:async2 runs.
    ASYNC2_TESTS = 'test/fiber_test.rb test/rack/concurrency_test.rb'

    # rake test:rubies: `rake test:ruby` (the build, then minitest with -w)
    # under each Ruby, then a summary line per Ruby; fails if any failed.
    module Suite
      module_function

      def counts(output)
        line = output.scan(/^(\d+) runs, (\d+) assertions, (\d+) failures, (\d+) errors, (\d+) skips$/).last
        line && %i[runs assertions failures errors skips].zip(line.map { |count| Integer(count) }).to_h
      end

      # Runs +tests+ (SASS_TESTS: globs, space-separated; or the whole Ruby suite) under each of
      # +rubies+.
      def call(rubies = Rubies.selected, tests: nil, task: 'test:rubies')
        Rubies.prepare(rubies)
        only = tests ? " SASS_TESTS=#{tests.shellescape}" : ''
        runs = rubies.map do |ruby|
          where = Rubies.on_host?(ruby) ? "the machine's own Ruby" : "Debian #{ruby.suite} root"
          puts "\n== #{task}: Ruby #{ruby.name} (#{where})"
          [ruby, Rubies.run(ruby, "\"$RUBY\" -v && exec \"$RUBY\" -S rake test:ruby#{only}")]
        end
        summarize(runs, task)
      end

      # The line that opens a suite's part of a run that tests a gem under
      # several Rubies (CheckoutCopy.gem_and_suite).
      def section(platform, minor) = "== the #{platform} gem under Ruby #{minor}"

      # A run's output cut at those lines, each part named by its minor (a
      # run that stopped early, at a build, has the parts it reached); the
      # whole output, unnamed, for a run without them.
      def sections(output)
        parts = output.split(/^(?=== the \S+ gem under Ruby )/).drop(1)
        return [[nil, output]] if parts.empty?

        parts.map { |part| [part[/\A== the \S+ gem under Ruby (\S+)/, 1], part] }
      end

      def summarize(runs, task)
        puts "\n== #{task} summary"
        runs.each do |ruby, run|
          sections(run.output).each { |minor, output| report(ruby, minor, run, output) }
        end
        failed = runs.reject { |_, run| run.success? }.map { |ruby, _| ruby.name }
        puts "#{task}: #{runs.size - failed.size} of #{runs.size} Rubies passed"
        abort "#{task} failed on Ruby #{failed.join(', ')}" unless failed.empty?
      end

      # One summary line: a run's (or its +minor+'s part's) result and counts.
      def report(ruby, minor, run, output)
        counts = counts(output)
        tests = if counts
                  "#{counts[:runs]} runs, #{counts[:assertions]} assertions, #{counts[:failures]} failures, " \
                    "#{counts[:errors]} errors, #{counts[:skips]} skips"
                else
                  'no test summary'
                end
        passed = run.success? || (minor && counts && (counts[:failures] + counts[:errors]).zero?)
        puts "#{ruby.name}#{" (Ruby #{minor})" if minor}: #{passed ? 'passed' : 'FAILED'} (#{run.status_label}), " \
             "#{tests}; build + suite #{Rubies.duration(run.seconds)}, #{run.place}; " \
             "#{output[/^ruby \d.*$/] || 'ruby -v failed'}"
      end
    end
  end
end
