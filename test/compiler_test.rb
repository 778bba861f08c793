# frozen_string_literal: true

require_relative 'test_helper'
require 'open3'

class CompilerTest < Minitest::Test
  def test_version_follows_dart_sass
    assert_equal '1.105.0', Sass::Embedded::VERSION
  end

  def test_info_has_a_host_line_and_a_compiler_line
    assert_equal "sass-embedded\t1.105.0\t(Embedded Host)\t[Ruby]\ndart-sass\t1.105.0\t(Sass Compiler)\t[Dart]",
                 Sass.info
    assert_predicate Sass.info, :frozen?
    assert_equal Sass.info, new_compiler.info
  end

  def test_compiler_instance_compiles_and_closes
    compiler = new_compiler
    refute compiler.closed?
    assert_equal "a {\n  b: c;\n}", compiler.compile_string('a { b: c }').css
    pid = compiler_pid(compiler)
    assert_includes child_pids, pid

    compiler.close
    assert compiler.closed?
    refute_includes child_pids, pid, 'close waits for the compiler to exit'
    error = assert_raises(IOError) { compiler.compile_string('a { b: c }') }
    assert_equal 'closed compiler', error.message
    assert_raises(IOError) { compiler.compile('style.scss') }
    compiler.close # closing twice is fine
  end

  def test_close_fails_the_compilations_in_flight_at_once
    compiler = new_compiler
    compiler.compile_string('a { b: c }')
    thread = Thread.new { compiler.compile_string(slow_source) }
    thread.report_on_exception = false
    sleep 0.3
    start = monotonic_now
    compiler.close
    error = assert_raises(IOError) { thread.value }
    assert_equal 'closed compiler', error.message
    assert_operator elapsed_since(start), :<, budget(3), 'close did not end the compilation promptly'
  end

  # In a directory of the gem's own, never the caller's (see path_test.rb).
  def test_compiler_runs_in_its_own_process_group_and_directory
    skip_on_windows('no process groups, and no /proc to read a process\'s directory from')
    compiler = new_compiler
    compiler.compile_string('a { b: c }')
    pid = compiler_pid(compiler)
    refute_equal Process.getpgid(0), Process.getpgid(pid)
    assert_equal File.expand_path('../lib/sass/embedded', __dir__), File.readlink("/proc/#{pid}/cwd")
  end

  def test_idle_compiler_stops_and_restarts_on_demand
    compiler = new_compiler(idle_timeout: 0.3)
    compiler.compile_string('a { b: c }')
    first = compiler_pid(compiler)
    wait_until(message: 'the idle compiler did not stop') { !child_pids.include?(first) }
    assert_nil compiler_pid(compiler)
    assert_equal "a {\n  b: d;\n}", compiler.compile_string('a { b: d }').css
    refute_equal first, compiler_pid(compiler)
  end

  def test_busy_compiler_is_not_stopped_for_idleness
    compiler = new_compiler(idle_timeout: 0.2)
    functions = { 'slow()' => lambda { |_args|
      sleep 0.6
      Sass::Value::Null::NULL
    } }
    compiler.compile_string('a { b: c }')
    pid = compiler_pid(compiler)
    assert_equal "a {\n  b: c;\n}", compiler.compile_string('a { b: c; d: slow() }', functions:).css
    assert_equal pid, compiler_pid(compiler)
  end

  def test_extra_compilers_stop_when_idle_and_the_first_stays
    assert_equal thirty_two_bit? ? 7 : 15, slots_per_compiler, 'Dart Sass runs 15 at once, 7 on 32-bit'
    compiler = new_compiler
    first, extra = hold_compiles(compiler, slots_per_compiler + 1) { compiler.send(:host).compiler_pids }
    refute_nil extra, 'one compile in a callback beyond the first compiler\'s slots needs a second compiler'
    wait_until(timeout: 15, message: 'the extra compiler did not stop') { !child_pids.include?(extra) }
    assert_equal [first], compiler.send(:host).compiler_pids
  end

  def test_invalid_max_processes
    assert_raises(ArgumentError) { Sass::Compiler.new(max_processes: 0) }
    assert_raises(ArgumentError) { Sass::Compiler.new(max_processes: 1.5) }
    assert_equal 3, new_compiler(max_processes: 3).send(:host).max_processes
  end

  def test_invalid_idle_timeout
    assert_raises(ArgumentError) { Sass::Compiler.new(idle_timeout: 0) }
    assert_raises(ArgumentError) { Sass::Compiler.new(idle_timeout: 'soon') }
    # Longer than a Duration holds: no limit, as Float::INFINITY is.
    [1e300, Float::INFINITY].each do |forever|
      assert_equal "a {\n  b: c;\n}", new_compiler(idle_timeout: forever).compile_string('a { b: c }').css
    end
  end

  # The executors and dispatch modes Sass::Compiler accepts are the ones the
  # native host offers (one list, in the core); every one of them starts.
  def test_the_executors_and_dispatch_modes_are_the_hosts
    host = Sass::Embedded.const_get(:Host)
    assert_includes host::EXECUTORS, :thread
    assert_equal %i[multiplexed wait_for], host::DISPATCHES
    host::EXECUTORS.product(host::DISPATCHES).each do |executor, dispatch|
      compiler = new_compiler(executor:, dispatch:)
      assert_equal "a {\n  b: c;\n}", compiler.compile_string('a { b: c }').css
      assert_equal [executor, dispatch], [compiler.send(:host).executor, compiler.send(:host).dispatch]
    end
    error = assert_raises(ArgumentError) { Sass::Compiler.new(executor: :fibers) }
    assert_equal "executor must be #{host::EXECUTORS.map(&:inspect).join(', ')} or nil, got :fibers", error.message
  end

  # A compile whose options the extension reads itself (here a string, a
  # style and a source map) takes the plain path: the result and its
  # strings are all the Ruby objects it makes, about five; one through
  # Ruby's request (a load path, a logger, an importer) makes 12 to 23.
  # Counted, not timed: the least of three rounds, so that another thread's
  # allocations cannot fail it.
  def test_a_plain_compile_makes_a_handful_of_ruby_objects
    compiler = new_compiler
    [{}, { style: :compressed, source_map: true }].each do |options|
      3.times { compiler.compile_string('a { b: c }', **options) }
      per_compile = Array.new(3) do
        before = GC.stat(:total_allocated_objects)
        50.times { compiler.compile_string('a { b: c }', **options) }
        (GC.stat(:total_allocated_objects) - before) / 50.0
      end.min
      assert_operator per_compile, :<=, 8, "#{per_compile} objects per compile with #{options}"
    end
  end

  def test_the_shared_compiler_is_one_instance
    assert_same Sass.send(:compiler), Sass.send(:compiler)
    assert_equal 10.0, Sass.send(:compiler).instance_variable_get(:@options)[:idle_timeout]
  end

  # The established gem's public constants, outside the value types (whose
  # own lists belong with them). Everything else is private.
  PUBLIC_CONSTANTS = {
    Sass => %i[CalculationValue CanonicalizeContext CompileError CompileResult Compiler Embedded GemPackageImporter
               Logger NodePackageImporter ScriptError Value],
    Sass::Compiler => [],
    Sass::Embedded => %i[VERSION],
    Sass::Logger => %i[SourceLocation SourceSpan],
    Sass::CompileError => [],
    Sass::CompileResult => [],
    Sass::CanonicalizeContext => [],
    Sass::NodePackageImporter => [],
    Sass::GemPackageImporter => [],
    Sass::Logger::SourceSpan => [],
    Sass::Logger::SourceLocation => [],
    Sass::Value => %i[ArgumentList Boolean Calculation Color Function List Map Mixin Module Null Number String],
    Sass::Value::Boolean => %i[FALSE TRUE],
    Sass::Value::Null => %i[NULL],
    Sass::Value::List => [],
    Sass::Value::Map => [],
    Sass::CalculationValue => %i[CalculationInterpolation CalculationOperation],
    Sass::CalculationValue::CalculationOperation => []
  }.freeze

  def test_only_the_established_public_constants_are_public
    PUBLIC_CONSTANTS.each do |mod, names|
      # Sass::Rack, this gem's own, exists once `require 'sass/rack'` ran
      # (as the Rack tests do); test/rack/middleware_test.rb checks its own.
      own = mod == Sass && defined?(Sass::Rack) ? %i[Rack] : []
      assert_equal (names + own).sort, mod.constants(false).sort, mod.name
    end
    assert_raises(NameError) { Sass::Embedded::Host }
    assert_raises(NameError) { Sass::Compiler::Session }
    assert_raises(NameError) { Sass::Logger::Silent }
  end

  # The native host reads a request, and a plain compile's options, by
  # position, in the order of Request#initialize's parameters (which
  # Request::FIELDS names): an extension and Ruby files that disagree on it
  # must not load, let alone compile.
  def test_the_extension_refuses_ruby_files_whose_request_takes_other_options
    assert_refused(<<~RUBY, /but Sass::Compiler::Request#initialize.s parameter list is/)
      request.class_eval { def initialize(source, path, *rest) = nil }
    RUBY
  end

  # Loads the gem in a new Ruby after +change+ changed Request (named
  # +request+ there): the load must fail with a LoadError saying +message+.
  def assert_refused(change, message)
    lib = File.expand_path('../lib', __dir__)
    script = <<~RUBY
      require #{File.join(lib, 'sass/compiler/request').dump}
      request = Sass::Compiler.const_get(:Request)
      #{change}
      begin
        require #{File.join(lib, 'sass-embedded').dump}
      rescue LoadError => e
        puts e.message
        exit 3
      end
    RUBY
    out, err, status = Open3.capture3(RbConfig.ruby, '-e', script)
    assert_equal 3, status.exitstatus, "loaded anyway: #{out}#{err}"
    assert_match message, out
  end

  def test_internals_stay_reachable_with_const_get
    assert_kind_of Class, Sass::Embedded.const_get(:Host)
    assert_kind_of Class, Sass::Compiler.const_get(:Session)
    assert_kind_of Class, Sass::Compiler.const_get(:Request)
    assert_kind_of Module, Sass::Embedded.const_get(:CompilerCommand)
    assert_kind_of Sass::Embedded.const_get(:Host), new_compiler.send(:host)
  end

  def test_sass_module_functions_match_the_established_api
    assert_equal %i[compile compile_string info], (Sass.singleton_methods(false) & %i[compile compile_string info]).sort
    refute Sass.respond_to?(:compiler), 'the shared compiler is private'
    assert_equal %i[close closed? compile compile_string info], Sass::Compiler.public_instance_methods(false).sort
    assert_equal %i[containing_url from_import],
                 Sass::CanonicalizeContext.public_instance_methods(false).sort & %i[containing_url from_import]
    assert_equal %i[css loaded_urls source_map], Sass::CompileResult.public_instance_methods(false).sort
    assert_equal %i[column line offset],
                 Sass::Logger::SourceLocation.public_instance_methods(false).sort & %i[column line offset]
    assert_equal %i[context end start text url],
                 Sass::Logger::SourceSpan.public_instance_methods(false).sort
    %i[sass_stack span loaded_urls to_css detailed_message full_message sass_message].each do |name|
      assert_includes Sass::CompileError.public_instance_methods, name
    end
  end
end
