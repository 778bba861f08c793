# frozen_string_literal: true

# Every platform beyond the machine's own: the suite under other Rubies, the
# platform gems built (natively, emulated or cross) and tested where they
# can run, and the whole matrix in turn (needs root: Debian roots).

require_relative '../tasks/roots'
require_relative '../tasks/platforms'

# Each platform's task, from its row (tasks/platforms/table.rb).
SassEmbeddedBuild::Platforms.table.each do |platform|
  desc platform.desc
  task platform.task => (platform.compiler ? [:compiler] : []) do
    platform.run.call(ROOT, COMPILER_CACHE)
  end
end

desc 'Cross-build the Windows Rubies (each minor the gems carry, x64-mingw-ucrt, mingw-w64 UCRT in a Debian ' \
     'trixie root; once, cached) into tmp/windows/ruby-<minor> (needs root)'
task 'rubies:windows' do
  SassEmbeddedBuild::Rubies::WindowsRuby.call(ROOT)
end

desc "Every platform in turn (#{SassEmbeddedBuild::Platforms.table.map(&:name).join(', ')}; SASS_PLATFORMS=a,b " \
     'for some), going on after a failure, then a line per platform; fails if any failed (needs root)'
task 'test:platforms' => :compiler do
  SassEmbeddedBuild::Platforms.call
end

desc 'Print the line of tasks/minors.rb for a Ruby minor (rake "rubies:minor[4.0]"): Debian\'s packages of it ' \
     'and its newest orig tarball the mirror keeps, with its SHA-256 (docs/platform-gems.md, "Adding a Ruby minor")'
task 'rubies:minor', [:minor] do |_, args|
  abort 'rake "rubies:minor[4.0]": name the minor' unless args[:minor]&.match?(/\A\d+\.\d+\z/)

  puts SassEmbeddedBuild::Rubies::Mirror.minor_line(args[:minor])
end

desc 'Remove the cached Debian roots of every platform task (refuses while one is in use)'
task 'rubies:clean' do
  SassEmbeddedBuild::Rubies::Roots.clean
end
