# frozen_string_literal: true

require 'rbconfig'

module Sass
  module Embedded
    # Where a checkout (`rake compile`) and a platform gem keep the native
    # host: one build per Ruby minor version under lib/sass/<major.minor>/,
    # since the extension is built against one Ruby's ABI, named with the
    # platform's extension ending (+.bundle+ on macOS, +.so+ elsewhere).
    module Prebuilt
      module_function

      # @return [String] the prebuilt extension's path for this Ruby
      def path(ruby_version: RUBY_VERSION, dlext: RbConfig::CONFIG['DLEXT'])
        File.expand_path("../#{ruby_version[/\A\d+\.\d+/]}/sass_embedded.#{dlext}", __dir__)
      end
    end
  end
end
