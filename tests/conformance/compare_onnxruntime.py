#!/usr/bin/env python3
"""Runs whole models through `kiln eval` and onnxruntime (CPU) on the same random inputs and
checks the max error relative to the output's max magnitude (<= 1e-4): the bundled tiny CNN and
a ResNet-50 built by bench/make_resnet50_onnx.py. Prints one line per model and closes with
'N passed, M failed'.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.join(here, "..", "..")


def compare(kiln, model, shapes, work):
    rng = np.random.default_rng(0)
    graph = onnx.load(model, load_external_data=False).graph
    inits = {t.name for t in graph.initializer}
    feeds, cmd = {}, [kiln, "eval", model, "--output-dir", os.path.join(work, "out")]
    for i in graph.input:
        if i.name in inits:
            continue
        feeds[i.name] = rng.standard_normal(shapes[i.name]).astype(np.float32)
        path = os.path.join(work, i.name + ".npy")
        np.save(path, feeds[i.name])
        cmd += ["--input", f"{i.name}={path}", "--shape", i.name + "=" + "x".join(map(str, shapes[i.name]))]
    subprocess.run(cmd, check=True, capture_output=True)
    expected = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, feeds)
    worst = 0.0
    for o, want in zip(graph.output, expected):
        got = np.load(os.path.join(work, "out", o.name + ".npy"))
        worst = max(worst, float(np.abs(got.astype(np.float64) - want).max() / np.abs(want).max()))
    return worst


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", required=True)
    args = parser.parse_args()
    passed = failed = 0
    with tempfile.TemporaryDirectory() as work:
        resnet = os.path.join(work, "resnet50.onnx")
        subprocess.run([sys.executable, os.path.join(root, "bench", "make_resnet50_onnx.py"), resnet], check=True)
        for name, model, shapes in (
            ("tiny_cnn", os.path.join(root, "examples", "tiny_cnn.onnx"), {"image": [2, 3, 32, 32]}),
            ("resnet50", resnet, {"input": [1, 3, 224, 224]}),
        ):
            d = os.path.join(work, name)
            os.makedirs(d)
            rel = compare(args.kiln, model, shapes, d)
            ok = rel <= 1e-4
            passed, failed = passed + ok, failed + (not ok)
            print(f"{'ok  ' if ok else 'FAIL'} {name}: max relative error vs onnxruntime {rel:.2e}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
