# frozen_string_literal: true

require_relative 'test_helper'
require 'fileutils'
require 'shellwords'

# NixOS, simulated: there no program loader lives under /lib64, and Ruby runs
# through one under /nix/store, while the bundled Dart runtime names
# /lib64/ld-linux-x86-64.so.2. Here a copy of this Ruby is given a copy of the
# loader in a directory of its own (patchelf), and runs in a mount namespace
# where /lib64 is an empty tmpfs, so nothing else starts there either.
class NixosTest < Minitest::Test
  ELF = Sass::Embedded.const_get(:ElfInterpreter)
  LOADER = '/lib64/ld-linux-x86-64.so.2'
  LIB = File.expand_path('../lib', __dir__)
  DART = File.join(LIB, 'sass', 'embedded', 'dart-sass', 'src', 'dart')

  def setup
    skip 'x86-64 glibc Linux only' unless ELF.of(RbConfig.ruby) == LOADER && ELF.of(DART) == LOADER
    skip 'a mount namespace needs root' unless Process.euid.zero?
    skip 'patchelf is not installed (bin/setup installs it)' unless system('sh', '-c', 'command -v patchelf',
                                                                           out: File::NULL)
    skip 'SASS_EMBEDDED_COMPILER names another compiler' unless ENV.fetch('SASS_EMBEDDED_COMPILER', '').empty?
  end

  # What +code+ prints, run by a copy of this Ruby whose loader is a copy of
  # the system's named +name+, with /lib64 empty.
  def on_simulated_nixos(name, code)
    Dir.mktmpdir('sass-embedded-nixos') do |dir|
      loader = File.join(dir, name)
      ruby = File.join(dir, 'ruby')
      out = File.join(dir, 'out')
      FileUtils.cp(File.realpath(LOADER), loader)
      FileUtils.cp(File.realpath(RbConfig.ruby), ruby)
      system('patchelf', '--set-interpreter', loader, ruby, exception: true)
      assert_equal loader, ELF.of(ruby)
      script = "mount --make-rprivate / && mount -t tmpfs tmpfs /lib64 && exec #{ruby.shellescape} " \
               "-I #{LIB.shellescape} -rsass-embedded -e #{code.shellescape} > #{out.shellescape} 2>&1"
      system('timeout', '-k', '5', budget(60).to_s, 'unshare', '--mount', 'sh', '-c', script)
      [File.read(out), loader]
    end
  end

  def test_the_compiler_starts_through_rubys_own_loader_when_its_own_is_missing
    output, loader = on_simulated_nixos('ld-linux-x86-64.so.2', <<~RUBY)
      compiler = Sass::Compiler.new
      css = compiler.compile_string('a { b: c }').css
      pid = compiler.send(:host).compiler_pid
      puts css, File.read("/proc/\#{pid}/cmdline").split("\\0").first, File.exist?('#{LOADER}')
      compiler.close
    RUBY
    assert_equal "a {\n  b: c;\n}\n#{loader}\nfalse\n", output
  end

  def test_without_a_loader_of_that_name_the_error_names_it_and_the_way_out
    output, loader = on_simulated_nixos('ld-nix.so.2', <<~RUBY)
      begin
        Sass.compile_string('a { b: c }')
      rescue Errno::ENOENT => e
        print e.message
      end
    RUBY
    assert_includes output, "needs the program loader #{LOADER}, which this system lacks"
    assert_includes output, "this Ruby's own (#{loader}) is not one"
    assert_includes output, 'set SASS_EMBEDDED_COMPILER to a Sass compiler that runs here'
  end
end
