#!/usr/bin/env bash
# README command 1: build zyfa (Release, in build/) and run zyfa-bench with the arguments given,
# e.g. tools/run-bench.sh --help. On a fresh Debian 12 machine it first installs the build
# tools (tools/install-build-deps.sh), which needs root or sudo.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

tools/install-build-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
# The configure output goes to build/configure.log (warnings and errors still reach stderr); its
# summary block (each backend on or off, why, and the -D that turns it on) is shown, so a build
# without nvcc says so.
mkdir -p build
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >build/configure.log
sed -n '/^-- zyfa: configure summary/,/^-- zyfa:   library only/p' build/configure.log
cmake --build build --target zyfa-bench -j "$jobs"
exec build/tools/zyfa-bench/zyfa-bench "$@"
