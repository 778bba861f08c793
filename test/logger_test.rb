# frozen_string_literal: true

require_relative 'test_helper'

class LoggerTest < Minitest::Test
  SOURCE = "@warn 'careful';\n@debug 'looking';\na { b: (4 / 2) }"

  def test_keyword_logger_gets_every_field
    logger = RecordingLogger.new
    Sass.compile_string(SOURCE, logger:, url: 'file:///tmp/log.scss')

    warn, deprecation = logger.warnings
    assert_equal 'careful', warn[:message]
    refute warn[:deprecation]
    assert_nil warn[:deprecation_type]
    assert_match(/log\.scss 1:1\s+root stylesheet/, warn[:stack])
    assert_nil warn[:span]

    assert deprecation[:deprecation]
    assert_equal 'slash-div', deprecation[:deprecation_type]
    assert_equal '4 / 2', deprecation[:span].text
    assert_equal 'file:///tmp/log.scss', deprecation[:span].url
    assert_match(%r{Using / for division}, deprecation[:message])

    assert_equal [{ message: 'looking', span: logger.debugs.first[:span] }], logger.debugs
    assert_equal "@debug 'looking'", logger.debugs.first[:span].text
  end

  def test_logger_with_only_some_keywords_and_only_debug
    messages = []
    logger = Object.new
    logger.define_singleton_method(:warn) { |message, span: nil| messages << [message, span&.text] }
    Sass.compile_string("@warn 'w';", logger:)
    assert_equal [['w', nil]], messages

    debugs = []
    only_debug = { debug: ->(message, **) { debugs << message } }
    _out, err = capture_subprocess_io { Sass.compile_string(SOURCE, logger: only_debug, alert_color: false) }
    assert_equal ['looking'], debugs
    assert_match(/WARNING: careful/, err)
  end

  def test_logger_with_an_options_argument
    received = []
    logger = Object.new
    logger.define_singleton_method(:warn) do |message, options|
      received << [message, options.deprecation, options.stack]
    end
    Sass.compile_string("@warn 'w';", logger:)
    assert_equal 'w', received.first[0]
    refute received.first[1]
    assert_match(/root stylesheet/, received.first[2])
  end

  def test_silent_logger_prints_nothing
    out, err = capture_subprocess_io { Sass.compile_string(SOURCE, logger: Sass::Logger.silent) }
    assert_empty out
    assert_empty err
  end

  def test_without_a_logger_messages_go_to_stderr_as_formatted
    out, err = capture_subprocess_io { Sass.compile_string(SOURCE, alert_color: false, alert_ascii: true) }
    assert_empty out
    assert_match(/^WARNING: careful\n    - 1:1  root stylesheet\n/, err)
    assert_match(/^-:2 DEBUG: looking$/, err)
    assert_match(%r{^DEPRECATION WARNING \[slash-div\]: Using / for division}, err)
  end

  def test_a_failing_logger_fails_the_compile_and_the_host_keeps_serving
    logger = { warn: ->(*, **) { raise IOError, 'log disk full' } }
    error = assert_raises(IOError) { Sass.compile_string("@warn 'x'; a { b: c }", logger:) }
    assert_equal 'log disk full', error.message
    assert_equal "a {\n  b: c;\n}", Sass.compile_string('a { b: c }').css
  end

  # A build tool's reporter that collects Sass messages with its own methods,
  # through a Hash of lambdas.
  class Reporter
    attr_reader :lines

    def initialize
      @lines = []
    end

    def logger
      {
        warn: ->(message, deprecation:, span: nil) { record(deprecation ? 'deprecation' : 'warning', message, span) },
        debug: ->(message, span:) { record('debug', message, span) }
      }
    end

    private

    def record(kind, message, span)
      @lines << "#{kind}: #{message}#{" at #{span.start.line + 1}" if span}"
    end
  end

  def test_hash_of_lambdas_keeps_the_lambdas_self_and_gets_the_keywords_it_declares
    reporter = Reporter.new
    Sass.compile_string(SOURCE, logger: reporter.logger)
    assert_equal 'warning: careful', reporter.lines[0]
    assert_equal 'debug: looking at 2', reporter.lines[1]
    assert_match(%r{\Adeprecation: Using / for division.* at 3\z}m, reporter.lines[2])

    options = []
    positional = { warn: ->(message, opts) { options << [message, opts.deprecation, opts.span&.text] } }
    Sass.compile_string("@warn 'w';", logger: positional)
    assert_equal [['w', false, nil]], options
  end

  def test_hash_logger_entries_must_be_callable
    [{ warn: 'loud' }, { debug: 42 }, { 'warn' => :symbol }].each do |logger|
      error = assert_raises(ArgumentError, logger.inspect) { Sass.compile_string("@warn 'x';", logger:) }
      assert_match(/\Alogger\[:(warn|debug)\] must respond to call, got /, error.message)
    end
  end

  def test_any_object_is_a_logger_as_in_the_established_gem
    _out, err = capture_subprocess_io do
      Sass.compile_string("@warn 'to stderr';", logger: Object.new, alert_color: false)
      Sass.compile_string("@warn 'also';", logger: {}, alert_color: false)
    end
    assert_match(/WARNING: to stderr/, err)
    assert_match(/WARNING: also/, err)
  end
end
