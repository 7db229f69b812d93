#!/usr/bin/env bash
# Sets up, builds and runs the main job on the bundled example: imports examples/tiny_cnn.onnx
# (symbolic batch, fixed here to 1) into the kiln dialect and prints the IR summary.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-deps.sh
scripts/build.sh
BUILD_DIR=${KILN_BUILD_DIR:-build}
"$BUILD_DIR/tools/kiln" import examples/tiny_cnn.onnx --shape image=1x3x32x32 -o "$BUILD_DIR/tiny_cnn.mlir"
echo "IR written to $BUILD_DIR/tiny_cnn.mlir"
