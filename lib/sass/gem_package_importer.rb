# frozen_string_literal: true

module Sass
  # Resolves +pkg:gem-name/path+ URLs to stylesheets shipped inside installed
  # gems, the way {NodePackageImporter} resolves them from +node_modules+:
  # +@use 'pkg:my-theme/stylesheets/buttons'+ loads +stylesheets/_buttons.scss+
  # (or +.sass+, +.css+, an index file...) from the +my-theme+ gem that Bundler
  # activated, or else the newest installed one.
  #
  # @example
  #   Sass.compile('app.scss', importers: [Sass::GemPackageImporter.new])
  class GemPackageImporter
    # @param url [String]
    # @param _context [CanonicalizeContext]
    # @return [String, nil] the +file:+ URL in the gem, or nil for other URLs
    #   and gems that are not installed
    def find_file_url(url, _context)
      return nil unless url.start_with?('pkg:')

      name, path = GemPackageImporter.parse(url)
      spec = GemPackageImporter.spec(name)
      return nil if spec.nil?

      directory = File.join(spec.full_gem_path, *path.split('/'))
      Embedded.const_get(:Url).path_to_file_url(directory)
    end

    class << self
      # Splits +pkg:name/path+ into the gem's name and the path within it.
      # @raise [ArgumentError] for a malformed URL
      def parse(url)
        rest = url.delete_prefix('pkg:').sub(/[?#].*\z/m, '')
        name, _, path = rest.partition('/')
        if name.empty? || rest.start_with?('/') || !name.match?(/\A[A-Za-z0-9][A-Za-z0-9._-]*\z/)
          raise ArgumentError, "#{url.inspect} is not a pkg: URL of a gem (pkg:gem-name/path)"
        end
        raise ArgumentError, "#{url.inspect} must not leave its gem's directory" if path.split('/').include?('..')

        [name, path]
      end

      # The activated gem named +name+, or the newest installed one.
      def spec(name)
        Gem.loaded_specs[name] || Gem::Specification.find_by_name(name)
      rescue Gem::MissingSpecError
        nil
      end
    end
  end
end
