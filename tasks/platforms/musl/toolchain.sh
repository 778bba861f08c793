#!/bin/sh
# Run inside a musl root (rake test:musl, test:musl_arm64): makes, once, what
# building and testing for the root's CPU's musl gem needs there, each part under $PREFIX and
# remade only when this script changes (its checksum is the stamp; a Ruby's
# stamp adds its tarball's name, so adding a minor builds only its Ruby):
#
# - a musl Ruby per minor the gem carries ($PREFIX/ruby-<minor>, from
#   Debian's upstream tarball of it, which the task verifies), built with
#   musl-gcc against zlib, libyaml and OpenSSL also built with musl-gcc,
#   with no base Ruby:
#   shared libruby, no
#   YJIT (its Rust would link glibc's std), crypt_r off (musl-dev has no
#   crypt.h). Unpatched: Ruby's main thread keeps the small machine stack
#   musl reports for it (Ruby bug 14387), as on every musl Ruby but the
#   official Alpine images.
# - "-lgcc_s" for the musl cdylib: Rust's unwinder links gcc_s once the C
#   runtime is dynamic, and Debian has it for glibc only. LLVM's static
#   libunwind (Debian's libunwind-<N>-dev, unpacked, not installed) stands in,
#   with the two glibc fortify functions it calls (fortify-shim.c), named
#   by a linker script installed as libgcc_s.so.
#
# Usage: toolchain.sh PREFIX OPENSSL_TARBALL MINOR=RUBY_TARBALL... (prints
# "musl toolchain: ..." lines). The tarballs come verified from the task:
# the mirror's sid and trixie indexes name tarballs it no longer keeps.
# SASS_MUSL_CC, if set, is the C compiler for zlib, libyaml, OpenSSL and the
# Rubies instead of musl-gcc (zig-cc in an emulated root).
set -eu
PREFIX=$1
OPENSSL=$2
shift 2
cc=${SASS_MUSL_CC:-musl-gcc}
here=$(cd "$(dirname "$0")" && pwd)
stamp=$( (cat "$0" "$here/fortify-shim.c"; basename "$OPENSSL"; basename "$cc") | sha256sum | cut -d' ' -f1)
jobs=$(nproc)
timed() { s=$(date +%s); "$@"; echo "musl toolchain: $1 ${2-} in $(( $(date +%s) - s )) s"; }
ruby_stamp() { echo "$stamp $(basename "$1")"; }

# Every Ruby current: nothing to make.
current=1
for pair in "$@"; do
  [ "$(cat "$PREFIX/ruby-${pair%%=*}/stamp" 2>/dev/null)" = "$(ruby_stamp "${pair#*=}")" ] || current=0
done
if [ "$(cat "$PREFIX/stamp" 2>/dev/null)" = "$stamp" ] && [ $current = 1 ]; then
  for pair in "$@"; do
    echo "musl toolchain: cached in $PREFIX ($("$PREFIX/ruby-${pair%%=*}/bin/ruby" -v))"
  done
  exit 0
fi
started=$(date +%s)
sources() {
  cd "$PREFIX/src"
  apt-get update -qq
  # The mirror may lack a .dsc or a Debian diff (apt-get then fails): only
  # the upstream tarballs are used, so only they must be there.
  apt-get source --download-only zlib libyaml > apt-source.log 2>&1 || true
  for package in zlib libyaml; do
    archive=$(ls "$package"_*.orig.tar.* 2>/dev/null | head -1)
    [ -n "$archive" ] || { cat apt-source.log; echo "no upstream tarball of $package"; exit 1; }
    tar xf "$archive"
  done
  tar xf "$OPENSSL"
}

zlib() {
  cd "$PREFIX"/src/zlib-*/
  CC=$cc CFLAGS="-O2 -fPIC" ./configure --static --prefix="$PREFIX/deps" > build.log 2>&1
  make -j"$jobs" >> build.log 2>&1 && make install >> build.log 2>&1
}

# libyaml's upstream tarball has no configure (autogen needs autotools): its
# sources are compiled directly.
libyaml() {
  cd "$PREFIX"/src/libyaml-*/
  for file in src/*.c; do
    $cc -O2 -fPIC -Iinclude -DYAML_VERSION_MAJOR=0 -DYAML_VERSION_MINOR=2 -DYAML_VERSION_PATCH=5 \
      '-DYAML_VERSION_STRING="0.2.5"' -c "$file" -o "${file%.c}.o"
  done
  ar rcs "$PREFIX/deps/lib/libyaml.a" src/*.o && cp include/yaml.h "$PREFIX/deps/include/"
}

# OpenSSL, static, for Ruby's openssl extension: RubyGems needs it to build
# or install any gem. musl-gcc sees musl's headers alone; the kernel's
# (linux/, asm/, from Debian's linux-libc-dev) are added on their own.
# OpenSSL names its Linux targets by the CPU (linux-x86_64, linux-aarch64;
# 32-bit ARM's, whatever the ARM version, is linux-armv4).
openssl() {
  case $(uname -m) in
    arm*) target=linux-armv4 ;;
    *) target=linux-$(uname -m) ;;
  esac
  headers="$PREFIX/kernel-headers"
  mkdir -p "$headers"
  ln -sfn /usr/include/linux "$headers/linux"
  ln -sfn "/usr/include/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/asm" "$headers/asm"
  ln -sfn /usr/include/asm-generic "$headers/asm-generic"
  cd "$PREFIX"/src/openssl-*/
  ./Configure "$target" no-shared no-tests no-docs no-afalgeng no-module CC="$cc" -fPIC \
    -isystem "$headers" --prefix="$PREFIX/deps" --libdir=lib > build.log 2>&1 || { tail -30 build.log; exit 1; }
  make -j"$jobs" build_libs >> build.log 2>&1 || { tail -40 build.log; exit 1; }
  make install_dev >> build.log 2>&1 || { tail -40 build.log; exit 1; }
}

# Ruby MINOR from TARBALL, into $PREFIX/ruby-MINOR.
ruby() {
  minor=$1
  rm -rf "$PREFIX/ruby-$minor" "$PREFIX/src/ruby-$minor"
  mkdir -p "$PREFIX/src/ruby-$minor"
  cd "$PREFIX/src/ruby-$minor"
  tar xf "$2" --strip-components=1
  # Without a base Ruby (the root's glibc one would be taken), as from a
  # bare system: with one, `make install` downloads the bundled gems' .gem
  # files, and the root has no network for that. The tarball carries them.
  # With zig, config.guess (which compiles with the root's gcc) would name
  # the system glibc's (`aarch64-linux`): the triple is given, the same for
  # build and host, so that it is no cross build.
  ./configure CC="$cc" ${SASS_MUSL_ZIG_TARGET:+--build=$SASS_MUSL_ZIG_TARGET --host=$SASS_MUSL_ZIG_TARGET} \
    --prefix="$PREFIX/ruby-$minor" --enable-shared --disable-install-doc --disable-yjit \
    --without-baseruby --with-opt-dir="$PREFIX/deps" ac_cv_func_crypt_r=no > configure.log 2>&1 ||
    { tail -30 configure.log; exit 1; }
  make -j"$jobs" > make.log 2>&1 || { tail -40 make.log; exit 1; }
  make install > install.log 2>&1 || { tail -40 install.log; exit 1; }
  ruby_stamp "$2" > "$PREFIX/ruby-$minor/stamp"
}

unwinder() {
  llvm=$(ls -d /usr/lib/llvm-[0-9]* | sort -V | tail -1)
  version=${llvm##*-}
  cd "$PREFIX/unwind"
  apt-get download "libunwind-$version-dev" > download.log 2>&1 || { cat download.log; exit 1; }
  dpkg-deb -x libunwind-*.deb llvm
  musl-gcc -O2 -fPIC -c "$here/fortify-shim.c" -o fortify-shim.o
  ar rcs libfortify_shim.a fortify-shim.o
  printf 'INPUT(%s %s)\n' "$PREFIX/unwind/llvm/usr/lib/llvm-$version/lib/libunwind.a" \
    "$PREFIX/unwind/libfortify_shim.a" > libgcc_s.so
}

# The libraries the Rubies link and the unwinder, unless current.
if [ "$(cat "$PREFIX/stamp" 2>/dev/null)" != "$stamp" ]; then
  rm -rf "$PREFIX"
  mkdir -p "$PREFIX/src" "$PREFIX/deps/lib" "$PREFIX/deps/include" "$PREFIX/unwind"
  timed sources
  timed zlib
  timed libyaml
  timed openssl
  timed unwinder
  echo "$stamp" > "$PREFIX/stamp"
fi
for pair in "$@"; do
  minor=${pair%%=*}
  [ "$(cat "$PREFIX/ruby-$minor/stamp" 2>/dev/null)" = "$(ruby_stamp "${pair#*=}")" ] ||
    timed ruby "$minor" "${pair#*=}"
  echo "musl toolchain: $PREFIX/ruby-$minor: $("$PREFIX/ruby-$minor/bin/ruby" -v)"
done
echo "musl toolchain: made in $PREFIX in $(( $(date +%s) - started )) s"
