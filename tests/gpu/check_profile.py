#!/usr/bin/env python3
"""`kiln profile --json` on the GPU, checked against the plan (`kiln inspect --json`).

The bundled tiny CNN (channels-last cuDNN convs with their epilogue, pools, a cuBLASLt gemm,
generated kernels) compiled in bf16, tf32 and fp32, profiled: every plan step appears once in
order with a positive time; the step times add up to the total and the groups (by op, by ONNX
node) to the same total; each convolution's FLOPs equal 2 x output elements x (C/groups x
kernel) worked out here from the inspected shapes, on the math of its precision; achieved
TFLOP/s and GB/s follow from FLOPs, bytes and time; generated kernels count no FLOPs; the
bottleneck is the slowest step; the text view names the same bottleneck. Exits 77 (ctest's
skip code) without a GPU.
"""
import json
import math
import os
import sys

import plan_cases
from plan_cases import run

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "..", "..", "examples", "tiny_cnn.onnx")
MATH = {"bf16": "half", "tf32": "tf32", "fp32": "fp32"}


def close(a, b, rel=1e-6):
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-12)


def conv_flops(step):
    each = step["xShape"] if step["transpose"] else step["yShape"]
    return 2.0 * math.prod(each) * math.prod(step["wShape"][1:])


def check_profile(plan_steps, profile, precision):
    steps = profile["steps"]
    if [s["index"] for s in steps] != list(range(len(plan_steps))):
        return f"profile lists steps {[s['index'] for s in steps]}, the plan has {len(plan_steps)}"
    total = profile["steps_ms"]
    for s, p in zip(steps, plan_steps):
        where = f"step {s['index']} ({p['op']} {p['name']})"
        if (s["name"], s["op"], s["nodes"]) != (p["name"], p["op"], p["nodes"]):
            return f"{where}: profile says {s['name']} {s['op']} {s['nodes']}"
        if not s["ms"] > 0:
            return f"{where}: time {s['ms']}"
        if not close(s["share"], s["ms"] / total):
            return f"{where}: share {s['share']} is not {s['ms']} / {total}"
        if p["kind"] == "conv":
            if not close(s["flops"], conv_flops(p)):
                return f"{where}: {s['flops']} FLOPs, expected {conv_flops(p)}"
            if s["math"] != MATH[precision] or not s["algorithm"].startswith("cudnn"):
                return f"{where}: math {s['math']} algorithm '{s['algorithm']}'"
        elif p["kind"] == "gemm":
            expected = 2.0 * p["batch"] * p["m"] * p["n"] * p["k"]
            if not close(s["flops"], expected) or s["algorithm"] != "cublasLt":
                return f"{where}: {s['flops']} FLOPs (expected {expected}), algorithm '{s['algorithm']}'"
        elif p["kind"] == "kernel":
            if s["flops"] != 0 or s["math"] != "none" or s["algorithm"] or s["bound"] == "compute":
                return f"{where}: a generated kernel with {s['flops']} FLOPs, {s['math']}, bound {s['bound']}"
        if not close(s["tflops"], s["flops"] / (s["ms"] * 1e-3) / 1e12, 1e-3):
            return f"{where}: {s['tflops']} TFLOP/s from {s['flops']} FLOPs in {s['ms']} ms"
        if not (s["bytes"] > 0 and close(s["gbs"], s["bytes"] / (s["ms"] * 1e-3) / 1e9, 1e-3)):
            return f"{where}: {s['gbs']} GB/s from {s['bytes']} bytes in {s['ms']} ms"
        busy = max(s["compute_fraction"], s["memory_fraction"]) >= 0.1
        expected = ("compute" if s["compute_fraction"] >= s["memory_fraction"] else "memory") if busy else \
            "latency" if s["ms"] < 0.05 else "underused"
        if s["bound"] != expected:
            return f"{where}: bound '{s['bound']}', expected {expected}"
    if not close(sum(s["ms"] for s in steps), total, 1e-4):
        return f"steps_ms {total} is not the sum of the step times"
    for key in ("by_op", "by_node"):
        if not close(sum(g["ms"] for g in profile[key]), total, 1e-4):
            return f"{key} adds up to {sum(g['ms'] for g in profile[key])}, not {total}"
    covered = {n for p in plan_steps for n in (p["nodes"] or [p["name"]])}
    if {g["node"] for g in profile["by_node"]} != covered:
        return f"by_node lists {sorted(g['node'] for g in profile['by_node'])}, the steps cover {sorted(covered)}"
    slowest = max(steps, key=lambda s: s["ms"])
    if profile["bottleneck"]["index"] != slowest["index"]:
        return f"bottleneck is step {profile['bottleneck']['index']}, the slowest is {slowest['index']}"
    device, request = profile["device"], profile["request"]
    if not (device["memory_gbs"] > 0 and device["sm_count"] > 0 and request["compute_ms"] > 0):
        return f"device {device}, request {request}"
    return None


def check_case(kiln, work, case, compile_only):
    name, precision = case
    plan = os.path.join(work, name + ".kiln")
    proc = run([kiln, "compile", MODEL, "-o", plan, "--precision", precision, "--shape", "image=4x3x32x32", "--quiet"])
    if proc.returncode:
        return "compile: " + proc.stderr.strip()
    if compile_only:
        return None
    proc = run([kiln, "inspect", plan, "--json"])
    if proc.returncode:
        return "inspect: " + proc.stderr.strip()
    plan_steps = json.loads(proc.stdout)["steps"]
    args = [kiln, "profile", plan, "--passes", "3", "--iterations", "5", "--timing-cache", "none", "--quiet"]
    proc = run(args + ["--json", "--top", "0"])
    if proc.returncode:
        return "profile: " + proc.stderr.strip()
    profile = json.loads(proc.stdout)
    problem = check_profile(plan_steps, profile, precision)
    if problem:
        return problem
    if precision == "bf16" and not profile["device"]["half_tflops"] > 0:
        return "no bf16 peak on this GPU: " + json.dumps(profile["device"])
    proc = run(args)
    if proc.returncode:
        return "profile (text): " + proc.stderr.strip()
    if "bottleneck: step " not in proc.stdout or "slowest steps:" not in proc.stdout:
        return "the text view has no bottleneck line or step table:\n" + proc.stdout
    return None


if __name__ == "__main__":
    sys.exit(plan_cases.main("profile", __doc__, [("tiny_cnn_bf16", "bf16"), ("tiny_cnn_tf32", "tf32"),
                                                  ("tiny_cnn_fp32", "fp32")], check_case))
