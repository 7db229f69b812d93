"""Runs a command and fails unless it exits with the given status.

    exit_status.py 2 kiln compile --precision int3 model.mlir

lit's `not` takes any non-zero status; Kiln's usage errors must exit with exactly 2 and its
failures with 1. The command's own output passes through, for FileCheck.
"""
import subprocess
import sys

want = int(sys.argv[1])
got = subprocess.run(sys.argv[2:]).returncode
if got != want:
    sys.exit(f"exit status {got}, expected {want}: {' '.join(sys.argv[2:])}")
