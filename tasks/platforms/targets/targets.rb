# frozen_string_literal: true

module SassEmbeddedBuild
  module Rubies
    # rake check:targets: the Ruby-free core type-checked and linted (clippy
    # -D warnings, tests included) for the targets this machine cannot run:
    # macOS, FreeBSD, musl, 32-bit ARM and RISC-V Linux (32-bit atomics and
    # pointers, a weaker memory model; 32-bit ARM with musl too) and Windows
    # (x86_64-pc-windows-gnu, whose standard library needs mingw-w64's
    # dlltool even to be checked; and Windows on ARM, aarch64-pc-windows-gnullvm,
    # which LLVM's mingw-w64 builds for). rustup cannot add
    # targets here, so Debian sid's rustc builds each target's standard library
    # from its rust-src (-Zbuild-std, a nightly flag that RUSTC_BOOTSTRAP lets
    # a stable rustc take), in a cached sid root. Only the core: the extension
    # needs the target's Ruby headers.
    TARGETS_ROOT = Ruby.new(minor: '3.3', suite: 'sid', extra_suites: [], purpose: 'rust',
                            packages: %w[ruby3.3 rustc cargo rust-src rust-clippy binutils-mingw-w64-x86-64],
                            label: "Debian sid's Rust")

    # The steps of rake check:targets.
    module Targets
      TARGETS = %w[aarch64-apple-darwin x86_64-apple-darwin x86_64-unknown-freebsd x86_64-unknown-linux-musl
                   x86_64-pc-windows-gnu aarch64-pc-windows-gnullvm armv7-unknown-linux-gnueabihf
                   armv7-unknown-linux-musleabihf riscv64gc-unknown-linux-gnu].freeze

      module_function

      def call(targets = TARGETS)
        Rubies.prepare([TARGETS_ROOT])
        puts "\n== check:targets: #{targets.join(', ')} (#{TARGETS_ROOT.name}, root #{Roots.path(TARGETS_ROOT)})"
        run = Rubies.run(TARGETS_ROOT, script(targets))
        clean = run.output.scan(/^check:targets: (\S+) clean/).flatten
        puts "\n== check:targets summary"
        targets.each { |target| puts "#{target}: #{clean.include?(target) ? 'clean' : 'FAILED'}" }
        puts "#{run.output[/^rustc .*$/]}; #{Rubies.duration(run.seconds)}, #{run.place}"
        abort "check:targets failed for #{(targets - clean).join(', ')}" unless run.success? && clean == targets
      end

      # Every target is checked even after one fails; the script fails if any did.
      def script(targets)
        checks = targets.map do |target|
          'started=$(date +%s); if RUSTC_BOOTSTRAP=1 cargo clippy --locked -p sass-embedded-core --all-targets ' \
            "-Zbuild-std=std,panic_abort --target #{target} --target-dir target/check-targets -- -D warnings; " \
            "then echo \"check:targets: #{target} clean in $(($(date +%s) - started))s\"; else failed=1; fi"
        end
        ['rustc --version', 'failed=0', *checks, 'exit $failed'].join('; ')
      end
    end
  end
end
