# frozen_string_literal: true

require 'rake'
require 'rake/tasklib'
require_relative '../rack'

module Sass
  class Rack
    # A rake task that precompiles every stylesheet Sass::Rack would serve
    # from +root+ into +output+ ({Rack.precompile}), for a deploy.
    #
    # @example Rakefile
    #   require 'sass/rack/task'
    #   Sass::Rack::Task.new(root: 'styles', output: 'public/css', style: :compressed)
    #   # rake sass:precompile
    class Task < ::Rake::TaskLib
      # @param name [String, Symbol] the task's name
      # @param root [String] the directory of the stylesheets
      # @param output [String] the directory to write the CSS into
      # @param options [Hash] {Rack.precompile}'s other options
      # @raise [ArgumentError] for an option {Rack.precompile} does not take,
      #   when the task is defined, not when it runs
      def initialize(name = 'sass:precompile', root:, output:, **options)
        super()
        Build.check_keywords(options.keys, [*Build::COMPILE_OPTIONS, :source_map, :source_map_include_sources])
        desc "Compile the stylesheets in #{root} into #{output}"
        task(name) do
          Rack.precompile(root:, output:, **options).each { |file| puts "wrote #{file}" }
        end
      end
    end
  end
end
