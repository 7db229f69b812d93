#!/usr/bin/env bash
# Sets up, builds and runs the main job on the bundled example: compiles examples/tiny_cnn.onnx
# (symbolic batch, fixed here to 1) into a plan for the GPU runtime -- no GPU needed -- and shows
# what the plan holds. On a machine with a CUDA GPU it also runs and times the plan.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-deps.sh
scripts/build.sh
BUILD_DIR=${KILN_BUILD_DIR:-build}
KILN="$BUILD_DIR/tools/kiln"
"$KILN" compile examples/tiny_cnn.onnx --shape image=1x3x32x32 -o "$BUILD_DIR/tiny_cnn.kiln"
"$KILN" inspect "$BUILD_DIR/tiny_cnn.kiln"
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  "$KILN" run "$BUILD_DIR/tiny_cnn.kiln"
  "$KILN" bench "$BUILD_DIR/tiny_cnn.kiln" --iterations 200
else
  echo "no CUDA GPU here: plan written to $BUILD_DIR/tiny_cnn.kiln (run it with 'kiln run' on a GPU machine)"
fi
