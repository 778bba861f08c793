# frozen_string_literal: true

require 'rack_helper'
require 'json'

# A real browser (headless Chromium, Debian's chromium) on a page that links a
# stylesheet Sass::Rack serves through WEBrick: the page reports the computed
# style of an element and of body::before (where the error page shows a
# compile error), waits for the test to say "reload", and reloads, as a
# developer does after an edit.
class RackBrowserTest < Minitest::Test
  include RackServers
  include RackStylesheets

  BROWSER = %w[chromium chromium-browser google-chrome].find do |name|
    system('sh', '-c', "command -v #{name}", out: File::NULL)
  end

  PAGE = <<~HTML
    <!doctype html>
    <html><head><link rel="stylesheet" href="/css/app.css"></head>
    <body><p id="probe">probe</p>
    <script>
      window.addEventListener('load', async () => {
        const report = {
          color: getComputedStyle(document.getElementById('probe')).color,
          before: getComputedStyle(document.body, '::before').content
        };
        await fetch('/report', { method: 'POST', body: JSON.stringify(report) });
        await fetch('/next'); // answered when the test wants a reload
        location.reload();
      });
    </script></body></html>
  HTML

  def setup
    @dir = Dir.mktmpdir('sass-rack')
    @root = File.join(@dir, 'styles')
    @reports = Queue.new
    @reloads = Queue.new
  end

  def teardown
    @reloads << :stop
    if @browser
      Process.kill(:KILL, -@browser)
      Process.wait(@browser)
    end
    FileUtils.rm_rf(@dir) if @dir
    super
  end

  # The page, its reports and its reload signal, behind the middleware.
  def page_app
    lambda do |env|
      case env['PATH_INFO']
      when '/' then [200, { 'content-type' => 'text/html; charset=utf-8' }, [PAGE]]
      when '/report'
        @reports << JSON.parse(env['rack.input'].read)
        [204, {}, []]
      when '/next' then [200, { 'content-type' => 'text/plain' }, [@reloads.pop.to_s]]
      else [404, { 'content-type' => 'text/plain' }, ['not found']]
      end
    end
  end

  def next_report
    wait_until(timeout: 60, message: 'the page never reported') { !@reports.empty? }
    @reports.pop
  end

  def reload = @reloads << :reload

  # The text of a computed +content+ (a CSS string, as CSSOM serializes it).
  def css_string(content)
    assert_match(/\A".*"\z/m, content)
    content[1..-2].gsub(/\\(\h{1,6}) ?|\\(.)/m) do
      Regexp.last_match(1)&.hex&.chr(Encoding::UTF_8) || Regexp.last_match(2)
    end
  end

  def browse(url)
    @browser = Process.spawn(BROWSER, '--headless=new', '--no-sandbox', '--disable-gpu', '--no-first-run',
                             '--disable-extensions', "--user-data-dir=#{File.join(@dir, 'profile')}", url,
                             pgroup: true, in: File::NULL, out: File::NULL, err: File::NULL)
  end

  def test_a_reloaded_page_shows_each_edit_and_each_error
    write_tree(@root, 'app.scss' => "@use 'colors';\n#probe { color: colors.$text; }\n",
                      '_colors.scss' => '$text: red;')
    errors = StringIO.new
    app = Sass::Rack.new(page_app, root: @root, prefix: '/css')
    with_threaded_server(->(env) { app.call(env.merge('rack.errors' => errors)) }) do |base|
      browse("#{base}/")
      first = next_report
      assert_equal ['rgb(255, 0, 0)', 'none'], first.values_at('color', 'before')

      write_file(File.join(@root, '_colors.scss'), '$text: blue;')
      reload
      assert_equal 'rgb(0, 0, 255)', next_report['color'], 'an edit to a partial shows after a reload'

      write_file(File.join(@root, '_colors.scss'), '$text: blue')
      write_file(File.join(@root, 'app.scss'), "@use 'colors';\n#probe { color: colors.$text }}\n")
      reload
      broken = next_report
      assert_equal 'rgb(0, 0, 0)', broken['color']
      shown = css_string(broken['before'])
      assert_match "Error: unmatched \"}\". (Sass::CompileError)\n", shown, 'the error shows on the page'
      assert_match "app.scss 2:31  root stylesheet\n", shown

      write_file(File.join(@root, 'app.scss'), "@use 'colors';\n#probe { color: colors.$text; }\n")
      write_file(File.join(@root, '_colors.scss'), '$text: green;')
      reload
      assert_equal ['rgb(0, 128, 0)', 'none'], next_report.values_at('color', 'before'), 'fixed, the style is back'
      assert_equal 1, errors.string.scan('Sass::Rack: ').length
    end
  end
end

warn 'Chromium is not installed: the Sass::Rack browser test does not run' if RackBrowserTest::BROWSER.nil?
RackBrowserTest.undef_method(:test_a_reloaded_page_shows_each_edit_and_each_error) if RackBrowserTest::BROWSER.nil?
