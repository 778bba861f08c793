# frozen_string_literal: true

require 'shellwords'

module SassEmbeddedBuild
  module Rubies
    # rake test:old_glibc: the x86_64-linux-gnu platform gem built here loads and
    # passes the whole suite on an old glibc. Debian bullseye (glibc 2.31) is
    # the oldest suite the mirror still serves; its Ruby is 2.7, so a Ruby 3.3
    # is built there from Debian's orig tarball (once, cached in the root:
    # tasks/roots/source_ruby.sh). The gem's extension is built in the
    # Ruby 3.3 root of test:rubies (trixie: glibc 2.41, the newest headers
    # there are) by `rake native:compile`, which links it against glibc 2.17's
    # symbol versions with zig, and packed here with the check that it needs
    # nothing newer. In the bullseye root, with only ruby and gem on PATH and
    # no network, the gem is installed and used (test/install/platform_gem.rb),
    # then installed again for the suite, which runs in the installed gem's
    # directory, against its lib/.
    OLD_GLIBC = Ruby.new(minor: '2.7', suite: 'bullseye', extra_suites: [], purpose: 'old-glibc',
                         packages: %w[ruby2.7 ruby-minitest ruby-rack ruby-webrick libssl-dev libyaml-dev zlib1g-dev
                                      libffi-dev xz-utils],
                         label: '3.3 on glibc 2.31 (bullseye root)')

    # The steps of rake test:old_glibc around the runs in the roots.
    module OldGlibc
      # The Ruby built in the bullseye root, and the minor the gem carries.
      MINOR = '3.3'
      PREFIX = "/opt/sass-embedded-ruby#{MINOR}".freeze
      # Where the task keeps the tarball and the gem, in the checkout.
      WORK = File.join('tmp', 'old-glibc')

      module_function

      # The roots it runs in: the builder's (test:rubies' Ruby 3.3) and bullseye's.
      def roots = [RUBIES.find { |ruby| ruby.minor == MINOR }, OLD_GLIBC]

      def call(checkout)
        builder, = roots
        Rubies.prepare(roots)
        work = File.join(checkout, WORK)
        tarball = Mirror.ruby_tarball(MINOR, work)
        Zig.executable(File.join(checkout, 'tmp', 'zig'))
        floor = Glibc::FLOOR
        puts "\n== test:old_glibc: the Ruby #{MINOR} extension linked against glibc #{floor} " \
             "(Debian #{builder.suite} root)"
        build = Rubies.run(builder, '"$RUBY" -v && "$RUBY" -S rake native:compile')
        abort "test:old_glibc: the build failed (#{build.status_label})" unless build.success?

        FileUtils.rm_rf(File.join(work, 'gem'))
        gem = PlatformGem.build(checkout, File.join(work, 'gem'), minors: [MINOR])
        extension = PlatformGem.extensions(checkout).fetch(MINOR)
        puts "built #{gem}: its extension needs glibc >= #{Glibc.floor([extension])}, " \
             "its compiler #{Glibc.floor(PlatformGem.binaries(checkout, []))}"
        puts "\n== test:old_glibc: #{File.basename(gem)} under Ruby #{MINOR} in Debian #{OLD_GLIBC.suite}"
        run = Rubies.run(OLD_GLIBC, script(gem.delete_prefix("#{checkout}/"), tarball),
                         limit: ENV.fetch('SASS_OLD_GLIBC_TIMEOUT', '3600'))
        Suite.summarize([[OLD_GLIBC, run]], 'test:old_glibc')
      end

      # In the bullseye root, in the checkout: the Ruby (cached), the glibc
      # it runs on, the gem's offline install test, then the suite inside the
      # installed gem's directory, with the checkout's other files (tests,
      # tasks, sources, the verified compiler packages the tests install from)
      # beside its lib/ and exe/. Sass::Rack's tests take
      # bullseye's Rack 2.1 and Ruby 2.7's WEBrick (pure Ruby, which the Ruby
      # built here lacks), and nothing else of Ruby 2.7's.
      def script(gem, tarball)
        <<~SH.tr("\n", ';')
          set -e
          sh tasks/roots/source_ruby.sh #{PREFIX} #{tarball.shellescape}
          echo "glibc here: $(getconf GNU_LIBC_VERSION)"
          export PATH=#{PREFIX}/bin:$PATH RUBY=#{PREFIX}/bin/ruby
          "$RUBY" -v
          "$RUBY" test/install/platform_gem.rb #{gem.shellescape}
          gems=/tmp/old-glibc-gems rack=/tmp/old-glibc-rack
          env PATH=#{PREFIX}/bin GEM_HOME="$gems" gem install --local --no-document --silent #{gem.shellescape}
          dir=$(ls -d "$gems"/gems/sass-embedded-*)
          tar -cf - --exclude=./lib --exclude=./exe --exclude=./.git --exclude=./target --exclude=./tmp --exclude=./pkg --exclude=./bench/vendor . | tar -C "$dir" -xf -
          mkdir -p "$rack" "$dir/tmp" && cp -r tmp/compiler-packages "$dir/tmp/"
          for lib in /usr/lib/ruby/vendor_ruby/rack /usr/lib/ruby/vendor_ruby/rack.rb /usr/lib/ruby/2.7.0/webrick /usr/lib/ruby/2.7.0/webrick.rb; do ln -s "$lib" "$rack/"; done
          cd "$dir"
          ls lib/sass/#{MINOR} lib/sass/embedded/dart-sass/src
          export RUBYLIB="$rack"
          exec "$RUBY" -w -Ilib -Itest -e 'ARGV.each { |file| require File.expand_path(file) }' test/*_test.rb test/*/*_test.rb
        SH
      end
    end
  end
end
