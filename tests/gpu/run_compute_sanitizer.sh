#!/usr/bin/env bash
# CTest gpu_compute_sanitizer: runs PROGRAM (tests/gpu/sanitizer_case.cpp) under compute-sanitizer's
# memcheck (out-of-bounds and misaligned accesses, leaks of device memory) and racecheck
# (shared-memory hazards). Exit 77 (skip) with one line saying why when compute-sanitizer is
# absent, the program itself skips (no CUDA device), or the sanitizer cannot instrument this
# device (as under gVisor: "Device not supported"); 1 when either tool reports an error.
set -u
program=${1:?usage: run_compute_sanitizer.sh PROGRAM}

sanitizer=$(command -v compute-sanitizer 2>/dev/null)
for candidate in "${CUDA_PATH:-}/bin/compute-sanitizer" /usr/local/cuda/bin/compute-sanitizer; do
  [[ -z $sanitizer && -x $candidate ]] && sanitizer=$candidate
done
if [[ -z $sanitizer ]]; then
  echo "SKIP gpu_compute_sanitizer: compute-sanitizer not found (PATH, \$CUDA_PATH/bin, /usr/local/cuda/bin)"
  exit 77
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT

# Plain run first: a program that skips (no device) or fails says so without the sanitizer's noise.
"$program" >"$log" 2>&1
status=$?
if [[ $status -eq 77 ]]; then
  grep '^SKIP' "$log" || echo "SKIP gpu_compute_sanitizer: $program skipped"
  exit 77
fi
if [[ $status -ne 0 ]]; then
  cat "$log"
  echo "FAIL gpu_compute_sanitizer: $program fails even without the sanitizer (exit $status)"
  exit 1
fi

failed=0
for tool in memcheck racecheck; do
  extra=()
  [[ $tool == memcheck ]] && extra=(--leak-check full)
  "$sanitizer" --tool "$tool" "${extra[@]}" --error-exitcode 86 "$program" >"$log" 2>&1
  status=$?
  if grep -q 'Device not supported' "$log"; then
    echo "SKIP gpu_compute_sanitizer: $sanitizer cannot instrument this device: $(grep -m1 'Device not supported' "$log")"
    exit 77
  fi
  summary=$(grep -E '(ERROR|RACECHECK) SUMMARY' "$log" | tail -1)
  echo "$tool: exit $status; ${summary:-no summary line}"
  if [[ $status -ne 0 || -z $summary ]]; then
    cat "$log"
    failed=1
  fi
done
exit $failed
