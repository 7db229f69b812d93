#!/usr/bin/env python3
"""Where along a suite model a GPU plan departs from the interpreter running the same options.

  bisect_model.py --kiln build-gpu/kiln --model mobilenet_v3_large:1 --options "--precision bf16" --cuts 24

Exports the model, cuts it after evenly spaced nodes (onnx.utils.extract_model: the graph up to
that node's output), and for each cut compiles the submodel with the options, runs it on the
GPU and evaluates it with `kiln eval` (the interpreter, same options): the first cut whose GPU
output leaves the interpreter's names the region of the bug. One JSON line per cut.
"""
import argparse
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
import kiln_models as km  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", required=True)
    parser.add_argument("--model", required=True, help="NAME:BATCH of a suite model")
    parser.add_argument("--options", default="", help="kiln compile/eval options")
    parser.add_argument("--cuts", type=int, default=16, help="how many evenly spaced cut points")
    parser.add_argument("--from-node", type=int, default=0, help="first node index to cut after")
    parser.add_argument("--to-node", type=int, default=-1, help="last node index to cut after")
    args = parser.parse_args()
    import onnx
    import onnx.utils
    name, batch = args.model.split(":")
    model, inputs, names, _ = km.build_suite_model(name, int(batch))
    with tempfile.TemporaryDirectory() as work:
        full = os.path.join(work, "model.onnx")
        km.export_onnx(model, inputs, names, full)
        graph = onnx.load(full).graph
        input_names = km.onnx_input_names(full)
        feeds = {n: t.numpy() for n, t in zip(input_names, inputs)}
        input_args = km.save_inputs(feeds, work, "in")
        last = len(graph.node) - 1 if args.to_node < 0 else args.to_node
        step = max(1, (last - args.from_node) // max(1, args.cuts - 1))
        for index in list(range(args.from_node, last, step)) + [last]:
            node = graph.node[index]
            output = node.output[0]
            cut = os.path.join(work, f"cut{index}.onnx")
            row = {"node": index, "name": node.name, "op": node.op_type}
            try:
                onnx.utils.extract_model(full, cut, input_names, [output])
            except Exception as e:  # noqa: BLE001 - report and go on
                row["error"] = f"extract: {e}"
                print(json.dumps(row), flush=True)
                continue
            plan, gpu_dir, ref_dir = (os.path.join(work, f"cut{index}.{s}") for s in ("kiln", "gpu", "ref"))
            options = args.options.split()
            steps = [(["compile", cut, "-o", plan, "--quiet"] + options, "compile"),
                     (["run", plan, "--output-dir", gpu_dir, "--quiet"] + input_args, "run"),
                     (["eval", cut, "--output-dir", ref_dir, "--quiet"] + options + input_args, "eval")]
            for cmd, what in steps:
                code, _, err, _ = km.run_kiln(args.kiln, cmd, 600)
                if code:
                    row["error"] = f"{what}: {km.error_tail(err, 300)}"
                    break
            if "error" not in row:
                gpu = km.load_kiln_outputs(gpu_dir, [output])
                ref = km.load_kiln_outputs(ref_dir, [output])
                row["rel"], row["cosine"] = km.worst_metrics(gpu, ref)
            print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
