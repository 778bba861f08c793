# frozen_string_literal: true

require 'test_helper'
require 'net/http'
require 'socket'
require 'stringio'
require 'sass/rack'

# Real servers for the Sass::Rack tests, started on a loopback port by the
# test and stopped by it: WEBrick through Rack's handler (threads, as Puma
# serves) and async-http under the async gem's scheduler (fibers, as Falcon
# serves), with the small Rack adapter async-http needs.
module RackServers
  begin
    require 'rack'
    require 'rack/lint'
    require 'webrick'
    begin
      require 'rackup' # Rack 3 moved the handlers to the rackup gem
    rescue LoadError
      nil
    end
  rescue LoadError
    nil
  end

  begin
    require 'async'
    require 'async/http/server'
    require 'async/http/endpoint'
    require 'protocol/http/response'
  rescue LoadError
    nil
  end

  # Rack and WEBrick (Debian's ruby-rack, ruby-webrick and, for Rack 3,
  # ruby-rackup).
  def self.threaded? = defined?(::Rack::Lint) && !webrick_handler.nil?

  # async-http (Debian's ruby-async-http).
  def self.fibers? = defined?(::Async::HTTP::Server) ? true : false

  def self.webrick_handler
    if defined?(::Rackup::Handler::WEBrick) then ::Rackup::Handler::WEBrick
    elsif defined?(::Rack::Handler::WEBrick) then ::Rack::Handler::WEBrick
    end
  end

  # Runs +app+ (under Rack::Lint) in WEBrick on a loopback port for the
  # block, which gets the base URL.
  def with_threaded_server(app)
    started = Queue.new
    thread = Thread.new do
      RackServers.webrick_handler.run(::Rack::Lint.new(app), Host: '127.0.0.1', Port: 0,
                                                             Logger: WEBrick::Log.new(File::NULL),
                                                             AccessLog: []) { |server| started << server }
    end
    server = started.pop
    yield "http://127.0.0.1:#{server.listeners.first.addr[1]}"
  ensure
    server&.shutdown
    thread&.join(budget(10)) || thread&.kill
  end

  # Runs +app+ in async-http under the async gem's scheduler on a loopback
  # port for the block, which gets the base URL.
  def with_fiber_server(app)
    port = TCPServer.open('127.0.0.1', 0) { |socket| socket.addr[1] }
    stop_reader, stop_writer = IO.pipe
    thread = Thread.new do
      Async do |task|
        endpoint = Async::HTTP::Endpoint.parse("http://127.0.0.1:#{port}")
        server = Async::HTTP::Server.for(endpoint) { |request| RackServers.call_rack(app, request, port) }
        serving = task.async { server.run }
        stop_reader.read(1) # waits in the scheduler until the test is done
        serving.stop
      end
    end
    wait_until(message: 'the fiber server never listened') { port_open?(port) }
    yield "http://127.0.0.1:#{port}"
  ensure
    stop_writer&.close
    thread&.join(budget(10)) || thread&.kill
    stop_reader&.close
  end

  # The Rack adapter: an async-http request as a Rack env, and the Rack
  # response as an async-http response.
  def self.call_rack(app, request, port)
    path, query = request.path.split('?', 2)
    env = { 'REQUEST_METHOD' => request.method, 'SCRIPT_NAME' => '', 'PATH_INFO' => path,
            'QUERY_STRING' => query.to_s, 'SERVER_NAME' => '127.0.0.1', 'SERVER_PORT' => port.to_s,
            'SERVER_PROTOCOL' => 'HTTP/1.1', 'rack.url_scheme' => 'http', 'rack.errors' => $stderr,
            'rack.input' => StringIO.new(request.read.to_s), 'rack.multithread' => false,
            'rack.multiprocess' => false, 'rack.run_once' => false, 'rack.hijack?' => false }
    request.headers.each { |name, value| env["HTTP_#{name.upcase.tr('-', '_')}"] = value.to_s }
    status, headers, body = app.call(env)
    chunks = []
    body.each { |chunk| chunks << chunk }
    body.close if body.respond_to?(:close)
    Protocol::HTTP::Response[status, headers.to_h { |name, value| [name.to_s, value.to_s] }, chunks]
  end

  def port_open?(port)
    TCPSocket.open('127.0.0.1', port).close
    true
  rescue SystemCallError
    false
  end

  # A GET (or +method+) of +path+ under +base+; returns the Net::HTTPResponse.
  def http(base, path, method: 'GET', headers: {}, body: nil)
    uri = URI("#{base}#{path}")
    Net::HTTP.start(uri.host, uri.port, open_timeout: budget(10), read_timeout: budget(60)) do |connection|
      connection.send_request(method, path, body, headers)
    end
  end

  # The status of a request for +path+ sent as it is, byte for byte (no
  # client normalizes it).
  def raw_status(base, path)
    uri = URI(base)
    TCPSocket.open(uri.host, uri.port) do |socket|
      socket.write("GET #{path} HTTP/1.1\r\nHost: #{uri.host}\r\nConnection: close\r\n\r\n")
      Integer(socket.read[%r{\AHTTP/1\.[01] (\d+)}, 1])
    end
  end
end

# Stylesheet trees for the Sass::Rack tests, and a function that counts
# compiles.
module RackStylesheets
  # Writes +files+ (path => contents) under +dir+ and returns +dir+.
  def write_tree(dir, files)
    files.each { |path, contents| write_file(File.join(dir, path), contents) }
    dir
  end

  def write_file(path, contents)
    FileUtils.mkdir_p(File.dirname(path))
    File.write(path, contents)
  end

  # Waits until the stats of files written before are trusted without a
  # recompile (Sass::Rack::Snapshot::MARGIN after they were written).
  def settle
    sleep(Sass::Rack.const_get(:Snapshot)::MARGIN + 0.2)
  end

  # +compiled()+, counting the compiles that call it.
  def counting_function
    @compiles = Queue.new
    { 'compiled()' => lambda do |_|
      @compiles << true
      Sass::Value::String.new('yes', quoted: false)
    end }
  end

  def compiles = @compiles.size

  # A Rack application behind the middleware: 418 for whatever it is passed.
  def teapot = ->(_env) { [418, { 'content-type' => 'text/plain' }, ['passed on']] }

  # A Rack env for a direct call of the middleware.
  def rack_env(path, method: 'GET', **headers)
    { 'REQUEST_METHOD' => method, 'PATH_INFO' => path, 'SCRIPT_NAME' => '', 'QUERY_STRING' => '',
      'rack.errors' => StringIO.new, **headers }
  end
end
