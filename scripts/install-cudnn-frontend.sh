#!/usr/bin/env bash
# Installs the header-only cuDNN frontend (NVIDIA cudnn-frontend, Apache-2.0) that the runtime's
# attention step compiles against, into third_party/cudnn-frontend/ (ignored by git):
#   include/                               the headers, as the PyPI wheel ships them
#   LICENSE.txt, LICENSE-MIT.txt, NOTICE   the wheel's license and notice files
#   VERSION                                what is installed (a second run with it only checks)
# The wheel is pinned by version and sha256 (cudnn-frontend-requirements.txt, pip
# --require-hashes), so every machine compiles against the same bytes. CMake finds the headers
# there (KILN_CUDNN_FRONTEND_INCLUDE); without them the runtime builds, and attention steps fail
# at plan load with a message that points here.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=1.32.0
DEST=${KILN_CUDNN_FRONTEND_DIR:-third_party/cudnn-frontend}
if [ -f "$DEST/VERSION" ] && [ "$(cat "$DEST/VERSION")" = "$VERSION" ] && [ -f "$DEST/include/cudnn_frontend.h" ]; then
  exit 0
fi
PY=${PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "setup-deps: installing the cuDNN frontend $VERSION headers into $DEST"
# The pinned wheel is CPython 3.11 on x86_64: ask for exactly that, whatever runs this.
"$PY" -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.11 --implementation cp \
  --abi cp311 --platform manylinux_2_28_x86_64 --require-hashes -r scripts/cudnn-frontend-requirements.txt \
  -d "$tmp/wheel"
"$PY" - "$tmp/wheel" "$tmp/out" <<'PY'
import pathlib, sys, zipfile
wheels = list(pathlib.Path(sys.argv[1]).glob("nvidia_cudnn_frontend-*.whl"))
if len(wheels) != 1:
    sys.exit(f"install-cudnn-frontend: expected one wheel, found {wheels}")
out = pathlib.Path(sys.argv[2])
licenses = {"LICENSE.txt", "LICENSE-MIT.txt", "NOTICE"}
with zipfile.ZipFile(wheels[0]) as wheel:
    for info in wheel.infolist():
        name = info.filename
        parts = pathlib.PurePosixPath(name).parts
        if info.is_dir() or ".." in parts or name.startswith("/"):
            continue
        if parts[0] == "include":
            target = out.joinpath(*parts)
        elif len(parts) == 3 and parts[0].endswith(".dist-info") and parts[1] == "licenses" and parts[2] in licenses:
            target = out / parts[2]
        else:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(wheel.read(info))
if not (out / "include" / "cudnn_frontend.h").is_file():
    sys.exit("install-cudnn-frontend: the wheel has no include/cudnn_frontend.h")
PY
echo "$VERSION" > "$tmp/out/VERSION"
mkdir -p "$(dirname "$DEST")"
rm -rf "$DEST"
mv "$tmp/out" "$DEST"
echo "setup-deps: cuDNN frontend $VERSION headers in $DEST"
