# frozen_string_literal: true

require_relative 'test_helper'

# A forked child starts its own compiler and never touches the parent's.
class ForkTest < Minitest::Test
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
end
