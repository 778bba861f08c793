# frozen_string_literal: true

require_relative 'test_helper'

# Paths to file: URLs and back, POSIX and Windows, tested on any platform.
class UrlTest < Minitest::Test
  Url = Sass::Embedded.const_get(:Url)

  POSIX = {
    '/tmp/style.scss' => 'file:///tmp/style.scss',
    '/tmp/with space/a.scss' => 'file:///tmp/with%20space/a.scss',
    '/tmp/100%/#hash?query.scss' => 'file:///tmp/100%25/%23hash%3Fquery.scss',
    '/tmp/ünïcödé/日本.scss' => 'file:///tmp/%C3%BCn%C3%AFc%C3%B6d%C3%A9/%E6%97%A5%E6%9C%AC.scss',
    "/tmp/quote'paren(1)[x]{y}.scss" => "file:///tmp/quote'paren(1)%5Bx%5D%7By%7D.scss",
    '/' => 'file:///'
  }.freeze

  WINDOWS = {
    'C:\\Users\\me\\style.scss' => 'file:///C:/Users/me/style.scss',
    'd:\\with space\\ü.scss' => 'file:///d:/with%20space/%C3%BC.scss',
    'C:\\' => 'file:///C:/',
    '\\\\server\\share\\dir\\a b.scss' => 'file://server/share/dir/a%20b.scss'
  }.freeze

  def test_posix_paths_round_trip
    POSIX.each do |path, url|
      assert_equal url, Url.path_to_file_url(path, windows: false), path
      assert_equal path, Url.file_url_to_path(url, windows: false), url
    end
  end

  def test_windows_paths_round_trip
    WINDOWS.each do |path, url|
      assert_equal url, Url.path_to_file_url(path, windows: true), path
      assert_equal path, Url.file_url_to_path(url, windows: true), url
    end
    assert_equal 'C:\\a', Url.file_url_to_path('file:///C:/a', windows: true)
    assert_equal 'C:\\a', Url.file_url_to_path('file://localhost/C:/a', windows: true)
  end

  def test_decoding_is_lenient_about_case_and_drops_query_and_fragment
    assert_equal '/a b/c', Url.file_url_to_path('FILE:///a%20b/c?x=1#y', windows: false)
    assert_equal '/a b', Url.file_url_to_path('file:/a%20b', windows: false)
    assert_equal '/ä', Url.file_url_to_path('file:///%c3%a4', windows: false)
  end

  def test_errors
    assert_raises(ArgumentError) { Url.path_to_file_url('relative/path', windows: false) }
    assert_raises(ArgumentError) { Url.file_url_to_path('http://example.com/x', windows: false) }
    assert_raises(ArgumentError) { Url.file_url_to_path('file://host/share', windows: false) }
  end

  def test_urls_sass_accepts
    in_tmpdir do |dir|
      path = File.join(dir, 'with space #1', '_ü.scss')
      Dir.mkdir(File.dirname(path))
      File.write(path, '.ok { x: y; }')
      # Sass hands importers URLs, so the non-ASCII name arrives escaped.
      seen = []
      importer = { find_file_url: lambda { |u, _|
        seen << u
        Url.path_to_file_url(File.join(File.dirname(path), Url.unescape(u)))
      } }
      result = Sass.compile_string("@use 'ü';", importers: [importer])
      assert_equal ".ok {\n  x: y;\n}", result.css
      assert_equal([path], result.loaded_urls.map { |loaded| Url.file_url_to_path(loaded).tr('\\', '/') })
      assert_equal ['%C3%BC'], seen
    end
  end
end
