"""What the GPU checkers of small modules share (check_attention.py, check_conv_graphs.py):
running a plan on the GPU and the same module in the interpreter, and the case loop.

A checker gives main() its title, its cases (tuples whose first item is the case's name) and
check_case(kiln, work, case, compile_only) returning None or what went wrong.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "conformance"))
from run_conformance import SKIP_EXIT_CODE, gpu_present  # noqa: E402


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def gpu_and_interpreter(kiln, work, name, plan, module, precision, inputs, output, eval_args=()):
    """(GPU output, interpreter output) of `output` for the inputs (name -> array), or a string
    saying which tool failed and why. `eval_args` go to `kiln eval` (fp8's --calibration)."""
    args = []
    for n, value in inputs.items():
        path = os.path.join(work, f"{name}.{n}.npy")
        np.save(path, value)
        args += ["--input", f"{n}={path}"]
    gpu_out, ref_out = os.path.join(work, name + ".gpu"), os.path.join(work, name + ".ref")
    proc = run([kiln, "run", plan, "--output-dir", gpu_out, "--quiet", "--timing-cache", "none"] + args)
    if proc.returncode:
        return "run: " + proc.stderr.strip()
    proc = run([kiln, "eval", module, "--precision", precision, "--output-dir", ref_out, "--quiet"] + args +
               list(eval_args))
    if proc.returncode:
        return "eval: " + proc.stderr.strip()
    return np.load(os.path.join(gpu_out, output + ".npy")), np.load(os.path.join(ref_out, output + ".npy"))


def main(title, doc, cases, check_case):
    """Parses --kiln and --compile-only, runs every case, prints one line each and a total;
    the exit code: 0, 1 on any failure, 77 without a GPU unless --compile-only."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--kiln", required=True)
    parser.add_argument("--compile-only", action="store_true", help="check only the plans, on any machine")
    args = parser.parse_args()
    if not args.compile_only and not gpu_present():
        print(f"{title}: SKIPPED (no CUDA device)")
        return SKIP_EXIT_CODE
    failed = 0
    with tempfile.TemporaryDirectory() as work:
        for case in cases:
            problem = check_case(args.kiln, work, case, args.compile_only)
            print(f"{'FAILED' if problem else 'ok    '} {case[0]}" + (f": {problem}" if problem else ""))
            failed += bool(problem)
    print(f"{title}: {len(cases) - failed} passed, {failed} failed")
    return 1 if failed else 0
