# frozen_string_literal: true

require 'rack_helper'

# Many requests at once, under a threaded server (WEBrick, as Puma serves)
# and a fiber server (async-http under the async gem's scheduler, as Falcon
# serves): concurrent requests for one stylesheet wait for one compile;
# requests for different stylesheets compile at the same time.
module RackConcurrencyCases
  include RackServers
  include RackStylesheets

  REQUESTS = 16

  def setup
    super
    @dir = Dir.mktmpdir('sass-rack')
    @root = File.join(@dir, 'styles')
    @arrived = Queue.new
    @at_gate = Queue.new
    @gate = Queue.new
  end

  def teardown
    REQUESTS.times { @gate << :open } # never leave a compile waiting
    FileUtils.rm_rf(@dir) if @dir
    super
  end

  # +compiled()+ counts compiles and then waits at a gate the test opens
  # once every request has reached the middleware.
  def gated_functions
    counting = counting_function.fetch('compiled()')
    { 'compiled()' => lambda do |args|
      @at_gate << true
      @gate.pop
      counting.call(args)
    end }
  end

  # The middleware, counting the requests that reached it.
  def counted(app) = ->(env) { (@arrived << true) && app.call(env) }

  def concurrent_gets(base, paths)
    threads = paths.map { |path| Thread.new { http(base, path) } }
    wait_until(timeout: 30, message: "#{@arrived.size} of #{paths.length} requests arrived") do
      @arrived.size == paths.length
    end
    yield if block_given?
    threads.map { |thread| thread.join(budget(60))&.value || flunk('a request never finished') }
  end

  def test_concurrent_requests_for_one_stylesheet_wait_for_one_compile
    write_tree(@root, 'app.scss' => '@use "part"; a { b: compiled(); c: part.$d; }', '_part.scss' => '$d: e;')
    settle
    app = Sass::Rack.new(teapot, root: @root, prefix: '/css', functions: gated_functions)
    serve(counted(app)) do |base|
      responses = concurrent_gets(base, ['/css/app.css'] * REQUESTS) { @gate << :open }
      assert_equal ['200'], responses.map(&:code).uniq
      assert_equal ["a {\n  b: yes;\n  c: e;\n}"], responses.map(&:body).uniq
      assert_equal 1, compiles, "#{REQUESTS} concurrent requests, one compile"

      # After an edit, the stats were taken too soon after it to be trusted:
      # the first request's compile may have missed a second edit in the
      # same tick, so the requests that arrived during it take the compile
      # the next one makes, which started after all of them arrived. (The
      # first request's compile is under way before the others are sent:
      # requests that all arrived before it started would rightly take it.)
      write_file(File.join(@root, '_part.scss'), '$d: f;')
      first = Thread.new { http(base, '/css/app.css') }
      wait_until(timeout: 30, message: "the edit's first compile never started") { @at_gate.size == 2 }
      @arrived.clear
      responses = concurrent_gets(base, ['/css/app.css'] * (REQUESTS - 1)) { 2.times { @gate << :open } }
      responses << (first.join(budget(60))&.value || flunk('the first request never finished'))
      assert_equal ["a {\n  b: yes;\n  c: f;\n}"], responses.map(&:body).uniq
      assert_equal 3, compiles
    end
  end

  def test_requests_for_different_stylesheets_compile_at_once
    names = %w[one two three four]
    names.each { |name| write_file(File.join(@root, "#{name}.scss"), "a { b: met(); c: #{name}; }") }
    # met() returns only once every compile has called it: if compiles ran
    # one after another, the first would wait for ever (and fail the test).
    met = Queue.new
    meeting = lambda do |_|
      met << true
      wait_until(timeout: 30, message: "#{met.size} of #{names.length} compiles met") { met.size == names.length }
      Sass::Value::String.new('met', quoted: false)
    end
    app = Sass::Rack.new(teapot, root: @root, prefix: '/css', functions: { 'met()' => meeting })
    serve(counted(app)) do |base|
      responses = concurrent_gets(base, names.map { |name| "/css/#{name}.css" })
      assert_equal(names.map { |name| "a {\n  b: met;\n  c: #{name};\n}" }, responses.map(&:body))
    end
  end
end

class RackThreadConcurrencyTest < Minitest::Test
  include RackConcurrencyCases

  def serve(app, &)
    assert RackServers.threaded?, 'Rack and WEBrick must be installed (ruby-rack, ruby-webrick, ruby-rackup on Rack 3)'
    with_threaded_server(app, &)
  end
end

if RackServers.fibers?
  class RackFiberConcurrencyTest < Minitest::Test
    include RackConcurrencyCases

    def serve(app, &) = with_fiber_server(app, &)

    # The fiber server runs every request in one thread.
    def test_requests_run_in_fibers_of_one_thread
      write_file(File.join(@root, 'app.scss'), 'a { b: c }')
      threads = Queue.new
      app = Sass::Rack.new(teapot, root: @root, prefix: '/css')
      serve(lambda { |env|
        threads << [Thread.current, Fiber.current, Fiber.scheduler.class.name]
        app.call(env)
      }) do |base|
        4.times.map { Thread.new { http(base, '/css/app.css') } }.each { |thread| thread.join(budget(60)) }
      end
      seen = Array.new(threads.size) { threads.pop }
      assert_equal 1, seen.map(&:first).uniq.length
      assert_equal 4, seen.map { |each| each[1] }.uniq.length
      assert_match 'Async', seen.first.last
    end
  end
else
  warn 'async-http is not installed: the Sass::Rack fiber-server tests do not run'
end
