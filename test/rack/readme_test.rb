# frozen_string_literal: true

require 'rack_helper'

# The README's Sinatra example, as written there (only its root made
# absolute), served by WEBrick.
class RackReadmeTest < Minitest::Test
  include RackServers
  include RackStylesheets

  README = File.read(File.expand_path('../../README.md', __dir__))
  EXAMPLE = README[/```ruby\n(# config\.ru\n.*?)```/m, 1]

  def test_the_sinatra_example
    refute_nil EXAMPLE, 'the README has a config.ru example'

    in_tmpdir do |dir|
      write_tree(dir, 'styles/app.scss' => '@use "colors"; h1 { color: colors.$text; }',
                      'styles/_colors.scss' => '$text: red;')
      source = EXAMPLE.sub("root: 'styles'", "root: #{File.join(dir, 'styles').inspect}")
      refute_equal EXAMPLE, source
      app = ::Rack::Builder.new_from_string(source)
      with_threaded_server(app) do |base|
        assert_match '<link rel="stylesheet" href="/css/app.css">', http(base, '/').body
        css = http(base, '/css/app.css').body
        assert_equal "h1 {\n  color: red;\n}\n\n/*# sourceMappingURL=app.css.map */\n", css
        assert_includes JSON.parse(http(base, '/css/app.css.map').body)['sources'], 'app.scss'
        assert_equal '404', http(base, '/css/_colors.css').code
      end
    end
  end
end

begin
  require 'sinatra/base'
rescue LoadError
  warn 'Sinatra is not installed (bin/setup installs ruby-sinatra; the roots have none): ' \
       "the README's example does not run"
  RackReadmeTest.undef_method(:test_the_sinatra_example)
end
