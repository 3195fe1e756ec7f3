#!/usr/bin/env bash
# Where a CTA of the warp-specialised sm_90a kernels spends its time, on the GPU (an analysis tool,
# never part of libzyfa): builds a copy of the library with tools/gpu/cta-timeline.patch applied
# (consumer thread 0 of each warpgroup stamps %globaltimer at the kernel's start, its own entry,
# Q's arrival, the first K block's arrival, the end of the main loop, the rows' normalisation, the
# issue of O's stores and the end after its warpgroup's barrier, and writes the stamps, its SM and
# its block count over the first 22 lse entries of its 64 rows: the
# lse of that build is wrong by design), then runs tools/gpu/cta_timeline.py on it, which reads
# them back through the Python binding and prints, per kernel (FP8 LEAN, FP8 EXACT, BF16; causal,
# 16 heads, head dim 128): the mean of each phase, the fit duration = fixed + per-block cost, and
# the gap between one CTA's end and the next one's start on the same SM.
# Usage, on the device machine from the repository root:
#   tools/gpu/cta-timeline.sh [BATCH SEQLEN]...      (default: 32 1024 2 16384)
# The patch is against the kernels of main at ef5a14f (the staged epilogue); if it no longer
# applies, re-apply its few lines by hand (they only add stamps).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
src=/tmp/zyfa-cta-timeline-src
build=/tmp/zyfa-cta-timeline-build
rm -rf "$src" && mkdir -p "$src"
cp -r kernels src include cmake CMakeLists.txt zyfa.pc.in "$src"/
patch -s -d "$src" -p1 < tools/gpu/cta-timeline.patch
export PATH=$PATH:/usr/local/cuda/bin
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DZYFA_CUDA_ARCHS=sm_90a -DZYFA_BUILD_TESTS=OFF \
      -DZYFA_BUILD_TOOLS=OFF -DZYFA_AMD=OFF > "$build.log" 2>&1
cmake --build "$build" -j "$(nproc)" --target zyfa >> "$build.log" 2>&1
args=("$@")
((${#args[@]} > 0)) || args=(32 1024 2 16384)
python3 tools/gpu/cta_timeline.py "$build/libzyfa.so" "${args[@]}"
