# frozen_string_literal: true

require 'digest'
require 'fileutils'
require 'open3'
require 'shellwords'
require 'stringio'
require 'zlib'
require 'rubygems/package'
require_relative 'minors'
require_relative 'platforms'

module SassEmbeddedBuild
  # `rake release:build` and `rake release:install`: a release is every gem of
  # one version, built from a clean checkout into pkg/release/gems/, with
  # pkg/release/SHA256SUMS and a gem source index over them (`gem
  # generate_index`), so that RubyGems and Bundler pick among them exactly as
  # they pick from rubygems.org.
  #
  # Every gem is built by the task that builds and checks it today, in the
  # roots and caches those tasks keep (tasks/roots/, tasks/platforms/): the source gem here;
  # x86_64-linux-gnu from the Ruby 3.3 and 3.4 roots of test:rubies (linked
  # against glibc 2.17 by `rake native:compile`); the others by their own
  # platform task, each run as `rake <task>` under a time limit. Timestamps come
  # from the commit (SOURCE_DATE_EPOCH) and build paths are kept out of the
  # binaries (compile_extension's --remap-path-prefix), so two builds of one
  # commit give the same bytes.
  module Release
    DIR = File.join('pkg', 'release')
    # The Ruby minors the x86_64-linux-gnu gem carries, as every platform gem
    # (Rubies::MINORS): a gem claims one contiguous range
    # (docs/platform-gems.md), and Debian has no Ruby 3.2, so 3.1 (the
    # machine's) cannot join them; Ruby 3.1 (end of life) gets the source gem.
    LINUX_MINORS = Rubies.minor_names.freeze

    # One gem of a release: its platform and how it is made (:source, :linux,
    # or the rake task that leaves it in pkg/), with that task's time limit
    # (for every Ruby minor: Platforms::Platform#task_limit).
    Entry = Struct.new(:platform, :made_by, :limit, keyword_init: true)

    # The source gem, this machine's own, and each gem a platform's row names
    # (tasks/platforms/table.rb), made by that platform's task.
    def self.gems
      platforms = Platforms.table.flat_map do |platform|
        platform.gems.map { |gem| Entry.new(platform: gem, made_by: platform.task, limit: platform.task_limit) }
      end
      [Entry.new(platform: 'ruby', made_by: :source), Entry.new(platform: 'x86_64-linux-gnu', made_by: :linux),
       *platforms]
    end

    module_function

    def dir(checkout) = File.join(checkout, DIR)
    def gems_dir(checkout) = File.join(dir(checkout), 'gems')
    def file_name(platform) = "sass-embedded-#{Sass::Embedded::VERSION}#{"-#{platform}" unless platform == 'ruby'}.gem"

    # SASS_RELEASE_PLATFORMS=ruby,x86_64-linux-gnu builds some of the gems (and
    # keeps the others pkg/release has).
    def selected
      wanted = ENV.fetch('SASS_RELEASE_PLATFORMS', '').split(/[\s,]+/).reject(&:empty?)
      return gems if wanted.empty?

      unknown = wanted - gems.map(&:platform)
      abort "SASS_RELEASE_PLATFORMS: unknown #{unknown.join(', ')} (known: #{gems.map(&:platform).join(', ')})" \
        unless unknown.empty?
      gems.select { |gem| wanted.include?(gem.platform) }
    end

    # The commit's time, for every timestamp a build writes; the checkout must
    # be clean (a release is a commit's), unless SASS_RELEASE_DIRTY=1 (then
    # nothing says which sources it holds).
    def source_date_epoch(checkout)
      status, = Open3.capture2('git', '-C', checkout, 'status', '--porcelain', '--untracked-files=normal')
      unless status.empty? || ENV['SASS_RELEASE_DIRTY'] == '1'
        abort "release:build: #{checkout} has changes (git status):\n#{status}a release is built from a clean " \
              'checkout (SASS_RELEASE_DIRTY=1 builds anyway)'
      end
      epoch, = Open3.capture2('git', '-C', checkout, 'log', '-1', '--format=%ct')
      Integer(epoch.strip)
    end

    def commit(checkout) = Open3.capture2('git', '-C', checkout, 'rev-parse', '--short', 'HEAD').first.strip

    # All gems: a release anew. Some: those rebuilt are removed and the others
    # kept (a failed platform built again), but for any gem no platform of
    # .gems names (one left from before a platform was renamed would be in the
    # index); the index and sums are made over all.
    def clear(checkout)
      if selected == gems
        FileUtils.rm_rf(dir(checkout))
      else
        known = gems.map { |gem| file_name(gem.platform) }
        stale = Dir.glob(File.join(gems_dir(checkout), '*.gem')).reject { |gem| known.include?(File.basename(gem)) }
        FileUtils.rm_f(selected.map { |gem| File.join(gems_dir(checkout), file_name(gem.platform)) } + stale)
      end
      FileUtils.mkdir_p(gems_dir(checkout))
    end

    def build(checkout)
      Changelog.entry!(checkout, Sass::Embedded::VERSION)
      epoch = source_date_epoch(checkout)
      ENV['SOURCE_DATE_EPOCH'] = epoch.to_s
      clear(checkout)
      puts "release:build: sass-embedded #{Sass::Embedded::VERSION} at #{commit(checkout)}, " \
           "SOURCE_DATE_EPOCH=#{epoch} (#{Time.at(epoch).utc})"
      results = {}
      selected.group_by(&:made_by).each do |made_by, gems|
        started = Rubies.clock
        error = begin
          Make.call(made_by, gems, checkout)
          nil
        rescue StandardError => e
          e.message.lines.first.strip
        end
        seconds = Rubies.clock - started
        gems.each { |gem| results[gem.platform] = [error, seconds] }
      end
      Index.write(checkout)
      Index.summarize(checkout, results)
    end

    # CHANGELOG.md, where users read what a release changed: a version is
    # released only with its entry (a "## <version>" heading with text under
    # it, up to the next "## ").
    module Changelog
      FILE = 'CHANGELOG.md'

      module_function

      # The text of +version+'s entry in +text+, or nil if it has none.
      def entry(text, version)
        heading = /\A##\s+v?#{Regexp.escape(version)}(?:\s|\z)/
        lines = text.lines
        start = lines.index { |line| line.match?(heading) } or return nil
        body = lines.drop(start + 1).take_while { |line| !line.start_with?('## ') }.join
        body unless body.strip.empty?
      end

      # +version+'s entry in +checkout+'s CHANGELOG.md; raises without one.
      def entry!(checkout, version)
        path = File.join(checkout, FILE)
        text = File.file?(path) ? File.read(path) : ''
        entry(text, version) or
          raise "release:build: #{FILE} has no entry for #{version}: add a \"## #{version}\" section that says, " \
                'in users\' words, what changed in the gem (the compiler\'s own changes are in its changelog)'
      end
    end

    # The steps that make a release's gems.
    module Make
      module_function

      # Makes +gems+ (all made by +made_by+) into the release's gems/, raising
      # if the step failed; a gem missing afterwards is reported by summarize.
      def call(made_by, gems, checkout)
        how = made_by.is_a?(Symbol) ? made_by : "rake #{made_by}"
        puts "\n==== release:build: #{gems.map(&:platform).join(', ')} (#{how})"
        case made_by
        when :source then source_gem(checkout)
        when :linux then linux_gem(checkout)
        else platform_task(made_by, gems, checkout)
        end
      end

      def source_gem(checkout)
        Dir.chdir(checkout) do
          spec = Gem::Specification.load(File.join(checkout, 'sass-embedded.gemspec'))
          FileUtils.mv(Gem::Package.build(spec), Release.gems_dir(checkout))
        end
      end

      # The x86_64-linux-gnu gem: each minor's extension built in its root by `rake
      # native:compile` (zig, glibc 2.17), packed here with the glibc check.
      def linux_gem(checkout)
        Zig.executable(File.join(checkout, 'tmp', 'zig'))
        rubies = LINUX_MINORS.map { |minor| Rubies::RUBIES.find { |ruby| ruby.minor == minor } }
        Rubies.prepare(rubies)
        rubies.each do |ruby|
          run = Rubies.run(ruby, '"$RUBY" -v && "$RUBY" -S rake native:compile')
          raise "the Ruby #{ruby.minor} extension's build failed (#{run.status_label})" unless run.success?
        end
        platform_gem = PlatformGem
        glibc = Glibc.check(platform_gem.extensions(checkout).values_at(*LINUX_MINORS))
        gem = platform_gem.build(checkout, Release.gems_dir(checkout), minors: LINUX_MINORS)
        puts "built #{gem}: Ruby #{LINUX_MINORS.join(', ')}, its extensions need glibc >= #{glibc}"
      end

      # A platform task, run as rake runs it, leaves its gems in pkg/; gems left
      # there by an earlier run are removed first, so only this run's count.
      # A task that fails releases nothing: its gem may be built and packed
      # before its suite fails under it.
      def platform_task(task, gems, checkout)
        kept = gems.map { |gem| File.join(checkout, 'pkg', Release.file_name(gem.platform)) }
        FileUtils.rm_f(kept)
        # Each platform task builds and tests every minor in turn.
        limit = gems.map(&:limit).max
        status, = Rubies.stream({}, ['timeout', '-k', '30', limit.to_s, RbConfig.ruby, '-S', 'rake', task])
        unless status.success?
          raise "rake #{task} #{status.exitstatus == 124 ? "timed out after #{limit} s" : 'failed'}"
        end

        kept.each { |path| FileUtils.cp(path, Release.gems_dir(checkout)) if File.file?(path) }
      end
    end

    # What a release leaves beside its gems, and its summary.
    module Index
      module_function

      # SHA256SUMS (for `sha256sum -c` in the release's directory) and the
      # gem source index.
      def write(checkout)
        dir = Release.dir(checkout)
        gems = Dir.glob(File.join(dir, 'gems', '*.gem'))
        sums = gems.map { |gem| "#{Digest::SHA256.file(gem).hexdigest}  gems/#{File.basename(gem)}\n" }
        File.write(File.join(dir, 'SHA256SUMS'), sums.join)
        return if gems.empty?

        system(Gem.ruby, '-S', 'gem', 'generate_index', '--directory', dir, '--quiet', exception: true)
      end

      # One line per gem; fails if any is missing.
      def summarize(checkout, results)
        puts "\n==== release:build summary (#{DIR})"
        missing = results.filter_map do |platform, (error, seconds)|
          path = File.join(Release.gems_dir(checkout), Release.file_name(platform))
          took = Rubies.duration(seconds)
          unless File.file?(path)
            puts "#{platform.ljust(20)} MISSING: #{error || 'no gem left'}, #{took}"
            next platform
          end

          size = format('%.1f MiB', File.size(path) / 1024.0 / 1024)
          puts "#{platform.ljust(20)} #{File.basename(path)} #{size}, Ruby #{required_ruby(path)}, #{took}"
        end
        abort "release:build: #{missing.size} of #{results.size} gems missing: #{missing.join(', ')}" if missing.any?
        puts "release:build: #{results.size} gems, SHA256SUMS and the index in #{DIR}"
      end

      # The Rubies a gem's specification claims.
      def required_ruby(path) = Gem::Package.new(path).spec.required_ruby_version.to_s
    end

    # rake release:install: the release installed the way users install, by
    # name from its index, offline.
    module Install
      module_function

      def call(checkout, compiler_cache)
        dir = Release.dir(checkout)
        index = File.join(dir, 'specs.4.8.gz')
        abort "release:install: no release in #{DIR} (rake release:build)" unless File.file?(index)

        builder = Rubies::RUBIES.find { |ruby| ruby.minor == '3.3' }
        Rubies.prepare([builder])
        results = steps(checkout, compiler_cache, builder).map do |name, step|
          puts "\n==== release:install: #{name}"
          started = Rubies.clock
          [name, step.call, Rubies.clock - started]
        end
        puts "\n==== release:install summary (#{DIR})"
        results.each do |name, ok, seconds|
          puts "#{ok ? 'passed' : 'FAILED'}: #{name}, #{Rubies.duration(seconds)}"
        end
        failed = results.count { |_, ok| !ok }
        abort "release:install: #{failed} of #{results.size} failed" unless failed.zero?
      end

      def steps(checkout, compiler_cache, builder)
        dir = Release.dir(checkout)
        in_root = ->(script) { Rubies.run(builder, "set -e; #{script}").success? }
        linux = File.join(Release.gems_dir(checkout), Release.file_name('x86_64-linux-gnu'))
        [
          ['SHA256SUMS verifies', -> { system('sha256sum', '--check', '--strict', 'SHA256SUMS', chdir: dir) }],
          (if File.file?(linux)
             ["x86_64-linux-gnu by name under Ruby #{builder.minor} (#{builder.suite} root), PATH=ruby+gem",
              -> { in_root.call("\"$RUBY\" test/install/platform_gem.rb --source #{DIR} x86_64-linux-gnu") }]
           end),
          ["the source gem by name under Ruby #{RUBY_VERSION} (this machine's), built by its extconf",
           -> { source_gem(checkout, compiler_cache, linux) }],
          ["every platform gem claims Ruby #{LINUX_MINORS.join(', ')}; what RubyGems' resolver picks for each " \
           "platform, and Bundler, under Ruby #{builder.minor}",
           lambda {
             in_root.call("SASS_RELEASE_MINORS=#{LINUX_MINORS.join(',')} unshare -n \"$RUBY\" " \
                          "test/install/release_index.rb #{DIR}")
           }],
          *in_other_roots(checkout, compiler_cache),
          *Wine.steps(checkout, compiler_cache)
        ].compact
      end

      # The platform gems installed by name in the roots their tasks made and
      # keep (in the copy of the checkout each works in): for each platform
      # whose row says how (Platforms.table's +install+), each of its gems
      # under each minor: [platform, root, compiler package, how the Ruby to
      # use comes first on PATH, its name].
      def other_roots
        Platforms.table.select(&:install).flat_map do |row|
          row.gems.product(Rubies.minor_names).map { |gem, minor| [gem, *row.install.call(minor)] }
        end
      end

      def in_other_roots(checkout, compiler_cache)
        other_roots.filter_map do |platform, ruby, compiler, setup, label|
          gem = File.join(Release.gems_dir(checkout), Release.file_name(platform))
          next unless File.file?(gem)

          script = "set -e; #{setup}; \"$RUBY\" test/install/platform_gem.rb --source #{DIR} #{platform}"
          ["#{platform} by name under #{label}",
           -> { in_copy(checkout, compiler_cache, ruby, compiler, script) }]
        end
      end

      # Runs +script+ in +ruby+'s root (made by the gem's platform task), in
      # its copy of the checkout brought up to date with the release beside it
      # (and given to the block first, if any).
      def in_copy(checkout, compiler_cache, ruby, compiler, script)
        unless Rubies::Roots.current?(ruby)
          puts "no current #{ruby.root_name} root: the gem's platform task makes it"
          return false
        end
        Rubies::Emulation.prepare(ruby) if ruby.foreign?
        archive = CompilerPackage.cached_copy(compiler, Sass::Embedded::VERSION, compiler_cache)
        copy = Rubies::CheckoutCopy.mirror(ruby, checkout, archive, compiler_cache)
        FileUtils.mkdir_p(File.join(copy, 'pkg'))
        system('rsync', '--recursive', '--checksum', '--delete', "#{Release.dir(checkout)}/",
               "#{File.join(copy, DIR)}/", exception: true)
        yield copy if block_given?
        Rubies.run(ruby, script, checkout: copy).success?
      end

      # Under this machine's Ruby, which the x86_64-linux-gnu gem does not carry
      # (LINUX_MINORS), `gem install sass-embedded` must take the source gem
      # (forced with --platform ruby if it does carry it) and build it: cargo
      # offline from its cache, the compiler from the verified package.
      def source_gem(checkout, compiler_cache, linux)
        carried = File.file?(linux) &&
                  Gem::Package.new(linux).spec.required_ruby_version.satisfied_by?(Gem.ruby_version)
        archive = CompilerPackage.cached_archive(
          compiler_cache, "#{CompilerPackage.name}@#{Sass::Embedded::VERSION}"
        )
        Dir.mktmpdir('sass-embedded-release') do |tmp|
          home = File.join(tmp, 'home')
          env = { 'GEM_HOME' => home, 'GEM_PATH' => home, 'RUBYLIB' => nil, 'RUBYOPT' => nil,
                  'SASS_EMBEDDED_TARGET_DIR' => File.join(checkout, 'target', "ruby-#{RUBY_MINOR}"),
                  'SASS_EMBEDDED_COMPILER_ARCHIVE' => archive, 'CARGO_NET_OFFLINE' => 'true' }
          url = "file://#{Release.dir(checkout)}/"
          installed = system(env, 'gem', 'install', '--no-document', '--clear-sources', '--source', url,
                             *(%w[--platform ruby] if carried), 'sass-embedded', chdir: tmp)
          specs = Dir.glob(File.join(home, 'specifications', 'sass-embedded-*.gemspec')).map { File.basename(_1) }
          picked = specs == ["sass-embedded-#{Sass::Embedded::VERSION}.gemspec"]
          puts "installed: #{specs.join(', ')}#{' (forced with --platform ruby)' if carried}"
          installed && picked &&
            system(env, RbConfig.ruby, File.join(checkout, 'test', 'install', 'check_installed_gem.rb'), chdir: tmp)
        end
      end

      # x64-mingw-ucrt by name under each Windows Ruby that test:windows
      # cross-built (kept in the roots' cache), under Wine in its root, the
      # index read through Wine's Z: drive as a Windows user's file:///Z:/
      # source.
      module Wine
        module_function

        def steps(checkout, compiler_cache)
          windows = Rubies::Windows
          gem = File.join(Release.gems_dir(checkout), Release.file_name(windows::PLATFORM))
          return [] unless File.file?(gem)

          Rubies.minor_names.map do |minor|
            ["#{windows::PLATFORM} by name under the Windows Ruby #{minor}, under Wine",
             lambda {
               Install.in_copy(checkout, compiler_cache, Rubies::WINE, windows::COMPILER,
                               script(minor)) do |copy|
                 Rubies::WindowsRuby.call(copy)
               end
             }]
          end
        end

        def script(minor)
          output = File.join(Rubies::Windows::WORK, "release-install-#{minor}.txt")
          Rubies::Wine.script(
            ["timeout -k 10 600 #{Rubies::Windows::UnderWine.ruby(minor)} test/install/platform_gem.rb " \
             "--source Z:$PWD/#{DIR} #{Rubies::Windows::PLATFORM} > #{output} 2>&1 </dev/null || failed=1",
             "tr -d '\\r' < #{output}"]
          )
        end
      end
    end

    # rake release:reproduce: two release:build runs of HEAD from two clean
    # clones in directories of different names, then their gems compared byte
    # for byte (and, for a pair that differs, which files in them differ).
    module Reproduce
      # The gems compared: the source gem and the Linux gem built from roots.
      PLATFORMS = %w[ruby x86_64-linux-gnu].freeze

      module_function

      def call(checkout)
        base = File.join(checkout, 'tmp', 'reproduce')
        FileUtils.rm_rf(base)
        clones = [File.join(base, 'one', 'sass-embedded'), File.join(base, 'two', 'another-name')]
        commit = Release.commit(checkout)
        clones.each { |clone| build(checkout, clone) }
        different = PLATFORMS.reject { |platform| same?(clones, platform) }
        unless different.empty?
          abort "release:reproduce: #{different.join(', ')} differ between #{clones.join(' and ')}"
        end
        puts "release:reproduce: #{PLATFORMS.join(' and ')} gems of #{commit} are " \
             "byte-identical from #{clones.join(' and ')}"
      end

      # A clean clone of HEAD at +clone+, given the checkout's verified
      # downloads (the compiler packages and zig's wheel) so that it fetches
      # nothing, and its release built there by its own rake.
      def build(checkout, clone)
        system('git', 'clone', '--quiet', '--no-hardlinks', checkout, clone, exception: true)
        %w[compiler-packages zig].each do |kept|
          FileUtils.mkdir_p(File.join(clone, 'tmp', kept))
          Dir.glob(File.join(checkout, 'tmp', kept, '*.{tgz,whl}')).each do |file|
            FileUtils.cp(file, File.join(clone, 'tmp', kept))
          end
        end
        puts "\n==== release:reproduce: rake release:build in #{clone}"
        environment = { 'SASS_RELEASE_PLATFORMS' => PLATFORMS.join(','), 'SASS_RELEASE_DIRTY' => nil }
        build = "cd #{clone.shellescape} && exec #{RbConfig.ruby.shellescape} -S rake release:build"
        status, = Rubies.stream(environment, ['/bin/sh', '-c', build])
        raise "release:reproduce: rake release:build failed in #{clone}" unless status.success?
      end

      def same?(clones, platform)
        one, two = clones.map do |clone|
          File.join(Release.gems_dir(clone), Release.file_name(platform))
        end
        return true.tap { puts "#{File.basename(one)}: identical" } if FileUtils.identical?(one, two)

        puts "#{File.basename(one)}: DIFFERENT; the files that differ in it:"
        contents = [one, two].map { |gem| files(gem) }
        (contents[0].keys | contents[1].keys).each do |name|
          puts "  #{name}" unless contents[0][name] == contents[1][name]
        end
        false
      end

      # Each entry of a gem (its data.tar.gz's files, metadata, checksums)
      # with its digest and mode.
      def files(gem)
        entries = {}
        File.open(gem, 'rb') do |io|
          Gem::Package::TarReader.new(io).each do |entry|
            content = entry.read.to_s
            entries[entry.full_name] = [Digest::SHA256.hexdigest(content), entry.header.mode, entry.header.mtime]
            next unless entry.full_name == 'data.tar.gz'

            Zlib::GzipReader.wrap(StringIO.new(content)) do |gz|
              Gem::Package::TarReader.new(gz).each do |file|
                entries["data/#{file.full_name}"] = [Digest::SHA256.hexdigest(file.read.to_s), file.header.mode,
                                                     file.header.mtime]
              end
            end
          end
        end
        entries
      end
    end
  end
end
