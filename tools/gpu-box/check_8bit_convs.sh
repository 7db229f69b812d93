#!/usr/bin/env bash
# On the GPU box, after tools/gpu-box/stage.sh: 8-bit convolutions on the GPU, most important
# first, each step with a time limit so a short device call still returns what it reached.
#   1. tests/gpu/check_8bit_convs.py --precision fp8, then int8: conv plans against the interpreter,
#      and between them `kiln calibrate --device gpu` against the interpreter's file
#   2. QDQ models (tests/importer/check_qdq_models.py --gpu): the E4M3 and int8 conv block against
#      onnxruntime, the E4M3 MLP (FP8 GEMMs)
#   3. generated kernels at odd sizes against the interpreter (the E4M3 max pools and the gather
#      groups first, then all)
#   4. ResNet-50 b256 in bf16, fp8 and int8 beside torch.compile bf16 (bench/gpu_suite.py)
#   5. (only when STEPS names `probes`) the conv kernel probes against cuDNN (probe_8bit.sh)
#   5b. (only when STEPS names them) `conv-kernels`: the generated INT8 1x1 kernel
#      (--conv-kernels=generated) against the interpreter (tests/gpu/check_conv_kernels.py);
#      `bench-conv-kernels`: ResNet-50 b256 int8 with cuDNN's convs beside torch.compile bf16,
#      then with the generated kernel on the same warm GPU (no second torch.compile: compare the
#      two kiln rows, and the second against the first row's anchor)
#   6. (only when SUITE_MODELS is set) those suite cells, e.g. vit_b_16:64,resnet50:1, in bf16,
#      fp8 and int8 beside torch.compile bf16, with kiln compare's culprits for 8-bit plans at b1
# Logs and the suite's JSON go to $OUT. STEPS=fp8-convs,qdq-mlp,... runs only the steps named
# (their log names), for a short call that re-checks what changed.
#   [STEPS=...] [SUITE_MODELS=...] tools/gpu-box/check_8bit_convs.sh [seconds, default 560]
set -uo pipefail
source "$(dirname "$0")/box-env.sh" /tmp/kiln-8bit-convs
export PYTHONUNBUFFERED=1
budget=${1:-560}
start=$SECONDS
left() { echo $((budget - (SECONDS - start))); }
status=0
step() { # seconds cap, log name, command...
  local cap=$1 log=$2
  shift 2
  if [ -n "${STEPS:-}" ] && [[ ",$STEPS," != *",$log,"* ]]; then return; fi
  local limit=$(left)
  [ "$cap" -lt "$limit" ] && limit=$cap
  if [ "$limit" -le 5 ]; then echo "== $log: no time left"; status=1; return; fi
  echo "== $log (limit ${limit}s, t=$((SECONDS - start))s)"
  timeout "$limit" "$@" > "$OUT/$log.log" 2>&1 || status=1
  grep -v '^WARN' "$OUT/$log.log" | cut -c1-400 | tail -n 12
}
nvidia-smi --query-gpu=name --format=csv,noheader
step 90 fp8-convs python3 tests/gpu/check_8bit_convs.py --kiln build-gpu/kiln --precision fp8
step 60 gpu-calibration python3 tests/gpu/check_gpu_calibration.py --kiln build-gpu/kiln
step 90 int8-convs python3 tests/gpu/check_8bit_convs.py --kiln build-gpu/kiln --precision int8
step 40 qdq-conv-block python3 tests/importer/check_qdq_models.py --kiln build-gpu/kiln --model conv_block \
  --expect-int8-convs 3 --expect-fp8-convs 3 --work-dir "$WORK/conv_block" --gpu --configs int8-symmetric-activations,fp8-convs
step 40 qdq-mlp python3 tests/importer/check_qdq_models.py --kiln build-gpu/kiln --model mlp --batch 64 \
  --expect-fp8-gemms 2 --work-dir "$WORK/mlp" --gpu --configs fp8-linear-layers
# The E4M3 max pools first (fp8 plans move a quantization above a max pool since they passed on
# the H100), then every generated kernel (208 cases: more than a short call's 60 s).
step 30 e4m3-max-pools python3 tests/gpu/check_generated_kernels.py --kiln build-gpu/kiln \
  --only pool_last_max_pool_k3s2_f8E4M3FN,pool_last_max_pool_k23d2ceil_f8E4M3FN
# The gather groups (ResNet's stem input; vectorized stores since 2026-12-08).
step 40 gather-groups python3 tests/gpu/check_generated_kernels.py --kiln build-gpu/kiln --only gather_
# The kernels new on 2026-12-08 (BERT's embedding lookup in its norm group, the in-place
# where after attention) before the whole set.
step 40 new-kernels python3 tests/gpu/check_generated_kernels.py --kiln build-gpu/kiln \
  --only norm_group_embedding_,softmax_where_in_place_
step 60 generated-kernels python3 tests/gpu/check_generated_kernels.py --kiln build-gpu/kiln
step 300 bench python3 bench/gpu_suite.py --kiln build-gpu/kiln --results-dir "$OUT" --models resnet50:256 \
  --precisions bf16,fp8,int8 --tag 8bit-convs-resnet50-b256
# cuDNN's 1x1 INT8 graphs and the stem kernel of our own against cuDNN (bench/stem_conv_probe.cu; its
# binaries in build-gpu/probes, carried beside build-gpu/kiln). Only when STEPS names it.
if [[ ",${STEPS:-}," == *",probes,"* ]]; then
  step 150 probes bash tools/gpu-box/probe_8bit.sh conv1x1 stem
fi
if [[ ",${STEPS:-}," == *",conv-kernels,"* ]]; then
  step 150 conv-kernels python3 tests/gpu/check_conv_kernels.py --kiln build-gpu/kiln
fi
if [[ ",${STEPS:-}," == *",bench-conv-kernels,"* ]]; then
  STEPS="" step 200 bench-cudnn-convs python3 bench/gpu_suite.py --kiln build-gpu/kiln --results-dir "$OUT" \
    --models resnet50:256 --precisions int8 --tag resnet50-b256-int8-cudnn-convs
  STEPS="" step 200 bench-generated-convs python3 bench/gpu_suite.py --kiln build-gpu/kiln --results-dir "$OUT" \
    --models resnet50:256 --precisions int8 --compile-args=--conv-kernels=generated --skip-torch-compile \
    --tag resnet50-b256-int8-generated-convs
fi
if [ -n "${SUITE_MODELS:-}" ]; then
  suite_seconds=$(( $(left) - 150 ))
  [ "$suite_seconds" -lt 60 ] && suite_seconds=60
  step 590 suite python3 bench/gpu_suite.py --kiln build-gpu/kiln --results-dir "$OUT" --models "$SUITE_MODELS" \
    --precisions bf16,fp8,int8 --culprits --max-seconds $suite_seconds --tag 8bit-suite-rest
fi
echo "end (t=$((SECONDS - start))s, status $status)"
exit $status
