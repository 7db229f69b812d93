# Sourced by the GPU-box scripts: the repository root as the working directory, $OUT (where
# results go back; /tmp/kiln-gpu-out outside a device call) and $WORK (the caller's scratch
# folder, given as the first argument unless WORK is set) created, and the CUDA library and
# header paths the box's kiln needs at run time and for NVRTC.
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
OUT=${OUT:-/tmp/kiln-gpu-out}
WORK=${WORK:-${1:-/tmp/kiln-work}}
mkdir -p "$OUT" "$WORK"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export KILN_CUDA_INCLUDE=${KILN_CUDA_INCLUDE:-/usr/local/cuda/include}
