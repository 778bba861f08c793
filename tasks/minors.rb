# frozen_string_literal: true

module SassEmbeddedBuild
  # The Ruby minors of the platform gems (tasks/roots.rb's module holds the
  # Rubies every platform task runs).
  module Rubies
    # The Ruby minors the platform gems carry, and where each one's Ruby comes
    # from: Debian's packages (`ruby<minor>`, `ruby<minor>-dev`) in +suite+
    # (with +extra_suites+), for the roots that run Debian's own Ruby
    # (test:rubies, the x86_64-linux-gnu gem), and Debian's orig tarball of
    # it, pinned to its SHA-256, for the Rubies built from source (musl,
    # darwin, old glibc). +packages+ adds what that suite has for the minor
    # only (the async gem: trixie builds it for 3.3, sid's needs an io-event
    # built for 3.3 alone). +unpackaged+ names the Debian architectures with
    # no ruby<minor> package: a platform task of one builds that Ruby from
    # the tarball in its root instead (tasks/roots/source_ruby.sh).
    #
    # Adding a minor is one line here (docs/platform-gems.md, "Adding a Ruby
    # minor"): the gems claim one contiguous range (PlatformGem), so it is the
    # next one.
    Minor = Struct.new(:minor, :suite, :extra_suites, :packages, :tarball, :sha256, :unpackaged, keyword_init: true) do
      # Whether Debian packages this Ruby for +architecture+.
      def packaged_for?(architecture) = !Array(unpackaged).include?(architecture)
    end

    MINORS = [
      Minor.new(minor: '3.3', suite: 'trixie', extra_suites: [], packages: %w[ruby-async],
                tarball: 'ruby3.3/ruby3.3_3.3.8.orig.tar.xz',
                sha256: 'e2e1233ad275b7623a05edf23a01192626d1da454bdfe353a28a87acd8ef015c'),
      Minor.new(minor: '3.4', suite: 'sid', extra_suites: %w[experimental], packages: [],
                tarball: 'ruby3.4/ruby3.4_3.4.5.orig.tar.xz',
                sha256: '141fb3b0192b8196361b3b4d6c29fc9b10c0798dbe54ada1539d9f1c311bfcbf', unpackaged: %w[riscv64])
    ].freeze

    module_function

    # The minors' names, oldest first.
    def minor_names = MINORS.map(&:minor)
  end
end
