# frozen_string_literal: true

require 'etc'
require 'rbconfig'

module Sass
  module Embedded
    # Where a checkout (`rake compile`) and a platform gem keep the native
    # host: one build per Ruby minor version under lib/sass/<major.minor>/,
    # since the extension is built against one Ruby's ABI, named with the
    # platform's extension ending (+.bundle+ on macOS, +.so+ elsewhere).
    module Prebuilt
      # A 32-bit ARM CPU as Ruby and RubyGems name it (+arm+, +armv7l+,
      # +armv8l+, ...; not +arm64+): the one spelling the build, the
      # compiler's package and the gem's platform share.
      ARM32 = /\Aarm(v\d+\w*)?\z/

      module_function

      # @return [String] the prebuilt extension's path for this Ruby
      def path(ruby_version: RUBY_VERSION, dlext: RbConfig::CONFIG['DLEXT'])
        File.expand_path("../#{ruby_version[/\A\d+\.\d+/]}/sass_embedded.#{dlext}", __dir__)
      end

      # Why a prebuilt extension must not load on this CPU, or nil. The
      # 32-bit ARM gem's is built for ARMv7 (with hard float), as Dart's ARM
      # compiler is: on an ARMv6 CPU (a Raspberry Pi Zero or 1, whose
      # Raspberry Pi OS is armhf too) its first call would kill the process
      # with an illegal instruction, so it is refused with a LoadError that
      # says what works instead.
      # @return [String, nil]
      def refusal(host_cpu: RbConfig::CONFIG['host_cpu'], machine: Etc.uname[:machine])
        return unless host_cpu.match?(ARM32) && machine.match?(/\Aarmv[1-6](\D|\z)/)

        "sass-embedded's prebuilt extension for 32-bit ARM needs an ARMv7 CPU or newer, and this is #{machine}; " \
          'Dart Sass has no compiler for it either: install the source gem (gem install sass-embedded --platform ' \
          'ruby) and set SASS_EMBEDDED_COMPILER to a Sass compiler that runs here.'
      end
    end
  end
end
