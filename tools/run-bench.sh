#!/usr/bin/env bash
# README command 1: build zyfa (Release, in build/) and run zyfa-bench with the arguments given,
# e.g. tools/run-bench.sh --help. On a fresh Debian 12 machine it first installs the build
# tools (tools/install-build-deps.sh), which needs root or sudo.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

tools/install-build-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --target zyfa-bench -j "$jobs"
exec build/tools/zyfa-bench/zyfa-bench "$@"
