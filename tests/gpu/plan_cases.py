"""What the GPU checkers of small modules share (check_attention.py, check_conv_graphs.py,
check_fp8_gemms.py, check_8bit_convs.py): running a plan on the GPU and the same module in the
interpreter, calibrating and judging 8-bit plans, and the case loop.

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


# Extra `kiln run` flags for every GPU run (main's --run-flags: --no-graph runs the steps one by
# one, which tells a fault of CUDA-graph replay from a kernel's).
RUN_FLAGS = []
# The precision main's --precision chose, for a checker that takes several (check_8bit_convs.py).
PRECISION = [None]


def gpu_and_interpreter(kiln, work, name, plan, module, precision, inputs, output, eval_args=()):
    """(GPU output, interpreter output) of `output` for the inputs (name -> array), or a string
    saying which tool failed and why. `eval_args` go to `kiln eval` (fp8's --calibration)."""
    args = []
    for n, value in inputs.items():
        path = os.path.join(work, f"{name}.{n}.npy")
        np.save(path, value)
        args += ["--input", f"{n}={path}"]
    gpu_out, ref_out = os.path.join(work, name + ".gpu"), os.path.join(work, name + ".ref")
    proc = run([kiln, "run", plan, "--output-dir", gpu_out, "--quiet", "--timing-cache", "none"] + RUN_FLAGS + args)
    if proc.returncode:
        return "run: " + proc.stderr.strip()
    proc = run([kiln, "eval", module, "--precision", precision, "--output-dir", ref_out, "--quiet"] + args +
               list(eval_args))
    if proc.returncode:
        return "eval: " + proc.stderr.strip()
    return np.load(os.path.join(gpu_out, output + ".npy")), np.load(os.path.join(ref_out, output + ".npy"))


def save_model(graph, path):
    """An ONNX graph written as a model of opset 17 (IR version 8, what onnxruntime reads)."""
    import onnx
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)


def compile_8bit(kiln, work, name, model, shape, rng, precision, flags=()):
    """The model calibrated (calibrate) and compiled at `precision` (fp8, int8) with the compile
    flags given: (plan, calibration file, the compile's stderr with its remarks, the plan's step
    lines, None), or a tuple whose last item says what failed."""
    table, problem = calibrate(kiln, work, name, model, shape, rng)
    if problem:
        return None, None, None, None, problem
    plan = os.path.join(work, name + ".kiln")
    proc = run([kiln, "compile", model, "-o", plan, "--precision", precision, "--calibration", table, *flags])
    if proc.returncode:
        return None, None, None, None, "compile: " + proc.stderr.strip()
    steps = [line for line in run([kiln, "inspect", plan]).stdout.splitlines() if line.startswith("step ")]
    return plan, table, proc.stderr, steps, None


def calibrate(kiln, work, name, model, shape, rng):
    """`kiln calibrate` of the model over 4 random normal inputs `x` of `shape`: (the calibration
    file, None), or (None, what failed)."""
    calibration = os.path.join(work, name + ".cal")
    for i in range(4):
        os.makedirs(os.path.join(calibration, str(i)), exist_ok=True)
        np.save(os.path.join(calibration, str(i), "x.npy"), rng.standard_normal(shape).astype(np.float32))
    table = os.path.join(work, name + ".calib.json")
    proc = run([kiln, "calibrate", model, "--calibration", calibration, "-o", table, "--quiet"])
    if proc.returncode:
        return None, "calibrate: " + proc.stderr.strip()
    return table, None


def check_8bit_plan(kiln, work, name, plan, model, precision, table, x, flags=()):
    """An 8-bit plan (`precision` fp8 or int8, compiled with `flags`) run on the GPU against
    `kiln eval` of the same quantized module on the held-out input x of the model's input `x`:
    None, or what is wrong.
    The GPU's library kernels accumulate and scale in their own order, so a value near a
    rounding boundary of a later quantization may round the other way; the bound is a quarter of
    what quantization itself moves the output (against the fp32 evaluation) for int8, half of it
    for fp8, at least two bf16 ulps, so a wrong scale, layout or epilogue fails. E4M3 steps are
    coarse relative ones (1/8 to 1/16 of a value) where int8's are 1/127 of the range, so one
    intermediate rounding the other way moves the output by more of the quantization error: FP8
    bottleneck blocks on the H100 came 0.27 and 0.28 of it from the interpreter (2026-12-07),
    while fitting 0.995-0.998 * conv + 1.000 * residual (no scale wrong)."""
    outputs = gpu_and_interpreter(kiln, work, name, plan, model, precision, {"x": x}, "y", ["--calibration", table, *flags])
    if isinstance(outputs, str):
        return outputs
    gpu, ref = outputs
    fp32 = os.path.join(work, name + ".fp32")
    proc = run([kiln, "eval", model, "--input", f"x={os.path.join(work, name + '.x.npy')}", "--output-dir", fp32,
                "--quiet"])
    if proc.returncode:
        return "eval fp32: " + proc.stderr.strip()
    exact = np.load(os.path.join(fp32, "y.npy")).astype(np.float64)
    if gpu.shape != ref.shape or not np.isfinite(gpu).all():
        return f"GPU output {gpu.shape} (finite: {np.isfinite(gpu).all()}) against {ref.shape}"
    scale = np.abs(ref).max()
    err = np.abs(gpu.astype(np.float64) - ref).max() / scale
    quantization = np.abs(ref - exact).max() / scale
    bound = max((0.5 if precision == "fp8" else 0.25) * quantization, 2 * 2.0 ** -8)
    if err > bound:
        return (f"max |GPU - interpreter| / max |ref| = {err:.3g} > {bound:.3g} ({precision} vs fp32: "
                f"{quantization:.3g})")
    return None


def main(title, doc, cases, check_case, precisions=()):
    """Parses --kiln and --compile-only (and --precision, one of `precisions`, the first by
    default, into PRECISION), runs every case, prints one line each and a total; the exit code:
    0, 1 on any failure, 77 without a GPU unless --compile-only."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    if precisions:
        parser.add_argument("--precision", choices=precisions, default=precisions[0],
                            help="the plans' precision (default: %(default)s)")
    parser.add_argument("--kiln", required=True)
    parser.add_argument("--compile-only", action="store_true", help="check only the plans, on any machine")
    parser.add_argument("--only", help="comma-separated case names to run (default: all)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="run each case this many times (each run tunes its cuDNN engines afresh, "
                             "so an engine that computes wrong values shows up when the tuner picks it)")
    parser.add_argument("--run-flags", default="",
                        help="extra `kiln run` flags, space-separated (--no-graph: the steps one by one)")
    args = parser.parse_args()
    RUN_FLAGS[:] = args.run_flags.split()
    if precisions:
        PRECISION[0] = args.precision
        title = f"{args.precision} {title}"
    if not args.compile_only and not gpu_present():
        print(f"{title}: SKIPPED (no CUDA device)")
        return SKIP_EXIT_CODE
    if args.only:
        names = args.only.split(",")
        unknown = [n for n in names if n not in {c[0] for c in cases}]
        if unknown:
            parser.error(f"--only: no case named {', '.join(unknown)} (cases: {', '.join(c[0] for c in cases)})")
        cases = [c for c in cases if c[0] in names]
    failed = runs = 0
    with tempfile.TemporaryDirectory() as work:
        for case in cases:
            for attempt in range(args.repeat):
                problem = check_case(args.kiln, work, case, args.compile_only)
                label = case[0] + (f" (run {attempt + 1}/{args.repeat})" if args.repeat > 1 else "")
                print(f"{'FAILED' if problem else 'ok    '} {label}" + (f": {problem}" if problem else ""), flush=True)
                failed += bool(problem)
                runs += 1
    print(f"{title}: {runs - failed} passed, {failed} failed")
    return 1 if failed else 0
