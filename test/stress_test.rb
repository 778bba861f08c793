# frozen_string_literal: true

require_relative 'test_helper'

# The host under load and faults: deep nesting from many threads, hundreds of
# compilations suspended in callbacks at once, random interrupts, a compiler
# killed under load, fork in the middle of concurrent compiles, huge inputs.
# Each test fails (it does not hang) if its property breaks: the per-test
# timeout turns a deadlock into a failure.
#
# STRESS_SCALE (default 1) scales the sizes; `rake test:gc_stress` runs this
# suite with GC.stress on at a reduced scale.
class StressTest < Minitest::Test
  SCALE = Float(ENV.fetch('STRESS_SCALE', 1))

  def scaled(count, minimum = 1)
    [(count * SCALE).round, minimum].max
  end

  def setup
    GC.stress = true if ENV['SASS_GC_STRESS']
  end

  def teardown
    GC.stress = false
    super
  end

  def test_64_threads_times_nested_depth_20
    compiler = new_compiler
    nest = nil
    nest = lambda do |depth, thread|
      return "leaf#{thread}" if depth.zero?

      functions = { 'down()' => ->(_) { Sass::Value::String.new(nest.call(depth - 1, thread), quoted: false) } }
      compiler.compile_string("a { b: down(); depth: #{depth} }", functions:).css[/b: (.*);/, 1]
    end
    threads = Array.new(scaled(64)) { |thread| Thread.new { nest.call(scaled(20), thread) } }
    threads.each_with_index { |thread, index| assert_equal "leaf#{index}", thread.value }
    return unless scaled(64) * scaled(20) > slots_per_compiler

    assert_operator compiler.send(:host).compiler_pids.length, :>, 1, 'nesting needed more than one compiler'
  end

  # Nested compiles from importers and loggers count as nested too: with one
  # compiler allowed and all its slots held by compiles inside callbacks, each
  # callback's own compile still runs (on a compiler started for it).
  def test_nested_compiles_from_every_kind_of_callback_when_the_compiler_is_full
    compiler = new_compiler(max_processes: 1)
    count = slots_per_compiler
    arrived = Queue.new
    go = Queue.new
    nested = lambda do |label|
      arrived << label
      go.pop
      compiler.compile_string(".#{label} { nested: yes }", style: :compressed).css
    end
    callbacks = {
      'importer' => { importers: [{ canonicalize: ->(url, _) { nested.call('importer') && "m:#{url}" },
                                    load: ->(_) { { contents: '', syntax: :scss } } }],
                      source: "@use 'x';" },
      'file-importer' => { importers: [{ find_file_url: ->(*) { nested.call('file-importer') && nil } }],
                           source: "@use 'not-on-disk';" },
      'logger' => { logger: { warn: ->(*, **) { nested.call('logger') } }, source: "@warn 'w';" },
      'function' => { functions: { 'f()' => ->(_) { Sass::Value::String.new(nested.call('function')) } },
                      source: 'a { b: f() }' }
    }
    threads = Array.new(count) do |index|
      name, options = callbacks.to_a[index % callbacks.length]
      Thread.new do
        compiler.compile_string(options[:source], **options.except(:source))
        name
      rescue Sass::CompileError
        name # the file importer finds nothing, as it should
      end
    end
    count.times { arrived.pop }
    assert_equal 1, compiler.send(:host).compiler_pids.length
    count.times { go << true }
    assert_equal count, threads.map(&:value).length
    assert_operator compiler.send(:host).compiler_pids.length, :>, 1, 'the nested compiles got a compiler of their own'
  end

  # All 200 are inside their function at the same moment (each waits for the
  # others), which takes 200 compiler slots: 14 processes (29 on 32-bit CPUs).
  def test_200_threads_inside_a_sleeping_function_at_once
    count = scaled(200, 2)
    compiler = new_compiler(max_processes: count.fdiv(slots_per_compiler).ceil)
    inside = 0
    mutex = Mutex.new
    all_inside = ConditionVariable.new
    functions = {
      'wait-for-all($n)' => lambda { |args|
        mutex.synchronize do
          inside += 1
          all_inside.broadcast if inside == count
          all_inside.wait(mutex, 0.1) until inside == count
        end
        sleep 0.01
        args.first
      }
    }
    threads = Array.new(count) do |index|
      Thread.new { compiler.compile_string("t#{index} { n: wait-for-all(#{index}) }", functions:).css }
    end
    threads.each_with_index { |thread, index| assert_equal "t#{index} {\n  n: #{index};\n}", thread.value }
    assert_equal count, inside
  end

  # With the default limit, compiles beyond the slots of the allowed processes
  # queue in the compilers and run as slots free up.
  def test_200_threads_in_sleeping_functions_within_the_default_process_limit
    compiler = new_compiler
    functions = { 'nap($n)' => lambda { |args|
      sleep 0.02
      args.first
    } }
    threads = Array.new(scaled(200, 2)) do |index|
      Thread.new { compiler.compile_string("t#{index} { n: nap(#{index}) }", functions:).css }
    end
    threads.each_with_index { |thread, index| assert_equal "t#{index} {\n  n: #{index};\n}", thread.value }
    assert_operator compiler.send(:host).compiler_pids.length, :<=, compiler.send(:host).max_processes
  end

  # Raised into workers by the chaos thread. Like the interrupts of Timeout,
  # Rack::Timeout or Puma, it is not a StandardError: a StandardError raised
  # into a thread while it runs a callback is that callback's error.
  class Chaos < Exception; end # rubocop:disable Lint/InheritException
  # What a worker is interrupted with: Chaos, and a timeout. Timeout raises
  # into the thread from a thread of its own, so one raised just as its
  # block was left (Chaos unwinding it) arrives later, at the next blocking
  # call: under Wine with CI on both CPUs beside it, in a worker's last
  # wait for the end, which it ended with Timeout::ExitException.
  INTERRUPTS = [Chaos, Timeout::Error, *(Timeout::ExitException if defined?(Timeout::ExitException))].freeze

  def test_random_interrupts_across_32_concurrent_compiles_never_cross_results
    compilers = [new_compiler, new_compiler]
    functions = { 'pause($v)' => lambda { |args|
      sleep(rand * 0.002)
      args.first
    } }
    checked = Queue.new
    interrupted = Queue.new
    finished = Queue.new
    release = Queue.new
    count = scaled(32)
    # Chaos and timeouts may strike only inside a compile, never in the
    # bookkeeping around it: threads start with them deferred (new threads
    # inherit the mask) and stay deferred until the chaos is over.
    workers = Thread.handle_interrupt(INTERRUPTS.to_h { |interrupt| [interrupt, :never] }) do
      Array.new(count) do |worker|
        Thread.new do
          compiler = compilers[worker % 2]
          scaled(60).times do |round|
            value = "w#{worker}r#{round}"
            source = "#{value} { v: pause(#{value}); n: #{round} }"
            begin
              css = Thread.handle_interrupt(INTERRUPTS.to_h { |interrupt| [interrupt, :immediate] }) do
                Timeout.timeout(rand < 0.2 ? rand * 0.01 : 10) { compiler.compile_string(source, functions:).css }
              end
              raise "#{value} got #{css.inspect}" unless css == "#{value} {\n  v: #{value};\n  n: #{round};\n}"

              checked << value
            # Timeout 0.4 (Ruby 3.3+) raises its ExitException in the thread
            # and turns it into Timeout::Error only as it leaves the block;
            # when Chaos unwinds the block first, the timeout's own exception
            # arrives afterwards, unconverted.
            rescue *INTERRUPTS
              interrupted << value
            end
          end
        ensure
          finished << worker
          release.pop
        end
      end
    end
    victims = Array.new(scaled(8)) do |victim|
      Thread.new do
        loop { compilers[victim % 2].compile_string("victim#{victim} { v: pause(1) }", functions:) }
      end
    end
    chaos = Thread.new do
      until finished.size == count
        workers.sample.raise(Chaos)
        sleep(rand * 0.01)
      end
    end
    chaos.join
    count.times { release << true }
    # An interrupt still deferred in a worker fires as it ends; that is
    # expected.
    workers.each do |worker|
      worker.join
    rescue *INTERRUPTS
      nil
    end
    victims.each(&:kill).each { |victim| assert victim.join(10), 'a killed thread did not end' }
    unless ENV['SASS_GC_STRESS'] # too slow to be sure of either outcome
      refute_empty checked, 'no compile survived the chaos'
      refute_empty interrupted, 'no compile was interrupted'
    end

    # Afterwards every compile on both compilers gets its own result.
    compilers.each_with_index do |compiler, index|
      20.times do |i|
        assert_equal "after#{index} {\n  i: #{i};\n}", compiler.compile_string("after#{index} { i: #{i} }").css
      end
    end
  end

  def test_kill_9_of_one_compiler_fails_only_its_compiles
    compiler = new_compiler
    slots = slots_per_compiler
    count = slots + 5
    release = Queue.new
    entered = Queue.new
    functions = { 'hold($v)' => lambda { |args|
      entered << true
      release.pop
      args.first
    } }
    threads = Array.new(count) do |index|
      Thread.new do
        compiler.compile_string("k#{index} { v: hold(#{index}) }", functions:).css
      rescue IOError => e
        e
      end
    end
    count.times { entered.pop }
    first, second = compiler.send(:host).compiler_pids
    refute_nil second, 'the compiles did not need two compilers'
    Process.kill(:KILL, second)
    count.times { release << true }

    results = threads.map(&:value)
    failures = results.grep(IOError)
    successes = results.grep(String)
    assert_equal slots, successes.length, 'the compiles on the surviving compiler completed'
    assert_equal count - slots, failures.length
    failures.each { |error| assert_match(KILLED_COMPILER, error.message) }
    successes.each { |css| assert_match(/\Ak(\d+) \{\n  v: \1;\n\}\z/, css) }
    assert_includes compiler.send(:host).compiler_pids, first
    assert_equal "after {\n  kill: ok;\n}", compiler.compile_string('after { kill: ok }').css
  end

  def test_kill_9_under_continuous_load
    compiler = new_compiler
    stop = false
    errors = Queue.new
    threads = Array.new(8) do |t|
      Thread.new do
        i = 0
        until stop
          begin
            css = compiler.compile_string("l#{t}-#{i} { v: #{i} }").css
            raise "crossed: #{css}" unless css == "l#{t}-#{i} {\n  v: #{i};\n}"
          rescue IOError => e
            errors << e
          end
          i += 1
        end
        i
      end
    end
    sleep 0.3
    Process.kill(:KILL, compiler_pid(compiler))
    sleep 0.5
    stop = true
    threads.each { |thread| assert_operator thread.value, :>, 0 }
    errors.size.times { assert_match(KILLED_COMPILER, errors.pop.message) }
    assert_equal "x {\n  y: z;\n}", compiler.compile_string('x { y: z }').css
  end

  def test_fork_in_the_middle_of_concurrent_compiles
    skip_on_windows('no fork')
    compiler = new_compiler
    stop = false
    workers = Array.new(6) do |t|
      Thread.new do
        i = 0
        until stop
          css = compiler.compile_string("p#{t}-#{i} { v: #{i} }").css
          raise "crossed: #{css}" unless css == "p#{t}-#{i} {\n  v: #{i};\n}"

          i += 1
        end
        i
      end
    end
    sleep 0.2
    parent_compiler = compiler_pid(compiler)
    parent_pipes = (0..2).map { |fd| File.readlink("/proc/#{parent_compiler}/fd/#{fd}") }

    reader, writer = IO.pipe
    child = fork do
      GC.stress = false # the child tests fork, not the collector
      reader.close
      report = begin
        css = compiler.compile_string('child { a: b }').css
        own = compiler_pid(compiler)
        fds = Dir.glob("/proc/#{own}/fd/*").filter_map do |fd|
          File.readlink(fd)
        rescue Errno::ENOENT
          nil
        end
        { css:, own:, leaked: fds & parent_pipes }
      rescue Exception => e # rubocop:disable Lint/RescueException
        { error: "#{e.class}: #{e.message}" }
      end
      writer.write(Marshal.dump(report))
      writer.close
      # No close: the child's compiler must end on its own when the child does.
      exit!(0)
    end
    writer.close
    report = Marshal.load(reader.read) # rubocop:disable Security/MarshalLoad
    reader.close
    _, status = Process.wait2(child)
    child = nil
    stop = true

    assert_predicate status, :success?
    assert_nil report[:error]
    assert_equal "child {\n  a: b;\n}", report[:css]
    refute_equal parent_compiler, report[:own]
    assert_empty report[:leaked], "the child's compiler inherited the parent's compiler pipes"
    workers.each { |worker| assert_operator worker.value, :>, 0 }
    assert_equal parent_compiler, compiler_pid(compiler)
    wait_until(message: "the child's compiler outlived the child") { !File.exist?("/proc/#{report[:own]}") }
  ensure
    stop = true
    kill_child(child)
  end

  def test_20_mb_input_and_output
    rule = ".selector-with-a-long-name-%<i>d { property: value-%<i>d; }\n"
    count = scaled(20 * 1024 * 1024 / format(rule, i: 100_000).bytesize)
    source = Array.new(count) { |i| format(rule, i:) }.join
    css = new_compiler.compile_string(source, style: :compressed).css
    assert_operator source.bytesize, :>=, 20 * 1024 * 1024 * 0.95 if SCALE >= 1
    assert css.start_with?('.selector-with-a-long-name-0{property:value-0}')
    assert css.end_with?(".selector-with-a-long-name-#{count - 1}{property:value-#{count - 1}}")
  end

  def test_bad_callbacks_leave_the_host_serving
    compiler = new_compiler
    {
      'raise' => [->(_) { raise 'boom' }, Sass::CompileError],
      'wrong type' => [->(_) { 42 }, Sass::CompileError],
      'nil' => [->(_) {}, Sass::CompileError],
      # Ruby raises UncaughtThrowError where nothing catches the throw: an
      # error of the callback like any other.
      'uncaught throw' => [->(_) { throw :escape }, Sass::CompileError],
      'exit' => [->(_) { exit 3 }, SystemExit],
      'no memory' => [->(_) { raise NoMemoryError, 'pretend' }, NoMemoryError]
    }.each do |name, (callable, error_class)|
      assert_raises(error_class, name) { compiler.compile_string('a { b: bad() }', functions: { 'bad()' => callable }) }
      assert_equal "a {\n  b: c;\n}", compiler.compile_string('a { b: c }').css, "after #{name}"
    end

    caught = catch(:escape) do
      compiler.compile_string('a { b: bad() }', functions: { 'bad()' => ->(_) { throw :escape, :thrown } })
    end
    assert_equal :thrown, caught
    assert_equal "a {\n  b: c;\n}", compiler.compile_string('a { b: c }').css

    suicidal = Thread.new do
      compiler.compile_string('a { b: die() }', functions: { 'die()' => ->(_) { Thread.current.kill } })
      :survived
    end
    assert suicidal.join(10)
    assert_nil suicidal.value
    assert_equal "a {\n  b: c;\n}", compiler.compile_string('a { b: c }').css
  end

  def test_memory_stays_flat_across_many_compiles_with_callbacks
    skip 'memory is not measured under GC.stress' if ENV['SASS_GC_STRESS']
    skip_on_windows('reads the resident set from /proc')

    compiler = new_compiler
    functions = { 'twice($n)' => ->(args) { Sass::Value::Number.new(args.first.assert_number.value * 2) } }
    importer = {
      canonicalize: ->(url, _) { "mem:#{url.delete_prefix('mem:')}" },
      load: ->(_) { { contents: '$v: 1;', syntax: :scss } }
    }
    run = lambda do |rounds|
      rounds.times do |i|
        compiler.compile_string("@use 'lib'; a { b: twice(#{i}) + lib.$v }", functions:, importers: [importer])
      end
    end
    run.call(2000)
    GC.start
    rss_before = rss_kb
    objects_before = ObjectSpace.count_objects[:TOTAL] - ObjectSpace.count_objects[:FREE]
    run.call(scaled(20_000))
    GC.start
    growth_mb = (rss_kb - rss_before) / 1024.0
    objects_after = ObjectSpace.count_objects[:TOTAL] - ObjectSpace.count_objects[:FREE]
    assert_operator growth_mb, :<, 30, "RSS grew by #{growth_mb.round(1)} MB"
    assert_operator objects_after - objects_before, :<, 50_000, 'live Ruby objects kept growing'
  end

  private

  def rss_kb
    File.read("/proc/#{Process.pid}/status")[/VmRSS:\s+(\d+)/, 1].to_i
  end
end
