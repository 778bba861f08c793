# frozen_string_literal: true

module Sass
  # The result of compiling Sass to CSS.
  # @see https://sass-lang.com/documentation/js-api/interfaces/compileresult/
  class CompileResult
    # @return [String] the generated CSS
    attr_reader :css

    # @return [String, nil] the source map as JSON, when +source_map: true+ was
    #   passed
    attr_reader :source_map

    # @return [Array<String>] the canonical URLs of every stylesheet loaded
    #   during the compilation, the entrypoint included when it has a URL
    attr_reader :loaded_urls

    # @param css [String]
    # @param source_map [String, nil]
    # @param loaded_urls [Array<String>]
    def initialize(css, source_map, loaded_urls)
      @css = css
      @source_map = source_map
      @loaded_urls = loaded_urls
    end
  end
end
