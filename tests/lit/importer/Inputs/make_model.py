#!/usr/bin/env python3
"""Builds small ONNX models for the importer lit tests.

    make_model.py <name> <output.onnx>             write model <name> to <output.onnx>
    make_model.py --out-dir <dir> <name>...        write each model to <dir>/<name>.onnx
    make_model.py --list                           print every model name

The --out-dir form exists because `import onnx` costs about a second: each test file builds all
its models with one Python process.

Every model is a few nodes built with onnx.helper / numpy_helper; graph outputs declare only
their element type (no shape), so the tests pin the shapes the importer computes. The models
are not run through onnx.checker: the negative tests need models the checker would reject.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
F16 = TensorProto.FLOAT16
I8 = TensorProto.INT8
U8 = TensorProto.UINT8
I32 = TensorProto.INT32
I64 = TensorProto.INT64
B = TensorProto.BOOL

INT64_MAX = np.iinfo(np.int64).max
INT64_MIN = np.iinfo(np.int64).min

MODELS = {}


def model_fn(fn):
    assert fn.__name__ not in MODELS, "two models named " + fn.__name__
    MODELS[fn.__name__] = fn
    return fn


def vi(name, shape, elem=F):
    return helper.make_tensor_value_info(name, elem, shape)


def out(name, elem=F):
    """A graph output with an element type and no shape."""
    return helper.make_tensor_value_info(name, elem, None)


def init(name, values, dtype=None):
    return numpy_helper.from_array(np.array(values, dtype=dtype), name)


def node(op, inputs, outputs, name=None, **attrs):
    return helper.make_node(op, inputs, outputs, name=name or op.lower(), **attrs)


def model(nodes, inputs, outputs, inits=(), opset=17, value_info=(), extra_opsets=()):
    graph = helper.make_graph(list(nodes), "g", list(inputs), list(outputs), list(inits),
                              value_info=list(value_info))
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    m = helper.make_model(graph, opset_imports=opsets)
    m.ir_version = 8
    return m


def one(op, in_shape, attrs=None, inits=(), extra_inputs=(), opset=17, elem=F, out_elem=None,
        outputs=("y",)):
    """One node `op` on graph input x (shape `in_shape`) plus `extra_inputs` names."""
    n = node(op, ["x", *extra_inputs], list(outputs), **(attrs or {}))
    outs = [out(o, out_elem if out_elem is not None else elem) for o in outputs if o]
    return model([n], [vi("x", in_shape, elem)], outs, inits, opset)


# ---------------------------------------------------------------------------------------------
# Elementwise
# ---------------------------------------------------------------------------------------------

@model_fn
def add_broadcast():
    return model([node("Add", ["a", "b"], ["y"])], [vi("a", [2, 1, 4]), vi("b", [3, 1])], [out("y")])


@model_fn
def clip_missing_min():
    # Clip-13 with min left out (empty name) and max a shape-[1] initializer.
    return one("Clip", [2, 3], inits=[init("hi", [6.0], np.float32)], extra_inputs=["", "hi"],
               opset=13)


@model_fn
def clip_int_no_bounds():
    return one("Clip", [4], opset=13, elem=I32)


@model_fn
def clip_opset6_attrs():
    return one("Clip", [2, 3], attrs={"min": -1.0, "max": 1.0}, opset=6)


@model_fn
def pow_int_exponent():
    return one("Pow", [2, 3], inits=[init("e", [2, 3, 4], np.int64)], extra_inputs=["e"], opset=15)


@model_fn
def sum3():
    return model([node("Sum", ["a", "b", "c"], ["y"])],
                 [vi("a", [2, 3]), vi("b", [3]), vi("c", [1, 1])], [out("y")])


@model_fn
def mean3():
    return model([node("Mean", ["a", "b", "c"], ["y"])],
                 [vi("a", [2, 3]), vi("b", [2, 3]), vi("c", [2, 3])], [out("y")])


@model_fn
def max2():
    return model([node("Max", ["a", "b"], ["y"])], [vi("a", [4, 1]), vi("b", [5])], [out("y")])


@model_fn
def cast_f16():
    return one("Cast", [2, 3], attrs={"to": F16}, out_elem=F16)


@model_fn
def castlike_i32():
    return model([node("CastLike", ["x", "t"], ["y"])], [vi("x", [5]), vi("t", [1], I32)],
                 [out("y", I32)], opset=15)


@model_fn
def where_broadcast():
    return model([node("Where", ["c", "a", "b"], ["y"])],
                 [vi("c", [2, 1], B), vi("a", [1, 3]), vi("b", [])], [out("y")])


@model_fn
def unary_attrs():
    nodes = [node("LeakyRelu", ["x"], ["l"]),
             node("Elu", ["l"], ["e"], alpha=0.5),
             node("HardSigmoid", ["e"], ["h"], alpha=0.25),
             node("Gelu", ["h"], ["y"], approximate="tanh")]
    return model(nodes, [vi("x", [2, 3])], [out("y")], opset=20)


@model_fn
def compare_not():
    nodes = [node("LessOrEqual", ["a", "b"], ["le"]), node("Not", ["le"], ["y"])]
    return model(nodes, [vi("a", [2, 3]), vi("b", [3])], [out("y", B)])


# ---------------------------------------------------------------------------------------------
# Conv, pool, norm
# ---------------------------------------------------------------------------------------------

def conv_model(in_shape, w_shape, opset=17, bias=False, op="Conv", **attrs):
    w = init("w", np.ones(w_shape, np.float32))
    inits = [w]
    inputs = ["x", "w"]
    if bias:
        c_out = w_shape[0] if op == "Conv" else w_shape[1] * attrs.get("group", 1)
        inits.append(init("b", np.zeros([c_out], np.float32)))
        inputs.append("b")
    return model([node(op, inputs, ["y"], **attrs)], [vi("x", in_shape)], [out("y")], inits, opset)


@model_fn
def conv_same_upper():
    # H: out 4, total pad 1 -> (0, 1); W: out 4, total pad 2 -> (1, 1).
    return conv_model([1, 3, 8, 7], [4, 3, 3, 3], auto_pad="SAME_UPPER", strides=[2, 2])


@model_fn
def conv_same_lower():
    return conv_model([1, 3, 8, 7], [4, 3, 3, 3], auto_pad="SAME_LOWER", strides=[2, 2])


@model_fn
def conv_valid_grouped():
    return conv_model([1, 2, 6, 6], [2, 1, 3, 3], auto_pad="VALID", group=2, bias=True)


@model_fn
def conv_1d_dilated():
    return conv_model([1, 2, 10], [3, 2, 3], dilations=[2], pads=[1, 0])


@model_fn
def conv_transpose_output_shape():
    # Total pad = 2*(3-1) + 0 + 3 - 5 = 2 per spatial axis: (1, 1); the pads attribute is ignored.
    return conv_model([1, 2, 3, 3], [2, 4, 3, 3], op="ConvTranspose", strides=[2, 2],
                      output_shape=[5, 5], pads=[3, 3, 3, 3])


@model_fn
def conv_transpose_output_shape_same_upper():
    # Total pad 2*(3-1) + 3 - 6 = 1 on H (odd: the extra at the end), 2*(4-1) + 3 - 8 = 1 on W.
    return conv_model([1, 2, 3, 4], [2, 4, 3, 3], op="ConvTranspose", strides=[2, 2],
                      output_shape=[6, 8], auto_pad="SAME_UPPER")


@model_fn
def conv_transpose_output_shape_same_lower():
    return conv_model([1, 2, 3, 4], [2, 4, 3, 3], op="ConvTranspose", strides=[2, 2],
                      output_shape=[6, 8], auto_pad="SAME_LOWER")


@model_fn
def conv_transpose_output_shape_big():
    # output_shape larger than the full transposed conv (7): total -1 -> output_padding 1.
    return conv_model([1, 2, 3, 3], [2, 4, 3, 3], op="ConvTranspose", strides=[2, 2],
                      output_shape=[8, 8])


@model_fn
def conv_transpose_same_upper():
    return conv_model([1, 2, 3, 3], [2, 4, 3, 3], op="ConvTranspose", strides=[2, 2],
                      auto_pad="SAME_UPPER")


@model_fn
def conv_transpose_pads():
    return conv_model([1, 4, 5, 5], [4, 1, 4, 4], op="ConvTranspose", strides=[2, 2],
                      pads=[1, 1, 1, 1], output_padding=[1, 0], group=4, bias=True)


@model_fn
def max_pool_ceil():
    # 8 -> floor((8-3)/2)+1 = 3 without ceil_mode, 4 with it.
    return one("MaxPool", [1, 1, 8, 8], attrs={"kernel_shape": [3, 3], "strides": [2, 2],
                                               "ceil_mode": 1})


@model_fn
def max_pool_same_upper():
    return one("MaxPool", [1, 1, 5, 5], attrs={"kernel_shape": [2, 2], "auto_pad": "SAME_UPPER"})


@model_fn
def avg_pool_count_include_pad():
    return one("AveragePool", [1, 2, 4, 4], attrs={"kernel_shape": [3, 3], "pads": [1, 1, 1, 1],
                                                   "count_include_pad": 1})


@model_fn
def avg_pool_defaults():
    return one("AveragePool", [1, 2, 4, 4], attrs={"kernel_shape": [2, 2]})


@model_fn
def global_pools():
    nodes = [node("GlobalAveragePool", ["x"], ["a"]), node("GlobalMaxPool", ["x"], ["m"])]
    return model(nodes, [vi("x", [2, 3, 5, 7])], [out("a"), out("m")])


@model_fn
def batch_norm():
    c = 3
    inits = [init(n, np.ones([c], np.float32)) for n in ("s", "bias", "mean", "var")]
    return one("BatchNormalization", [1, c, 4, 4], attrs={"epsilon": 1e-3}, inits=inits,
               extra_inputs=["s", "bias", "mean", "var"], opset=15)


@model_fn
def instance_norm():
    inits = [init("s", np.ones([3], np.float32)), init("b", np.zeros([3], np.float32))]
    return one("InstanceNormalization", [2, 3, 4], inits=inits, extra_inputs=["s", "b"])


@model_fn
def layer_norm_stats():
    inits = [init("s", np.ones([3, 4], np.float32))]
    n = node("LayerNormalization", ["x", "s"], ["y", "mean", "inv_std"], axis=-2, epsilon=1e-6)
    return model([n], [vi("x", [2, 3, 4])], [out("y"), out("mean"), out("inv_std")], inits)


@model_fn
def layer_norm_plain():
    inits = [init("s", np.ones([4], np.float32)), init("b", np.zeros([4], np.float32))]
    return one("LayerNormalization", [2, 3, 4], inits=inits, extra_inputs=["s", "b"])


@model_fn
def group_norm_opset18():
    # 4 channels, 2 groups: scale/bias per group (opset 18) become per channel.
    inits = [init("s", [1.0, 2.0], np.float32), init("b", [3.0, 4.0], np.float32)]
    return one("GroupNormalization", [1, 4, 3, 3], attrs={"num_groups": 2}, inits=inits,
               extra_inputs=["s", "b"], opset=18)


# ---------------------------------------------------------------------------------------------
# MatMul, Gemm, Einsum, Softmax
# ---------------------------------------------------------------------------------------------

@model_fn
def gemm_trans_b():
    inits = [init("w", np.ones([5, 4], np.float32)), init("c", np.zeros([5], np.float32))]
    return one("Gemm", [3, 4], attrs={"transB": 1, "alpha": 0.5}, inits=inits,
               extra_inputs=["w", "c"], opset=13)


@model_fn
def gemm_trans_a_no_c():
    return model([node("Gemm", ["a", "b"], ["y"], transA=1, beta=0.0)],
                 [vi("a", [4, 3]), vi("b", [4, 6])], [out("y")], opset=13)


@model_fn
def matmul_batched():
    return model([node("MatMul", ["a", "b"], ["y"])], [vi("a", [2, 1, 3, 4]), vi("b", [5, 4, 6])],
                 [out("y")])


@model_fn
def matmul_vector():
    return model([node("MatMul", ["a", "b"], ["y"])], [vi("a", [4]), vi("b", [2, 4, 6])],
                 [out("y")])


@model_fn
def softmax_opset11():
    return one("Softmax", [2, 3, 4], opset=11)


@model_fn
def softmax_opset11_last_axis():
    return one("LogSoftmax", [2, 3, 4], attrs={"axis": 2}, opset=11)


@model_fn
def softmax_opset13():
    return one("Softmax", [2, 3, 4], attrs={"axis": 1}, opset=13)


@model_fn
def einsum_bmm():
    return model([node("Einsum", ["a", "b"], ["y"], equation="bij,bjk->bik")],
                 [vi("a", [2, 3, 4]), vi("b", [2, 4, 5])], [out("y")])


# ---------------------------------------------------------------------------------------------
# Data movement
# ---------------------------------------------------------------------------------------------

@model_fn
def reshape_zero_minus_one():
    return one("Reshape", [2, 3, 4], inits=[init("s", [0, -1], np.int64)], extra_inputs=["s"])


@model_fn
def reshape_allowzero():
    # allowzero=1: the 0 is a real zero-sized dim.
    return one("Reshape", [0, 3], attrs={"allowzero": 1}, inits=[init("s", [3, 0], np.int64)],
               extra_inputs=["s"], opset=14)


@model_fn
def reshape_runtime_shape_declared():
    # The shape is a graph input; the output's type comes from value_info.
    n = node("Reshape", ["x", "s"], ["r"])
    return model([n, node("Relu", ["r"], ["y"])], [vi("x", [2, 6]), vi("s", [2], I64)], [out("y")],
                 value_info=[vi("r", [3, 4])])


@model_fn
def squeeze_unsqueeze_inputs():
    nodes = [node("Squeeze", ["x", "sq"], ["s"]), node("Unsqueeze", ["s", "uq"], ["y"])]
    inits = [init("sq", [1], np.int64), init("uq", [0, -1], np.int64)]
    return model(nodes, [vi("x", [3, 1, 4])], [out("y")], inits, opset=13)


@model_fn
def squeeze_attr_opset11():
    nodes = [node("Squeeze", ["x"], ["s"], axes=[-1]), node("Unsqueeze", ["s"], ["y"], axes=[1])]
    return model(nodes, [vi("x", [3, 4, 1])], [out("y")], opset=11)


@model_fn
def squeeze_all():
    return one("Squeeze", [1, 3, 1, 2], opset=13)


@model_fn
def flatten_axis2():
    return one("Flatten", [2, 3, 4, 5], attrs={"axis": 2})


@model_fn
def split_num_outputs():
    # Opset 18: 10 into 3 parts of ceil(10/3) = 4, the last smaller.
    return one("Split", [10, 2], attrs={"axis": 0, "num_outputs": 3}, opset=18,
               outputs=("a", "b", "c"))


@model_fn
def split_uneven():
    return one("Split", [2, 10], attrs={"axis": -1}, inits=[init("sp", [2, 3, 5], np.int64)],
               extra_inputs=["sp"], opset=13, outputs=("a", "b", "c"))


@model_fn
def split_attr_opset11():
    return one("Split", [6, 2], attrs={"split": [1, 5]}, opset=11, outputs=("a", "b"))


@model_fn
def slice_negative_max():
    inits = [init("st", [1, -3], np.int64), init("en", [INT64_MAX, INT64_MAX], np.int64),
             init("ax", [0, 1], np.int64)]
    return one("Slice", [4, 10], inits=inits, extra_inputs=["st", "en", "ax"], opset=13)


@model_fn
def slice_negative_step():
    # Axis 1 (size 10) from -1 down to INT64_MIN by -2: 9, 7, 5, 3, 1.
    inits = [init("st", [-1], np.int64), init("en", [INT64_MIN], np.int64),
             init("ax", [-1], np.int64), init("sp", [-2], np.int64)]
    return one("Slice", [4, 10], inits=inits, extra_inputs=["st", "en", "ax", "sp"], opset=13)


@model_fn
def slice_opset1_attrs():
    return one("Slice", [4, 10], attrs={"starts": [2], "ends": [-1], "axes": [1]}, opset=9)


@model_fn
def slice_constant_folded():
    # Slice of a constant tensor folds away: the output is a kiln.constant.
    inits = [init("d", np.arange(10), np.int64), init("st", [2], np.int64),
             init("en", [INT64_MAX], np.int64), init("sp", [3], np.int64),
             init("ax", [0], np.int64)]
    n = node("Slice", ["d", "st", "en", "ax", "sp"], ["y"])
    return model([n], [], [out("y", I64)], inits, opset=13)


@model_fn
def pad_reflect():
    return one("Pad", [1, 2, 4, 5], attrs={"mode": "reflect"},
               inits=[init("p", [0, 0, 1, 2, 0, 0, 3, 0], np.int64)], extra_inputs=["p"], opset=13)


@model_fn
def pad_constant_value():
    # Begin (1, 0), end (-1, 2): a negative pad crops.
    inits = [init("p", [1, 0, -1, 2], np.int64), init("v", 2.5, np.float32)]
    return one("Pad", [3, 4], inits=inits, extra_inputs=["p", "v"], opset=13)


@model_fn
def pad_axes_opset18():
    inits = [init("p", [1, 2], np.int64), init("ax", [-1], np.int64)]
    return one("Pad", [3, 4], attrs={"mode": "edge"}, inits=inits, extra_inputs=["p", "", "ax"],
               opset=18)


@model_fn
def pad_opset2_attrs():
    return one("Pad", [3, 4], attrs={"pads": [0, 1, 0, 1], "value": 1.5}, opset=2)


@model_fn
def resize_scales_nearest():
    # floor(5 * 1.5) = 7, floor(5 * 2.5) = 12.
    inits = [init("sc", [1.0, 1.0, 1.5, 2.5], np.float32)]
    return one("Resize", [1, 3, 5, 5],
               attrs={"mode": "nearest", "nearest_mode": "floor",
                      "coordinate_transformation_mode": "asymmetric"},
               inits=inits, extra_inputs=["", "sc"], opset=13)


@model_fn
def resize_sizes_linear():
    inits = [init("sz", [1, 3, 9, 4], np.int64)]
    return one("Resize", [1, 3, 5, 5], attrs={"mode": "linear"}, inits=inits,
               extra_inputs=["", "", "sz"], opset=13)


@model_fn
def resize_axes_scales():
    # Opset 18 axes attribute: scales [2] cover axis 3 only; spread to [1, 1, 1, 2].
    inits = [init("sc", [2.0], np.float32)]
    return one("Resize", [1, 3, 4, 5], attrs={"axes": [-1], "mode": "cubic"}, inits=inits,
               extra_inputs=["", "sc"], opset=18)


@model_fn
def topk():
    inits = [init("k", [4], np.int64)]
    return model([node("TopK", ["x", "k"], ["v", "i"], axis=1, largest=0)], [vi("x", [3, 10])],
                 [out("v"), out("i", I64)], inits, opset=11)


@model_fn
def topk_opset1():
    return model([node("TopK", ["x"], ["v", "i"], k=2)], [vi("x", [3, 10])],
                 [out("v"), out("i", I64)], opset=1)


@model_fn
def gather_negative_indices():
    inits = [init("idx", [[-1, 0, 2]], np.int64)]
    return one("Gather", [5, 4], attrs={"axis": -1}, inits=inits, extra_inputs=["idx"])


@model_fn
def gather_scalar_index():
    inits = [init("idx", -2, np.int64)]
    return one("Gather", [5, 4], inits=inits, extra_inputs=["idx"])


@model_fn
def gather_elements():
    return model([node("GatherElements", ["x", "i"], ["y"], axis=1)],
                 [vi("x", [3, 4]), vi("i", [3, 2], I64)], [out("y")])


@model_fn
def transpose_default():
    return one("Transpose", [2, 3, 4])


@model_fn
def concat_negative_axis():
    return model([node("Concat", ["a", "b"], ["y"], axis=-1)], [vi("a", [2, 3]), vi("b", [2, 5])],
                 [out("y")])


@model_fn
def expand_tile():
    nodes = [node("Expand", ["x", "es"], ["e"]), node("Tile", ["e", "rep"], ["y"])]
    inits = [init("es", [2, 1, 4], np.int64), init("rep", [1, 2, 3], np.int64)]
    return model(nodes, [vi("x", [3, 1])], [out("y")], inits)


@model_fn
def depth_space():
    nodes = [node("DepthToSpace", ["x"], ["d"], blocksize=2, mode="CRD"),
             node("SpaceToDepth", ["d"], ["y"], blocksize=2)]
    return model(nodes, [vi("x", [1, 8, 3, 3])], [out("d"), out("y")])


@model_fn
def trilu_range():
    nodes = [node("Trilu", ["x", "k"], ["t"], upper=0),
             node("Range", ["r0", "r1", "r2"], ["r"])]
    inits = [init("k", 1, np.int64), init("r0", 1.0, np.float32), init("r1", 2.0, np.float32),
             init("r2", 0.25, np.float32)]
    # Range of constants folds; Relu keeps a use of it in the graph.
    return model(nodes + [node("Relu", ["r"], ["rr"])], [vi("x", [3, 3])], [out("t"), out("rr")],
                 inits)


# ---------------------------------------------------------------------------------------------
# Reductions, ArgMax, CumSum
# ---------------------------------------------------------------------------------------------

@model_fn
def reduce_mean_attr_axes():
    # ReduceMean opset 13: axes is an attribute.
    return one("ReduceMean", [2, 3, 4], attrs={"axes": [1, -1], "keepdims": 0}, opset=13)


@model_fn
def reduce_sum_axes_input():
    # ReduceSum opset 13: axes is an input.
    return one("ReduceSum", [2, 3, 4], attrs={"keepdims": 0}, inits=[init("ax", [-2], np.int64)],
               extra_inputs=["ax"], opset=13)


@model_fn
def reduce_sum_all():
    return one("ReduceSum", [2, 3, 4], opset=13)


@model_fn
def reduce_sum_noop():
    return one("ReduceSum", [2, 3, 4], attrs={"noop_with_empty_axes": 1}, opset=13)


@model_fn
def reduce_max_opset18():
    return one("ReduceMax", [2, 3, 4], inits=[init("ax", [0, 2], np.int64)], extra_inputs=["ax"],
               opset=18)


@model_fn
def reduce_l2_opset11():
    return one("ReduceL2", [2, 3, 4], attrs={"axes": [0]}, opset=11)


@model_fn
def argmax_last_index():
    return one("ArgMax", [2, 3, 4], attrs={"axis": -1, "keepdims": 0, "select_last_index": 1},
               opset=13, out_elem=I64)


@model_fn
def argmin_defaults():
    return one("ArgMin", [2, 3, 4], opset=13, out_elem=I64)


@model_fn
def cumsum():
    return one("CumSum", [2, 3], attrs={"exclusive": 1, "reverse": 1},
               inits=[init("ax", 1, np.int32)], extra_inputs=["ax"], opset=14)


# ---------------------------------------------------------------------------------------------
# Quantization
# ---------------------------------------------------------------------------------------------

@model_fn
def quantize_per_axis():
    inits = [init("s", [0.1, 0.2, 0.3], np.float32), init("z", [0, 1, -1], np.int8)]
    return one("QuantizeLinear", [2, 3, 4], attrs={"axis": 1}, inits=inits,
               extra_inputs=["s", "z"], opset=13, out_elem=I8)


@model_fn
def quantize_per_tensor():
    return one("QuantizeLinear", [2, 3], inits=[init("s", 0.5, np.float32)], extra_inputs=["s"],
               opset=13, out_elem=U8)


@model_fn
def dequantize_per_tensor():
    inits = [init("s", 0.25, np.float32), init("z", 3, np.int8)]
    return one("DequantizeLinear", [2, 3], inits=inits, extra_inputs=["s", "z"], opset=13,
               elem=I8, out_elem=F)


@model_fn
def dequantize_per_axis_negative():
    inits = [init("s", [0.5, 0.25, 0.125], np.float32)]
    return one("DequantizeLinear", [3, 2], attrs={"axis": -2}, inits=inits, extra_inputs=["s"],
               opset=13, elem=U8, out_elem=F)


# ---------------------------------------------------------------------------------------------
# Shape ops: Constant, ConstantOfShape, Shape, Size, Identity, Dropout
# ---------------------------------------------------------------------------------------------

@model_fn
def constant_value_ints():
    # A Constant with value_ints feeds a Reshape (folded into the result type) and is also
    # returned (materialized as a kiln.constant).
    nodes = [helper.make_node("Constant", [], ["s"], name="c", value_ints=[3, -1]),
             node("Reshape", ["x", "s"], ["y"])]
    return model(nodes, [vi("x", [2, 6])], [out("y"), out("s", I64)])


@model_fn
def constant_scalars():
    nodes = [helper.make_node("Constant", [], ["f"], name="cf", value_float=0.5),
             helper.make_node("Constant", [], ["fs"], name="cfs", value_floats=[1.0, 2.0, 3.0]),
             node("Mul", ["x", "f"], ["m"]), node("Add", ["m", "fs"], ["y"])]
    return model(nodes, [vi("x", [2, 3])], [out("y")])


@model_fn
def constant_of_shape():
    value = numpy_helper.from_array(np.array([1.5], np.float32), "value")
    nodes = [node("ConstantOfShape", ["sh"], ["c"], value=value), node("Add", ["x", "c"], ["y"])]
    return model(nodes, [vi("x", [2, 3])], [out("y")], [init("sh", [2, 3], np.int64)])


@model_fn
def constant_of_shape_default():
    # No value attribute: float zeros; the shape comes from a folded Shape.
    nodes = [node("Shape", ["x"], ["sh"]), node("ConstantOfShape", ["sh"], ["y"])]
    return model(nodes, [vi("x", [4, 2], I32)], [out("y")])


@model_fn
def shape_gather_concat_reshape():
    # The exporter's flatten-per-batch pattern on a symbolic batch.
    nodes = [node("Shape", ["x"], ["s"]),
             node("Gather", ["s", "zero"], ["n"], axis=0),
             node("Unsqueeze", ["n", "axes0"], ["n1"]),
             node("Concat", ["n1", "minus1"], ["target"], axis=0),
             node("Reshape", ["x", "target"], ["y"])]
    inits = [init("zero", 0, np.int64), init("axes0", [0], np.int64),
             init("minus1", [-1], np.int64)]
    return model(nodes, [vi("x", ["batch", 3, 4, 4])], [out("y")], inits, opset=13)


@model_fn
def shape_start_end_size():
    nodes = [node("Shape", ["x"], ["s"], start=1, end=-1), node("Size", ["x"], ["n"])]
    return model(nodes, [vi("x", [2, 3, 4, 5])], [out("s", I64), out("n", I64)], opset=15)


@model_fn
def identity_dropout():
    nodes = [node("Identity", ["x"], ["i"]), node("Dropout", ["i"], ["d"], ratio=0.3),
             node("Relu", ["d"], ["y"])]
    return model(nodes, [vi("x", [2, 3])], [out("y")], opset=11)


@model_fn
def dropout_mask():
    n = node("Dropout", ["x", "r", "t"], ["y", "mask"])
    inits = [init("r", 0.5, np.float32), init("t", False, np.bool_)]
    return model([n], [vi("x", [2, 2])], [out("y"), out("mask", B)], inits, opset=13)


# ---------------------------------------------------------------------------------------------
# Models the importer must reject
# ---------------------------------------------------------------------------------------------

@model_fn
def bad_max_pool_indices():
    return model([node("MaxPool", ["x"], ["y", "idx"], kernel_shape=[2, 2])],
                 [vi("x", [1, 1, 4, 4])], [out("y"), out("idx", I64)])


@model_fn
def bad_max_pool_storage_order():
    return one("MaxPool", [1, 1, 4, 4], attrs={"kernel_shape": [2, 2], "storage_order": 1})


@model_fn
def bad_batch_norm_training():
    c = 3
    inits = [init(n, np.ones([c], np.float32)) for n in ("s", "bias", "mean", "var")]
    return one("BatchNormalization", [1, c, 4, 4], attrs={"training_mode": 1}, inits=inits,
               extra_inputs=["s", "bias", "mean", "var"], opset=15)


@model_fn
def bad_resize_antialias():
    inits = [init("sc", [1.0, 1.0, 2.0, 2.0], np.float32)]
    return one("Resize", [1, 1, 4, 4], attrs={"antialias": 1, "mode": "linear"}, inits=inits,
               extra_inputs=["", "sc"], opset=18)


@model_fn
def bad_unsupported_ops():
    # Two ops Kiln lacks, one op at an opset before its supported range, one custom domain op.
    nodes = [node("Relu", ["x"], ["r"]),
             node("Hardmax", ["r"], ["h"]),
             node("Mish", ["h"], ["m"]),
             helper.make_node("FusedThing", ["m"], ["y"], name="custom", domain="com.example")]
    return model(nodes, [vi("x", [2, 3])], [out("y")], opset=17, extra_opsets=[("com.example", 1)])


@model_fn
def bad_gemm_old_opset():
    return model([node("Gemm", ["a", "b"], ["y"])], [vi("a", [2, 3]), vi("b", [3, 4])], [out("y")],
                 opset=9)


@model_fn
def bad_pad_wrap_opset18():
    return one("Pad", [3, 4], attrs={"mode": "wrap"}, inits=[init("p", [1, 1, 1, 1], np.int64)],
               extra_inputs=["p"], opset=18)


@model_fn
def bad_reshape_runtime_shape():
    # The shape is a graph input and the output type is not declared.
    return model([node("Reshape", ["x", "s"], ["y"])], [vi("x", [2, 6]), vi("s", [2], I64)],
                 [out("y")])


@model_fn
def bad_split_num_outputs_mismatch():
    return one("Split", [6, 2], attrs={"axis": 0, "num_outputs": 3}, opset=18, outputs=("a", "b"))


@model_fn
def bad_layer_norm_stash_type():
    return one("LayerNormalization", [2, 4], attrs={"stash_type": 0},
               inits=[init("s", np.ones([4], np.float32))], extra_inputs=["s"])


@model_fn
def bad_dropout_training():
    n = node("Dropout", ["x", "r", "t"], ["y", "mask"])
    inits = [init("r", 0.5, np.float32), init("t", True, np.bool_)]
    return model([n], [vi("x", [2, 2])], [out("y"), out("mask", B)], inits, opset=13)


@model_fn
def bad_symbolic_input():
    return one("Relu", ["batch", 3])


@model_fn
def bad_conv_auto_pad():
    return conv_model([1, 3, 8, 8], [4, 3, 3, 3], auto_pad="SAME")


@model_fn
def bad_topk_k_too_large():
    return model([node("TopK", ["x", "k"], ["v", "i"])], [vi("x", [3, 4])],
                 [out("v"), out("i", I64)], [init("k", [5], np.int64)], opset=11)


@model_fn
def bad_split_opset13_uneven():
    return one("Split", [5, 2], attrs={"axis": 0}, opset=13, outputs=("a", "b"))


@model_fn
def bad_group_norm_runtime_scale():
    n = node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=2)
    return model([n], [vi("x", [1, 4, 3, 3]), vi("s", [2]), vi("b", [2])], [out("y")], opset=18)


@model_fn
def bad_quantize_block_size():
    return one("QuantizeLinear", [4, 4], attrs={"block_size": 2, "axis": 1},
               inits=[init("s", np.ones([4, 2], np.float32))], extra_inputs=["s"], opset=21,
               out_elem=U8)


# ---------------------------------------------------------------------------------------------
# Translations that once differed from the ONNX spec (tests/lit/importer/spec_corners.mlir).
# ---------------------------------------------------------------------------------------------

@model_fn
def repro_quantize21_output_dtype():
    # QuantizeLinear-21 output_dtype=INT8 without a zero point: ONNX gives i8, not u8.
    return one("QuantizeLinear", [2, 3], attrs={"output_dtype": I8},
               inits=[init("s", 0.5, np.float32)], extra_inputs=["s"], opset=21, out_elem=I8)


@model_fn
def repro_layer_norm_f16_stats():
    # Mean and InvStdDev have type U = stash_type (f32) for an f16 input.
    n = node("LayerNormalization", ["x", "s"], ["y", "mean", "inv"], axis=-1)
    return model([n], [vi("x", [2, 4], F16)], [out("y", F16), vi("mean", [2, 1]), vi("inv", [2, 1])],
                 [init("s", np.ones([4], np.float16))])


@model_fn
def repro_dropout7_mask():
    # Dropout-7's mask has the data's type T (bool only from opset 10).
    return model([node("Dropout", ["x"], ["y", "mask"])], [vi("x", [2, 2])],
                 [out("y"), vi("mask", [2, 2])], opset=7)


@model_fn
def repro_pow_int_base_float_exponent():
    # Pow(i32 [4, 9], f32 [0.5, 0.5]) is [2, 3] (onnx.reference); casting the exponent to i32
    # first computes x^0.
    return model([node("Pow", ["a", "b"], ["y"])], [vi("a", [2], I32), vi("b", [2])],
                 [out("y", I32)], opset=15)


@model_fn
def repro_conv_transpose_notset_odd():
    # output_shape 6 needs a total pad of 1; the ONNX text gives the odd one to the start unless
    # auto_pad is SAME_UPPER.
    return conv_model([1, 2, 3, 3], [2, 4, 3, 3], op="ConvTranspose", strides=[2, 2],
                      output_shape=[6, 6])


def usage(message=None):
    if message:
        sys.stderr.write("make_model.py: %s\n" % message)
    sys.stderr.write("usage: make_model.py <name> <out.onnx> | --out-dir <dir> <name>... | --list\n")
    return 2


def main(argv):
    args = argv[1:]
    if args == ["--list"]:
        print("\n".join(sorted(MODELS)))
        return 0
    if len(args) >= 3 and args[0] == "--out-dir":
        jobs = [(name, os.path.join(args[1], name + ".onnx")) for name in args[2:]]
    elif len(args) == 2 and not args[0].startswith("-"):
        jobs = [(args[0], args[1])]
    else:
        return usage()
    unknown = [name for name, _ in jobs if name not in MODELS]
    if unknown:
        return usage("unknown model(s): " + ", ".join(unknown))
    for name, path in jobs:
        onnx.save(MODELS[name](), path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
