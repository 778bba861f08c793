# frozen_string_literal: true

# One process of the benchmark's multi-process rows (bench/processes.rb):
# requires whichever sass-embedded the load path holds (this gem's lib/, or
# another for comparison), compiles a tiny stylesheet 300 times to warm up,
# waits for a line on stdin (so that every process starts together), then
# compiles it COUNT times, one at a time on the main thread, and prints one
# line of JSON: the wall time of those compiles, the CPU this process and
# its compilers (its children, from /proc) took meanwhile, and their count.
#
#   ruby -I<lib> bench/worker.rb COUNT

require 'json'
require 'sass-embedded'

count = Integer(ARGV.fetch(0))

# CPU seconds of this process's children (the compilers), from /proc.
def children_cpu
  Dir.glob('/proc/[0-9]*/stat').sum do |path|
    fields = File.read(path).rpartition(') ').last.split
    next 0 unless Integer(fields[1]) == Process.pid

    (Integer(fields[11]) + Integer(fields[12])) / Float(Etc.sysconf(Etc::SC_CLK_TCK))
  rescue Errno::ENOENT, Errno::ESRCH, ArgumentError
    0
  end
end

require 'etc'
300.times { Sass.compile_string('a{b:c}') }
$stdout.puts 'ready'
$stdout.flush
$stdin.gets
clock = -> { Process.clock_gettime(Process::CLOCK_MONOTONIC) }
own = -> { Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID) }
started = clock.call
own_started = own.call
children_started = children_cpu
count.times { Sass.compile_string('a{b:c}') }
wall = clock.call - started
puts JSON.generate(wall:, host_cpu: own.call - own_started, compiler_cpu: children_cpu - children_started,
                   compiles: count)
