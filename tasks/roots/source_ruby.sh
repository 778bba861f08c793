#!/bin/sh
# Run inside a root that needs a Ruby Debian does not package for it (the
# old-glibc root's 3.3, rake test:old_glibc; a port's minor Debian lacks for
# its architecture, tasks/platforms/ports/ports.rb): makes, once, a Ruby of
# the minor the tarball holds under $PREFIX, remade only when this script or
# the tarball changes (their checksum is the stamp). Built against the
# root's glibc, OpenSSL, libyaml, zlib and libffi, without a base Ruby (with
# one, `make install` would download the bundled gems, and the tarball
# carries them: minitest and rake among them).
#
# Usage: source_ruby.sh PREFIX TARBALL (prints "source ruby: ..." lines).
set -eu
PREFIX=$1
TARBALL=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
stamp=$( (cat "$0"; basename "$TARBALL") | sha256sum | cut -d' ' -f1)
if [ "$(cat "$PREFIX/stamp" 2>/dev/null)" = "$stamp" ]; then
  echo "source ruby: cached in $PREFIX ($("$PREFIX/bin/ruby" -v))"
  exit 0
fi
rm -rf "$PREFIX" "$PREFIX.src"
mkdir -p "$PREFIX.src"
started=$(date +%s)
cd "$PREFIX.src"
tar xf "$TARBALL"
cd ruby-*/
./configure --prefix="$PREFIX" --enable-shared --disable-install-doc --without-baseruby > configure.log 2>&1 ||
  { tail -30 configure.log; exit 1; }
make -j"$(nproc)" > make.log 2>&1 || { tail -40 make.log; exit 1; }
make install > install.log 2>&1 || { tail -40 install.log; exit 1; }
cd / && rm -rf "$PREFIX.src"
echo "$stamp" > "$PREFIX/stamp"
echo "source ruby: made in $PREFIX in $(( $(date +%s) - started )) s ($("$PREFIX/bin/ruby" -v))"
