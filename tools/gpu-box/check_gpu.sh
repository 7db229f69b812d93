#!/usr/bin/env bash
# On the GPU box, after tools/gpu-box/stage.sh staged build-gpu/ here: runs the GPU test
# binaries, every in-scope ONNX node test compiled and run on the GPU, generated kernels at odd
# sizes against the interpreter, and the suite benchmark. Logs go to $OUT (or /tmp/kiln-gpu-out).
#   tools/gpu-box/check_gpu.sh [--tests] [--nodes] [--kernels] [--bench <gpu_suite.py args>]
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/kiln-gpu-out}
mkdir -p "$OUT"
STAGE=build-gpu
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export KILN_CUDA_INCLUDE=${KILN_CUDA_INCLUDE:-/usr/local/cuda/include}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
status=0
while [ $# -gt 0 ]; do
  case "$1" in
    --tests)
      for t in "$STAGE"/tests/*; do
        echo "== $(basename "$t")"
        if ! "$t" --gtest_brief=1 > "$OUT/$(basename "$t").log" 2>&1; then status=1; fi
        tail -n 30 "$OUT/$(basename "$t").log"
      done ;;
    --nodes)
      rm -rf /tmp/kiln-node-tests && mkdir -p /tmp/kiln-node-tests
      tar -xzf "$STAGE/node-tests.tgz" -C /tmp/kiln-node-tests
      python3 tests/conformance/run_conformance.py --gpu --kiln "$STAGE/kiln" --node-dir /tmp/kiln-node-tests \
        --jobs 8 > "$OUT/gpu-conformance.log" 2>&1 || status=1
      grep -v '^FAILED' "$OUT/gpu-conformance.log" | tail -n 5
      grep '^FAILED' "$OUT/gpu-conformance.log" | head -n 80 ;;
    --kernels)
      python3 tests/gpu/check_generated_kernels.py --kiln "$STAGE/kiln" > "$OUT/generated-kernels.log" 2>&1 || status=1
      tail -n 40 "$OUT/generated-kernels.log" ;;
    --bench)
      shift
      python3 bench/gpu_suite.py --kiln "$STAGE/kiln" --results-dir "$OUT" "$@" 2> "$OUT/bench.log" || status=1
      tail -n 40 "$OUT/bench.log"
      break ;;
    *) echo "check_gpu.sh: unknown option $1"; exit 2 ;;
  esac
  shift
done
exit $status
