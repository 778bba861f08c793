# frozen_string_literal: true

require_relative 'lib/sass/embedded/version'

Gem::Specification.new do |spec|
  spec.name          = 'sass-embedded'
  spec.version       = Sass::Embedded::VERSION
  spec.summary       = 'Use dart-sass with Ruby!'
  spec.description   = 'A Ruby library that compiles Sass to CSS with Dart Sass, through an Embedded Sass ' \
                       'host written in Rust that multiplexes every compilation over one compiler process.'
  spec.authors       = ['sass-embedded developers']
  spec.license       = 'MIT'
  spec.homepage      = 'https://github.com/sass-embedded/sass-embedded'
  spec.metadata      = { 'changelog_uri' => "#{spec.homepage}/blob/main/CHANGELOG.md",
                         'rubygems_mfa_required' => 'true' }

  # Every Ruby from 3.1 up, as source gems do (README, "Supported platforms");
  # platform gems claim exactly the minors they carry.
  spec.required_ruby_version = '>= 3.1'

  # The source gem: installing it builds the extension with cargo and fetches
  # this platform's compiler (verified against compiler_integrity.json), so it
  # carries neither. Platform gems (`rake native:gem`, tasks/native_build.rb)
  # start from this specification and carry both instead.
  spec.files = Dir[
    'lib/**/*.rb',
    'ext/sass_embedded/extconf.rb',
    'ext/sass_embedded/compiler_package.rb',
    'ext/sass_embedded/compiler_integrity.json',
    'ext/sass_embedded/Cargo.toml',
    'ext/sass_embedded/src/**/*.rs',
    'ext/sass_embedded/core/Cargo.toml',
    'ext/sass_embedded/core/proto/*',
    'ext/sass_embedded/core/src/**/*.rs',
    'exe/*',
    'Cargo.toml',
    'Cargo.lock',
    'LICENSE',
    'README.md',
    'CHANGELOG.md',
    'docs/*.md'
  ].select { |file| File.file?(file) }
  spec.bindir        = 'exe'
  spec.executables   = Dir['exe/*'].map { |file| File.basename(file) }
  spec.extensions    = ['ext/sass_embedded/extconf.rb']
  spec.require_paths = ['lib']
end
