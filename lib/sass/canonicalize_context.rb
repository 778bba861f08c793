# frozen_string_literal: true

module Sass
  # What an importer's +canonicalize+ (or +find_file_url+) is told about the
  # load it resolves.
  # @see https://sass-lang.com/documentation/js-api/interfaces/canonicalizecontext/
  class CanonicalizeContext
    # @return [Boolean] whether the load comes from an +@import+ rule
    attr_reader :from_import

    # @param containing_url [String, nil]
    # @param from_import [Boolean]
    def initialize(containing_url, from_import)
      @containing_url = containing_url
      @from_import = from_import
      @containing_url_accessed = false
    end

    # The canonical URL of the stylesheet that contains the load, if it has one.
    # Reading it tells the compiler not to cache the result across stylesheets.
    # @return [String, nil]
    def containing_url
      @containing_url_accessed = true
      @containing_url
    end

    # @return [Boolean] whether {#containing_url} was read
    def containing_url_accessed?
      @containing_url_accessed
    end
  end
end
