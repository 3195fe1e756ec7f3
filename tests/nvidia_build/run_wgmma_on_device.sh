#!/usr/bin/env bash
# On the device machine (the H200, through the device tool, carry [".device-deps"]), from the
# repository root: the lighter loop of the wgmma kernels' work. Builds only what the gpu tier
# needs (sm_90a cubins only), runs the gpu tier without compute-sanitizer, then the A/B timing
# (wgmma_ab_timing.py), then compute-sanitizer if time is left. Logs under $OUT.
# Usage: run_wgmma_on_device.sh [--budget SECONDS] [--seqlens "4096 16384"] [--no-sanitizer]
set -uo pipefail
budget=280
seqlens="4096 16384"
sanitizer=1
while [[ $# -gt 0 ]]; do
  case $1 in
    --budget) budget=$2; shift ;;
    --seqlens) seqlens=$2; shift ;;
    --no-sanitizer) sanitizer=0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
OUT=${OUT:-/tmp/zyfa-out}
mkdir -p "$OUT"
start=$(date +%s)
left() { echo $((start + budget - $(date +%s))); }
export PATH=$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
build=build-gpu
deps=/tmp/zyfa-device-deps
if ! { command -v pkg-config >/dev/null && pkg-config --exists cmocka; }; then
  rm -rf "$deps" && mkdir -p "$deps"
  for deb in .device-deps/*.deb; do dpkg -x "$deb" "$deps"; done
  pcdir=$deps/usr/lib/x86_64-linux-gnu/pkgconfig
  sed -i "s#/usr#$deps/usr#g" "$pcdir/cmocka.pc"
  export PKG_CONFIG_PATH=$pcdir LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  command -v pkg-config >/dev/null || export PATH=$deps/usr/bin:$PATH
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
cmake -S . -B $build -DCMAKE_BUILD_TYPE=Release -DZYFA_WERROR=ON -DZYFA_CUDA=ON -DZYFA_CUDA_ARCHS=sm_90a \
  > "$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
cmake --build $build -j"$(nproc)" --target zyfa gpu_attention_vs_cpu_and_reference gpu_p_code_agreement \
  gpu_determinism_and_graph gpu_sanitizer_case >> "$OUT/build.log" 2>&1 ||
  { grep -E "error|Error" "$OUT/build.log" | head -30; exit 1; }
echo "build: $(( $(date +%s) - start )) s"
grep -A3 "attn_fwd_wg" "$OUT/build.log" | grep -E "registers|spill" | head -8
# The gpu tier with the wgmma kernels (the default on sm_90a) and with the mma.sync kernels
# (ZYFA_NVIDIA_WGMMA=0, read by the launch plan), without the sanitizer (below) and the
# 100,000-launch soak (the full suite runs it).
for wgmma in 1 0; do
  log=$OUT/ctest-gpu-wgmma$wgmma.log
  ZYFA_NVIDIA_WGMMA=$wgmma timeout $(( $(left) - 120 )) ctest --test-dir $build -L '^gpu$' \
    -E 'compute_sanitizer|soak' -V -j3 --timeout 150 > "$log" 2>&1
  echo "gpu tier, ZYFA_NVIDIA_WGMMA=$wgmma (no sanitizer, no soak): rc $? at $(( $(date +%s) - start )) s"
  grep -E "tests passed|tests failed|\*\*\*Failed|FAILED  \]" "$log" | sort -u | head -12
  grep -E "P mismatches|LEAN P codes" "$log" | grep -E "hd 128" | sed 's/^[0-9]*: //' | head -4
done
timeout $(( $(left) - 40 )) python3 tests/nvidia_build/wgmma_ab_timing.py $build/libzyfa.so $seqlens 2>&1 |
  tee "$OUT/ab.log" | grep -v Warning
if ((sanitizer)) && (( $(left) > 50 )); then
  timeout $(( $(left) - 10 )) ctest --test-dir $build -R compute_sanitizer -V > "$OUT/sanitizer.log" 2>&1
  echo "sanitizer (wgmma kernels): rc $?"
  grep -E "memcheck:|racecheck:" "$OUT/sanitizer.log" | sed 's/^[0-9]*: //' | head -4
fi
echo "total $(( $(date +%s) - start )) s"
