# frozen_string_literal: true

desc 'clippy -D warnings, cargo fmt --check and rubocop'
task :lint do
  raw = File.join(ROOT, 'bench', 'raw', 'Cargo.toml')
  sh 'cargo', 'clippy', '--locked', '--workspace', '--all-targets', '--', '-D', 'warnings'
  sh 'cargo', 'clippy', '--locked', '-p', 'sass-embedded-core', '--no-default-features', '--all-targets', '--',
     '-D', 'warnings'
  # The core as it is built with the other waiting mechanisms.
  OTHER_WAITS.each_value do |feature, _|
    sh 'cargo', 'clippy', '--locked', '-p', 'sass-embedded-core', '--features', feature, '--all-targets', '--',
       '-D', 'warnings'
  end
  sh 'cargo', 'clippy', '--locked', '--manifest-path', raw, '--target-dir', File.join(ROOT, 'target'),
     '--all-targets', '--', '-D', 'warnings'
  sh 'cargo', 'fmt', '--all', '--check'
  sh 'cargo', 'fmt', '--manifest-path', raw, '--check'
  sh 'rubocop'
end
