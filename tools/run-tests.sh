#!/usr/bin/env bash
# README command 2 (and what CI runs, through .ci/run): every test tier of zyfa.
#   1. build/       Release, warnings are errors; ctest runs every label except install;
#   2. build-asan/  RelWithDebInfo with AddressSanitizer + UndefinedBehaviorSanitizer; ctest runs
#                   the C tiers (unit, cpu, abi) with leak detection, halting on the first UB report;
#   3. the install test (label install): build/ installed into a temporary prefix, consumers built
#      against it with pkg-config and with find_package(zyfa).
# On a fresh Debian 12 machine it first installs the build tools (needs root or sudo). Later steps
# still run after a failed one where they can, so one run reports everything; the exit status is
# non-zero if any step failed. Both trees are reused between runs, so a second run is incremental.
set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo" || exit 1

jobs=$(nproc 2>/dev/null || echo 2)
summary=()
any_failed=0

now_ms() { date +%s%3N; }
seconds_since() { local elapsed=$(( $(now_ms) - $1 )); printf '%d.%01d' $((elapsed / 1000)) $((elapsed % 1000 / 100)); }

# run_step <name> <command...>: runs the command, records ok/FAILED and the elapsed time.
run_step() {
  local name=$1 start status
  shift
  printf '\n=== %s\n' "$name"
  start=$(now_ms)
  if "$@"; then status=ok; else status=FAILED; any_failed=1; fi
  summary+=("$(printf '%-40s %-8s %8ss' "$name" "$status" "$(seconds_since "$start")")")
  [[ $status == ok ]]
}
skip_step() { summary+=("$(printf '%-40s %-8s (%s)' "$1" skipped "$2")"); any_failed=1; }

total_start=$(now_ms)

if ! run_step "install build dependencies" tools/install-build-deps.sh; then
  printf '%s\n' "${summary[@]}"
  exit 1
fi

# --- 1. Release, warnings are errors --------------------------------------------------------------
release_built=0
if run_step "configure build/ (Release, Werror)" \
     cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DZYFA_WERROR=ON &&
   run_step "build build/" cmake --build build -j "$jobs"; then
  release_built=1
  run_step "ctest build/ (all labels but install)" \
    ctest --test-dir build --output-on-failure --no-tests=error -j "$jobs" -LE '^install$'
else
  skip_step "ctest build/ (all labels but install)" "build/ did not build"
fi

# --- 2. Sanitizers -------------------------------------------------------------------------------
# Werror stays off here: GCC's sanitizer instrumentation raises false-positive warnings
# (-Wmaybe-uninitialized, -Wstringop-overflow) that the Release tree above does not; that tree is
# the warnings gate. RelWithDebInfo keeps the cpu tier fast and the stack traces readable.
if run_step "configure build-asan/ (ASan+UBSan)" \
     cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DZYFA_SANITIZE=address,undefined &&
   run_step "build build-asan/" cmake --build build-asan -j "$jobs"; then
  run_step "ctest build-asan/ (unit|cpu|abi)" \
    env ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    ctest --test-dir build-asan --output-on-failure --no-tests=error -j "$jobs" -L 'unit|cpu|abi'
else
  skip_step "ctest build-asan/ (unit|cpu|abi)" "build-asan/ did not build"
fi

# --- 3. Install and consume ----------------------------------------------------------------------
if [[ $release_built -eq 1 ]]; then
  run_step "install test (build/)" ctest --test-dir build --output-on-failure --no-tests=error -L '^install$'
else
  skip_step "install test (build/)" "build/ did not build"
fi

printf '\n=== summary (%s jobs)\n' "$jobs"
printf '%s\n' "${summary[@]}"
printf '%-40s %-8s %8ss\n' "total" "$([[ $any_failed -eq 0 ]] && echo ok || echo FAILED)" "$(seconds_since "$total_start")"
exit "$any_failed"
