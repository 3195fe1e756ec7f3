#!/usr/bin/env bash
# The bounded libFuzzer run behind the CTest test fuzz_api_bounded (label fuzz).
#   run-fuzz.sh <zyfa_fuzz_api> <seconds> <work dir> <corpus dir>...
# Fuzzes a copy of the corpus directories in <work dir>/corpus (the committed corpus is never
# modified) for <seconds>, one input at most 10 s, and prints libFuzzer's final statistics
# (executions run). A crash leaves its input in <work dir>/artifacts; copy it into
# tests/fuzz/corpus/regression/ so that fuzz_regression replays it in every build from then on.
set -euo pipefail
if [[ $# -lt 4 ]]; then
  echo "usage: $0 <fuzzer> <seconds> <work dir> <corpus dir>..." >&2
  exit 2
fi
fuzzer=$1 seconds=$2 work=$3
shift 3
rm -rf "$work/corpus" "$work/artifacts"
mkdir -p "$work/corpus" "$work/artifacts"
for dir in "$@"; do
  find "$dir" -maxdepth 1 -type f ! -name '.*' -exec cp {} "$work/corpus/" \;
done
echo "fuzzing for ${seconds}s from $(find "$work/corpus" -type f | wc -l) corpus inputs"
# detect_leaks: libFuzzer's own leak check after inputs that allocated more than they freed.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
# Symbolised reports when an llvm-symbolizer is installed (clang-22 finds none by itself here).
for symbolizer in llvm-symbolizer-22 /usr/lib/llvm-22/bin/llvm-symbolizer llvm-symbolizer; do
  if path=$(command -v "$symbolizer" 2>/dev/null); then export ASAN_SYMBOLIZER_PATH=$path UBSAN_SYMBOLIZER_PATH=$path; break; fi
done
status=0
"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=1024 \
  -print_final_stats=1 -artifact_prefix="$work/artifacts/" "$work/corpus" 2>"$work/fuzz.log" || status=$?
grep -E '^(#[0-9]+[[:space:]]+DONE|stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb)' "$work/fuzz.log" || true
if [[ $status -ne 0 ]]; then
  tail -n 60 "$work/fuzz.log" >&2
  echo "libFuzzer found a problem (status $status); reproducer(s):" >&2
  ls -l "$work/artifacts" >&2
  echo "keep each as a regression input: cp $work/artifacts/<file> tests/fuzz/corpus/regression/" >&2
  exit 1
fi
