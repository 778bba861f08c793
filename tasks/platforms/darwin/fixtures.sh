#!/bin/sh
# Run inside the darwin root after build.sh (which makes the kit): links the
# small Mach-O fixtures of test/mach_o_test.rb from
# test/fixtures/mach_o/bundle.c with the real bundle's linker and flags,
# into that directory. Usage: fixtures.sh PREFIX
set -eu
PREFIX=$1
here=$(cd "$(dirname "$0")" && pwd)
fixtures=$(cd "$here/../../../test/fixtures/mach_o" && pwd)
link() { # CPU DEPLOYMENT_TARGET OUTPUT FLAGS...
  cpu=$1 target=$2 output=$3; shift 3
  MACOSX_DEPLOYMENT_TARGET=$target "$PREFIX/bin/lld-cc-$cpu" -O2 -dynamiclib -o "$fixtures/$output" \
    -Wl,-undefined,dynamic_lookup -Wl,-S -Wl,-exported_symbol,_Init_sass_embedded "$@" "$fixtures/bundle.c"
  echo "fixture $output: $(wc -c < "$fixtures/$output") bytes"
}
link aarch64 11.0 arm64.bundle
link x86_64 10.12 x86_64.bundle
link aarch64 11.0 stray-arm64.bundle -DSTRAY -lobjc
