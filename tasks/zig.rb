# frozen_string_literal: true

require 'digest'
require 'fileutils'

module SassEmbeddedBuild
  # zig, the C toolchain of the cross builds (macOS gems) and the linker of
  # the Linux glibc gems (it links against any glibc's symbol versions):
  # PyPI's ziglang wheel, a static x86-64 Linux binary that runs on the
  # machine and in every root of it, pinned to the wheel's SHA-256.
  module Zig
    VERSION = '0.17.1'
    WHEEL = "ziglang-#{VERSION}-py3-none-#{%w[manylinux_2_12_x86_64 manylinux2010_x86_64
                                              musllinux_1_1_x86_64].join('.')}.whl".freeze
    SHA256 = 'ea6cc5d87b033cf0aedfbc8f9549a908cae6c50ac31f1698188fa48a74524b54'

    module_function

    # The wheel in +work+, fetched with pip and verified.
    def wheel(work)
      path = File.join(work, WHEEL)
      return path if File.file?(path) && Digest::SHA256.file(path).hexdigest == SHA256

      download = File.join(work, 'download')
      FileUtils.rm_rf(download)
      system('python3', '-m', 'pip', 'download', '--quiet', '--no-deps', '--only-binary=:all:',
             '--platform=manylinux2010_x86_64', '--dest', download, "ziglang==#{VERSION}", exception: true)
      fetched = File.join(download, WHEEL)
      digest = File.file?(fetched) ? Digest::SHA256.file(fetched).hexdigest : 'nothing'
      raise "pip's #{WHEEL}: SHA-256 #{digest}, not the pinned #{SHA256}" unless digest == SHA256

      FileUtils.mkdir_p(work)
      File.rename(fetched, path)
      FileUtils.rm_rf(download)
      path
    end

    # The zig executable, unpacked once under +work+ (+work+/zig-VERSION/zig,
    # beside its lib/) from the wheel kept in +wheels+.
    def executable(work, wheels: work)
      directory = File.join(work, "zig-#{VERSION}")
      zig = File.join(directory, 'zig')
      return zig if File.executable?(zig)

      unpacking = "#{directory}.new"
      FileUtils.rm_rf(unpacking)
      FileUtils.mkdir_p(work)
      system('python3', '-m', 'zipfile', '-e', wheel(wheels), unpacking, exception: true)
      File.chmod(0o755, File.join(unpacking, 'ziglang', 'zig'))
      FileUtils.rm_rf(directory)
      File.rename(File.join(unpacking, 'ziglang'), directory)
      FileUtils.rm_rf(unpacking)
      zig
    end
  end
end
