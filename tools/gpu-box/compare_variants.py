#!/usr/bin/env python3
"""One suite model under several `kiln compile` option sets, each run on the GPU and judged
against onnxruntime fp32 on the same inputs: which option makes a plan inaccurate.

  compare_variants.py --kiln build-gpu/kiln --model mobilenet_v3_large:1 \
      --variant "auto=--precision bf16" --variant "nchw=--precision bf16 --layout nchw"

Each variant is LABEL=ARGS (ARGS split on spaces, given to `kiln compile` after the model).
With --eval LABEL, that variant's module is also evaluated by the interpreter (`kiln eval` with
the same options), which tells a GPU bug from a pass that changes the meaning. Prints one JSON
line per variant.
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
    parser.add_argument("--variant", action="append", required=True, help="LABEL=kiln compile arguments")
    parser.add_argument("--eval", action="append", default=[], help="labels also evaluated by the interpreter")
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args()
    name, batch = args.model.split(":")
    model, inputs, names, prepared = km.build_suite_model(name, int(batch))
    with tempfile.TemporaryDirectory() as work:
        onnx_path = os.path.join(work, "model.onnx")
        km.export_onnx(model, inputs, names, onnx_path)
        feeds = {n: t.numpy() for n, t in zip(km.onnx_input_names(onnx_path), inputs)}
        reference, output_names = km.onnxruntime_outputs(onnx_path, feeds)
        input_args = km.save_inputs(feeds, work, "in")
        for variant in args.variant:
            label, _, options = variant.partition("=")
            plan = os.path.join(work, label + ".kiln")
            row = {"model": args.model, "variant": label, "options": options}
            code, _, err, seconds = km.run_kiln(args.kiln, ["compile", onnx_path, "-o", plan, "--quiet"]
                                                + options.split(), args.timeout)
            row["compile_s"] = round(seconds, 2)
            if code:
                row["error"] = "compile: " + km.error_tail(err)
                print(json.dumps(row), flush=True)
                continue
            precision = next((o.split()[1] for o in [options[options.find("--precision"):]] if "--precision" in options),
                             "fp32")
            out_dir = os.path.join(work, label + ".out")
            row.update(km.kiln_accuracy(args.kiln, plan, input_args, out_dir, output_names, reference, precision,
                                        args.timeout))
            if label in args.eval:
                ref_dir = os.path.join(work, label + ".eval")
                code, _, err, seconds = km.run_kiln(args.kiln, ["eval", onnx_path, "--output-dir", ref_dir, "--quiet"]
                                                    + options.split() + input_args, args.timeout)
                if code:
                    row["eval_error"] = km.error_tail(err)
                else:
                    evaluated = km.load_kiln_outputs(ref_dir, output_names)
                    row["interpreter_vs_ort"] = km.worst_metrics(evaluated, reference)
                    row["gpu_vs_interpreter"] = km.worst_metrics(km.load_kiln_outputs(out_dir, output_names),
                                                                 evaluated)
                    row["eval_s"] = round(seconds, 2)
            print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
