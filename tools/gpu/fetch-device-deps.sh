#!/usr/bin/env bash
# Fills .device-deps/ (git-ignored) with what tools/gpu/run-device-suite.sh installs on the device
# machine, which reaches no package registry; the lead carries the folder there (carry
# [".device-deps"]). Run it here, on a machine with apt and pip that reach their registries:
#   .device-deps/*.deb     CMocka and pkg-config: apt-get download libcmocka0 libcmocka-dev pkgconf
#                          pkgconf-bin libpkgconf3 (unpacked under /tmp there, never into /)
#   .device-deps/wheels/nvidia_cudnn_frontend-*.whl
#                          cuDNN's Python frontend (module cudnn) for bench/run_benchmark.py's
#                          cudnn_fp8 row, built for the device's python3: CPython 3.12, manylinux
#                          x86-64. --no-deps on purpose: the device has torch and nvidia-cudnn-cu13
#                          (the cuDNN library), and 'import cudnn' needs neither of the frontend's
#                          declared requirements (nvidia-cutlass-dsl, apache-tvm-ffi); they serve
#                          its Python-side engines, which the bench does not use.
# Idempotent: a package already there is kept; a frontend wheel of another version is removed
# (two versions stop the install there). Ends by printing the folder's size against the 64 MiB
# that may travel to the device (working tree and carried paths together).
#
# Usage: tools/gpu/fetch-device-deps.sh [--frontend-version V] [--python-version X.Y]
#   --frontend-version  nvidia-cudnn-frontend release (default 1.32.0, the version whose API
#                       bench/run_benchmark.py was written against)
#   --python-version    the device's python3 (default 3.12)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
deps=$repo/.device-deps
wheels=$deps/wheels
frontend=1.32.0
pyver=3.12
while [[ $# -gt 0 ]]; do
  case $1 in
    --frontend-version) frontend=$2; shift ;;
    --python-version) pyver=$2; shift ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$deps" "$wheels"

# --- Debian packages: the ones not there yet -------------------------------------------------------
missing=()
for pkg in libcmocka0 libcmocka-dev pkgconf pkgconf-bin libpkgconf3; do
  compgen -G "$deps/${pkg}_*.deb" >/dev/null || missing+=("$pkg")
done
if ((${#missing[@]})); then
  echo "apt-get download ${missing[*]}"
  if ! (cd "$deps" && apt-get download "${missing[@]}"); then
    # A fresh machine may have no package lists yet.
    echo "apt-get download failed; apt-get update, then once more" >&2
    apt-get update -qq && (cd "$deps" && apt-get download "${missing[@]}")
  fi
else
  echo "Debian packages: already in .device-deps/"
fi

# --- the cudnn frontend wheel for the device's python ---------------------------------------------
want="nvidia_cudnn_frontend-$frontend-"
for whl in "$wheels"/nvidia_cudnn_frontend-*.whl; do
  if [[ -e $whl && $(basename "$whl") != "$want"* ]]; then
    echo "removing $(basename "$whl") (not $frontend)"
    rm -f "$whl"
  fi
done
if compgen -G "$wheels/$want*cp${pyver/./}*.whl" >/dev/null; then
  echo "nvidia-cudnn-frontend $frontend for cp${pyver/./}: already in .device-deps/wheels/"
else
  # pip matches each manylinux tag exactly, so name the ones such wheels carry.
  python3 -m pip download --no-deps --only-binary=:all: --python-version "$pyver" --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 -d "$wheels" "nvidia-cudnn-frontend==$frontend"
fi

# --- sizes -------------------------------------------------------------------------------------------
ls -l "$deps"/*.deb "$wheels"/*.whl
deps_bytes=$(du -sb "$deps" | cut -f1)
# What travels besides: tracked files and untracked ones git does not ignore.
tree_bytes=$(cd "$repo" && git ls-files -z --cached --others --exclude-standard |
  xargs -0 stat -c %s 2>/dev/null | awk '{ s += $1 } END { print s + 0 }')
limit=$((64 * 1024 * 1024))
awk -v d="$deps_bytes" -v t="$tree_bytes" 'BEGIN { m = 1048576;
  printf ".device-deps: %.1f MiB; with the working tree (%.1f MiB): %.1f of the 64 MiB that may travel\n", d / m, t / m, (d + t) / m }'
if ((deps_bytes + tree_bytes > limit)); then
  echo "over the limit: carry less (remove wheels the run does not need)" >&2
  exit 1
fi
