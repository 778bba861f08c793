# frozen_string_literal: true

require_relative 'test_helper'
require 'open3'
require 'rbconfig'
require 'uri'

# Importers of every kind, in any mix, against the real compiler.
class ImporterTest < Minitest::Test
  FIXTURES = File.expand_path('fixtures', __dir__)

  # An in-memory importer over a Hash of "mem:" URLs to SCSS, recording its
  # calls.
  class MemoryImporter
    attr_reader :canonicalize_calls, :load_calls

    def initialize(files, scheme: 'mem', read_containing_url: false)
      @files = files
      @scheme = scheme
      @read_containing_url = read_containing_url
      @canonicalize_calls = Queue.new
      @load_calls = Queue.new
    end

    def canonicalize(url, context)
      containing = context.containing_url if @read_containing_url
      @canonicalize_calls << [url, context.from_import, containing]
      path = url.delete_prefix("#{@scheme}:")
      return nil if url.include?(':') && !url.start_with?("#{@scheme}:")

      "#{@scheme}:#{path}" if @files.key?(path)
    end

    def load(canonical_url)
      @load_calls << canonical_url
      { contents: @files.fetch(canonical_url.delete_prefix("#{@scheme}:")), syntax: :scss }
    end

    def calls(queue)
      Array.new(queue.size) { queue.pop }
    end
  end

  def test_importers_are_tried_in_order_before_load_paths
    in_tmpdir do |dir|
      File.write(File.join(dir, '_shared.scss'), 'from { source: load-path; }')
      first = MemoryImporter.new({ 'shared' => 'from { source: first; }' })
      second = MemoryImporter.new({ 'shared' => 'from { source: second; }', 'only-second' => 'b { c: d; }' })
      css = Sass.compile_string("@use 'shared'; @use 'only-second';", importers: [first, second], load_paths: [dir]).css
      assert_equal "from {\n  source: first;\n}\n\nb {\n  c: d;\n}", css
      assert_equal "from {\n  source: load-path;\n}", Sass.compile_string("@use 'shared';", load_paths: [dir]).css
    end
  end

  def test_use_forward_import_and_load_css
    importer = MemoryImporter.new({
                                    'vars' => '$size: 3px;',
                                    'mixins' => '@forward "vars"; @mixin box { border: 1px solid; }',
                                    'legacy' => '.legacy { old: yes; }',
                                    'dynamic' => '.dynamic { loaded: css; }'
                                  })
    source = <<~SCSS
      @use 'sass:meta';
      @use 'mixins';
      @import 'legacy';
      .a { width: mixins.$size; @include mixins.box; }
      @include meta.load-css('dynamic');
    SCSS
    result = Sass.compile_string(source, importers: [importer], silence_deprecations: ['import'])
    assert_match(/\.legacy \{\n  old: yes;\n\}/, result.css)
    assert_match(/\.a \{\n  width: 3px;\n  border: 1px solid;\n\}/, result.css)
    assert_match(/\.dynamic \{\n  loaded: css;\n\}/, result.css)
    assert_equal %w[mem:dynamic mem:legacy mem:mixins mem:vars], result.loaded_urls.sort
    imported = importer.calls(importer.canonicalize_calls).select { |_, from_import, _| from_import }
    assert_equal ['legacy'], imported.map(&:first).uniq
  end

  def test_relative_loads_are_resolved_against_the_containing_url_first
    importer = MemoryImporter.new({ 'dir/entry' => '@use "sibling";', 'dir/sibling' => '.sibling { x: y; }' })
    css = Sass.compile_string("@use 'mem:dir/entry';", importers: [importer]).css
    assert_equal ".sibling {\n  x: y;\n}", css
    assert_equal %w[mem:dir/entry mem:dir/sibling], importer.calls(importer.canonicalize_calls).map(&:first)
  end

  # An importer that takes only relative URLs: loads inside its stylesheets
  # come back to it relative, with the containing stylesheet's URL.
  class RelativeOnlyImporter
    FILES = { 'a' => '@use "shared";', 'b' => '@use "shared";', 'shared' => '.shared { n: 1; }' }.freeze
    attr_reader :calls

    def initialize(read_containing_url:)
      @read_containing_url = read_containing_url
      @calls = []
    end

    def canonicalize(url, context)
      @calls << [url, @read_containing_url ? context.containing_url : :unread]
      url.include?(':') ? nil : "mem:#{url}"
    end

    def load(url) = { contents: FILES.fetch(url.delete_prefix('mem:')), syntax: :scss }
  end

  def test_canonicalize_is_called_again_with_relative_urls_and_the_containing_url
    importer = RelativeOnlyImporter.new(read_containing_url: true)
    css = Sass.compile_string("@use 'a'; @use 'b';", importers: [importer]).css
    assert_equal ".shared {\n  n: 1;\n}", css
    assert_includes importer.calls, ['shared', 'mem:a']
    assert_includes importer.calls, ['shared', 'mem:b']
  end

  def test_containing_url_unused_lets_the_compiler_cache
    reading = RelativeOnlyImporter.new(read_containing_url: true)
    Sass.compile_string("@use 'a'; @use 'b';", importers: [reading])
    ignoring = RelativeOnlyImporter.new(read_containing_url: false)
    Sass.compile_string("@use 'a'; @use 'b';", importers: [ignoring])
    assert_equal 2, reading.calls.count { |url, _| url == 'shared' }, 'asked per containing stylesheet'
    assert_equal 1, ignoring.calls.count { |url, _| url == 'shared' }, 'an unread containing URL lets Sass cache'
  end

  def test_non_canonical_schemes
    importer = Object.new
    def importer.non_canonical_scheme = 'virtual'

    def importer.canonicalize(url, context)
      return nil unless url.start_with?('virtual:', 'real:')

      @containing = context.containing_url
      url.sub('virtual:', 'real:')
    end

    def importer.load(url) = { contents: ".#{url.delete_prefix('real:')} { ok: yes; }", syntax: :scss }
    importer.singleton_class.attr_reader(:containing)
    css = Sass.compile_string("@use 'virtual:thing';", importers: [importer], url: 'file:///tmp/entry.scss').css
    assert_equal ".thing {\n  ok: yes;\n}", css
    assert_equal 'file:///tmp/entry.scss', importer.containing

    bad = Object.new
    def bad.non_canonical_scheme = ['virtual']
    def bad.canonicalize(url, _) = url.start_with?('virtual:') ? url : nil
    def bad.load(_) = { contents: '', syntax: :scss }
    error = assert_raises(Sass::CompileError) { Sass.compile_string("@use 'virtual:x';", importers: [bad]) }
    assert_match(/non-canonical/i, error.message)

    compiler = new_compiler
    [['Bad!'], [''], 'UPPER', :'a b'].each do |schemes|
      invalid = { canonicalize: ->(*) {}, load: ->(*) {}, non_canonical_scheme: schemes }
      error = assert_raises(Sass::CompileError, schemes.inspect) do
        compiler.compile_string('a { b: c }', importers: [invalid])
      end
      assert_match(/isn't a valid URL scheme/, error.message)
      assert_equal "a {\n  b: c;\n}", compiler.compile_string('a { b: c }').css, 'the compiler keeps serving'
    end
    numeric = { canonicalize: ->(*) {}, load: ->(*) {}, non_canonical_scheme: [1] }
    error = assert_raises(TypeError) { Sass.compile_string('a { b: c }', importers: [numeric]) }
    assert_match(/non_canonical_scheme must be Strings, got 1/, error.message)
  end

  def test_an_importer_and_a_file_importer_at_once_is_an_argument_error
    both = Object.new
    def both.canonicalize(*) = nil
    def both.load(*) = nil
    def both.find_file_url(*) = nil
    hash = { canonicalize: ->(*) {}, load: ->(*) {}, find_file_url: ->(*) {} }
    [both, hash].each do |importer|
      [{ importers: [importer] }, { importer: }].each do |options|
        error = assert_raises(ArgumentError) { Sass.compile_string('a { b: c }', **options) }
        assert_equal 'importer must be an Importer or a FileImporter', error.message
      end
    end
    only_canonicalize = { canonicalize: ->(*) {} }
    error = assert_raises(ArgumentError) { Sass.compile_string('a { b: c }', importers: [only_canonicalize]) }
    assert_equal 'importer must be an Importer or a FileImporter', error.message
  end

  def test_hash_importer_entries_must_be_callable
    {
      { canonicalize: 'text', load: ->(*) {} } => /importer\[:canonicalize\] must respond to call, got "text"/,
      { canonicalize: ->(*) {}, load: 42 } => /importer\[:load\] must respond to call, got 42/,
      { find_file_url: :symbol } => /importer\[:find_file_url\] must respond to call, got :symbol/
    }.each do |importer, message|
      loaded = false
      error = assert_raises(ArgumentError) do
        Sass.compile_string('a { b: c }', importers: [importer], functions: { 'x()' => ->(_) { loaded = true } })
      end
      assert_match message, error.message
      refute loaded
    end
  end

  # Builds importers as Hashes of lambdas that call methods of the object that
  # built them, as Rails and Jekyll plugins do.
  class ThemeLoader
    attr_reader :seen

    def initialize
      @seen = []
    end

    def importer
      { canonicalize: ->(url, context) { canonical(url, context) }, load: ->(url) { stylesheet(url) } }
    end

    def file_importer(dir)
      { find_file_url: ->(url, _context) { file_url(dir, url) } }
    end

    private

    def canonical(url, context)
      @seen << [url, context.from_import]
      "theme:#{url.delete_prefix('theme:')}" if url.start_with?('theme:') || url == 'colors'
    end

    def stylesheet(url)
      { contents: ".#{url.delete_prefix('theme:')} { from: #{self.class.name.split('::').last} }", syntax: :scss }
    end

    def file_url(dir, url) = ("#{FILE_URL_PREFIX}#{dir}/_#{url}.scss" if url == 'on-disk')
  end

  def test_hash_of_lambdas_keeps_the_lambdas_self
    loader = ThemeLoader.new
    css = Sass.compile_string("@use 'colors';", importers: [loader.importer]).css
    assert_equal ".colors {\n  from: ThemeLoader;\n}", css
    assert_equal [['colors', false]], loader.seen
    css = Sass.compile_string("@use 'sibling';", importer: loader.importer, url: 'theme:entry').css
    assert_equal ".sibling {\n  from: ThemeLoader;\n}", css
    in_tmpdir do |dir|
      File.write(File.join(dir, '_on-disk.scss'), '.disk { ok: yes; }')
      css = Sass.compile_string("@use 'on-disk';", importers: [loader.file_importer(dir)]).css
      assert_equal ".disk {\n  ok: yes;\n}", css
    end
  end

  def test_file_importer_redirects_to_the_filesystem
    in_tmpdir do |dir|
      Dir.mkdir(File.join(dir, 'lib'))
      File.write(File.join(dir, 'lib', '_part.sass'), ".part\n  from: file-importer\n")
      calls = []
      importer = { find_file_url: lambda { |url, context|
        calls << [url, context.from_import]
        URI("#{FILE_URL_PREFIX}#{dir}/lib/#{url.delete_prefix('lib:')}") if url.start_with?('lib:')
      } }
      result = Sass.compile_string("@use 'lib:part';", importers: [importer])
      assert_equal ".part {\n  from: file-importer;\n}", result.css
      assert_equal ["#{FILE_URL_PREFIX}#{dir}/lib/_part.sass"], result.loaded_urls
      assert_equal [['lib:part', false]], calls
    end
  end

  def test_importer_used_from_16_threads_at_once
    importer = MemoryImporter.new((0...16).to_h { |t| ["lib#{t}", ".lib#{t} { thread: #{t}; }"] })
    threads = Array.new(16) do |t|
      Thread.new { Array.new(20) { Sass.compile_string("@use 'lib#{t}';", importers: [importer]).css } }
    end
    threads.each_with_index do |thread, t|
      thread.value.each { |css| assert_equal ".lib#{t} {\n  thread: #{t};\n}", css }
    end
    assert_equal 16 * 20, importer.load_calls.size
  end

  # What the compiler judges (is it a URL, an absolute one, a file: one) it
  # reports, in its own words, as the established gem leaves it to; what
  # only the host can see (the shape of load's answer) the host reports.
  def test_importer_errors_name_the_problem_and_the_host_keeps_serving
    compiler = new_compiler
    loading = ->(answer) { { canonicalize: ->(url, _) { "m:#{url}" }, load: ->(*) { answer } } }
    cases = {
      'raises' => [{ canonicalize: ->(*) { raise IOError, 'disk on fire' }, load: ->(*) {} }, /disk on fire/],
      'canonicalize returns a number' => [{ canonicalize: ->(*) { 42 }, load: ->(*) {} },
                                          /\AThe importer must return an absolute URL, was "42"\z/],
      'load returns a Hash as source_map_url' => [
        loading.call({ contents: '', syntax: :scss, source_map_url: {} }),
        /\AThe importer must return an absolute URL, was "%7B%7D"\z/
      ],
      'load returns a relative source_map_url' => [
        loading.call({ contents: '', syntax: :scss, source_map_url: 'relative/x.map' }),
        %r{\AThe importer must return an absolute URL, was "relative/x\.map"\z}
      ],
      'load returns Symbol contents' => [loading.call({ contents: :sym, syntax: :scss }),
                                         /contents returned by load must be a String, got :sym/],
      'load returns Integer contents' => [loading.call({ contents: 1, syntax: :scss }),
                                          /contents returned by load must be a String, got 1/],
      'canonicalize returns a relative URL' => [{ canonicalize: ->(*) { 'relative/path' }, load: ->(*) {} },
                                                /relative|absolute/i],
      'load returns a string' => [{ canonicalize: ->(url, _) { "m:#{url}" }, load: ->(*) { 'a { b: c }' } },
                                  /load must return nil or a Hash with :contents and :syntax/],
      'load returns a bad syntax' => [{ canonicalize: ->(url, _) { "m:#{url}" },
                                        load: ->(*) { { contents: '', syntax: :less } } },
                                      /syntax returned by load must be one of :scss, :indented, :css/],
      'contents that do not parse' => [{ canonicalize: ->(url, _) { "m:#{url}" },
                                         load: ->(*) { { contents: 'a {', syntax: :scss } } },
                                       /expected/],
      'find_file_url returns a relative URL' => [
        { find_file_url: ->(*) { 'dir/file.scss' } },
        %r{\AThe file importer must return an absolute URL, was "dir/file\.scss"\z}
      ],
      'find_file_url returns an http URL' => [
        { find_file_url: ->(*) { 'http://example.com/x.scss' } },
        %r{\AThe file importer must return a file: URL, was "http://example\.com/x\.scss"\z}
      ]
    }
    cases.each do |name, (importer, message)|
      error = assert_raises(Sass::CompileError, name) { compiler.compile_string("@use 'x';", importers: [importer]) }
      assert_match message, error.message, name
      assert_equal "a {\n  b: c;\n}", compiler.compile_string('a { b: c }').css, "serving after: #{name}"
    end
    error = assert_raises(Sass::CompileError) do
      compiler.compile_string("@use 'x';", importers: [cases['raises'].first])
    end
    assert_kind_of IOError, error.cause
    assert(error.cause.backtrace.any? { |line| line.include?(__FILE__) })
    parse_error = assert_raises(Sass::CompileError) do
      compiler.compile_string("@use 'x';", importers: [cases['contents that do not parse'].first])
    end
    assert_equal 'm:x', parse_error.span.url
  end

  def test_node_package_importer_resolves_pkg_urls_from_node_modules
    importer = Sass::NodePackageImporter.new(FIXTURES)
    assert_equal FIXTURES, importer.entry_point_directory
    css = Sass.compile_string("@use 'pkg:fixture-pkg'; @use 'pkg:@scope/styled';", importers: [importer]).css
    assert_match(/\.from-node-package \{\n  color: teal;\n\}/, css)
    assert_match(/\.scoped \{\n  from: scope-styled;\n\}/, css)
    css = Sass.compile_string("@use 'pkg:fixture-pkg/scss/helper';", importers: [importer]).css
    assert_equal ".helper {\n  from: fixture-pkg;\n}", css
    error = assert_raises(Sass::CompileError) do
      Sass.compile_string("@use 'pkg:no-such-package';", importers: [importer])
    end
    assert_match(/Can't find stylesheet to import/, error.message)

    program = File.absolute_path($PROGRAM_NAME)
    expected = File.file?(program) ? File.dirname(program) : Dir.pwd
    assert_equal expected, Sass::NodePackageImporter.new(nil).entry_point_directory
    # The directory is a required argument, as in the established gem.
    assert_equal 1, Sass::NodePackageImporter.instance_method(:initialize).arity
    assert_raises(ArgumentError) { Sass::NodePackageImporter.new }
    assert_raises(TypeError) { Sass::NodePackageImporter.new(42) }
  end

  def test_gem_package_importer_resolves_pkg_urls_from_installed_gems
    script = <<~RUBY
      require 'sass-embedded'
      importer = Sass::GemPackageImporter.new
      puts Sass.compile_string("@use 'pkg:sass-fixture-theme/stylesheets' as theme; .x { c: theme.$brand; }",
                               importers: [importer]).css
      puts Sass.compile_string("@use 'pkg:sass-fixture-theme';", importers: [importer]).css
      begin
        Sass.compile_string("@use 'pkg:not-an-installed-gem/x';", importers: [importer])
      rescue Sass::CompileError => e
        puts "missing: \#{e.message}"
      end
    RUBY
    gems = File.join(FIXTURES, 'gems')
    out, err, status = Open3.capture3({ 'GEM_PATH' => gems, 'GEM_HOME' => gems },
                                      RbConfig.ruby, '-I', File.expand_path('../lib', __dir__), '-e', script)
    assert status.success?, err
    assert_includes out, ".button {\n  from: gem-theme;\n}\n\n.x {\n  c: gold;\n}"
    assert_includes out, ".gem-root {\n  from: gem-root-index;\n}"
    assert_match(/missing: Can't find stylesheet to import/, out)
  end

  def test_gem_package_importer_refuses_malformed_urls
    importer = Sass::GemPackageImporter.new
    assert_nil importer.find_file_url('not-pkg', nil)
    assert_nil importer.find_file_url('pkg:no-such-gem-anywhere/x', nil)
    assert_raises(ArgumentError) { importer.find_file_url('pkg:/x', nil) }
    assert_raises(ArgumentError) { importer.find_file_url('pkg:minitest/../../etc', nil) }
    url = importer.find_file_url('pkg:minitest/lib', nil)
    assert_equal "#{FILE_URL_PREFIX}#{Gem::Specification.find_by_name('minitest').full_gem_path}/lib", url
  end

  def test_load_paths_and_url_resolution_with_loaded_urls
    in_tmpdir do |dir|
      Dir.mkdir(File.join(dir, 'a'))
      Dir.mkdir(File.join(dir, 'b'))
      File.write(File.join(dir, 'a', '_one.scss'), '@use "two"; .one { n: 1; }')
      File.write(File.join(dir, 'a', '_two.scss'), '.two { n: 2; }')
      File.write(File.join(dir, 'b', '_three.scss'), '.three { n: 3; }')
      result = Dir.chdir(dir) do
        Sass.compile_string("@use 'one'; @use 'three';", load_paths: %w[a b],
                                                         url: "#{FILE_URL_PREFIX}#{dir}/entry.scss")
      end
      expected = %w[entry.scss a/_one.scss a/_two.scss b/_three.scss].map { |file| "#{FILE_URL_PREFIX}#{dir}/#{file}" }
      assert_equal expected.sort, result.loaded_urls.sort
    end
  end
end
