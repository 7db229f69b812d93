#!/usr/bin/env python3
"""Exports real models with torch, imports each with the statically linked `kiln` binary, runs it
on the reference interpreter (`kiln eval`) and compares with onnxruntime (CPU) on the same inputs.

Runs on the GPU box (it has torch, torchvision, transformers, onnxscript and onnxruntime, but no
LLVM): in one device call it proves the self-contained binary runs there, that the importer takes
what the TorchScript (opset 17) and dynamo (opset 18+) exporters emit, and that the interpreter
matches onnxruntime. Models have random weights. `kiln eval` runs pinned to two cores (the
interpreter is single-threaded; the figure is comparable with the 2-core development machines).

Prints one table row per (model, exporter): import ok, kiln op count, eval seconds, max abs error
and max relative error (relative to the output's max magnitude). Exit status 1 when any import
fails or any relative error exceeds 1e-4.
"""
import argparse
import os
import re
import subprocess
import sys
import time
import traceback

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import kiln_models as km  # noqa: E402  (model building and export shared with the bench)


SUITE = ["resnet50", "mobilenet_v3_large", "vit_b_16", "bert_base_seq128"]


def build_models():
    """(name, model, inputs, input names) of the suite models at batch 1, built as the bench
    builds them."""
    for name in SUITE:
        model, inputs, names, _ = km.build_suite_model(name, 1)
        yield name, model, inputs, names


def compare_with_onnxruntime(kiln, path, inputs, row):
    """Runs `kiln eval` and onnxruntime on the same inputs; fills row's errors. Returns a problem
    description or None."""
    import onnx
    import onnxruntime as ort

    model = onnx.load(path, load_external_data=False)
    initializers = {t.name for t in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in initializers]
    feeds = {n: t.detach().cpu().numpy() for n, t in zip(names, inputs)}
    out_dir = path + ".out"
    cmd = ["taskset", "-c", "0,1", kiln, "eval", path, "--output-dir", out_dir]
    for n, value in feeds.items():
        np.save(os.path.join(os.path.dirname(path), n + ".npy"), value)
        cmd += ["--input", f"{n}={os.path.join(os.path.dirname(path), n + '.npy')}"]
    start = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace")
    row["seconds"] = f"{time.time() - start:.1f}"
    if proc.returncode != 0:
        return "kiln eval failed: " + proc.stderr.strip()[:300].replace("\n", " | ")
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    expected = session.run(None, feeds)
    worst_abs = worst_rel = 0.0
    for output, want in zip(model.graph.output, expected):
        file = "".join(c if c.isalnum() or c in "_-." else "_" for c in output.name)
        got = np.load(os.path.join(out_dir, file + ".npy"))
        if got.shape != want.shape:
            return f"output {output.name}: shape {got.shape}, onnxruntime {want.shape}"
        diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
        worst_abs = max(worst_abs, float(diff.max()))
        worst_rel = max(worst_rel, float(diff.max() / max(np.abs(want).max(), 1e-30)))
    row["abs"], row["rel"] = f"{worst_abs:.2e}", f"{worst_rel:.2e}"
    return None if worst_rel <= 1e-4 else f"relative error {worst_rel:.2e} above 1e-4"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", required=True)
    parser.add_argument("--work", default="/tmp/kiln-real-models")
    parser.add_argument("--out", default=None, help="folder for the table and logs")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    print(subprocess.run(["ldd", args.kiln], capture_output=True, text=True).stdout.strip())
    print(f"kiln binary: {os.path.getsize(args.kiln) / 1e6:.1f} MB")
    rows, failed = [], 0
    for name, model, inputs, names in build_models():
        for exporter in ("torchscript", "dynamo"):
            path = os.path.join(args.work, f"{name}_{exporter}.onnx")
            row = {"model": name, "exporter": exporter, "ok": False, "ops": "-", "seconds": "-", "note": ""}
            try:
                km.export_onnx(model, inputs, names, path, exporter)
            except Exception as e:  # an export failure is torch's, not kiln's: report it
                row["note"] = "export failed: " + str(e).splitlines()[0][:150]
                traceback.print_exc()
                rows.append(row)
                continue
            proc = subprocess.run([args.kiln, "import", path, "-o", path + ".mlir"],
                                  capture_output=True, text=True, errors="replace")
            if proc.returncode != 0:
                failed += 1
                row["note"] = proc.stderr.strip()[:400].replace("\n", " | ")
                rows.append(row)
                print(f"{name:20s} {exporter:12s} import failed: {row['note']}", flush=True)
                continue
            row["ok"] = True
            m = re.search(r": (\d+) ops", proc.stderr)
            row["ops"] = m.group(1) if m else "?"
            problem = compare_with_onnxruntime(args.kiln, path, inputs, row)
            if problem:
                failed += 1
                row["note"] = problem
            rows.append(row)
            print(f"{name:20s} {exporter:12s} ok={row['ok']} ops={row['ops']} {row['seconds']}s {row['note']}",
                  flush=True)
    table = ["| model | exporter | import ok | kiln ops | eval s (2 cores) | max abs err | max rel err | note |",
             "|---|---|---|---|---|---|---|---|"]
    table += [f"| {r['model']} | {r['exporter']} | {'yes' if r['ok'] else 'NO'} | {r['ops']} | {r['seconds']} | "
              f"{r.get('abs', '-')} | {r.get('rel', '-')} | {r['note']} |" for r in rows]
    print("\n".join(table))
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        open(os.path.join(args.out, "real_models.md"), "w").write("\n".join(table) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
