#!/usr/bin/env python3
"""Writes a ResNet-50 (torchvision's layout: bottleneck blocks 3-4-6-3, BN after every conv)
with random weights as ONNX, without torch, so the interpreter's speed can be measured on
machines that have no torch (`bench/interpreter_resnet50.sh`)."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(0)
nodes, inits = [], []
counter = [0]


def name(prefix):
    counter[0] += 1
    return f"{prefix}{counter[0]}"


def conv_bn(x, cin, cout, k, stride, relu=True):
    w, y = name("w"), name("conv")
    inits.append(numpy_helper.from_array(
        (rng.standard_normal((cout, cin, k, k)) * np.sqrt(2.0 / (cin * k * k))).astype(np.float32), w))
    nodes.append(helper.make_node("Conv", [x, w], [y], strides=[stride, stride], pads=[k // 2] * 4))
    params = [name(p) for p in ("scale", "bias", "mean", "var")]
    for p, v in zip(params, (np.ones(cout), np.zeros(cout), rng.standard_normal(cout) * 0.1,
                             np.abs(rng.standard_normal(cout)) + 0.5)):
        inits.append(numpy_helper.from_array(v.astype(np.float32), p))
    b = name("bn")
    nodes.append(helper.make_node("BatchNormalization", [y] + params, [b]))
    if not relu:
        return b
    r = name("relu")
    nodes.append(helper.make_node("Relu", [b], [r]))
    return r


def bottleneck(x, cin, width, stride):
    out = width * 4
    y = conv_bn(x, cin, width, 1, 1)
    y = conv_bn(y, width, width, 3, stride)
    y = conv_bn(y, width, out, 1, 1, relu=False)
    shortcut = conv_bn(x, cin, out, 1, stride, relu=False) if stride != 1 or cin != out else x
    s, r = name("add"), name("relu")
    nodes.append(helper.make_node("Add", [y, shortcut], [s]))
    nodes.append(helper.make_node("Relu", [s], [r]))
    return r, out


x = conv_bn("input", 3, 64, 7, 2)
p = name("pool")
nodes.append(helper.make_node("MaxPool", [x], [p], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))
x, c = p, 64
for width, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
    for b in range(blocks):
        x, c = bottleneck(x, c, width, stride if b == 0 else 1)
nodes.append(helper.make_node("GlobalAveragePool", [x], ["gap"]))
nodes.append(helper.make_node("Flatten", ["gap"], ["flat"]))
inits.append(numpy_helper.from_array((rng.standard_normal((1000, 2048)) * 0.01).astype(np.float32), "fc.w"))
inits.append(numpy_helper.from_array(np.zeros(1000, np.float32), "fc.b"))
nodes.append(helper.make_node("Gemm", ["flat", "fc.w", "fc.b"], ["logits"], transB=1))
graph = helper.make_graph(nodes, "resnet50", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 224, 224])],
                          [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 1000])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.save(model, sys.argv[1] if len(sys.argv) > 1 else "resnet50.onnx")
