#!/usr/bin/env python3
"""`kiln eval --dump` names every intermediate by the ONNX value it is.

The bundled tiny CNN (conv, BatchNormalization, ReLU, pools, Flatten, Gemm, Softmax) with every
node output made a graph output, so onnxruntime computes each intermediate; `kiln eval --dump`
of the same model on the same input, in fp32 and in bf16 (channels-last convs, fused groups).
Each dumped value must be the onnxruntime value of that name (channels-last ones permuted back
to NCHW) within the precision's bound, and the dump must hold exactly the values the module
still computes: in fp32 every node output but the conv's that BatchNormalization was folded
into; in bf16 also none of the values a fused conv group keeps inside (conv, BN). A value named
after the wrong node (the folded conv still called c1, say) fails. Then `kiln compare` of the
fp32 dump (A) with the bf16 dump (B), as JSON: the values both hold in A's order, each error
recomputed here from the files, the values only A holds, the one metadata difference (the
precision), and the culprits ranked by the error
a value gains over its inputs (an input B fused away brings its own inputs' error). Prints one
line per check; exits 1 on any failure.
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


def load(dump, value):
    return np.load(os.path.join(dump, value["file"])).astype(np.float64)


def check_compare(kiln, work):
    """`kiln compare` of the fp32 and bf16 dumps against the same figures computed here."""
    da, db = os.path.join(work, "dump_fp32"), os.path.join(work, "dump_bf16")
    proc = subprocess.run([kiln, "compare", da, db, "--json", "--top", "0"], capture_output=True, text=True)
    if proc.returncode:
        return "compare: " + proc.stderr.strip()
    got = json.loads(proc.stdout)
    ma, mb = (json.load(open(os.path.join(d, "manifest.json"))) for d in (da, db))
    a = {v["name"]: v for v in ma["values"]}
    b = {v["name"]: v for v in mb["values"]}
    both = [v["name"] for v in ma["values"] if v["name"] in b]
    if [v["name"] for v in got["values"]] != both:
        return f"compare lists {[v['name'] for v in got['values']]}, both dumps hold {both}"
    if got["only_a"] != [n for n in a if n not in b] or got["only_b"] != []:
        return f"only_a {got['only_a']}, only_b {got['only_b']}"
    rel = {}
    for row in got["values"]:
        x, y = load(da, a[row["name"]]), load(db, b[row["name"]])
        if y.shape != x.shape:
            y = y.transpose(0, 3, 1, 2)
        err = np.abs(y - x).max() / np.abs(x).max()
        cos = float((x * y).sum() / np.sqrt((x * x).sum() * (y * y).sum()))
        if not (np.isclose(row["max_rel"], err, rtol=1e-9) and np.isclose(row["cosine"], cos, rtol=1e-9)):
            return f"{row['name']}: compare says {row['max_rel']}, {row['cosine']}; here {err}, {cos}"
        rel[row["name"]] = err

    def brought(name):  # the error an input brings
        if name in rel:
            return rel[name]
        return max([brought(i) for i in a[name]["inputs"]], default=0.0) if name in a else 0.0

    growth = {n: rel[n] - max([brought(i) for i in a[n]["inputs"]], default=0.0) for n in rel}
    for row in got["values"]:
        if not np.isclose(row["growth"], growth[row["name"]], rtol=1e-9, atol=1e-15):
            return f"{row['name']}: growth {row['growth']}, expected {growth[row['name']]}"
    expected = sorted((n for n in growth if growth[n] > 0), key=lambda n: -growth[n])
    if got["culprits"] != expected:
        return f"culprits {got['culprits']}, expected {expected}"
    diff = {d["key"]: (d["a"], d["b"]) for d in got["metadata_diff"]}
    if diff != {"precision": ("fp32", "bf16")}:
        return f"metadata_diff {got['metadata_diff']}: the dumps differ in their precision only"
    if "r2" not in expected or growth["r2"] >= rel["r2"]:
        return "r2's input c2 was fused away in bf16: its growth should start from p1's error"
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
        problem = check_compare(args.kiln, work)
        print(f"{'FAILED' if problem else 'ok    '} compare fp32 bf16" + (f": {problem}" if problem else ""))
        failed += bool(problem)
    print(f"value dump: {len(EXPECTED) + 1 - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
