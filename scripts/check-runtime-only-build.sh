#!/usr/bin/env bash
# Proves the runtime builds with the compiler switched off and that no MLIR/LLVM path reaches
# any compile or link line (what an embedding user links must not drag in LLVM).
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${KILN_RUNTIME_BUILD_DIR:-build-runtime-only}
cmake -S . -B "$DIR" -G Ninja -DKILN_BUILD_COMPILER=OFF -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$DIR" -j 2 >/dev/null
ninja -C "$DIR" -t commands > "$DIR/all-commands.txt"
[ -s "$DIR/all-commands.txt" ] || { echo "runtime-only build: FAIL, nothing was built"; exit 1; }
(cd "$DIR" && ctest --output-on-failure) >/dev/null || { echo "runtime-only build: FAIL, its tests fail"; exit 1; }
if grep -Eiq 'llvm|mlir' "$DIR/all-commands.txt"; then
  echo "runtime-only build: FAIL, an LLVM/MLIR path is on a compile or link line:"
  grep -Eio '[^ ]*(llvm|mlir)[^ ]*' "$DIR/all-commands.txt" | sort -u | head
  exit 1
fi
echo "runtime-only build: ok ($(grep -c . "$DIR/all-commands.txt") commands, no LLVM/MLIR path)"
