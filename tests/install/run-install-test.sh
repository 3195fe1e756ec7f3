#!/usr/bin/env bash
# Installs a built zyfa tree into a temporary prefix and checks what a user of that prefix gets:
#   - the files: zyfa.h, libzyfa.so -> libzyfa.so.0 -> libzyfa.so.0.1.0, the CMake package, zyfa.pc;
#   - pkg-config: `pkg-config --cflags --libs zyfa` builds the consumer (strict C99), which then
#     computes FP8 attention on the CPU backend and checks it against its own fp64 result;
#   - CMake: find_package(zyfa) + zyfa::zyfa builds and runs the same consumer; a request for
#     0.1 is accepted and one for 0.2 or 1.0 refused;
#   - the documented commands, as a user copies them: the fenced blocks that follow a
#     `<!-- install-test: NAME -->` line in README.md (pkg-config, CMake) and docs/bindings.md
#     (Rust with cargo, Go with its replace directive) are written to files or run in a shell as
#     they stand, with only /opt/zyfa replaced by the test's prefix and /path/to/zyfa by the
#     source tree, and with LD_LIBRARY_PATH unset, so each program must find libzyfa.so.0 by the
#     rpath the commands give it. Rust and Go are skipped (said so) without cargo or go.
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
source_dir=$(cd "$here/../.." && pwd)
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

# --- the commands of README.md and docs/bindings.md, as shown ------------------------------------
# doc_block FILE NAME: the body of the fenced block after the line "<!-- install-test: NAME -->".
doc_block() {
  local text
  text=$(awk -v marker="<!-- install-test: $2 -->" '
    $0 == marker { state = 1; next }
    state == 1 && /^```/ { state = 2; next }
    state == 1 && NF { exit }
    state == 2 && /^```/ { exit }
    state == 2 { print }' "$1")
  [[ -n $text ]] || die "no fenced block after '<!-- install-test: $2 -->' in $1"
  printf '%s\n' "$text"
}
# The one change the test makes to what a reader copies: its own prefix and source tree.
as_tested() { sed -e "s|/opt/zyfa|$prefix|g" -e "s|/path/to/zyfa|$source_dir|g"; }
# doc_file FILE NAME DEST: the block written to DEST.
doc_file() { mkdir -p "$(dirname "$3")" && doc_block "$1" "$2" | as_tested >"$3"; }
# doc_run FILE NAME DIR [VAR=VALUE...]: the block's commands run by bash in DIR, as a user's shell
# would (-e: every command must succeed), with none of the variables that could stand in for the
# ones the commands set, and the extra VAR=VALUE (caches, offline switches) only.
doc_run() {
  local file=$1 name=$2 dir=$3 script
  shift 3
  script=$(doc_block "$file" "$name" | as_tested)
  printf '%s\n' "$script" | sed 's/^/  $ /'
  if ! (cd "$dir" && env -u LD_LIBRARY_PATH -u PKG_CONFIG_PATH -u ZYFA_LIB_DIR -u ZYFA_INCLUDE_DIR \
          -u CGO_LDFLAGS -u CGO_CFLAGS -u RUSTFLAGS -u CARGO_BUILD_RUSTFLAGS -u CARGO_ENCODED_RUSTFLAGS \
          -u CMAKE_PREFIX_PATH "$@" bash -euo pipefail -c "$script") 2>&1 | tee "$dir.out"; then
    die "the '$name' commands of $file failed (in $dir)"
  fi
}
# loads_from BINARY: the binary's libzyfa.so.0 is the installed one.
loads_from() {
  ldd "$1" | grep -F "$libdir/libzyfa.so.0" >/dev/null || { ldd "$1"; die "$1 does not load libzyfa.so.0 from $libdir"; }
}
readme=$source_dir/README.md
bindings_md=$source_dir/docs/bindings.md
[[ $libdir == "$prefix/lib" ]] || die "the documented commands name /opt/zyfa/lib, but this build installs into $libdir"

step "README.md, Linking: pkg-config"
mkdir -p "$work/readme-pkgconfig"
cp "$source_dir/examples/attention_example.c" "$work/readme-pkgconfig/app.c"
doc_run "$readme" pkg-config "$work/readme-pkgconfig"
loads_from "$work/readme-pkgconfig/app"

step "README.md, Linking: CMake"
mkdir -p "$work/readme-cmake"
cp "$source_dir/examples/attention_example.c" "$work/readme-cmake/app.c"
doc_file "$readme" cmake-lists "$work/readme-cmake/CMakeLists.txt"
doc_run "$readme" cmake-run "$work/readme-cmake"
loads_from "$work/readme-cmake/build/app"

step "docs/bindings.md, Rust: a crate of your own"
# rustup installs into ~/.cargo/bin, which a non-login shell (CI) may not have on PATH.
command -v cargo >/dev/null || { [[ -x $HOME/.cargo/bin/cargo ]] && export PATH=$HOME/.cargo/bin:$PATH; }
if command -v cargo >/dev/null; then
  app=$work/rust-app
  doc_file "$bindings_md" rust-cargo-toml "$app/Cargo.toml"
  doc_file "$bindings_md" rust-config-toml "$app/.cargo/config.toml"
  doc_file "$bindings_md" rust-main "$app/src/main.rs"
  doc_run "$bindings_md" rust-run "$app" CARGO_TARGET_DIR="$work/rust-target" CARGO_NET_OFFLINE=true
  grep -q 'o\[0\] = 1$' "$app.out" || die "the Rust program printed no o[0] = 1"
  loads_from "$work/rust-target/debug/app"
else
  echo "skipped: no cargo on PATH"
fi

step "docs/bindings.md, Go: a module of your own"
if command -v go >/dev/null; then
  app=$work/go-app
  doc_file "$bindings_md" go-mod "$app/go.mod"
  doc_file "$bindings_md" go-main "$app/main.go"
  doc_run "$bindings_md" go-run "$app" GOCACHE="$work/gocache" GOPATH="$work/gopath" GOPROXY=off GOFLAGS=
  grep -q 'o\[0\] = 1$' "$app.out" || die "the Go program printed no o[0] = 1"
else
  echo "skipped: no go on PATH"
fi

printf '\nPASS: install test (prefix %s)\n' "$prefix"
