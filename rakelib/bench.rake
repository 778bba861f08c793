# frozen_string_literal: true

# The benchmark (bench/run.rb): its matrix against the raw ceiling, and the
# 1-thread rows under each supported Ruby.

require_relative '../tasks/roots'

# The raw ceiling (bench/raw, a cargo workspace of its own), in the
# checkout's target directory.
def build_raw_ceiling
  sh 'cargo', 'build', '--release', '--locked', '--manifest-path', File.join(ROOT, 'bench', 'raw', 'Cargo.toml'),
     '--target-dir', File.join(ROOT, 'target')
end

BOOTSTRAP_DIR = File.join(ROOT, 'bench', 'vendor', 'bootstrap')

desc "Fetch Bootstrap 5's SCSS for the benchmark (npm pack bootstrap@5, not committed)"
task 'bench:bootstrap' do
  next if File.file?(File.join(BOOTSTRAP_DIR, 'scss', 'bootstrap.scss'))

  Dir.mktmpdir('bootstrap') do |tmp|
    sh 'npm', 'pack', 'bootstrap@5', '--silent', chdir: tmp, out: File::NULL
    sh 'tar', '-xzf', Dir.glob(File.join(tmp, '*.tgz')).first, '-C', tmp
    rm_rf BOOTSTRAP_DIR
    mkdir_p File.dirname(BOOTSTRAP_DIR)
    mv File.join(tmp, 'package'), BOOTSTRAP_DIR
  end
end

desc 'Benchmark: the matrix through raw, multiplexed and wait_for dispatch (BENCH_SCALE=0.1 by default; 1: all)'
task bench: [:compile, 'bench:bootstrap', *(%w[compile:portable compile:reader] if Process.euid.zero?)] do
  build_raw_ceiling
  sh RbConfig.ruby, File.join(ROOT, 'bench', 'run.rb')
end

desc "The benchmark's 1-thread tiny rows under each supported Ruby, with their ratios to raw (needs root)"
task 'bench:rubies' => :compiler do
  build_raw_ceiling
  SassEmbeddedBuild::Rubies::Bench.call
end
