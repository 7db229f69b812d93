#!/usr/bin/env python3
"""8-bit convolutions (`kiln compile --precision int8`, or fp8) on the GPU against the interpreter.

Each case is a small ONNX model of convolutions (bias, ReLU, a residual add), calibrated with
`kiln calibrate` on random inputs. The compiled plan must run every convolution of one group
whose input channels are a multiple of 32 and output channels of 16 as one 8-bit cuDNN conv
step (int8 x and w, or E4M3 ones with --precision fp8; `scale` per output channel; an 8-bit y
with `yScale` when its only reader is the next 8-bit convolution) and keep the others bf16,
with a remark saying why (compile-only half, on any machine). On the GPU, `kiln run` must agree
with `kiln eval --precision int8` (or fp8) of the same model (the interpreter evaluates the same
quantized module exactly): cuDNN sums int8 products exactly (E4M3 ones in f32) but scales and
rounds in its own f32 order, so a value near a rounding boundary of the next quantization may
round the other way; the bound is a small fraction of what quantization itself moves the output
(8-bit against fp32), so a wrong scale, a wrong weight layout or a missing epilogue fails. A
failing case whose last conv adds a residual also says what the GPU's output holds of the conv
and the residual (a least-squares fit against their fp32 values), which tells a lost residual
from a lost conv or a wrong scale. Prints one line per case; exit 1 on any failure, 77 without
a GPU.
"""
import os
import re
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import plan_cases

# name, input [N, C, H, W], convs: (name, input, C, K, kernel, stride, bias, relu, residual
# value or None), which convs run in 8 bits: their output (i8 or bf16; "+i8": both, a value read
# quantized and as it is; i8 stands for the plan's 8-bit type, f8e4m3fn in fp8) and "residual"
# for a step adding an 8-bit residual (a residual add
# joins the group of the first conv whose epilogue reaches it), and optionally the convs kept in bf16 by
# --keep-unquantized and the bf16 convs' outputs where not bf16 (a bf16 conv before an INT8 one
# writes its input: i8), both with their outputs. The residual add after b and d joins the group of d,
# the first conv whose epilogue reaches it. A Tanh comes first, as in a network whose first
# layer computes the convs' input. An entry (name, input, "MaxPool") is a 3x3 stride-2 max pool
# (pads 1): it must run as one pool group writing the plan's 8-bit type.
CASES = [
    # First, as the newest form a short GPU call should reach: the stem, its max pool (3x3,
    # stride 2, as ResNet's) and an 8-bit conv: the pool stays bf16 and takes the quantization
    # of its result (a `pool` group: one kernel writing the 8-bit input of the conv after it, no
    # quantize kernel of its own).
    ("stem_max_pool", (2, 3, 32, 32), [("s", "t", 3, 64, 7, 2, True, True, None), ("p", "s", "MaxPool"),
                                       ("a", "p", 64, 32, 3, 1, True, True, None)],
     {"a": "bf16"}),
    ("bottleneck", (2, 32, 12, 12),
     [("a", "t", 32, 32, 3, 1, True, True, None), ("d", "t", 32, 64, 1, 1, False, False, None),
      ("b", "a", 32, 64, 1, 1, True, True, "d")],
     {"a": "i8", "b": "i8", "d": "bf16"}),
    # The same with a bias on d: the graph form of ResNet-50's last conv (bias, bf16 output).
    # A conv writing bf16 reads its residual dequantized (bf16): with the int8 residual scaled
    # in its graph, both cases and two_blocks computed wrong values on the H100 (2026-12-07).
    ("bottleneck_bias", (2, 32, 12, 12),
     [("a", "t", 32, 32, 3, 1, True, True, None), ("d", "t", 32, 64, 1, 1, True, False, None),
      ("b", "a", 32, 64, 1, 1, True, True, "d")],
     {"a": "i8", "b": "i8", "d": "bf16"}),
    # d's value is read by e and by e's residual add, both through its quantization: d writes
    # int8 only, and e's graph reads it twice.
    ("two_blocks", (2, 32, 10, 10),
     [("a", "t", 32, 32, 3, 1, True, True, None), ("d", "t", 32, 64, 1, 1, False, False, None),
      ("b", "a", 32, 64, 1, 1, True, True, "d"), ("e", "b", 64, 64, 3, 1, True, True, "b")],
     {"a": "i8", "b": "i8", "d": "i8 residual", "e": "bf16"}),
    # A conv over 16 channels like ResNet-50's stem after kiln-space-to-depth-convs (which has
    # 4x4 taps) stays bf16 (cuDNN's INT8 engines for 16 channels are slower than bf16's) and
    # writes the int8 input of the INT8 conv after it.
    ("stem_5x5_c16", (2, 16, 20, 20), [("s", "t", 16, 64, 5, 1, True, True, None), ("a", "s", 64, 32, 3, 1, True, True, None)],
     {"a": "bf16"}, {}, {"s": "i8"}),
    # ResNet's stem: a 7x7 stride-2 conv over 3 channels becomes 4x4 taps over 2x2 blocks
    # zero-padded to 16 channels (kiln-space-to-depth-convs). It stays bf16 and writes the int8
    # input of the INT8 conv after it: widened to 32 channels the stem's INT8 graph took 2.65 ms
    # against 0.98 in bf16 (ResNet-50 b256, H100, 2026-12-07), so no plan widens it.
    ("stem_7x7_s2", (2, 3, 32, 32), [("s", "t", 3, 64, 7, 2, True, True, None), ("a", "s", 64, 32, 3, 1, True, True, None)],
     {"a": "bf16"}, {}, {"s": "i8"}),
    ("strided", (1, 64, 15, 15), [("s", "t", 64, 32, 3, 2, True, True, None)], {"s": "bf16"}),
    ("odd_channels", (1, 24, 8, 8), [("o", "t", 24, 32, 3, 1, True, False, None)], {}),
    # A conv kept in bf16 by --keep-unquantized: its graph writes the next INT8 conv's input.
    ("kept", (2, 32, 12, 12), [("s", "t", 32, 32, 5, 1, True, True, None), ("a", "s", 32, 32, 3, 1, True, True, None)],
     {"a": "bf16"}, {"s": "i8"}),
]


def make_model(case, rng, path):
    name, shape, convs = case[:3]
    n, c, h, w = shape
    inits, nodes = [], [helper.make_node("Tanh", ["x"], ["t"], name="leading")]
    sizes = {"t": (h, w)}
    for entry in convs:
        if entry[2] == "MaxPool":
            pool, src = entry[:2]
            nodes.append(helper.make_node("MaxPool", [src], [pool], name=pool, kernel_shape=[3, 3], strides=[2, 2],
                                          pads=[1] * 4))
            sizes[pool] = tuple((size + 2 - 3) // 2 + 1 for size in sizes[src])
            continue
        conv, src, ci, k, r, stride, bias, relu, residual = entry
        inits.append(numpy_helper.from_array((rng.standard_normal((k, ci, r, r)) / np.sqrt(ci * r * r)).astype(np.float32),
                                             f"{conv}.w"))
        inputs = [src, f"{conv}.w"]
        if bias:
            inits.append(numpy_helper.from_array((rng.standard_normal(k) * 0.1).astype(np.float32), f"{conv}.b"))
            inputs.append(f"{conv}.b")
        pad = r // 2
        nodes.append(helper.make_node("Conv", inputs, [f"{conv}.c"], name=conv, pads=[pad] * 4, strides=[stride] * 2))
        value = f"{conv}.c"
        if residual:
            nodes.append(helper.make_node("Add", [value, residual], [f"{conv}.s"], name=f"{conv}_add"))
            value = f"{conv}.s"
        if relu:
            nodes.append(helper.make_node("Relu", [value], [conv], name=f"{conv}_relu"))
        else:
            nodes.append(helper.make_node("Identity", [value], [conv], name=f"{conv}_out"))
        sh, sw = sizes[src]
        sizes[conv] = ((sh + 2 * pad - r) // stride + 1, (sw + 2 * pad - r) // stride + 1)
    last = convs[-1][0]
    k = [cv for cv in convs if cv[0] == last][0][3]
    nodes.append(helper.make_node("Identity", [last], ["y"], name="out"))
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n, k, *sizes[last]])], inits)
    plan_cases.save_model(graph, path)


def check_case(kiln, work, case, compile_only):
    name, shape, convs, quantized = case[:4]
    kept = case[4] if len(case) > 4 else {}
    outputs = {**kept, **(case[5] if len(case) > 5 else {})}
    flags = ["--keep-unquantized", ",".join(kept)] if kept else []
    precision = plan_cases.PRECISION[0]
    q = "i8" if precision == "int8" else "f8e4m3fn"  # the plan's 8-bit type, as `kiln inspect` names it
    rng = np.random.default_rng(len(name))
    model = os.path.join(work, name + ".onnx")
    make_model(case, rng, model)
    plan, table, remarks, steps, problem = plan_cases.compile_8bit(kiln, work, name, model, shape, rng, precision,
                                                                   flags)
    if problem:
        return problem
    for pool in [entry[0] for entry in convs if entry[2] == "MaxPool"]:
        step = [line for line in steps if 'max_pool"' in line]
        if len(step) != 1 or f",{pool}:{q}[" not in step[0] or " op=\"kiln.quantize\"" in "\n".join(steps):
            return f"max pool {pool} should be one pool group step writing {q}, with no quantize step:\n" + \
                "\n".join(steps)
    for conv, _src, ci, k, *_rest in [entry for entry in convs if entry[2] != "MaxPool"]:
        # The step of a conv is the one reading its weight (a residual add may join another's).
        step = [line for line in steps if " conv " in line and f" w={conv}:" in line]
        if conv in quantized:
            output, *more = quantized[conv].split()
            y = output.split("+")[0].replace("i8", q)
            want = [f"w={conv}:{q}[", f"y={conv}:{y}[", f"scale={conv}.scale:f32[{k}]",
                    f"yScale={conv}.y_scale:f32[1]" if "i8" in output else "yScale=-",
                    f"yQuantized={conv}#quantized:{q}[" if "+" in output else "yQuantized=-",
                    f"residualScale={conv}.residual_scale:f32[1]" if "residual" in more else "residualScale=-"]

        else:
            y = outputs.get(conv, "bf16").replace("i8", q)
            want = [f"w={conv}:bf16[", f"y={conv}:{y}[", f"scale=- yScale={conv}.y_scale:f32[1]" if y == q else
                    "scale=- yScale=-"]
        eight_bit_x = len(step) == 1 and re.search(rf" x=\S*:{q}\[", step[0])
        eight_bit_residual = len(step) == 1 and re.search(rf" residual=\S*:{q}\[", step[0])
        wants_residual = conv in quantized and "residual" in quantized[conv].split()[1:]
        if len(step) != 1 or not all(w in step[0] for w in want) or (conv in quantized) != bool(eight_bit_x) or \
                wants_residual != bool(eight_bit_residual):
            return f"conv {conv} should be one {precision.upper() if conv in quantized else 'bf16'} conv step with " \
                f"{want} and {'a ' + q if conv in quantized else 'a bf16'} x:\n" + \
                "\n".join(steps)
        why = f"node '{conv}' (Conv): not quantized: keep={conv}" if conv in kept else \
            f"node '{conv}' (Conv): not quantized, stays bf16"
        if conv not in quantized and why not in remarks:
            return f"no remark says why {conv} stays bf16 ({why}):\n{remarks}"
    if compile_only:
        return None
    x = rng.standard_normal(shape).astype(np.float32)  # held out: not a calibration input
    problem = plan_cases.check_8bit_plan(kiln, work, name, plan, model, precision, table, x, flags)
    if problem and convs[-1][8]:
        problem += "; " + residual_fit(kiln, work, name, model, convs[-1])
    return problem


def residual_fit(kiln, work, name, model, last):
    """What the GPU's output holds of the last conv's terms, when it adds a residual: the least
    squares of the output, where it and the fp32 sum are positive (past the ReLU), against the
    fp32 conv (its bias included) and the residual, from `kiln eval --dump`. Right is about 1 and 1
    (quantization moves it a little); a lost residual, a lost conv or a wrong scale shows as the
    coefficient that is not."""
    conv, residual = last[0], last[8]
    dump = os.path.join(work, name + ".fp32-dump")
    proc = plan_cases.run([kiln, "eval", model, "--input", f"x={os.path.join(work, name + '.x.npy')}", "--dump", dump,
                           "--quiet"])
    if proc.returncode:
        return "no fit (eval --dump: " + proc.stderr.strip()[-200:] + ")"
    import json
    files = {v["name"]: v["file"] for v in json.load(open(os.path.join(dump, "manifest.json")))["values"]}
    # A conv without ReLU ends in an Identity, which import drops: its value is the conv's.
    residual = residual if residual in files else residual + ".c"
    if f"{conv}.c" not in files or residual not in files:
        return f"no fit: the dump lacks {conv}.c or {residual}"
    c = np.load(os.path.join(dump, files[f"{conv}.c"])).astype(np.float64)
    r = np.load(os.path.join(dump, files[residual])).astype(np.float64)
    gpu = np.load(os.path.join(work, name + ".gpu", "y.npy")).astype(np.float64)
    mask = (gpu > 0.05 * np.abs(gpu).max()) & (c + r > 0)
    if mask.sum() < 3:
        return "no fit: too few positive outputs"
    (a, b), *_ = np.linalg.lstsq(np.stack([c[mask], r[mask]], 1), gpu[mask], rcond=None)
    return f"the GPU output fits {a:.3f} * conv + {b:.3f} * residual ({conv}.c, {residual}) where positive"


if __name__ == "__main__":
    sys.exit(plan_cases.main("convs", __doc__, CASES, check_case, precisions=("int8", "fp8")))
