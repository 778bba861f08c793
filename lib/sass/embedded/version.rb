# frozen_string_literal: true

module Sass
  module Embedded
    # The gem's version, which is also the version of the Dart Sass compiler it
    # is pinned to and installs. This constant is the one place that pin lives.
    VERSION = '1.105.0'
  end
end
