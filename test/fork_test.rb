# frozen_string_literal: true

require 'io/wait'
require_relative 'test_helper'

# A forked child starts its own compiler and never touches the parent's.
class ForkTest < Minitest::Test
  def setup
    skip_on_windows('no fork')
    super
  end

  def test_child_gets_its_own_compiler_and_the_parent_keeps_its_own
    compiler = new_compiler
    assert_equal "a {\n  b: c;\n}", compiler.compile_string('a { b: c }').css
    parent_compiler = compiler_pid(compiler)

    reader, writer = IO.pipe
    child = fork do
      GC.stress = false # the child tests fork, not the collector
      reader.close
      css = compiler.compile_string('child { x: y }').css
      child_compiler = compiler_pid(compiler)
      compiler.close
      writer.write(Marshal.dump([css, child_compiler]))
      writer.close
      exit!(0)
    end
    writer.close
    css, child_compiler = Marshal.load(reader.read) # rubocop:disable Security/MarshalLoad
    reader.close
    _, status = Process.wait2(child)
    child = nil

    assert_predicate status, :success?
    assert_equal "child {\n  x: y;\n}", css
    refute_equal parent_compiler, child_compiler
    assert_equal parent_compiler, compiler_pid(compiler), "the child's close did not touch the parent's compiler"
    assert_equal "a {\n  b: d;\n}", compiler.compile_string('a { b: d }').css
  ensure
    kill_child(child)
  end

  # A callback that forks without a block comes back into the compile twice:
  # in the parent, which finishes it, and in the child, which must not touch
  # it (the compiler's pipes are the parent's: the child would answer in the
  # parent's place and take the parent's messages).
  def test_a_child_forked_in_a_callback_cannot_go_on_with_the_parents_compile
    compiler = new_compiler
    parent = Process.pid
    reader, writer = IO.pipe
    child = nil
    function = lambda do |_|
      child = fork
      if child.nil?
        GC.stress = false # the child tests fork, not the collector
        reader.close
        return Sass::Value::String.new('child', quoted: false)
      end
      # The parent answers only once the child has come back from the compile.
      assert reader.wait_readable(30), 'the forked child never came back from the compile'
      Sass::Value::String.new('parent', quoted: false)
    end

    outcome = begin
      Timeout.timeout(60) { compiler.compile_string('a { b: who() }', functions: { 'who()' => function }).css }
    rescue Exception => e # rubocop:disable Lint/RescueException
      raise if Process.pid == parent

      e
    end
    if Process.pid != parent
      writer.write(outcome.is_a?(Exception) ? "#{outcome.class}: #{outcome.message}" : "css: #{outcome}")
      writer.close
      exit!(0)
    end

    writer.close
    report = reader.read
    _, status = Process.wait2(child)
    child = nil

    assert_predicate status, :success?
    assert_match(/\AIOError: this compilation was started before the process forked/, report)
    assert_equal "a {\n  b: parent;\n}", outcome
    assert_equal "c {\n  d: e;\n}", compiler.compile_string('c { d: e }').css
  ensure
    reader&.close unless reader&.closed?
    kill_child(child)
  end

  # A daemonizer forks and closes every descriptor it inherited (the daemons
  # gem closes 3 and up), then opens its own files. The host must never close
  # (or read, or write) a descriptor number it inherited: by then the number
  # may be one of the child's files.
  def test_a_daemonizing_child_that_closes_every_descriptor_keeps_its_own_files
    compiler = new_compiler
    Array.new(8) do |t|
      Thread.new { 10.times { |i| compiler.compile_string("p#{t} { v: #{i} }") } }
    end.each(&:join)
    in_tmpdir do |dir|
      # An IO object left unclosed for the collector (an earlier test's) and
      # finalized in the child would close its number there, by then one of
      # the child's logs: Ruby's doing, not the host's. Collected here first.
      GC.start
      child = fork do
        GC.stress = false # the child tests fork, not the collector
        3.upto(1023) do |fd|
          IO.for_fd(fd, autoclose: true).close
        rescue StandardError
          nil
        end
        logs = Array.new(40) { |i| File.open(File.join(dir, "log#{i}"), 'w') }
        css = Array.new(4) { |t| Thread.new { compiler.compile_string("c#{t} { v: #{t} }").css } }.map(&:value)
        css << compiler.compile_string('main { v: m }').css
        logs.each_with_index do |log, i|
          log.write("log #{i}: #{css.size} compiles\n")
          log.close
        end
        exit!(0)
      rescue Exception => e # rubocop:disable Lint/RescueException
        File.write(File.join(dir, 'error'), e.full_message)
        exit!(1)
      end
      _, status = Timeout.timeout(60) { Process.wait2(child) }
      child = nil
      error = File.join(dir, 'error')
      flunk File.read(error) if File.exist?(error)
      assert_predicate status, :success?
      contents = Array.new(40) { |i| File.read(File.join(dir, "log#{i}")) }
      assert_equal(Array.new(40) { |i| "log #{i}: 5 compiles\n" }, contents)
    ensure
      kill_child(child)
    end
    assert_equal "a {\n  b: c;\n}", compiler.compile_string('a { b: c }').css
  end
end
