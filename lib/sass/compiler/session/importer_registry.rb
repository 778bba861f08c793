# frozen_string_literal: true

require_relative '../arguments'

module Sass
  class Compiler
    class Session
      # The importers of one compile, by the id the compiler calls them with.
      # Answers +CanonicalizeRequest+, +ImportRequest+ and +FileImportRequest+.
      class ImporterRegistry
        # The entries of a Hash importer that are called.
        CALLABLES = %i[canonicalize load find_file_url].freeze

        def initialize
          @importers = nil
        end

        # @param importers [Array<Object>]
        # @return [Array<Array>] descriptors for the request, in order
        def register_all(importers)
          importers = Arguments.list(importers, 'importers')
          return importers if importers.empty?

          importers.map { |importer| register(importer, 'importer') }
        end

        # Registers one importer and returns its descriptor for the request:
        # +[:importer, id, schemes]+, +[:file_importer, id]+ or
        # +[:node_package_importer, dir]+. An importer is an object (or a Hash
        # of callables) with +canonicalize+ and +load+, a file importer one with
        # +find_file_url+; being both, or neither, is an +ArgumentError+, as
        # is a Hash entry that cannot be called.
        def register(importer, name)
          return [:node_package_importer, importer.entry_point_directory] if importer.is_a?(NodePackageImporter)

          if importer.is_a?(Hash)
            importer = Structure.new(importer, name, callables: CALLABLES, values: %i[non_canonical_scheme])
            is_importer = importer.key?(:canonicalize) && importer.key?(:load)
            is_file_importer = importer.key?(:find_file_url)
          else
            is_importer = importer.respond_to?(:canonicalize) && importer.respond_to?(:load)
            is_file_importer = importer.respond_to?(:find_file_url)
          end
          raise ArgumentError, 'importer must be an Importer or a FileImporter' if is_importer == is_file_importer

          return [:file_importer, add(importer)] if is_file_importer

          [:importer, add(importer), ImporterRegistry.non_canonical_schemes(importer, name)]
        end

        # @return [Array(String, Boolean), Array(nil, Boolean)] the canonical URL
        #   (or nil) and whether the containing URL went unused
        def canonicalize(id, url, from_import, containing_url)
          context = CanonicalizeContext.new(containing_url, from_import)
          result = invoke(id, :canonicalize, url, context)
          [ImporterRegistry.url_string(result, 'canonicalize'), !context.containing_url_accessed?]
        end

        # @return [Array(String, Symbol, String), nil] contents, syntax and
        #   source map URL, or nil if the importer does not have the stylesheet
        def import(id, url)
          result = invoke(id, :load, url)
          return nil if result.nil?

          contents, syntax, source_map_url = ImporterRegistry.import_result(result)
          [
            Arguments.utf8(contents, 'the contents returned by load'),
            Arguments.choice(syntax, Arguments::SYNTAXES, 'the syntax returned by load'),
            ImporterRegistry.url_string(source_map_url, 'load (source_map_url)')
          ]
        end

        # @return [Array(String, Boolean), Array(nil, Boolean)] the file: URL (or
        #   nil) and whether the containing URL went unused
        def file_import(id, url, from_import, containing_url)
          context = CanonicalizeContext.new(containing_url, from_import)
          result = ImporterRegistry.url_string(invoke(id, :find_file_url, url, context), 'find_file_url')
          [result, !context.containing_url_accessed?]
        end

        # A URL returned by an importer, as a String: anything but nil is sent
        # as its +to_s+ (a String, a URI), as the established gem sends it.
        # Whether it is a URL, an absolute one, a file: one is the compiler's
        # to judge, and its message is what the user reads ("The importer
        # must return an absolute URL, was ...").
        def self.url_string(url, method)
          return nil if url.nil?

          Arguments.utf8(url.respond_to?(:to_str) ? url.to_str : url.to_s, "the URL returned by #{method}")
        end

        # The contents, syntax and source map URL of what +load+ returned: a
        # Hash or an object with those fields.
        def self.import_result(result)
          if result.is_a?(Hash)
            fields = %i[contents syntax source_map_url].map { |key| result.fetch(key) { result[key.to_s] } }
            return fields unless fields[0].nil? || fields[1].nil?
          elsif result.respond_to?(:contents) && result.respond_to?(:syntax)
            return [result.contents, result.syntax, (result.source_map_url if result.respond_to?(:source_map_url))]
          end

          raise TypeError, "load must return nil or a Hash with :contents and :syntax, got #{result.inspect[0, 200]}"
        end

        # The importer's non-canonical schemes as Strings (+nil+ is none, a
        # String or Symbol is one); whether each is a valid scheme is for the
        # compiler to judge.
        def self.non_canonical_schemes(importer, name)
          schemes = if importer.is_a?(Structure)
                      importer[:non_canonical_scheme]
                    elsif importer.respond_to?(:non_canonical_scheme)
                      importer.non_canonical_scheme
                    end
          schemes = [schemes] if schemes.is_a?(String) || schemes.is_a?(Symbol)
          Arguments.list(schemes, "#{name} non_canonical_scheme").map do |scheme|
            unless scheme.is_a?(String) || scheme.is_a?(Symbol)
              raise TypeError, "#{name} non_canonical_scheme must be Strings, got #{scheme.inspect[0, 80]}"
            end

            Arguments.utf8(scheme.to_s, "#{name} non_canonical_scheme")
          end
        end

        private

        # Calls the importer's +method+: a method of an importer object, or the
        # callable of a Hash importer, called as it is.
        def invoke(id, method, *args)
          importer = (@importers || EMPTY_LIST).fetch(id)
          importer.is_a?(Structure) ? importer.call(method, *args) : importer.public_send(method, *args)
        end

        def add(importer)
          (@importers ||= []) << importer
          @importers.length - 1
        end
      end
    end
  end
end
