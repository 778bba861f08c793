# frozen_string_literal: true

# `rake bench`: the benchmark matrix of the dart-sass change that replaced
# waitFor with async/await, run through these dispatchers in one run:
#
# - raw: the Ruby-free Rust core driving the compiler (bench/raw), the ceiling;
# - multiplexed: this gem's default host (the tokio executor);
# - thread: the same host with the built-in poll(2) executor (rows compared
#   side by side in the executor table);
# - wait_for: the same host with the waitFor-style dispatcher (one compile at
#   a time under a process-wide lock);
# - spin=N: this gem with a fixed spin budget (SASS_EMBEDDED_SPIN_US=N)
#   instead of the default, which follows how long answers take: in the
#   one-at-a-time rows, side by side in a table of their own;
# - portable: the default host built with the waiting mechanism of macOS and
#   the BSDs (poll(2) and pipes instead of epoll and eventfd), and reader:
#   built with Windows's (a reader thread per compiler), each mounted over
#   the checkout's build in a mount namespace of the row's own: only when
#   run as root with that build present (`rake bench` builds them then), in
#   the rows the executor table compares, and side by side in a table of
#   their own.
#
# Every row runs in a fresh process per dispatcher, so CPU and peak RSS are
# the row's own. BENCH_SCALE scales the counts (default 0.1: about three and a
# half minutes on two CPUs; 1 for the full matrix, over 15 minutes);
# BENCH_REPEAT runs each row that many times, the dispatchers interleaved,
# and keeps the median run (by compiles/s) of each. The table goes to stdout,
# the numbers to bench/results/<time>.json. BENCH_ROWS=name,name runs only
# those rows (rake bench:rubies runs the 1-thread tiny rows under each Ruby
# this way); the targets are then left out.

require 'json'
require 'fileutils'
require 'rbconfig'
require 'shellwords'
require 'time'
require_relative 'processes'

ROOT = File.expand_path('..', __dir__)
SCALE = Float(ENV.fetch('BENCH_SCALE', 0.1))
REPEAT = [Integer(ENV.fetch('BENCH_REPEAT', 1)), 1].max
RAW = File.join(ROOT, 'target', 'release', 'sass-embedded-bench-raw')
COMPILER = File.join(ROOT, 'lib', 'sass', 'embedded', 'dart-sass', 'sass')
BOOTSTRAP = ENV.fetch('BENCH_BOOTSTRAP', File.join(ROOT, 'bench', 'vendor', 'bootstrap', 'scss', 'bootstrap.scss'))
MODES = %w[raw multiplexed wait_for].freeze
MINOR = RUBY_VERSION[/\A\d+\.\d+/]
# The builds with another waiting mechanism (Rakefile's OTHER_WAITS): mode
# => the mechanism it waits with, for those present.
OTHER_WAITS = { 'portable' => 'poll', 'reader' => 'reader' }.select do |name, _|
  library = File.join(ROOT, 'tmp', "#{name}-lib-#{MINOR}", "sass_embedded.#{RbConfig::CONFIG['DLEXT']}")
  Process.euid.zero? && File.file?(library)
end.freeze
# The rows that also run on the built-in executor (and the other waiting
# mechanisms), for the executor and waiting tables.
EXECUTORS = (%w[raw multiplexed thread wait_for] + OTHER_WAITS.keys).freeze
# Fixed spin budgets (µs) beside the default's in the one-at-a-time rows:
# tiny compiles, and a sweep for the loop that takes the compiler about a
# millisecond (the default should come within 5% of the best of them).
SPINS = %w[0 250 1000].map { |us| "spin=#{us}" }.freeze
SPIN_SWEEP = %w[0 250 500 1000 2000 5000].map { |us| "spin=#{us}" }.freeze

def scaled(count, minimum)
  [(count * SCALE).round, minimum].max
end

def tiny_rows
  [1, 4, 16].flat_map do |threads|
    [false, true].flat_map do |func|
      [false, true].map do |url|
        modes = threads != 4 && !url ? EXECUTORS : MODES
        modes += SPINS if threads == 1 && !func && !url
        { name: "#{threads}t/100000c #{func ? 'w/' : 'w/o'} func #{url ? 'w/' : 'w/o'} url", kind: 'tiny',
          count: scaled(100_000, threads * 20), threads:, func:, url:, modes: }
      end
    end
  end
end

def rows
  [
    { name: '1c start up cost', kind: 'startup', count: scaled(20, 3), threads: 1 },
    { name: '1t/100c bootstrap', kind: 'bootstrap', count: scaled(100, 3), threads: 1 },
    # The same stylesheet through Sass::Rack, unchanged: requests, not
    # compiles, each costing the checks alone (main thread, no server).
    { name: 'main/20000r Sass::Rack bootstrap', kind: 'rack', count: scaled(20_000, 200), threads: 1,
      modes: %w[multiplexed] },
    # A stylesheet of 200 components (bench/components.rb): unchanged
    # requests, and full compiles of it beside them.
    { name: 'main/5000r Sass::Rack 200 comps', kind: 'rack_components', count: scaled(5000, 50), threads: 1,
      modes: %w[multiplexed] },
    # Bootstrap compiled as the middleware compiles it after a change (its
    # Loaders read the loaded files), against 1t/100c bootstrap.
    { name: 'main/100c Sass::Rack bootstrap compile', kind: 'rack_compile', count: scaled(100, 3), threads: 1,
      modes: %w[multiplexed] },
    { name: 'main/100c 200 components', kind: 'components', count: scaled(100, 3), threads: 1,
      modes: %w[multiplexed] },
    *tiny_rows,
    # Most programs compile on their main thread.
    *[false, true].map do |func|
      { name: "main/100000c #{func ? 'w/' : 'w/o'} func w/o url", kind: 'tiny', count: scaled(100_000, 20),
        threads: 1, func:, main: true, modes: func ? EXECUTORS : EXECUTORS + SPINS }
    end,
    # One at a time, a stylesheet the compiler takes about a millisecond for.
    { name: '1t/20000c loop of 50', kind: 'loop', count: scaled(20_000, 20), threads: 1,
      modes: %w[raw multiplexed] + SPIN_SWEEP },
    { name: 'main/20000c loop of 50', kind: 'loop', count: scaled(20_000, 20), threads: 1, main: true,
      modes: %w[raw multiplexed] + SPIN_SWEEP },
    # One fiber under a fiber scheduler (the async gem's), against the same
    # row without one.
    { name: '1f/100000c w/o func w/o url', kind: 'tiny', count: scaled(100_000, 20), threads: 1, fibers: 1,
      modes: %w[raw multiplexed] },
    { name: '1t/1000c w/ 100 func calls each', kind: 'calls', count: scaled(1000, 50), threads: 1 },
    { name: '16t/2000c w/ func sleeping 1ms', kind: 'sleep', count: scaled(2000, 1000), threads: 16, sleep_ms: 1 },
    { name: '16f/2000c w/ func sleeping 1ms', kind: 'sleep', count: scaled(2000, 1000), threads: 1, fibers: 16,
      sleep_ms: 1, modes: %w[raw multiplexed] },
    { name: '1t/500c w/ func sleeping 1ms', kind: 'sleep', count: scaled(500, 200), threads: 1, sleep_ms: 1,
      modes: %w[raw multiplexed] },
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

def modes(row)
  row[:modes] || MODES
end

def arguments(row, mode)
  # The raw ceiling has no fibers: its concurrency is the fibers' count.
  threads = mode == 'raw' ? (row[:fibers] || row[:threads]) : row[:threads]
  args = ["count=#{row[:count]}", "threads=#{threads}"]
  args << 'func=1' if row[:func]
  args << 'url=1' if row[:url]
  args << "sleep_ms=#{row[:sleep_ms]}" if row[:sleep_ms]
  args << "path=#{BOOTSTRAP}" if row[:kind] == 'bootstrap'
  if mode != 'raw'
    args << 'main=1' if row[:main]
    args << "fibers=#{row[:fibers]}" if row[:fibers]
  end
  args
end

# A fixed spin budget's mode (spin=N): N.
def spin_budget(mode)
  mode[/\Aspin=(\d+)\z/, 1]
end

def environment(row, mode)
  env = { 'BENCH_BOOTSTRAP' => BOOTSTRAP }
  # Fibers never spin before they sleep (see docs/performance.md), so
  # neither does their ceiling.
  env['SASS_EMBEDDED_SPIN_US'] = '0' if row[:fibers]
  env['SASS_EMBEDDED_SPIN_US'] = spin_budget(mode) if spin_budget(mode)
  env
end

def measure(row, mode)
  dispatch = OTHER_WAITS.key?(mode) || spin_budget(mode) ? 'multiplexed' : mode
  row_script = [RbConfig.ruby, File.join(__dir__, 'row.rb'), dispatch, row[:kind], *arguments(row, mode)]
  command = if mode == 'raw'
              [RAW, COMPILER, row[:kind], *arguments(row, mode)]
            elsif OTHER_WAITS.key?(mode)
              installed = File.join(ROOT, 'lib', 'sass', MINOR)
              build = File.join(ROOT, 'tmp', "#{mode}-lib-#{MINOR}")
              ['unshare', '--mount', '--propagation', 'private', '--', 'sh', '-c',
               "mount --bind #{build.shellescape} #{installed.shellescape} && exec #{row_script.shelljoin}"]
            else
              row_script
            end
  output = IO.popen(environment(row, mode), command, &:read)
  raise "#{command.join(' ')} failed" unless $?.success? # rubocop:disable Style/SpecialGlobalVars

  JSON.parse(output.lines.last, symbolize_names: true).tap do |result|
    result[:rate] = result[:compiles] / result[:wall]
    expected = OTHER_WAITS.fetch(mode, result[:wait])
    raise "#{mode} waited with #{result[:wait]}, not #{expected}" unless result[:wait] == expected
  end
end

def per_compile(result, key)
  result[key].to_f / result[:compiles] * 1e6
end

# The host's CPU per compile apart from its spins before sleeping.
def working_cpu(result)
  per_compile(result, :host_cpu) - per_compile(result, :spun)
end

def format_row(row, mode, result, ratios)
  growth = if result[:host_rss_first_kb] && result[:host_rss_last_kb]
             format('%+6.1f', (result[:host_rss_last_kb] - result[:host_rss_first_kb]) / 1024.0)
           else
             '     -'
           end
  migrations = result[:compiler_migrations] ? format('%6.2f', result[:compiler_migrations].fdiv(result[:compiles])) : ''
  format('%-34s %-11s %8d %8.2f %10.0f %6s %6s %8.1f %8.1f %8.1f %6s %8.1f %8.1f %s',
         row[:name], mode, result[:compiles], result[:wall], result[:rate],
         ratios[:raw] || '', ratios[:wait_for] || '',
         per_compile(result, :host_cpu), per_compile(result, :spun), per_compile(result, :compiler_cpu), migrations,
         result[:host_rss_kb] / 1024.0, result[:compiler_rss_kb] / 1024.0, growth)
end

abort "#{RAW} is missing: `rake bench` builds it" unless File.executable?(RAW)
if ROWS.any? { |row| %w[bootstrap rack rack_compile].include?(row[:kind]) } && !File.file?(BOOTSTRAP)
  abort "#{BOOTSTRAP} is missing: rake bench fetches it with npm"
end

puts RUBY_DESCRIPTION
puts "BENCH_SCALE=#{SCALE} BENCH_REPEAT=#{REPEAT} (#{`nproc`.strip} cores; x raw = compiles/s over raw's, " \
     'x wait = multiplexed over wait_for; host us, comp us = CPU per compile of host and compiler; ' \
     'spin us = the part of host us spent spinning before sleeping; mig/c = the compiler\'s CPU migrations ' \
     'per compile; ' \
     'main = the main thread, Nf = N fibers of one thread under the async gem\'s scheduler)'
puts format('%-34s %-11s %8s %8s %10s %6s %6s %8s %8s %8s %6s %8s %8s %6s',
            'row', 'dispatch', 'compiles', 'wall s', 'compiles/s', 'x raw', 'x wait',
            'host us', 'spin us', 'comp us', 'mig/c', 'host MB', 'comp MB', 'dRSS')
puts '-' * 156
BENCH_STARTED = Process.clock_gettime(Process::CLOCK_MONOTONIC)
results = ROWS.each_with_index.map do |row, index|
  # Progress on stderr: the row's table lines come once all its runs are in.
  warn format('bench: [%d/%d] %s (%s x %d) at %d s', index + 1, ROWS.size, row[:name], modes(row).join(', '),
              REPEAT, Process.clock_gettime(Process::CLOCK_MONOTONIC) - BENCH_STARTED)
  runs = Array.new(REPEAT) { modes(row).map { |mode| [mode, measure(row, mode)] } }.flatten(1)
  measured = modes(row).to_h do |mode|
    sorted = runs.select { |run_mode, _| run_mode == mode }.map(&:last).sort_by { |run| run[:rate] }
    [mode, sorted[sorted.length / 2]]
  end
  modes(row).each do |mode|
    ratios = {}
    if mode != 'raw' && measured['raw']
      ratios[:raw] = format('%.2f', measured[mode][:rate] / measured['raw'][:rate])
      if mode == 'multiplexed' && measured['wait_for']
        ratios[:wait_for] = format('%.2f', measured[mode][:rate] / measured['wait_for'][:rate])
      end
    end
    puts format_row(row, mode, measured[mode], ratios)
  end
  $stdout.flush
  row.merge(results: measured)
end

executor_rows = results.select { |row| row[:results]['thread'] }
unless executor_rows.empty?
  puts
  puts 'executors side by side (the background work on tokio or on the built-in poll(2) thread):'
  puts format('%-34s %-8s %8s %10s %8s %8s', 'row', 'executor', 'wall s', 'compiles/s', 'host us', 'host MB')
  executor_rows.each do |row|
    { 'tokio' => 'multiplexed', 'thread' => 'thread' }.each do |name, mode|
      result = row[:results][mode]
      puts format('%-34s %-8s %8.2f %10.0f %8.1f %8.1f', row[:name], name, result[:wall], result[:rate],
                  per_compile(result, :host_cpu), result[:host_rss_kb] / 1024.0)
    end
  end
end

waiting_rows = results.select { |row| OTHER_WAITS.keys.any? { |mode| row[:results][mode] } }
if waiting_rows.empty?
  puts "\n(no waiting table: the other waiting builds are measured only as root, with tmp/<name>-lib-#{MINOR} built)"
else
  puts
  puts 'waiting mechanisms side by side (Linux: epoll and eventfd; macOS and the BSDs: poll(2) and pipes; ' \
       'Windows: a reader thread):'
  puts format('%-34s %-8s %8s %10s %6s %8s %8s', 'row', 'waiting', 'wall s', 'compiles/s', 'x raw', 'host us',
              'host MB')
  waiting_rows.each do |row|
    { row[:results]['multiplexed'][:wait] => 'multiplexed', **OTHER_WAITS.invert }.each do |name, mode|
      result = row[:results][mode]
      puts format('%-34s %-8s %8.2f %10.0f %6.2f %8.1f %8.1f', row[:name], name, result[:wall], result[:rate],
                  result[:rate] / row[:results]['raw'][:rate], per_compile(result, :host_cpu),
                  result[:host_rss_kb] / 1024.0)
    end
  end
end

spin_rows = results.select { |row| row[:results].keys.any? { |mode| spin_budget(mode) } }
unless spin_rows.empty?
  puts
  puts 'spin budgets side by side, one compile at a time (default: the budget follows recent answers; ' \
       'spin=N: fixed, N us; x best = the best fixed budget\'s compiles/s over this one\'s, so 1.00 is the best):'
  puts format('%-34s %-11s %9s %7s %8s %8s %8s %10s', 'row', 'budget', 'wall us/c', 'x best', 'host us', 'spin us',
              'comp us', 'host+comp')
  spin_rows.each do |row|
    runs = row[:results].reject { |mode, _| %w[raw wait_for thread].include?(mode) || OTHER_WAITS.key?(mode) }
    best = runs.select { |mode, _| spin_budget(mode) }.values.map { |result| result[:rate] }.max
    runs.each do |mode, result|
      puts format('%-34s %-11s %9.1f %7.2f %8.1f %8.1f %8.1f %10.1f', row[:name],
                  mode == 'multiplexed' ? 'default' : mode, 1e6 / result[:rate], best / result[:rate],
                  per_compile(result, :host_cpu), per_compile(result, :spun), per_compile(result, :compiler_cpu),
                  per_compile(result, :host_cpu) + per_compile(result, :compiler_cpu))
    end
  end
end

{ 'rack' => %w[bootstrap Bootstrap],
  'rack_components' => ['components', '200 components'] }.each do |kind, (full, what)|
  rack = results.find { |row| row[:kind] == kind }
  compiled = results.find { |row| row[:kind] == full }
  next unless rack && compiled

  requests = rack[:results]['multiplexed']
  compiles = compiled[:results]['multiplexed']
  watched = requests[:watched] ? ", #{requests[:watched]} paths checked" : ''
  puts "\nSass::Rack, unchanged #{what}: #{requests[:rate].round} requests/s " \
       "(#{format('%.1f', per_compile(requests, :host_cpu))} us CPU each#{watched}) against " \
       "#{format('%.1f', compiles[:rate])} full compiles/s: #{(requests[:rate] / compiles[:rate]).round} x"
end

rack_compile = results.find { |row| row[:kind] == 'rack_compile' }
bootstrap = results.find { |row| row[:kind] == 'bootstrap' }
if rack_compile && bootstrap
  through = rack_compile[:results]['multiplexed']
  direct = bootstrap[:results]['multiplexed']
  puts format("\nSass::Rack compiling Bootstrap (its Loaders reading the loaded files): %.2f compiles/s, %.1f ms " \
              'host CPU each, against Sass.compile: %.2f compiles/s, %.1f ms: %.2f x the time',
              through[:rate], per_compile(through, :host_cpu) / 1000, direct[:rate],
              per_compile(direct, :host_cpu) / 1000, direct[:rate] / through[:rate])
end

# The multi-process rows (bench/processes.rb), with the full matrix only
# (BENCH_PROCESSES=0 leaves them out).
processes = nil
if ROWS.size == rows.size && ENV['BENCH_PROCESSES'] != '0'
  count = scaled(7000, 300)
  warn format('bench: the multi-process rows (%d compiles a process, x %d) at %d s', count, REPEAT,
              Process.clock_gettime(Process::CLOCK_MONOTONIC) - BENCH_STARTED)
  medians = BenchProcesses.measure(RAW, COMPILER, count:, rounds: REPEAT)
  puts
  puts BenchProcesses.table(medians, count)
  processes = medians.map { |(load, n, variant), run| { load:, processes: n, variant:, **run } }
end

FileUtils.mkdir_p(File.join(__dir__, 'results'))
path = File.join(__dir__, 'results', "#{Time.now.utc.strftime('%Y%m%dT%H%M%SZ')}.json")
File.write(path, JSON.pretty_generate(scale: SCALE, repeat: REPEAT, cores: Integer(`nproc`), ruby: RUBY_DESCRIPTION,
                                      rows: results, processes:))
if ROWS.size < rows.size
  puts "\nwritten to #{path}"
  exit
end

def find(results, name)
  results.find { |row| row[:name] == name }[:results]
end

def ratio(results, name, mode = 'multiplexed', over = 'raw')
  measured = find(results, name)
  measured[mode][:rate] / measured[over][:rate]
end

summary = []
target = lambda do |text, value, met|
  summary << { target: text, value: value.is_a?(Float) ? value.round(3) : value, met: }
end
['1t/100000c w/o func w/o url', 'main/100000c w/o func w/o url'].each do |name|
  target.call("#{name}: multiplexed >= 0.97 x raw", ratio(results, name), ratio(results, name) >= 0.97)
  over_wait = ratio(results, name, 'multiplexed', 'wait_for')
  target.call("#{name}: multiplexed >= 1.0 x wait_for", over_wait, over_wait >= 1.0)
end
['1t/100000c w/ func w/o url', 'main/100000c w/ func w/o url'].each do |name|
  target.call("#{name}: multiplexed >= 0.97 x raw", ratio(results, name), ratio(results, name) >= 0.97)
end
['16t/100000c w/o func w/o url', '16t/100000c w/ func w/o url'].each do |name|
  target.call("#{name}: multiplexed >= 0.90 x raw", ratio(results, name), ratio(results, name) >= 0.90)
end
['1t/20000c loop of 50', 'main/20000c loop of 50'].each do |name|
  measured = find(results, name)
  best = measured.select { |mode, _| spin_budget(mode) }.values.map { |result| result[:rate] }.max
  over = best / measured['multiplexed'][:rate]
  target.call("#{name}: the default spin budget within 5% of the best fixed one (best's speed over it)", over,
              over <= 1.05)
end
tiny = find(results, '1t/100000c w/o func w/o url')
cpu = working_cpu(tiny['multiplexed']) / working_cpu(tiny['raw'])
target.call('host CPU per 1t tiny compile, spins aside, <= 1.5 x raw\'s', cpu, cpu <= 1.5)
# Rows run minutes apart, and this machine's speed drifts more than these
# targets allow: each row is compared through its own raw ceiling, measured
# interleaved with it.
main_over_thread = ratio(results, 'main/100000c w/o func w/o url') / ratio(results, '1t/100000c w/o func w/o url')
target.call('1t tiny on the main thread within 5% of another thread (x raw over x raw)', main_over_thread,
            (main_over_thread - 1).abs <= 0.05)
scheduler = ratio(results, '1f/100000c w/o func w/o url') / ratio(results, '1t/100000c w/o func w/o url')
target.call('1t tiny in a fiber under a scheduler costs <= 10% (x raw over x raw)', scheduler, scheduler >= 0.9)
bootstrap_run = find(results, '1t/100c bootstrap')['multiplexed']
spinning = bootstrap_run[:spun] / bootstrap_run[:wall]
target.call('bootstrap: < 1% of the time spent spinning', format('%.3f%%', spinning * 100), spinning < 0.01)
target.call('bootstrap: multiplexed >= 0.97 x raw (no regression)', ratio(results, '1t/100c bootstrap'),
            ratio(results, '1t/100c bootstrap') >= 0.97)
sleeping = ratio(results, '16t/2000c w/ func sleeping 1ms', 'multiplexed', 'wait_for')
target.call('sleeping 1ms function, 16t: multiplexed >= 5 x wait_for (no regression)', sleeping, sleeping >= 5)
fibers = find(results, '16f/2000c w/ func sleeping 1ms')['multiplexed'][:rate]
threads16 = find(results, '16t/2000c w/ func sleeping 1ms')['multiplexed'][:rate]
one = find(results, '1t/500c w/ func sleeping 1ms')['multiplexed'][:rate]
target.call('sleeping 1ms function: 16 fibers of one thread >= 5 x 1 thread (info: x 16 threads)',
            "#{(fibers / one).round(2)} (#{(fibers / threads16).round(2)})", fibers / one >= 5)
nested = ratio(results, '4t/10000c w/ nested compile')
target.call('4t nested compile: multiplexed >= 0.85 x raw (no regression)', nested, nested >= 0.85)
growth = results.select { |row| row[:kind] == 'tiny' }.map do |row|
  measured = row[:results]['multiplexed']
  (measured[:host_rss_last_kb] - measured[:host_rss_first_kb]) / 1024.0
end.max
target.call('host RSS flat over the 100000-compile rows (< 2 MB growth)', growth, growth < 2)
if processes
  spin_over_off = BenchProcesses::COUNTS.map do |n|
    run = ->(variant) { processes.find { |p| p[:load] == 'loaded' && p[:processes] == n && p[:variant] == variant } }
    run.call('gem')[:wall] / run.call('no spin')[:wall]
  end.max
  target.call('loaded, 1-8 processes: wall <= 1.05 x with the spin off (worst N)', spin_over_off,
              spin_over_off <= 1.05)
end

puts
puts 'targets:'
summary.each { |line| puts format('  %-4s %-80s %s', line[:met] ? 'met' : 'MISS', line[:target], line[:value]) }

File.write(path, JSON.pretty_generate(scale: SCALE, repeat: REPEAT, cores: Integer(`nproc`), ruby: RUBY_DESCRIPTION,
                                      rows: results, processes:, targets: summary))
puts "\nwritten to #{path}"
