# frozen_string_literal: true

require_relative 'test_helper'
require_relative '../tasks/platforms/darwin/gem'

# The checks rake native:darwin runs on every macOS bundle and gem, proved
# to refuse wrong binaries: on small bundles linked by the same toolchain
# and flags as the real one (test/fixtures/mach_o, made by
# tasks/platforms/darwin/fixtures.sh), and on copies of them with one thing
# broken.
class MachOTest < Minitest::Test
  MACH_O = SassEmbeddedBuild::MachO
  CHECK = SassEmbeddedBuild::DarwinGem
  FIXTURES = File.expand_path('fixtures/mach_o', __dir__)
  ROOT = File.expand_path('..', __dir__)

  def fixture(name) = File.binread(File.join(FIXTURES, name))

  def problems(bytes, cpu: 'arm64', deployment_target: '11.0')
    SassEmbeddedBuild::DarwinBundle.problems(MACH_O.new(bytes), cpu:, deployment_target:)
  end

  # +bytes+ with the 4 little-endian bytes at +offset+ replaced by +value+.
  def patch32(bytes, offset, value)
    bytes.dup.tap { |copy| copy[offset, 4] = [value].pack('L<') }
  end

  # The offset of the first load command of +type+ in +bytes+.
  def command_offset(bytes, type)
    count = bytes.unpack1('L<', offset: 16)
    offset = 32
    count.times do
      cmd, size = bytes.unpack('L<L<', offset:)
      return offset if cmd == type

      offset += size
    end
    flunk "no load command #{type}"
  end

  def test_the_fixtures_read_as_the_linker_made_them
    arm64 = MACH_O.new(fixture('arm64.bundle'))
    assert_equal ['arm64', :dylib, '11.0'], [arm64.cpu, arm64.file_type, arm64.minimum_macos]
    assert_equal ['/usr/lib/libSystem.B.dylib'], arm64.libraries
    assert_equal ['_Init_sass_embedded'], arm64.exports
    assert_includes arm64.undefined.map(&:to_a), ['_rb_define_module', :dynamic_lookup]
    assert_includes arm64.undefined.map(&:to_a), ['_getpid', '/usr/lib/libSystem.B.dylib']
    signature = arm64.signature
    assert signature.adhoc && signature.linker_signed && signature.valid?, signature.inspect
    assert_equal 'SHA256', signature.algorithm
    assert_operator signature.pages, :>, 1

    x86_64 = MACH_O.new(fixture('x86_64.bundle'))
    assert_equal ['x86_64', '10.12', nil], [x86_64.cpu, x86_64.minimum_macos, x86_64.signature]
  end

  def test_good_bundles_pass
    assert_empty problems(fixture('arm64.bundle'))
    assert_empty problems(fixture('x86_64.bundle'), cpu: 'x86_64', deployment_target: '10.12')
  end

  def test_the_wrong_cpu_or_macos_floor_is_refused
    assert_includes problems(fixture('arm64.bundle'), cpu: 'x86_64', deployment_target: '11.0'),
                    'is arm64, not x86_64'
    assert_includes problems(fixture('arm64.bundle'), deployment_target: '12.0'),
                    'asks for macOS "11.0", not 12.0'

    bytes = fixture('arm64.bundle')
    later = patch32(bytes, command_offset(bytes, MACH_O::LC_BUILD_VERSION) + 12, 14 << 16)
    found = problems(later)
    assert_includes found, 'asks for macOS "14.0", not 11.0'
    # The header is signed too: an edited floor also breaks page 0.
    assert(found.any? { |problem| problem.match?(/code pages that do not match.*page 0\)/) }, found.inspect)
  end

  def test_a_changed_page_breaks_the_signature
    bytes = fixture('arm64.bundle')
    page = 1 << 12
    changed = bytes.dup
    changed.setbyte((3 * page) + 5, changed.getbyte((3 * page) + 5) ^ 0xff)
    signature = MACH_O.new(changed).signature
    assert_equal [3], signature.bad_pages
    refute_predicate signature, :valid?
    assert_includes problems(changed), "has 1 of #{signature.pages} code pages that do not match their signed " \
                                       'SHA256 (first: page 3)'
  end

  def test_an_arm64_bundle_without_a_signature_is_refused
    bytes = fixture('arm64.bundle')
    unsigned = patch32(bytes, command_offset(bytes, MACH_O::LC_CODE_SIGNATURE), 0x7fff)
    assert_nil MACH_O.new(unsigned).signature
    assert_includes problems(unsigned), 'has no code signature (arm64 macOS refuses to load it)'
  end

  def test_a_bundle_without_its_entry_point_is_refused
    renamed = fixture('arm64.bundle').gsub('_Init_sass_embedded', '_Init_sass_embeddeX')
    assert_equal ['_Init_sass_embeddeX'], MACH_O.new(renamed).exports
    assert_includes problems(renamed), 'does not export _Init_sass_embedded'
  end

  def test_stray_symbols_and_libraries_are_refused
    found = problems(fixture('stray-arm64.bundle'))
    assert_includes found, 'links /usr/lib/libobjc.A.dylib (only /usr/lib/libSystem.B.dylib and ' \
                           '/usr/lib/libiconv.2.dylib may be)'
    assert_includes found, "leaves 1 symbols that are not Ruby's to run-time lookup (_sass_missing_function)"
    assert_includes found, 'binds _objc_autoreleasePoolPush to other libraries'
  end

  def test_what_is_not_a_thin_mach_o_file_is_malformed
    error = assert_raises(MACH_O::Malformed) { MACH_O.new("\x7FELF#{"\0" * 60}") }
    assert_match(/not a thin 64-bit Mach-O file/, error.message)
    assert_raises(MACH_O::Malformed) { MACH_O.new(fixture('arm64.bundle')[0, 40]) }
  end

  # A gem stage: the checkout's loader and the bundles +files+ under lib/sass.
  def stage(tmp, files)
    FileUtils.mkdir_p(File.join(tmp, 'lib', 'sass', 'embedded'))
    FileUtils.cp(File.join(ROOT, 'lib', 'sass', 'embedded', 'prebuilt.rb'), File.join(tmp, 'lib', 'sass', 'embedded'))
    files.each do |file|
      FileUtils.mkdir_p(File.join(tmp, File.dirname(file)))
      File.binwrite(File.join(tmp, file), fixture('arm64.bundle'))
    end
    rbconfig = File.join(tmp, 'rbconfig.rb')
    File.write(rbconfig, "module RbConfig\n  CONFIG = {}\n  CONFIG[\"DLEXT\"] = \"bundle\"\nend\n")
    { '3.3' => rbconfig, '3.4' => rbconfig }
  end

  def darwin_spec(platform, requirement)
    Gem::Specification.new do |spec|
      spec.name = 'sass-embedded'
      spec.version = '1.0.0'
      spec.platform = platform
      spec.required_ruby_version = requirement
    end
  end

  def test_the_loader_finds_each_bundle_on_a_mac_and_rubygems_picks_the_gem
    in_tmpdir do |tmp|
      rbconfigs = stage(tmp, %w[lib/sass/3.3/sass_embedded.bundle lib/sass/3.4/sass_embedded.bundle])
      spec = darwin_spec('arm64-darwin', ['>= 3.3', '< 3.5.dev'])
      assert_empty CHECK.loader_problems(spec, tmp, %w[3.3 3.4], rbconfigs)
      assert_empty CHECK.ruby_problems(spec, %w[3.3 3.4], rbconfigs)

      # A platform with an OS version matches that macOS only.
      assert_includes CHECK.loader_problems(darwin_spec('arm64-darwin-24', ['>= 3.3', '< 3.5.dev']), tmp, %w[3.3],
                                            rbconfigs),
                      'is not picked by RubyGems on arm64-darwin-23'
      assert_includes CHECK.loader_problems(darwin_spec('universal-darwin', ['>= 3.3', '< 3.5.dev']), tmp, %w[3.3],
                                            rbconfigs),
                      'would be picked on arm64-darwin-23'
      assert_includes CHECK.ruby_problems(darwin_spec('arm64-darwin', ['>= 3.3', '< 3.4.dev']), %w[3.3 3.4], rbconfigs),
                      'claims Ruby >= 3.3, < 3.4.dev, but carries 3.3, 3.4 (>= 3.3, < 3.5.dev)'
    end
  end

  def test_a_bundle_where_the_loader_does_not_look_is_refused
    in_tmpdir do |tmp|
      rbconfigs = stage(tmp, %w[lib/sass/3.3/sass_embedded.so])
      spec = darwin_spec('arm64-darwin', ['>= 3.3', '< 3.4.dev'])
      assert_includes CHECK.loader_problems(spec, tmp, %w[3.3], rbconfigs),
                      'the loader looks for lib/sass/3.3/sass_embedded.bundle on Ruby 3.3.0'
    end
  end
end
