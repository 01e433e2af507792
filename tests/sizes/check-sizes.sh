#!/usr/bin/env bash
# tests/sizes/check-sizes.sh SOURCE_DIR — the file-size budget
# (cmake/sizes.cmake, docs/design.md "small rooms"): the tree passes; in a
# tree made to break it, a file over 1,200 lines is warned of by name, one
# over 1,500 fails the check unless its top says why.
set -euo pipefail
src=$1
cmake -DROOT="$src" -P "$src/cmake/sizes.cmake" 2>/dev/null || { echo "the tree is over its budget"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/sim/deep" "$tmp/report" "$tmp/build"
lines() { for ((i = 0; i < $1; i++)); do echo "int x$i;"; done; }
lines 1200 >"$tmp/sim/fine.c"
lines 1201 >"$tmp/sim/deep/long.c"
{ echo "/* Why above 1,500 lines: one table. */"; lines 1600; } >"$tmp/report/table.js"
lines 2000 >"$tmp/build/generated.c" # only the source folders are read
cmake -DROOT="$tmp" -P "$src/cmake/sizes.cmake" 2>"$tmp/err" || { cat "$tmp/err"; echo "a tree within budget failed"; exit 1; }
grep -q 'sim/deep/long.c has 1201 lines' "$tmp/err" || { cat "$tmp/err"; echo "no warning over 1,200"; exit 1; }
if grep -q 'fine.c\|table.js\|generated.c' "$tmp/err"; then cat "$tmp/err"; echo "a file within budget was warned of"; exit 1; fi
lines 1501 >"$tmp/sim/big.h"
if cmake -DROOT="$tmp" -P "$src/cmake/sizes.cmake" 2>"$tmp/err"; then
  echo "a file over 1,500 lines with no reason passed"; exit 1
fi
grep -q 'sim/big.h (1501 lines)' "$tmp/err" || { cat "$tmp/err"; exit 1; }
echo "sizes: budget holds; 1,201 warned, 1,501 without a reason refused"
