#!/usr/bin/env bash
# On the GPU box, after tools/gpu-box/stage.sh: which 8-bit cuDNN convolution graphs and
# cuBLASLt GEMMs run for the suite's shapes and how fast against bf16 (bench/conv8_probe.cpp,
# bench/gemm8_probe.cpp), into $OUT/conv8-probe.txt and $OUT/gemm8-probe.txt.
#   tools/gpu-box/probe_8bit.sh [conv|gemm ...]   (default: both)
set -uo pipefail
source "$(dirname "$0")/box-env.sh"
status=0
for which in ${@:-gemm conv}; do
  nvidia-smi --query-gpu=name --format=csv,noheader > "$OUT/$which""8-probe.txt"
  build-gpu/probes/"$which"8_probe 2>&1 | tee -a "$OUT/$which""8-probe.txt" || status=1
done
exit $status
