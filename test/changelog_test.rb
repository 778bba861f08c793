# frozen_string_literal: true

require_relative 'test_helper'
require_relative '../tasks/release'

# `rake release:build` releases a version only with its CHANGELOG.md entry.
class ChangelogTest < Minitest::Test
  CHANGELOG = SassEmbeddedBuild::Release::Changelog
  ROOT = File.expand_path('..', __dir__)

  def test_this_version_has_its_entry
    entry = CHANGELOG.entry!(ROOT, Sass::Embedded::VERSION)

    assert_match(/Dart Sass #{Regexp.escape(Sass::Embedded::VERSION)}/, entry)
    refute_match(/^## /, entry)
  end

  def test_an_entry_runs_to_the_next_version
    text = "# Changelog\n\n## 1.2.0 (2026-12-07)\n\n- two\n\n### Fixed\n\n- three\n\n## 1.1.0\n\n- one\n"

    assert_equal "\n- two\n\n### Fixed\n\n- three\n\n", CHANGELOG.entry(text, '1.2.0')
    assert_equal "\n- one\n", CHANGELOG.entry(text, '1.1.0')
  end

  def test_a_version_without_an_entry_is_refused
    text = "# Changelog\n\n## 1.2.0\n\n## 1.1.0\n\n- one\n\n## 1.10.0\n\n- ten\n"

    assert_nil CHANGELOG.entry(text, '1.2.0'), 'a heading with nothing under it'
    assert_nil CHANGELOG.entry(text, '1.3.0'), 'no heading'
    assert_nil CHANGELOG.entry(text, '1.1'), 'a prefix of another version'
    assert_equal "\n- ten\n", CHANGELOG.entry(text, '1.10.0')
    Dir.mktmpdir('changelog') do |checkout|
      error = assert_raises(RuntimeError) { CHANGELOG.entry!(checkout, '1.3.0') }
      assert_match(/CHANGELOG.md has no entry for 1.3.0: add a "## 1.3.0" section/, error.message)
      File.write(File.join(checkout, 'CHANGELOG.md'), text)
      assert_raises(RuntimeError) { CHANGELOG.entry!(checkout, '1.2.0') }
    end
  end
end
