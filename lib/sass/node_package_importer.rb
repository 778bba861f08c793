# frozen_string_literal: true

module Sass
  # The compiler's built-in importer for +pkg:+ URLs, which it resolves from
  # +node_modules+ the way Node.js resolves packages.
  # @see https://sass-lang.com/documentation/js-api/classes/nodepackageimporter/
  class NodePackageImporter
    # @return [String] the directory where resolution starts
    attr_reader :entry_point_directory

    # @param entry_point_directory [String, Pathname, nil] where to start
    #   looking for +node_modules+ (required, as in the established gem); nil
    #   means the directory of the running program (+$PROGRAM_NAME+), or the
    #   current directory if that is not a file
    def initialize(entry_point_directory)
      if entry_point_directory.nil?
        program = File.absolute_path($PROGRAM_NAME)
        entry_point_directory = File.file?(program) ? File.dirname(program) : Dir.pwd
      end
      unless entry_point_directory.respond_to?(:to_path) || entry_point_directory.respond_to?(:to_str)
        raise TypeError, "entry_point_directory must be a path, got #{entry_point_directory.inspect}"
      end

      path = entry_point_directory.respond_to?(:to_path) ? entry_point_directory.to_path : entry_point_directory.to_str
      @entry_point_directory = File.absolute_path(path)
    end
  end
end
