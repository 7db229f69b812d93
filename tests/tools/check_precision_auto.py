#!/usr/bin/env python3
"""`kiln compile --precision auto --max-error E --calibration DIR` on a model built to need it.

The model: fc1 = x @ W1 + 100 (an offset far larger than its variation), fc2 = fc1 @ W2 with
columns of W2 summing to zero (the offset cancels, what is left is the variation, which half
precision rounds away), fc3 = relu(fc2) @ W3, an ordinary layer. Pure bf16 and pure fp16 miss a
1e-3 budget by far; keeping fc2 in fp32 meets it in fp16 (the offset add, fused with the cast
fc2 needs, computes in fp32 and stores f32), fc3 can stay half.

Checks, with the interpreter as the independent judge (`kiln eval`, no GPU needed):
  - the search's report: reference, bf16, fp16 and bisection candidates, each with its error;
    pure bf16/fp16 over budget; the choice within it and keeping fc2 (and fc1) but not fc3;
  - the plan records the choice (metadata) and runs fc3 in half, fc2 in fp32 (kiln inspect);
  - `kiln eval` with the chosen overrides is within the budget of `kiln eval` in fp32 on the
    calibration inputs and on held-out inputs, pure half is not;
  - a generous budget chooses pure half precision with no fp32 node;
  - 8 bits: on a small CNN (two 3x3 convs over 32 channels) a generous budget chooses int8 (its
    report lists the int8 and fp8 candidates and how much of the model each runs in 8 bits; the
    ranges it measured lie beside the plan and reproduce its accuracy in `kiln eval`), a tight
    one does not;
  - usage errors exit 2, a calibration input without a file for a model input exits 1 naming it.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def make_model(path):
    rng = np.random.default_rng(7)
    w1 = (rng.standard_normal((16, 32)) * 0.01).astype(np.float32)
    w2 = rng.standard_normal((32, 8)).astype(np.float32)
    w2 -= w2.mean(axis=0, keepdims=True)  # every column sums to zero: the offset cancels
    w3 = rng.standard_normal((8, 4)).astype(np.float32)
    inits = [numpy_helper.from_array(w1, "W1"), numpy_helper.from_array(np.array([100.0], np.float32), "offset"),
             numpy_helper.from_array(w2, "W2"), numpy_helper.from_array(w3, "W3")]
    nodes = [helper.make_node("MatMul", ["x", "W1"], ["h1"], name="fc1"),
             helper.make_node("Add", ["h1", "offset"], ["h1_offset"], name="offset_add"),
             helper.make_node("MatMul", ["h1_offset", "W2"], ["h2"], name="fc2"),
             helper.make_node("Relu", ["h2"], ["h2_relu"], name="relu2"),
             helper.make_node("MatMul", ["h2_relu", "W3"], ["y"], name="fc3")]
    graph = helper.make_graph(nodes, "offset_mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 4])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, path)


def make_cnn(path):
    """Two 3x3 convolutions over 32 channels with ReLU: what INT8 convolutions take."""
    rng = np.random.default_rng(5)
    inits, nodes, x = [], [], "x"
    for i in range(2):
        inits.append(numpy_helper.from_array((rng.standard_normal((32, 32, 3, 3)) / 17).astype(np.float32), f"w{i}"))
        inits.append(numpy_helper.from_array((rng.standard_normal(32) * 0.1).astype(np.float32), f"b{i}"))
        nodes.append(helper.make_node("Conv", [x, f"w{i}", f"b{i}"], [f"c{i}"], name=f"conv{i}", pads=[1] * 4))
        nodes.append(helper.make_node("Relu", [f"c{i}"], [f"r{i}"], name=f"relu{i}"))
        x = f"r{i}"
    nodes.append(helper.make_node("Identity", [x], ["y"], name="out"))
    graph = helper.make_graph(nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 32, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 32, 8, 8])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, path)


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--kiln", required=True)
    args = ap.parse_args()
    failures = []

    def check(ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            failures.append(what)

    with tempfile.TemporaryDirectory() as work:
        model = os.path.join(work, "offset_mlp.onnx")
        make_model(model)
        rng = np.random.default_rng(11)
        calib = os.path.join(work, "calib")
        for name in ("a", "b"):
            os.makedirs(os.path.join(calib, name))
            np.save(os.path.join(calib, name, "x.npy"), rng.standard_normal((4, 16)).astype(np.float32))
        held_out = os.path.join(work, "held_out.npy")
        np.save(held_out, rng.standard_normal((4, 16)).astype(np.float32))

        plan = os.path.join(work, "auto.kiln")
        report = os.path.join(work, "report.json")
        r = run([args.kiln, "compile", model, "-o", plan, "--precision", "auto", "--max-error", "1e-3",
                 "--calibration", calib, "--precision-report", report])
        check(r.returncode == 0, f"compile --precision auto exits 0 ({r.stderr.strip()[-400:]})")
        if r.returncode != 0:
            sys.exit(1)
        choice = json.load(open(report))["choice"]
        trials = {t["what"]: t for t in choice["trials"]}
        check("reference fp32" in trials and "bf16" in trials and "fp16" in trials,
              f"the report lists the reference, bf16 and fp16 ({list(trials)})")
        check(not trials["bf16"]["within_budget"] and trials["bf16"]["error"] > 1e-2,
              f"pure bf16 misses the budget ({trials['bf16']['error']:.3g})")
        check(not trials["fp16"]["within_budget"], f"pure fp16 misses the budget ({trials['fp16']['error']:.3g})")
        check(choice["precision"] in ("bf16", "fp16"), f"a half precision is chosen ({choice['precision']})")
        kept = choice["fp32_nodes"]
        check("fc2" in kept and "fc3" not in kept and len(kept) <= 3,
              f"fc2 stays fp32 (with at most the nodes fused with it), fc3 does not ({kept})")
        check(abs(choice["search_target"] - 8e-4) < 1e-12, f"the search holds 20% headroom ({choice['search_target']})")
        check(0 <= choice["error"] <= 8e-4, f"the chosen error is within the budget less headroom ({choice['error']:.3g})")
        check(all(t["within_budget"] == (t["error"] <= 8e-4) for t in choice["trials"]),
              "every trial is judged against the budget less headroom")
        check(choice["calibration_inputs"] == 2, "both calibration inputs were used")
        bisected = [t for t in choice["trials"] if t["kept_values"] > 0]
        check(bisected and all("error" in t and t["seconds"] >= 0 for t in bisected),
              f"the bisection's candidates are reported ({len(bisected)})")

        r = run([args.kiln, "inspect", plan, "--json"])
        check(r.returncode == 0, "kiln inspect --json reads the plan")
        inspected = json.loads(r.stdout)
        meta = inspected["metadata"]
        check(meta["precision"] == choice["precision"], f"the plan's precision is the choice ({meta['precision']})")
        check(any(o == "auto: fc2=fp32" for o in meta["precisionOverrides"]),
              f"the plan records the fp32 nodes ({meta['precisionOverrides']})")
        check(meta["precisionChoice"].startswith("auto: "), f"the plan says how it chose ({meta['precisionChoice']})")
        def gemm_of(node):
            """The GEMM step of `node`: (operand element types, math)."""
            for step in inspected["steps"]:
                if step["kind"] == "gemm" and node in step["nodes"]:
                    return {step[k]["dtype"] for k in ("a", "b", "d") if step.get(k)}, step["math"]
            return set(), None

        fc3_types, _ = gemm_of("fc3")
        fc2_types, fc2_math = gemm_of("fc2")
        check(fc3_types == {choice["precision"].replace("fp16", "f16")},
              f"fc3's GEMM runs in {choice['precision']} ({fc3_types})")
        check(fc2_types == {"f32"} and fc2_math == "strict-f32", f"fc2's GEMM runs in strict fp32 ({fc2_types}, {fc2_math})")

        # The independent judge: the interpreter with the same overrides, against fp32.
        def evaluate(tag, extra, x):
            out = os.path.join(work, tag)
            r = run([args.kiln, "eval", model, "--input", f"x={x}", "--output-dir", out, *extra])
            if r.returncode != 0:
                sys.exit(f"kiln eval {extra} failed: {r.stderr}")
            return np.load(os.path.join(out, "y.npy")).astype(np.float64)

        chosen = ["--precision", choice["precision"]] + [a for n in kept for a in ("--force-precision", f"{n}=fp32")]
        for tag, x in (("calib-a", os.path.join(calib, "a", "x.npy")), ("held-out", held_out)):
            ref = evaluate(f"{tag}-fp32", [], x)
            rel = lambda y: float(np.abs(y - ref).max() / np.abs(ref).max())
            auto_err = rel(evaluate(f"{tag}-auto", chosen, x))
            half_err = rel(evaluate(f"{tag}-half", ["--precision", choice["precision"]], x))
            check(auto_err <= (1e-3 if tag.startswith("calib") else 1e-2),
                  f"{tag}: the chosen precision's error against fp32 ({auto_err:.3g})")
            check(half_err > 1e-2, f"{tag}: pure {choice['precision']} is far off ({half_err:.3g})")

        r = run([args.kiln, "compile", model, "-o", os.path.join(work, "loose.kiln"), "--precision", "auto",
                 "--max-error", "10", "--calibration", calib, "--precision-report", report, "--quiet"])
        loose = json.load(open(report))["choice"] if r.returncode == 0 else {}
        check(r.returncode == 0 and loose.get("fp32_nodes") == [] and loose.get("precision") in ("bf16", "fp16"),
              f"a generous budget keeps pure half precision ({loose})")

        # 8 bits, on a CNN: a generous budget takes INT8 convolutions, a tight one does not.
        cnn = os.path.join(work, "cnn.onnx")
        make_cnn(cnn)
        cnn_calib = os.path.join(work, "cnn_calib")
        for name in ("a", "b"):
            os.makedirs(os.path.join(cnn_calib, name))
            np.save(os.path.join(cnn_calib, name, "x.npy"), rng.standard_normal((2, 32, 8, 8)).astype(np.float32))
        cnn_plan = os.path.join(work, "cnn.kiln")
        r = run([args.kiln, "compile", cnn, "-o", cnn_plan, "--precision", "auto", "--max-error", "0.2",
                 "--calibration", cnn_calib, "--precision-report", report])
        eight = json.load(open(report))["choice"] if r.returncode == 0 else {}
        tried = {t["what"].split(" ")[0]: t for t in eight.get("trials", [])}
        check(r.returncode == 0 and eight.get("precision") == "int8",
              f"a generous budget on a CNN chooses int8 ({eight.get('precision')}: {r.stderr.strip()[-300:]})")
        check("int8" in tried and "fp8" in tried and tried["int8"]["within_budget"] and
              # fp8 plans keep the first layer (the conv reading the image) and quantize the other.
              "(100% of multiply-adds in 8 bits)" in tried["int8"]["what"] and "(50% of" in tried["fp8"]["what"],
              f"the report lists the 8-bit candidates with their 8-bit share ({list(t['what'] for t in eight.get('trials', []))})")
        r = run([args.kiln, "inspect", cnn_plan])
        convs = [line for line in r.stdout.splitlines() if line.startswith("step ") and " conv " in line]
        check('precision="int8"' in r.stdout and len(convs) == 2 and all(":i8[" in c for c in convs),
              f"the plan is int8 with two INT8 conv steps ({len(convs)})")
        ranges = cnn_plan + ".calib.json"
        check(os.path.exists(ranges), "the ranges the search measured lie beside the plan")
        if os.path.exists(ranges):
            # The search's error is the largest over the calibration inputs.
            err = 0.0
            for name in ("a", "b"):
                x = os.path.join(cnn_calib, name, "x.npy")
                outs = {}
                for tag, extra in (("fp32", []), ("int8", ["--precision", "int8", "--calibration", ranges])):
                    out = os.path.join(work, f"cnn-{name}-{tag}")
                    r = run([args.kiln, "eval", cnn, "--input", f"x={x}", "--output-dir", out, *extra])
                    outs[tag] = np.load(os.path.join(out, "y.npy")).astype(np.float64) if r.returncode == 0 else None
                if outs["int8"] is None or outs["fp32"] is None:
                    err = float("inf")
                    break
                err = max(err, float(np.abs(outs["int8"] - outs["fp32"]).max() / np.abs(outs["fp32"]).max()))
            check("int8" in tried and abs(err - tried["int8"]["error"]) <= 1e-6 * max(1.0, err),
                  f"kiln eval with those ranges reproduces the int8 candidate's error ({err:.4g} vs "
                  f"{tried.get('int8', {}).get('error')})")
        r = run([args.kiln, "compile", cnn, "-o", os.path.join(work, "cnn-tight.kiln"), "--precision", "auto",
                 "--max-error", "2e-3", "--calibration", cnn_calib, "--precision-report", report, "--quiet"])
        tight = json.load(open(report))["choice"] if r.returncode == 0 else {}
        check(r.returncode == 0 and tight.get("precision") in ("bf16", "fp16", "fp32"),
              f"a tight budget on the CNN keeps it out of 8 bits ({tight.get('precision')})")

        # No headroom: the search may use the whole budget (and says so).
        r = run([args.kiln, "compile", model, "-o", os.path.join(work, "tight.kiln"), "--precision", "auto",
                 "--max-error", "1e-3", "--error-headroom", "0", "--calibration", calib, "--precision-report", report,
                 "--quiet"])
        whole = json.load(open(report))["choice"] if r.returncode == 0 else {}
        check(r.returncode == 0 and whole.get("search_target") == 1e-3 and "fc2" in whole.get("fp32_nodes", []),
              f"--error-headroom 0 holds the search to the budget itself ({whole.get('search_target')})")

        usage = [
            ([args.kiln, "compile", model, "-o", plan, "--precision", "auto", "--calibration", calib], 2, "--max-error"),
            ([args.kiln, "compile", model, "-o", plan, "--precision", "auto", "--max-error", "1e-3"], 2,
             "--calibration"),
            ([args.kiln, "compile", model, "-o", plan, "--max-error", "1e-3"], 2, "--precision auto"),
            ([args.kiln, "compile", model, "-o", plan, "--precision", "auto", "--max-error", "0", "--calibration",
              calib], 2, "positive"),
            ([args.kiln, "eval", model, "--precision", "auto"], 2, "kiln compile"),
            ([args.kiln, "compile", model, "-o", plan, "--precision", "auto", "--max-error", "1e-3", "--calibration",
              calib, "--error-headroom", "1"], 2, "fraction"),
            ([args.kiln, "compile", model, "-o", plan, "--error-headroom", "0.1"], 2, "--precision auto"),
        ]
        empty = os.path.join(work, "empty")
        os.makedirs(os.path.join(empty, "s1"))
        np.save(os.path.join(empty, "s1", "other.npy"), np.zeros((4, 16), np.float32))
        usage.append(([args.kiln, "compile", model, "-o", plan, "--precision", "auto", "--max-error", "1e-3",
                       "--calibration", empty], 1, "x.npy"))
        for cmd, status, says in usage:
            r = run(cmd)
            check(r.returncode == status and says in r.stderr,
                  f"{' '.join(cmd[1:])[-90:]}: exit {status}, says '{says}' (got {r.returncode}: {r.stderr.strip()[-200:]})")

    if failures:
        sys.exit(f"{len(failures)} check(s) failed")
    print("all checks passed")


if __name__ == "__main__":
    main()
