#!/usr/bin/env bash
# On the GPU box, after tools/gpu-box/stage.sh: QDQ models from onnxruntime's quantizer, run
# by Kiln on the GPU against onnxruntime's own run (tests/importer/check_qdq_models.py --gpu):
# the bundled tiny CNN, a generated residual block whose symmetric QDQ convs run as INT8
# convolutions and its E4M3 ones as FP8 convolutions, a generated MLP whose E4M3 QDQ linear layers run as FP8 GEMMs, then suite CNNs exported here with torch (bench/kiln_models.py).
#   tools/gpu-box/check_qdq.sh [model ...]      (default: resnet50 mobilenet_v3_large)
set -uo pipefail
source "$(dirname "$0")/box-env.sh" /tmp/kiln-qdq
status=0
python3 tests/importer/check_qdq_models.py --kiln build-gpu/kiln --model examples/tiny_cnn.onnx \
  --work-dir "$WORK/tiny_cnn" --gpu 2>&1 | grep -v '^WARNING' | tee "$OUT/qdq-tiny_cnn.log" || status=1
# 8-bit convolutions from a QDQ model: the generated residual block, 3 INT8 convs when symmetric,
# 3 FP8 convs in E4M3.
python3 tests/importer/check_qdq_models.py --kiln build-gpu/kiln --model conv_block --expect-int8-convs 3 \
  --expect-fp8-convs 3 \
  --work-dir "$WORK/conv_block" --gpu 2>&1 | grep -v '^WARNING' | tee "$OUT/qdq-conv_block.log" || status=1
# FP8 GEMMs from a QDQ model: the generated MLP, 2 FP8 GEMMs in its E4M3 configuration.
python3 tests/importer/check_qdq_models.py --kiln build-gpu/kiln --model mlp --batch 64 --expect-fp8-gemms 2 \
  --work-dir "$WORK/mlp" --gpu 2>&1 | grep -v '^WARNING' | tee "$OUT/qdq-mlp.log" || status=1
models=("$@")
[ ${#models[@]} -eq 0 ] && models=(resnet50 mobilenet_v3_large)
for m in "${models[@]}"; do
  python3 - "$m" "$WORK/$m.onnx" <<'PY' || { status=1; continue; }
import sys
sys.path.insert(0, "bench")
import kiln_models as km
model, inputs, names, _ = km.build_suite_model(sys.argv[1], 1)
km.export_onnx(model, inputs, names, sys.argv[2])
PY
  python3 tests/importer/check_qdq_models.py --kiln build-gpu/kiln --model "$WORK/$m.onnx" \
    --work-dir "$WORK/$m" --gpu 2>&1 | grep -v '^WARNING' | tee "$OUT/qdq-$m.log" || status=1
done
exit $status
