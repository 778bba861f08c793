# frozen_string_literal: true

require 'rbconfig'
require_relative 'test_helper'

# The host holds a fixed handful of descriptors per compiler, however many
# threads and fibers wait on it: waiters other than the one watching the
# compiler's output park without a descriptor of their own. Near the
# process's descriptor limit, compiles wait for a compiler instead of failing
# and leave the application its descriptors.
class DescriptorTest < Minitest::Test
  LIB = File.expand_path('../lib', __dir__)

  # About 30 ms of compiler time each.
  BUSY = '$x: 0; @for $i from 1 through 200000 { $x: $x + 1; } busy { n: $x }'

  def setup
    skip_on_windows('counts the descriptors in /proc/self/fd')
    super
  end

  def open_descriptors
    Dir.children('/proc/self/fd').size
  end

  def test_two_hundred_waiting_threads_hold_a_few_descriptors_and_give_them_back_when_idle
    compiler = new_compiler(idle_timeout: 0.5)
    compiler.compile_string('a { b: c }')
    compiler.close
    compiler = new_compiler(idle_timeout: 0.5)
    before = open_descriptors
    peak = before
    done = false
    sampler = Thread.new do
      until done
        peak = [peak, open_descriptors].max
        sleep 0.002
      end
    end
    results = Array.new(200) do |i|
      Thread.new { compiler.compile_string("#{BUSY} t#{i} { v: #{i} }").css }
    end.map(&:value)
    done = true
    sampler.join
    results.each_with_index { |css, i| assert_equal "busy {\n  n: 200000;\n}\n\nt#{i} {\n  v: #{i};\n}", css }
    processes = compiler.send(:host).max_processes
    # Each compiler: its three pipes, the watcher's selector and kick, and the
    # executor's duplicates of stdout and stderr; the executor itself: a few.
    assert_operator peak - before, :<=, (processes * 7) + 6,
                    "#{peak - before} descriptors at the peak for #{processes} compilers"
    wait_until(message: 'the idle compilers kept their descriptors') do
      open_descriptors <= before + 3
    end
  end

  # A child process with RLIMIT_NOFILE at +limit+ runs +script+ (with the
  # gem loaded), within +timeout+ seconds; its output.
  def run_limited(limit, script, timeout: 90)
    code = "Process.setrlimit(:NOFILE, #{limit}); require 'sass-embedded'; #{script}"
    IO.popen([RbConfig.ruby, '-I', LIB, '-e', code], err: %i[child out]) do |io|
      Timeout.timeout(budget(timeout)) { io.read }
    rescue Timeout::Error
      Process.kill(:KILL, io.pid)
      raise
    end
  end

  def test_under_a_limit_of_64_descriptors_the_application_opens_files_while_48_threads_wait
    output = run_limited(64, <<~RUBY)
      compiler = Sass::Compiler.new
      compiler.compile_string('a { b: c }')
      source = '$x: 0; @for $i from 1 through 600000 { $x: $x + 1; } slow { n: $x }'
      threads = Array.new(48) { |i| Thread.new { compiler.compile_string("\#{source} t\#{i} { v: \#{i} }").css } }
      sleep 0.3
      files = Array.new(20) { File.open(File::NULL) }
      puts "opened \#{files.size} files while \#{threads.count(&:alive?)} threads waited"
      files.each(&:close)
      css = threads.map(&:value)
      ok = css.each_with_index.all? { |c, i| c.end_with?("t\#{i} {\\n  v: \#{i};\\n}") }
      puts "\#{css.size} compiles, all right: \#{ok}"
      compiler.close
    RUBY
    assert_match(/^opened 20 files while (\d+) threads waited$/, output)
    assert_operator output[/while (\d+) threads/, 1].to_i, :>=, 40, output
    assert_includes output, '48 compiles, all right: true', output
  end

  def test_nested_compiles_near_the_descriptor_limit_wait_for_a_compiler_instead_of_failing
    output = run_limited(48, <<~RUBY)
      compiler = Sass::Compiler.new
      inner = lambda do |args|
        n = args[0].assert_number.value.to_i
        css = compiler.compile_string("i { v: \#{n}; }").css
        Sass::Value::String.new(css.lines.size.to_s, quoted: false)
      end
      results = Array.new(64) do |i|
        Thread.new do
          compiler.compile_string("o\#{i} { v: inner(\#{i}) }", functions: { 'inner($n)' => inner }).css
        rescue StandardError => e
          e
        end
      end.map(&:value)
      failures = results.grep(Exception)
      puts "\#{results.size - failures.size} of \#{results.size} nested compiles succeeded"
      failures.first(3).each { |e| puts "\#{e.class}: \#{e.message}" }
      compiler.close
    RUBY
    assert_includes output, '64 of 64 nested compiles succeeded', output
  end
end
