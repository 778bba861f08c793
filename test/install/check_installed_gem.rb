# frozen_string_literal: true

# Run by `rake test:gem` (and test/install/platform_gem.rb) with the Ruby
# and GEM_HOME of a fresh install, from a directory outside the checkout:
# proves that the installed gem, not the checkout, loads and compiles (with a
# function and an importer), and that its `sass` executable runs, both as a
# command and loaded the way dartsass-rails loads it, and that
# `require 'sass/rack'` gives the installed middleware. Exits non-zero with a
# message on the first failure.

require 'open3'
require 'rbconfig'

def check(condition, message)
  return if condition

  warn "installed gem check failed: #{message}"
  exit 1
end

gem 'sass-embedded'
require 'sass-embedded'

spec = Gem.loaded_specs.fetch('sass-embedded')
loaded = $LOADED_FEATURES.grep(/sass_embedded\.(so|bundle)\z/)
check(loaded.size == 1, "expected one native extension to be loaded, got #{loaded.inspect}")
installed_dirs = [spec.full_gem_path, spec.extension_dir]
check(installed_dirs.any? { |dir| loaded.first.start_with?(dir) },
      "the native extension #{loaded.first} is not the installed gem's (#{installed_dirs.join(', ')})")
check($LOADED_FEATURES.grep(%r{/sass/compiler\.rb\z}).all? { |path| path.start_with?(spec.full_gem_path) },
      'the Ruby files are not the installed gem\'s')

# A platform gem (SASS_EMBEDDED_EXPECT_PLATFORM names it): the prebuilt
# extension for this Ruby's minor and the prebuilt compiler, nothing built.
expected_platform = ENV.fetch('SASS_EMBEDDED_EXPECT_PLATFORM', nil)
if expected_platform
  check(spec.platform == Gem::Platform.new(expected_platform),
        "installed #{spec.full_name}, not the #{expected_platform} gem")
  check(spec.extensions.empty? && !File.exist?(spec.extension_dir),
        "the platform gem has extensions to build: #{spec.extensions.inspect} #{spec.extension_dir}")
  prebuilt = File.join(spec.full_gem_path, 'lib', 'sass', RUBY_VERSION[/\A\d+\.\d+/],
                       "sass_embedded.#{RbConfig::CONFIG['DLEXT']}")
  check(loaded.first == prebuilt, "loaded #{loaded.first}, not the prebuilt #{prebuilt}")
  package = File.join(spec.full_gem_path, 'lib', 'sass', 'embedded', 'dart-sass', '.package')
  check(File.file?(package) && File.read(package).start_with?('sass-embedded-') &&
        File.read(package).lines.first.strip.end_with?("@#{Sass::Embedded::VERSION}"),
        "the platform gem carries no verified compiler (#{package})")
end

result = Sass.compile_string(
  "@use 'theme:colors';\n.button { color: colors.$primary; padding: double(4px); }",
  functions: {
    'double($n)' => lambda { |args|
      n = args[0].assert_number('n')
      Sass::Value::Number.new(n.value * 2, { numerator_units: n.numerator_units })
    }
  },
  importers: [{
    canonicalize: ->(url, _context) { url if url.start_with?('theme:') },
    load: ->(_url) { { contents: '$primary: #336699;', syntax: :scss } }
  }]
)
expected = ".button {\n  color: #336699;\n  padding: 8px;\n}"
check(result.css == expected, "unexpected CSS: #{result.css.inspect}")
check(Sass.info.include?("dart-sass\t#{Sass::Embedded::VERSION}"), "unexpected info: #{Sass.info.inspect}")

sass = Gem.bin_path('sass-embedded', 'sass')
out, err, status = Open3.capture3(RbConfig.ruby, sass, '--version')
check(status.success? && out == "#{Sass::Embedded::VERSION}\n", "`sass --version` said #{out.inspect} #{err}")
loader = "ARGV.replace(['--version']); load Gem.bin_path('sass-embedded', 'sass')"
out, err, status = Open3.capture3(RbConfig.ruby, '-e', loader)
check(status.success? && out == "#{Sass::Embedded::VERSION}\n",
      "loading the sass executable said #{out.inspect} #{err}")

require 'sass/rack'
require 'tmpdir'
check($LOADED_FEATURES.grep(%r{/sass/rack\.rb\z}).all? { |path| path.start_with?(spec.full_gem_path) },
      'sass/rack is not the installed gem\'s')
Dir.mktmpdir do |dir|
  File.write(File.join(dir, 'app.scss'), 'a { b: c }')
  status, headers, body = Sass::Rack.new(->(_) { [404, {}, []] }, root: dir)
                                    .call('REQUEST_METHOD' => 'GET', 'PATH_INFO' => '/app.css')
  check(status == 200 && headers['content-type'].start_with?('text/css') && body.join == "a {\n  b: c;\n}",
        "Sass::Rack answered #{status} #{body.inspect}")
end

puts "installed gem #{spec.full_name} works: #{loaded.first}"
