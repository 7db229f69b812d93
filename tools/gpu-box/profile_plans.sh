#!/usr/bin/env bash
# On the GPU box, after tools/gpu-box/stage.sh: where each plan's GPU time goes. For each suite
# model given (name:batch, default BERT-base at batch 32): export at that batch and at batch 1,
# calibrate through the batch-1 export (as bench/gpu_suite.py does), compile a plan per variant
# and write `kiln profile --top 0` of each into $OUT/profile-<name>-b<batch>-<variant>.txt and
# `kiln inspect` of each plan (every step with its buffers) into $OUT/inspect-...txt.gz; with
# IR=1, also the last variant's module before the passes and after the last one (weights
# elided) into $OUT/ir-<name>/.
#   tools/gpu-box/profile_plans.sh [name:batch,...] [variant,...]
# A variant is a precision (default: bf16,fp8), fp8 and int8 calibrated, optionally followed by
# `@` and the ops that stay unquantized (--keep-unquantized; `;`-separated), e.g.
#   tools/gpu-box/profile_plans.sh resnet50:256 'bf16,int8,int8@/conv1/Conv'
# KILN names another kiln binary (default build-gpu/kiln) and TAG is appended to the file names,
# to compare two builds in one call: KILN=scratch/kiln-before TAG=-before profile_plans.sh ...
set -uo pipefail
source "$(dirname "$0")/box-env.sh" /tmp/kiln-profile
KILN=${KILN:-build-gpu/kiln} TAG=${TAG:-}
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
  [ -f "$WORK/$m.calib.json" ] || "$KILN" calibrate "$WORK/${m}_b1.onnx" --calibration "$WORK/${m}_cal" \
    -o "$WORK/$m.calib.json" --quiet || status=1
  flags=()
  for variant in $(echo "${2:-bf16,fp8}" | tr ',' '\n'); do
    p=${variant%%@*} label=$p
    flags=(--precision "$p")
    [ "$p" = fp8 ] || [ "$p" = int8 ] && flags+=(--calibration "$WORK/$m.calib.json")
    if [ "$variant" != "$p" ]; then
      flags+=(--keep-unquantized "$(echo "${variant#*@}" | tr ';' ',')")
      label=$p-keep
    fi
    plan=$WORK/$m-b$b-$label$TAG.kiln
    "$KILN" compile "$WORK/${m}_b$b.onnx" "${flags[@]}" -o "$plan" --quiet || status=1
    "$KILN" profile "$plan" --top 0 > "$OUT/profile-$m-b$b-$label$TAG.txt" 2>&1 || status=1
    "$KILN" inspect "$plan" | gzip > "$OUT/inspect-$m-b$b-$label$TAG.txt.gz" || status=1
    echo "== $m b$b $variant$TAG"; head -5 "$OUT/profile-$m-b$b-$label$TAG.txt"
  done
  [ "${IR:-0}" = 1 ] || continue
  rm -rf "$WORK/ir-$m" && mkdir -p "$OUT/ir-$m"
  "$KILN" compile "$WORK/${m}_b$b.onnx" "${flags[@]}" -o "$WORK/ir-$m.kiln" --dump-ir "$WORK/ir-$m" --quiet ||
    status=1
  for f in "$WORK/ir-$m"/00-*.mlir "$(ls "$WORK/ir-$m"/*.mlir | tail -1)"; do gzip -c "$f" > "$OUT/ir-$m/$(basename "$f").gz"; done
done
exit $status
