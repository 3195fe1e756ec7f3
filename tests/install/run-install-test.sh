#!/usr/bin/env bash
# Installs a built zyfa tree into a temporary prefix and checks what a user of that prefix gets:
#   - the files: zyfa.h, libzyfa.so -> libzyfa.so.0 -> libzyfa.so.0.1.0, the CMake package, zyfa.pc;
#   - pkg-config: `pkg-config --cflags --libs zyfa` builds the consumer (strict C99), which then
#     computes FP8 attention on the CPU backend and checks it against its own fp64 result;
#   - CMake: find_package(zyfa) + zyfa::zyfa builds and runs the same consumer; a request for
#     0.1 is accepted and one for 0.2 or 1.0 refused.
# Only the prefix is visible to the consumers: the source tree is never on an include path.
#
# usage: tests/install/run-install-test.sh <build-dir>     (CC picks the C compiler, default cc)
set -euo pipefail

if [[ $# -ne 1 || ! -d $1 ]]; then
  echo "usage: $0 <build-dir>" >&2
  exit 2
fi
build_dir=$(cd "$1" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cc=${CC:-cc}
work=$(mktemp -d /tmp/zyfa-install-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

step() { printf '\n== %s\n' "$*"; }
die() { echo "FAIL: $*" >&2; exit 1; }

step "cmake --install $build_dir --prefix $prefix"
cmake --install "$build_dir" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log"; die "cmake --install failed"; }

step "installed files"
pc_file=$(find "$prefix" -name zyfa.pc -path '*/pkgconfig/*' | head -n 1)
[[ -n $pc_file ]] || die "no pkgconfig/zyfa.pc under $prefix"
libdir=$(dirname "$(dirname "$pc_file")")
cmake_dir=$libdir/cmake/zyfa
for file in "$prefix/include/zyfa.h" "$libdir/libzyfa.so.0.1.0" "$cmake_dir/zyfaConfig.cmake" \
            "$cmake_dir/zyfaConfigVersion.cmake" "$cmake_dir/zyfaTargets.cmake"; do
  [[ -f $file ]] || die "missing $file"
done
[[ $(readlink "$libdir/libzyfa.so") == libzyfa.so.0 ]] || die "libzyfa.so does not link to libzyfa.so.0"
[[ $(readlink "$libdir/libzyfa.so.0") == libzyfa.so.0.1.0 ]] || die "libzyfa.so.0 does not link to libzyfa.so.0.1.0"
cmp -s "$prefix/include/zyfa.h" "$here/../../include/zyfa.h" || die "installed zyfa.h differs from include/zyfa.h"
# Nothing internal is installed: no static archive, no internal header.
if find "$prefix" \( -name '*.a' -o -name '*.hpp' \) | grep .; then die "internal files were installed"; fi
(cd "$prefix" && find . -type f -o -type l | sort)

step "pkg-config"
export PKG_CONFIG_PATH=$libdir/pkgconfig
cflags=$(pkg-config --cflags zyfa)
libs=$(pkg-config --libs zyfa)
echo "cflags: $cflags"
echo "libs:   $libs"
[[ $(pkg-config --variable=libdir zyfa) == "$libdir" ]] || die "zyfa.pc libdir is not $libdir"
[[ $(pkg-config --variable=includedir zyfa) == "$prefix/include" ]] || die "zyfa.pc includedir is not $prefix/include"
[[ " $libs " == *" -lzyfa "* ]] || die "pkg-config --libs lacks -lzyfa"
if pkg-config --libs --static zyfa | grep -iE 'hip|hsa|cuda'; then die "zyfa.pc names a GPU runtime"; fi
pc_version=$(pkg-config --modversion zyfa)

step "consumer built with pkg-config (C99, warnings are errors)"
# No grep -q after a pipe below: it exits at the first match, the writer gets SIGPIPE, and
# pipefail turns a found line into a failure (seen once in CI).
# shellcheck disable=SC2086  # the flags are word lists
"$cc" -std=c99 -pedantic-errors -Wall -Wextra -Werror $cflags "$here/consumer_attention.c" -o "$work/consumer_pkgconfig" \
      $libs -lm -Wl,-rpath,"$libdir"
# shellcheck disable=SC2086
"$cc" -std=c99 $cflags -M "$here/consumer_attention.c" | tr -d '\134' | tr ' ' '\n' | grep -x "$prefix/include/zyfa.h" >/dev/null \
  || die "the consumer did not read zyfa.h from the installed prefix"
ldd "$work/consumer_pkgconfig" | grep -F "$libdir/libzyfa.so.0" >/dev/null || { ldd "$work/consumer_pkgconfig"; die "the consumer does not load libzyfa.so.0 from $libdir"; }
"$work/consumer_pkgconfig" | tee "$work/pkgconfig.out"
grep -q "library $pc_version " "$work/pkgconfig.out" || die "zyfa.pc version $pc_version differs from the library's"

step "consumer built with find_package(zyfa) and zyfa::zyfa"
cmake -S "$here/cmake_consumer" -B "$work/cmake_consumer" -DCMAKE_PREFIX_PATH="$prefix" \
      -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=Release >"$work/cmake_consumer.log" \
  || { cat "$work/cmake_consumer.log"; die "configuring the CMake consumer failed"; }
cmake --build "$work/cmake_consumer" >>"$work/cmake_consumer.log" \
  || { cat "$work/cmake_consumer.log"; die "building the CMake consumer failed"; }
ldd "$work/cmake_consumer/zyfa_cmake_consumer" | grep -F "$libdir/libzyfa.so.0" >/dev/null \
  || { ldd "$work/cmake_consumer/zyfa_cmake_consumer"; die "the CMake consumer does not load libzyfa.so.0 from $libdir"; }
"$work/cmake_consumer/zyfa_cmake_consumer"

step "find_package version compatibility"
probe() {  # probe <requested version> <expect: found|refused>
  if cmake -S "$here/version_probe" -B "$work/probe-$1" -DCMAKE_PREFIX_PATH="$prefix" \
           -DZYFA_REQUESTED_VERSION="$1" >"$work/probe-$1.log" 2>&1; then
    result=found
  else
    result=refused
  fi
  echo "find_package(zyfa $1): $result (expected $2)"
  [[ $result == "$2" ]] || { cat "$work/probe-$1.log"; die "find_package(zyfa $1) was $result"; }
}
probe 0.1 found
probe 0.1.0 found
probe 0.2 refused
probe 1.0 refused

printf '\nPASS: install test (prefix %s)\n' "$prefix"
