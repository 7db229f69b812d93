#!/usr/bin/env python3
"""Runs `kiln import` over the ONNX backend node tests and prints the import counts.

With --compile it runs `kiln compile` instead (import, fold, GPU codegen, NVRTC, plan
validation; no GPU needed) and prints `compile: N compiled, M rejected, T in scope`: every op
of every importable node test must lower to a plan.

A test is in scope when every op of its graph is one the kiln dialect covers (see
node_tests.py). Each in-scope model is imported; the printed IR is parsed and verified again by kiln-opt. The run prints
every rejection with its reason and one line

    import: N imported, M rejected, T in scope

and fails when a rejection is not listed in the expected-rejections file (a regression) or
fewer than 95% of the in-scope models import.
"""
import argparse
import concurrent.futures
import os
import subprocess
import sys
import tempfile

from node_tests import NODE_DIR, in_scope_tests, read_expected

def compile_one(kiln, name, model_path):
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run([kiln, "compile", model_path, "-o", os.path.join(tmp, "model.kiln"), "--quiet"],
                              capture_output=True, text=True, errors="replace")
    if proc.returncode != 0:
        reason = proc.stderr.strip().replace("kiln compile: error: ", "")
        return name, False, reason or f"exit status {proc.returncode}"
    return name, True, ""


def import_one(kiln, kiln_opt, name, model_path):
    proc = subprocess.run([kiln, "import", model_path, "--quiet"], capture_output=True, text=True, errors="replace")
    if proc.returncode != 0:
        reason = proc.stderr.strip().replace("kiln import: error: ", "")
        return name, False, reason or f"exit status {proc.returncode}"
    verify = subprocess.run([kiln_opt, "-"], input=proc.stdout, capture_output=True, text=True, errors="replace")
    if verify.returncode != 0:
        return name, False, "printed IR does not verify: " + verify.stderr.strip()[:300]
    return name, True, ""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", required=True)
    parser.add_argument("--kiln-opt", default=None, help="default: kiln-opt beside kiln")
    parser.add_argument("--node-dir", default=NODE_DIR)
    parser.add_argument("--expected", help="file of expected rejections: 'test_name  # reason'")
    parser.add_argument("--min-ratio", type=float, default=0.95)
    parser.add_argument("--compile", action="store_true", help="run `kiln compile` (GPU codegen) instead of import")
    args = parser.parse_args()
    kiln_opt = args.kiln_opt or os.path.join(os.path.dirname(args.kiln), "kiln-opt")
    if not os.path.isdir(args.node_dir):
        print(f"import: node tests not found at {args.node_dir}; install libonnx-testdata "
              "(scripts/setup-deps.sh)")
        return 1

    tests = [(name, os.path.join(d, "model.onnx")) for name, d in in_scope_tests(args.node_dir)]

    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        if args.compile:
            results = list(pool.map(lambda t: compile_one(args.kiln, *t), tests))
        else:
            results = list(pool.map(lambda t: import_one(args.kiln, kiln_opt, *t), tests))

    expected = read_expected(args.expected)

    rejected = [(n, r) for n, ok, r in results if not ok]
    imported = len(results) - len(rejected)
    for name, reason in rejected:
        first = reason.splitlines()[0] if reason else ""
        print(f"{'not compiled' if args.compile else 'rejected'} {name}: {first}")
    unexpected = [n for n, _ in rejected if n not in expected]
    now_passing = sorted(set(expected) - {n for n, _ in rejected})
    for name in unexpected:
        print(f"NEW REJECTION (not in the expected list): {name}")
    for name in now_passing:
        print(f"note: {name} imports now; remove it from the expected-rejections list")
    if args.compile:
        print(f"compile: {imported} compiled, {len(rejected)} rejected, {len(results)} in scope")
    else:
        print(f"import: {imported} imported, {len(rejected)} rejected, {len(results)} in scope")
    ratio = imported / max(len(results), 1)
    if ratio < args.min_ratio:
        print(f"FAIL: {ratio:.1%} imported, below {args.min_ratio:.0%}")
        return 1
    if unexpected:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
