#!/usr/bin/env python3
"""End-to-end importer tests: builds small ONNX models with the onnx package, runs
`kiln import` on them and checks the exit status and the error text. Covers the good path
(static shapes, --shape, folding of shape subgraphs, external data) and every bad-input case of
the Foundation issue; none may crash (a signal fails the test).

Prints one line per case and closes with 'N passed, M failed'.
"""
import argparse
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT


def model(nodes, inputs, outputs, initializers=(), opset=17, value_info=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers), value_info=list(value_info))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)] if opset else [])
    m.ir_version = 8
    return m


def vi(name, shape, elem=F):
    return helper.make_tensor_value_info(name, elem, shape)


def relu_model():
    return model([helper.make_node("Relu", ["x"], ["y"], name="relu0")], [vi("x", [2, 3])], [vi("y", [2, 3])])


def reshape_chain_model():
    # The exporter pattern: Shape -> Gather -> Unsqueeze -> Concat -> Reshape (flatten per batch).
    nodes = [
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        helper.make_node("Gather", ["s", "zero"], ["n"], name="batch", axis=0),
        helper.make_node("Unsqueeze", ["n", "axes0"], ["n1"], name="unsq"),
        helper.make_node("Concat", ["n1", "minus1"], ["target"], name="cat", axis=0),
        helper.make_node("Reshape", ["x", "target"], ["y"], name="flatten"),
    ]
    inits = [numpy_helper.from_array(np.array(0, np.int64), "zero"),
             numpy_helper.from_array(np.array([0], np.int64), "axes0"),
             numpy_helper.from_array(np.array([-1], np.int64), "minus1")]
    return model(nodes, [vi("x", ["batch", 3, 4, 4])], [vi("y", ["batch", 48])], inits)


def conv_model(weight_name="w"):
    w = numpy_helper.from_array(np.ones((4, 3, 3, 3), np.float32), weight_name)
    return model([helper.make_node("Conv", ["x", weight_name], ["y"], name="conv0", pads=[1, 1, 1, 1])],
                 [vi("x", [1, 3, 8, 8])], [vi("y", [1, 4, 8, 8])], [w])


class Case:
    def __init__(self, name, build, expect_rc, expect=(), args=(), check_ir=()):
        self.name, self.build, self.expect_rc = name, build, expect_rc
        self.expect, self.args, self.check_ir = list(expect), list(args), list(check_ir)


def save(m, d, name="model.onnx"):
    path = os.path.join(d, name)
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    return path


def external_model(d, location, offset=None, length=None, data=None, nbytes=None):
    """A Relu of an external-data initializer 'w' (2x3 float) added to x."""
    raw = np.arange(6, dtype=np.float32).tobytes() if data is None else data
    target = os.path.join(d, "weights.bin")
    with open(target, "wb") as f:
        f.write(raw)
    w = TensorProto()
    w.name, w.data_type = "w", F
    w.dims.extend([2, 3])
    w.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", offset), ("length", length)):
        if v is not None:
            e = w.external_data.add()
            e.key, e.value = k, str(v)
    m = model([helper.make_node("Add", ["x", "w"], ["y"], name="add0")], [vi("x", [2, 3])], [vi("y", [2, 3])], [w])
    return save(m, d)


def build_cases():
    cases = []
    add = cases.append

    # --- good paths -----------------------------------------------------------------------
    add(Case("relu imports", lambda d: save(relu_model(), d), 0, check_ir=["kiln.relu", "tensor<2x3xf32>"]))
    add(Case("conv weight becomes a resource blob", lambda d: save(conv_model(), d), 0,
             check_ir=["kiln.conv", "dense_resource<w>", "dialect_resources"]))
    add(Case("symbolic batch needs --shape", lambda d: save(reshape_chain_model(), d), 1,
             ["graph input 'x' has symbolic dims [batch]", "--shape x=Nx3x4x4"]))
    add(Case("--shape resolves and the Shape->Reshape chain folds",
             lambda d: save(reshape_chain_model(), d), 0, args=["--shape", "x=5x3x4x4"],
             check_ir=["kiln.reshape", "tensor<5x3x4x4xf32> to tensor<5x48xf32>"]))
    add(Case("--shape with the wrong rank", lambda d: save(reshape_chain_model(), d), 1,
             ["gives rank 2, the model declares rank 4"], args=["--shape", "x=5x3"]))
    add(Case("--shape naming no input", lambda d: save(relu_model(), d), 1,
             ["'nope', which is not a graph input"], args=["--shape", "nope=1x2"]))
    add(Case("external data in range", lambda d: external_model(d, "weights.bin", 0, 24), 0,
             check_ir=["kiln.add"]))

    # --- files that are no model ----------------------------------------------------------
    def not_protobuf(d):
        p = os.path.join(d, "model.onnx")
        open(p, "w").write("this is not a protobuf\n" * 10)
        return p
    add(Case("not a protobuf", not_protobuf, 1, ["is not a valid ONNX model"]))

    def truncated(d):
        data = conv_model().SerializeToString()
        p = os.path.join(d, "model.onnx")
        open(p, "wb").write(data[: len(data) // 2])
        return p
    add(Case("truncated file", truncated, 1, ["is not a valid ONNX model"]))
    add(Case("missing file", lambda d: os.path.join(d, "absent.onnx"), 1, ["cannot read"]))

    # --- graph structure ------------------------------------------------------------------
    def no_opset(d):
        m = relu_model()
        del m.opset_import[:]
        return save(m, d)
    add(Case("missing opset import", no_opset, 1, ["no opset_import for the default ONNX domain"]))

    def unknown_ops(d):
        m = model([helper.make_node("FancyOp", ["x"], ["a"], name="f"),
                   helper.make_node("Relu", ["a"], ["b"], name="r"),
                   helper.make_node("Unique", ["b"], ["y"], name="u")],
                  [vi("x", [2])], [vi("y", [2])])
        return save(m, d)
    add(Case("unknown ops are all listed", unknown_ops, 1,
             ["2 unsupported (op, opset) pairs", "FancyOp (opset 17): not supported",
              "Unique (opset 17): not supported"]))

    def old_opset(d):
        return save(model([helper.make_node("LayerNormalization", ["x", "x"], ["y"], name="ln")],
                          [vi("x", [2])], [vi("y", [2])], opset=13), d)
    add(Case("op newer than the model's opset", old_opset, 1,
             ["LayerNormalization (opset 13): supported in opsets 17-21"]))

    def unsorted(d):
        m = model([helper.make_node("Relu", ["a"], ["y"], name="second"),
                   helper.make_node("Relu", ["x"], ["a"], name="first")],
                  [vi("x", [2])], [vi("y", [2])])
        return save(m, d)
    add(Case("unsorted graph", unsorted, 1, ["not topologically sorted or has a cycle"]))

    def cycle(d):
        m = model([helper.make_node("Add", ["x", "b"], ["a"], name="n1"),
                   helper.make_node("Relu", ["a"], ["b"], name="n2")],
                  [vi("x", [2])], [vi("b", [2])])
        return save(m, d)
    add(Case("cycle", cycle, 1, ["not topologically sorted or has a cycle"]))

    def duplicate_outputs(d):
        m = model([helper.make_node("Relu", ["x"], ["y"], name="a"),
                   helper.make_node("Neg", ["x"], ["y"], name="b")],
                  [vi("x", [2])], [vi("y", [2])])
        return save(m, d)
    add(Case("duplicate output names", duplicate_outputs, 1, ["value 'y' is produced twice"]))

    def missing_initializer(d):
        m = model([helper.make_node("Add", ["x", "bias"], ["y"], name="add0")], [vi("x", [2])], [vi("y", [2])])
        return save(m, d)
    add(Case("missing initializer", missing_initializer, 1,
             ["uses 'bias', which is no graph input, initializer or node output"]))

    # --- sizes and attributes -------------------------------------------------------------
    def overflow_dims(d):
        w = TensorProto()
        w.name, w.data_type = "w", F
        w.dims.extend([1 << 32, 1 << 32])
        m = model([helper.make_node("Add", ["x", "w"], ["y"], name="add0")], [vi("x", [2])], [vi("y", [2])], [w])
        return save(m, d)
    add(Case("dim product overflows int64", overflow_dims, 1, ["overflows"]))

    def overflow_input(d):
        return save(model([helper.make_node("Relu", ["x"], ["y"], name="r")],
                          [vi("x", [1 << 40, 1 << 40])], [vi("y", [1 << 40, 1 << 40])]), d)
    add(Case("input dims overflow int64", overflow_input, 1, ["overflows int64"]))

    def axis_eq_rank(d):
        return save(model([helper.make_node("Concat", ["x", "x"], ["y"], name="cat", axis=2)],
                          [vi("x", [2, 3])], [vi("y", [4, 3])]), d)
    add(Case("axis == rank", axis_eq_rank, 1, ["node 'cat' (Concat, opset 17)", "axis 2 is out of range for rank 2"]))

    def slice_unequal(d):
        inits = [numpy_helper.from_array(np.array([0, 0], np.int64), "starts"),
                 numpy_helper.from_array(np.array([1], np.int64), "ends")]
        return save(model([helper.make_node("Slice", ["x", "starts", "ends"], ["y"], name="sl")],
                          [vi("x", [4, 4])], [vi("y", [1, 4])], inits), d)
    add(Case("slice starts/ends of unequal length", slice_unequal, 1, ["node 'sl' (Slice", "one length"]))

    def raw_data_size(d):
        w = TensorProto()
        w.name, w.data_type, w.raw_data = "w", F, b"\x00" * 20
        w.dims.extend([2, 3])
        m = model([helper.make_node("Add", ["x", "w"], ["y"], name="add0")], [vi("x", [2, 3])], [vi("y", [2, 3])], [w])
        return save(m, d)
    add(Case("initializer data does not match dims", raw_data_size, 1,
             ["tensor 'w': raw_data holds 20 bytes, but dims 2x3 of FLOAT need 24"]))

    def conv_channels(d):
        w = numpy_helper.from_array(np.ones((4, 2, 3, 3), np.float32), "w")
        return save(model([helper.make_node("Conv", ["x", "w"], ["y"], name="conv0")],
                          [vi("x", [1, 3, 8, 8])], [vi("y", [1, 4, 6, 6])], [w]), d)
    add(Case("conv weight/input channel mismatch", conv_channels, 1,
             ["node 'conv0' (Conv, opset 17)", "input channels"]))

    def wrong_output_decl(d):
        return save(model([helper.make_node("Relu", ["x"], ["y"], name="r")], [vi("x", [2, 3])], [vi("y", [3, 2])]), d)
    add(Case("declared output shape disagrees", wrong_output_decl, 1,
             ["graph output 'y' is declared 3x2 f32 but the graph computes 2x3 f32"]))

    def string_input(d):
        return save(model([helper.make_node("Identity", ["x"], ["y"], name="i")],
                          [vi("x", [2], TensorProto.STRING)], [vi("y", [2], TensorProto.STRING)]), d)
    add(Case("string tensors", string_input, 1, ["STRING is not supported"]))

    # --- external data --------------------------------------------------------------------
    add(Case("external data: absolute path", lambda d: external_model(d, "/etc/passwd"), 1, ["absolute path"]))
    add(Case("external data: .. escape", lambda d: external_model(d, "../weights.bin"), 1, ["escapes"]))
    add(Case("external data: nested .. escape", lambda d: external_model(d, "a/../../weights.bin"), 1, ["escapes"]))

    def symlinked(d):
        p = external_model(d, "link.bin")
        os.symlink(os.path.join(d, "weights.bin"), os.path.join(d, "link.bin"))
        return p
    add(Case("external data: symlink", symlinked, 1, ["symbolic link"]))

    def hardlinked(d):
        p = external_model(d, "weights.bin")
        os.link(os.path.join(d, "weights.bin"), os.path.join(d, "twin.bin"))
        return p
    add(Case("external data: hard link", hardlinked, 1, ["hard links"]))
    add(Case("external data: negative offset", lambda d: external_model(d, "weights.bin", -4), 1, ["offset"]))
    add(Case("external data: past end of file", lambda d: external_model(d, "weights.bin", 8, 24), 1,
             ["past end of file"]))
    add(Case("external data: length mismatch", lambda d: external_model(d, "weights.bin", 0, 20), 1,
             ["20", "24"]))
    return cases


def bit_flip_cases(work, kiln):
    """Flips bytes of a valid model at many positions: every run must end in success or a
    named error, never a crash."""
    data = bytearray(conv_model().SerializeToString())
    failures = []
    rng = np.random.default_rng(1234)
    for trial in range(40):
        flipped = bytearray(data)
        for pos in rng.integers(0, len(data), size=3):
            flipped[pos] ^= 1 << int(rng.integers(0, 8))
        path = os.path.join(work, f"flip{trial}.onnx")
        open(path, "wb").write(flipped)
        proc = subprocess.run([kiln, "import", path, "--quiet", "-o", os.devnull], capture_output=True, text=True, errors="replace")
        if proc.returncode not in (0, 1) or (proc.returncode == 1 and "error:" not in proc.stderr):
            failures.append(f"trial {trial}: exit {proc.returncode}: {proc.stderr[-300:]}")
    return failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", required=True)
    parser.add_argument("--work-dir", required=True)
    args = parser.parse_args()
    shutil.rmtree(args.work_dir, ignore_errors=True)
    os.makedirs(args.work_dir)
    passed = failed = 0
    for i, case in enumerate(build_cases()):
        d = os.path.join(args.work_dir, f"case{i:02d}")
        os.makedirs(d)
        path = case.build(d)
        proc = subprocess.run([args.kiln, "import", path, "--quiet"] + case.args, capture_output=True, text=True, errors="replace")
        problems = []
        if proc.returncode < 0:
            problems.append(f"crashed with signal {-proc.returncode}")
        elif proc.returncode != case.expect_rc:
            problems.append(f"exit status {proc.returncode}, expected {case.expect_rc}")
        for text in case.expect:
            if text not in proc.stderr:
                problems.append(f"error text lacks {text!r}")
        for text in case.check_ir:
            if text not in proc.stdout:
                problems.append(f"IR lacks {text!r}")
        if problems:
            failed += 1
            print(f"FAIL {case.name}: {'; '.join(problems)}\n  stderr: {proc.stderr.strip()[:500]}")
        else:
            passed += 1
            print(f"ok   {case.name}")
    flips = bit_flip_cases(args.work_dir, args.kiln)
    if flips:
        failed += 1
        print("FAIL bit flips never crash:\n  " + "\n  ".join(flips))
    else:
        passed += 1
        print("ok   bit flips never crash (40 mutated models)")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
