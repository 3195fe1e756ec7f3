#!/usr/bin/env bash
# The recorded ABI layouts, tests/abi/layout-<version>.txt, written once per release and never
# edited afterwards. Fails when:
#  - any fact of any record no longer holds: a field moved, shrank, grew or vanished; a constant
#    changed; a non-growable struct changed size; a growable struct (one with struct_size)
#    shrank (it may only grow, by appending);
#  - the current layout differs from the newest record: an addition must be recorded
#    deliberately, in a new layout-<next version>.txt (copy the dump this script prints).
# usage: check_layout.sh <layout_dump> <directory of layout-*.txt>
set -euo pipefail
dump=$1 dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$dump" >"$work/current.txt"
mapfile -t records < <(find "$dir" -maxdepth 1 -name 'layout-*.txt' | sort -V)
if [[ ${#records[@]} -eq 0 ]]; then
  echo "FAIL: no layout record in $dir" >&2
  exit 1
fi
failures=0
for record in "${records[@]}"; do
  while read -r kind name rest; do
    [[ -z $kind || $kind == \#* ]] && continue
    if [[ $kind == struct ]]; then
      recorded_size=$(awk '{ print $2 }' <<<"$rest")
      current=$(awk -v n="$name" '$1 == "struct" && $2 == n { print $4 }' "$work/current.txt")
      if [[ -z $current ]]; then
        echo "FAIL: $(basename "$record"): struct $name is gone" >&2; failures=$((failures + 1))
      elif grep -q "^field $name\.struct_size " "$record"; then
        (( current >= recorded_size )) || { echo "FAIL: $(basename "$record"): growable $name shrank from $recorded_size to $current bytes" >&2; failures=$((failures + 1)); }
      elif [[ "struct $name $rest" != "$(grep "^struct $name " "$work/current.txt")" ]]; then
        echo "FAIL: $(basename "$record"): struct $name $rest is now: $(grep "^struct $name " "$work/current.txt")" >&2; failures=$((failures + 1))
      fi
    elif ! grep -qxF "$kind $name $rest" "$work/current.txt"; then
      echo "FAIL: $(basename "$record"): '$kind $name $rest' no longer holds; now: $(grep "^$kind $name " "$work/current.txt" || echo 'absent')" >&2
      failures=$((failures + 1))
    fi
  done <"${record}"
done
newest=${records[-1]}
if ! diff -u <(grep -v '^#' "$newest") "$work/current.txt" >"$work/diff.txt"; then
  echo "FAIL: the layout differs from the newest record $(basename "$newest") (- record, + current):" >&2
  cat "$work/diff.txt" >&2
  echo "An append is allowed: record it deliberately as a new tests/abi/layout-<version>.txt holding:" >&2
  cat "$work/current.txt" >&2
  failures=$((failures + 1))
fi
if [[ $failures -ne 0 ]]; then exit 1; fi
echo "OK: the layout matches $(basename "$newest"); every fact of ${#records[@]} record(s) holds"
