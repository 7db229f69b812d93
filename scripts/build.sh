#!/usr/bin/env bash
# Configures (once) and builds Kiln into build/ (or $KILN_BUILD_DIR) with ninja and ccache.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${KILN_BUILD_DIR:-build}
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
fi
# Two cores, MLIR-heavy translation units: more jobs only thrash memory.
cmake --build "$BUILD_DIR" -j "${KILN_JOBS:-2}"
