# frozen_string_literal: true

require 'fileutils'
require 'rubygems/package'
require 'tmpdir'

module SassEmbeddedBuild
  module Rubies
    # A copy of the checkout kept beside a root (rake test:arm64, test:musl),
    # for a root whose builds, compiler package and cargo target directory must
    # stay apart from the machine's: brought up to date before each run, cached
    # for the next, its platform gem copied back into the checkout's pkg/.
    module CheckoutCopy
      # What a copy leaves out: the machine's builds and compiler, and what the
      # copy makes itself (kept there between runs).
      LEFT_OUT = %w[/.git/ /target/ /tmp/ /pkg/ /lib/sass/[0-9]*/ /lib/sass/embedded/dart-sass/ /bench/vendor/].freeze

      module_function

      # The copy of +checkout+ for +ruby+'s root, brought up to date, with the
      # compiler package +archive+ where the checkout keeps it
      # (tmp/compiler-packages, whence the tests take it offline: the roots
      # have no npm). Files are compared by content and a changed one is
      # written anew, so its time is now: cargo then rebuilds exactly what
      # changed (keeping the checkout's times, -t, would hide an edit made
      # before the copy's last build from cargo).
      def mirror(ruby, checkout, archive, compiler_cache)
        copy = "#{Roots.path(ruby)}.checkout"
        system('rsync', '--recursive', '--links', '--perms', '--checksum', '--delete',
               *LEFT_OUT.map { |path| "--exclude=#{path}" }, "#{checkout}/", "#{copy}/", exception: true)
        cache = compiler_cache.sub(checkout, copy)
        FileUtils.mkdir_p(cache)
        FileUtils.cp(archive, File.join(cache, File.basename(archive)), preserve: true)
        copy
      end

      # What the root runs last, in the copy, under its Ruby ($RUBY): pack the
      # +platform+ gem, install it offline with PATH holding only ruby and gem
      # and use it, then run the whole suite, against the build the gem
      # carries (on glibc linked as native:gem links it: one build, not two).
      # With +rubies+ ([minor, sh that makes that Ruby $RUBY], oldest first),
      # the extension is built under each, the gem packed with all of them
      # (SASS_EMBEDDED_RUBY_MINORS, which the caller sets), and installed and
      # tested under each in turn: every minor's suite runs, and the script
      # fails after the last if any failed (one failing suite under emulation
      # would otherwise cost the next minor's its hour).
      def gem_and_suite(platform, rubies = [[nil, ':']])
        builds = rubies[0...-1].map { |_, use| "#{use}\n\"$RUBY\" -S rake native:compile\n" }.join
        suites = rubies.map do |minor, use|
          <<~SH
            echo "#{Suite.section(platform, minor || '$RUBY')}"
            #{use}
            { "$RUBY" test/install/platform_gem.rb "$gem" && "$RUBY" -S rake test:ruby; } || failed="$failed #{minor || '$RUBY'}"
          SH
        end
        <<~SH
          #{builds}#{rubies.last.last}
          "$RUBY" -S rake native:gem
          gem=$(ls pkg/sass-embedded-*-#{platform}.gem)
          export SASS_EMBEDDED_GLIBC=#{Glibc.floor_for(Gem::Platform.new(platform).cpu)}
          failed=
          #{suites.join.chomp}
          if [ -n "$failed" ]; then echo "the #{platform} gem failed under Ruby$failed"; exit 1; fi
        SH
      end

      # The sh that makes the Ruby in +bin+ (one built in a root) $RUBY and
      # first on PATH, before the root's own PATH (kept in $root_path), with
      # its gems and Debian's pure-Ruby ones (Rack) on GEM_PATH.
      def use_built_ruby(bin)
        "export PATH=#{bin}:$root_path RUBY=#{bin}/ruby; " \
          'export GEM_PATH=$("$RUBY" -e \'print Gem.default_dir\'):/usr/share/rubygems-integration/all; "$RUBY" -v'
      end

      # Unpacks +gem+ into a temporary directory for the block (+task+ names
      # the task in the error if no gem was built).
      def unpacked(gem, task)
        raise "#{task}: no platform gem was built" unless gem && File.file?(gem)

        Dir.mktmpdir('sass-embedded-platform-gem') do |tmp|
          Gem::Package.new(gem).extract_files(tmp)
          yield tmp
        end
      end

      # The extensions (lib/sass/<minor>/sass_embedded.so) of a gem unpacked
      # in +tmp+; raises unless there is one for each minor of the list and no
      # other (+task+ and +gem+ name them in the error).
      def extensions(tmp, task, gem)
        extensions = Dir.glob(File.join(tmp, 'lib', 'sass', '*', 'sass_embedded.so'))
        minors = extensions.map { |extension| File.basename(File.dirname(extension)) }.sort
        return extensions if minors == Rubies.minor_names.sort

        raise "#{task}: #{gem} carries extensions for Ruby #{minors.join(', ')}, not " \
              "#{Rubies.minor_names.join(', ')}"
      end

      # Copies the gem +built+ in a copy into +checkout+'s pkg/; its path there.
      def keep(built, checkout)
        return unless built && File.file?(built)

        FileUtils.mkdir_p(File.join(checkout, 'pkg'))
        kept = File.join(checkout, 'pkg', File.basename(built))
        FileUtils.cp(built, kept)
        puts "the platform gem: #{kept}"
        kept
      end
    end
  end
end
