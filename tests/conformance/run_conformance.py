#!/usr/bin/env python3
"""ONNX conformance: every in-scope backend node test imported and run by `kiln eval` (the CPU
reference interpreter), outputs compared with the test's expected outputs at the ONNX backend
tolerances (rtol 1e-3, atol 1e-7; NaNs must match). With --gpu each test is compiled with
`kiln compile` and run on the GPU with `kiln run` instead (the arena is poisoned first, so an
output element no kernel wrote fails the comparison).

Exclusions: the tests `kiln import` rejects on purpose (import_expected_rejections.txt) and the
tests listed in conformance_expected_failures.txt, each with its reason. Prints every failure
and one line exactly as

    conformance: P passed, F failed, X excluded, T in scope

Fails on any failure that is not excluded (a regression).
"""
import argparse
import concurrent.futures
import glob
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

from node_tests import NODE_DIR, in_scope_tests, read_expected

RTOL, ATOL = 1e-3, 1e-7
SKIP_EXIT_CODE = 77  # ctest's SKIP_RETURN_CODE for the gpu-labelled run


def gpu_present():
    try:
        return subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def load_pb(path, elem_type):
    """The tensor in `path` as numpy; `elem_type` is what the model declares for it."""
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    value = numpy_helper.to_array(t)
    if elem_type == onnx.TensorProto.BFLOAT16 and value.dtype == np.uint16:
        # Older test data stores bf16 as raw uint16 bits: widen them to the float32 they are.
        value = (value.astype(np.uint32) << 16).view(np.float32)
    return value


def as_comparable(a):
    a = np.asarray(a)
    if a.dtype.kind == "V" or str(a.dtype) in ("bfloat16", "float8_e4m3fn"):
        return a.astype(np.float32)
    return a


def compare(name, expected, actual):
    expected, actual = as_comparable(expected), as_comparable(actual)
    if expected.shape != actual.shape:
        return f"output '{name}': shape {actual.shape}, expected {expected.shape}"
    if expected.dtype.kind in "fc" or actual.dtype.kind == "f":
        e, a = expected.astype(np.float64), actual.astype(np.float64)
        nan_mismatch = np.isnan(e) != np.isnan(a)
        if nan_mismatch.any():
            return f"output '{name}': NaN where none is expected (or the reverse)"
        ok = np.isclose(a, e, rtol=RTOL, atol=ATOL, equal_nan=True)
        if not ok.all():
            k = np.argmax(~ok.ravel())
            return (f"output '{name}': {int((~ok).sum())} of {ok.size} elements differ; first at "
                    f"{np.unravel_index(k, e.shape)}: got {a.ravel()[k]!r}, expected {e.ravel()[k]!r}")
        return None
    if not np.array_equal(expected.astype(actual.dtype) if expected.dtype != actual.dtype else expected, actual):
        bad = np.argmax((expected != actual).ravel())
        return (f"output '{name}': differs at {np.unravel_index(bad, expected.shape)}: "
                f"got {actual.ravel()[bad]!r}, expected {expected.ravel()[bad]!r}")
    return None


def run_test(kiln, name, test_dir, gpu=False):
    model = onnx.load(os.path.join(test_dir, "model.onnx"), load_external_data=False)
    initializers = {t.name for t in model.graph.initializer}
    inputs = [(i.name, i.type.tensor_type.elem_type) for i in model.graph.input if i.name not in initializers]
    outputs = [(o.name, o.type.tensor_type.elem_type) for o in model.graph.output]
    for data_dir in sorted(glob.glob(os.path.join(test_dir, "test_data_set_*"))):
        with tempfile.TemporaryDirectory() as tmp:
            model_path = os.path.join(test_dir, "model.onnx")
            command = "eval"
            if gpu:
                command = "run"
                plan = os.path.join(tmp, "model.kiln")
                proc = subprocess.run([kiln, "compile", model_path, "-o", plan, "--quiet"], capture_output=True,
                                      text=True, errors="replace")
                if proc.returncode != 0:
                    return name, "compile: " + (proc.stderr.strip().replace("kiln compile: error: ", "")
                                                .splitlines() or ["(no message)"])[0][:300]
                model_path = plan
            args = [kiln, command, model_path, "--output-dir", os.path.join(tmp, "out")]
            if gpu:
                args += ["--quiet", "--timing-cache", "none"]
            for k, (input_name, elem_type) in enumerate(inputs):
                pb = os.path.join(data_dir, f"input_{k}.pb")
                if not os.path.exists(pb):
                    continue
                npy = os.path.join(tmp, f"in{k}.npy")
                value = np.asarray(load_pb(pb, elem_type), order="C")  # keeps 0-d arrays 0-d
                if str(value.dtype) in ("bfloat16", "float8_e4m3fn"):
                    value = value.astype(np.float32)  # kiln eval takes bf16/f8 as float32
                np.save(npy, value)
                args += ["--input", f"{input_name}={npy}"]
            proc = subprocess.run(args, capture_output=True, text=True, errors="replace")
            if proc.returncode != 0:
                return name, (proc.stderr.strip().replace(f"kiln {command}: error: ", "").splitlines()
                              or [f"exit status {proc.returncode}"])[0][:300]
            for k, (output_name, elem_type) in enumerate(outputs):
                file = "".join(c if c.isalnum() or c in "_-." else "_" for c in output_name)
                actual = np.load(os.path.join(tmp, "out", file + ".npy"))
                problem = compare(output_name, load_pb(os.path.join(data_dir, f"output_{k}.pb"), elem_type),
                                  actual)
                if problem:
                    return name, f"{os.path.basename(data_dir)}: {problem}"
    return name, None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", required=True)
    parser.add_argument("--node-dir", default=NODE_DIR)
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--gpu", action="store_true", help="compile and run on the GPU instead of `kiln eval`")
    parser.add_argument("--expected-failures", default=None,
                        help="default: conformance_expected_failures.txt (gpu_expected_failures.txt with --gpu)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--import-rejections", default=os.path.join(here, "import_expected_rejections.txt"))
    parser.add_argument("--min-ratio", type=float, default=0.0,
                        help="fail when fewer than this share of the in-scope tests pass")
    args = parser.parse_args()
    if not os.path.isdir(args.node_dir):
        print(f"conformance: node tests not found at {args.node_dir}; run scripts/setup-deps.sh")
        return 1
    if args.gpu and not gpu_present():
        print("gpu-conformance: SKIPPED, no CUDA device here (nvidia-smi finds none); run it on the GPU box "
              "(tools/gpu-box/check_gpu.sh --nodes)")
        return SKIP_EXIT_CODE
    if args.expected_failures is None:
        args.expected_failures = os.path.join(
            here, "gpu_expected_failures.txt" if args.gpu else "conformance_expected_failures.txt")
    excluded = read_expected(args.import_rejections)
    excluded.update(read_expected(args.expected_failures))
    tests = in_scope_tests(args.node_dir)
    runnable = [(n, d) for n, d in tests if n not in excluded]
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(lambda t: run_test(args.kiln, *t, gpu=args.gpu), runnable))
    failed = [(n, why) for n, why in results if why]
    for n, why in failed:
        print(f"FAILED {n}: {why}")
    passed = len(runnable) - len(failed)
    print(f"{'gpu-conformance' if args.gpu else 'conformance'}: {passed} passed, {len(failed)} failed, {len(tests) - len(runnable)} excluded, "
          f"{len(tests)} in scope")
    if passed < args.min_ratio * len(tests):
        print(f"FAIL: {passed / max(len(tests), 1):.1%} passed, below {args.min_ratio:.0%}")
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
