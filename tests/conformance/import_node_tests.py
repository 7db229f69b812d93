#!/usr/bin/env python3
"""Runs `kiln import` over the ONNX backend node tests and prints the import counts.

A test is in scope when every op of its graph is one the kiln dialect covers (IN_SCOPE_OPS:
the issue's op list under ONNX names, plus the ops the importer folds or elides). Each in-scope
model is imported; the printed IR is parsed and verified again by kiln-opt. The run prints
every rejection with its reason and one line

    import: N imported, M rejected, T in scope

and fails when a rejection is not listed in the expected-rejections file (a regression) or
fewer than 95% of the in-scope models import.
"""
import argparse
import concurrent.futures
import os
import subprocess
import sys

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


def import_one(kiln, kiln_opt, name, model_path):
    proc = subprocess.run([kiln, "import", model_path, "--quiet"], capture_output=True, text=True, errors="replace")
    if proc.returncode != 0:
        reason = proc.stderr.strip().replace("kiln import: error: ", "")
        return name, False, reason or f"exit status {proc.returncode}"
    verify = subprocess.run([kiln_opt, "-"], input=proc.stdout, capture_output=True, text=True, errors="replace")
    if verify.returncode != 0:
        return name, False, "printed IR does not verify: " + verify.stderr.strip()[:300]
    return name, True, ""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", required=True)
    parser.add_argument("--kiln-opt", default=None, help="default: kiln-opt beside kiln")
    parser.add_argument("--node-dir", default=NODE_DIR)
    parser.add_argument("--expected", help="file of expected rejections: 'test_name  # reason'")
    parser.add_argument("--min-ratio", type=float, default=0.95)
    args = parser.parse_args()
    kiln_opt = args.kiln_opt or os.path.join(os.path.dirname(args.kiln), "kiln-opt")
    if not os.path.isdir(args.node_dir):
        print(f"import: node tests not found at {args.node_dir}; install libonnx-testdata "
              "(scripts/setup-deps.sh)")
        return 1

    tests = []
    for name in sorted(os.listdir(args.node_dir)):
        path = os.path.join(args.node_dir, name, "model.onnx")
        if os.path.exists(path) and in_scope(path):
            tests.append((name, path))

    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        results = list(pool.map(lambda t: import_one(args.kiln, kiln_opt, *t), tests))

    expected = {}
    if args.expected and os.path.exists(args.expected):
        for line in open(args.expected):
            line = line.split("#", 1)
            name = line[0].strip()
            if name:
                expected[name] = line[1].strip() if len(line) > 1 else ""

    rejected = [(n, r) for n, ok, r in results if not ok]
    imported = len(results) - len(rejected)
    for name, reason in rejected:
        first = reason.splitlines()[0] if reason else ""
        print(f"rejected {name}: {first}")
    unexpected = [n for n, _ in rejected if n not in expected]
    now_passing = sorted(set(expected) - {n for n, _ in rejected})
    for name in unexpected:
        print(f"NEW REJECTION (not in the expected list): {name}")
    for name in now_passing:
        print(f"note: {name} imports now; remove it from the expected-rejections list")
    print(f"import: {imported} imported, {len(rejected)} rejected, {len(results)} in scope")
    ratio = imported / max(len(results), 1)
    if ratio < args.min_ratio:
        print(f"FAIL: {ratio:.1%} imported, below {args.min_ratio:.0%}")
        return 1
    if unexpected:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
