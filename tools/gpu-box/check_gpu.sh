#!/usr/bin/env bash
# On the GPU box, after tools/gpu-box/stage.sh staged build-gpu/ here: runs the GPU test
# binaries, every in-scope ONNX node test compiled and run on the GPU, generated kernels at odd
# sizes against the interpreter, the suite benchmark and the torchvision accuracy sweep. Logs go
# to $OUT (or /tmp/kiln-gpu-out): one log and one JSON per script, since few files come back.
#   tools/gpu-box/check_gpu.sh [--tests] [--nodes] [--kernels] [--half] [--attention] [--conv] [--8bit] [--accuracy <accuracy_torchvision.py args>]
#                              [--bench <gpu_suite.py args>]
# --accuracy and --bench take the arguments that follow them, up to the other one of the two;
# both may be given, and run in the order given, e.g.
#   check_gpu.sh --accuracy --max-seconds 240 --bench --models vit_b_16:64 --tag mixed-precision
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
      # One log for all test binaries: only 8 files come back from the box.
      : > "$OUT/gpu-tests.log"
      for t in "$STAGE"/tests/*; do
        echo "== $(basename "$t")" | tee -a "$OUT/gpu-tests.log"
        if ! "$t" --gtest_brief=1 > /tmp/kiln-test.log 2>&1; then status=1; fi
        cat /tmp/kiln-test.log >> "$OUT/gpu-tests.log"
        tail -n 30 /tmp/kiln-test.log
      done ;;
    --nodes)
      rm -rf /tmp/kiln-node-tests && mkdir -p /tmp/kiln-node-tests
      tar -xzf "$STAGE/node-tests.tgz" -C /tmp/kiln-node-tests
      python3 tests/conformance/run_conformance.py --gpu --kiln "$STAGE/kiln" --node-dir /tmp/kiln-node-tests \
        --jobs 8 > "$OUT/gpu-conformance.log" 2>&1 || status=1
      grep -v '^FAILED' "$OUT/gpu-conformance.log" | tail -n 5
      grep '^FAILED' "$OUT/gpu-conformance.log" | head -n 80 ;;
    --half)
      [ -d /tmp/kiln-node-tests ] || { mkdir -p /tmp/kiln-node-tests && tar -xzf "$STAGE/node-tests.tgz" -C /tmp/kiln-node-tests; }
      python3 tests/gpu/check_half_precision.py --kiln "$STAGE/kiln" --node-dir /tmp/kiln-node-tests --jobs 12 \
        > "$OUT/half-precision.log" 2>&1 || status=1
      grep -v '^FAILED' "$OUT/half-precision.log" | tail -n 5
      grep '^FAILED' "$OUT/half-precision.log" | head -n 80 ;;
    --kernels)
      python3 tests/gpu/check_generated_kernels.py --kiln "$STAGE/kiln" > "$OUT/generated-kernels.log" 2>&1 || status=1
      grep -v '^ok' "$OUT/generated-kernels.log" | tail -n 40 ;;
    --attention)
      python3 tests/gpu/check_attention.py --kiln "$STAGE/kiln" > "$OUT/attention.log" 2>&1 || status=1
      tail -n 20 "$OUT/attention.log" ;;
    --conv)
      python3 tests/gpu/check_conv_graphs.py --kiln "$STAGE/kiln" > "$OUT/conv-graphs.log" 2>&1 || status=1
      tail -n 20 "$OUT/conv-graphs.log" ;;
    --8bit)
      # FP8 linear layers, INT8 and FP8 convolutions against the interpreter.
      for check in "fp8_gemms" "8bit_convs int8" "8bit_convs fp8"; do
        read -r script precision <<< "$check"
        log="$OUT/$script${precision:+_$precision}.log"
        python3 tests/gpu/check_$script.py --kiln "$STAGE/kiln" ${precision:+--precision "$precision"} > "$log" 2>&1 \
          || status=1
        tail -n 12 "$log"
      done ;;
    --bench|--accuracy)
      which=$1
      shift
      args=()
      while [ $# -gt 0 ] && [ "$1" != --bench ] && [ "$1" != --accuracy ]; do args+=("$1"); shift; done
      # tee: the progress shows in the call's output even when the call is cut short.
      if [ "$which" = --bench ]; then
        python3 bench/gpu_suite.py --kiln "$STAGE/kiln" --results-dir "$OUT" "${args[@]}" 2>&1 \
          | tee "$OUT/bench.log" || status=1
      else
        python3 tools/gpu-box/accuracy_torchvision.py --kiln "$STAGE/kiln" --json "$OUT/accuracy_torchvision.json" \
          "${args[@]}" 2>&1 | tee "$OUT/accuracy.log" || status=1
      fi
      continue ;;
    *) echo "check_gpu.sh: unknown option $1"; exit 2 ;;
  esac
  shift
done
exit $status
