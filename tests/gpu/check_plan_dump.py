#!/usr/bin/env python3
"""`kiln run --dump` on the GPU against `kiln eval --dump` of the same model and precision.

The bundled tiny CNN compiled in fp32 and bf16: the plan's dump (every step run alone, each
value it completes copied out) must hold exactly the ONNX values the interpreter's dump of the
same optimized module holds, and `kiln compare` of the two must find each within the bound of
accumulation-order differences (fp32 1e-4, bf16 2e-2 of max |value|; cosine >= 0.9999); every
dumped value names the step that completed it with its runner and time, which compare carries;
and `kiln compare PLAN --reference interpreter --model` runs and dumps the plan itself.
Exits 77 (ctest's skip code) without a GPU.
"""
import json
import os
import sys

import numpy as np

import plan_cases
from plan_cases import run

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "..", "..", "examples", "tiny_cnn.onnx")
BOUND = {"fp32": 1e-4, "bf16": 2e-2}


def check_case(kiln, work, case, compile_only):
    name, precision = case
    shape = ["--shape", "image=2x3x32x32"]
    plan = os.path.join(work, name + ".kiln")
    proc = run([kiln, "compile", MODEL, "-o", plan, "--precision", precision, "--quiet"] + shape)
    if proc.returncode:
        return "compile: " + proc.stderr.strip()
    if compile_only:
        return None
    x = os.path.join(work, name + ".x.npy")
    np.save(x, np.random.default_rng(1).standard_normal((2, 3, 32, 32)).astype(np.float32))
    gpu, ref = os.path.join(work, name + ".gpu"), os.path.join(work, name + ".ref")
    proc = run([kiln, "run", plan, "--input", f"image={x}", "--dump", gpu, "--quiet", "--timing-cache", "none"])
    if proc.returncode:
        return "run --dump: " + proc.stderr.strip()
    proc = run([kiln, "eval", MODEL, "--input", f"image={x}", "--precision", precision, "--dump", ref, "--quiet"]
               + shape)
    if proc.returncode:
        return "eval --dump: " + proc.stderr.strip()
    with open(os.path.join(gpu, "manifest.json")) as f:
        manifest = json.load(f)
    if manifest["source"] != "gpu" or not manifest["values"]:
        return f"GPU dump manifest: {manifest['source']}, {len(manifest['values'])} values"
    # Each value names the step that completed it, timed alone; the steps' sum covers them.
    steps = {}
    for v in manifest["values"]:
        step = v.get("step")
        if not step or step["ms"] < 0 or step["runner"] not in ("cudnn", "cublaslt", "kernel", "attention", "copy"):
            return f"{v['name']}: no timed step in the GPU dump ({step})"
        steps[step["index"]] = step["ms"]
    if not 0 < sum(steps.values()) <= manifest.get("steps_ms", 0) * (1 + 1e-9):
        return f"the timed steps of the values sum to {sum(steps.values())} ms, all steps {manifest.get('steps_ms')}"
    listed = manifest.get("steps", [])
    if [st["index"] for st in listed] != list(range(len(listed))) or not listed or \
            abs(sum(st["ms"] for st in listed) - manifest["steps_ms"]) > 1e-6 * max(manifest["steps_ms"], 1):
        return f"the manifest's step list ({len(listed)} steps) does not add up to steps_ms {manifest['steps_ms']}"
    proc = run([kiln, "compare", ref, gpu, "--json", "--top", "0"])
    if proc.returncode:
        return "compare: " + proc.stderr.strip()
    result = json.loads(proc.stdout)
    if any("step_b" not in v or "step_a" in v for v in result["values"]) or "b" not in result.get("steps_ms", {}):
        return "compare does not carry the GPU side's step times (step_b, steps_ms.b)"
    attributed = sum(v.get("ms_b", 0) for v in result["values"])
    if not 0 < attributed <= result["steps_ms"]["b"] * (1 + 1e-9):
        return f"the values' ms_b add up to {attributed} ms, all steps {result['steps_ms']['b']} ms"
    if result["only_a"] or result["only_b"]:
        return f"only in the interpreter's dump: {result['only_a']}; only in the GPU's: {result['only_b']}"
    # The same through `kiln compare PLAN --reference interpreter`: it runs and dumps the plan
    # itself and makes the strict-fp32 reference; every value the GPU dump holds is compared.
    proc = run([kiln, "compare", plan, "--reference", "interpreter", "--model", MODEL, "--input", f"image={x}",
                "--json", "--timing-cache", "none"] + shape)
    if proc.returncode:
        return "compare PLAN --reference interpreter: " + proc.stderr.strip()
    direct = json.loads(proc.stdout)
    names = sorted(v["name"] for v in direct["values"] if "max_rel" in v and "step_b" in v)
    if names != sorted(v["name"] for v in manifest["values"]):
        return f"compare PLAN --reference interpreter compared {names}, the dump holds {len(manifest['values'])}"
    for v in result["values"]:
        if "problem" in v:
            return f"{v['name']}: {v['problem']}"
        if v["max_rel"] > BOUND[precision] or v["cosine"] < 0.9999:
            return f"{v['name']} ({','.join(v['nodes'])}): max rel {v['max_rel']:.3g}, cosine {v['cosine']:.6f}"
    return None


if __name__ == "__main__":
    sys.exit(plan_cases.main("plan dump", __doc__, [("tiny_cnn_fp32", "fp32"), ("tiny_cnn_bf16", "bf16")],
                             check_case))
