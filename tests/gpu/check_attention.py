#!/usr/bin/env python3
"""Fused attention plans on the GPU against the interpreter (kiln-fuse-attention end to end).

Each case is a small module written here in the shape an exporter leaves attention in, with f32
graph inputs cast to the half type by the model itself:

  * "bshd": torch's SDPA export as in HuggingFace BERT: [b, s, h*d] projections split into heads
    by Reshape + Transpose, Q and Kᵀ scaled by sqrt(1/sqrt(d)) each, an additive mask
    Where(mask, 0, -inf) from an i64 [b, s] mask, Softmax, Where(IsNaN(p), 0, p), the merge;
  * "packed": nn.MultiheadAttention as in torchvision ViT: one [s, b, 3*h*d] in_proj output
    split by Gather after a Transpose (Q, K and V at offsets of one buffer), no mask.

`kiln compile --precision P` must fuse it (`kiln inspect` shows one attention step and no
transpose), `kiln run` runs it on the GPU and `kiln eval --precision P` evaluates the same
optimized module (the attention in f64, rounded once). The GPU step also rounds the
probabilities to P before they multiply V, so outputs agree within 4 ulps of P relative to the
output's largest magnitude. Rows whose keys are all masked must be exactly zero on both sides.
Prints one line per case and exits 1 on any failure, 77 (ctest's skip code) without a GPU
(with --compile-only it checks only that every case fuses, on any machine).
"""
import os
import sys

import numpy as np

import plan_cases
from plan_cases import run

ULP = {"bf16": 2.0 ** -7, "f16": 2.0 ** -10}
PRECISION = {"bf16": "bf16", "f16": "fp16"}


def bshd_module(t, b, h, s, d, scale):
    e = h * d
    return f"""
func.func @main(%x: tensor<{b}x{s}x{e}xf32> {{kiln.name = "x"}}, %y: tensor<{b}x{s}x{e}xf32> {{kiln.name = "y"}},
                %z: tensor<{b}x{s}x{e}xf32> {{kiln.name = "z"}}, %m: tensor<{b}x{s}xi64> {{kiln.name = "m"}})
    -> (tensor<{b}x{s}x{e}xf32> {{kiln.name = "o"}}) {{
  %c = kiln.constant dense<{scale!r}> : tensor<{t}>
  %zerob = kiln.constant dense<0.0> : tensor<1x{t}>
  %zero = kiln.constant dense<0.0> : tensor<1xf32>
  %ninf = kiln.constant dense<0xFF800000> : tensor<1xf32>
  %bm = kiln.cast %m : tensor<{b}x{s}xi64> to tensor<{b}x{s}xi1>
  %b4 = kiln.reshape %bm : tensor<{b}x{s}xi1> to tensor<{b}x1x1x{s}xi1>
  %mf = kiln.where %b4, %zero, %ninf : (tensor<{b}x1x1x{s}xi1>, tensor<1xf32>, tensor<1xf32>) -> tensor<{b}x1x1x{s}xf32>
  %mask = kiln.cast %mf : tensor<{b}x1x1x{s}xf32> to tensor<{b}x1x1x{s}x{t}>
  %xb = kiln.cast %x : tensor<{b}x{s}x{e}xf32> to tensor<{b}x{s}x{e}x{t}>
  %yb = kiln.cast %y : tensor<{b}x{s}x{e}xf32> to tensor<{b}x{s}x{e}x{t}>
  %zb = kiln.cast %z : tensor<{b}x{s}x{e}xf32> to tensor<{b}x{s}x{e}x{t}>
  %q0 = kiln.reshape %xb : tensor<{b}x{s}x{e}x{t}> to tensor<{b}x{s}x{h}x{d}x{t}>
  %q = kiln.transpose %q0 {{perm = array<i64: 0, 2, 1, 3>}} : (tensor<{b}x{s}x{h}x{d}x{t}>) -> tensor<{b}x{h}x{s}x{d}x{t}>
  %k0 = kiln.reshape %yb : tensor<{b}x{s}x{e}x{t}> to tensor<{b}x{s}x{h}x{d}x{t}>
  %kt = kiln.transpose %k0 {{perm = array<i64: 0, 2, 3, 1>}} : (tensor<{b}x{s}x{h}x{d}x{t}>) -> tensor<{b}x{h}x{d}x{s}x{t}>
  %v0 = kiln.reshape %zb : tensor<{b}x{s}x{e}x{t}> to tensor<{b}x{s}x{h}x{d}x{t}>
  %v = kiln.transpose %v0 {{perm = array<i64: 0, 2, 1, 3>}} : (tensor<{b}x{s}x{h}x{d}x{t}>) -> tensor<{b}x{h}x{s}x{d}x{t}>
  %qs = kiln.mul %q, %c : (tensor<{b}x{h}x{s}x{d}x{t}>, tensor<{t}>) -> tensor<{b}x{h}x{s}x{d}x{t}>
  %ks = kiln.mul %kt, %c : (tensor<{b}x{h}x{d}x{s}x{t}>, tensor<{t}>) -> tensor<{b}x{h}x{d}x{s}x{t}>
  %sc = kiln.matmul %qs, %ks : (tensor<{b}x{h}x{s}x{d}x{t}>, tensor<{b}x{h}x{d}x{s}x{t}>) -> tensor<{b}x{h}x{s}x{s}x{t}>
  %a = kiln.add %sc, %mask : (tensor<{b}x{h}x{s}x{s}x{t}>, tensor<{b}x1x1x{s}x{t}>) -> tensor<{b}x{h}x{s}x{s}x{t}>
  %p = kiln.softmax %a {{axis = 3 : i64}} : tensor<{b}x{h}x{s}x{s}x{t}>
  %n = kiln.is_nan %p : tensor<{b}x{h}x{s}x{s}x{t}> -> tensor<{b}x{h}x{s}x{s}xi1>
  %w = kiln.where %n, %zerob, %p : (tensor<{b}x{h}x{s}x{s}xi1>, tensor<1x{t}>, tensor<{b}x{h}x{s}x{s}x{t}>) -> tensor<{b}x{h}x{s}x{s}x{t}>
  %o = kiln.matmul %w, %v : (tensor<{b}x{h}x{s}x{s}x{t}>, tensor<{b}x{h}x{s}x{d}x{t}>) -> tensor<{b}x{h}x{s}x{d}x{t}>
  %ot = kiln.transpose %o {{perm = array<i64: 0, 2, 1, 3>}} : (tensor<{b}x{h}x{s}x{d}x{t}>) -> tensor<{b}x{s}x{h}x{d}x{t}>
  %r = kiln.reshape %ot : tensor<{b}x{s}x{h}x{d}x{t}> to tensor<{b}x{s}x{e}x{t}>
  %rf = kiln.cast %r : tensor<{b}x{s}x{e}x{t}> to tensor<{b}x{s}x{e}xf32>
  return %rf : tensor<{b}x{s}x{e}xf32>
}}
"""


def packed_module(t, b, h, s, d, scale):
    e = h * d
    lines = [f"""
func.func @main(%x: tensor<{s}x{b}x{3 * e}xf32> {{kiln.name = "qkv"}}) -> (tensor<{s * b}x{e}xf32> {{kiln.name = "o"}}) {{
  %c = kiln.constant dense<{scale!r}> : tensor<1x{t}>
  %xb = kiln.cast %x : tensor<{s}x{b}x{3 * e}xf32> to tensor<{s}x{b}x{3 * e}x{t}>
  %a = kiln.reshape %xb : tensor<{s}x{b}x{3 * e}x{t}> to tensor<{s}x{b}x3x{e}x{t}>
  %b5 = kiln.reshape %a : tensor<{s}x{b}x3x{e}x{t}> to tensor<1x{s}x{b}x3x{e}x{t}>
  %tr = kiln.transpose %b5 {{perm = array<i64: 3, 1, 2, 0, 4>}} : (tensor<1x{s}x{b}x3x{e}x{t}>) -> tensor<3x{s}x{b}x1x{e}x{t}>
  %u = kiln.reshape %tr : tensor<3x{s}x{b}x1x{e}x{t}> to tensor<3x{s}x{b}x{e}x{t}>"""]
    for i, n in enumerate("qkv"):
        lines.append(f"""  %i{n} = kiln.constant dense<{i}> : tensor<i64>
  %{n}0 = kiln.gather %u, %i{n} {{axis = 0 : i64}} : (tensor<3x{s}x{b}x{e}x{t}>, tensor<i64>) -> tensor<{s}x{b}x{e}x{t}>
  %{n}1 = kiln.reshape %{n}0 : tensor<{s}x{b}x{e}x{t}> to tensor<{s}x{b * h}x{d}x{t}>
  %{n}2 = kiln.transpose %{n}1 {{perm = array<i64: 1, 0, 2>}} : (tensor<{s}x{b * h}x{d}x{t}>) -> tensor<{b * h}x{s}x{d}x{t}>
  %{n} = kiln.reshape %{n}2 : tensor<{b * h}x{s}x{d}x{t}> to tensor<{b}x{h}x{s}x{d}x{t}>""")
    lines.append(f"""  %kt = kiln.transpose %k {{perm = array<i64: 0, 1, 3, 2>}} : (tensor<{b}x{h}x{s}x{d}x{t}>) -> tensor<{b}x{h}x{d}x{s}x{t}>
  %qs = kiln.mul %q, %c : (tensor<{b}x{h}x{s}x{d}x{t}>, tensor<1x{t}>) -> tensor<{b}x{h}x{s}x{d}x{t}>
  %ks = kiln.mul %kt, %c : (tensor<{b}x{h}x{d}x{s}x{t}>, tensor<1x{t}>) -> tensor<{b}x{h}x{d}x{s}x{t}>
  %sc = kiln.matmul %qs, %ks : (tensor<{b}x{h}x{s}x{d}x{t}>, tensor<{b}x{h}x{d}x{s}x{t}>) -> tensor<{b}x{h}x{s}x{s}x{t}>
  %p = kiln.softmax %sc {{axis = 3 : i64}} : tensor<{b}x{h}x{s}x{s}x{t}>
  %o = kiln.matmul %p, %v : (tensor<{b}x{h}x{s}x{s}x{t}>, tensor<{b}x{h}x{s}x{d}x{t}>) -> tensor<{b}x{h}x{s}x{d}x{t}>
  %o1 = kiln.transpose %o {{perm = array<i64: 2, 0, 1, 3>}} : (tensor<{b}x{h}x{s}x{d}x{t}>) -> tensor<{s}x{b}x{h}x{d}x{t}>
  %r = kiln.reshape %o1 : tensor<{s}x{b}x{h}x{d}x{t}> to tensor<{s * b}x{e}x{t}>
  %rf = kiln.cast %r : tensor<{s * b}x{e}x{t}> to tensor<{s * b}x{e}xf32>
  return %rf : tensor<{s * b}x{e}xf32>
}}
""")
    return "\n".join(lines)


# name, layout, type, batch, heads, seq, head dim, masked keys from (bshd; None: no padding)
CASES = [
    ("bert_b1h12s128d64_bf16", "bshd", "bf16", 1, 12, 128, 64, 100),
    ("bert_b2h3s64d64_f16", "bshd", "f16", 2, 3, 64, 64, 40),
    ("bshd_all_masked_b2h2s32d32_bf16", "bshd", "bf16", 2, 2, 32, 32, 0),
    ("bshd_d128_b1h2s48_bf16", "bshd", "bf16", 1, 2, 48, 128, None),
    ("vit_b1h12s197d64_bf16", "packed", "bf16", 1, 12, 197, 64, None),
    ("packed_b2h3s37d64_f16", "packed", "f16", 2, 3, 37, 64, None),
]


def check_case(kiln, work, case, compile_only):
    name, layout, t, b, h, s, d, masked_from = case
    scale = float(np.sqrt(1.0 / np.sqrt(d)))
    module = os.path.join(work, name + ".mlir")
    with open(module, "w") as f:
        f.write((bshd_module if layout == "bshd" else packed_module)(t, b, h, s, d, scale))
    precision = PRECISION[t]
    plan = os.path.join(work, name + ".kiln")
    proc = run([kiln, "compile", module, "-o", plan, "--precision", precision, "--quiet"])
    if proc.returncode:
        return "compile: " + proc.stderr.strip()
    text = run([kiln, "inspect", plan]).stdout
    steps = [line for line in text.splitlines() if line.startswith("step ")]
    if sum('op="kiln.attention"' in line for line in steps) != 1 or any("transpose" in line for line in steps):
        return "not fused into one attention step:\n" + "\n".join(steps)
    if compile_only:
        return None
    rng = np.random.default_rng(len(name))
    inputs = {}
    if layout == "bshd":
        for n in "xyz":
            inputs[n] = rng.uniform(-2, 2, (b, s, h * d)).astype(np.float32)
        m = np.ones((b, s), np.int64)
        if masked_from is not None:
            m[:, masked_from:] = 0
        inputs["m"] = m
    else:
        inputs["qkv"] = rng.uniform(-2, 2, (s, b, 3 * h * d)).astype(np.float32)
    outputs = plan_cases.gpu_and_interpreter(kiln, work, name, plan, module, precision, inputs, "o")
    if isinstance(outputs, str):
        return outputs
    gpu, ref = outputs
    if not np.isfinite(gpu).all():
        return "non-finite GPU output"
    if masked_from == 0 and (gpu != 0).any():
        return "rows with every key masked are not zero on the GPU"
    err = np.abs(gpu.astype(np.float64) - ref).max()
    bound = 4 * ULP[t] * max(np.abs(ref).max(), 1e-3)
    if err > bound:
        return f"max |GPU - interpreter| {err:.3g} > {bound:.3g}"
    return None


if __name__ == "__main__":
    sys.exit(plan_cases.main("attention", __doc__, CASES, check_case))
