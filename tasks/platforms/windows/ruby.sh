#!/bin/sh
# Run inside the Wine root (Debian trixie) by rake test:windows: makes, once,
# a Windows Ruby of each minor the gem carries under $PREFIX/ruby-<minor>,
# each remade only when this script changes (its checksum, and the Ruby's
# tarball's name, are its stamp), as RubyInstaller's Rubies are:
# x64-mingw-ucrt.
#
# - Cross-built with mingw-w64's UCRT toolchain (gcc-mingw-w64-ucrt64), the
#   C runtime RubyInstaller's Rubies (and so the gems built for them) use
#   since Ruby 3.1. Ruby's configure knows the host only as
#   x86_64-w64-mingw32 (its config.sub predates "mingw32ucrt"), so the UCRT
#   tools are put first on PATH under that prefix; configure then finds the
#   UCRT in what it links and names the arch x64-mingw-ucrt.
# - Trixie's toolchain (GCC 14, mingw-w64 12): sid's (GCC 16, mingw-w64 14)
#   does not build Ruby 3.3 (C23 ANYARGS, clock_gettime redefined).
# - Debian's upstream tarball of each minor (the task hands them over,
#   verified); zlib, libyaml, libffi and OpenSSL (its tarball also the
#   task's) built static with the same toolchain, once for all of them
#   (RubyGems needs zlib to unpack a gem, psych to read its specification,
#   openssl for its digests, and fiddle for the resolver it loads on
#   Windows); the root's own Ruby 3.3 is every minor's baseruby.
# - No bundled gems: the tarball does not carry their .gem files and
#   `make install` would download them. minitest and rake for the suite are
#   the root's own Debian packages (pure Ruby, read through GEM_PATH).
# - Its win32.c also finds the descriptor table of Wine's ucrtbase
#   (wine-pioinfo.c), without which it cannot start under Wine at all.
# - The toolchain's DLLs that Ruby's binaries import (libssp-0.dll: without
#   it ruby.exe exits 53 with no output) are copied beside ruby.exe.
#
# Usage: ruby.sh PREFIX OPENSSL_TARBALL MINOR=RUBY_TARBALL... (prints
# "windows ruby: ..." lines). A Ruby whose stamp is current (the task may
# have put it back from its cache) is kept.
set -eu
PREFIX=$1
OPENSSL=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
stamp=$( (cat "$0" "$here/wine-pioinfo.c"; basename "$OPENSSL") | sha256sum | cut -d' ' -f1)
ruby_stamp() { echo "$stamp $(basename "$1")"; }
started=$(date +%s)
timed() { s=$(date +%s); "$@"; echo "windows ruby: $1 ${2-} in $(( $(date +%s) - s )) s"; }
jobs=$(nproc)
triple=x86_64-w64-mingw32

sources() {
  cd "$PREFIX/src"
  apt-get update -qq
  apt-get source --download-only zlib libyaml libffi > apt-source.log 2>&1 || true
  for package in zlib libyaml libffi; do
    archive=$(ls "$package"_*.orig.tar.* 2>/dev/null | head -1)
    [ -n "$archive" ] || { cat apt-source.log; echo "no upstream tarball of $package"; exit 1; }
    tar xf "$archive"
  done
  tar xf "$OPENSSL"
}

# Debian's zlib tarball has no win32/ makefile, and libyaml's has no
# configure: both libraries' sources are compiled directly, static
# (YAML_DECLARE_STATIC, also given to Ruby's psych).
zlib() {
  cd "$PREFIX"/src/zlib-*/
  for file in *.c; do "$triple-gcc" -O2 -c "$file" -o "${file%.c}.o"; done
  "$triple-ar" rcs "$PREFIX/deps/lib/libz.a" ./*.o && cp zlib.h zconf.h "$PREFIX/deps/include/"
}

libyaml() {
  cd "$PREFIX"/src/libyaml-*/
  for file in src/*.c; do
    "$triple-gcc" -O2 -Iinclude -DYAML_DECLARE_STATIC -DYAML_VERSION_MAJOR=0 -DYAML_VERSION_MINOR=2 \
      -DYAML_VERSION_PATCH=5 '-DYAML_VERSION_STRING="0.2.5"' -c "$file" -o "${file%.c}.o"
  done
  "$triple-ar" rcs "$PREFIX/deps/lib/libyaml.a" src/*.o && cp include/yaml.h "$PREFIX/deps/include/"
}

# Debian's libffi tarball has no configure: autogen.sh makes it.
libffi() {
  cd "$PREFIX"/src/libffi-*/
  ./autogen.sh > build.log 2>&1 || { tail -30 build.log; exit 1; }
  ./configure --host=$triple --build=x86_64-pc-linux-gnu --prefix="$PREFIX/deps" --disable-shared \
    --enable-static --disable-docs >> build.log 2>&1 || { tail -30 build.log; exit 1; }
  # In the directory configure made for the host (the top-level makefile
  # also walks a build-machine directory that does not exist).
  make -j"$jobs" -C "$triple" >> build.log 2>&1 && make -C "$triple" install >> build.log 2>&1 ||
    { tail -40 build.log; exit 1; }
}

openssl() {
  cd "$PREFIX"/src/openssl-*/
  ./Configure mingw64 no-shared no-tests no-docs no-module --cross-compile-prefix="$triple-" \
    --prefix="$PREFIX/deps" --libdir=lib > build.log 2>&1 || { tail -30 build.log; exit 1; }
  make -j"$jobs" build_libs >> build.log 2>&1 || { tail -40 build.log; exit 1; }
  make install_dev >> build.log 2>&1 || { tail -40 build.log; exit 1; }
}

# Ruby MINOR from TARBALL, into $PREFIX/ruby-MINOR.
ruby() {
  minor=$1
  rm -rf "$PREFIX/ruby-$minor" "$PREFIX/src/ruby-$minor" "$PREFIX/build-$minor"
  source="$PREFIX/src/ruby-$minor"
  mkdir -p "$source" && tar xf "$2" -C "$source" --strip-components=1
  printf '# none: see tasks/rubies/windows/ruby.sh\n' > "$source/gems/bundled_gems"
  # Under Wine's ucrtbase a UCRT Ruby stops at once ("unexpected
  # ucrtbase.dll"): it finds the C runtime's descriptor table by reading
  # _isatty's machine code, which Wine compiles differently. One more search,
  # taken only under Wine (wine-pioinfo.c says which); the Ruby is otherwise
  # Ruby's own.
  /usr/bin/ruby3.3 -e 'file, snippet = ARGV; source = File.read(file)
    mark = %(    fprintf(stderr, "unexpected " UCRTBASE "\\n");)
    abort "no #{mark} in #{file}" unless source.include?(mark)
    File.write(file, source.sub(mark) { File.read(snippet) + mark })' "$source/win32/win32.c" "$here/wine-pioinfo.c"
  mkdir -p "$PREFIX/build-$minor" && cd "$PREFIX/build-$minor"
  "$source/configure" --host=$triple --target=$triple --build=x86_64-pc-linux-gnu --prefix="$PREFIX/ruby-$minor" \
    --enable-shared --disable-install-doc --disable-yjit --with-baseruby=/usr/bin/ruby3.3 \
    --with-opt-dir="$PREFIX/deps" CPPFLAGS=-DYAML_DECLARE_STATIC LDFLAGS="-pipe -s" > configure.log 2>&1 ||
    { tail -30 configure.log; exit 1; }
  arch=$(sed -n 's/^arch = //p' Makefile)
  if [ "$arch" != x64-mingw-ucrt ]; then
    grep -n 'msvcrt\|ucrt' configure.log config.log | tail -20
    echo "windows ruby: configure made arch '$arch', not x64-mingw-ucrt: the UCRT toolchain was not taken"; exit 1
  fi
  make -j"$jobs" > make.log 2>&1 || { tail -40 make.log; exit 1; }
  make install > install.log 2>&1 || { tail -40 install.log; exit 1; }
  grep -h 'Failed to configure\|failed to build\|skipped' make.log | sed 's/^/windows ruby: /' || true
  for ext in zlib psych openssl fiddle; do
    [ -f "$PREFIX/ruby-$minor/lib/ruby/$minor.0/x64-mingw-ucrt/$ext.so" ] ||
      { tail -20 "ext/$ext/mkmf.log"; echo "windows ruby: the $ext extension was not built"; exit 1; }
  done
  runtime_dlls "$PREFIX/ruby-$minor"
  # Its RbConfig read by the root's Ruby 3.3, which that file's version
  # check would refuse for another minor: it is told the Ruby's own version.
  /usr/bin/ruby3.3 --disable-gems -e 'dir = ARGV.fetch(0)
    version = File.read(File.join(dir, "rbconfig.rb"))[/ruby lib version \(([^)]+)\)/, 1] or abort "#{dir}: no version"
    Object.send(:remove_const, :RUBY_VERSION)
    Object.const_set(:RUBY_VERSION, version)
    $LOAD_PATH.unshift(dir)
    require "rbconfig"
    print RbConfig::CONFIG.values_at("RUBY_PROGRAM_VERSION", "arch", "LIBRUBY_SO").join(" ")' \
    "$PREFIX/ruby-$minor/lib/ruby/$minor.0/x64-mingw-ucrt" > "$PREFIX/ruby-$minor/version"
  ruby_stamp "$2" > "$PREFIX/ruby-$minor/stamp"
}

# Every DLL the binaries of the Ruby in $1 import that the toolchain has
# (and Windows has not), copied beside its ruby.exe.
runtime_dlls() {
  bin="$1/bin"
  imported=$(find "$1" -name '*.exe' -o -name '*.dll' -o -name '*.so' | while read -r binary; do
    "$triple-objdump" -p "$binary" | sed -n 's/^\s*DLL Name: //p'; done | sort -u)
  for dll in $imported; do
    [ -f "$bin/$dll" ] && continue
    found=$(find /usr/lib/gcc/"$triple"ucrt /usr/"$triple"ucrt -iname "$dll" 2>/dev/null | head -1)
    [ -n "$found" ] && cp "$found" "$bin/" && echo "windows ruby: $dll from $found"
  done
  if "$triple-objdump" -p "$bin/ruby.exe" "$bin"/*ruby*.dll | grep -qi 'DLL Name: msvcrt.dll'; then
    echo "windows ruby: ruby imports msvcrt.dll, not the UCRT"; exit 1
  fi
}

# The libraries every Ruby links, once (their stamp is this script's).
deps() {
  [ "$(cat "$PREFIX/deps/stamp" 2>/dev/null)" = "$stamp" ] && return
  rm -rf "$PREFIX/src" "$PREFIX/deps"
  mkdir -p "$PREFIX/src" "$PREFIX/deps/lib" "$PREFIX/deps/include"
  timed sources
  timed zlib
  timed libyaml
  timed libffi
  timed openssl
  echo "$stamp" > "$PREFIX/deps/stamp"
}

# The UCRT tools under the prefix configure knows.
mkdir -p "$PREFIX/tools"
for tool in /usr/bin/"$triple"ucrt-*; do
  ln -sf "$tool" "$PREFIX/tools/$(basename "$tool" | sed "s/^${triple}ucrt-/$triple-/")"
done
export PATH="$PREFIX/tools:$PATH"

for pair in "$@"; do
  minor=${pair%%=*}
  if [ "$(cat "$PREFIX/ruby-$minor/stamp" 2>/dev/null)" = "$(ruby_stamp "${pair#*=}")" ]; then
    echo "windows ruby: cached in $PREFIX/ruby-$minor ($(cat "$PREFIX/ruby-$minor/version"))"
    continue
  fi
  deps
  timed ruby "$minor" "${pair#*=}"
  echo "windows ruby: made in $PREFIX/ruby-$minor ($(cat "$PREFIX/ruby-$minor/version"))"
done
echo "windows ruby: $# Rubies in $(( $(date +%s) - started )) s"
