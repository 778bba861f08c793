# frozen_string_literal: true

module SassEmbeddedBuild
  # The platforms beyond the machine's own, one row each.
  module Platforms
    # One platform: the name SASS_PLATFORMS picks it by; the rake task that
    # builds and tests it, its description and what it runs (+run+, called
    # with the checkout and the compiler packages' cache), and whether it
    # needs the compiler fetched first; the Debian roots it runs in (cold
    # until made and cached: a root made with other arguments is made anew);
    # its time limit in seconds (a release gives it that for each Ruby
    # minor); the platform gems it leaves in pkg/; and, where `rake
    # release:install` installs its gems by name in the root the task
    # keeps, how (+install+, called with a minor: that root, the compiler
    # package, the sh that puts the minor's Ruby first on PATH, and a
    # label; the Windows gem is installed under Wine: Release::Install::Wine).
    #
    # `rake test:platforms` runs every row in turn, rakelib/platforms.rake
    # defines each row's task, `rake release:build` makes every gem a row
    # names: a platform is its folder under tasks/platforms/ and a row here.
    Platform = Struct.new(:name, :task, :desc, :run, :compiler, :roots, :limit, :gems, :install,
                          keyword_init: true) do
      def cached? = roots.all? { |root| Rubies::Roots.current?(root) }

      # The whole task's limit: a platform that builds gems builds and tests
      # them under each Ruby minor.
      def task_limit = gems.empty? ? limit : limit * Rubies.minor_names.size
    end

    module_function

    # rubocop:disable Metrics/MethodLength, Metrics/AbcSize
    def table
      r = Rubies
      minors = r.minor_names.join(', ')
      windows = [r::WINDOWS_BUILD, r::WINE]
      [
        Platform.new(name: 'rubies', task: 'test:rubies', compiler: true, limit: 3600, gems: [],
                     roots: r::RUBIES.reject { |ruby| r.on_host?(ruby) }, run: ->(*) { r::Suite.call },
                     desc: 'Build the extension and run the Ruby suite under Ruby ' \
                           "#{r::RUBIES.map(&:minor).join(', ')} (Debian roots; needs root)"),
        Platform.new(name: 'async2', task: 'test:async2', compiler: true, limit: 1800, gems: [], roots: [r::ASYNC2],
                     run: ->(*) { r::Suite.call([r::ASYNC2], tests: r::ASYNC2_TESTS, task: 'test:async2') },
                     desc: 'The fiber tests and Sass::Rack\'s fiber-server tests under the async gem 2 (Debian ' \
                           'sid\'s Ruby 3.3, in a Debian root; needs root)'),
        Platform.new(name: 'targets', task: 'check:targets', limit: 1800, gems: [], roots: [r::TARGETS_ROOT],
                     run: ->(*) { r::Targets.call },
                     desc: 'Type-check and lint (clippy -D warnings) the Ruby-free core for macOS (both CPUs), ' \
                           "FreeBSD, musl Linux and Windows (Debian sid's Rust with -Zbuild-std, in a Debian root; " \
                           'needs root)'),
        *r::Ports::ALL.map do |port|
          Platform.new(name: port.name, task: port.task, limit: 5400, gems: [port.platform], roots: [port.root],
                       run: ->(checkout, cache) { port.call(checkout, cache) },
                       install: lambda { |minor|
                         [port.root, port.compiler, port.use_ruby(minor), "Ruby #{minor} on #{port.root.label}"]
                       },
                       desc: "Build for #{port.label} natively in an emulated Debian root, pack and install its " \
                             "#{port.platform} platform gem there without a toolchain (left in pkg/), and run the " \
                             'Ruby suite under emulation (needs root)')
        end,
        *r::Musl::TARGETS.map do |target|
          where = target.emulated ? "an emulated #{target.ruby.architecture} Debian root" : 'a Debian root'
          Platform.new(name: target.name, task: target.task, limit: target.limit, gems: [target.platform],
                       roots: [target.ruby], run: ->(checkout, cache) { r::Musl.call(target, checkout, cache) },
                       install: ->(minor) { r::Musl.install(target, minor) },
                       desc: 'Build a Ruby for musl and, under it, the extension through extconf.rb for ' \
                             "#{target.platform} in #{where}; pack and install its platform gem offline (left in " \
                             "pkg/), run the Ruby suite#{' under emulation' if target.emulated} (needs root)")
        end,
        Platform.new(name: 'old_glibc', task: 'test:old_glibc', compiler: true, limit: 3600, gems: [],
                     roots: r::OldGlibc.roots, run: ->(checkout, _) { r::OldGlibc.call(checkout) },
                     desc: "The x86_64-linux-gnu gem's Ruby 3.3 extension linked against glibc 2.17 (in the Ruby 3.3 " \
                           'root), packed, installed offline and the whole suite run against it in a Debian bullseye ' \
                           'root (glibc 2.31) with a Ruby 3.3 built there (needs root)'),
        Platform.new(name: 'darwin', task: 'native:darwin', limit: 5400, gems: %w[arm64-darwin x86_64-darwin],
                     roots: [r::DARWIN], run: ->(checkout, cache) { r::Darwin.call(checkout, cache) },
                     desc: "Cross-build the arm64-darwin and x86_64-darwin platform gems (Ruby #{minors}, zig and " \
                           'ld64.lld in a Debian root; needs root), check every binary in them (Mach-O CPU, macOS ' \
                           'floor, signature, symbols, libraries, compiler, loader layout) and leave them in pkg/: ' \
                           'built and linked, not run'),
        Platform.new(name: 'windows', task: 'test:windows_core', limit: 3600, gems: [], roots: windows,
                     run: ->(checkout, cache) { r::WindowsCore.call(checkout, cache) },
                     desc: "Build the Ruby-free core's tests for Windows (x86_64-pc-windows-gnu, mingw-w64 UCRT) and " \
                           'run every one under Wine 10 against the Windows compiler (Debian roots; needs root)'),
        # Cold, the Windows Rubies' builds take half an hour.
        Platform.new(name: 'windows_ruby', task: 'test:windows', limit: 7200, gems: %w[x64-mingw-ucrt], roots: windows,
                     run: ->(checkout, cache) { r::Windows.call(checkout, cache) },
                     desc: 'The x64-mingw-ucrt gem: the extension cross-built for a Windows Ruby of each minor the ' \
                           'gems carry (UCRT, cross-built once and cached), installed and used under Wine 10 under ' \
                           'each, and the whole Ruby suite run there under each; the gem left in pkg/ (Debian roots; ' \
                           'needs root)')
      ]
    end
    # rubocop:enable Metrics/MethodLength, Metrics/AbcSize
  end
end
