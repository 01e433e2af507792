#!/usr/bin/env bash
# tests/layers/check-layers.sh SOURCE_DIR BUILD_DIR FLOOR=DEPS... — the floors hold
# (docs/design.md): scripts/layers passes on the tree and refuses an upward
# include, internal or public, in a tree made to have one; each floor's
# link probe has no undefined gmsim symbol; libgmsim.so exports gm_ names
# only, and no internal (gm__) one.
set -euo pipefail
src=$1 build=$2
shift 2
floors=("$@") # as the build passes them (CMakeLists.txt, GM_FLOOR_DEPS_*)
python3 "$src/scripts/layers" "$src" "${floors[@]}"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/include" "$tmp/sim" "$tmp/store" "$tmp/base"
cp -r "$src/include/gmsim" "$tmp/include/"
printf '#include "gmsim/error.h"\n#include "base/idmap.h"\n' >"$tmp/sim/fine.c"
python3 "$src/scripts/layers" "$tmp" "${floors[@]}" || { echo "a tree with no upward include was refused"; exit 1; }
printf '#include "gmsim/policy.h"\n\n#include "gmsim/replay.h"\n' >"$tmp/sim/up.c"
printf '#include "sim/torch_rules.h"\n' >"$tmp/store/up.c"
printf '#include "store/sql.h"\n' >"$tmp/sim/private.c"
printf '#include <stdio.h>\n#include <zlib.h>\n' >"$tmp/sim/zip.c" # zlib: store and formats only
mkdir -p "$tmp/formats"
printf '#include <zlib.h>\n#include <sqlite3.h>\n' >"$tmp/formats/csvz.c" # SQLite: the nsys importer only
mkdir -p "$tmp/sim/deep"
printf '#include "replay/engine.h"\n' >"$tmp/sim/deep/up.c" # a floor's subfolders are its own
if python3 "$src/scripts/layers" "$tmp" "${floors[@]}" 2>"$tmp/err"; then
  echo "upward includes were not refused"; exit 1
fi
grep -q '^sim/up.c:3: .*"gmsim/replay.h" of floor replay' "$tmp/err" || { cat "$tmp/err"; exit 1; }
grep -q '^store/up.c:1: .*"sim/torch_rules.h" of floor sim' "$tmp/err" || { cat "$tmp/err"; exit 1; }
grep -q '^sim/private.c:1: .*"store/sql.h", which only store/' "$tmp/err" || { cat "$tmp/err"; exit 1; }
grep -q '^sim/deep/up.c:1: .*"replay/engine.h" of floor replay' "$tmp/err" || { cat "$tmp/err"; exit 1; }
grep -q '^sim/zip.c:2: .*<zlib.h>, an outside library only store/, formats/' "$tmp/err" || { cat "$tmp/err"; exit 1; }
grep -q '^formats/csvz.c:2: .*<sqlite3.h>, an outside library only store/, formats/nsys.c' "$tmp/err" || { cat "$tmp/err"; exit 1; }
[ "$(wc -l <"$tmp/err")" -eq 6 ] || { cat "$tmp/err"; exit 1; }
touch "$tmp/include/gmsim/new.h"
set +e; python3 "$src/scripts/layers" "$tmp" "${floors[@]}" 2>"$tmp/err"; rc=$?; set -e
[ $rc -eq 2 ] && grep -q 'new.h' "$tmp/err" || { echo "a public header with no floor passed ($rc)"; exit 1; }

# The link probes exist where the build is not sanitized (CMakeLists.txt).
if ! grep -q 'GM_SANITIZE:BOOL=ON' "$build/CMakeCache.txt"; then
  for f in "${floors[@]%%=*}"; do
    lib="$build/layers/libgm_layer_$f.so"
    [ -f "$lib" ] || { echo "missing link probe $lib"; exit 1; }
    if nm -u "$lib" | grep -q ' gm_'; then
      echo "floor $f calls up:"; nm -u "$lib" | grep ' gm_'; exit 1
    fi
  done
fi
bad=$(nm -D --defined-only "$build/libgmsim.so" | awk '$2 ~ /^[TDRB]$/ {print $3}' | grep -v '^gm_' || true)
[ -z "$bad" ] || { echo "libgmsim.so exports names outside gm_:"; echo "$bad" | head; exit 1; }
internal=$(nm -D --defined-only "$build/libgmsim.so" | awk '{print $3}' | grep '^gm__' || true)
[ -z "$internal" ] || { echo "libgmsim.so exports internal names:"; echo "$internal" | head; exit 1; }
echo "layers: no upward include or call; libgmsim.so exports its API alone"
