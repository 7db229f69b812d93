#!/usr/bin/env python3
"""QDQ models as onnxruntime's quantizer writes them: import, evaluate, compile.

For each configuration below, `onnxruntime.quantization.quantize_static` (QDQ format)
quantizes the model on four random calibration inputs; `kiln eval` of the QDQ model on a
held-out input (and with --gpu, `kiln run` of its plan) must match onnxruntime's own run of it.
Each configuration's model also compiles to a bf16 plan. The model ends in
QuantizeLinear/DequantizeLinear, so outputs are multiples of the output scale (an output
computed in float, after an FP8 configuration's last quantized layer, counts in thousandths of
its largest magnitude), and what differs is where a value on a rounding boundary went: onnxruntime runs integer
kernels (optimized) where Kiln dequantizes and computes in f32 (as the QDQ format means and as
onnxruntime does with its graph optimizations off), and one flip early in a deep network moves
the output by several steps. So the bound is the larger of --max-steps output steps (default
1) and how far onnxruntime's two modes, optimized and unoptimized, are apart themselves.

    check_qdq_models.py --kiln build/tools/kiln --model examples/tiny_cnn.onnx --work-dir DIR [--gpu]
    check_qdq_models.py --kiln build/tools/kiln --model conv_block --expect-int8-convs 3 --work-dir DIR

--model takes any fp32 model with one float input (a symbolic first dimension becomes
--batch), or one generated here: `conv_block`, a residual block whose convs over 32 and 64
channels are the form INT8 kernels take once quantized with symmetric activations (its first
conv, over 16 channels, is not); `mlp`, a Gemm and a MatMul whose E4M3 form FP8 GEMMs take.
With --expect-int8-convs N, the plan of the symmetric configuration must run N INT8
convolutions (conv steps reading int8, from `kiln inspect`) and the other configurations'
plans none (their zero points are not 0); --expect-fp8-gemms N likewise for the
fp8-linear-layers configuration's FP8 GEMMs (gemm steps reading E4M3).

Prints one line per configuration and exits 1 if any fails.
"""
import argparse
import os
import re
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

try:
    import onnxruntime as ort
    from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType,
                                          quantize_static)
except ImportError as e:  # the test tooling is installed by scripts/setup-deps.sh
    sys.exit(f"check_qdq_models.py needs onnxruntime with its quantization tools: {e}")

# name -> quantize_static arguments
CONFIGS = {
    "int8-per-channel": dict(activation_type=QuantType.QInt8, weight_type=QuantType.QInt8, per_channel=True),
    "uint8-activations-per-tensor": dict(activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                                         per_channel=False),
    "int8-symmetric-activations": dict(activation_type=QuantType.QInt8, weight_type=QuantType.QInt8,
                                       per_channel=True, extra_options={"ActivationSymmetric": True}),
    # E4M3 around the linear layers (onnxruntime calibrates float8 by distribution only).
    "fp8-linear-layers": dict(activation_type=QuantType.QFLOAT8E4M3FN, weight_type=QuantType.QFLOAT8E4M3FN,
                              op_types_to_quantize=["Gemm", "MatMul"], calibrate_method=CalibrationMethod.Distribution),
    # E4M3 around the convolutions, weights per output channel.
    "fp8-convs": dict(activation_type=QuantType.QFLOAT8E4M3FN, weight_type=QuantType.QFLOAT8E4M3FN,
                      op_types_to_quantize=["Conv"], calibrate_method=CalibrationMethod.Distribution,
                      per_channel=True),
}


class Inputs(CalibrationDataReader):
    def __init__(self, name, shape, seeds):
        self.feeds = iter([{name: np.random.default_rng(s).standard_normal(shape).astype(np.float32)}
                           for s in seeds])

    def get_next(self):
        return next(self.feeds, None)


def output_step(model, output, reference):
    """The scale of the DequantizeLinear that computes `output`; for an output computed in float
    (an FP8 configuration's softmax after its last quantized layer), a thousandth of the
    reference's largest magnitude."""
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type == "DequantizeLinear" and node.output[0] == output and node.input[1] in inits:
            return float(np.max(inits[node.input[1]]))
    return max(float(np.abs(reference).max()), 1e-30) * 1e-3


class GeneratedModel:
    """A small fp32 model built here: weights from a fixed seed, saved as IR 8 / opset 17 (what
    onnxruntime 1.30 on the GPU box loads)."""

    def __init__(self):
        self.rng = np.random.default_rng(0)
        self.weights = []

    def weight(self, name, *shape):
        self.weights.append(numpy_helper.from_array((self.rng.standard_normal(shape) * 0.1).astype(np.float32), name))
        return name

    def save(self, path, name, nodes, input_shape, output_shape):
        from onnx import TensorProto, helper
        graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, input_shape)],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, output_shape)], self.weights)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
        onnx.checker.check_model(model)
        onnx.save(model, path)


def make_conv_block(path, batch):
    """A residual block: conv 16->32 3x3, relu, conv 32->32 3x3, relu, conv 32->32 1x1 plus the
    first relu's output, relu, conv 32->64 3x3 stride 2, global pool, flatten."""
    from onnx import helper
    m = GeneratedModel()
    nodes = [
        helper.make_node("Conv", ["x", m.weight("w1", 32, 16, 3, 3), m.weight("b1", 32)], ["c1"], pads=[1, 1, 1, 1],
                         name="conv1"),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", m.weight("w2", 32, 32, 3, 3), m.weight("b2", 32)], ["c2"], pads=[1, 1, 1, 1],
                         name="conv2"),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("Conv", ["r2", m.weight("w3", 32, 32, 1, 1), m.weight("b3", 32)], ["c3"], name="conv3"),
        helper.make_node("Add", ["c3", "r1"], ["a"], name="add"),
        helper.make_node("Relu", ["a"], ["r3"], name="relu3"),
        helper.make_node("Conv", ["r3", m.weight("w4", 64, 32, 3, 3)], ["c4"], pads=[1, 1, 1, 1], strides=[2, 2],
                         name="conv4"),
        helper.make_node("GlobalAveragePool", ["c4"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["y"], name="flat"),
    ]
    m.save(path, "conv_block", nodes, [batch, 16, 8, 8], [batch, 64])


def make_mlp(path, batch):
    """Two linear layers as exporters write them: a Gemm (trans_b, bias) 32 -> 64, a ReLU, a
    MatMul 64 -> 32 and its bias Add; K and N multiples of 16, as FP8 GEMMs need."""
    from onnx import helper
    m = GeneratedModel()
    nodes = [
        helper.make_node("Gemm", ["x", m.weight("w1", 64, 32), m.weight("b1", 64)], ["h"], transB=1, name="fc1"),
        helper.make_node("Relu", ["h"], ["r"], name="relu"),
        helper.make_node("MatMul", ["r", m.weight("w2", 64, 32)], ["m"], name="fc2"),
        helper.make_node("Add", ["m", m.weight("b2", 32)], ["y"], name="bias2"),
    ]
    m.save(path, "mlp", nodes, [batch, 32], [batch, 32])


def steps_reading(kind, operand, element):
    """A function of (kiln, plan): how many `kind` steps (conv, gemm) of the plan read `operand`
    (x, a) as `element` (i8, f8e4m3fn), from `kiln inspect`: INT8 or FP8 convolutions, FP8 GEMMs."""
    def count(kiln, plan):
        text = subprocess.run([kiln, "inspect", plan], capture_output=True, text=True, check=True).stdout
        return sum(1 for line in text.splitlines() if line.startswith("step ") and f" {kind} " in line and
                   re.search(rf" {operand}=[^ ]*:{element}\[", line))
    return count


def onnxruntime_outputs(path, name, feed, fp8):
    """(outputs of the optimized run by name, of the unoptimized run by name,
    max |optimized - unoptimized| by name). For an E4M3 model the optimized run may be None:
    onnxruntime 1.30 fuses DequantizeLinear -> Gemm -> QuantizeLinear into a QGemm whose CPU
    kernel refuses float8e4m3fn (INVALID_GRAPH), where 1.32 runs it."""
    runs = []
    for level in (ort.GraphOptimizationLevel.ORT_ENABLE_ALL, ort.GraphOptimizationLevel.ORT_DISABLE_ALL):
        options = ort.SessionOptions()
        options.graph_optimization_level = level
        try:
            session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        except Exception as error:  # onnxruntime's own exception types differ across versions
            if not fp8 or level != ort.GraphOptimizationLevel.ORT_ENABLE_ALL:
                raise
            print(f"  onnxruntime {ort.__version__} cannot build its optimized session of this E4M3 model "
                  f"({str(error).splitlines()[0][:200]}); the reference is its unoptimized run")
            runs.append(None)
            continue
        runs.append(dict(zip([o.name for o in session.get_outputs()], session.run(None, {name: feed}))))
    optimized, unoptimized = runs
    if optimized is None:
        return None, unoptimized, {k: 0.0 for k in unoptimized}
    return optimized, unoptimized, {k: float(np.abs(v - unoptimized[k]).max()) for k, v in optimized.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--gpu", action="store_true", help="also run the plans on the GPU (kiln run)")
    ap.add_argument("--max-steps", type=float, default=1.0, help="output steps allowed apart (default 1)")
    ap.add_argument("--configs", default=",".join(CONFIGS), help="comma-separated subset of " + ", ".join(CONFIGS))
    ap.add_argument("--expect-int8-convs", type=int,
                    help="INT8 convolutions the int8-symmetric-activations plan must run (the others: none)")
    ap.add_argument("--expect-fp8-convs", type=int,
                    help="FP8 convolutions the fp8-convs plan must run (the others: none)")
    ap.add_argument("--expect-fp8-gemms", type=int,
                    help="FP8 GEMMs the fp8-linear-layers plan must run (the others: none)")
    opts = ap.parse_args()
    os.makedirs(opts.work_dir, exist_ok=True)

    generated = {"conv_block": make_conv_block, "mlp": make_mlp}
    if opts.model in generated:
        path = os.path.join(opts.work_dir, opts.model + ".onnx")
        generated[opts.model](path, opts.batch)
        opts.model = path
    fp32 = onnx.load(opts.model)
    name = fp32.graph.input[0].name
    if fp32.graph.input[0].type.tensor_type.shape.dim[0].dim_value <= 0:
        fp32.graph.input[0].type.tensor_type.shape.dim[0].dim_value = opts.batch
    shape = [d.dim_value for d in fp32.graph.input[0].type.tensor_type.shape.dim]
    fixed = os.path.join(opts.work_dir, "fp32.onnx")
    onnx.save(fp32, fixed)
    held_out = np.random.default_rng(100).standard_normal(shape).astype(np.float32)
    held_out_path = os.path.join(opts.work_dir, "held_out.npy")
    np.save(held_out_path, held_out)

    failed = skipped = 0
    configs = opts.configs.split(",")
    for config in configs:
        kwargs = CONFIGS[config]
        wanted = kwargs.get("op_types_to_quantize")
        if wanted and not any(node.op_type in wanted for node in fp32.graph.node):
            print(f"skipped {config} (the model has no {', '.join(wanted)})")
            skipped += 1
            continue
        qdq = os.path.join(opts.work_dir, f"{config}.onnx")
        quantize_static(fixed, qdq, Inputs(name, shape, range(4)), quant_format=QuantFormat.QDQ, **kwargs)
        model = onnx.load(qdq)
        # E4M3: onnxruntime's optimized CPU run departs from the model's semantics (0.99 on an
        # MLP whose outputs reach 0.88, with 1.32), so the reference is its unoptimized run
        # (DequantizeLinear, f32 op, QuantizeLinear: what the QDQ format means), within
        # --max-steps and no spread.
        fp8 = config.startswith("fp8")
        optimized, unoptimized, spread = onnxruntime_outputs(qdq, name, held_out, fp8)
        expected = unoptimized if fp8 else optimized
        if fp8:
            spread = {k: 0.0 for k in spread}
        problems = []

        def compare(what, out_dir):
            for out, want in expected.items():
                got = np.load(os.path.join(out_dir, out + ".npy"))
                step = output_step(model, out, want)
                diff = float(np.abs(got - want).max()) if got.shape == want.shape else float("inf")
                steps, allowed = diff / step, max(opts.max_steps, spread[out] / step)
                against = "onnxruntime unoptimized" if fp8 else "onnxruntime"
                if fp8 and optimized is None:
                    apart = "no optimized run"
                elif fp8:
                    apart = f"its optimized run {float(np.abs(optimized[out] - want).max()) / step:.2f} steps away"
                else:
                    apart = f"onnxruntime optimized vs unoptimized {spread[out] / step:.2f}"
                print(f"  {config}: {what} {out} max |kiln - {against}| = {diff:.3g} ({steps:.2f} output steps;"
                      f" {apart})")
                if steps > allowed * (1 + 1e-3):  # a step computed in float32
                    problems.append(f"{what} {out}: {steps:.2f} steps apart, more than {allowed:.2f}"
                                    f" (shape {got.shape} vs {want.shape})")

        def kiln(*args):
            run = subprocess.run([opts.kiln, *args], capture_output=True, text=True)
            if run.returncode != 0:
                problems.append(f"kiln {args[0]} exit {run.returncode}: {run.stderr.strip()[-400:]}")
            return run.returncode == 0

        out_dir = os.path.join(opts.work_dir, config + "-eval")
        if kiln("eval", qdq, "--input", f"{name}={held_out_path}", "--output-dir", out_dir):
            compare("eval", out_dir)
        plan = os.path.join(opts.work_dir, config + ".kiln")
        compiled = kiln("compile", qdq, "-o", plan, "--quiet")
        # A bf16 plan too: the precision policy meets the model's Q/DQ types there.
        kiln("compile", qdq, "-o", os.path.join(opts.work_dir, config + ".bf16.kiln"), "--precision", "bf16", "--quiet")
        for expected_count, wanted_config, count, what in (
                (opts.expect_int8_convs, "int8-symmetric-activations", steps_reading("conv", "x", "i8"),
                 "INT8 convolutions"),
                (opts.expect_fp8_convs, "fp8-convs", steps_reading("conv", "x", "f8e4m3fn"), "FP8 convolutions"),
                (opts.expect_fp8_gemms, "fp8-linear-layers", steps_reading("gemm", "a", "f8e4m3fn"), "FP8 GEMMs")):
            if not compiled or expected_count is None:
                continue
            want = expected_count if config == wanted_config else 0
            got = count(opts.kiln, plan)
            print(f"  {config}: {got} {what} in the plan (expected {want})")
            if got != want:
                problems.append(f"the plan runs {got} {what}, expected {want}")
        if compiled and opts.gpu:
            out_dir = os.path.join(opts.work_dir, config + "-gpu")
            if kiln("run", plan, "--input", f"{name}={held_out_path}", "--output-dir", out_dir):
                before = len(problems)
                compare("gpu", out_dir)
                if len(problems) > before:
                    # Where the GPU first parts from the interpreter's exact evaluation of the same
                    # module: kiln compare's per-value errors and culprits.
                    report = subprocess.run([opts.kiln, "compare", plan, "--reference", "interpreter", "--model", qdq,
                                             "--input", f"{name}={held_out_path}", "--top", "5"],
                                            capture_output=True, text=True)
                    print("\n".join("    compare: " + line for line in
                                    (report.stdout + report.stderr).strip().splitlines()[-25:]))
        ops = sorted({n.op_type for n in model.graph.node})
        print(f"{'FAILED' if problems else 'ok'} {config} ({len(model.graph.node)} nodes: {', '.join(ops)})")
        for p in problems:
            print(f"    {p}")
        failed += bool(problems)
    print(f"{len(configs) - failed - skipped} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
