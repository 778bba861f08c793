# frozen_string_literal: true

require 'rbconfig'
require 'shellwords'
require_relative 'minors'

module SassEmbeddedBuild
  # `rake test:rubies` and `rake bench:rubies`: the suite (and the benchmark's
  # 1-thread tiny rows) under every Ruby the gem supports. The machine's own
  # Ruby runs in place; each other one runs in a Debian root filesystem made
  # with mmdebstrap and cached outside the checkout (tasks/roots/roots.rb),
  # entered with chroot in a mount namespace of its own (tasks/roots/enter.rb)
  # with the checkout and cargo's caches bind-mounted at their own paths, so a
  # run costs a build and the suite, not a fresh toolchain. Needs root
  # (mmdebstrap, mount, chroot).
  #
  # Environment:
  #   SASS_RUBIES=3.3,3.4          which Rubies (default: all of RUBIES)
  #   SASS_RUBIES_CACHE=DIR        where the roots live (default ~/.cache/sass-embedded/rubies)
  #   SASS_RUBIES_MIRROR=URL       the Debian mirror (default http://deb.debian.org/debian)
  #   SASS_RUBIES_TIMEOUT=SECONDS  limit for one Ruby's build and suite (default 1800)
  #   SASS_RUBIES_HOST=0           run the machine's Ruby in a root too, like the others
  module Rubies
    CHECKOUT = File.expand_path('..', __dir__)
    ENTER = File.join(__dir__, 'roots', 'enter.rb')

    # One supported Ruby: the Debian suite(s) it comes from and its packages.
    # 3.3 and 3.4 bundle minitest as a bundled gem; Debian's 3.1 takes it
    # from ruby-minitest. The fiber tests run under the async gem where Debian
    # builds it for that Ruby: 3.1 (the machine's, from bin/setup) and 3.3
    # (trixie's async 1.30, as bookworm's); sid's async 2 needs an io-event
    # built for 3.3 only, so 3.4 runs them under TestScheduler alone.
    # A root with +private_build+ keeps its build (lib/sass/<minor>, its cargo
    # target and tmp dirs) to itself: for a second root of one minor. A root
    # of another +architecture+ (Debian's name) works in a copy of the
    # checkout (tasks/platforms/ports/ports.rb). A root whose +packages+ hold rustc
    # builds with it instead of the machine's toolchain (which cannot run in a
    # root of another architecture). A +purpose+ names a root apart from
    # another of the same suite and Ruby. +deb_src+ names the suites whose
    # sources (apt-get source) a root can fetch. +unlimited_stack+: every
    # process in the root runs without a stack limit, set before entering
    # it (see MUSL_ARMHF for why; under qemu-user nothing inside can change
    # it).
    Ruby = Struct.new(:minor, :suite, :extra_suites, :packages, :label, :private_build, :architecture, :purpose,
                      :deb_src, :unlimited_stack, keyword_init: true) do
      def executable = "/usr/bin/ruby#{minor}"
      def root_name = [suite, architecture, "ruby#{minor}", purpose].compact.join('-')
      def name = label || minor
      def foreign? = !architecture.nil?
      def own_toolchain? = packages.include?('rustc')

      def private_paths = private_build ? %W[lib/sass/#{minor} target/ruby-#{minor} tmp/ext-#{minor}] : []
    end

    # The Sass::Rack tests' threaded server: Rack and WEBrick, and from Rack 3
    # on (trixie, sid) the rackup gem that holds Rack's server handlers.
    RACK = %w[ruby-rack ruby-webrick].freeze
    RACK3 = [*RACK, 'ruby-rackup'].freeze

    # The machine's Ruby (3.1, which no platform gem carries), then Debian's
    # Ruby of each minor the platform gems carry (MINORS).
    RUBIES = [
      Ruby.new(minor: '3.1', suite: 'bookworm', extra_suites: [],
               packages: %w[ruby3.1 ruby3.1-dev ruby-minitest] + RACK),
      *MINORS.map do |minor|
        Ruby.new(minor: minor.minor, suite: minor.suite, extra_suites: minor.extra_suites,
                 packages: %W[ruby#{minor.minor} ruby#{minor.minor}-dev] + minor.packages + RACK3)
      end
    ].freeze

    module_function

    def selected
      wanted = ENV.fetch('SASS_RUBIES', '').split(/[\s,]+/).reject(&:empty?)
      return RUBIES if wanted.empty?

      unknown = wanted - RUBIES.map(&:minor)
      unless unknown.empty?
        abort "SASS_RUBIES: unknown #{unknown.join(', ')} (known: #{RUBIES.map(&:minor).join(', ')})"
      end
      RUBIES.select { |ruby| wanted.include?(ruby.minor) }
    end

    def on_host?(ruby)
      ENV['SASS_RUBIES_HOST'] != '0' && RUBY_VERSION.start_with?("#{ruby.minor}.")
    end

    # Roots need root and mmdebstrap (installed with apt-get if missing).
    def prepare(rubies)
      return if rubies.all? { |ruby| on_host?(ruby) }

      unless Process.euid.zero?
        abort 'rake test:rubies / bench:rubies need root: they make Debian roots with mmdebstrap and enter them ' \
              'with mount and chroot. Run them as root (e.g. `sudo rake test:rubies`), or plain `rake test` for ' \
              "the machine's own Ruby."
      end
      return if system('sh', '-c', 'command -v mmdebstrap && command -v unshare && command -v chroot', out: File::NULL)

      puts 'installing mmdebstrap with apt-get'
      system('apt-get', 'update', '-qq', exception: true)
      system({ 'DEBIAN_FRONTEND' => 'noninteractive' }, 'apt-get', 'install', '-y', '-qq', 'mmdebstrap',
             out: File::NULL, exception: true)
    end

    def clock = Process.clock_gettime(Process::CLOCK_MONOTONIC)

    def duration(seconds)
      format('%<minutes>dm%<seconds>02ds', minutes: seconds.round / 60, seconds: seconds.round % 60)
    end

    # Runs +script+ (sh, with the Ruby's executable in $RUBY) in the checkout,
    # in place or in the Ruby's root, echoing its output as it comes.
    def run(ruby, script, environment = {}, limit: ENV.fetch('SASS_RUBIES_TIMEOUT', '1800'), checkout: CHECKOUT)
      if on_host?(ruby)
        started = clock
        status, output = stream(environment, ['/bin/sh', '-c', "RUBY=#{RbConfig.ruby.shellescape}; #{script}"])
        return Run.new(status:, output:, root_state: :host, root_seconds: 0, seconds: clock - started)
      end

      Roots.with_lock(ruby, File::LOCK_SH) do |lock|
        started = clock
        root_state = Roots.ensure_root(ruby, lock)
        root_seconds = clock - started
        started = clock
        private = ruby.private_paths.flat_map { |path| ['--private', path] }
        private << '--own-toolchain' if ruby.own_toolchain?
        limits = ruby.unlimited_stack ? %w[prlimit --stack=unlimited --] : []
        command = [*limits, 'unshare', '--mount', '--propagation', 'private', '--', RbConfig.ruby, ENTER,
                   Roots.path(ruby), checkout, limit.to_s, *private, '--',
                   '/bin/sh', '-c', "RUBY=#{ruby.executable}; #{script}"]
        status, output = stream(environment, command)
        Run.new(status:, output:, root_state:, root_seconds:, seconds: clock - started)
      end
    end
  end
end

# The shared machinery: streaming, roots, entering them, copies of the
# checkout, emulation, suites and the benchmark under other Rubies.
require_relative 'roots/stream'
require_relative 'roots/roots'
require_relative 'roots/suite'
require_relative 'roots/bench'
require_relative 'roots/emulation'
require_relative 'roots/copy'
# Each platform, a folder of its own.
require_relative 'platforms/ports/ports'
require_relative 'platforms/musl/musl'
require_relative 'platforms/old_glibc/old_glibc'
require_relative 'platforms/targets/targets'
require_relative 'platforms/darwin/darwin'
require_relative 'platforms/windows/windows'
require_relative 'platforms/windows/suite'
