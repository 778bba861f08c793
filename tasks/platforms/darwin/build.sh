#!/bin/sh
# Run inside the darwin root (rake native:darwin): cross-builds the extension
# for macOS, for each CPU and each Ruby minor, into OUT/<cpu>-<minor>/.
#
# Made once under PREFIX and remade only when this directory's scripts or
# the zig wheel change (their checksum is the stamp):
# - zig (the wheel's static binary): its darwin libc headers and
#   libSystem.tbd make the SDK; `zig cc` configures the Rubies;
# - the SDK for LLVM's ld64.lld (the extension's linker): zig's headers, its
#   libSystem.tbd made readable by LLVM (lld_tbd.rb), stubs for libobjc and
#   libiconv (Ruby's configure links -lobjc; the libc crate links -liconv),
#   which macOS has in /usr/lib;
# - per minor and CPU, a Ruby of Debian's upstream source configured for
#   macOS (config.h and rbconfig.rb only: nothing of it runs), and a wrapper
#   that rb-sys runs as RUBY: the root's Ruby of that minor reading that
#   rbconfig.rb.
# The extension then builds as extconf.rb builds it on a Mac (`cargo rustc
# --lib -- -C link-arg=-Wl,-undefined,dynamic_lookup`), with std from sid's
# rust-src and -Wl,-S (no debug symbols: stripping after the link would void
# the arm64 signature). One cargo target directory per minor, so that a run
# with nothing changed rebuilds nothing.
#
# Usage: build.sh PREFIX ZIG_WHEEL OUT "CPU:DEPLOYMENT_TARGET ..." RUBY_TARBALL...
# (one verified upstream tarball per minor, rubyM.N_*.orig.tar.xz, fetched by the task)
set -eu
PREFIX=$1 WHEEL=$2 OUT=$3 CPUS=$4
shift 4
MINORS=
for tarball in "$@"; do
  name=$(basename "$tarball")
  minor=${name#ruby}; minor=${minor%%_*}
  MINORS="$MINORS $minor"
done
here=$(cd "$(dirname "$0")" && pwd)
checkout=$(cd "$here/../../.." && pwd)
llvm=$(ls -d /usr/lib/llvm-[0-9]* | sort -V | tail -1)
jobs=${CARGO_BUILD_JOBS:-$(nproc)}
# The kit's inputs; a Ruby's configuration is remade when its own change.
stamp=$( (cd "$here" && cat zig-cc lld-cc lld_tbd.rb libobjc.tbd libiconv.tbd; basename "$WHEEL"; echo "$llvm $*") \
  | sha256sum | cut -d' ' -f1)

kit() {
  rm -rf "$PREFIX"
  mkdir -p "$PREFIX/bin" "$PREFIX/stubs" "$PREFIX/sdk/usr/lib" "$PREFIX/src"
  unzip -q "$WHEEL" 'ziglang/*' -d "$PREFIX/wheel"
  mv "$PREFIX/wheel/ziglang" "$PREFIX/zig" && rm -rf "$PREFIX/wheel"
  chmod +x "$PREFIX/zig/zig"
  libc=$PREFIX/zig/lib/libc
  cp "$here/libobjc.tbd" "$here/libiconv.tbd" "$PREFIX/stubs/"
  ln -s "$libc/include/any-darwin-any" "$PREFIX/sdk/usr/include"
  ruby3.3 "$here/lld_tbd.rb" "$libc/darwin/libSystem.tbd" "$PREFIX/sdk/usr/lib/libSystem.tbd"
  cp "$here/libobjc.tbd" "$here/libiconv.tbd" "$PREFIX/sdk/usr/lib/"
  for name in c m pthread dl; do ln -s libSystem.tbd "$PREFIX/sdk/usr/lib/lib$name.tbd"; done
  printf '{"Version":"15.0","CanonicalName":"macosx15.0","MaximumDeploymentTarget":"15.0.99"}\n' \
    > "$PREFIX/sdk/SDKSettings.json"
  echo "$llvm" > "$PREFIX/llvm"
  for cpu in aarch64 x86_64; do
    cp "$here/zig-cc" "$PREFIX/bin/zig-cc-$cpu"
    cp "$here/lld-cc" "$PREFIX/bin/lld-cc-$cpu"
  done
  # rustc strips Apple cdylibs with rust-objcopy, which Debian's rustc lacks.
  ln -s "$llvm/bin/llvm-objcopy" "$PREFIX/bin/rust-objcopy"
  for tarball in "$@"; do tar xf "$tarball" -C "$PREFIX/src"; done
  echo "$stamp" > "$PREFIX/stamp"
}

# config.h and rbconfig.rb of Ruby $minor for $cpu, and the RUBY wrapper.
configure_ruby() {
  minor=$1 cpu=$2 target=$3
  build=$PREFIX/ruby/$minor-$cpu
  source=$(ls -d "$PREFIX"/src/ruby-"$minor".* | head -1)
  inputs="$source $target"
  [ -f "$build/rbconfig.rb" ] && [ "$(cat "$build/inputs" 2>/dev/null)" = "$inputs" ] && return 0
  rm -rf "$build"; mkdir -p "$build"; cd "$build"
  started=$(date +%s)
  if ! MACOSX_DEPLOYMENT_TARGET=$target "$source/configure" --host="$cpu-apple-darwin" --build=x86_64-pc-linux-gnu \
      --prefix="/opt/ruby-$minor" --with-baseruby="/usr/bin/ruby$minor" --enable-shared --disable-install-doc \
      --disable-jit-support --without-gmp CC="$PREFIX/bin/zig-cc-$cpu" CXX=false AR="$PREFIX/zig/zig ar" \
      RANLIB="$PREFIX/zig/zig ranlib" NM="$llvm/bin/llvm-nm" STRIP="$llvm/bin/llvm-strip" \
      OBJDUMP="$llvm/bin/llvm-objdump" OBJCOPY="$llvm/bin/llvm-objcopy" > configure.log 2>&1 \
    || ! make rbconfig.rb > make.log 2>&1; then
    tail -30 configure.log make.log 2>/dev/null; rm -f rbconfig.rb
    echo "darwin: configuring Ruby $minor for $cpu failed"; exit 1
  fi
  echo "$inputs" > inputs
  printf '#!/bin/sh\nexec /usr/bin/ruby%s -I%s "$@"\n' "$minor" "$build" > "$PREFIX/bin/ruby-$minor-$cpu"
  chmod +x "$PREFIX/bin/ruby-$minor-$cpu"
  echo "darwin: Ruby $(basename "$source") configured for $cpu-apple-darwin in $(( $(date +%s) - started )) s"
}

build() {
  minor=$1 cpu=$2 target=$3
  triple=$cpu-apple-darwin
  under=$(echo "$triple" | tr - _)
  upper=$(echo "$under" | tr a-z A-Z)
  build=$PREFIX/ruby/$minor-$cpu
  source=$(ls -d "$PREFIX"/src/ruby-"$minor".* | head -1)
  arch=$(/usr/bin/ruby"$minor" -I"$build" -rrbconfig -e 'print RbConfig::CONFIG["arch"]')
  started=$(date +%s)
  cd "$checkout"
  env RUSTC_BOOTSTRAP=1 CARGO_BUILD_JOBS="$jobs" MACOSX_DEPLOYMENT_TARGET="$target" \
    PATH="$PREFIX/bin:$PATH" SDKROOT="$PREFIX/sdk" RUBY="$PREFIX/bin/ruby-$minor-$cpu" \
    RBCONFIG_rubyhdrdir="$source/include" RBCONFIG_rubyarchhdrdir="$build/.ext/include/$arch" \
    LIBCLANG_PATH="$llvm/lib" "BINDGEN_EXTRA_CLANG_ARGS_$under=-isysroot $PREFIX/sdk" \
    "CARGO_TARGET_${upper}_LINKER=$PREFIX/bin/lld-cc-$cpu" "CC_$under=$PREFIX/bin/zig-cc-$cpu" \
    "AR_$under=$PREFIX/zig/zig ar" \
    cargo rustc --lib --release --locked --manifest-path ext/sass_embedded/Cargo.toml \
      -Zbuild-std=std,panic_unwind --target "$triple" --target-dir "target/darwin/$minor" \
      -- -C link-arg=-Wl,-undefined,dynamic_lookup -C link-arg=-Wl,-S
  mkdir -p "$OUT/$cpu-$minor"
  cp "target/darwin/$minor/$triple/release/libsass_embedded.dylib" "$OUT/$cpu-$minor/sass_embedded.bundle"
  # What the task checks the gem's layout against (DLEXT, arch).
  cp "$build/rbconfig.rb" "$OUT/$cpu-$minor/"
  echo "darwin: built $OUT/$cpu-$minor/sass_embedded.bundle for Ruby $minor ($arch) in $(( $(date +%s) - started )) s"
}

if [ "$(cat "$PREFIX/stamp" 2>/dev/null)" != "$stamp" ]; then
  started=$(date +%s); kit "$@"; echo "darwin: kit made in $PREFIX in $(( $(date +%s) - started )) s"
else
  echo "darwin: kit cached in $PREFIX"
fi
# The root's toolchain is sid's when the root was made (remade only when
# its packages change): say which.
rustc --version
"$PREFIX/zig/zig" version | sed 's/^/zig /'
"$llvm/bin/ld.lld" --version | head -1 | sed 's/^/ld64.lld: /'
for pair in $CPUS; do
  for minor in $MINORS; do configure_ruby "$minor" "${pair%%:*}" "${pair#*:}"; done
done
for pair in $CPUS; do
  for minor in $MINORS; do build "$minor" "${pair%%:*}" "${pair#*:}"; done
done
