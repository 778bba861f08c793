# frozen_string_literal: true

module SassEmbeddedRubies
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
    def call(rubies = SassEmbeddedRubies.selected, tests: nil, task: 'test:rubies')
      SassEmbeddedRubies.prepare(rubies)
      only = tests ? " SASS_TESTS=#{tests.shellescape}" : ''
      runs = rubies.map do |ruby|
        where = SassEmbeddedRubies.on_host?(ruby) ? "the machine's own Ruby" : "Debian #{ruby.suite} root"
        puts "\n== #{task}: Ruby #{ruby.name} (#{where})"
        [ruby, SassEmbeddedRubies.run(ruby, "\"$RUBY\" -v && exec \"$RUBY\" -S rake test:ruby#{only}")]
      end
      summarize(runs, task)
    end

    def summarize(runs, task)
      puts "\n== #{task} summary"
      runs.each do |ruby, run|
        counts = counts(run.output)
        tests = if counts
                  "#{counts[:runs]} runs, #{counts[:assertions]} assertions, #{counts[:failures]} failures, " \
                    "#{counts[:errors]} errors, #{counts[:skips]} skips"
                else
                  'no test summary'
                end
        puts "#{ruby.name}: #{run.success? ? 'passed' : 'FAILED'} (#{run.status_label}), #{tests}; " \
             "build + suite #{SassEmbeddedRubies.duration(run.seconds)}, #{run.place}; " \
             "#{run.description || 'ruby -v failed'}"
      end
      failed = runs.reject { |_, run| run.success? }.map { |ruby, _| ruby.name }
      puts "#{task}: #{runs.size - failed.size} of #{runs.size} Rubies passed"
      abort "#{task} failed on Ruby #{failed.join(', ')}" unless failed.empty?
    end
  end
end
