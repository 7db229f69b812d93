"""Checks a `kiln calibrate` file of examples/tiny_cnn.onnx against numpy and the interpreter.

    check_calibration.py CALIB.json MODEL.onnx SAMPLES_DIR DUMP_DIR...

Every range must equal what numpy computes from the calibration inputs (the graph input) and
from `kiln eval --dump` of each input (the values both hold), exactly; the thresholds must be
ordered as their definitions order them; the per-channel weight ranges must equal those of
the model's initializers (conv1's after its BatchNorm is folded in, to float rounding).
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

calib_path, model_path, samples_dir, *dumps = sys.argv[1:]
calib = json.load(open(calib_path))
model = onnx.load(model_path)
init = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in model.graph.initializer}
samples = sorted(os.listdir(samples_dir))
assert calib["format"] == "kiln-calibration-1" and calib["samples"] == len(samples), calib["samples"]
acts = {a["name"]: a for a in calib["activations"]}
assert calib["activations"][0]["name"] == "image", "graph inputs come first"


def check_range(name, arrays):
    a = acts[name]
    values = np.concatenate([x.astype(np.float64).ravel() for x in arrays])
    assert a["count"] == values.size, (name, a["count"], values.size)
    assert a["min"] == values.min() and a["max"] == values.max(), (name, a["min"], a["max"])
    t = a["thresholds"]
    assert t["minmax"] == np.abs(values).max(), (name, t)
    assert 0 < t["percentile"] <= t["minmax"] and 0 < t["entropy"] <= t["minmax"], (name, t)
    # The percentile threshold leaves at most 0.01% of |x| above it, plus a bin's width.
    width = t["minmax"] / 1024  # at least 1/2048 of a span below 2 * minmax
    assert np.mean(np.abs(values) > t["percentile"] + width) <= 1e-4, (name, t)


check_range("image", [np.load(os.path.join(samples_dir, s, "image.npy")) for s in samples])
checked = 1
manifests = [json.load(open(os.path.join(d, "manifest.json"))) for d in dumps]
for entry in manifests[0]["values"]:
    name = entry["name"]
    if name == "image" or name not in acts:
        continue
    arrays = []
    for d, m in zip(dumps, manifests):
        files = {v["name"]: v["file"] for v in m["values"]}
        arrays.append(np.load(os.path.join(d, files[name])))
    check_range(name, arrays)
    checked += 1
assert checked >= 4, f"only {checked} values in both"

weights = {w["node"]: w for w in calib["weights"]}
assert sorted(weights) == ["conv1", "conv2", "fc"], sorted(weights)
assert weights["conv2"]["axis"] == 0 and weights["conv2"]["abs_max"] == list(np.abs(init["conv2.weight"]).max(axis=(1, 2, 3)))
assert weights["fc"]["op"] == "kiln.gemm" and weights["fc"]["abs_max"] == list(np.abs(init["fc.weight"]).max(axis=1))
eps = next(a.f for n in model.graph.node if n.name == "bn1" for a in n.attribute if a.name == "epsilon") \
    if any(a.name == "epsilon" for n in model.graph.node if n.name == "bn1" for a in n.attribute) else 1e-5
folded = init["conv1.weight"] * (init["bn1.scale"] / np.sqrt(init["bn1.var"] + eps))[:, None, None, None]
np.testing.assert_allclose(weights["conv1"]["abs_max"], np.abs(folded).max(axis=(1, 2, 3)), rtol=1e-6)
print(f"calibration ok: {checked} values, {len(weights)} weights")
