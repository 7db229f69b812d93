#!/usr/bin/env bash
# Installs everything Kiln needs to build and test on Debian 12. Idempotent: a second run only
# checks. Needs root (or sudo) for apt-get; pip packages are test tooling only, except the
# cuDNN frontend headers (a pinned, hash-checked wheel unpacked into third_party/).
set -euo pipefail

APT_PACKAGES=(
  cmake ninja-build ccache g++ git python3 python3-pip
  libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools
  libonnx-dev libprotobuf-dev protobuf-compiler
  libgtest-dev libonnx-testdata libeigen3-dev
  chromium  # headless, to test the HTML report of `kiln compare` (tests/tools/check_compare_report.py)
)
PIP_PACKAGES=(onnx numpy onnxruntime)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup-deps: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi

PY=${PYTHON:-python3}
if ! "$PY" -c "import onnx, numpy, onnxruntime" 2>/dev/null; then
  echo "setup-deps: installing Python test tooling: ${PIP_PACKAGES[*]}"
  "$PY" -m pip install --quiet "${PIP_PACKAGES[@]}" 2>/dev/null \
    || "$PY" -m pip install --quiet --break-system-packages "${PIP_PACKAGES[@]}"
fi
PYTHON="$PY" "$(dirname "$0")/install-cudnn-frontend.sh"
echo "setup-deps: all dependencies present"
