# frozen_string_literal: true

require 'json'
require 'rbconfig'

# The multi-process rows of `rake bench`: N single-threaded processes
# started together (Puma's cluster workers, parallel asset builds, test
# runners), each compiling one tiny stylesheet at a time, on a quiet machine
# and with two busy loops running (the loaded case; other work on every
# CPU of a two-CPU machine). Each process warms up, then all start at once
# (bench/worker.rb, bench/raw's barrier=1); a run's wall time is the slowest
# process's, and its CPU per compile the processes' and their compilers'
# CPU over every compile of the run. Variants:
#
# - raw: the Ruby-free core (bench/raw), the ceiling;
# - gem: this gem as it ships (its spin adapts to what it catches);
# - no spin: this gem with SASS_EMBEDDED_SPIN_US=0;
# - peer: another sass-embedded, for comparison, where BENCH_PEER_LIB names
#   its lib/ (BENCH_PEER_REQUIRE: a file to require first), e.g. the
#   established gem; left out otherwise;
# - before: another build of this gem (BENCH_BEFORE_LIB: its lib/), to
#   measure a change; left out otherwise.
#
# Runs are interleaved (each round runs every variant for every N and load,
# starting with another variant each round) and the median of the rounds
# (BENCH_REPEAT) is kept. Run alone:
#
#   ruby bench/processes.rb [COUNT [ROUNDS]]   (after rake bench built bench/raw)
#
# BENCH_COUNTS=1,2, BENCH_LOADS=loaded and BENCH_VARIANTS=gem,no spin run
# some rows and variants only (to measure a few rows with more compiles and
# rounds).
module BenchProcesses
  ROOT = File.expand_path('..', __dir__)
  WORKER = File.join(__dir__, 'worker.rb')

  module_function

  # The names in +variable+ (comma-separated) that +all+ holds, or +all+.
  def chosen(variable, all)
    wanted = ENV.fetch(variable, '').split(',').map(&:strip).reject(&:empty?)
    return all if wanted.empty?

    unknown = wanted - all.map(&:to_s)
    raise ArgumentError, "#{variable}: unknown #{unknown.join(', ')} (known: #{all.join(', ')})" unless unknown.empty?

    all.select { |name| wanted.include?(name.to_s) }
  end

  COUNTS = chosen('BENCH_COUNTS', [1, 2, 4, 8]).freeze
  LOADS = { 'quiet' => 0, 'loaded' => 2 }.slice(*chosen('BENCH_LOADS', %w[quiet loaded])).freeze

  def variants(raw, compiler)
    variants = {
      'raw' => { command: [raw, compiler, 'tiny', 'barrier=1', 'threads=1'], count_as: 'count=%d', env: {} },
      'gem' => { command: [RbConfig.ruby, '-I', File.join(ROOT, 'lib'), WORKER], env: {} },
      'no spin' => { command: [RbConfig.ruby, '-I', File.join(ROOT, 'lib'), WORKER],
                     env: { 'SASS_EMBEDDED_SPIN_US' => '0' } }
    }
    before = ENV.fetch('BENCH_BEFORE_LIB', nil)
    variants['before'] = { command: [RbConfig.ruby, '-I', before, WORKER], env: {} } if before
    peer = ENV.fetch('BENCH_PEER_LIB', nil)
    if peer
      required = ENV.fetch('BENCH_PEER_REQUIRE', nil)
      variants['peer'] = { command: [RbConfig.ruby, *(['-r', required] if required), '-I', peer, WORKER], env: {} }
    end
    variants.slice(*chosen('BENCH_VARIANTS', variants.keys))
  end

  # Starts +processes+ copies of +variant+ compiling +count+ times each, lets
  # them start together, and sums what they report.
  def run(variant, processes, count)
    arguments = variant[:count_as] ? [format(variant[:count_as], count)] : [count.to_s]
    workers = Array.new(processes) { IO.popen(variant[:env], [*variant[:command], *arguments], 'r+') }
    workers.each { |worker| raise 'a worker ended before it was ready' unless worker.gets&.start_with?('ready') }
    # Only once every one is ready: they start together.
    workers.each do |worker| # rubocop:disable Style/CombinableLoops
      worker.puts('go')
      worker.flush
    end
    summed(workers.map { |worker| report(worker) })
  end

  # What a worker printed last, once it ended well.
  def report(worker)
    line = worker.read.lines.last
    worker.close
    raise "a worker failed (#{$?})" unless $?.success? # rubocop:disable Style/SpecialGlobalVars

    JSON.parse(line, symbolize_names: true)
  end

  def summed(results)
    compiles = results.sum { |result| result[:compiles] }
    { wall: results.map { |result| result[:wall] }.max, compiles:,
      cpu_us: results.sum { |result| result[:host_cpu] + result[:compiler_cpu] } / compiles * 1e6,
      host_us: results.sum { |result| result[:host_cpu] } / compiles * 1e6 }
  end

  # Runs +block+ with +loops+ busy loops (sh, at the machine's own
  # priority) running.
  def with_busy_loops(loops)
    pids = Array.new(loops) { Process.spawn('sh', '-c', 'while :; do :; done') }
    yield
  ensure
    pids&.each do |pid|
      Process.kill(:KILL, pid)
      Process.wait(pid)
    end
  end

  # { [load, processes, variant] => median run }
  def measure(raw, compiler, count:, rounds:)
    variants = variants(raw, compiler)
    runs = Hash.new { |hash, key| hash[key] = [] }
    rounds.times do |round|
      LOADS.each do |load, loops|
        with_busy_loops(loops) do
          COUNTS.each do |processes|
            # Each round starts with another variant, so none always runs
            # first after the busy loops start.
            variants.to_a.rotate(round).each do |name, variant|
              runs[[load, processes, name]] << run(variant, processes, count)
            end
          end
        end
      end
    end
    runs.transform_values { |list| list.sort_by { |result| result[:wall] }[list.size / 2] }
  end

  def table(medians, count)
    names = medians.keys.map(&:last).uniq
    lines = ["Multi-process rows: N single-threaded processes, #{count} tiny compiles each, started together " \
             '(median run); wall s = the slowest process, CPU us = processes + compilers per compile, ' \
             'host us = the processes alone']
    lines << format('%-7s %2s  %s', 'load', 'N', names.map { |name| format('%-27s', name) }.join)
    lines << format('%-7s %2s  %s', '', '', names.map { format('%-27s', 'wall s / CPU us / host us') }.join)
    LOADS.each_key do |load|
      COUNTS.each do |processes|
        cells = names.map do |name|
          run = medians.fetch([load, processes, name])
          format('%-27s', format('%.2f / %.0f / %.0f', run[:wall], run[:cpu_us], run[:host_us]))
        end
        lines << format('%-7s %2d  %s', load, processes, cells.join)
      end
    end
    lines
  end
end

if $PROGRAM_NAME == __FILE__
  count = Integer(ARGV.fetch(0, 2000))
  rounds = Integer(ARGV.fetch(1, 3))
  raw = File.join(BenchProcesses::ROOT, 'target', 'release', 'sass-embedded-bench-raw')
  compiler = File.join(BenchProcesses::ROOT, 'lib', 'sass', 'embedded', 'dart-sass', 'sass')
  puts BenchProcesses.table(BenchProcesses.measure(raw, compiler, count:, rounds:), count)
end
