#!/usr/bin/env python3
"""Plan against plan, and precision under an error budget, on the GPU box (issue: comparing plans).

Two jobs, each on suite models exported here with torch (bench/kiln_models.py builds them as the
suite does):

  --compare model:batch:A:B,...   compiles the model at precisions A and B, dumps every value each
      plan completes on the GPU (`kiln run --dump`, with every step timed alone), takes the
      value graph from the interpreter's fp32 dump (`kiln eval --dump`), and writes `kiln compare`
      of A against B as text, JSON and HTML into the results directory.
  --search-only model:batch,...   only the search of --auto: its time, trials and choice.
  --auto model:batch,...          `kiln compile --precision auto --max-error E --calibration DIR`
      on N random calibration inputs (the search runs the interpreter: no GPU), then measures on
      the GPU what it promised: the plan's output error against strict fp32 on the calibration
      inputs and on held-out ones (interpreter fp32 as the reference), and its time against the
      pure bf16, tf32 and fp32 plans (`kiln bench`, the same run).

  bench/precision_report.py --kiln build-gpu/kiln --results-dir $OUT \\
      --compare resnet50:1:fp32:bf16,bert_base_seq128:1:tf32:bf16 --auto resnet50:1 --max-error 1e-3

--tiny-dumps DIR also writes GPU dumps of the bundled tiny CNN (fp32 and bf16 plans at 2x3x32x32):
the recorded comparison tests/tools/check_compare_report.py renders in CI.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kiln_models as km  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def kiln(opts, *args, timeout=900):
    code, out, err, seconds = km.run_kiln(opts.kiln, [str(a) for a in args], timeout)
    if code != 0:
        raise RuntimeError(f"kiln {' '.join(map(str, args[:3]))} (exit {code}): {km.error_tail(err)}")
    return out, err, seconds


def export(opts, name, batch):
    tag = f"{name}_b{batch}"
    path = os.path.join(opts.work_dir, tag + ".onnx")
    model, inputs, names, _ = km.build_suite_model(name, batch)
    if not os.path.exists(path):
        km.log(f"== {tag}: exporting")
        km.export_onnx(model, inputs, names, path)
    return tag, path, dict(zip(names, [t.numpy() for t in inputs]))


def input_args(feeds, directory):
    os.makedirs(directory, exist_ok=True)
    args = []
    for name, value in feeds.items():
        path = os.path.join(directory, km.sanitize(name) + ".npy")
        np.save(path, value)
        args += ["--input", f"{name}={path}"]
    return args


def similar_feeds(feeds, seed):
    """Fresh inputs like `feeds`: floats with the same mean and spread, integers in the same range."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, value in feeds.items():
        if np.issubdtype(value.dtype, np.integer):
            out[name] = rng.integers(int(value.min()), int(value.max()) + 1, value.shape).astype(value.dtype)
        else:
            out[name] = (rng.standard_normal(value.shape) * float(value.std() or 1) + float(value.mean())).astype(
                value.dtype)
    return out


def compile_plan(opts, onnx, plan, precision, extra=()):
    if not os.path.exists(plan):
        kiln(opts, "compile", onnx, "-o", plan, "--precision", precision, "--quiet", *extra)
    return plan


def compare(opts, case):
    name, batch, a, b = case.split(":")
    tag, onnx, feeds = export(opts, name, int(batch))
    work = os.path.join(opts.work_dir, f"{tag}_{a}_vs_{b}")
    os.makedirs(work, exist_ok=True)
    inputs = input_args(feeds, os.path.join(work, "inputs"))
    plans = {p: compile_plan(opts, onnx, os.path.join(opts.work_dir, f"{tag}_{p}.kiln"), p) for p in (a, b)}
    stem = os.path.join(opts.results_dir, f"compare-{tag}-{a}-vs-{b}")
    kept = os.path.join(work, "dumps")
    shutil.rmtree(kept, ignore_errors=True)
    # The plans themselves: compare runs and dumps each (every step timed alone) and takes the
    # value graph from the model's interpreter dump; the text view then reads the kept dumps.
    out, _, compare_s = kiln(opts, "compare", plans[a], plans[b], *inputs, "--model", onnx, "--json", "--html",
                             stem + ".html", "--keep-dumps", kept, "--timing-cache", opts.timing_cache)
    text, _, _ = kiln(opts, "compare", os.path.join(kept, "a"), os.path.join(kept, "b"), "--edges",
                      os.path.join(kept, "graph"), "--top", "15")
    with open(stem + ".txt", "w") as f:
        f.write(text)
    with open(stem + ".json", "w") as f:
        f.write(out)
    result = json.loads(out)
    measured = [v for v in result["values"] if "max_rel" in v]
    timed = [v for v in result["values"] if "step_a" in v and "step_b" in v]
    km.log(f"   {tag} {a} vs {b}: {len(result['values'])} values ({len(measured)} measured, {len(timed)} with both "
           f"times), steps {result.get('steps_ms')}, culprits {result['culprits'][:5]} (compare {compare_s:.1f} s)")
    print("\n".join(text.splitlines()[:6]))
    return {"case": case, "values": len(result["values"]), "measured": len(measured), "timed_both": len(timed),
            "steps_ms": result.get("steps_ms"), "culprits": result["culprits"], "files": os.path.basename(stem)}


def bench_ms(opts, plan, inputs):
    out, _, _ = kiln(opts, "bench", plan, *inputs, "--json", "--quiet", "--iterations", "50", "--warmup", "10",
                     "--timing-cache", opts.timing_cache)
    figures = json.loads(out.strip().splitlines()[-1])
    return figures["compute_ms"], figures["median_ms"]


def gpu_error(opts, plan, inputs, reference, work, outputs):
    out_dir = os.path.join(work, "out_" + os.path.basename(plan))
    shutil.rmtree(out_dir, ignore_errors=True)
    kiln(opts, "run", plan, *inputs, "--output-dir", out_dir, "--timing-cache", opts.timing_cache)
    return km.worst_metrics(km.load_kiln_outputs(out_dir, outputs), reference)


def interpreter_outputs(opts, onnx, inputs, work, outputs):
    out_dir = os.path.join(work, "reference")
    shutil.rmtree(out_dir, ignore_errors=True)
    kiln(opts, "eval", onnx, *inputs, "--output-dir", out_dir, "--quiet")
    return km.load_kiln_outputs(out_dir, outputs)


def auto(opts, case, search_only=False):
    name, batch = case.split(":")
    tag, onnx, feeds = export(opts, name, int(batch))
    work = os.path.join(opts.work_dir, f"{tag}_auto")
    shutil.rmtree(work, ignore_errors=True)
    calib = os.path.join(work, "calibration")
    for s in range(opts.calibration):
        input_args(similar_feeds(feeds, 100 + s), os.path.join(calib, f"sample{s}"))
    held_out = input_args(similar_feeds(feeds, 999), os.path.join(work, "held_out"))
    calib0 = input_args(similar_feeds(feeds, 100), os.path.join(work, "calib0"))
    plan = os.path.join(work, f"{tag}_auto.kiln")
    report = os.path.join(opts.results_dir, f"precision-auto-{tag}{'-search-only' if search_only else ''}.json")
    _, err, search_s = kiln(opts, "compile", onnx, "-o", plan, "--precision", "auto", "--max-error", opts.max_error,
                            "--calibration", calib, "--precision-report", report)
    km.log("\n".join("   " + line for line in err.splitlines() if "auto" in line or "error" in line)[-3000:])
    choice = json.load(open(report))["choice"]
    result = {"model": tag, "max_error": float(opts.max_error), "compile_with_search_s": round(search_s, 1),
              "search_s": choice["seconds"], "choice": {k: v for k, v in choice.items() if k != "trials"},
              "trials": len(choice["trials"]), "threads": os.cpu_count()}
    chosen = (f"   {tag}: auto -> {choice['precision']} with {len(choice['fp32_nodes'])} fp32 nodes, search "
              f"{choice['seconds']:.1f} s (compile {search_s:.1f} s), {len(choice['trials'])} trials")
    if search_only:
        with open(report, "w") as f:
            json.dump({"summary": result, "choice": choice}, f, indent=2)
        km.log(chosen)
        return result
    import onnx as onnx_lib
    outputs = [o.name for o in onnx_lib.load(onnx, load_external_data=False).graph.output]
    plans = {"auto": plan}
    for p in filter(None, opts.against.split(",")):
        plans[p] = compile_plan(opts, onnx, os.path.join(opts.work_dir, f"{tag}_{p}.kiln"), p)
    refs = {"calibration input 0": (calib0, interpreter_outputs(opts, onnx, calib0, work, outputs)),
            "held-out input": (held_out, interpreter_outputs(opts, onnx, held_out, work, outputs))}
    rows = {}
    for label, p in plans.items():
        row = rows[label] = {}
        for where, (inputs, reference) in refs.items():
            rel, cos = gpu_error(opts, p, inputs, reference, work, outputs)
            row[f"error {where}"] = rel
            row[f"cosine {where}"] = cos
        row["gpu_ms"], row["request_ms"] = bench_ms(opts, p, held_out)
    for label, row in rows.items():
        row["gpu_ms_vs_auto"] = row["gpu_ms"] / rows["auto"]["gpu_ms"]
    result.update({"plans": rows, "reference": "kiln eval (interpreter, strict fp32) of the same inputs"})
    with open(report, "w") as f:
        json.dump({"summary": result, "choice": choice}, f, indent=2)
    km.log(chosen + "; " + "; ".join(
        f"{k} {v['gpu_ms']:.3f} ms err {v['error held-out input']:.2e}" for k, v in rows.items()))
    return result


def tiny_dumps(opts, directory):
    model = os.path.join(ROOT, "examples", "tiny_cnn.onnx")
    for p in ("fp32", "bf16"):
        plan = os.path.join(opts.work_dir, f"tiny_{p}.kiln")
        kiln(opts, "compile", model, "-o", plan, "--precision", p, "--shape", "image=2x3x32x32", "--quiet")
        target = os.path.join(opts.work_dir, "tiny_dumps", p)
        shutil.rmtree(target, ignore_errors=True)
        kiln(opts, "run", plan, "--dump", target, "--timing-cache", opts.timing_cache)
    # One archive: few files come back from the GPU box.
    subprocess.run(["tar", "-czf", os.path.join(directory, "tiny_cnn_gpu_dumps.tgz"), "-C",
                    os.path.join(opts.work_dir, "tiny_dumps"), "fp32", "bf16"], check=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--results-dir", required=True)
    ap.add_argument("--work-dir", default="/tmp/kiln-precision")
    ap.add_argument("--compare", default="")
    ap.add_argument("--auto", default="")
    ap.add_argument("--search-only", default="", help="model:batch,...: only the search (its time and choice)")
    ap.add_argument("--against", default="bf16,tf32,fp32",
                    help="--auto: the pure plans timed and measured beside the auto one ('' for none)")
    ap.add_argument("--max-error", default="1e-3")
    ap.add_argument("--calibration", type=int, default=2, help="calibration inputs (random, like the suite's)")
    ap.add_argument("--tiny-dumps", default="")
    opts = ap.parse_args()
    os.makedirs(opts.work_dir, exist_ok=True)
    os.makedirs(opts.results_dir, exist_ok=True)
    opts.timing_cache = os.path.join(opts.work_dir, "timing_cache.txt")
    summary = {"compare": [], "auto": [], "errors": []}
    summary_path = os.path.join(opts.results_dir, "precision-report-summary.json")

    def save_summary():  # after every case: a call that runs out of time keeps what finished
        with open(summary_path, "w") as f:
            json.dump(summary, f, indent=2)
    if opts.tiny_dumps:
        os.makedirs(opts.tiny_dumps, exist_ok=True)
        tiny_dumps(opts, opts.tiny_dumps)
    jobs = [("compare", "compare", opts.compare, compare), ("auto", "auto", opts.auto, auto),
            ("auto", "search", opts.search_only, lambda o, case: auto(o, case, search_only=True))]
    for key, what, cases, run in jobs:
        for case in filter(None, cases.split(",")):
            try:
                summary[key].append(run(opts, case))
            except Exception as e:  # one case failing must not hide the others
                summary["errors"].append(f"{what} {case}: {e}")
                km.log(f"FAILED {what} {case}: {e}")
            save_summary()
    save_summary()  # also when no case ran
    return 1 if summary["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
