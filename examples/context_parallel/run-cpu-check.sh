#!/usr/bin/env bash
# run-cpu-check.sh LIBDIR [WORKDIR]
# The CPU form of the context-parallel example with 2 ranks (torch.distributed over gloo on
# 127.0.0.1, zyfa's CPU backend) at a small size, against the libzyfa.so in LIBDIR: the ring's O
# and lse must match one zyfa call on the whole sequence within the merge's bounds, for FP8 EXACT,
# FP8 LEAN and BF16 EXACT, Gaussian and sink inputs (6 checks). CTest bindings_python_context_parallel
# (label bindings). Exit 77 with one line saying why (CTest: skipped) when no python3 has numpy and
# torch >= 2.1 (float8 dtypes) with torch.distributed and gloo. Debian 12's python3-torch is 1.13
# (no float8) and brings ~180 packages; tools/install-build-deps.sh installs no torch, so CI skips
# this test: the same plan, masks and merges run there without torch in test_context_parallel.py
# (bindings_python).
set -euo pipefail
libdir=$(cd "$1" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=${2:-}

py=
for candidate in "${ZYFA_PYTHON:-}" python3 /usr/bin/python3; do
  if [[ -n $candidate ]] && command -v "$candidate" >/dev/null &&
     "$candidate" -c 'import numpy, torch, torch.distributed as d
assert hasattr(torch, "float8_e4m3fn") and d.is_available() and d.is_gloo_available()' 2>/dev/null; then
    py=$(command -v "$candidate"); break
  fi
done
if [[ -z $py ]]; then
  echo "SKIPPED bindings_python_context_parallel: no python3 with numpy and torch >= 2.1 (float8 dtypes," \
       "torch.distributed with gloo); set ZYFA_PYTHON to one (e.g. a venv with pip install torch). The ring's algorithm is still" \
       "tested without torch by bindings_python (test_context_parallel.py)"
  exit 77
fi

# The binding from the source tree, without writing bytecode there, against this build's library.
export PYTHONPATH="$here/../../bindings/python${PYTHONPATH:+:$PYTHONPATH}"
export ZYFA_LIBRARY_PATH=$libdir PYTHONDONTWRITEBYTECODE=1
[[ -n $work ]] && mkdir -p "$work" && cd "$work"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
"$py" "$here/cp_ring_attention.py" --backend cpu --nproc 2 --seqlen 1024 --threads 1 --check \
  --dtype fp8,bf16 --softmax exact,lean --inputs gaussian,sink 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
ok=$(grep -c '^check W=2 .*: OK$' "$log" || true)
if [[ $status -ne 0 || $ok -ne 6 ]] || grep -q ': FAIL$' "$log"; then
  echo "FAILED bindings_python_context_parallel: exit status $status, $ok of 6 checks OK"
  exit 1
fi
echo "bindings_python_context_parallel: 6 passed, 0 failed"
