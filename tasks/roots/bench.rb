# frozen_string_literal: true

require 'json'

module SassEmbeddedBuild
  module Rubies
    # rake bench:rubies: bench/run.rb's 1-thread tiny rows under each Ruby,
    # the raw ceiling measured in the same run, and multiplexed / raw.
    module Bench
      ROWS = ['1t/100000c w/o func w/o url', '1t/100000c w/ func w/o url'].freeze

      module_function

      def environment
        { 'BENCH_ROWS' => ENV.fetch('BENCH_ROWS', ROWS.join(',')), 'BENCH_SCALE' => ENV.fetch('BENCH_SCALE', '0.25'),
          'BENCH_REPEAT' => ENV.fetch('BENCH_REPEAT', '3') }
      end

      def call
        rubies = Rubies.selected
        Rubies.prepare(rubies)
        measured = rubies.map do |ruby|
          puts "\n== bench:rubies: Ruby #{ruby.minor}"
          run = Rubies.run(ruby, '"$RUBY" -v && "$RUBY" -S rake compile && exec "$RUBY" bench/run.rb',
                           environment)
          abort "bench:rubies failed on Ruby #{ruby.minor} (#{run.status_label})" unless run.success?

          path = run.output[/^written to (.*)$/, 1] or abort "bench/run.rb wrote no results on Ruby #{ruby.minor}"
          [ruby, run.description, JSON.parse(File.read(path), symbolize_names: true)]
        end
        report(measured)
      end

      def columns(*cells)
        cells.zip([5, 30, 8, 13, 10, 9]).each_with_index.map do |(cell, width), index|
          index < 2 ? cell.to_s.ljust(width) : cell.to_s.rjust(width)
        end.join
      end

      def report(measured)
        puts "\n== bench:rubies summary (#{environment.map { |pair| pair.join('=') }.join(' ')}; compiles/s)"
        puts columns('ruby', 'row', 'raw', 'multiplexed', 'wait_for', 'mux/raw')
        measured.each do |ruby, description, data|
          data[:rows].each do |row|
            rates = row[:results].transform_values { |result| result[:compiles] / result[:wall] }
            puts columns(ruby.minor, row[:name], rates[:raw].round, rates[:multiplexed].round, rates[:wait_for].round,
                         format('%.2f', rates[:multiplexed] / rates[:raw]))
          end
          puts "     #{description}"
        end
      end
    end
  end
end
