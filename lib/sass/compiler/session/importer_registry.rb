# frozen_string_literal: true

module Sass
  class Compiler
    class Session
      # The importers of one compile, by the id the compiler calls them with.
      # Answers +CanonicalizeRequest+, +ImportRequest+ and +FileImportRequest+.
      class ImporterRegistry
        # What the compiler accepts in a non-canonical scheme.
        SCHEME = /\A[a-z0-9+.-]+\z/

        def initialize
          @importers = []
        end

        # @param importers [Array<Object>]
        # @return [Array<Array>] descriptors for the request, in order
        def register_all(importers)
          Request.list(importers, 'importers').map { |importer| register(importer, 'importers') }
        end

        # Registers one importer and returns its descriptor for the request:
        # +[:importer, id, schemes]+, +[:file_importer, id]+ or
        # +[:node_package_importer, dir]+.
        def register(importer, name)
          return [:node_package_importer, importer.entry_point_directory] if importer.is_a?(NodePackageImporter)

          importer = Structure.from_hash(importer) if importer.is_a?(Hash)
          if importer.respond_to?(:canonicalize) && importer.respond_to?(:load)
            [:importer, add(importer), ImporterRegistry.non_canonical_schemes(importer, name)]
          elsif importer.respond_to?(:find_file_url)
            [:file_importer, add(importer)]
          else
            raise ArgumentError,
                  "#{name} must hold importers (with canonicalize and load, or with find_file_url) " \
                  "or a Sass::NodePackageImporter, got #{importer.inspect}"
          end
        end

        # @return [Array(String, Boolean), Array(nil, Boolean)] the canonical URL
        #   (or nil) and whether the containing URL went unused
        def canonicalize(id, url, from_import, containing_url)
          context = CanonicalizeContext.new(containing_url, from_import)
          result = @importers.fetch(id).canonicalize(url, context)
          [ImporterRegistry.url_string(result, 'canonicalize'), !context.containing_url_accessed?]
        end

        # @return [Array(String, Symbol, String), nil] contents, syntax and
        #   source map URL, or nil if the importer does not have the stylesheet
        def import(id, url)
          result = @importers.fetch(id).load(url)
          return nil if result.nil?

          result = Structure.from_hash(result) if result.is_a?(Hash)
          unless result.respond_to?(:contents) && result.respond_to?(:syntax)
            raise TypeError, "load must return nil or a Hash with :contents and :syntax, got #{result.inspect}"
          end

          [
            Request.utf8(result.contents, 'the contents returned by load'),
            Request.choice(result.syntax, Request::SYNTAXES, 'the syntax returned by load'),
            ImporterRegistry.url_string(result.respond_to?(:source_map_url) ? result.source_map_url : nil,
                                        'load (source_map_url)')
          ]
        end

        # @return [Array(String, Boolean), Array(nil, Boolean)] the file: URL (or
        #   nil) and whether the containing URL went unused
        def file_import(id, url, from_import, containing_url)
          context = CanonicalizeContext.new(containing_url, from_import)
          result = ImporterRegistry.url_string(@importers.fetch(id).find_file_url(url, context), 'find_file_url')
          raise "find_file_url must return a file: URL, got #{result.inspect}" if result && !result.start_with?('file:')

          [result, !context.containing_url_accessed?]
        end

        # A URL returned by an importer as a String (URI objects welcome).
        def self.url_string(url, method)
          return nil if url.nil?
          return Request.utf8(url.to_str, "the URL returned by #{method}") if url.respond_to?(:to_str)

          if defined?(URI::Generic) && url.is_a?(URI::Generic)
            return Request.utf8(url.to_s,
                                "the URL returned by #{method}")
          end

          raise TypeError, "#{method} must return a URL String or nil, got #{url.inspect}"
        end

        def self.non_canonical_schemes(importer, name)
          return [] unless importer.respond_to?(:non_canonical_scheme)

          schemes = importer.non_canonical_scheme
          schemes = [] if schemes.nil?
          schemes = [schemes] if schemes.is_a?(String) || schemes.is_a?(Symbol)
          Request.list(schemes, "#{name} non_canonical_scheme").map do |scheme|
            scheme = scheme.to_s
            unless SCHEME.match?(scheme)
              raise ArgumentError,
                    "#{scheme.inspect} is not a valid non_canonical_scheme: use lowercase letters, digits, +, - and ."
            end

            scheme
          end
        end

        private

        def add(importer)
          @importers << importer
          @importers.length - 1
        end
      end
    end
  end
end
