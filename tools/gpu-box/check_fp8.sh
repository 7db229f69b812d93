#!/usr/bin/env bash
# On the GPU box, after tools/gpu-box/stage.sh: FP8 linear layers (`--precision fp8`) on the GPU.
# The small-model check against the interpreter (tests/gpu/check_fp8_gemms.py), then the suite
# models given (default: BERT-base and ViT-B/16 at batch 1 and their large batch) in bf16 and
# fp8 beside torch.compile bf16 (bench/gpu_suite.py; results into $OUT).
#   tools/gpu-box/check_fp8.sh [name:batch,...]
set -uo pipefail
source "$(dirname "$0")/box-env.sh" /tmp/kiln-fp8
status=0
python3 tests/gpu/check_fp8_gemms.py --kiln build-gpu/kiln 2>&1 | tee "$OUT/fp8-gemms.log" || status=1
models=${1:-bert_base_seq128:1,bert_base_seq128:32,vit_b_16:1,vit_b_16:64}
# What the fp8 pipeline makes of each model's batch-1 export: its remarks (layers left in bf16
# and why) and how many gemm steps run in FP8.
for m in $(echo "$models" | tr ',' '\n' | cut -d: -f1 | sort -u); do
  python3 - "$m" "$WORK" <<'PY' || { status=1; continue; }
import sys
sys.path.insert(0, "bench")
import kiln_models as km
name, work = sys.argv[1], sys.argv[2]
model, inputs, names, _ = km.build_suite_model(name, 1)
km.export_onnx(model, inputs, names, f"{work}/{name}.onnx")
km.write_calibration_inputs(dict(zip(names, [t.numpy() for t in inputs])), f"{work}/{name}_cal")
PY
  build-gpu/kiln calibrate "$WORK/$m.onnx" --calibration "$WORK/${m}_cal" -o "$WORK/$m.calib.json" --quiet || status=1
  build-gpu/kiln compile "$WORK/$m.onnx" --precision fp8 --calibration "$WORK/$m.calib.json" -o "$WORK/$m.fp8.kiln" \
    2>&1 | grep -v "^kiln compile: \(importing\|optimizing\|lowering\|planning\|compiling\)" | tee "$OUT/fp8-compile-$m.log"
  echo "$m: $(build-gpu/kiln inspect "$WORK/$m.fp8.kiln" | grep -c ' gemm .*a=[^ ]*f8e4m3fn') FP8 gemm steps of" \
    "$(build-gpu/kiln inspect "$WORK/$m.fp8.kiln" | grep -c ' gemm ')" | tee -a "$OUT/fp8-compile-$m.log"
done
python3 bench/gpu_suite.py --kiln build-gpu/kiln --models "$models" --precisions bf16,fp8 --tag fp8 \
  --results-dir "$OUT" 2>&1 | grep -v '^WARNING' | tail -40 || status=1
exit $status
