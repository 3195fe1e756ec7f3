#!/usr/bin/env bash
# run-gpus.sh [RANKS]  (default 2)
# On a machine with RANKS NVIDIA GPUs, torch and nvcc (the project's device machine), from the
# repository root: builds libzyfa with its sm_90a kernels (build-cp-gpu/, library only; its own
# folder, so a build-gpu/ of tools/gpu/run-device-suite.sh keeps its configuration), then runs the
# context-parallel example with torchrun: --check at 32K and 128K tokens (FP8 EXACT, FP8 LEAN,
# BF16 EXACT; Gaussian and sink inputs), and --bench at 32K and 128K (one GPU vs the ring).
# Logs go to $OUT when set (the device tool's folder), else to build-cp-gpu/context_parallel/.
# Exit status non-zero when the build or any check fails.
set -euo pipefail
ranks=${1:-2}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
# NVLink multicast stays off (the device machines require it); the program sets these too, this
# covers torchrun itself and anything it starts.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
build=$repo/build-cp-gpu
logs=${OUT:-$build/context_parallel}
mkdir -p "$logs"

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DZYFA_CUDA=ON -DZYFA_CUDA_ARCHS=sm_90a -DZYFA_AMD=OFF \
  -DZYFA_BUILD_TESTS=OFF -DZYFA_BUILD_TOOLS=OFF > "$logs/build.log" 2>&1 || { tail -30 "$logs/build.log"; exit 1; }
cmake --build "$build" -j"$(nproc)" --target zyfa >> "$logs/build.log" 2>&1 || { tail -30 "$logs/build.log"; exit 1; }

export ZYFA_LIBRARY_PATH=$build PYTHONPATH=$repo/bindings/python${PYTHONPATH:+:$PYTHONPATH}
export PYTHONDONTWRITEBYTECODE=1
nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader | tee "$logs/gpus.txt"
run() {  # run LOGNAME ARGS...
  local name=$1; shift
  echo "== torchrun --nproc_per_node=$ranks examples/context_parallel/cp_ring_attention.py $*" | tee -a "$logs/$name.log"
  python3 -m torch.distributed.run --nproc_per_node="$ranks" examples/context_parallel/cp_ring_attention.py "$@" 2>&1 | tee -a "$logs/$name.log"
  return "${PIPESTATUS[0]}"
}
status=0
# One torchrun per length (each start imports torch and sets up NCCL): checks, then timings.
run seqlen-32k --seqlen 32768 --check --bench || status=1
run seqlen-128k --seqlen 131072 --check --bench || status=1
grep -h '^check\|^bench' "$logs/seqlen-32k.log" "$logs/seqlen-128k.log" > "$logs/summary.txt" || true
echo "== summary ($logs/summary.txt)"; cat "$logs/summary.txt"
exit $status
