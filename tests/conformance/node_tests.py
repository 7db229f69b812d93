"""The ONNX backend node tests Kiln has in scope, shared by the import and conformance runs.

A test is in scope when every op of its graph is one the kiln dialect covers (IN_SCOPE_OPS:
the Foundation issue's op list under ONNX names, the ops the importer folds or elides, and the
few more that real exports need: GatherND, IsNaN, IsInf, Mod).
"""
import os

import onnx

NODE_DIR = "/usr/share/libonnx-testdata/data/node"

IN_SCOPE_OPS = set("""
Abs Add And ArgMax ArgMin AveragePool BatchNormalization Cast CastLike Ceil Clip Concat Constant
ConstantOfShape Conv ConvTranspose Cos CumSum DepthToSpace DequantizeLinear Div Dropout Einsum Elu
Equal Erf Exp Expand Flatten Floor Gather GatherElements Gelu Gemm GlobalAveragePool GlobalMaxPool
GatherND Greater GreaterOrEqual GroupNormalization IsInf IsNaN HardSigmoid HardSwish Identity InstanceNormalization
LayerNormalization LeakyRelu Less LessOrEqual Log LogSoftmax MatMul Max MaxPool Mean Min Mod Mul Neg Not
Or PRelu Pad Pow QuantizeLinear Range Reciprocal ReduceL1 ReduceL2 ReduceLogSum ReduceLogSumExp
ReduceMax ReduceMean ReduceMin ReduceProd ReduceSum ReduceSumSquare Relu Reshape Resize Round Selu
Shape Sigmoid Sign Sin Size Slice Softmax Softplus SpaceToDepth Split Sqrt Squeeze Sub Sum Tanh Tile
TopK Transpose Trilu Unsqueeze Where Xor
""".split())


def in_scope(model_path):
    model = onnx.load(model_path, load_external_data=False)
    return all(n.op_type in IN_SCOPE_OPS and n.domain in ("", "ai.onnx") for n in model.graph.node)


def in_scope_tests(node_dir=NODE_DIR):
    """(name, directory) of every in-scope node test, sorted by name."""
    tests = []
    for name in sorted(os.listdir(node_dir)):
        path = os.path.join(node_dir, name, "model.onnx")
        if os.path.exists(path) and in_scope(path):
            tests.append((name, os.path.join(node_dir, name)))
    return tests


def read_expected(path):
    """{test name: reason} from a file of 'name  # reason' lines."""
    expected = {}
    if path and os.path.exists(path):
        for line in open(path):
            name, _, reason = line.partition("#")
            if name.strip():
                expected[name.strip()] = reason.strip()
    return expected
