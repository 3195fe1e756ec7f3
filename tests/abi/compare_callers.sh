#!/usr/bin/env bash
# usage: compare_callers.sh <old_caller built against older_header/zyfa.h> <the same built against include/zyfa.h>
# Both must succeed and print identical results; their struct sizes (stderr) must differ, or the
# older header would not be older.
set -uo pipefail
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$1" >"$work/older.out" 2>"$work/older.err" || { echo "FAIL: the older caller failed:" >&2; cat "$work/older.out" "$work/older.err" >&2; exit 1; }
"$2" >"$work/current.out" 2>"$work/current.err" || { echo "FAIL: the current caller failed:" >&2; cat "$work/current.out" "$work/current.err" >&2; exit 1; }
if cmp -s "$work/older.err" "$work/current.err"; then
  echo "FAIL: the older header's structs are not smaller:" >&2
  cat "$work/older.err" >&2
  exit 1
fi
if ! diff -u "$work/current.out" "$work/older.out"; then
  echo "FAIL: a caller built against the older header gets different results (- current, + older)" >&2
  exit 1
fi
echo "older caller (struct sizes: $(tr '\n' ' ' <"$work/older.err")) gets the current caller's results:"
cat "$work/older.out"
