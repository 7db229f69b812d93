#!/usr/bin/env bash
# Builds Kiln with AddressSanitizer + UBSan into build-asan/ and runs the inputs that attack the
# importer (bad-input cases, bit flips, every ONNX node test), the plan reader (every bit flip
# and truncation), codegen (`kiln compile` of every node test) and the unit tests under it. Any
# sanitizer report fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${KILN_ASAN_BUILD_DIR:-build-asan}
if [ ! -f "$DIR/build.ninja" ]; then
  cmake -S . -B "$DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKILN_SANITIZE=ON >/dev/null
fi
cmake --build "$DIR" -j "${KILN_JOBS:-2}" --target kiln kiln-opt ExternalDataTest ShapeRulesTest RuntimeTest \
  PlanTest MemoryPlannerTest EngineHostTest
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
"$DIR/tests/unit/ExternalDataTest" --gtest_brief=1
"$DIR/tests/unit/ShapeRulesTest" --gtest_brief=1
"$DIR/tests/RuntimeTest" --gtest_brief=1
"$DIR/tests/PlanTest" --gtest_brief=1
"$DIR/tests/unit/MemoryPlannerTest" --gtest_brief=1
"$DIR/tests/EngineHostTest" --gtest_brief=1
python3 tests/importer/run_importer_tests.py --kiln "$DIR/tools/kiln" --work-dir "$DIR/importer-tests"
python3 tests/conformance/import_node_tests.py --kiln "$DIR/tools/kiln" \
  --expected tests/conformance/import_expected_rejections.txt | tail -1
python3 tests/conformance/import_node_tests.py --compile --kiln "$DIR/tools/kiln" \
  --expected tests/conformance/import_expected_rejections.txt | tail -1
echo "sanitizers: no reports"
