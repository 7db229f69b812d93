#!/usr/bin/env bash
# On the GPU box, after tools/gpu-box/stage.sh: where an fp8 plan's GPU time goes. For each
# suite model given (name:batch, default BERT-base at batch 32): export at that batch and at
# batch 1, calibrate through the batch-1 export (as bench/gpu_suite.py does), compile bf16 and
# fp8 plans and write `kiln profile` of each into $OUT/profile-<name>-b<batch>-<precision>.txt,
# `kiln inspect` of each plan (every step with its buffers) into $OUT/inspect-...txt.gz, and the
# fp8 module before the passes and after the last one (weights elided) into $OUT/ir-<name>/.
#   tools/gpu-box/profile_fp8.sh [name:batch,...]
set -uo pipefail
source "$(dirname "$0")/box-env.sh" /tmp/kiln-fp8
status=0
for cell in $(echo "${1:-bert_base_seq128:32}" | tr ',' '\n'); do
  m=${cell%%:*} b=${cell##*:}
  python3 - "$m" "$b" "$WORK" <<'PY' || { status=1; continue; }
import os, sys
sys.path.insert(0, "bench")
import kiln_models as km
name, batch, work = sys.argv[1], int(sys.argv[2]), sys.argv[3]
for n in sorted({1, batch}):
    path = f"{work}/{name}_b{n}.onnx"
    if not os.path.exists(path):
        model, inputs, names, _ = km.build_suite_model(name, n)
        km.export_onnx(model, inputs, names, path)
        if n == 1:
            km.write_calibration_inputs(dict(zip(names, [t.numpy() for t in inputs])), f"{work}/{name}_cal")
PY
  [ -f "$WORK/$m.calib.json" ] || build-gpu/kiln calibrate "$WORK/${m}_b1.onnx" --calibration "$WORK/${m}_cal" \
    -o "$WORK/$m.calib.json" --quiet || status=1
  for p in bf16 fp8; do
    extra=(); [ "$p" = fp8 ] && extra=(--calibration "$WORK/$m.calib.json")
    build-gpu/kiln compile "$WORK/${m}_b$b.onnx" --precision $p "${extra[@]}" -o "$WORK/$m-b$b-$p.kiln" --quiet || status=1
    build-gpu/kiln profile "$WORK/$m-b$b-$p.kiln" --top 0 > "$OUT/profile-$m-b$b-$p.txt" 2>&1 || status=1
    build-gpu/kiln inspect "$WORK/$m-b$b-$p.kiln" | gzip > "$OUT/inspect-$m-b$b-$p.txt.gz" || status=1
    head -5 "$OUT/profile-$m-b$b-$p.txt"
  done
  rm -rf "$WORK/ir-$m" && mkdir -p "$OUT/ir-$m"
  build-gpu/kiln compile "$WORK/${m}_b$b.onnx" --precision fp8 --calibration "$WORK/$m.calib.json" -o "$WORK/ir-$m.kiln" \
    --dump-ir "$WORK/ir-$m" --quiet || status=1
  for f in "$WORK/ir-$m"/00-*.mlir "$(ls "$WORK/ir-$m"/*.mlir | tail -1)"; do gzip -c "$f" > "$OUT/ir-$m/$(basename "$f").gz"; done
done
exit $status
