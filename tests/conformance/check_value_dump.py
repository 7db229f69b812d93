#!/usr/bin/env python3
"""`kiln eval --dump` names every intermediate by the ONNX value it is.

The bundled tiny CNN (conv, BatchNormalization, ReLU, pools, Flatten, Gemm, Softmax) with every
node output made a graph output, so onnxruntime computes each intermediate; `kiln eval --dump`
of the same model on the same input, in fp32 and in bf16 (channels-last convs, fused groups).
Each dumped value must be the onnxruntime value of that name (channels-last ones permuted back
to NCHW) within the precision's bound, and the dump must hold exactly the values the module
still computes: in fp32 every node output but the conv's that BatchNormalization was folded
into; in bf16 also none of the values a fused conv group keeps inside (conv, BN). A value named
after the wrong node (the folded conv still called c1, say) fails. Prints one line per
precision; exits 1 on any failure.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "..", "..", "examples", "tiny_cnn.onnx")
SHAPE = (2, 3, 32, 32)
# precision -> (bound on max |kiln - ort| / max |ort|, the values the dump must hold)
EXPECTED = {
    "fp32": (1e-5, {"b1", "r1", "p1", "c2", "r2", "g", "f", "logits", "probs"}),
    "bf16": (4e-2, {"r1", "p1", "r2", "g", "f", "logits", "probs"}),
}


def reference(work, x):
    """onnxruntime's value of every node output, by name."""
    model = onnx.load(MODEL)
    outputs = {o.name for o in model.graph.output}
    for node in model.graph.node:
        for name in node.output:
            if name not in outputs:
                model.graph.output.append(onnx.helper.make_empty_tensor_value_info(name))
    path = os.path.join(work, "all_outputs.onnx")
    onnx.save(model, path)
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(None, {"image": x})))


def check(kiln, work, precision, x_path, ref):
    bound, expected = EXPECTED[precision]
    dump = os.path.join(work, "dump_" + precision)
    proc = subprocess.run([kiln, "eval", MODEL, "--shape", "image=" + "x".join(map(str, SHAPE)), "--input",
                           f"image={x_path}", "--precision", precision, "--dump", dump, "--quiet"],
                          capture_output=True, text=True)
    if proc.returncode:
        return "eval: " + proc.stderr.strip()
    with open(os.path.join(dump, "manifest.json")) as f:
        manifest = json.load(f)
    names = [v["name"] for v in manifest["values"]]
    if set(names) != expected or len(names) != len(expected):
        return f"dumped {names}, expected {sorted(expected)}"
    if manifest["source"] != "interpreter" or manifest["precision"] != precision:
        return f"manifest says {manifest['source']} {manifest['precision']}"
    for value in manifest["values"]:
        got = np.load(os.path.join(dump, value["file"])).astype(np.float64)
        want = ref[value["name"]]
        if list(got.shape) != value["shape"]:
            return f"{value['name']}: file shape {got.shape}, manifest {value['shape']}"
        if got.shape != want.shape and got.ndim == 4 and got.transpose(0, 3, 1, 2).shape == want.shape:
            got = got.transpose(0, 3, 1, 2)  # computed channels last
        if got.shape != want.shape:
            return f"{value['name']}: shape {got.shape}, onnxruntime's {want.shape}"
        err = float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-30))
        if err > bound:
            return f"{value['name']} ({value['op']}, nodes {value['nodes']}): max rel err {err:.3g} > {bound:g}"
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", required=True)
    args = parser.parse_args()
    failed = 0
    with tempfile.TemporaryDirectory() as work:
        x = np.random.default_rng(0).standard_normal(SHAPE).astype(np.float32)
        x_path = os.path.join(work, "x.npy")
        np.save(x_path, x)
        ref = reference(work, x)
        for precision in EXPECTED:
            problem = check(args.kiln, work, precision, x_path, ref)
            print(f"{'FAILED' if problem else 'ok    '} tiny_cnn {precision}" + (f": {problem}" if problem else ""))
            failed += bool(problem)
    print(f"value dump: {len(EXPECTED) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
