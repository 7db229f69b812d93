#!/usr/bin/env python3
"""Channels-last convolutions on the GPU (cuDNN frontend graphs) against the interpreter.

Each case is a small module written here with f32 graph inputs in NHWC, cast to the case's
type by the model itself, and a `channels_last` convolution (the form kiln-convert-layout
leaves) followed by what its fusion group may take: bias, residual add, ReLU, clip (ReLU6),
sigmoid, hard sigmoid, hard swish. Odd channel counts and sizes, grouped and depthwise
convolutions (whose epilogue stays an elementwise group), asymmetric pads (an explicit pad
first), f32 under TF32.

`kiln compile` must form what the case expects (`kiln inspect`: one channels-last conv step
with that activation and residual), `kiln run` runs it on the GPU and `kiln eval` evaluates
the same optimized module (the conv group in f32, rounded once). Both accumulate in fp32 and
round once, so they agree within 2 ulps of the type relative to the output's largest magnitude
(TF32 rounds the operands to 10 bits: 8 ulps of 2^-10 there). Prints one line per case and
exits 1 on any failure, 77 (ctest's skip code) without a GPU (with --compile-only it checks
only the plans, on any machine).
"""
import os
import sys

import numpy as np

import plan_cases
from plan_cases import run

ULP = {"bf16": 2.0 ** -7, "f16": 2.0 ** -10, "f32": 2.0 ** -10}
PRECISION = {"bf16": "bf16", "f16": "fp16", "f32": "tf32"}


def dense(values):
    """An MLIR dense literal, nested like the values' shape."""
    def nested(v):
        return f"{float(v):.6g}" if v.ndim == 0 else "[" + ", ".join(nested(x) for x in v) + "]"
    return f"dense<{nested(np.asarray(values))}>"


def typ(shape, t):
    return "tensor<" + "x".join(str(d) for d in shape) + f"x{t}>"


def conv_module(case, rng):
    """The module and the plan's expected activation and residual."""
    name, t, n, h, w, c, k, r, stride, pads, group, bias, residual, act = case
    kh = kw = r
    oh = (h + pads[0] + pads[2] - kh) // stride + 1
    ow = (w + pads[1] + pads[3] - kw) // stride + 1
    x_shape, y_shape, w_shape = (n, h, w, c), (n, oh, ow, k), (k, kh, kw, c // group)
    weights = rng.uniform(-1, 1, w_shape) / np.sqrt(kh * kw * c // group)
    lines = [f'func.func @main(%x: {typ(x_shape, "f32")} {{kiln.name = "x"}}'
             + (f', %s: {typ(y_shape, "f32")} {{kiln.name = "s"}}' if residual else "")
             + f') -> ({typ(y_shape, "f32")} {{kiln.name = "y"}}) {{',
             f"  %xt = kiln.cast %x : {typ(x_shape, 'f32')} to {typ(x_shape, t)}",
             f"  %w = kiln.constant {dense(weights)} : {typ(w_shape, t)}"]
    operands = "%xt, %w"
    types = f"{typ(x_shape, t)}, {typ(w_shape, t)}"
    if bias:
        lines.append(f"  %b = kiln.constant {dense(rng.uniform(-0.5, 0.5, (k,)))} : {typ((k,), t)}")
        operands += ", %b"
        types += f", {typ((k,), t)}"
    lines.append(f"  %c = kiln.conv {operands} {{channels_last = true, group = {group} : i64, "
                 f"strides = array<i64: {stride}, {stride}>, dilations = array<i64: 1, 1>, "
                 f"pads = array<i64: {', '.join(map(str, pads))}>}} : ({types}) -> {typ(y_shape, t)} loc(\"conv\")")
    value = "%c"
    if residual:
        lines.append(f"  %st = kiln.cast %s : {typ(y_shape, 'f32')} to {typ(y_shape, t)}")
        lines.append(f"  %a = kiln.add %c, %st : ({typ(y_shape, t)}, {typ(y_shape, t)}) -> {typ(y_shape, t)}")
        value = "%a"
    if act == "relu":
        lines.append(f"  %r = kiln.relu {value} : {typ(y_shape, t)}")
    elif act == "clip":
        lines.append(f"  %lo = kiln.constant dense<0.0> : tensor<{t}>")
        lines.append(f"  %hi = kiln.constant dense<0.5> : tensor<{t}>")
        lines.append(f"  %r = kiln.clip {value}, %lo, %hi : ({typ(y_shape, t)}, tensor<{t}>, tensor<{t}>) -> {typ(y_shape, t)}")
    elif act == "hard-sigmoid":
        lines.append(f"  %r = kiln.hard_sigmoid {value} {{alpha = 0.1666666716 : f32, beta = 0.5 : f32}} : {typ(y_shape, t)}")
    elif act in ("sigmoid", "hard-swish"):
        lines.append(f"  %r = kiln.{act.replace('-', '_')} {value} : {typ(y_shape, t)}")
    if act != "none":
        value = "%r"
    lines.append(f"  %y = kiln.cast {value} : {typ(y_shape, t)} to {typ(y_shape, 'f32')}")
    lines.append(f"  return %y : {typ(y_shape, 'f32')}")
    lines.append("}")
    return "\n".join(lines) + "\n", x_shape, y_shape


# name, type, N, H, W, C, K, kernel, stride, pads (top, left, bottom, right), groups, bias,
# residual, activation
CASES = [
    ("resnet_tail_c13k24_bf16", "bf16", 2, 11, 11, 13, 24, 3, 1, (1, 1, 1, 1), 1, True, True, "relu"),
    ("pointwise_c64k72_hswish_f16", "f16", 1, 7, 9, 64, 72, 1, 1, (0, 0, 0, 0), 1, True, False, "hard-swish"),
    ("strided_asym_c24k40_relu6_bf16", "bf16", 3, 9, 10, 24, 40, 3, 2, (0, 0, 1, 1), 1, True, False, "clip"),
    ("se_gate_c72k18_hsigmoid_bf16", "bf16", 2, 1, 1, 72, 18, 1, 1, (0, 0, 0, 0), 1, True, False, "hard-sigmoid"),
    ("grouped4_c16k32_sigmoid_bf16", "bf16", 2, 6, 5, 16, 32, 3, 1, (1, 1, 1, 1), 4, False, True, "sigmoid"),
    ("depthwise_c72_k5_bf16", "bf16", 2, 9, 9, 72, 72, 5, 2, (2, 2, 2, 2), 72, True, False, "hard-swish"),
    ("stem_c3k16_7x7_tf32", "f32", 2, 20, 20, 3, 16, 7, 2, (3, 3, 3, 3), 1, True, False, "relu"),
    ("plain_c8k8_bf16", "bf16", 1, 5, 5, 8, 8, 3, 1, (1, 1, 1, 1), 1, False, False, "none"),
    # MobileNetV3-Large's features.3 and its stem, at their sizes.
    ("mnv3_expand_c24k72_56_relu_bf16", "bf16", 1, 56, 56, 24, 72, 1, 1, (0, 0, 0, 0), 1, True, False, "relu"),
    ("mnv3_depthwise_c72_56_bf16", "bf16", 1, 56, 56, 72, 72, 3, 1, (1, 1, 1, 1), 72, True, False, "relu"),
    ("mnv3_project_c72k24_56_residual_bf16", "bf16", 1, 56, 56, 72, 24, 1, 1, (0, 0, 0, 0), 1, True, True, "none"),
    ("mnv3_expand_c24k72_56_relu_tf32", "f32", 1, 56, 56, 24, 72, 1, 1, (0, 0, 0, 0), 1, True, False, "relu"),
    ("mnv3_stem_c3k16_224_hswish_bf16", "bf16", 1, 224, 224, 3, 16, 3, 2, (1, 1, 1, 1), 1, True, False, "hard-swish"),
]


def check_case(kiln, work, case, compile_only):
    name, t, group, c, residual, act = case[0], case[1], case[10], case[5], case[12], case[13]
    rng = np.random.default_rng(len(name))
    text, x_shape, y_shape = conv_module(case, rng)
    module = os.path.join(work, name + ".mlir")
    with open(module, "w") as f:
        f.write(text)
    precision = PRECISION[t]
    plan = os.path.join(work, name + ".kiln")
    proc = run([kiln, "compile", module, "-o", plan, "--precision", precision, "--quiet"])
    if proc.returncode:
        return "compile: " + proc.stderr.strip()
    steps = [line for line in run([kiln, "inspect", plan]).stdout.splitlines() if line.startswith("step ")]
    convs = [line for line in steps if " conv " in line]
    depthwise = group > 1 and group == c
    want_act = "none" if depthwise else act
    want_residual = "residual=-" if not residual else "residual=kiln.cast:"
    if (len(convs) != 1 or "channelsLast=1" not in convs[0] or f"activation={want_act} " not in convs[0]
            or want_residual not in convs[0]):
        return f"expected one channels-last conv step with activation={want_act} and {want_residual}:\n" + "\n".join(steps)
    if compile_only:
        return None
    inputs = {"x": rng.uniform(-2, 2, x_shape).astype(np.float32)}
    if residual:
        inputs["s"] = rng.uniform(-1, 1, y_shape).astype(np.float32)
    outputs = plan_cases.gpu_and_interpreter(kiln, work, name, plan, module, precision, inputs, "y")
    if isinstance(outputs, str):
        return outputs
    gpu, ref = outputs
    if gpu.shape != ref.shape or not np.isfinite(gpu).all():
        return f"GPU output {gpu.shape} (finite: {np.isfinite(gpu).all()}) against {ref.shape}"
    err = np.abs(gpu.astype(np.float64) - ref).max()
    bound = (8 if t == "f32" else 2) * ULP[t] * max(np.abs(ref).max(), 1e-3)
    if err > bound:
        return f"max |GPU - interpreter| {err:.3g} > {bound:.3g}"
    return None


if __name__ == "__main__":
    sys.exit(plan_cases.main("conv graphs", __doc__, CASES, check_case))
