# frozen_string_literal: true

require_relative '../test_helper'

# Importers and loggers written as Hashes of lambdas by objects that keep
# state and private helpers (an asset pipeline, a site generator): each lambda
# runs with the self of the object that built it, and a logger lambda gets
# only the keywords it declares.
class CallablesCompatTest < Minitest::Test
  # An asset pipeline's Sass integration.
  class Pipeline
    attr_reader :dependencies, :messages

    def initialize(files)
      @files = files
      @dependencies = []
      @messages = []
    end

    def compile(source)
      Sass.compile_string(source, importers: [importer], logger:, functions: { 'asset-digest($path)' => digest })
    end

    private

    def importer
      {
        canonicalize: ->(url, context) { resolve(url, context.from_import) },
        load: ->(url) { read(url) },
        non_canonical_scheme: 'asset'
      }
    end

    def logger
      {
        warn: ->(message, span:) { note(:warn, message, span) },
        debug: ->(message) { note(:debug, message, nil) }
      }
    end

    def digest = ->(args) { Sass::Value::String.new(fingerprint(args[0].text)) }

    def resolve(url, _from_import)
      name = url.delete_prefix('asset:')
      "pipeline:#{name}" if @files.key?(name)
    end

    def read(url)
      name = url.delete_prefix('pipeline:')
      @dependencies << name
      { contents: @files.fetch(name), syntax: :scss, source_map_url: "file:///app/#{name}.scss" }
    end

    def note(kind, message, span) = @messages << [kind, message, span&.url]

    def fingerprint(path) = "#{path}-#{path.sum.to_s(16)}"
  end

  def test_a_pipeline_of_private_methods_behind_lambdas
    pipeline = Pipeline.new({ 'base' => "@warn 'from base'; @debug 'dbg'; .base { d: asset-digest('x.png'); }" })
    css = pipeline.compile("@use 'asset:base';").css
    assert_equal ".base {\n  d: \"x.png-#{'x.png'.sum.to_s(16)}\";\n}", css
    assert_equal ['base'], pipeline.dependencies
    assert_equal [[:warn, 'from base', nil], [:debug, 'dbg', nil]], pipeline.messages
  end

  def test_a_failing_lambda_fails_the_compile_with_its_backtrace
    pipeline = Pipeline.new({})
    pipeline.define_singleton_method(:resolve) { |_url, _from_import| raise IOError, 'asset store offline' }
    error = assert_raises(Sass::CompileError) { pipeline.compile("@use 'asset:base';") }
    assert_equal 'asset store offline (IOError)', error.message
    assert_kind_of IOError, error.cause
    assert_match(/\A#{Regexp.escape(__FILE__)}:\d+/, error.backtrace.first)
  end

  def test_method_objects_and_callable_objects_work_as_entries
    calls = []
    callable = Object.new
    callable.define_singleton_method(:call) { |message, **options| calls << [message, options.keys.sort] }
    Sass.compile_string("@warn 'w'; @debug 'd';", logger: { warn: callable, debug: method(:record_debug) })
    assert_equal [['w', %i[deprecation deprecation_type span stack]]], calls
    assert_equal ['d'], @debugs
  end

  private

  def record_debug(message, span:)
    (@debugs ||= []) << message if span
  end
end
