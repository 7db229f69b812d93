#!/usr/bin/env bash
# On the GPU box, after tools/gpu-box/stage.sh: the 8-bit suite table (every suite cell in bf16,
# fp8 and int8, each beside torch.compile bf16 in the same run) in four parts that each fit one
# device call on a fresh machine (the H100 took about 310, 300, 410 and 180 s for them on
# 2026-12-07/08, cuDNN tuning included), the acceptance's cells first; every 8-bit plan at
# batch 1 gets `kiln compare` culprits (--culprits). Results into $OUT; merge the parts' files
# afterwards with `python3 bench/gpu_suite.py --merge A.json B.json ... --tag 8bit-suite-all`.
#   tools/gpu-box/suite_8bit.sh 1|2|3|4 [max seconds before no new model starts, default 420]
set -uo pipefail
source "$(dirname "$0")/box-env.sh" /tmp/kiln-suite-8bit
case "${1:-}" in
  1) models=resnet50:256,bert_base_seq128:32 ;;
  2) models=mobilenet_v3_large:256,vit_b_16:64 ;;
  3) models=mobilenet_v3_large:1,resnet50:1 ;;
  4) models=bert_base_seq128:1,vit_b_16:1 ;;
  *) echo "usage: tools/gpu-box/suite_8bit.sh 1|2|3|4 [max seconds]" >&2; exit 2 ;;
esac
nvidia-smi --query-gpu=name --format=csv,noheader
python3 bench/gpu_suite.py --kiln build-gpu/kiln --results-dir "$OUT" --models "$models" \
  --precisions bf16,fp8,int8 --culprits --max-seconds "${2:-420}" --tag "8bit-suite-part$1" 2>&1 |
  tee "$OUT/suite-8bit-part$1.log" | grep -v '^   {' | tail -n 40
exit "${PIPESTATUS[0]}"
