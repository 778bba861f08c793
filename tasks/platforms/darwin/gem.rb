# frozen_string_literal: true

require 'rubygems/package'
require 'tmpdir'
require_relative '../../formats/mach_o'
require_relative '../../native_build'

module SassEmbeddedBuild
  # What every macOS bundle rake native:darwin builds must be, read from the
  # file (MachO) since nothing here can load it.
  module DarwinBundle
    # The libraries a bundle may link: macOS's C library, and libiconv
    # (the libc crate links it; macOS has it in /usr/lib).
    LIBRARIES = %w[/usr/lib/libSystem.B.dylib /usr/lib/libiconv.2.dylib].freeze
    # Ruby's own symbols, the only ones left for the process to provide at
    # load (-undefined dynamic_lookup: the bundle links no libruby, so one
    # build serves every Ruby of its minor, however that Ruby was linked).
    RUBY_SYMBOL = /\A_(rb_|ruby_)/
    ENTRY = '_Init_sass_embedded'

    module_function

    # What is wrong with the bundle +mach_o+ for +cpu+ at +deployment_target+
    # (an empty list if nothing).
    # @return [Array<String>]
    def problems(mach_o, cpu:, deployment_target:)
      problems = []
      problems << "is #{mach_o.cpu}, not #{cpu}" unless mach_o.cpu == cpu
      unless %i[dylib bundle].include?(mach_o.file_type)
        problems << "is a Mach-O #{mach_o.file_type}, not a dylib or bundle"
      end
      unless mach_o.minimum_macos == deployment_target
        problems << "asks for macOS #{mach_o.minimum_macos.inspect}, not #{deployment_target}"
      end
      problems.concat(signature_problems(mach_o.signature, required: cpu == 'arm64'))
      problems << "does not export #{ENTRY}" unless mach_o.exports.include?(ENTRY)
      others = mach_o.libraries - LIBRARIES
      problems << "links #{others.join(', ')} (only #{LIBRARIES.join(' and ')} may be)" unless others.empty?
      problems.concat(binding_problems(mach_o.undefined))
    end

    # arm64 macOS kills a process that maps unsigned code: an arm64 bundle
    # carries the linker's ad-hoc signature, and every page must hash to it.
    def signature_problems(signature, required:)
      return required ? ['has no code signature (arm64 macOS refuses to load it)'] : [] unless signature
      return ['has a signature that is not ad hoc'] unless signature.adhoc

      problems = []
      unless signature.bad_pages.empty?
        problems << "has #{signature.bad_pages.size} of #{signature.pages} code pages that do not match their " \
                    "signed #{signature.algorithm} (first: page #{signature.bad_pages.first})"
      end
      problems << 'has a signature that does not cover the whole file up to itself' unless signature.covers_code
      problems
    end

    def binding_problems(undefined)
      stray = undefined.select { |symbol| %i[dynamic_lookup flat].include?(symbol.library) }
                       .map(&:name).grep_v(RUBY_SYMBOL)
      unbound = undefined.reject { |symbol| symbol.library.is_a?(Symbol) || LIBRARIES.include?(symbol.library) }
      problems = []
      unless stray.empty?
        problems << "leaves #{stray.size} symbols that are not Ruby's to run-time lookup (#{stray.first(5).join(', ')})"
      end
      problems << "binds #{unbound.map(&:name).first(5).join(', ')} to other libraries" unless unbound.empty?
      problems
    end
  end

  # The checks every darwin platform gem passes before rake native:darwin
  # leaves it in pkg/: what can be proved of a macOS gem without a Mac.
  module DarwinGem
    class Failure < StandardError; end

    # The Mach-O CPU of each darwin gem.
    CPUS = { 'arm64-darwin' => 'arm64', 'x86_64-darwin' => 'x86_64' }.freeze

    module_function

    # Checks the gem at +path+; +rbconfigs+ maps each minor to the darwin
    # Ruby's rbconfig.rb it was built against. Prints what passed; raises
    # Failure naming everything that did not.
    def check(path, deployment_target:, rbconfigs:)
      spec = Gem::Package.new(path).spec
      cpu = CPUS.fetch(spec.platform.to_s) { raise Failure, "#{path}: #{spec.platform} is not a darwin gem" }
      Dir.mktmpdir('sass-embedded-darwin-gem') do |tmp|
        Gem::Package.new(path).extract_files(tmp)
        problems = gem_problems(spec, tmp, cpu, deployment_target, rbconfigs)
        raise Failure, "#{File.basename(path)}:\n  #{problems.join("\n  ")}" unless problems.empty?
      end
      puts "#{File.basename(path)}: checked (#{cpu}, macOS >= #{deployment_target}, Ruby #{spec.required_ruby_version})"
    end

    def gem_problems(spec, tmp, cpu, deployment_target, rbconfigs)
      bundles = Dir.glob(File.join(tmp, 'lib', 'sass', '*', 'sass_embedded.*')).to_h do |file|
        [file.delete_prefix("#{tmp}/"), file]
      end
      minors = bundles.keys.grep(%r{\Alib/sass/(\d+\.\d+)/sass_embedded\.bundle\z}) { Regexp.last_match(1) }
      problems = bundles.keys.grep_v(/\.bundle\z/).map { |file| "#{file}: not a macOS bundle" }
      problems << 'carries no bundle' if minors.empty?
      problems.concat(ruby_problems(spec, minors, rbconfigs))
      bundles.each do |file, full|
        next unless file.end_with?('.bundle')

        found = DarwinBundle.problems(MachO.read(full), cpu:, deployment_target:)
        problems.concat(found.map { |problem| "#{file} #{problem}" })
      rescue MachO::Malformed => e
        problems << e.message
      end
      problems.concat(compiler_problems(spec, tmp, cpu))
      problems.concat(loader_problems(spec, tmp, minors, rbconfigs))
    end

    # The gem claims exactly the minors it carries, each built for the Ruby
    # it names.
    def ruby_problems(spec, minors, rbconfigs)
      claimed = Gem::Requirement.new(PlatformGem.required_ruby_version(minors))
      problems = []
      unless spec.required_ruby_version == claimed
        problems << "claims Ruby #{spec.required_ruby_version}, but carries #{minors.join(', ')} (#{claimed})"
      end
      missing = minors - rbconfigs.keys
      problems << "carries Ruby #{missing.join(', ')}, which no darwin Ruby was configured for" unless missing.empty?
      problems
    rescue RuntimeError => e
      [e.message]
    end

    # The darwin compiler package of the gem's CPU, with the pinned integrity.
    def compiler_problems(spec, tmp, cpu)
      directory = File.join(tmp, 'lib', 'sass', 'embedded', 'dart-sass')
      package = CompilerPackage.of_gem_platform(spec.platform)
      expected = CompilerIntegrity.expected(package, spec.version.to_s)
      marker = CompilerPackage.marker(directory)
      found = File.file?(marker) ? File.readlines(marker, chomp: true).first(2) : []
      problems = []
      unless found == ["#{package}@#{spec.version}", expected]
        problems << "carries the compiler #{found.first.inspect}, not #{package}@#{spec.version} " \
                    "verified as #{expected}"
      end
      dart = File.join(directory, 'src', 'dart')
      runtime = MachO.read(dart)
      problems << "carries a #{runtime.cpu} Dart runtime, not #{cpu}" unless runtime.cpu == cpu
      problems
    rescue MachO::Malformed, SystemCallError => e
      ["carries no darwin Dart runtime: #{e.message}"]
    end

    # What the gem's own loader (lib/sass/embedded/prebuilt.rb) computes on
    # a Mac of this CPU, for each minor with its darwin Ruby's DLEXT, must be
    # a bundle the gem carries; and RubyGems on such a Mac must pick this gem
    # for those Rubies and not for others.
    def loader_problems(spec, tmp, minors, rbconfigs)
      local = Gem::Platform.new("#{spec.platform.cpu}-darwin-23")
      other = Gem::Platform.new("#{(CPUS.keys.map { |name| name.split('-').first } - [local.cpu]).first}-darwin-23")
      problems = []
      problems << "is not picked by RubyGems on #{local}" unless spec.platform === local # rubocop:disable Style/CaseEquality
      problems << "would be picked on #{other}" if spec.platform === other # rubocop:disable Style/CaseEquality
      minors.each do |minor|
        dlext = darwin_config(rbconfigs.fetch(minor, nil), 'DLEXT')
        version = "#{minor}.0"
        path = loader_path(tmp, version, dlext)
        problems << "the loader looks for #{path.delete_prefix("#{tmp}/")} on Ruby #{version}" unless File.file?(path)
        unless spec.required_ruby_version.satisfied_by?(Gem::Version.new(version))
          problems << "refuses Ruby #{version}, which it carries"
        end
      end
      problems
    end

    # The path the unpacked gem's own loader computes, run in a Ruby of its
    # own so that only the gem's code is loaded.
    def loader_path(tmp, version, dlext)
      script = "load #{File.join(tmp, 'lib', 'sass', 'embedded', 'prebuilt.rb').dump}; " \
               "print Sass::Embedded::Prebuilt.path(ruby_version: #{version.dump}, dlext: #{dlext.to_s.dump})"
      IO.popen([RbConfig.ruby, '--disable-gems', '-e', script], &:read)
    end

    # A value of a darwin Ruby's rbconfig.rb (which checks the running
    # Ruby's version, so it is read, not loaded).
    def darwin_config(rbconfig, key)
      return nil unless rbconfig && File.file?(rbconfig)

      File.read(rbconfig)[/^\s*CONFIG\["#{key}"\] = "([^"]*)"/, 1]
    end
  end
end
