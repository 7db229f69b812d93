#!/usr/bin/env bash
# Builds what the GPU box runs (it has CUDA, cuDNN and torch but no LLVM) into build-gpu/, the
# folder a device call carries:
#   build-gpu/kiln            kiln with MLIR/LLVM/protobuf linked statically (CUDA libs shared)
#   build-gpu/tests/*         the GPU test binaries (runtime-only build, ctest label `gpu`)
#   build-gpu/node-tests.tgz  the in-scope ONNX node tests (libonnx-testdata is not on the box)
#   build-gpu/probes/*        the 8-bit cuDNN/cuBLASLt probes (bench/*_probe.cpp) and the conv
#                             stem kernel of our own (bench/stem_conv_probe.cu)
# Then, on the box: tools/gpu-box/check_gpu.sh (tests, node tests on the GPU, models).
set -euo pipefail
cd "$(dirname "$0")/../.."
STAGE=build-gpu
mkdir -p "$STAGE/tests"
# A build/ configured with -DKILN_STATIC_LLVM=ON serves as it is (one compile instead of two on a
# fresh machine); otherwise build-static/ is the static one.
STATIC=build-static
if grep -q '^KILN_STATIC_LLVM:BOOL=ON' build/CMakeCache.txt 2>/dev/null; then STATIC=build; fi
if [ ! -f "$STATIC/build.ninja" ]; then
  cmake -S . -B "$STATIC" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_STATIC_LLVM=ON -DKILN_BUILD_TESTS=OFF
fi
ninja -C "$STATIC" kiln
cp "$STATIC/tools/kiln" "$STAGE/kiln"
if [ ! -f build-gpu-tests/build.ninja ]; then
  cmake -S . -B build-gpu-tests -G Ninja -DCMAKE_BUILD_TYPE=Release -DKILN_BUILD_COMPILER=OFF \
    -DKILN_BUILD_KERNELS_ONLY=ON
fi
ninja -C build-gpu-tests
# Every test executable of that build (unit tests run there too: they are cheap).
find build-gpu-tests/tests -maxdepth 2 -type f -executable -name '*Test*' -exec cp {} "$STAGE/tests/" \;
python3 - "$STAGE/node-tests.tgz" <<'PY'
import os, sys, tarfile
sys.path.insert(0, "tests/conformance")
from node_tests import NODE_DIR, in_scope_tests
with tarfile.open(sys.argv[1], "w:gz") as tar:
    for name, path in in_scope_tests(NODE_DIR):
        tar.add(path, arcname=name)
PY
# The 8-bit library probes (bench/*_probe.cpp; tools/gpu-box/probe_8bit.sh runs them), rebuilt
# when their source is newer: the cuDNN frontend's headers take nvcc about two minutes.
mkdir -p "$STAGE/probes"
probe() { # name, extra nvcc arguments
  local src="bench/$1.cpp" bin="$STAGE/probes/$1"
  [ -f "bench/$1.cu" ] && src="bench/$1.cu"
  if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ]; then
    nvcc -std=c++17 -O2 -arch=sm_90 "$src" -o "$bin" "${@:2}"
  fi
}
probe conv8_probe -Ithird_party/cudnn-frontend/include -lcudnn -lnvrtc
probe conv8_check_probe -Ithird_party/cudnn-frontend/include -lcudnn -lnvrtc
probe gemm8_probe -lcublasLt
probe stem_conv_probe
du -sh "$STAGE"/* | sed 's/^/staged: /'
