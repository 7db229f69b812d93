#!/usr/bin/env python3
"""INT8 1x1 convolutions as kernels of our own (`kiln compile --conv-kernels=generated`) on the GPU.

Each case is a ResNet bottleneck's tail as a small ONNX model: after a Tanh (the network's
earlier layers), a 1x1 "downsample" conv d and a 1x1 expanding conv b, added and ReLU'd,
then a 1x1 conv e back to 64 channels (it reads the block's int8 output; K = 64 keeps it a
cuDNN graph). Calibrated with `kiln calibrate` and compiled in int8 with
--conv-kernels=generated, the plan must run d and b as two generated kernels (codegen/kernels/
PointwiseConvInt8.cpp), one adding the other's int8 output as its residual (the add joins the
group of whichever conv's epilogue reaches it), and e as a cuDNN conv step (compile-only half,
on any machine). On the
GPU, `kiln run` must agree with `kiln eval --precision int8` of the same model as closely as the
cuDNN graphs must (plan_cases.check_8bit_plan). The sizes make the kernel's corners run: more
tiles of 64 pixels than resident blocks (a block takes several, the next one's loads in flight),
a last tile of 41 pixels, K = 512 (two channel slices), C = 256 without bias.
Prints one line per case; exit 1 on any failure, 77 without a GPU.
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import plan_cases

# name, input [N, C, H, W], K of d and b, whether d and b have a bias.
CASES = [
    ("layer1_many_tiles", (6, 64, 56, 56), 256, True),  # 18816 pixels: 294 tiles over 264 blocks
    ("layer2_tail_tile", (1, 128, 13, 13), 512, True),  # 169 pixels: 2 tiles and one of 41
    ("c256_no_bias", (2, 256, 7, 7), 256, False),
]


def make_model(case, rng, path):
    name, (n, c, h, w), k, bias = case
    inits = []

    def conv(node, src, ci, co, with_bias):
        inits.append(numpy_helper.from_array((rng.standard_normal((co, ci, 1, 1)) / np.sqrt(ci)).astype(np.float32),
                                             f"{node}.w"))
        inputs = [src, f"{node}.w"]
        if with_bias:
            inits.append(numpy_helper.from_array((rng.standard_normal(co) * 0.1).astype(np.float32), f"{node}.b"))
            inputs.append(f"{node}.b")
        return helper.make_node("Conv", inputs, [node], name=node)

    nodes = [helper.make_node("Tanh", ["x"], ["t"], name="leading"),
             conv("d", "t", c, k, bias), conv("b", "t", c, k, bias),
             helper.make_node("Add", ["b", "d"], ["s"], name="b_add"),
             helper.make_node("Relu", ["s"], ["r"], name="b_relu"),
             conv("e", "r", k, 64, True)]
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n, c, h, w])],
                              [helper.make_tensor_value_info("e", TensorProto.FLOAT, [n, 64, h, w])], inits)
    nodes.append(helper.make_node("Identity", ["e"], ["y"], name="out"))
    graph.node.append(nodes[-1])
    graph.output[0].name = "y"
    plan_cases.save_model(graph, path)


def check_case(kiln, work, case, compile_only):
    name, shape = case[:2]
    rng = np.random.default_rng(len(name))
    model = os.path.join(work, name + ".onnx")
    make_model(case, rng, model)
    plan, table, _remarks, steps, problem = plan_cases.compile_8bit(kiln, work, name, model, shape, rng, "int8",
                                                                    ["--conv-kernels=generated"])
    if problem:
        return problem
    # d and b as two kernel steps, one of them adding the other's int8 output (the add joins
    # the group of whichever conv's epilogue reaches it first) with its scale.
    kernels = [line for line in steps if 'conv1x1_int8"' in line]
    with_residual = [line for line in kernels if "residual_scale:f32[1]" in line]
    if len(kernels) != 2 or len(with_residual) != 1:
        return "d and b should run as two generated INT8 1x1 kernels, one adding an int8 residual:\n" + \
            "\n".join(steps)
    if not [line for line in steps if " conv " in line and " w=e:i8[" in line]:
        return "e (K = 64) should stay an INT8 cuDNN conv step:\n" + "\n".join(steps)
    if compile_only:
        return None
    x = rng.standard_normal(shape).astype(np.float32)  # held out: not a calibration input
    return plan_cases.check_8bit_plan(kiln, work, name, plan, model, "int8", table, x)


if __name__ == "__main__":
    sys.exit(plan_cases.main("generated conv kernels", __doc__, CASES, check_case))
