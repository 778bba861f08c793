# frozen_string_literal: true

module SassEmbeddedRubies
  # rake test:rubies: `rake test:ruby` (the build, then minitest with -w)
  # under each Ruby, then a summary line per Ruby; fails if any failed.
  module Suite
    module_function

    def counts(output)
      line = output.scan(/^(\d+) runs, (\d+) assertions, (\d+) failures, (\d+) errors, (\d+) skips$/).last
      line && %i[runs assertions failures errors skips].zip(line.map { |count| Integer(count) }).to_h
    end

    def call
      rubies = SassEmbeddedRubies.selected
      SassEmbeddedRubies.prepare(rubies)
      runs = rubies.map do |ruby|
        where = SassEmbeddedRubies.on_host?(ruby) ? "the machine's own Ruby" : "Debian #{ruby.suite} root"
        puts "\n== test:rubies: Ruby #{ruby.minor} (#{where})"
        [ruby, SassEmbeddedRubies.run(ruby, '"$RUBY" -v && exec "$RUBY" -S rake test:ruby')]
      end
      summarize(runs)
    end

    def summarize(runs)
      puts "\n== test:rubies summary"
      runs.each do |ruby, run|
        counts = counts(run.output)
        tests = if counts
                  "#{counts[:runs]} runs, #{counts[:assertions]} assertions, #{counts[:failures]} failures, " \
                    "#{counts[:errors]} errors, #{counts[:skips]} skips"
                else
                  'no test summary'
                end
        puts "#{ruby.minor}: #{run.success? ? 'passed' : 'FAILED'} (#{run.status_label}), #{tests}; " \
             "build + suite #{SassEmbeddedRubies.duration(run.seconds)}, #{run.place}; " \
             "#{run.description || 'ruby -v failed'}"
      end
      failed = runs.reject { |_, run| run.success? }.map { |ruby, _| ruby.minor }
      puts "test:rubies: #{runs.size - failed.size} of #{runs.size} Rubies passed"
      abort "test:rubies failed on Ruby #{failed.join(', ')}" unless failed.empty?
    end
  end
end
