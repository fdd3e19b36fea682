#!/bin/sh
# cmake --install into a scratch prefix, then build tests/install/example.c as a user would:
# `cc example.c $(pkg-config --cflags --libs diaseg)`, shared and --static, and run both.
#   check_install.sh BUILD_DIR SOURCE_DIR
set -e
build=$1 src=$2
prefix=$(mktemp -d "${TMPDIR:-/tmp}/diaseg-install.XXXXXX")
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
pc=$(dirname "$(find "$prefix" -name diaseg.pc)")
export PKG_CONFIG_PATH="$pc"
for h in diaseg.h dsg_base.h; do
  test -f "$prefix/include/diaseg/$h" || { echo "FAILED: $h not installed"; exit 1; }
done
# cmake --install copies the header from the source tree and the libraries from the build tree,
# keeping their times. A header newer than the libraries is a build that is not up to date: a
# program compiled against it may lay out dsg_options differently from the library (a field
# added before matvec made the library read the example's matvec as kernel: "kernel 'cpu' is
# not one of ..."). Say so instead of failing on the symptom.
libdir=$(pkg-config --variable=libdir diaseg)
for lib in libdiaseg.so libdiaseg.a; do
  if [ "$prefix/include/diaseg/diaseg.h" -nt "$libdir/$lib" ]; then
    echo "FAILED: $build holds a $lib older than app/lib/diaseg.h: rebuild" \
         "(cmake --build $build), then run this check again"
    exit 1
  fi
done
cc -std=c11 -Wall -Werror "$src/tests/install/example.c" -o "$prefix/example" \
  $(pkg-config --cflags --libs diaseg)
LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  "$prefix/example"
cc -std=c11 -Wall -Werror "$src/tests/install/example.c" -o "$prefix/example_static" \
  $(pkg-config --cflags diaseg) "$(pkg-config --variable=libdir diaseg)/libdiaseg.a" \
  $(pkg-config --static --libs diaseg | sed 's/-ldiaseg\b//')
"$prefix/example_static"
# the shared library exports the public API only
if nm -D --defined-only "$(pkg-config --variable=libdir diaseg)/libdiaseg.so" | awk '{print $3}' \
   | grep -v '^dsg_' | grep -q .; then
  echo "FAILED: libdiaseg.so exports symbols outside dsg_*"; exit 1
fi
echo "install: headers, pkg-config, shared and static builds of a user program: ok"
