# frozen_string_literal: true

require 'rack_helper'

# The middleware finds and reads what a stylesheet loads from disk itself
# (so that it can refuse a file above max_source_bytes before reading it):
# whatever a load names, it must pick the file the compiler picks, and the
# CSS, its source map's sources and its errors must be the compiler's.
class RackLoaderTest < Minitest::Test
  include RackStylesheets

  # Each entry stylesheet, and what it loads.
  TREE = {
    'partial.scss' => "@use 'a'; @use 'a.scss' as a2;",
    '_a.scss' => 'a { from: partial; }',
    'index.scss' => "@use 'dir';",
    'dir/_index.scss' => "@use 'inner'; @use '../a';",
    'dir/_inner.scss' => 'inner { relative: to-the-index; }',
    'css.scss' => "@use 'plain';",
    'plain.css' => '.plain { c: d; }',
    'import_only.scss' => "@use 'old' as used; @import 'old';",
    '_old.scss' => 'old { for: use; }',
    'old.import.scss' => 'old { for: import; }',
    'indented.scss' => "@use 'lib_only';",
    'shadow.scss' => "@use 'shadow-me';",
    '_shadow-me.scss' => 'shadow { from: root; }',
    'order.scss' => "@use 'order-me';",
    'escaped.scss' => "@use 'sp%20ace' as space;",
    '_sp ace.scss' => 'space { escaped: yes; }',
    'sass_and_scss.scss' => "@use 'dual';", # ambiguous, as twice.scss
    '_dual.scss' => 'dual { from: scss; }',
    'dual.sass' => "dual\n  from: sass\n",
    'twice.scss' => "@use 'two';",
    '_two.scss' => 'two { x: partial; }',
    'two.scss' => 'two { x: plain; }',
    'missing.scss' => "@use 'nowhere';",
    'bom.scss' => "@use 'with-bom';",
    '_with-bom.scss' => "\uFEFFbom { x: y; }\r\n",
    'directory_index_import.scss' => "@import 'idir';",
    'idir/index.import.scss' => 'idir { for: import; }',
    'idir/_index.scss' => 'idir { for: use; }',
    # One module where the file system ignores case (Windows, macOS: the
    # compiler names both loads by the file's own name), and no file for
    # the second load elsewhere.
    'case.scss' => "@use 'Cased' as a; @use 'cased' as b;",
    '_Cased.scss' => 'cased { once: yes; }'
  }.freeze
  LIBRARIES = {
    'lib1/_lib_only.sass' => "lib\n  syntax: indented\n",
    'lib1/_shadow-me.scss' => 'shadow { from: lib1; }',
    'lib1/_order-me.scss' => 'order { from: lib1; }',
    'lib2/_order-me.scss' => 'order { from: lib2; }'
  }.freeze

  def setup
    @dir = Dir.mktmpdir('sass-rack-loader')
    @root = write_tree(File.join(@dir, 'styles'), TREE)
    write_tree(@dir, LIBRARIES)
    write_file(File.join(@root, 'absolute.scss'), "@use '#{FILE_URL_PREFIX}#{@dir}/lib2/order-me';")
    @options = { load_paths: %w[lib1 lib2].map { |lib| File.join(@dir, lib) }, logger: Sass::Logger.silent }
    @app = Sass::Rack.new(teapot, root: @root, source_map: true, source_map_include_sources: false, **@options)
  end

  def teardown
    FileUtils.rm_rf(@dir)
    super
  end

  def test_every_load_picks_the_file_the_compiler_picks
    entries = (TREE.keys + ['absolute.scss']).grep(/\A[a-z_]+\.scss\z/).reject { |name| name.start_with?('_') }
    assert_operator entries.size, :>=, 14
    entries.each do |entry|
      name = File.basename(entry, '.scss')
      status, _, body = @app.call(rack_env("/#{name}.css"))
      assert_equal 200, status, name
      begin
        result = Sass.compile(File.join(@root, entry), source_map: true, **@options)
      rescue Sass::CompileError => e
        assert_includes body.join, e.message.lines.first.strip, name
        next
      end
      css = body.join.sub(%r{\n\n/\*# sourceMappingURL=.*\z}m, '')
      assert_equal result.css, css, name
      map = JSON.parse(@app.call(rack_env("/#{name}.css.map"))[2].join)
      assert_equal JSON.parse(result.source_map)['sources'].map { |url| file_name(url) },
                   map['sources'].map { |url| file_name(url) }, name
    end
  end

  # A FIFO put where a partial would be is never opened (the compiler,
  # reading it itself, waited on it for ever, and every request for the
  # stylesheet with it): the load finds no file.
  def test_a_fifo_in_a_partials_place_is_not_waited_on
    skip 'no FIFOs here' unless File.respond_to?(:mkfifo)

    fifo = File.join(@root, '_fifo.scss')
    File.mkfifo(fifo)
    write_file(File.join(@root, 'uses_fifo.scss'), "@use 'fifo';")
    request = Thread.new { @app.call(rack_env('/uses_fifo.css')) }
    response = request.join(budget(30))&.value
    refute_nil response, 'the request waited on the FIFO'
    assert_includes response[2].join, "Can't find stylesheet to import."
  ensure
    # A reader still waiting on the FIFO is let go when a writer closes it.
    File.open(fifo, File::WRONLY | File::NONBLOCK, &:close) if request&.alive?
  end

  # Where the compiler names a file as its directory lists it, so does the
  # middleware (a wrong case made two modules of one file under Wine); run
  # here on Linux's case-sensitive names, as they would be listed.
  def test_real_case_names_a_file_as_its_directory_lists_it
    write_tree(@dir, { 'Mixed/Dir/_Name.scss' => '', 'Mixed/two/x.scss' => '', 'Mixed/two/X.scss' => '' })
    loader = Sass::Rack.const_get(:Loader)
    assert_equal "#{@dir}/Mixed/Dir/_Name.scss", loader.real_case("#{@dir}/mixed/dIR/_NAME.SCSS")
    assert_equal "#{@dir}/Mixed/two/x.scss", loader.real_case("#{@dir}/MIXED/two/x.scss"), 'two candidates'
    assert_equal "#{@dir}/Mixed/Dir/none.scss", loader.real_case("#{@dir}/mixed/dir/none.scss"), 'no candidate'
    unlisted = "#{@dir}/mixed/dir/_name.scss/below"
    assert_equal unlisted, loader.real_case(unlisted), 'a directory that cannot be listed'
    cached = loader.new(1024)
    assert_equal "#{@dir}/Mixed/Dir/_Name.scss", cached.send(:real_case, "#{@dir}/mixed/dir/_name.scss")
    assert_equal "#{@dir}/Mixed/Dir/_Name.scss", cached.send(:real_case, "#{@dir}/MIXED/DIR/_name.scss")
  end

  def file_name(url) = File.basename(Sass::Embedded.const_get(:Url).unescape(url))

  # What the compiler says, the middleware says: two candidates, or none.
  def test_ambiguous_and_missing_loads_fail_as_the_compiler_fails
    { 'twice' => "It's not clear which file to import.", 'missing' => "Can't find stylesheet to import." }
      .each do |name, message|
      error = assert_raises(Sass::CompileError) { Sass.compile(File.join(@root, "#{name}.scss"), **@options) }
      assert_includes error.message, message
      assert_includes @app.call(rack_env("/#{name}.css"))[2].join, message, name
    end
  end
end
