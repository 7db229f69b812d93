#!/usr/bin/env python3
"""The accuracy int8 and fp8 plans will have, measured on the CPU before codegen exists.

For each suite model (exported here with torch, as bench/kiln_models.py builds it):
`kiln calibrate` on N random calibration inputs like the suite's, `kiln import` of the fp32
module with its ONNX value names, `kiln-opt --kiln-insert-quantization` for each type and
calibration method (then constant folding), and `kiln eval` of the quantized and the fp32
module on a held-out input: max |q - fp32| / max |fp32| and cosine, worst over the outputs,
against the quantization issue's bars (cosine >= 0.99 int8, >= 0.995 fp8). The interpreter
evaluates Q/DQ exactly, so this is what an 8-bit plan of the same module computes up to
accumulation order.

  bench/quantization_accuracy.py --kiln-dir build/tools --results results.json \\
      --models resnet50,mobilenet_v3_large,vit_b_16,bert_base_seq128 [--calibration 8]
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np
import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kiln_models as km  # noqa: E402
from precision_report import input_args, similar_feeds  # noqa: E402

BARS = {"int8": 0.99, "fp8": 0.995}
METHODS = ("minmax", "percentile", "entropy")


def run(args, timeout=3600):
    start = time.time()
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{os.path.basename(str(args[0]))} {args[1]} (exit {done.returncode}): "
                           f"{km.error_tail(done.stderr)}")
    return time.time() - start


def evaluate(opts, module, args, out_dir, names):
    run([os.path.join(opts.kiln_dir, "kiln"), "eval", module, *args, "--output-dir", out_dir, "--quiet"])
    return km.load_kiln_outputs(out_dir, names)


def measure(opts, name):
    work = os.path.join(opts.work_dir, name)
    os.makedirs(work, exist_ok=True)
    model, inputs, input_names, _ = km.build_suite_model(name, 1)
    onnx_path = os.path.join(work, "model.onnx")
    if not os.path.exists(onnx_path):
        km.log(f"== {name}: exporting")
        km.export_onnx(model, inputs, input_names, onnx_path)
    feeds = dict(zip(input_names, [t.numpy() for t in inputs]))
    for k in range(opts.calibration):
        input_args(similar_feeds(feeds, 1000 + k), os.path.join(work, "calibration", f"{k:03d}"))
    held_out = input_args(similar_feeds(feeds, 7), os.path.join(work, "held-out"))
    kiln, opt = os.path.join(opts.kiln_dir, "kiln"), os.path.join(opts.kiln_dir, "kiln-opt")
    calib = os.path.join(work, "calib.json")
    result = {"calibration_inputs": opts.calibration,
              "calibrate_s": round(run([kiln, "calibrate", onnx_path, "--calibration",
                                        os.path.join(work, "calibration"), "-o", calib, "--quiet"]), 1)}
    fp32 = os.path.join(work, "fp32.mlir")
    run([kiln, "import", onnx_path, "-o", fp32, "--strict-fp32", "--no-fusion", "--layout", "nchw",
         "--onnx-value-names", "--quiet"])
    output_names = [o.name for o in onnx.load(onnx_path, load_external_data=False).graph.output]
    reference = evaluate(opts, fp32, held_out, os.path.join(work, "out-fp32"), output_names)
    for qtype in ("int8", "fp8"):
        for method in METHODS:
            quantized = os.path.join(work, "quantized.mlir")
            done = subprocess.run([opt, fp32, f"--kiln-insert-quantization=calibration={calib} method={method} "
                                   f"type={qtype}", "--kiln-fold-constants", "-o", quantized],
                                  capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError(f"kiln-opt: {km.error_tail(done.stderr)}")
            unquantized = done.stderr.count("remark: not quantized")
            outputs = evaluate(opts, quantized, held_out, os.path.join(work, f"out-{qtype}-{method}"), output_names)
            rel, cosine = km.worst_metrics(outputs, reference)
            cell = {"max_rel": rel, "cosine": cosine, "ops_not_quantized": unquantized,
                    "meets_bar": cosine >= BARS[qtype]}
            result[f"{qtype} {method}"] = cell
            km.log(f"   {name} {qtype} {method}: cosine {cosine:.5f}, max rel {rel:.2e}, "
                   f"{unquantized} op(s) not quantized{'' if cell['meets_bar'] else ' (BELOW THE BAR)'}")
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kiln-dir", required=True, help="folder with kiln and kiln-opt")
    ap.add_argument("--results", required=True, help="JSON file to write")
    ap.add_argument("--models", default="resnet50,mobilenet_v3_large,vit_b_16,bert_base_seq128")
    ap.add_argument("--calibration", type=int, default=8, help="calibration inputs per model")
    ap.add_argument("--work-dir", default="/tmp/kiln-quantization-accuracy")
    opts = ap.parse_args()
    summary = {"what": "interpreter-simulated 8-bit accuracy against fp32 on a held-out input (batch 1)",
               "bars": BARS, "models": {}}
    for name in opts.models.split(","):
        try:
            summary["models"][name] = measure(opts, name)
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            summary["models"][name] = {"error": str(e)}
            km.log(f"   {name}: {e}")
        with open(opts.results, "w") as f:
            json.dump(summary, f, indent=1)
    return 1 if any("error" in m for m in summary["models"].values()) else 0


if __name__ == "__main__":
    sys.exit(main())
