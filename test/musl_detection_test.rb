# frozen_string_literal: true

require_relative 'test_helper'
require 'json'
require 'open3'
require 'rbconfig'
require 'shellwords'
require_relative '../ext/sass_embedded/compiler_package'

# Whether the running Ruby is a musl one decides the compiler package and the
# build's link flags. It is told by the Ruby itself (its host_os, else the
# loader its executable names), never by a musl loader the machine happens to
# have: Debian's `musl` package (pulled in by musl-tools) installs one on
# glibc systems.
class MuslDetectionTest < Minitest::Test
  PACKAGE = SassEmbeddedBuild::CompilerPackage
  ELF = SassEmbeddedBuild::ElfInterpreter

  # A minimal ELF file (64 or 32 bits, little or big endian) with a
  # PT_INTERP program header naming +interpreter+, after a PT_LOAD one.
  def elf(interpreter, wide: true, little: true)
    half, word, address = little ? %w[v V Q<] : %w[n N Q>]
    address = word unless wide
    ehsize = wide ? 64 : 52
    phentsize = wide ? 56 : 32
    text = "#{interpreter}\0"
    at = ehsize + (2 * phentsize)
    ident = ["\x7FELF".b, wide ? 2 : 1, little ? 1 : 2, 1].pack('a4CCC').ljust(16, "\0")
    header = ident + [2, 62, 1].pack("#{half}#{half}#{word}") +
             [0, ehsize, 0].pack(address * 3) + [0, ehsize, phentsize, 2, 0, 0, 0].pack("#{word}#{half * 6}")
    program = lambda do |type, offset, size|
      if wide
        [type, 4].pack(word * 2) + [offset, 0, 0, size, size, 1].pack(address * 6)
      else
        [type, offset, 0, 0, size, size, 4, 1].pack(word * 8)
      end
    end
    header + program.call(1, 0, 0) + program.call(3, at, text.bytesize) + text
  end

  def interpreter_of(bytes)
    Dir.mktmpdir do |dir|
      path = File.join(dir, 'a.out')
      File.binwrite(path, bytes)
      ELF.of(path)
    end
  end

  def test_reads_the_interpreter_of_elf_files_of_each_width_and_byte_order
    [[true, true], [true, false], [false, true], [false, false]].each do |wide, little|
      assert_equal '/lib/ld-musl-aarch64.so.1', interpreter_of(elf('/lib/ld-musl-aarch64.so.1', wide:, little:)),
                   "#{wide ? 64 : 32} bits, #{little ? 'little' : 'big'} endian"
    end
    assert_nil interpreter_of('#!/bin/sh')
    assert_nil interpreter_of(elf('x')[0, 70]), 'a truncated file names no interpreter'
  end

  # Whether the running Ruby was built for musl, by its own configuration
  # (rake test:musl runs this suite under one).
  def musl_ruby? = RbConfig::CONFIG['host_os'].end_with?('musl')

  def test_the_running_ruby_names_its_own_loader_and_is_told_by_it
    skip_on_windows('a Linux Ruby and its ELF loader')
    cpu = PACKAGE.name[/[^-]+\z/]
    if musl_ruby?
      assert_match %r{/ld-musl-[^/]+\.so\.\d+\z}, ELF.of(RbConfig.ruby)
      assert PACKAGE.musl?
      assert_equal "sass-embedded-linux-musl-#{cpu}", PACKAGE.name
    else
      assert_match %r{/ld-linux-[^/]+\.so\.\d+\z}, ELF.of(RbConfig.ruby)
      refute PACKAGE.musl?
      assert_equal "sass-embedded-linux-#{cpu}", PACKAGE.name
    end
  end

  def test_a_musl_ruby_is_told_by_its_host_os_or_its_loader
    Dir.mktmpdir do |dir|
      musl_ruby = File.join(dir, 'ruby')
      glibc_ruby = File.join(dir, 'ruby-glibc')
      File.binwrite(musl_ruby, elf('/lib/ld-musl-x86_64.so.1'))
      File.binwrite(glibc_ruby, elf('/lib64/ld-linux-x86-64.so.2'))
      assert PACKAGE.musl?(host_os: 'linux', executable: musl_ruby)
      assert PACKAGE.musl?(host_os: 'linux-musl', executable: glibc_ruby)
      refute PACKAGE.musl?(host_os: 'linux-gnu', executable: glibc_ruby)
      refute PACKAGE.musl?(host_os: 'linux', executable: glibc_ruby)
      refute PACKAGE.musl?(host_os: 'darwin23', executable: musl_ruby)
      musl = PACKAGE.musl?(host_os: 'linux', executable: musl_ruby)
      assert_equal 'sass-embedded-linux-musl-x64', PACKAGE.name(host_os: 'linux', host_cpu: 'x86_64', musl:)
    end
  end

  # Debian's musl package in place, as a private overlay on /lib (or the
  # /usr/lib it points to) in a mount namespace of the test's own: the glibc Ruby
  # still gets the glibc compiler package and a glibc build.
  # How the test's mount namespace keeps its overlay to itself: by making
  # every mount private (unshare's default), or, where none is shared (a
  # chroot in a private namespace already, as the Debian roots are, where
  # unshare cannot change the root's propagation), as they are.
  def propagation
    File.read('/proc/self/mountinfo').match?(/ shared:\d/) ? 'private' : 'unchanged'
  end

  def test_a_musl_loader_on_a_glibc_machine_leaves_the_glibc_package
    skip_on_windows('a Linux mount namespace')
    skip 'needs root, for a mount namespace and an overlay' unless Process.euid.zero?
    skip 'the running Ruby is a musl one: no glibc Ruby here to take for musl' if musl_ruby?

    loader = "/lib/ld-musl-#{RbConfig::CONFIG['host_cpu']}.so.1"
    Dir.mktmpdir do |dir|
      report = 'puts JSON.generate([Dir.glob("/lib/ld-musl-*"), SassEmbeddedBuild::CompilerPackage.musl?, ' \
               'SassEmbeddedBuild::CompilerPackage.name])'
      # /lib itself, or /usr/lib where /lib leads there (merged /usr).
      lib = File.realpath('/lib')
      script = <<~SH
        mount -t tmpfs tmpfs #{dir.shellescape} && mkdir #{dir}/upper #{dir}/work &&
        mount -t overlay overlay -o lowerdir=#{lib},upperdir=#{dir}/upper,workdir=#{dir}/work #{lib} &&
        touch #{File.join(lib, File.basename(loader))} &&
        exec #{RbConfig.ruby.shellescape} -rjson -r#{File.expand_path('../ext/sass_embedded/compiler_package', __dir__).shellescape} -e #{report.shellescape}
      SH
      output, status = Open3.capture2e('unshare', '--mount', '--propagation', propagation, '--', 'sh', '-c', script)
      assert status.success?, output
      loaders, musl, package = JSON.parse(output.lines.last)

      assert_equal [loader], loaders, 'the musl loader is in place'
      refute musl, 'a glibc Ruby is taken for musl'
      assert_equal PACKAGE.name, package
    end
    refute File.exist?(loader), 'the loader stayed inside the namespace'
  end
end
