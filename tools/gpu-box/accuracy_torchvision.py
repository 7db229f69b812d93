#!/usr/bin/env python3
"""Accuracy of Kiln's half-precision plans over torchvision's classification models, on the GPU box.

For each model (random weights with a fixed seed, eval mode, batch 1, 224x224; degenerate
initial parameters such as ViT's zero head and ConvNeXt's 1e-6 layer scales re-drawn, or the
check would be vacuous): export ONNX (TorchScript exporter, opset 17; --exporter dynamo for the
dynamo exporter, opset 18), compute onnxruntime's fp32 CPU outputs on fixed random inputs,
`kiln compile --precision P` with the GPU hidden for every P of --precisions (bf16 and fp16 by
default, in parallel), `kiln run` each plan on the same inputs and compare with onnxruntime:
max relative error (max |kiln - ort| / max |ort|) and cosine similarity (flattened, float64),
worst over outputs. Bounds: bf16 3e-2, fp16 1e-2 (fp32 1e-3, tf32 1e-2), cosine >= 0.999 for
bf16/fp16.

Models run in parallel, each in its own worker process (--workers; onnxruntime and kiln compile
are CPU work, `kiln run` of a batch-1 model shares the one GPU well), so that a crash or a hang
in one model (killed after --model-timeout) costs only that model. No new model starts after
--max-seconds; those not started are listed. One line per (model, precision) as models finish,
then a table, every miss with its reason (compile error, run error, or the error figures), and
JSON (--json). Exit status 1 when any model missed or did not run.

inception_v3 runs at 299x299, its native size (it also runs at 224, but 299 is what it is used
at, and Kiln's static shapes make another size no harder). Every other model runs at 224.

Which models, and why (measured on a 2-core CPU machine with torch 2.11.0+cu130 (CPU),
torchvision 0.26, onnxscript 0.7.2, onnx 1.23, onnxruntime 1.32; --check-exporters reproduces
it: it exports every model with both exporters and checks onnxruntime against torch):

  - All 80 classifiers of torchvision.models.list_models(module=torchvision.models) export with
    both exporters (TorchScript opset 17, dynamo opset 18), and onnxruntime on every export agrees
    with torch's own fp32 output (max rel err 1e-7 to 1e-4; the few near 1e-4, resnext101_32x8d's
    TorchScript export at 1.05e-4 just over --check-exporters' flag, were deep residual nets run
    with measured BatchNorm statistics, the chaotic case condition_batchnorm now avoids). None
    fails to export.
  - Times, one thread per model, two models at once on 2 cores: build 4 s (median), TorchScript
    export 1.4-39 s (median 5.7 s, 685 s for all 80), onnxruntime 0.1-12 s (median 1.1 s); dynamo
    export 4-160 s (median 16 s, 1960 s for all 80: swin_s/b and swin_v2_s/b take ~150 s each),
    hence the TorchScript exporter as the sweep's default. The whole sweep without its GPU steps
    (worker start, build, export, onnxruntime, two kiln compiles): 7-15 s per small model on 2
    cores. On the box (5 workers x 3 threads, plus `kiln run` and torch's yardstick on the GPU)
    the 78 default models should take 5-7 minutes; --max-seconds 360 (default) stops starting
    new ones before that, the heaviest last, and lists them.
  - Left out of the default list: vit_h_14 and regnet_y_128gf (see EXCLUDED: 2.5 GB of weights).
  - Random models are conditioned before the check (bench/kiln_models.py, condition_batchnorm):
    ViT's zero head and ConvNeXt's 1e-6 layer scales re-drawn; BatchNorm statistics chosen so
    that activations neither overflow nor underflow fp16, outputs depend on the input, and a
    1e-6 input change is not amplified (measured statistics make deep residual nets chaotic:
    resnet50's bf16 error would be 13% in torch itself). For 7 models no choice fits
    (UNFIT_AT_RANDOM, run last: inception_v3 and resnet152 overflow fp16 with the initial
    statistics and turn chaotic with measured ones; EfficientNet b4/b5/b7 and v2_l underflow);
    their misses carry that note.
  - Every miss also shows torch's own error at that precision on the GPU (weights and inputs in
    the dtype) as a yardstick: a miss that torch shares is the model's, one it does not is Kiln's.

Usage (GPU box):
  python3 tools/gpu-box/accuracy_torchvision.py --kiln build-gpu/kiln --json $OUT/accuracy_torchvision.json
  ... --models resnet50,vit_b_16 --precisions bf16,fp16,tf32 --max-seconds 300 --workers 5
Without a GPU or kiln (exercises export, onnxruntime and the metrics; the candidate is then
torch on the CPU with weights and inputs in the precision):
  python3 tools/gpu-box/accuracy_torchvision.py --no-kiln --models resnet18
Which models both exporters handle:
  python3 tools/gpu-box/accuracy_torchvision.py --check-exporters [--models all]
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import kiln_models as km  # noqa: E402  (shared with bench/gpu_suite.py)

# Every torchvision classifier that both exporters export (see above) but the two giants. First
# the cheapest model of each family, so that a run cut short by --max-seconds still covers every
# kind of op; then the others, cheapest first; last the models no random initialization makes
# fit for half precision (fit_for_half in bench/kiln_models.py; their misses say so).
FIRST_OF_EACH_FAMILY = [
    "resnet18", "mobilenet_v2", "mobilenet_v3_small", "mnasnet0_5", "shufflenet_v2_x0_5", "squeezenet1_1",
    "efficientnet_b0", "efficientnet_v2_s", "regnet_x_400mf", "regnet_y_400mf", "densenet121", "googlenet",
    "resnext50_32x4d", "wide_resnet50_2", "alexnet", "vgg11_bn", "convnext_tiny", "swin_t", "swin_v2_t",
    "maxvit_t", "vit_b_32"]
THE_OTHERS = [
    "mobilenet_v3_large", "resnet34", "resnet50", "squeezenet1_0", "mnasnet0_75", "mnasnet1_0", "mnasnet1_3",
    "shufflenet_v2_x1_0", "shufflenet_v2_x1_5", "shufflenet_v2_x2_0", "regnet_x_800mf", "regnet_y_800mf",
    "regnet_x_1_6gf", "regnet_y_1_6gf", "regnet_x_3_2gf", "regnet_y_3_2gf", "efficientnet_b1", "efficientnet_b2",
    "efficientnet_b3", "densenet169", "densenet161", "densenet201", "vit_b_16", "resnet101", "regnet_x_8gf",
    "regnet_y_8gf", "vgg11", "vgg13", "vgg13_bn", "vgg16", "vgg16_bn", "vgg19", "vgg19_bn", "convnext_small",
    "swin_s", "swin_v2_s", "resnext101_64x4d", "resnext101_32x8d", "efficientnet_v2_m", "regnet_x_16gf",
    "regnet_y_16gf", "convnext_base", "swin_b", "swin_v2_b", "efficientnet_b6", "regnet_x_32gf", "regnet_y_32gf",
    "convnext_large", "vit_l_32", "vit_l_16"]
UNFIT_AT_RANDOM = ["inception_v3", "resnet152", "wide_resnet101_2", "efficientnet_b4", "efficientnet_b5",
                   "efficientnet_b7", "efficientnet_v2_l"]
DEFAULT_MODELS = FIRST_OF_EACH_FAMILY + THE_OTHERS + UNFIT_AT_RANDOM

# torchvision classifiers left out of the default list, and why (they can still be named with
# --models).
EXCLUDED = {
    "vit_h_14": "2.5 GB of weights (beyond protobuf's 2 GB: external data); export + onnxruntime alone take "
                "~50 s on 2 cores and its plans GBs of the box's disk: too heavy for a sweep's time budget",
    "regnet_y_128gf": "2.6 GB of weights, as vit_h_14",
}


def stage_log(stage):
    """A progress line in the worker's log: what the scheduler reports when a worker is killed."""
    print(f"stage: {stage}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# Worker side: one model, in its own process.

class ResultFile:
    """The worker's result, rewritten after every step so a killed worker still reports what it
    finished."""

    def __init__(self, path, result):
        self.path, self.result = path, result
        self.save()

    def save(self):
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.result, f, indent=1)
        os.replace(tmp, self.path)


def short_exception(e):
    text = f"{type(e).__name__}: {e}".strip()
    return " | ".join(text.splitlines()[:6])[:600]


def torch_outputs(model, inputs, precision, device):
    """The outputs of torch itself with weights and float inputs in the precision's dtype (fp32
    math for fp32/tf32), on the device. On the GPU it is the yardstick for a miss: how far torch's
    own half precision lands from onnxruntime on this model. With --no-kiln it stands in for the
    plan on the CPU, to exercise the metrics and preview each model's error."""
    import copy
    import torch
    dtype = km.torch_dtype(precision)
    with torch.no_grad():
        candidate = copy.deepcopy(model).to(device=device, dtype=dtype)
        out = candidate(*[(t.to(dtype) if t.is_floating_point() else t).to(device) for t in inputs])
        outs = [o.float().cpu().numpy() for o in (out if isinstance(out, (tuple, list)) else [out])]
    del candidate
    return outs


def judge_candidate(row, outputs, reference, precision, prefix=""):
    """Fills row with the metrics of outputs against the reference (keys prefixed for the
    yardstick); the plain candidate also gets accurate and, on a miss, error."""
    rel, cosine = km.worst_metrics(outputs, reference)
    row[prefix + "max_rel_err"], row[prefix + "cosine"] = rel, cosine
    if prefix:
        return
    problem = km.judge(precision, rel, cosine)
    row["accurate"] = problem is None
    if problem:
        row["error"] = "accuracy: " + problem


def sweep_one(opts, name, result_path):
    """Build, export, reference, compile and run one model; rows go to the result file."""
    import torch
    torch.set_num_threads(opts.threads)
    work = os.path.join(opts.work_dir, name)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    try:
        sweep_in(opts, name, result_path, work)
    finally:
        if not opts.keep:  # ONNX files and plans of ~80 models would fill the box's disk
            shutil.rmtree(work, ignore_errors=True)
    stage_log("done")


def sweep_in(opts, name, result_path, work):
    """sweep_one's steps, in the model's work folder."""
    import torch
    result = ResultFile(result_path, {"model": name, "exporter": opts.exporter, "times": {}, "rows": []})
    times = result.result["times"]

    def fail_all(stage, message):
        for precision in opts.precisions:
            result.result["rows"].append({"model": name, "precision": precision, "error": f"{stage}: {message}"})
        result.save()

    stage_log("build")
    start = time.perf_counter()
    try:
        model, inputs, names, prepared = km.build_torchvision(name, 1)
    except Exception as e:
        return fail_all("build", short_exception(e))
    result.result.update(input_size=list(inputs[0].shape), prepared=prepared)
    times["build_s"] = round(time.perf_counter() - start, 2)

    stage_log(f"export ({opts.exporter})")
    onnx_path = os.path.join(work, "model.onnx")
    start = time.perf_counter()
    try:
        km.export_onnx(model, inputs, names, onnx_path, opts.exporter)
    except Exception as e:
        traceback.print_exc()
        return fail_all(f"export ({opts.exporter})", short_exception(e))
    times["export_s"] = round(time.perf_counter() - start, 2)
    result.save()

    feeds = dict(zip(km.onnx_input_names(onnx_path), [t.numpy() for t in inputs]))
    compile_job = None
    if not opts.no_kiln:
        stage_log("kiln compile " + ",".join(opts.precisions))
        input_args = km.save_inputs(feeds, work, "in")
        plans = {p: os.path.join(work, f"{p}.kiln") for p in opts.precisions}
        compile_job = km.ParallelCompile(opts.kiln, onnx_path, plans, opts.step_timeout).start()

    stage_log("onnxruntime")
    start = time.perf_counter()
    try:
        reference, output_names = km.onnxruntime_outputs(onnx_path, feeds, opts.threads)
    except Exception as e:
        if compile_job:
            compile_job.wait()
        return fail_all("onnxruntime", short_exception(e))
    times["onnxruntime_s"] = round(time.perf_counter() - start, 2)
    result.save()

    compiled = compile_job.wait() if compile_job else {}
    for precision in opts.precisions:
        row = {"model": name, "precision": precision}
        result.result["rows"].append(row)
        if opts.no_kiln:
            stage_log(f"torch cpu {precision}")
            try:
                judge_candidate(row, torch_outputs(model, inputs, precision, "cpu"), reference, precision)
            except Exception as e:
                row["error"] = "torch cpu: " + short_exception(e)
            result.save()
            continue
        if torch.cuda.is_available():
            stage_log(f"torch cuda {precision}")
            try:
                judge_candidate(row, torch_outputs(model, inputs, precision, "cuda"), reference, precision, "torch_")
            except Exception as e:  # a yardstick, not the subject: note it and go on
                row["torch_error"] = short_exception(e)
        problem, row["compile_s"] = compiled[precision]
        if problem:
            row["error"] = problem
            result.save()
            continue
        stage_log(f"kiln run {precision}")
        out_dir = os.path.join(work, f"out_{precision}")
        row.update(km.kiln_accuracy(opts.kiln, plans[precision], input_args, out_dir, output_names, reference,
                                    precision, opts.step_timeout))
        result.save()


def check_exporters_one(opts, name, result_path):
    """Exports one model with both exporters and checks each ONNX file under onnxruntime against
    torch's own fp32 output; records the time of every step (what the default list rests on)."""
    import torch
    torch.set_num_threads(opts.threads)
    work = os.path.join(opts.work_dir, name)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    result = ResultFile(result_path, {"model": name})
    r = result.result
    stage_log("build")
    start = time.perf_counter()
    model, inputs, names, prepared = km.build_torchvision(name, 1)
    r.update(build_s=round(time.perf_counter() - start, 2), prepared=prepared, input_size=list(inputs[0].shape),
             params_m=round(sum(p.numel() for p in model.parameters()) / 1e6, 1))
    with torch.no_grad():
        expected = model(*inputs).numpy()
    result.save()
    for exporter in ("torchscript", "dynamo"):
        stage_log(f"export ({exporter})")
        entry = r[exporter] = {}
        path = os.path.join(work, f"{exporter}.onnx")
        start = time.perf_counter()
        try:
            km.export_onnx(model, inputs, names, path, exporter)
        except Exception as e:
            traceback.print_exc()
            entry["error"] = "export: " + short_exception(e)
            result.save()
            continue
        entry["export_s"] = round(time.perf_counter() - start, 2)
        entry["onnx_mb"] = round(sum(os.path.getsize(os.path.join(work, f)) for f in os.listdir(work)
                                     if f.startswith(exporter)) / 1e6, 1)
        stage_log(f"onnxruntime ({exporter})")
        start = time.perf_counter()
        try:
            feeds = dict(zip(km.onnx_input_names(path), [t.numpy() for t in inputs]))
            got, _ = km.onnxruntime_outputs(path, feeds, opts.threads)
            entry["onnxruntime_s"] = round(time.perf_counter() - start, 2)
            entry["rel_vs_torch"], entry["cosine_vs_torch"] = km.error_metrics(got[0], expected)
            if not entry["rel_vs_torch"] <= 1e-4:
                entry["error"] = f"onnxruntime differs from torch: max rel err {entry['rel_vs_torch']:.2e}"
        except Exception as e:
            entry["error"] = "onnxruntime: " + short_exception(e)
        result.save()
        for f in os.listdir(work):
            if f.startswith(exporter):
                os.remove(os.path.join(work, f))
    shutil.rmtree(work, ignore_errors=True)
    stage_log("done")


# ---------------------------------------------------------------------------------------------
# Scheduler side: no torch here; it starts workers, kills the late ones and reports.

class Worker:
    def __init__(self, opts, name, mode):
        self.name = name
        self.result_path = os.path.join(opts.work_dir, f"{name}.result.json")
        self.log_path = os.path.join(opts.work_dir, f"{name}.log")
        for path in (self.result_path, self.log_path):
            if os.path.exists(path):
                os.remove(path)
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", mode, "--worker-model", name,
               "--worker-result", self.result_path] + opts.forward
        self.log = open(self.log_path, "w")
        # Its own session: a timeout kills the worker and the kiln processes it started.
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        self.start = time.perf_counter()

    def kill(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()

    def last_stage(self):
        stages = [line[7:].strip() for line in self.log_lines() if line.startswith("stage: ")]
        return stages[-1] if stages else "start"

    def log_lines(self):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read().splitlines()
        except OSError:
            return []

    def finish(self, killed_reason=None):
        """The worker's result; what it did not finish gets an error saying why."""
        self.log.close()
        seconds = round(time.perf_counter() - self.start, 1)
        try:
            with open(self.result_path) as f:
                result = json.load(f)
        except (OSError, ValueError):
            result = {"model": self.name}
        result["seconds"] = seconds
        if killed_reason:
            result["worker_error"] = f"{killed_reason} during {self.last_stage()}"
        elif self.proc.returncode != 0:
            tail = " | ".join(line for line in self.log_lines()[-6:])[-600:]
            result["worker_error"] = f"worker exit {self.proc.returncode} during {self.last_stage()}: {tail}"
        return result


def schedule(opts, names, mode, on_result):
    """Runs up to --workers models at once; returns the names never started (time budget)."""
    pending, running = list(names), []
    t0 = time.perf_counter()
    not_run = []
    while pending or running:
        elapsed = time.perf_counter() - t0
        if pending and elapsed >= opts.max_seconds:
            not_run, pending = pending, []
        while pending and len(running) < opts.workers:
            running.append(Worker(opts, pending.pop(0), mode))
        time.sleep(0.2)
        for worker in list(running):
            reason = None
            if worker.proc.poll() is None:
                if time.perf_counter() - worker.start < opts.model_timeout:
                    continue
                worker.kill()
                reason = f"killed after --model-timeout {opts.model_timeout:g} s"
                if not opts.keep:
                    shutil.rmtree(os.path.join(opts.work_dir, worker.name), ignore_errors=True)
            running.remove(worker)
            on_result(worker.finish(reason))
    return not_run


def unfit_note(result):
    """Why a miss may be the random model's rather than the plan's, when no BatchNorm statistics
    made it fit for half precision."""
    prepared = result.get("prepared") or {}
    if "none fit" not in prepared.get("batchnorm", ""):
        return ""
    c = prepared["conditioning"]
    return (f"random model unfit for half precision: output max {c['output_max']:.2g}, max activation "
            f"{c['max_activation']:.2g}, 1e-6 input change amplified {c['amplification']:.2g}x")


def fill_missing_rows(result, precisions):
    """Rows for every precision: one a dead worker never reached says what stopped it."""
    rows = {r["precision"]: r for r in result.get("rows", [])}
    out = []
    for p in precisions:
        row = rows.get(p) or {"model": result["model"], "precision": p}
        if "accurate" not in row and "error" not in row:
            row["error"] = result.get("worker_error", "no result")
        if row.get("error", "").startswith("accuracy") and unfit_note(result):
            row["error"] += " (" + unfit_note(result) + ")"
        out.append(row)
    return out


def fmt(value, spec):
    return "-" if value is None else format(value, spec)


def yardstick(row):
    """torch's own figures at the row's precision, for judging a miss."""
    if "torch_max_rel_err" in row:
        return f"torch {row['precision']}: rel {row['torch_max_rel_err']:.2e} cos {row['torch_cosine']:.6f}"
    return f"torch {row['precision']}: {row['torch_error']}" if "torch_error" in row else ""


def row_line(row):
    status = "ok  " if row.get("accurate") else "MISS"
    figures = f"rel {fmt(row.get('max_rel_err'), '.2e'):>8}  cos {fmt(row.get('cosine'), '.6f'):>8}"
    notes = [n for n in (row.get("error"), yardstick(row)) if n]
    return f"{row['model']:<20} {row['precision']:<5} {status} {figures}" + ("  " + "; ".join(notes) if notes else "")


def write_json(path, payload):
    if not path:
        return
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(payload, f, indent=1)
    os.replace(tmp, path)


def run_sweep(opts, names):
    started = time.perf_counter()
    results, rows = [], []
    payload = {"kind": "accuracy_torchvision", "kiln": None if opts.no_kiln else os.path.abspath(opts.kiln),
               "candidate": "torch-cpu" if opts.no_kiln else "kiln", "exporter": opts.exporter,
               "precisions": opts.precisions, "bounds": {p: km.BOUNDS[p] for p in opts.precisions},
               "models_requested": names, "results": results, "rows": rows, "complete": False}

    def on_result(result):
        result["rows"] = fill_missing_rows(result, opts.precisions)
        results.append(result)
        rows.extend(result["rows"])
        t = result.get("times", {})
        timing = " ".join(f"{k[:-2]} {v:.1f}s" for k, v in t.items())
        for row in result["rows"]:
            extra = f"  [{timing + '; ' if timing else ''}{result['seconds']} s in all]" if row is result["rows"][-1] else ""
            print(row_line(row) + extra, flush=True)
        payload["elapsed_s"] = round(time.perf_counter() - started, 1)
        write_json(opts.json, payload)

    print(f"== {len(names)} models, precisions {','.join(opts.precisions)}, exporter {opts.exporter}, "
          f"{opts.workers} workers x {opts.threads} threads, budget {opts.max_seconds} s", flush=True)
    not_run = schedule(opts, names, "sweep", on_result)
    payload.update(not_run=not_run, complete=not not_run, elapsed_s=round(time.perf_counter() - started, 1))
    write_json(opts.json, payload)
    order = {n: i for i, n in enumerate(names)}
    rows.sort(key=lambda r: (order.get(r["model"], 0), opts.precisions.index(r["precision"])))
    print_sweep_report(opts, rows, not_run)
    if opts.json:
        print(f"wrote {opts.json}", flush=True)
    return 1 if not_run or any(not r.get("accurate") for r in rows) else 0


def print_sweep_report(opts, rows, not_run):
    print("\n| model | precision | max rel err | cosine | within bounds | torch max rel err | torch cosine |\n"
          "|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} | {r['precision']} | {fmt(r.get('max_rel_err'), '.2e')} | "
              f"{fmt(r.get('cosine'), '.6f')} | {'yes' if r.get('accurate') else 'NO'} | "
              f"{fmt(r.get('torch_max_rel_err'), '.2e')} | {fmt(r.get('torch_cosine'), '.6f')} |")
    misses = [r for r in rows if not r.get("accurate")]
    for p in opts.precisions:
        ran = [r for r in rows if r["precision"] == p]
        print(f"{p}: {sum(1 for r in ran if r.get('accurate'))}/{len(ran)} within bounds "
              f"(max rel err <= {km.BOUNDS[p][0]:g}" + (f", cosine >= {km.BOUNDS[p][1]}" if km.BOUNDS[p][1] else "")
              + ")")
    if misses:
        print(f"\n{len(misses)} misses:")
        for r in misses:
            print(f"  {r['model']} {r['precision']}: {r.get('error', 'no result')}"
                  + (f" ({yardstick(r)})" if yardstick(r) else ""))
    if not_run:
        print(f"\nnot run (--max-seconds {opts.max_seconds} s spent before they could start): {', '.join(not_run)}")
    skipped = {n: why for n, why in EXCLUDED.items() if n not in {r['model'] for r in rows} and n not in not_run}
    if skipped and opts.default_list:
        print("\nnot in the default list:")
        for n, why in skipped.items():
            print(f"  {n}: {why}")
    sys.stdout.flush()


def run_check_exporters(opts, names):
    results = []
    payload = {"kind": "check_exporters", "results": results, "complete": False}

    def on_result(result):
        results.append(result)
        parts = [f"{result['model']:<20} {result.get('params_m', '-')}M build {result.get('build_s', '-')}s"]
        for exporter in ("torchscript", "dynamo"):
            e = result.get(exporter)
            if e is None:
                parts.append(f"{exporter}: not reached")
            elif "error" in e:
                parts.append(f"{exporter}: FAIL {e['error'][:300]}")
            else:
                parts.append(f"{exporter}: ok export {e['export_s']}s ort {e['onnxruntime_s']}s "
                             f"{e['onnx_mb']}MB rel {e['rel_vs_torch']:.1e}")
        if "worker_error" in result:
            parts.append("WORKER: " + result["worker_error"])
        print(" | ".join(parts) + f" | {result['seconds']}s", flush=True)
        write_json(opts.json, payload)

    not_run = schedule(opts, names, "check", on_result)
    payload.update(not_run=not_run, complete=not not_run)
    write_json(opts.json, payload)
    both = [r["model"] for r in results if all(r.get(e) and "error" not in r[e] for e in ("torchscript", "dynamo"))
            and "worker_error" not in r]
    print(f"\nboth exporters ok ({len(both)}): {', '.join(sorted(both))}")
    if not_run:
        print(f"not run: {', '.join(not_run)}")
    return 0


def all_classifiers():
    import torchvision
    return torchvision.models.list_models(module=torchvision.models)


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kiln", help="the kiln binary (build-gpu/kiln on the GPU box)")
    parser.add_argument("--models", default="", help="comma list, or 'all' (every torchvision classifier); "
                                                     "default: the list in this file")
    parser.add_argument("--precisions", default="bf16,fp16")
    parser.add_argument("--exporter", choices=["torchscript", "dynamo"], default="torchscript")
    parser.add_argument("--workers", type=int, default=max(1, min(5, (os.cpu_count() or 2) // 3)),
                        help="models at once (default: cores / 3, at most 5)")
    parser.add_argument("--threads", type=int, default=0,
                        help="torch and onnxruntime threads per worker (default: cores / workers)")
    parser.add_argument("--max-seconds", type=float, default=360.0,
                        help="start no model after this many seconds (running ones finish, up to --model-timeout)")
    parser.add_argument("--model-timeout", type=float, default=150.0, help="kill a model's worker after this")
    parser.add_argument("--step-timeout", type=float, default=120.0, help="limit of one kiln compile or run")
    parser.add_argument("--work-dir", default="/tmp/kiln-accuracy")
    parser.add_argument("--json", default=None, help="results file (default: <work-dir>/accuracy_torchvision.json)")
    parser.add_argument("--no-kiln", action="store_true",
                        help="no kiln: torch on the CPU in the precision stands in for the plan (dry run)")
    parser.add_argument("--check-exporters", action="store_true",
                        help="export every model with both exporters, check onnxruntime against torch")
    parser.add_argument("--keep", action="store_true", help="keep each model's ONNX, plans and outputs")
    parser.add_argument("--worker", choices=["sweep", "check"], help=argparse.SUPPRESS)
    parser.add_argument("--worker-model", help=argparse.SUPPRESS)
    parser.add_argument("--worker-result", help=argparse.SUPPRESS)
    opts = parser.parse_args(argv)
    opts.precisions = [p for p in opts.precisions.split(",") if p]
    unknown = [p for p in opts.precisions if p not in km.BOUNDS]
    if unknown:
        parser.error(f"unknown precision(s) {unknown}; known: {list(km.BOUNDS)}")
    if not opts.no_kiln and not opts.check_exporters and opts.worker != "check" and not opts.kiln:
        parser.error("--kiln is needed (or --no-kiln for a dry run)")
    if opts.kiln:
        opts.kiln = os.path.abspath(opts.kiln)
    opts.workers = max(1, opts.workers)
    opts.threads = opts.threads or max(1, (os.cpu_count() or 2) // opts.workers)
    opts.json = opts.json or os.path.join(opts.work_dir, "accuracy_torchvision.json")
    # What a worker needs of these options, passed on its command line.
    opts.forward = ["--precisions", ",".join(opts.precisions), "--exporter", opts.exporter, "--threads",
                    str(opts.threads), "--work-dir", opts.work_dir, "--step-timeout", str(opts.step_timeout)]
    opts.forward += (["--kiln", opts.kiln] if opts.kiln else []) + (["--no-kiln"] if opts.no_kiln else []) + (
        ["--keep"] if opts.keep else [])
    return opts


def main(argv=None):
    opts = parse_args(argv if argv is not None else sys.argv[1:])
    if opts.worker:
        work = sweep_one if opts.worker == "sweep" else check_exporters_one
        work(opts, opts.worker_model, opts.worker_result)
        return 0
    os.makedirs(opts.work_dir, exist_ok=True)
    opts.default_list = not opts.models
    if opts.models == "all":
        names = all_classifiers()
    elif opts.models:
        names = [m for m in opts.models.split(",") if m]
    else:
        names = list(DEFAULT_MODELS)
    if opts.check_exporters:
        return run_check_exporters(opts, names)
    return run_sweep(opts, names)


if __name__ == "__main__":
    sys.exit(main())
