# frozen_string_literal: true

# `rake bench`: the benchmark matrix of the dart-sass change that replaced
# waitFor with async/await, run through three dispatchers in one run:
#
# - raw: the Ruby-free Rust core driving the compiler (bench/raw), the ceiling;
# - multiplexed: this gem's default host;
# - wait_for: the same host with the waitFor-style dispatcher (one compile at
#   a time under a process-wide lock, the caller reading the output itself).
#
# Every row runs in a fresh process per dispatcher, so CPU and peak RSS are
# the row's own. BENCH_SCALE scales the counts (0.1 for a quick run);
# BENCH_REPEAT runs each row that many times, the dispatchers interleaved,
# and keeps the median run (by compiles/s) of each. The table goes to stdout,
# the numbers to bench/results/<time>.json. BENCH_ROWS=name,name runs only
# those rows (rake bench:rubies runs the 1-thread tiny rows under each Ruby
# this way); the targets are then left out.

require 'json'
require 'fileutils'
require 'rbconfig'
require 'time'

ROOT = File.expand_path('..', __dir__)
SCALE = Float(ENV.fetch('BENCH_SCALE', 1))
REPEAT = [Integer(ENV.fetch('BENCH_REPEAT', 1)), 1].max
RAW = File.join(ROOT, 'target', 'release', 'sass-embedded-bench-raw')
COMPILER = File.join(ROOT, 'lib', 'sass', 'embedded', 'dart-sass', 'sass')
BOOTSTRAP = ENV.fetch('BENCH_BOOTSTRAP', File.join(ROOT, 'bench', 'vendor', 'bootstrap', 'scss', 'bootstrap.scss'))
MODES = %w[raw multiplexed wait_for].freeze

def scaled(count, minimum)
  [(count * SCALE).round, minimum].max
end

def rows
  tiny = [1, 4, 16].flat_map do |threads|
    [false, true].flat_map do |func|
      [false, true].map do |url|
        { name: "#{threads}t/100000c #{func ? 'w/' : 'w/o'} func #{url ? 'w/' : 'w/o'} url", kind: 'tiny',
          count: scaled(100_000, threads * 20), threads:, func:, url: }
      end
    end
  end
  [
    { name: '1c start up cost', kind: 'startup', count: scaled(20, 3), threads: 1 },
    { name: '1t/100c bootstrap', kind: 'bootstrap', count: scaled(100, 3), threads: 1 },
    *tiny,
    { name: '1t/1000c w/ 100 func calls each', kind: 'calls', count: scaled(1000, 50), threads: 1 },
    { name: '16t/2000c w/ func sleeping 1ms', kind: 'sleep', count: scaled(2000, 1000), threads: 16, sleep_ms: 1 },
    { name: '4t/10000c w/ nested compile', kind: 'nested', count: scaled(10_000, 40), threads: 4 }
  ]
end

ROWS = if ENV['BENCH_ROWS']
         names = ENV['BENCH_ROWS'].split(',').map(&:strip)
         unknown = names - rows.map { |row| row[:name] }
         abort "BENCH_ROWS: no row named #{unknown.join(', ')}" unless unknown.empty?
         rows.select { |row| names.include?(row[:name]) }
       else
         rows
       end

def arguments(row)
  args = ["count=#{row[:count]}", "threads=#{row[:threads]}"]
  args << 'func=1' if row[:func]
  args << 'url=1' if row[:url]
  args << "sleep_ms=#{row[:sleep_ms]}" if row[:sleep_ms]
  args << "path=#{BOOTSTRAP}" if row[:kind] == 'bootstrap'
  args
end

def measure(row, mode)
  command = if mode == 'raw'
              [RAW, COMPILER, row[:kind], *arguments(row)]
            else
              [RbConfig.ruby, File.join(__dir__, 'row.rb'), mode, row[:kind], *arguments(row)]
            end
  output = IO.popen({ 'BENCH_BOOTSTRAP' => BOOTSTRAP }, command, &:read)
  raise "#{command.join(' ')} failed" unless $?.success? # rubocop:disable Style/SpecialGlobalVars

  JSON.parse(output.lines.last, symbolize_names: true).tap do |result|
    result[:rate] = result[:compiles] / result[:wall]
  end
end

def format_row(row, mode, result, ratios)
  per = ->(seconds) { format('%8.1f', seconds / result[:compiles] * 1e6) }
  growth = if result[:host_rss_first_kb] && result[:host_rss_last_kb]
             format('%+6.1f', (result[:host_rss_last_kb] - result[:host_rss_first_kb]) / 1024.0)
           else
             '     -'
           end
  format('%-34s %-11s %8d %8.2f %10.0f %6s %6s %s %s %8.1f %8.1f %s',
         row[:name], mode, result[:compiles], result[:wall], result[:rate],
         ratios[:raw] || '', ratios[:wait_for] || '',
         per.call(result[:host_cpu]), per.call(result[:compiler_cpu]),
         result[:host_rss_kb] / 1024.0, result[:compiler_rss_kb] / 1024.0, growth)
end

abort "#{RAW} is missing: `rake bench` builds it" unless File.executable?(RAW)
if ROWS.any? { |row| row[:kind] == 'bootstrap' } && !File.file?(BOOTSTRAP)
  abort "#{BOOTSTRAP} is missing: rake bench fetches it with npm"
end

puts RUBY_DESCRIPTION
puts "BENCH_SCALE=#{SCALE} BENCH_REPEAT=#{REPEAT} (#{`nproc`.strip} cores; x raw = compiles/s over raw's, " \
     'x wait = multiplexed over wait_for; host us, comp us = CPU per compile of host and compiler)'
puts format('%-34s %-11s %8s %8s %10s %6s %6s %8s %8s %8s %8s %6s',
            'row', 'dispatch', 'compiles', 'wall s', 'compiles/s', 'x raw', 'x wait',
            'host us', 'comp us', 'host MB', 'comp MB', 'dRSS')
puts '-' * 140
results = ROWS.map do |row|
  runs = Array.new(REPEAT) { MODES.map { |mode| [mode, measure(row, mode)] } }.flatten(1)
  measured = MODES.to_h do |mode|
    sorted = runs.select { |run_mode, _| run_mode == mode }.map(&:last).sort_by { |run| run[:rate] }
    [mode, sorted[sorted.length / 2]]
  end
  MODES.each do |mode|
    ratios = {}
    if mode != 'raw'
      ratios[:raw] = format('%.2f', measured[mode][:rate] / measured['raw'][:rate])
      ratios[:wait_for] = format('%.2f', measured[mode][:rate] / measured['wait_for'][:rate]) if mode == 'multiplexed'
    end
    puts format_row(row, mode, measured[mode], ratios)
  end
  $stdout.flush
  row.merge(results: measured)
end

FileUtils.mkdir_p(File.join(__dir__, 'results'))
path = File.join(__dir__, 'results', "#{Time.now.utc.strftime('%Y%m%dT%H%M%SZ')}.json")
File.write(path, JSON.pretty_generate(scale: SCALE, repeat: REPEAT, cores: Integer(`nproc`), ruby: RUBY_DESCRIPTION,
                                      rows: results))
if ROWS.size < rows.size
  puts "\nwritten to #{path}"
  exit
end

def find(results, name)
  results.find { |row| row[:name] == name }[:results]
end

summary = []
{
  '1t/100000c w/o func w/o url' => 0.9, '1t/100000c w/ func w/o url' => 0.9, '16t/100000c w/o func w/o url' => 0.8,
  '16t/100000c w/ func w/o url' => 0.8, '1t/100c bootstrap' => 0.97
}.each do |name, target|
  measured = find(results, name)
  ratio = measured['multiplexed'][:rate] / measured['raw'][:rate]
  summary << { target: "#{name}: multiplexed >= #{target} x raw", value: ratio.round(3), met: ratio >= target }
end
sleeping = find(results, '16t/2000c w/ func sleeping 1ms')
ratio = sleeping['multiplexed'][:rate] / sleeping['wait_for'][:rate]
summary << { target: 'sleeping 1ms function, 16t: multiplexed >= 5 x wait_for', value: ratio.round(2), met: ratio >= 5 }
with = find(results, '1t/100000c w/ func w/o url')
without = find(results, '1t/100000c w/o func w/o url')
call_time = lambda do |mode|
  (1.0 / with[mode][:rate]) - (1.0 / without[mode][:rate])
end
per_call = (call_time.call('multiplexed') - call_time.call('raw')) * 1e6
summary << { target: 'host time per function call over raw (1t, wall) < 20 us', value: per_call.round(1),
             met: per_call < 20 }
cpu_per_call = lambda do |mode|
  ((with[mode][:host_cpu] / with[mode][:compiles]) - (without[mode][:host_cpu] / without[mode][:compiles])) * 1e6
end
summary << { target: 'host CPU per function call, multiplexed (info; raw in brackets)',
             value: "#{cpu_per_call.call('multiplexed').round(1)} us (#{cpu_per_call.call('raw').round(1)} us)",
             met: true }
calls = find(results, '1t/1000c w/ 100 func calls each')['multiplexed']
per_call = ((1.0 / calls[:rate]) - (1.0 / without['multiplexed'][:rate])) / 100 * 1e6
plain = 1e6 / without['multiplexed'][:rate]
summary << { target: "100 calls per compile: time per call <= a plain compile round trip (#{plain.round(1)} us)",
             value: "#{per_call.round(1)} us", met: per_call <= plain }
growth = results.select { |row| row[:kind] == 'tiny' }.map do |row|
  measured = row[:results]['multiplexed']
  (measured[:host_rss_last_kb] - measured[:host_rss_first_kb]) / 1024.0
end.max
summary << { target: 'host RSS flat over the 100000-compile rows (< 2 MB growth)', value: growth.round(2),
             met: growth < 2 }

puts
puts 'targets:'
summary.each { |line| puts format('  %-4s %-70s %s', line[:met] ? 'met' : 'MISS', line[:target], line[:value]) }

File.write(path, JSON.pretty_generate(scale: SCALE, repeat: REPEAT, cores: Integer(`nproc`), ruby: RUBY_DESCRIPTION,
                                      rows: results, targets: summary))
puts "\nwritten to #{path}"
