#!/usr/bin/env python3
"""Times the reference interpreter on a ResNet-50 forward (batch 1, 224x224) on this machine:
the median of three `kiln eval` runs, as the interpreter reports it and as wall time (import
included). A benchmark, never a timed test.

Usage: python3 bench/interpreter_resnet50.py [--kiln build/tools/kiln]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", default=os.path.join(here, "..", "build", "tools", "kiln"))
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        model = os.path.join(work, "resnet50.onnx")
        subprocess.run([sys.executable, os.path.join(here, "make_resnet50_onnx.py"), model], check=True)
        evals, walls = [], []
        for _ in range(args.runs):
            start = time.time()
            out = subprocess.run([args.kiln, "eval", model], capture_output=True, text=True, check=True).stdout
            walls.append(time.time() - start)
            evals.append(float(re.search(r"in ([0-9.]+) s", out).group(1)))
    print(f"interpreter resnet50 batch 1: median eval {statistics.median(evals):.2f} s, "
          f"median wall (with import) {statistics.median(walls):.2f} s over {args.runs} runs "
          f"on {os.cpu_count()} cores")


if __name__ == "__main__":
    sys.exit(main())
