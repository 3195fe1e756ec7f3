#!/usr/bin/env bash
# usage: check_leak_reported.sh <leak_canary>: passes when LeakSanitizer reports the deliberate leak.
set -uo pipefail
output=$(ASAN_OPTIONS=detect_leaks=1 "$1" 2>&1)
status=$?
if [[ $status -ne 0 ]] && grep -q 'LeakSanitizer: detected memory leaks' <<<"$output" && grep -q '4242 byte' <<<"$output"; then
  echo "LeakSanitizer is active: the deliberate 4242-byte leak was reported (exit status $status)"
  exit 0
fi
echo "LeakSanitizer did NOT report the deliberate leak (exit status $status); leak checks are not running:" >&2
echo "$output" >&2
exit 1
