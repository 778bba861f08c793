# frozen_string_literal: true

require_relative 'test_helper'
require 'json'
require 'open3'

# The Ruby minors the platform gems carry are one list
# (tasks/minors.rb): adding a minor is one line there. Shown by
# loading the build with one more line (a Ruby 4.0) and reading what every
# gem's task would build, install and test.
class MinorsTest < Minitest::Test
  ROOT = File.expand_path('..', __dir__)

  # What the build derives from the list, read in a process of its own
  # with +extra+ (a line's fields) appended to the list first.
  def derived(extra = nil)
    script = <<~RUBY
      require './tasks/minors'
      extra = #{extra.inspect}
      if extra
        minors = SassEmbeddedBuild::Rubies::MINORS + [SassEmbeddedBuild::Rubies::Minor.new(**extra)]
        SassEmbeddedBuild::Rubies.send(:remove_const, :MINORS)
        SassEmbeddedBuild::Rubies.const_set(:MINORS, minors.freeze)
      end
      require './tasks/native_build'
      require './tasks/roots'
      require './tasks/release'
      r = SassEmbeddedBuild::Rubies
      print JSON.generate(
        minors: r.minor_names, rubies: r::RUBIES.map(&:minor), linux: SassEmbeddedBuild::Release::LINUX_MINORS,
        tarballs: r::Mirror::RUBY_TARBALLS.keys, darwin: r::Darwin::MINORS, darwin_root: r::DARWIN.packages,
        arm64_root: r::ARM64.packages, arm64: r::Ports::ARM64.script, riscv64_root: r::Ports::RISCV64.root.packages,
        riscv64: r::Ports::RISCV64.script, musl: r::Musl.script(r::Musl::X86_64),
        musl_arm64: r::Musl.script(r::Musl::AARCH64), windows_root: r::WINDOWS_BUILD.packages,
        windows_build: r::Windows.extension_script, windows_suite: r::Windows::UnderWine.suite_lines('x.gem').join(';'),
        installs: SassEmbeddedBuild::Release::Install.other_roots.map(&:last), ports: r::Ports::ALL.size,
        musls: r::Musl::TARGETS.size
      )
    RUBY
    output, status = Open3.capture2(RbConfig.ruby, '-rjson', '-e', script, chdir: ROOT)
    assert_predicate status, :success?, output
    JSON.parse(output, symbolize_names: true)
  end

  def test_every_platform_gem_carries_every_minor_of_the_list
    today = derived
    minors = today[:minors]

    assert_operator minors.size, :>=, 2
    assert_equal minors, today[:linux]
    assert_equal minors, today[:darwin]
    assert_equal minors, today[:tarballs]
    assert_equal ['3.1', *minors], today[:rubies]
  end

  # Debian has no ruby3.4 for riscv64 (its line says so: unpackaged): the
  # RISC-V root builds that Ruby from the line's tarball, and the gem
  # carries it like any other.
  def test_a_minor_debian_lacks_for_a_port_is_built_in_its_root
    today = derived
    refute_includes today[:riscv64_root], 'ruby3.4'
    %w[ruby3.3 ruby3.3-dev libssl-dev libyaml-dev].each { |package| assert_includes today[:riscv64_root], package }
    refute_includes today[:arm64_root], 'libssl-dev'
    assert_includes today[:riscv64], 'sh tasks/roots/source_ruby.sh /opt/sass-embedded-ruby3.4 ' \
                                     'tmp/ruby-tarballs/ruby3.4_3.4.5.orig.tar.xz'
    assert_includes today[:riscv64], 'RUBY=/opt/sass-embedded-ruby3.4/bin/ruby'
    assert_includes today[:riscv64], '== the riscv64-linux-gnu gem under Ruby 3.4'
    assert_includes today[:riscv64], 'SASS_EMBEDDED_GLIBC=2.27'
  end

  def test_adding_a_minor_is_one_line
    line = { minor: '4.0', suite: 'sid', extra_suites: %w[experimental], packages: [],
             tarball: 'ruby4.0/ruby4.0_4.0.0.orig.tar.xz', sha256: '0' * 64 }
    today = derived
    added = derived(line)

    assert_equal today[:minors] + ['4.0'], added[:minors]
    %i[linux darwin tarballs rubies].each { |key| assert_equal today[key] + ['4.0'], added[key], key }
    assert_includes added[:darwin_root], 'ruby4.0'
    %w[ruby4.0 ruby4.0-dev].each { |package| assert_includes added[:arm64_root], package }
    assert_includes added[:riscv64_root], 'ruby4.0', 'a minor Debian packages for riscv64 comes from Debian there'
    assert_includes added[:windows_root], 'ruby4.0'
    # Each task builds, installs and tests the gem under the new Ruby too.
    assert_includes added[:arm64], 'RUBY=/usr/bin/ruby4.0'
    assert_includes added[:arm64], '== the aarch64-linux-gnu gem under Ruby 4.0'
    %i[musl musl_arm64].each do |key|
      assert_includes added[key], '/opt/sass-embedded-musl/ruby-4.0/bin/ruby', key
      assert_match(/== the \S+-linux-musl gem under Ruby 4\.0/, added[key], key)
    end
    assert_includes added[:windows_build], '/usr/bin/ruby4.0'
    assert_includes added[:windows_build], 'lib/sass/4.0/sass_embedded.so'
    assert_includes added[:windows_suite], 'tmp/windows/ruby-4.0/bin/ruby.exe test/install/platform_gem.rb'
    assert_empty today[:installs].grep(/Ruby 4\.0/)
    assert_equal added[:ports] + added[:musls], added[:installs].grep(/Ruby 4\.0/).size,
                 'release:install: each port\'s gem and each musl gem under 4.0'
  end
end
