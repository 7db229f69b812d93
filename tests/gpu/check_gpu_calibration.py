#!/usr/bin/env python3
"""`kiln calibrate --device gpu` against `--device cpu` (the interpreter) on small models.

For each model, three random calibration inputs; both files must list the same values in the same
order with the same element counts and weights, and agree on every value's range: min, max and
the minmax threshold within fp32 rounding (the GPU sums in another order), the percentile and
entropy thresholds within 2% (a value moving across a histogram bin edge may move a flat KL
minimum by a few bins). The GPU file must say which GPU measured it.

Without a CUDA device, `--device gpu` must fail (exit 1) naming --device cpu, and the check
reports SKIPPED (exit 77) for the GPU half.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "conformance"))
from run_conformance import SKIP_EXIT_CODE, gpu_present  # noqa: E402

EXAMPLES = os.path.join(HERE, "..", "..", "examples")


def transformer_block(path):
    """A BERT-like block: Q/K/V projections with reshapes and transposes, scaled softmax
    attention, an out-projection with its residual, a layer norm, an erf GELU half, a flatten
    and a reshape (values a plan may alias rather than compute)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(1)
    b, s, d, heads = 2, 16, 64, 4
    inits, nodes = [], []

    def const(name, value):
        inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def weight(name, shape):
        return const(name, (rng.standard_normal(shape) * 0.1).astype(np.float32))

    for t in "qkv":
        nodes.append(helper.make_node("MatMul", ["x", weight("w" + t, [d, d])], [t], name=t))
        nodes.append(helper.make_node("Reshape", [t, const(t + "_shape", np.array([b, s, heads, d // heads]))],
                                      [t + "r"], name=t + "_reshape"))
        nodes.append(helper.make_node("Transpose", [t + "r"], [t + "t"], name=t + "_transpose",
                                      perm=[0, 2, 3, 1] if t == "k" else [0, 2, 1, 3]))
    nodes += [helper.make_node("MatMul", ["qt", "kt"], ["scores"], name="scores"),
              helper.make_node("Mul", ["scores", const("scale", np.float32(0.25))], ["scaled"], name="scale"),
              helper.make_node("Softmax", ["scaled"], ["p"], axis=-1, name="softmax"),
              helper.make_node("MatMul", ["p", "vt"], ["o"], name="pv"),
              helper.make_node("Transpose", ["o"], ["ot"], perm=[0, 2, 1, 3], name="o_transpose"),
              helper.make_node("Reshape", ["ot", const("o_shape", np.array([b, s, d]))], ["or"], name="o_reshape"),
              helper.make_node("MatMul", ["or", weight("wo", [d, d])], ["proj"], name="proj"),
              helper.make_node("Add", ["proj", "x"], ["res"], name="residual"),
              helper.make_node("LayerNormalization", ["res", const("g", np.ones(d, np.float32)),
                                                      const("beta", np.zeros(d, np.float32))], ["ln"], axis=-1,
                               name="ln"),
              helper.make_node("MatMul", ["ln", weight("w1", [d, 4 * d])], ["f1"], name="ffn1"),
              helper.make_node("Div", ["f1", const("sqrt2", np.float32(np.sqrt(2)))], ["fd"], name="gelu_div"),
              helper.make_node("Erf", ["fd"], ["fe"], name="gelu_erf"),
              helper.make_node("Flatten", ["fe"], ["flat"], axis=2, name="flatten"),
              helper.make_node("Reshape", ["flat", const("y_shape", np.array([b, s, 4 * d]))], ["y"],
                               name="y_reshape")]
    graph = helper.make_graph(nodes, "block", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [b, s, d])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [b, s, 4 * d])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)


# name, model path (or a builder), input name, input shape, extra calibrate flags
def cases(work):
    block = os.path.join(work, "block.onnx")
    transformer_block(block)
    return [("tiny_cnn", os.path.join(EXAMPLES, "tiny_cnn.onnx"), "image", [2, 3, 32, 32],
             ["--shape", "image=2x3x32x32"]),
            ("transformer_block", block, "x", [2, 16, 64], [])]


def calibrate(kiln, model, inputs, flags, device, out):
    proc = subprocess.run([kiln, "calibrate", model, "--calibration", inputs, "-o", out, "--device", device] + flags,
                          capture_output=True, text=True)
    return proc


def close(a, b, rtol, atol=0.0):
    return abs(a - b) <= atol + rtol * max(abs(a), abs(b))


def compare(cpu, gpu):
    """None, or the first difference between the two calibration files."""
    if gpu.get("measured_on") in (None, "interpreter") or cpu.get("measured_on") != "interpreter":
        return f"measured_on: cpu {cpu.get('measured_on')!r}, gpu {gpu.get('measured_on')!r}"
    names = ([a["name"] for a in cpu["activations"]], [a["name"] for a in gpu["activations"]])
    if names[0] != names[1]:
        return f"values differ: cpu {names[0]}, gpu {names[1]}"
    if cpu["weights"] != gpu["weights"]:
        return "weight ranges differ"
    for a, b in zip(cpu["activations"], gpu["activations"]):
        if (a["count"], a["non_finite"]) != (b["count"], b["non_finite"]):
            return f"{a['name']}: counts {a['count']}/{a['non_finite']} against {b['count']}/{b['non_finite']}"
        scale = max(abs(a["min"]), abs(a["max"]), 1e-30)
        for key, x, y in [("min", a["min"], b["min"]), ("max", a["max"], b["max"]),
                          ("minmax", a["thresholds"]["minmax"], b["thresholds"]["minmax"])]:
            if not close(x, y, 1e-5, 1e-6 * scale):
                return f"{a['name']}: {key} {x!r} on the CPU, {y!r} on the GPU"
        for key in ["percentile", "entropy"]:
            x, y = a["thresholds"][key], b["thresholds"][key]
            if not close(x, y, 0.02):
                return f"{a['name']}: {key} threshold {x!r} on the CPU, {y!r} on the GPU"
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", required=True)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        all_cases = cases(work)
        rng = np.random.default_rng(0)
        dirs = {}
        for name, model, input_name, shape, flags in all_cases:
            dirs[name] = os.path.join(work, name + ".cal")
            for i in range(3):
                os.makedirs(os.path.join(dirs[name], str(i)))
                x = rng.standard_normal(shape).astype(np.float32) * (i + 1)
                np.save(os.path.join(dirs[name], str(i), input_name + ".npy"), x)
        if not gpu_present():
            name, model, _, _, flags = all_cases[0]
            proc = calibrate(args.kiln, model, dirs[name], flags, "gpu", os.path.join(work, "x.json"))
            if proc.returncode != 1 or "--device cpu" not in proc.stderr:
                print(f"FAILED --device gpu without a device: exit {proc.returncode}, {proc.stderr.strip()[-300:]}")
                return 1
            print("gpu-calibration: --device gpu fails without a device, naming --device cpu; "
                  "GPU half SKIPPED (no CUDA device)")
            return SKIP_EXIT_CODE
        failed = 0
        for name, model, _, _, flags in all_cases:
            files = {d: os.path.join(work, f"{name}.{d}.json") for d in ("cpu", "gpu")}
            problem = None
            for device, path in files.items():
                proc = calibrate(args.kiln, model, dirs[name], flags, device, path)
                if proc.returncode:
                    problem = f"--device {device}: {proc.stderr.strip()[-400:]}"
                    break
            if not problem:
                cpu, gpu = (json.load(open(files[d])) for d in ("cpu", "gpu"))
                problem = compare(cpu, gpu)
            failed += bool(problem)
            print(f"FAILED {name}: {problem}" if problem else
                  f"ok     {name} ({len(json.load(open(files['gpu']))['activations'])} values)", flush=True)
        print(f"gpu-calibration: {len(all_cases) - failed} passed, {failed} failed")
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
