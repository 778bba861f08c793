# frozen_string_literal: true

# Runs one row of the benchmark matrix in this process (so that peak RSS is
# the row's own) and prints its measurements as one line of JSON.
#
#   ruby bench/row.rb DISPATCH WORKLOAD key=value ...
#
# DISPATCH is multiplexed, thread (multiplexed on the built-in executor) or
# wait_for; WORKLOAD and keys as in bench/raw/src/main.rs: startup,
# bootstrap, tiny, calls, sleep, nested; count, threads, func, url, path,
# sleep_ms; and here main=1 (compile on the main thread) and fibers=N (N
# fibers of one thread under the async gem's scheduler). WORKLOAD rack
# (multiplexed only) answers +count+ requests on the main thread for the
# Bootstrap stylesheet through Sass::Rack, unchanged after its first
# compile: what the checks cost. WORKLOAD rack_components does the same for
# a stylesheet of 200 components (bench/components.rb), and components
# compiles that stylesheet in full, +count+ times, on the main thread.
# WORKLOAD rack_compile compiles the Bootstrap stylesheet +count+ times as
# the middleware does when a file changed (its Build: the Loaders find and
# read every loaded file), on the main thread.

require 'json'
require 'tmpdir'
require_relative '../lib/sass-embedded'
require_relative 'components'

mode = ARGV.shift
dispatch, executor = mode == 'thread' ? %i[multiplexed thread] : [mode.to_sym, nil]
kind = ARGV.shift
options = ARGV.to_h { |option| option.split('=', 2) }
count = Integer(options.fetch('count', 1000))
threads = [Integer(options.fetch('threads', 1)), 1].max
func = options['func'] == '1'
url = options['url'] == '1'
sleep_seconds = Integer(options.fetch('sleep_ms', 0)) / 1000.0
main = options['main'] == '1'
fibers = options['fibers'] && Integer(options['fibers'])
require 'async' if fibers

def usage(pid)
  stat = File.read("/proc/#{pid}/stat").rpartition(') ').last.split
  status = File.read("/proc/#{pid}/status")
  [(Integer(stat[11]) + Integer(stat[12])) / 100.0, status[/VmHWM:\s+(\d+)/, 1].to_i]
rescue Errno::ENOENT
  [0.0, 0]
end

# How many times the process's threads moved to another CPU so far
# (se.nr_migrations of each thread; 0 where the kernel does not say).
def migrations(pid)
  Dir["/proc/#{pid}/task/*/sched"].sum { |path| File.read(path)[/^se\.nr_migrations\s*:\s*(\d+)/, 1].to_i }
rescue Errno::ENOENT, Errno::ESRCH
  0
end

def rss_kb
  File.read('/proc/self/status')[/VmRSS:\s+(\d+)/, 1].to_i
end

bar = Sass::Value::String.new('bar', quoted: false)
started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
cpu_started = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID)
compiler_cpu = 0.0
compiler_rss = 0
compiler_migrations = 0
rss_samples = []

# The component tree of the components rows, removed at exit.
if kind.end_with?('components')
  tree = Dir.mktmpdir('bench-components')
  at_exit { FileUtils.rm_rf(tree) }
  components, components_load_path = BenchComponents.write(tree)
end

case kind
when 'rack', 'rack_components'
  require_relative '../lib/sass/rack'
  entry, load_paths = kind == 'rack' ? [ENV.fetch('BENCH_BOOTSTRAP'), []] : [components, [components_load_path]]
  app = Sass::Rack.new(->(_) { raise 'passed on' }, root: File.dirname(entry), prefix: '/css', load_paths:,
                                                    style: :compressed, logger: Sass::Logger.silent)
  env = { 'REQUEST_METHOD' => 'GET', 'PATH_INFO' => "/css/#{File.basename(entry, '.scss')}.css" }
  request = -> { app.call(env).tap { |status, _, _| raise "answered #{status}" unless status == 200 } }
  request.call
  # Until the files' stats are old enough to be trusted, a request recompiles.
  sleep(Sass::Rack.const_get(:Snapshot)::MARGIN + 0.1)
  request.call
  compiled = app.instance_variable_get(:@stylesheets).each_value.first.first.instance_variable_get(:@output)
  started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  cpu_started = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID)
  count.times { |i| request.call.tap { rss_samples << rss_kb if (i % [count / 10, 1].max).zero? } }
  output = app.instance_variable_get(:@stylesheets).each_value.first.first.instance_variable_get(:@output)
  raise 'a request recompiled the unchanged stylesheet' unless output.equal?(compiled)

  watched = output.snapshot.instance_variable_get(:@stats).size
  compiles = count
when 'rack_compile'
  require_relative '../lib/sass/rack'
  entry = ENV.fetch('BENCH_BOOTSTRAP')
  paths = Sass::Rack.const_get(:SourcePath).new(File.dirname(entry), '/', maps: false, max_bytes: 16 * 1024 * 1024)
  build = Sass::Rack.const_get(:Build).new({ style: :compressed, logger: Sass::Logger.silent }, paths:, maps: false)
  compile = -> { build.call(entry, 'bootstrap.css').tap { |built| raise built.css if built.error } }
  compile.call
  started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  cpu_started = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID)
  count.times { |i| compile.call.tap { rss_samples << rss_kb if (i % [count / 10, 1].max).zero? } }
  compiles = count
when 'components'
  count.times do |i|
    Sass.compile(components, load_paths: [components_load_path], style: :compressed)
    rss_samples << rss_kb if (i % [count / 10, 1].max).zero?
  end
  compiles = count
when 'startup'
  count.times do
    compiler = Sass::Compiler.new(dispatch:, executor:)
    compiler.info
    cpu, rss = usage(compiler.send(:host).compiler_pid)
    compiler_cpu += cpu
    compiler_rss = [compiler_rss, rss].max
    compiler.close
  end
  compiles = count
else
  compiler = Sass::Compiler.new(dispatch:, executor:)
  source, options = case kind
                    when 'bootstrap' then [nil, {}]
                    when 'nested'
                      ['a { b: nest() }', { functions: { 'nest()' => lambda { |_|
                        compiler.compile_string('x {y: z}')
                        bar
                      } } }]
                    # About a millisecond of the compiler's: bench/raw's LOOP.
                    when 'loop' then ["@for $i from 1 through 50 { .a-\#{$i} { width: $i * 1px; } }", {}]
                    when 'calls'
                      [Array.new(100) { |i| "b#{i}: foo()" }.join('; ').then { |body| "a { #{body} }" },
                       { functions: { 'foo()' => ->(_) { bar } } }]
                    when 'sleep'
                      ['a { b: foo() }', { functions: { 'foo()' => lambda { |_|
                        sleep(sleep_seconds)
                        bar
                      } } }]
                    else
                      [func ? 'a {b: foo()}' : 'a {b: c}', func ? { functions: { 'foo()' => ->(_) { bar } } } : {}]
                    end
  options[:url] = 'file:///tmp/test.scss' if url
  workers = fibers || threads
  per_worker = count / workers
  sample_every = [per_worker / 10, 1].max
  work = lambda do |index|
    per_worker.times do |i|
      if kind == 'bootstrap'
        compiler.compile(ENV.fetch('BENCH_BOOTSTRAP'), style: :compressed, logger: Sass::Logger.silent)
      else
        compiler.compile_string(source, **options)
      end
      rss_samples << rss_kb if index.zero? && (i % sample_every).zero?
    end
  end
  if fibers
    Async do |task|
      Array.new(fibers) { |index| task.async { work.call(index) } }.each(&:wait)
    end
  elsif main
    work.call(0)
  else
    Array.new(threads) { |index| Thread.new { work.call(index) } }.each(&:join)
  end
  compiler.send(:host).compiler_pids.each do |pid|
    compiler_migrations += migrations(pid)
    cpu, rss = usage(pid)
    compiler_cpu += cpu
    compiler_rss = [compiler_rss, rss].max
  end
  compiler.close
  compiles = per_worker * workers
end

wall = Process.clock_gettime(Process::CLOCK_MONOTONIC) - started
puts JSON.generate(
  wall:, compiles:,
  host_cpu: Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID) - cpu_started,
  compiler_cpu:, compiler_migrations:,
  # The host's spins before sleeping: their count, how many caught the
  # answer, and their CPU seconds (part of host_cpu).
  **%i[spins spins_caught spun].zip(Sass::Embedded.const_get(:Host).spin_stats).to_h,
  host_rss_kb: File.read('/proc/self/status')[/VmHWM:\s+(\d+)/, 1].to_i,
  compiler_rss_kb: compiler_rss,
  # Host RSS at the first and last tenth of the row: flat means no leak.
  host_rss_first_kb: rss_samples[1] || rss_samples.first, host_rss_last_kb: rss_samples.last,
  wait: Sass::Embedded.const_get(:Host)::WAIT_MECHANISM,
  **(defined?(watched) && watched ? { watched: } : {})
)
