#!/usr/bin/env bash
# On the device machine (the H200, through the device tool), from the repository root: builds
# libzyfa's objects with the machine's cmake and nvcc (no CMocka: tests and tools off), then runs
# the kernel harness (CUDA vs CPU model) and the e4m3 conversion check. Output under ${OUT:-/tmp}.
set -u
out=${OUT:-/tmp}
build=/tmp/zyfa-n2-build
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s)
cmake -S . -B $build -DZYFA_BUILD_TESTS=OFF -DZYFA_BUILD_TOOLS=OFF > $out/configure.log 2>&1 || { tail -30 $out/configure.log; exit 1; }
cmake --build $build -j16 --target zyfa_internal > $out/build.log 2>&1 || { grep -E "error|Error" $out/build.log | head -30; exit 1; }
echo "build: $(( $(date +%s) - start )) s"
g++ -std=c++17 -O2 -Iinclude -Isrc -Ikernels tests/nvidia_build/nvidia_kernel_harness.cpp $build/libzyfa_internal.a \
    -lpthread -ldl -o /tmp/nvidia_kernel_harness || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
ZYFA_LOG=info /tmp/nvidia_kernel_harness 2>&1 | tee $out/harness.txt
nvcc -arch=sm_90a -std=c++17 -Ikernels tests/nvidia_build/e4m3_cvt_check.cu -o /tmp/e4m3_cvt_check && /tmp/e4m3_cvt_check | tee $out/cvt.txt
