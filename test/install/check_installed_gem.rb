# frozen_string_literal: true

# Run by `rake test:gem` (and the platform gem's install test) with the Ruby
# and GEM_HOME of a fresh install, from a directory outside the checkout:
# proves that the installed gem, not the checkout, loads and compiles (with a
# function and an importer), and that its `sass` executable runs, both as a
# command and loaded the way dartsass-rails loads it. Exits non-zero with a
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

puts "installed gem #{spec.full_name} works: #{loaded.first}"
