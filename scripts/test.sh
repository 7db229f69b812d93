#!/usr/bin/env bash
# Sets up, builds and runs every test: GoogleTest units, lit/FileCheck, importer bad-input
# tests, `kiln import` over the ONNX node tests, and the runtime-only build check.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-deps.sh
scripts/build.sh
BUILD_DIR=${KILN_BUILD_DIR:-build}
ctest --test-dir "$BUILD_DIR" --output-on-failure -j 2
# ctest keeps a passing test's output to itself: repeat the import rejections (with their
# reasons) and the summary lines the ONNX suites print.
grep -hE '^(rejected |import: |compile: |conformance: |gpu-conformance: |generated-kernels: )' "$BUILD_DIR/Testing/Temporary/LastTest.log"
scripts/check-runtime-only-build.sh
