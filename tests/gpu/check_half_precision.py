#!/usr/bin/env python3
"""Half-precision plans on the GPU against the interpreter running the same optimized module.

The interpreter is the oracle of a bf16/fp16 plan too: `kiln eval --precision P` runs the same
pipeline as `kiln compile --precision P` and evaluates the optimized module with exact bf16/fp16
rounding of every op result, so the GPU plan may differ from it only by the order of fp32
accumulation inside an op (and float vs double transcendentals), which can move a half result
by an ulp. Each case is compiled and run on the GPU (`kiln run`, arena poisoned first) and
evaluated by `kiln eval`, on the same inputs, for P in bf16 and fp16:

  * every in-scope ONNX node test, with its own op types forced into P
    (`--force-precision <OpType>=P`), so every kernel family runs on half storage, not only the
    compute-bound ops the policy puts there;
  * the bundled models (examples/*.onnx) under the plain policy.

Float outputs must agree within 2 ulps of P relative to each element plus 1e-3 of P's ulp
scaled by the output's largest magnitude (sums that cancel); integer and bool outputs exactly.
Prints one line per failure and

    half-precision: P passed, F failed, X excluded, N not run (time budget), T cases

Exit status 77 (ctest's skip code) without a CUDA device.
"""
import argparse
import concurrent.futures
import glob
import os
import random
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "conformance"))
from node_tests import NODE_DIR, in_scope_tests, read_expected  # noqa: E402
from run_conformance import SKIP_EXIT_CODE, gpu_present, load_pb  # noqa: E402

# Machine epsilon (one ulp at 1.0) of each half type.
ULP = {"bf16": 2.0 ** -7, "fp16": 2.0 ** -10}
NOT_RUN = "not run: time budget spent"
REPO = os.path.dirname(os.path.dirname(HERE))


def compare(name, reference, actual, precision):
    if reference.shape != actual.shape:
        return f"output '{name}': shape {actual.shape}, interpreter {reference.shape}"
    if reference.dtype.kind != "f":
        if not np.array_equal(reference, actual):
            k = np.argmax((reference != actual).ravel())
            return (f"output '{name}': {int((reference != actual).sum())} elements differ; first at "
                    f"{np.unravel_index(k, reference.shape)}: GPU {actual.ravel()[k]!r}, "
                    f"interpreter {reference.ravel()[k]!r}")
        return None
    r, a = reference.astype(np.float64), actual.astype(np.float64)
    if (np.isnan(r) != np.isnan(a)).any():
        return f"output '{name}': NaN on one side only"
    finite = np.isfinite(r)
    if (r[~finite & ~np.isnan(r)] != a[~finite & ~np.isnan(r)]).any():
        return f"output '{name}': infinities differ"
    scale = float(np.abs(r[finite]).max()) if finite.any() else 0.0
    tolerance = 2 * ULP[precision] * np.abs(r) + 1e-3 * ULP[precision] * scale
    with np.errstate(invalid="ignore"):  # inf - inf outside `finite` is not looked at
        bad = finite & (np.abs(a - r) > tolerance)
    if bad.any():
        k = np.argmax(bad.ravel())
        return (f"output '{name}': {int(bad.sum())} of {bad.size} elements beyond 2 ulps; first at "
                f"{np.unravel_index(k, r.shape)}: GPU {a.ravel()[k]!r}, interpreter {r.ravel()[k]!r}")
    return None


def first_line(stderr, prefix):
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line]
    return ((errors or lines or ["(no message)"])[0].replace(prefix, ""))[:300]


def run_case(kiln, model_path, inputs, precision, extra):
    """None when the GPU plan matches the interpreter; else the reason."""
    with tempfile.TemporaryDirectory() as tmp:
        plan = os.path.join(tmp, "model.kiln")
        options = ["--precision", precision] + extra
        proc = subprocess.run([kiln, "compile", model_path, "-o", plan, "--quiet"] + options,
                              capture_output=True, text=True, errors="replace")
        if proc.returncode != 0:
            return "compile: " + first_line(proc.stderr, "kiln compile: error: ")
        input_args = [a for n, f in inputs for a in ("--input", f"{n}={f}")]
        gpu_out, cpu_out = os.path.join(tmp, "gpu"), os.path.join(tmp, "cpu")
        proc = subprocess.run([kiln, "run", plan, "--output-dir", gpu_out, "--quiet", "--timing-cache", "none"]
                              + input_args, capture_output=True, text=True, errors="replace")
        if proc.returncode != 0:
            return "run: " + first_line(proc.stderr, "kiln run: error: ")
        proc = subprocess.run([kiln, "eval", model_path, "--output-dir", cpu_out, "--quiet"] + options + input_args,
                              capture_output=True, text=True, errors="replace")
        if proc.returncode != 0:
            return "eval: " + first_line(proc.stderr, "kiln eval: error: ")
        for file in sorted(os.listdir(cpu_out)):
            problem = compare(file[:-4], np.load(os.path.join(cpu_out, file)), np.load(os.path.join(gpu_out, file)),
                              precision)
            if problem:
                return problem
    return None


def node_cases(node_dir, excluded, work):
    """(case name, model, [(input name, .npy)], extra options) for every in-scope node test."""
    for name, test_dir in in_scope_tests(node_dir):
        if name in excluded:
            continue
        model_path = os.path.join(test_dir, "model.onnx")
        model = onnx.load(model_path, load_external_data=False)
        initializers = {t.name for t in model.graph.initializer}
        data_dir = sorted(glob.glob(os.path.join(test_dir, "test_data_set_*")))
        if not data_dir:
            continue
        inputs = []
        for k, i in enumerate(x for x in model.graph.input if x.name not in initializers):
            pb = os.path.join(data_dir[0], f"input_{k}.pb")
            if os.path.exists(pb):
                value = np.asarray(load_pb(pb, i.type.tensor_type.elem_type), order="C")
                if str(value.dtype) in ("bfloat16", "float8_e4m3fn"):
                    value = value.astype(np.float32)
                npy = os.path.join(work, f"{name}_in{k}.npy")
                np.save(npy, value)
                inputs.append((i.name, npy))
        op_types = sorted({n.op_type for n in model.graph.node})
        yield name, model_path, inputs, op_types


def example_dims(model):
    """{input name: dims} of a bundled example, symbolic (batch) dims fixed to 2."""
    graph = onnx.load(model, load_external_data=False).graph
    return {i.name: [d.dim_value if d.dim_value > 0 else 2 for d in i.type.tensor_type.shape.dim]
            for i in graph.input}


def example_shapes(model):
    return [a for n, dims in example_dims(model).items() for a in ("--shape", f"{n}={'x'.join(map(str, dims))}")]


def example_inputs(model, work):
    """(([(name, .npy)],)) random normal inputs with a fixed seed, the same for GPU and interpreter."""
    rng = np.random.default_rng(0)
    inputs = []
    for name, dims in example_dims(model).items():
        npy = os.path.join(work, f"{os.path.basename(model)}_{name}.npy")
        np.save(npy, rng.standard_normal(dims).astype(np.float32))
        inputs.append((name, npy))
    return (inputs,)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", required=True)
    parser.add_argument("--node-dir", default=NODE_DIR)
    parser.add_argument("--precisions", default="bf16,fp16")
    parser.add_argument("--expected-failures", default=os.path.join(HERE, "half_expected_failures.txt"))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--max-seconds", type=float, default=0,
                        help="start no case after this many seconds (they count as not run, and fail the run)")
    parser.add_argument("--skip", type=int, default=0,
                        help="leave out the first N cases of the fixed shuffle (what an earlier run cut short by "
                             "--max-seconds already ran; they count as not run)")
    args = parser.parse_args()
    if not gpu_present():
        print("half-precision: SKIPPED, no CUDA device here (nvidia-smi finds none); run it on the GPU box "
              "(tools/gpu-box/check_gpu.sh --half)")
        return SKIP_EXIT_CODE
    conformance = os.path.join(HERE, "..", "conformance")
    excluded = read_expected(os.path.join(conformance, "import_expected_rejections.txt"))
    excluded.update(read_expected(os.path.join(conformance, "gpu_expected_failures.txt")))
    expected_failures = read_expected(args.expected_failures)
    with tempfile.TemporaryDirectory() as work:
        jobs = []
        for precision in args.precisions.split(","):
            for name, model, inputs, op_types in node_cases(args.node_dir, excluded, work):
                case = f"{name}[{precision}]"
                forced = ",".join(f"{t}={precision}" for t in op_types)
                jobs.append((case, model, inputs, precision, ["--force-precision", forced]))
            for model in sorted(glob.glob(os.path.join(REPO, "examples", "*.onnx"))):
                jobs.append((f"{os.path.basename(model)}[{precision}]", model) + example_inputs(model, work)
                            + (precision, example_shapes(model)))
        # A fixed shuffle: a run cut short by --max-seconds still samples every op family.
        random.Random(0).shuffle(jobs)
        deadline = time.monotonic() + args.max_seconds if args.max_seconds else None

        skipped = {job[0] for job in jobs[:args.skip]}

        def run(job):
            if job[0] in skipped:
                return job[0], NOT_RUN
            if deadline and time.monotonic() > deadline:
                return job[0], NOT_RUN
            return job[0], run_case(args.kiln, *job[1:])

        results = []
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            # Failures print as they come, so a run cut short still shows them.
            for future in concurrent.futures.as_completed([pool.submit(run, j) for j in jobs]):
                case, why = future.result()
                results.append((case, why))
                if why and why != NOT_RUN and case not in expected_failures:
                    print(f"FAILED {case}: {why}", flush=True)
    failed = [c for c, why in results if why and why != NOT_RUN and c not in expected_failures]
    known = sum(1 for c, why in results if why and why != NOT_RUN and c in expected_failures)
    not_run = sum(1 for _, why in results if why == NOT_RUN)
    print(f"half-precision: {len(results) - len(failed) - known - not_run} passed, {len(failed)} failed, "
          f"{known} excluded, {not_run} not run ({args.skip} skipped by --skip, the rest: time budget), "
          f"{len(results)} cases")
    if not_run:
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
