#!/usr/bin/env python3
"""`kiln compare` on values holding infinities (an attention mask's -inf, a log of 0).

A one-node model, y = Log(x), dumped by the interpreter in fp32 and bf16 on x = [0, 1, 2, 3]:
both sides hold -inf in the same place, which is no error (it was inf - inf = NaN, printed as
the cosine "-nan", and `--json` wrote a file no JSON parser reads). Against a dump of
x = [0.5, 1, 2, 3] (finite where the other side is -inf) the error is infinite and the cosine 0;
JSON has no infinity, so --json writes null there. The JSON is parsed strictly (no NaN or
Infinity tokens). No GPU needed. Exits 1 on any failure.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper


def strict_json(text):
    def reject(token):
        raise ValueError(f"non-standard JSON token {token}")
    return json.loads(text, parse_constant=reject)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", required=True)
    opts = parser.parse_args()
    failures = []
    with tempfile.TemporaryDirectory() as work:
        graph = helper.make_graph([helper.make_node("Log", ["x"], ["y"], name="log")], "log",
                                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])])
        model = os.path.join(work, "log.onnx")
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), model)

        def dump(name, values, precision):
            x = os.path.join(work, name + ".npy")
            np.save(x, np.array(values, dtype=np.float32))
            out = os.path.join(work, name)
            subprocess.run([opts.kiln, "eval", model, "--precision", precision, "--input", f"x={x}", "--dump", out],
                           check=True, capture_output=True, text=True)
            return out

        a = dump("a", [0, 1, 2, 3], "fp32")
        same = dump("same", [0, 1, 2, 3], "bf16")
        other = dump("other", [0.5, 1, 2, 3], "fp32")

        def compare(b):
            run = subprocess.run([opts.kiln, "compare", a, b, "--json"], capture_output=True, text=True)
            if run.returncode != 0:
                failures.append(f"compare {os.path.basename(b)}: exit {run.returncode}: {run.stderr[-300:]}")
                return None
            try:
                report = strict_json(run.stdout.strip().splitlines()[-1])
            except ValueError as e:
                failures.append(f"compare {os.path.basename(b)}: the JSON does not parse: {e}")
                return None
            return {v["name"]: v for v in report["values"]}["y"]

        y = compare(same)
        if y is not None:
            # bf16 plans keep Log in fp32: no error beyond rounding, the -inf matching.
            if not (y["max_abs"] is not None and y["max_abs"] < 0.01 and y["cosine"] > 0.9999):
                failures.append(f"matching -inf: expected a small finite error and cosine ~1, got {y}")
        y = compare(other)
        if y is not None and not (y["max_abs"] is None and y["cosine"] == 0):
            failures.append(f"-inf against a finite value: expected max_abs null (infinite) and cosine 0, got {y}")
        text = subprocess.run([opts.kiln, "compare", a, same], capture_output=True, text=True).stdout
        if "nan" in text.lower():
            failures.append("the text report prints a NaN:\n" + text)
    for f in failures:
        print("FAIL:", f)
    print("compare-nonfinite:", "FAILED" if failures else "passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
