#!/usr/bin/env bash
# Installs what building and testing zyfa needs on Debian 12 (or Ubuntu), and nothing when it is
# all present already: cmake, a C and C++ compiler, make, pkg-config, CMocka and the rest listed
# below (on Debian 12 also the ROCm HIP runtime and its headers). Runs apt-get update once, only
# when something is missing; uses sudo only when not root.
# Used by tools/run-bench.sh and tools/run-tests.sh; can be run on its own.
set -euo pipefail

missing=()
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v g++ >/dev/null 2>&1 || missing+=(g++)
command -v cc >/dev/null 2>&1 || missing+=(gcc)
command -v make >/dev/null 2>&1 || missing+=(make)
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
if ! command -v pkg-config >/dev/null 2>&1 || ! pkg-config --exists cmocka; then
  missing+=(libcmocka-dev)
fi
# The AMD code objects (HIP C++ compiled by Debian's clang-22 for gfx950/gfx942) and their static
# checks (llvm-readelf-22, llvm-objdump-22); also the libFuzzer build.
command -v clang++-22 >/dev/null 2>&1 || missing+=(clang-22)
command -v ld.lld-22 >/dev/null 2>&1 || missing+=(lld-22)
command -v llvm-objdump-22 >/dev/null 2>&1 || missing+=(llvm-22)
dpkg -s libclang-rt-22-dev >/dev/null 2>&1 || missing+=(libclang-rt-22-dev)  # libFuzzer runtime
# The bindings tier (label bindings): Python (Debian's python3 with numpy, pytest), Go, Rust; and
# run-tests.sh's Python wheel step, whose fresh venv needs venv (python3-venv: ensurepip); that
# step takes scikit-build-core, numpy and pytest from PyPI and builds with the cmake above.
dpkg -s python3-numpy >/dev/null 2>&1 || missing+=(python3-numpy)
dpkg -s python3-pytest >/dev/null 2>&1 || missing+=(python3-pytest)
dpkg -s python3-venv >/dev/null 2>&1 || missing+=(python3-venv)
command -v go >/dev/null 2>&1 || dpkg -s golang-go >/dev/null 2>&1 || missing+=(golang-go)
command -v cargo >/dev/null 2>&1 || [[ -x $HOME/.cargo/bin/cargo ]] || missing+=(cargo)
# Debian's ROCm HIP runtime (bookworm/main: 5.2.3) and its headers: the unit test
# gpu_host_hip_real_runtime loads the real libamdhip64.so.5 on a machine without an AMD GPU (it must
# report NO_DEVICE and AUTO fall through), and abi_hip_declarations checks src/hip/hip_api.hpp
# against /usr/include/hip/hip_runtime_api.h at build time (docs/hip-runtime.md). Debian 12 and
# later ship them in main; elsewhere (Ubuntu's are in universe, or absent) they are left out and
# both tests report skipped.
os_id=$(. /etc/os-release 2>/dev/null && echo "${ID:-}")
os_version=$(. /etc/os-release 2>/dev/null && echo "${VERSION_ID:-0}")
if [[ $os_id == debian && ${os_version%%.*} -ge 12 ]]; then
  dpkg -s libamdhip64-5 >/dev/null 2>&1 || missing+=(libamdhip64-5)
  dpkg -s libamdhip64-dev >/dev/null 2>&1 || missing+=(libamdhip64-dev)
fi

if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "missing: ${missing[*]}; install them with your package manager (no apt-get here)" >&2
  exit 1
fi
as_root=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null 2>&1 || { echo "missing: ${missing[*]}; run as root or install sudo" >&2; exit 1; }
  as_root=(sudo)
fi
echo "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -q
"${as_root[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
