#!/usr/bin/env bash
# README command 2 (and what CI runs, through .ci/run): every test tier of zyfa.
#   1. build/       Release, warnings are errors; ctest runs every label except install;
#   2. build-asan/  RelWithDebInfo with AddressSanitizer + UndefinedBehaviorSanitizer; ctest runs
#                   the C tiers (unit, cpu, abi, concurrency) with LeakSanitizer, halting on the
#                   first UB report; the unit test leak_sanitizer_active fails unless a deliberate
#                   leak is reported, so leak detection is known to run on this machine;
#   3. the install test (label install): build/ installed into a temporary prefix, consumers built
#      against it with pkg-config and with find_package(zyfa); then the Python wheel: built by pip
#      (scikit-build-core runs CMake), installed into a fresh venv, the binding's tests run there;
#   4. build-tsan/  ThreadSanitizer (GCC): only the concurrency tier (16 threads on one context,
#                   contexts created and destroyed from 16 threads), fewer iterations than build/;
#   5. build-fuzz/  clang libFuzzer + ASan + UBSan: the fuzz target of the C ABI runs for
#                   ZYFA_FUZZ_SECONDS (default 120) from the seed and regression corpus.
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
# the warnings gate. RelWithDebInfo keeps the cpu tier fast and the stack traces readable. The GPU
# kernels are device code the sanitizers cannot see, so their cubins and code objects are not
# rebuilt here (ZYFA_CUDA/ZYFA_AMD off); the CUDA and HIP host code is still built and its tests
# run over the fake drivers.
if run_step "configure build-asan/ (ASan+UBSan)" \
     cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DZYFA_SANITIZE=address,undefined \
       -DZYFA_CUDA=OFF -DZYFA_AMD=OFF &&
   run_step "build build-asan/" cmake --build build-asan -j "$jobs"; then
  run_step "ctest build-asan/ (C tiers, LSan)" \
    env ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    ctest --test-dir build-asan --output-on-failure --no-tests=error -j "$jobs" -L 'unit|cpu|abi|concurrency'
else
  skip_step "ctest build-asan/ (C tiers, LSan)" "build-asan/ did not build"
fi

# --- 3. Install and consume ----------------------------------------------------------------------
if [[ $release_built -eq 1 ]]; then
  run_step "install test (build/)" ctest --test-dir build --output-on-failure --no-tests=error -L '^install$'
else
  skip_step "install test (build/)" "build/ did not build"
fi

# The Python package as a user gets it: `pip wheel ./bindings/python` builds libzyfa with CMake and
# ships it inside the wheel; the wheel goes into a fresh venv with numpy and pytest from PyPI (the
# wheel build fetches scikit-build-core from there anyway, and a venv without the system's
# site-packages is what a user has), and the binding's tests run against the installed package
# with no ZYFA_LIBRARY_PATH or LD_LIBRARY_PATH, from outside the source tree so that the source's
# zyfa/ is never imported. The GPU code is left out (ZYFA_CUDA/ZYFA_AMD off) to keep this step
# short: build/ above already builds the cubins and code objects from the same CMake project, and
# the wheel's CPU tests do not use them.
python_wheel_test() {
  local work=$repo/build-wheel
  rm -rf "$work" && mkdir -p "$work/dist" || return 1
  python3 -m venv "$work/venv" || return 1
  local py=$work/venv/bin/python
  local -x PIP_DISABLE_PIP_VERSION_CHECK=1
  CMAKE_BUILD_PARALLEL_LEVEL=$jobs "$py" -m pip wheel --no-deps ./bindings/python -w "$work/dist" \
    --config-settings=cmake.define.ZYFA_CUDA=OFF --config-settings=cmake.define.ZYFA_AMD=OFF || return 1
  ls -l "$work/dist"
  "$py" -m pip install --quiet "$work/dist"/zyfa-*.whl numpy pytest || return 1
  (
    cd "$work" || exit 1
    unset ZYFA_LIBRARY_PATH LD_LIBRARY_PATH PYTHONPATH
    "$py" -c 'import os, zyfa
path = zyfa.library_path()
print("zyfa", zyfa.version(), "from", path, "|", zyfa.build_info())
assert os.path.dirname(path) == os.path.dirname(zyfa.__file__), "libzyfa not the shipped one"
assert "/site-packages/" in path, "zyfa imported from outside the venv"' &&
      ZYFA_INCLUDE_DIR=$repo/include PYTHONDONTWRITEBYTECODE=1 "$py" -m pytest -rs -p no:cacheprovider \
        --rootdir "$repo/bindings/python" -c "$repo/bindings/python/pyproject.toml" "$repo/bindings/python/tests"
  )
}
run_step "python wheel (build, fresh venv, tests)" python_wheel_test

# --- 4. ThreadSanitizer: the concurrency tier ------------------------------------------------------
# Only the library and the two concurrency programs are built. 30 iterations per thread: TSan
# makes each call 10-20x slower, and races show up in the first overlapping calls.
tsan_targets=(concurrency_shared_context_test concurrency_context_lifecycle_test)
if run_step "configure build-tsan/ (TSan)" \
     cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DZYFA_SANITIZE=thread &&
   run_step "build build-tsan/ (concurrency tests)" cmake --build build-tsan -j "$jobs" --target "${tsan_targets[@]}"; then
  run_step "ctest build-tsan/ (concurrency)" \
    env TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 ZYFA_CONCURRENCY_ITERATIONS=30 \
    ctest --test-dir build-tsan --output-on-failure --no-tests=error -L '^concurrency$'
else
  skip_step "ctest build-tsan/ (concurrency)" "build-tsan/ did not build"
fi

# --- 5. libFuzzer: the C ABI, bounded in time --------------------------------------------------------
# The newest clang that links -fsanitize=fuzzer (Debian: clang-NN plus libclang-rt-NN-dev).
fuzz_clang=""
for version in 22 21 20 19 18 17 16 15 14; do
  command -v "clang-$version" >/dev/null 2>&1 && command -v "clang++-$version" >/dev/null 2>&1 || continue
  if printf 'int LLVMFuzzerTestOneInput(const char* d, unsigned long n) { (void)d; (void)n; return 0; }\n' |
       "clang-$version" -fsanitize=fuzzer,address,undefined -x c - -o /dev/null >/dev/null 2>&1; then
    fuzz_clang=$version
    break
  fi
done
if [[ -z $fuzz_clang ]]; then
  skip_step "ctest build-fuzz/ (fuzz)" "no clang with libFuzzer: install clang-22 libclang-rt-22-dev"
elif run_step "configure build-fuzz/ (clang-$fuzz_clang libFuzzer)" \
       env CC="clang-$fuzz_clang" CXX="clang++-$fuzz_clang" \
       cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DZYFA_SANITIZE=address,undefined -DZYFA_FUZZ=ON \
         -DZYFA_FUZZ_SECONDS="${ZYFA_FUZZ_SECONDS:-120}" &&
     run_step "build build-fuzz/ (fuzz target)" cmake --build build-fuzz -j "$jobs" --target zyfa_fuzz_api; then
  run_step "ctest build-fuzz/ (fuzz, ${ZYFA_FUZZ_SECONDS:-120}s)" \
    ctest --test-dir build-fuzz --output-on-failure --no-tests=error -V -L '^fuzz$'
else
  skip_step "ctest build-fuzz/ (fuzz)" "build-fuzz/ did not build"
fi

printf '\n=== summary (%s jobs)\n' "$jobs"
printf '%s\n' "${summary[@]}"
printf '%-40s %-8s %8ss\n' "total" "$([[ $any_failed -eq 0 ]] && echo ok || echo FAILED)" "$(seconds_since "$total_start")"
exit "$any_failed"
