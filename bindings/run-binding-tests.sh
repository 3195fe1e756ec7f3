#!/usr/bin/env bash
# run-binding-tests.sh LANGUAGE LIBDIR INCLUDEDIR PKGCONFIGDIR WORKDIR
# Runs one binding's test suite (python, rust or go) against the libzyfa.so in LIBDIR, building
# in WORKDIR. Exit 77 with one line saying why when the language's toolchain is missing (CTest
# reports it as skipped). Used by bindings/CMakeLists.txt; runnable by hand, e.g.
#   bindings/run-binding-tests.sh python build . build/bindings/pkgconfig /tmp/zyfa-py
set -euo pipefail
language=$1 libdir=$(cd "$2" && pwd) includedir=$(cd "$3" && pwd) pcdir=$4 work=$5
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$work"
work=$(cd "$work" && pwd)
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PKG_CONFIG_PATH="$pcdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"

skip() { echo "SKIPPED bindings_$language: $*"; exit 77; }

case $language in
python)
  # The first interpreter that has numpy and pytest: $ZYFA_PYTHON, python3 on PATH (may be a
  # pyenv one), then Debian's /usr/bin/python3 (python3-numpy python3-pytest).
  py=
  for candidate in "${ZYFA_PYTHON:-}" python3 /usr/bin/python3; do
    if [[ -n $candidate ]] && command -v "$candidate" >/dev/null &&
       "$candidate" -c 'import numpy, pytest' 2>/dev/null; then
      py=$(command -v "$candidate"); break
    fi
  done
  [[ -n $py ]] || skip "no python3 with numpy and pytest (Debian: python3-numpy python3-pytest)"
  # The package's .py files, copied into a folder on PYTHONPATH (the source tree stays clean and
  # holds no libzyfa), run against this build tree's library through ZYFA_LIBRARY_PATH. No pip
  # install here: that builds libzyfa itself with CMake (pyproject.toml, scikit-build-core); the
  # wheel is built, installed into a fresh venv and tested by tools/run-tests.sh.
  rm -rf "$work/site" "$work/src" "$work/venv" "$work/venv.base" && mkdir -p "$work/site"
  cp -r "$here/python/zyfa" "$work/site/"
  rm -rf "$work/site/zyfa/__pycache__" "$work/site/zyfa"/libzyfa.so*
  export PYTHONPATH="$work/site${PYTHONPATH:+:$PYTHONPATH}"
  cd "$work"
  ZYFA_LIBRARY_PATH=$libdir ZYFA_INCLUDE_DIR=$includedir PYTHONDONTWRITEBYTECODE=1 \
    exec "$py" -m pytest -rs -p no:cacheprovider --rootdir "$here/python" \
    -c "$here/python/pyproject.toml" "$here/python/tests"
  ;;
rust)
  # rustup installs into ~/.cargo/bin, which a non-login shell (CI) may not have on PATH.
  command -v cargo >/dev/null || { [[ -x $HOME/.cargo/bin/cargo ]] && export PATH=$HOME/.cargo/bin:$PATH; }
  command -v cargo >/dev/null || skip "no cargo (Debian: cargo)"
  command -v pkg-config >/dev/null || skip "no pkg-config"
  cd "$here/rust"
  # Offline: the workspace has no dependencies outside the repository.
  CARGO_TARGET_DIR=$work/target ZYFA_INCLUDE_DIR=$includedir exec cargo test --offline --workspace \
    --locked 2>&1 || exit 1
  ;;
go)
  command -v go >/dev/null || skip "no go (Debian: golang-go)"
  command -v pkg-config >/dev/null || skip "no pkg-config"
  cd "$here/go"
  # -count=1: never a cached result; the library under test is not a Go input go could track.
  GOFLAGS=-mod=mod GOCACHE=${GOCACHE:-$work/gocache} GOPATH=${GOPATH:-$work/gopath} \
    exec go test -count=1 -v ./...
  ;;
*)
  echo "unknown language $language (python, rust or go)" >&2
  exit 2
  ;;
esac
