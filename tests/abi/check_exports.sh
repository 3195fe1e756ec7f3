#!/usr/bin/env bash
# The dynamic symbol table of libzyfa.so is the ABI: it must hold exactly the functions that
# include/zyfa.h declares with ZYFA_API (listed in exports.txt as "name node"), each a
# default-visibility function bound to the version node exports.txt names for it (ZYFA_0.1 for
# 0.1's functions, a later node for each later addition), and nothing else (a leaked C++ symbol would become
# part of the ABI by accident). Also checks the SONAME and that no GPU runtime is a link
# dependency (they are loaded with dlopen, so libzyfa.so loads on machines without them).
#
# usage: check_exports.sh <libzyfa.so> <exports.txt> <zyfa.h> <C compiler>
set -euo pipefail
export LC_ALL=C

if [[ $# -ne 4 ]]; then
  echo "usage: $0 <libzyfa.so> <exports.txt> <zyfa.h> <C compiler>" >&2
  exit 2
fi
library=$1 exports=$2 header=$3 cc=$4
expected_soname=libzyfa.so.0

failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# 1. exports.txt is sorted and free of duplicates, so that diffs below are meaningful; each line
#    is "function version-node".
if ! sort -c -u "$exports" 2>"$work/sort.err"; then
  fail "$exports is not sorted and unique: $(cat "$work/sort.err")"
fi
if awk 'NF != 2 || $2 !~ /^ZYFA_[0-9.]+$/' "$exports" | grep -q .; then
  fail "$exports has lines that are not 'function ZYFA_<version>': $(awk 'NF != 2 || $2 !~ /^ZYFA_[0-9.]+$/' "$exports" | head -3)"
fi
awk '{ print $1 }' "$exports" >"$work/names.txt"
awk '{ print $2 }' "$exports" | sort -u >"$work/expected_nodes.txt"

# 2. The functions the header exports. The preprocessor strips comments (which mention function
#    names too); ZYFA_API expands to the visibility attribute, and each declaration ends at ';'.
#    The first identifier followed by '(' in such a declaration is the function's name.
"$cc" -E -P -x c "$header" >"$work/header.i"
tr '\n' ' ' <"$work/header.i" | tr ';' '\n' | grep 'visibility *( *"default" *)' \
  | awk 'match($0, /zyfa_[A-Za-z0-9_]+ *\(/) { name = substr($0, RSTART, RLENGTH); sub(/ *\($/, "", name); print name }' \
  | sort -u >"$work/header.txt" || true
if [[ ! -s "$work/header.txt" ]]; then
  fail "found no ZYFA_API function in $header (did the export macro change?)"
fi
if ! diff -u "$work/names.txt" "$work/header.txt" >"$work/header.diff"; then
  fail "exports.txt differs from the ZYFA_API functions of zyfa.h (- exports.txt, + header):"
  cat "$work/header.diff" >&2
fi

# 3. The library's defined dynamic symbols. readelf -W --dyn-syms columns:
#    Num: Value Size Type Bind Vis Ndx Name[@@version]
readelf -W --dyn-syms "$library" | awk '$1 ~ /^[0-9]+:$/ && $7 != "UND" && NF >= 8 { print $4, $5, $6, $7, $8 }' \
  >"$work/defined.txt"
# A version-definition entry (Type OBJECT or NOTYPE, Ndx ABS, named after a node) is the node
# itself, not an exported symbol; older linkers emit one.
awk 'NR == FNR { node[$1] = 1; next }
     { name = $5; sub(/@.*/, "", name) }
     !($4 == "ABS" && (name in node)) { print }' "$work/expected_nodes.txt" "$work/defined.txt" \
  >"$work/symbols.txt" || true
awk '{ sub(/@.*/, "", $5); print $5 }' "$work/symbols.txt" | sort -u >"$work/library.txt"
if ! diff -u "$work/names.txt" "$work/library.txt" >"$work/library.diff"; then
  fail "exported symbols of $library differ from exports.txt (- exports.txt, + library):"
  cat "$work/library.diff" >&2
fi
while read -r type bind vis _section name; do
  [[ $type == FUNC ]] || fail "$name is exported as $type, not FUNC"
  [[ $bind == GLOBAL ]] || fail "$name has binding $bind, not GLOBAL"
  [[ $vis == DEFAULT ]] || fail "$name has visibility $vis, not DEFAULT"
  base=${name%%@*}
  expected_node=$(awk -v n="$base" '$1 == n { print $2 }' "$exports")
  [[ -n $expected_node ]] || continue  # not in exports.txt: reported by the diff above
  [[ $name == *"@@$expected_node" ]] || fail "$name is not bound to version node $expected_node as its default version"
done <"$work/symbols.txt"

# 4. The SONAME carries the ABI major.
soname=$(readelf -W -d "$library" | sed -nE 's/.*\(SONAME\).*\[(.*)\].*/\1/p')
[[ $soname == "$expected_soname" ]] || fail "SONAME is '${soname}', expected $expected_soname"

# 5. The version nodes the library defines: exactly those of exports.txt besides the base (file) entry.
readelf -W -V "$library" | awk '/Version definition section/ { in_defs = 1; next }
                                 /Version needs section|Version symbols section/ { in_defs = 0 }
                                 in_defs && /Name:/ { for (i = 1; i < NF; i++) if ($i == "Name:") print $(i + 1) }' \
  | sort -u >"$work/nodes.txt"
{ cat "$work/expected_nodes.txt"; echo "$expected_soname"; } | sort -u >"$work/nodes.expected"
if ! diff -u "$work/nodes.expected" "$work/nodes.txt" >"$work/nodes.diff"; then
  fail "version definitions differ (- expected, + library):"
  cat "$work/nodes.diff" >&2
fi

# 6. No GPU runtime among the link dependencies.
if readelf -W -d "$library" | grep '(NEEDED)' | grep -iE 'amdhip|hsa-runtime|libhsa|libcuda|cudart|nvrtc|rocm'; then
  fail "a GPU runtime is a link dependency of $library (it must be loaded with dlopen)"
fi

if [[ $failures -ne 0 ]]; then
  echo "$failures ABI check(s) failed for $library" >&2
  exit 1
fi
echo "OK: $(wc -l <"$exports") functions exported at nodes $(tr '\n' ' ' <"$work/expected_nodes.txt")SONAME $soname"
