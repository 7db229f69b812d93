#!/usr/bin/env python3
"""FP8 linear layers (`kiln compile --precision fp8`) on the GPU against the interpreter.

Each case is a small ONNX model of linear layers (MatMul by a constant weight, bias, ReLU,
residual adds), calibrated with `kiln calibrate` on random inputs. The compiled plan must run
every linear layer whose K and N are multiples of 16, except a first layer reading the network
input (kept bf16, with a remark saying so), as one cuBLASLt FP8 gemm step (E4M3 A and
B, B stored [N, K]: `transB=1`, the scales in alpha; E4M3 D scaled by `scaleD` when the next
layer is FP8 too) and keep the others in bf16 (compile-only
half, on any machine). On the GPU, `kiln run` must agree with `kiln eval --precision fp8` of the
same model (the interpreter evaluates the same quantized module exactly): the GPU's FP8
kernels accumulate in their own order (FAST_ACCUM), so a value near a rounding boundary of a
later quantization may round the other way; the bound is a small fraction of what quantization
itself moves the output (fp8 against fp32), so a wrong scale, a wrong weight layout or a
missing epilogue fails. Prints one line per case; exit 1 on any failure, 77 without a GPU.
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import plan_cases

# name, rows (input shape without the feature axis), layers: (K, N, bias, relu, residual), and
# whether a tanh comes first: without it the first layer reads the network input and stays
# bf16 (the fp8 pipeline keeps the first layer).
CASES = [
    ("mlp", (32,), [(64, 128, True, True, False), (128, 64, True, False, True), (64, 24, False, False, False)], False),
    ("rows-3d", (2, 48), [(96, 256, True, False, False), (256, 96, False, True, False)], True),
    ("single", (128,), [(256, 512, False, False, False)], True),
]


def make_model(case, rng, path):
    name, rows, layers, leading = case
    inits, nodes = [], []
    x, width = "x", layers[0][0]
    if leading:
        nodes.append(helper.make_node("Tanh", ["x"], ["t"], name="leading"))
        x = "t"
    for i, (k, n, bias, relu, residual) in enumerate(layers):
        inits.append(numpy_helper.from_array((rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32), f"w{i}"))
        nodes.append(helper.make_node("MatMul", [x, f"w{i}"], [f"mm{i}"], name=f"fc{i}"))
        x = f"mm{i}"
        if bias:
            inits.append(numpy_helper.from_array((rng.standard_normal(n) * 0.1).astype(np.float32), f"b{i}"))
            nodes.append(helper.make_node("Add", [x, f"b{i}"], [f"bias{i}"], name=f"fc{i}_bias"))
            x = f"bias{i}"
        if residual:
            nodes.append(helper.make_node("Add", [x, "x"], [f"res{i}"], name=f"residual{i}"))
            x = f"res{i}"
        if relu:
            nodes.append(helper.make_node("Relu", [x], [f"relu{i}"], name=f"relu{i}"))
            x = f"relu{i}"
        width = n
    nodes.append(helper.make_node("Identity", [x], ["y"], name="out"))
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [*rows, layers[0][0]])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [*rows, width])], inits)
    plan_cases.save_model(graph, path)


def check_case(kiln, work, case, compile_only):
    name, rows, layers, leading = case
    rng = np.random.default_rng(len(name))
    model = os.path.join(work, name + ".onnx")
    make_model(case, rng, model)
    shape = (*rows, layers[0][0])
    plan, table, remarks, steps, problem = plan_cases.compile_8bit(kiln, work, name, model, shape, rng, "fp8")
    if problem:
        return problem
    gemms = [line for line in steps if " gemm " in line]
    def is_fp8(i):
        return layers[i][0] % 16 == 0 and layers[i][1] % 16 == 0 and (i > 0 or leading)

    for i, (k, n, *_rest) in enumerate(layers):
        step = [line for line in gemms if f'"fc{i}"' in line.split(" nodes=")[0]]
        fp8 = is_fp8(i)
        # Feeding another FP8 layer, its result is that layer's quantization: an E4M3 D scaled by scaleD.
        fp8_out = fp8 and i + 1 < len(layers) and is_fp8(i + 1)
        want = [f"k={k} ", f"n={n} "] + (["transB=1", ":f8e4m3fn[", "d=fc"] if fp8 else ["transB=0", ":bf16["])
        want += [f"d=fc{i}:f8e4m3fn[", "scaleD=fc"] if fp8_out else [f"d=fc{i}:bf16[", "scaleD=-"]
        if len(step) != 1 or not all(w in step[0] for w in want) or (not fp8 and "f8e4m3fn" in step[0]):
            return f"fc{i} (K={k}, N={n}) should be one {'FP8' if fp8 else 'bf16'} gemm step:\n" + "\n".join(steps)
        why = ("not quantized: it reads the network input" if i == 0 and not leading else
               f"node 'fc{i}' (MatMul): not quantized, stays bf16: K = {k} or N = {n}")
        if not fp8 and why not in remarks:
            return f"no remark says why fc{i} stays bf16 ({why}):\n{remarks}"
    if compile_only:
        return None
    x = rng.standard_normal(shape).astype(np.float32)  # held out: not a calibration input
    return plan_cases.check_8bit_plan(kiln, work, name, plan, model, "fp8", table, x)


if __name__ == "__main__":
    sys.exit(plan_cases.main("fp8 gemms", __doc__, CASES, check_case))
