#!/usr/bin/env bash
# On the GPU box, after tools/gpu-box/stage.sh: which 8-bit cuDNN convolution graphs and
# cuBLASLt GEMMs run for the suite's shapes and how fast against bf16 (bench/conv8_probe.cpp,
# bench/gemm8_probe.cpp), into $OUT/conv8-probe.txt and $OUT/gemm8-probe.txt; `conv1x1` runs
# cuDNN's INT8 graphs of ResNet's memory-bound 1x1 convs with a residual, into
# $OUT/conv1x1-probe.txt (the kernel of our own for them is a plan step now: `kiln compile
# --conv-kernels=generated`, timed per step by check_8bit_convs.sh's bench-conv-kernels); `stem`
# runs bench/stem_conv_probe.cu (ResNet's s2d stem as an implicit GEMM of our own) and cuDNN's
# bf16 graph of it, into $OUT/stem-probe.txt.
#   tools/gpu-box/probe_8bit.sh [conv|gemm|conv1x1|stem ...]   (default: gemm and conv)
set -uo pipefail
source "$(dirname "$0")/box-env.sh"
status=0
for which in ${@:-gemm conv}; do
  if [ "$which" = conv1x1 ]; then
    nvidia-smi --query-gpu=name --format=csv,noheader > "$OUT/conv1x1-probe.txt"
    for shape in "l1 1x1 64->256" "l2 1x1 128->512"; do
      build-gpu/probes/conv8_probe "$shape" "int8 *s[k]+bias+" 2>&1 | tee -a "$OUT/conv1x1-probe.txt" || status=1
    done
    continue
  fi
  if [ "$which" = stem ]; then
    nvidia-smi --query-gpu=name --format=csv,noheader > "$OUT/stem-probe.txt"
    build-gpu/probes/stem_conv_probe 2>&1 | tee -a "$OUT/stem-probe.txt" || status=1
    build-gpu/probes/conv8_probe "stem s2d 4x4 16->64" "bf16 +bias" 2>&1 | tee -a "$OUT/stem-probe.txt" || status=1
    continue
  fi
  nvidia-smi --query-gpu=name --format=csv,noheader > "$OUT/$which""8-probe.txt"
  build-gpu/probes/"$which"8_probe 2>&1 | tee -a "$OUT/$which""8-probe.txt" || status=1
done
exit $status
