# frozen_string_literal: true

require_relative 'embedded/version'
require_relative 'embedded/prebuilt'
require_relative 'embedded/compiler_command'
require_relative 'embedded/url'
require_relative 'embedded/waker'
require_relative 'script_error'
require_relative 'compile_result'
require_relative 'compile_error'
require_relative 'logger/source_location'
require_relative 'logger/source_span'
require_relative 'logger/silent'
require_relative 'canonicalize_context'
require_relative 'node_package_importer'
require_relative 'gem_package_importer'
require_relative 'value'
require_relative 'compiler'

# The native host (`Sass::Embedded::Host`), loaded after the Ruby classes it
# builds results from: the build for this Ruby's minor version that a
# checkout or a platform gem keeps (Prebuilt), else the one a source gem's
# install put in the gem's extension directory, which is on the load path.
prebuilt = Sass::Embedded::Prebuilt.path
# A build that exists but cannot load (a glibc too old for it, say) must say
# so, not fall back to a search that reports a missing file.
if File.exist?(prebuilt)
  refusal = Sass::Embedded::Prebuilt.refusal
  raise LoadError, refusal if refusal

  require prebuilt.delete_suffix(File.extname(prebuilt))
else
  require 'sass_embedded'
end

# The native host and where it is kept are implementation details, as the
# established gem's internals are: Ruby code reaches the host with
# +Embedded.const_get(:Host)+.
Sass::Embedded.send(:private_constant, :Host, :Prebuilt)

# The Sass module: compile Sass to CSS with Dart Sass, run as an embedded
# compiler by a Rust host inside this process.
#
# @example
#   Sass.compile('style.scss').css
#   Sass.compile_string('h1 { font-size: 40px; }').css
module Sass
  @compiler = nil
  @mutex = Mutex.new

  class << self
    # Compiles the Sass file at +path+ to CSS with the shared compiler.
    # @overload compile(path, load_paths: [], charset: true, source_map: false, source_map_include_sources: false, style: :expanded, functions: {}, importers: [], alert_ascii: false, alert_color: nil, fatal_deprecations: [], future_deprecations: [], logger: nil, quiet_deps: false, silence_deprecations: [], verbose: false)
    # @param (see Compiler#compile)
    # @return (see Compiler#compile)
    # @raise (see Compiler#compile)
    # @see Compiler#compile
    def compile(...)
      compiler.compile(...)
    end

    # Compiles a stylesheet whose contents is +source+ to CSS with the shared
    # compiler.
    # @overload compile_string(source, importer: nil, load_paths: [], syntax: :scss, url: nil, charset: true, source_map: false, source_map_include_sources: false, style: :expanded, functions: {}, importers: [], alert_ascii: false, alert_color: nil, fatal_deprecations: [], future_deprecations: [], logger: nil, quiet_deps: false, silence_deprecations: [], verbose: false)
    # @param (see Compiler#compile_string)
    # @return (see Compiler#compile_string)
    # @raise (see Compiler#compile_string)
    # @see Compiler#compile_string
    def compile_string(...)
      compiler.compile_string(...)
    end

    # @return [String] Information about the Sass implementation: the host's
    #   line, then the compiler's.
    # @see Compiler#info
    def info
      compiler.info
    end

    private

    # The shared compiler: started on first use, stopped after 10 seconds
    # without work (and restarted on demand), closed at exit (as every
    # compiler is, see Compiler#host).
    def compiler
      @compiler || @mutex.synchronize do
        @compiler ||= Compiler.new(idle_timeout: 10)
      end
    end
  end
end
