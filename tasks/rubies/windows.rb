# frozen_string_literal: true

module SassEmbeddedRubies
  # rake test:windows_core: the Ruby-free core's tests built for Windows
  # (x86_64-pc-windows-gnu) in a Debian sid root, with sid's rustc, std from
  # its rust-src and mingw-w64's UCRT toolchain as the linker, then run under
  # Wine 10 in a Debian trixie root (bookworm's Wine 8 lacks
  # bcryptprimitives.dll, which Rust's std imports).
  WINDOWS_BUILD = Ruby.new(minor: '3.3', suite: 'sid', extra_suites: [], purpose: 'windows',
                           packages: %w[ruby3.3 rustc cargo rust-src gcc-mingw-w64-ucrt64 binutils-mingw-w64-x86-64],
                           label: "Debian sid's Rust for Windows")
  WINE = Ruby.new(minor: '3.3', suite: 'trixie', extra_suites: [], purpose: 'wine',
                  packages: %w[ruby3.3 wine64 wine], label: "Debian trixie's Wine 10")
end
