#!/usr/bin/env python3
"""Kiln against torch.compile at each precision on the suite models, on the GPU box.

For each suite model and batch size: build the torch model (random weights, fixed seed), export
ONNX once (TorchScript exporter, opset 17), `kiln compile` it at every precision of --precisions
in parallel with the GPU hidden, compute onnxruntime's fp32 CPU outputs on the same inputs
meanwhile, then per precision

  accuracy  `kiln run` against onnxruntime: max relative error (max |kiln - ort| / max |ort|) and
            cosine similarity, worst over outputs; bounds fp32 1e-3, tf32 1e-2, bf16 3e-2,
            fp16 1e-2, cosine >= 0.999 for bf16/fp16, >= 0.995 fp8, >= 0.99 int8; an 8-bit
            plan below its bound at batch 1 (every 8-bit plan at batch 1 with --culprits) gets
            `kiln compare`'s culprits against the interpreter's fp32 evaluation (the values
            where the error grows most), and the plan against the interpreter's exact
            emulation of the same 8-bit module (same calibration): where the GPU's kernels
            depart from what the plan should compute, apart from the quantization itself
  kiln      `kiln bench --json`: compute_ms is Kiln's GPU time (CUDA events around the
            CUDA-graph replay of each request), median_ms the whole request (pinned host input
            -> GPU -> host output); then `kiln profile --json`: the bottleneck step with its
            share, the slowest steps and the time by op are kept with the row
  compile   torch.compile(mode="reduce-overhead") of the same model at the same precision:
            fp32 (TF32 off), tf32 (TF32 on for matmul and cuDNN), bf16/fp16 (weights and float
            inputs in that dtype; channels_last model and image for the CNNs). GPU time: inputs
            already on the device, calls back to back with a CUDA event pair around each, median
            per call after warm-up; request time: host tensors in, every output back on the host
  eager     the same, uncompiled (--eager; off by default)

The table and JSON give per (model, batch, precision): Kiln GPU ms, torch.compile GPU ms, their
ratio, Kiln's ratio to its own tf32 plan (bf16/fp16 rows: the issue asks <= 0.6 for bf16 on
vit_b_16 b64 and bert_base_seq128 b32), both request times, and Kiln's accuracy (torch's own
error against onnxruntime at that precision is in the JSON as a yardstick). Results go to
<results-dir>/<date>_<gpu>[_<tag>].json, rewritten after every model so a run cut short keeps
what it measured. Medians over --iterations calls after --warmup calls.

Usage (GPU box):
  python3 bench/gpu_suite.py --kiln build-gpu/kiln --tag mixed-precision [--models resnet50:1,vit_b_16:64]
      [--precisions fp32,tf32,bf16,fp16] [--eager] [--max-seconds 420]
Elsewhere:
  python3 bench/gpu_suite.py --merge a.json b.json --tag mixed-precision   # one file from several runs
  python3 bench/gpu_suite.py --device cpu --models resnet18:1 [--kiln build/tools/kiln]
      # dry run without a GPU: torch paths timed on the CPU; kiln run/bench then report errors
"""
import argparse
import copy
import datetime
import json
import os
import shutil
import shlex
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kiln_models as km  # noqa: E402  (shared with tools/gpu-box/accuracy_torchvision.py)

SUITE = [("resnet50", 1), ("resnet50", 256), ("mobilenet_v3_large", 1), ("mobilenet_v3_large", 256),
         ("vit_b_16", 1), ("vit_b_16", 64), ("bert_base_seq128", 1), ("bert_base_seq128", 32)]
PRECISIONS = ["fp32", "tf32", "bf16", "fp16"]
# The acceptance: Kiln bf16 GPU time at most this share of Kiln tf32 GPU time.
ACCEPTANCE = {("vit_b_16", 64, "bf16"): 0.6, ("bert_base_seq128", 32, "bf16"): 0.6}

log = km.log


def is_cnn(name):
    """Models torch runs channels_last at half precision (what a practitioner would do for convs)."""
    return not name.startswith(("bert", "vit_", "swin", "maxvit"))


# ---------------------------------------------------------------------------------------------
# torch side

class Device:
    """The few things that differ between the GPU and the CPU dry run: moving, syncing, timing."""

    def __init__(self, kind):
        import torch
        self.torch, self.kind = torch, kind
        self.cuda = kind == "cuda"

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize()

    def pin(self, t):
        return t.pin_memory() if self.cuda else t

    def to(self, t):
        return t.to(self.kind, non_blocking=self.cuda)

    def name(self):
        if self.cuda:
            return self.torch.cuda.get_device_name(0)
        import platform
        return f"cpu-{platform.machine()}"

    def release(self):
        self.torch._dynamo.reset()
        if self.cuda:
            self.torch.cuda.empty_cache()

    def call_times(self, fn, inputs, iterations):
        """Per-call ms of back-to-back calls: on the GPU a CUDA event pair around each call, read
        after one final sync, so host overhead that the queue hides is not counted."""
        if not self.cuda:
            times = []
            for _ in range(iterations):
                start = time.perf_counter()
                fn(*inputs)
                times.append((time.perf_counter() - start) * 1000)
            return times
        events = [(self.torch.cuda.Event(enable_timing=True), self.torch.cuda.Event(enable_timing=True))
                  for _ in range(iterations)]
        for start, end in events:
            start.record()
            fn(*inputs)
            end.record()
        self.torch.cuda.synchronize()
        return [start.elapsed_time(end) for start, end in events]


def set_tf32(enabled):
    import torch
    torch.backends.cuda.matmul.allow_tf32 = enabled
    torch.backends.cudnn.allow_tf32 = enabled
    torch.set_float32_matmul_precision("high" if enabled else "highest")


def output_list(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def torch_model_at(model, precision, channels_last, device):
    """A copy of the fp32 model on the device, weights in the precision's dtype (and
    channels_last for CNNs at half precision); the fp32 master stays untouched."""
    import torch
    m = copy.deepcopy(model).to(device=device.kind, dtype=km.torch_dtype(precision))
    return m.to(memory_format=torch.channels_last) if channels_last else m


def torch_inputs_at(inputs, precision, channels_last):
    """Host inputs as torch sees them at the precision: float inputs in its dtype, 4-D images
    channels_last for CNNs at half precision."""
    import torch
    dtype = km.torch_dtype(precision)
    out = []
    for t in inputs:
        t = t.to(dtype) if t.is_floating_point() else t
        out.append(t.contiguous(memory_format=torch.channels_last) if channels_last and t.dim() == 4 else t)
    return out


def measure_torch(fn, host_inputs, channels_last, device, opts, reference):
    """GPU ms, request ms (median, p90), and the error of fn's outputs against the reference."""
    import torch
    device_inputs = [device.to(t) for t in host_inputs]
    pinned = [device.pin(t) for t in host_inputs]

    def request():
        moved = [device.to(t) for t in pinned]
        if channels_last:
            moved = [t.contiguous(memory_format=torch.channels_last) if t.dim() == 4 else t for t in moved]
        host = [o.cpu() for o in output_list(fn(*moved))]
        device.sync()
        return host

    figures = {}
    with torch.no_grad():
        start = time.perf_counter()
        for _ in range(opts.warmup):
            fn(*device_inputs)
        device.sync()
        figures["warmup_s"] = round(time.perf_counter() - start, 1)  # includes torch.compile's build
        outs = [o.float().cpu().numpy() for o in output_list(fn(*device_inputs))]
        figures["max_rel_err"], figures["cosine"] = km.worst_metrics(outs, reference)
        figures["gpu_ms"] = statistics.median(device.call_times(fn, device_inputs, opts.iterations))
        for _ in range(2):
            request()
        times = []
        for _ in range(opts.iterations):
            start = time.perf_counter()
            request()
            times.append((time.perf_counter() - start) * 1000)
    times.sort()
    figures["request_ms"], figures["request_p90_ms"] = statistics.median(times), times[int(0.9 * (len(times) - 1))]
    return figures


def torch_rows(opts, name, model, inputs, reference, rows, device):
    """torch.compile (and eager with --eager) at each precision, into the precision's row."""
    import torch
    for row in rows:
        precision = row["precision"]
        channels_last = is_cnn(name) and precision in ("bf16", "fp16", "fp8", "int8")
        set_tf32(precision != "fp32")
        runners = (["eager"] if opts.eager else []) + ([] if opts.skip_torch_compile else ["torch_compile"])
        for runner in runners:
            log(f"   torch {runner} {precision}" + (" channels_last" if channels_last else ""))
            m = None
            try:
                m = torch_model_at(model, precision, channels_last, device)
                fn = torch.compile(m, mode="reduce-overhead") if runner == "torch_compile" else m
                figures = measure_torch(fn, torch_inputs_at(inputs, precision, channels_last), channels_last,
                                        device, opts, reference)
                row.update({f"{runner}_{k}": v for k, v in figures.items()})
            except Exception as e:  # keep Kiln's figures and the other runners'
                row[f"{runner}_error"] = f"{type(e).__name__}: {e}"[:400]
                log(f"   {runner} {precision}: {row[f'{runner}_error']}")
            finally:
                del m
                fn = None
                device.release()


# ---------------------------------------------------------------------------------------------
# Kiln side

def json_of_kiln(opts, argv, row, error_key):
    """The JSON object `kiln <argv>` prints last, or None with the reason in row[error_key]."""
    code, out, err, _ = km.run_kiln(opts.kiln, argv, opts.step_timeout)
    if code != 0:
        row[error_key] = f"{argv[0]} (exit {code}): {km.error_tail(err)}"
        return None
    try:
        return json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        row[error_key] = f"{argv[0]}: no JSON in its output: {out.strip()[-200:]}"
        return None


def kiln_json(opts, command, plan, args, input_args, row, error_key):
    """The JSON object `kiln <command> plan --json` prints, or None with the reason in row[error_key]."""
    return json_of_kiln(opts, [command, plan, "--json", "--quiet", "--timing-cache", opts.timing_cache] + args +
                        input_args, row, error_key)


# `kiln compile` options that only choose how steps run: `kiln eval` does not take them.
CODEGEN_ONLY_OPTIONS = ("--conv-kernels", "--target")


def compare_report(opts, args, row, error_key):
    """The JSON object `kiln compare ... --json` prints, or None with the reason in row[error_key]."""
    return json_of_kiln(opts, ["compare"] + args + ["--json", "--top", "5", "--timing-cache", opts.timing_cache],
                        row, error_key)


def culprit_rows(report):
    """The culprits of a `kiln compare --json` report, each with its error figures."""
    errors = {v["name"]: v for v in report["values"] if "name" in v}
    return [{"value": name, **{k: errors.get(name, {}).get(k) for k in ("max_rel", "cosine", "growth")}}
            for name in report["culprits"]]


def gpu_against_emulation(opts, onnx_path, plan, precision_args, input_args, output_names, row):
    """The plan on the GPU against `kiln eval` of the same model at the same precision and
    calibration: the interpreter rounds every 8-bit and 16-bit value exactly as the plan should,
    so what differs here is the GPU's kernels (accumulation order, FAST_ACCUM, a library's
    rounding), not the quantization. Into row["gpu_vs_emulation"]: the outputs' cosine and the
    values where the difference grows."""
    dump = os.path.join(opts.work_dir, f"{os.path.basename(plan)}.emulation")
    shutil.rmtree(dump, ignore_errors=True)
    # The pipeline's options, not codegen's (what runs a step changes nothing the interpreter computes).
    pipeline_args = [a for a in shlex.split(opts.compile_args) if not a.startswith(CODEGEN_ONLY_OPTIONS)]
    code, _, err, _ = km.run_kiln(opts.kiln, ["eval", onnx_path, "--precision", row["precision"], "--quiet",
                                              "--dump", dump] + precision_args + pipeline_args + input_args,
                                  opts.step_timeout)
    if code != 0:
        row["gpu_vs_emulation_error"] = f"eval (exit {code}): {km.error_tail(err)}"
        return
    report = compare_report(opts, [dump, plan] + input_args, row, "gpu_vs_emulation_error")
    shutil.rmtree(dump, ignore_errors=True)
    if report is None:
        return
    cosines = [v.get("cosine") for v in report["values"] if v.get("name") in output_names]
    row["gpu_vs_emulation"] = {"output_cosine": min((c for c in cosines if c is not None), default=None),
                               "culprits": culprit_rows(report)}


def eight_bit_culprits(opts, onnx_path, plan, input_args, row):
    """An 8-bit plan below its cosine bound: `kiln compare` of the plan (on the GPU) against the
    interpreter's strict fp32 evaluation of the model on the same input, the values where the
    error grows most (its culprits) into the row. At batch 1 only: the interpreter's time grows
    with the batch, and the batch-1 cell has the same weights."""
    if row["batch"] != 1:
        row["culprits"] = "see the batch-1 row of this model"
        return
    log(f"   kiln compare {row['precision']} against the interpreter (culprits)")
    report = compare_report(opts, [plan, "--reference", "interpreter", "--model", onnx_path] + input_args, row,
                            "culprits_error")
    if report is not None:
        row["culprits"] = culprit_rows(report)


def kiln_bench(opts, plan, input_args, row):
    """`kiln bench --json` into the row (GPU time = compute_ms)."""
    kiln = kiln_json(opts, "bench", plan, ["--iterations", str(opts.iterations), "--warmup", str(opts.warmup)],
                     input_args, row, "error")
    if kiln is None:
        return
    row.update({"kiln_gpu_ms": kiln["compute_ms"], "kiln_request_ms": kiln["median_ms"],
                "kiln_request_p90_ms": kiln["p90_ms"], "kiln_copy_share": kiln["copy_share"],
                "kiln_items_per_s": kiln["items_per_s"],
                # `kiln run` tuned first; this second load should take everything from the cache.
                "kiln_bench_tuned": kiln["tuned"], "kiln_bench_tuned_from_cache": kiln["tuned_from_cache"],
                # Load with the cache `kiln run` filled (warm: nothing timed); run_s is that first,
                # cold run (tuning everything).
                "kiln_load_s": kiln.get("load_s"),
                "kiln_load_split_s": {k: kiln.get(f"load_{k}_s") for k in ("runtime", "engine", "context")},
                "kiln_inputs_s": kiln.get("inputs_s"),
                # cuDNN graph plans of that load: all loaded from the plan store when warm.
                "kiln_bench_cudnn_plans": {k: kiln.get(f"cudnn_plans_{k}") for k in ("loaded", "stored", "unstorable")},
                # Steps per library algorithm: the cuDNN engines the convolutions chose, cuBLASLt.
                "kiln_algorithms": kiln.get("algorithms")})


def kiln_profile(opts, plan, input_args, row):
    """`kiln profile --json` into the row: the bottleneck, the slowest steps, the time by op."""
    profile = kiln_json(opts, "profile", plan, ["--top", "0"], input_args, row, "kiln_profile_error")
    if profile is None:
        return
    keep = ("index", "name", "op", "algorithm", "ms", "share", "tflops", "gbs", "compute_fraction",
            "memory_fraction", "bound")
    slowest = sorted(profile["steps"], key=lambda s: -s["ms"])[:10]
    row["kiln_profile"] = {"bottleneck": profile.get("bottleneck"), "steps_ms": profile["steps_ms"],
                           "steps": len(profile["steps"]), "device": profile["device"],
                           "slowest": [{k: s[k] for k in keep} for s in slowest],
                           "by_op": [{k: g[k] for k in ("op", "ms", "share")} for g in profile["by_op"][:8]]}


def kiln_rows(opts, tag, feeds, compile_job, reference, output_names, rows, device):
    """Accuracy and timing of each precision's plan, into its row."""
    compiled = compile_job.wait()
    input_args = km.save_inputs(feeds, opts.work_dir, tag)
    for row in rows:
        precision = row["precision"]
        problem, row["compile_s"] = compiled[precision]
        if problem:
            row["error"] = problem
            log(f"   {precision}: {problem}")
            continue
        plan = compile_job.plans[precision]
        row["plan_bytes"] = os.path.getsize(plan)
        log(f"   kiln run + bench {precision}")
        out_dir = os.path.join(opts.work_dir, f"{tag}_{precision}_out")
        row.update(km.kiln_accuracy(opts.kiln, plan, input_args, out_dir, output_names, reference, precision,
                                    opts.step_timeout, opts.timing_cache))
        if precision in ("fp8", "int8") and (row.get("accurate") is False or opts.culprits):
            eight_bit_culprits(opts, compile_job.onnx_path, plan, input_args, row)
            if row["batch"] == 1:
                log(f"   kiln compare {precision} against the interpreter's emulation of it")
                gpu_against_emulation(opts, compile_job.onnx_path, plan, compile_job.precision_args.get(precision, []),
                                      input_args, output_names, row)
        if "max_rel_err" not in row:  # the plan did not run: nothing to time
            log(f"   {precision}: {row['error']}")
            continue
        error = row.pop("error", None)
        kiln_bench(opts, plan, input_args, row)
        kiln_profile(opts, plan, input_args, row)
        if error:  # an accuracy miss stays the row's error, timing or not
            row["error"] = error + ("; " + row["error"] if "error" in row else "")


def add_ratios(rows):
    """Kiln against torch.compile (GPU and request time) and against its own tf32 plan."""
    tf32 = next((r.get("kiln_gpu_ms") for r in rows if r["precision"] == "tf32"), None)
    for r in rows:
        k = r.get("kiln_gpu_ms")
        if k is None:
            continue
        for runner in ("torch_compile", "eager"):
            if r.get(f"{runner}_gpu_ms"):
                r[f"ratio_kiln_vs_{runner}_gpu"] = k / r[f"{runner}_gpu_ms"]
            if r.get(f"{runner}_request_ms") and r.get("kiln_request_ms"):
                r[f"ratio_kiln_vs_{runner}_request"] = r["kiln_request_ms"] / r[f"{runner}_request_ms"]
        if tf32 and r["precision"] in ("bf16", "fp16", "fp8", "int8"):
            r["ratio_kiln_vs_kiln_tf32_gpu"] = k / tf32


def bench_one(opts, name, batch, device):
    tag = f"{name}_b{batch}"
    log(f"== {tag}: building and exporting")
    start = time.perf_counter()
    model, inputs, names, prepared = km.build_suite_model(name, batch)
    onnx_path = os.path.join(opts.work_dir, tag + ".onnx")
    km.export_onnx(model, inputs, names, onnx_path)
    export_s = round(time.perf_counter() - start, 1)
    feeds = dict(zip(names, [t.numpy() for t in inputs]))
    rows = [{"model": name, "batch": batch, "precision": p, "export_s": export_s} for p in opts.precisions]
    if prepared:  # how the random model was conditioned (BatchNorm statistics), with the first row
        rows[0]["model_prepared"] = prepared
    compile_job = None
    if opts.kiln:
        plans = {p: os.path.join(opts.work_dir, f"{tag}_{p}.kiln") for p in opts.precisions}
        precision_args = {}
        eight_bit = [p for p in opts.precisions if p in ("fp8", "int8")]
        if eight_bit:
            table = calibrate(opts, name, batch, tag, onnx_path, feeds, rows, eight_bit)
            if table:
                precision_args.update({p: ["--calibration", table] for p in eight_bit})
        compile_job = km.ParallelCompile(opts.kiln, onnx_path, plans, opts.step_timeout,
                                         shlex.split(opts.compile_args), precision_args).start()
    log("   onnxruntime reference" + (" (kiln compiles meanwhile)" if compile_job else ""))
    reference, output_names = km.onnxruntime_outputs(onnx_path, feeds)
    if compile_job:
        kiln_rows(opts, tag, feeds, compile_job, reference, output_names, rows, device)
    torch_rows(opts, name, model, inputs, reference, rows, device)
    add_ratios(rows)
    for row in rows:
        log("   " + json.dumps({k: v for k, v in row.items() if k != "kiln_profile"}))
    if not opts.keep:
        remove_model_files(opts.work_dir, tag)
    return rows


def calibrate(opts, name, batch, tag, onnx_path, feeds, rows, eight_bit):
    """`kiln calibrate` for the 8-bit plans (`eight_bit`: fp8, int8; one file serves both): the
    batch-1 export of the same model (same seed, same weights and value names; the
    interpreter's time grows with the batch) over 4 random inputs unlike the measured one
    (floats redrawn with its mean and spread, integers permuted). Returns the calibration
    file, or None with the reason in the 8-bit rows."""
    eight_rows = [r for r in rows if r["precision"] in eight_bit]
    row = eight_rows[0]
    start = time.perf_counter()
    cal_onnx, cal_feeds = onnx_path, feeds
    if batch != 1:
        model, inputs, names, _ = km.build_suite_model(name, 1)
        cal_onnx = os.path.join(opts.work_dir, tag + "_cal.onnx")
        km.export_onnx(model, inputs, names, cal_onnx)
        cal_feeds = dict(zip(names, [t.numpy() for t in inputs]))
    cal_dir = os.path.join(opts.work_dir, tag + "_cal")
    km.write_calibration_inputs(cal_feeds, cal_dir)
    table = os.path.join(opts.work_dir, tag + ".calib.json")
    log(f"   kiln calibrate ({'batch-1 export, ' if batch != 1 else ''}4 inputs, --device {opts.calibrate_device})")
    command = ["calibrate", cal_onnx, "--calibration", cal_dir, "-o", table, "--quiet"]
    code, _, err, _ = km.run_kiln(opts.kiln, command + ["--device", opts.calibrate_device], opts.step_timeout)
    if code != 0 and opts.calibrate_device != "cpu":
        # Recorded in the rows, not hidden: the plans are then calibrated by the interpreter.
        for r in eight_rows:
            r["calibrate_gpu_error"] = f"exit {code}: {km.error_tail(err)}"
        log(f"   kiln calibrate --device {opts.calibrate_device} failed ({km.error_tail(err)}); "
            "again on the interpreter (--device cpu)")
        code, _, err, _ = km.run_kiln(opts.kiln, command + ["--device", "cpu"], opts.step_timeout)
    row["calibrate_s"] = round(time.perf_counter() - start, 1)
    if code != 0:
        for r in eight_rows:
            r["error"] = f"calibrate (exit {code}): {km.error_tail(err)}"
        return None
    with open(table) as f:
        measured_on = json.load(f).get("measured_on", "interpreter")
    for r in eight_rows:
        r["calibrated_on"] = measured_on
    return table


def remove_model_files(work_dir, tag):
    """Deletes a model's ONNX file, plans, inputs and outputs: four precisions of a large model
    take GBs, and the box's disk is not large."""
    for f in os.listdir(work_dir):
        if f.startswith(tag + "_") or f == tag + ".onnx":
            path = os.path.join(work_dir, f)
            if os.path.isdir(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                os.remove(path)


# ---------------------------------------------------------------------------------------------
# Reporting

def print_bottlenecks(rows):
    """Each row's slowest step (`kiln profile`): what to work on next."""
    for r in rows:
        b = (r.get("kiln_profile") or {}).get("bottleneck")
        if b:
            print(f"bottleneck {r['model']} b{r['batch']} {r['precision']}: step {b['index']} {b['name']} "
                  f"({b['op']}) {b['ms']:.3f} ms, {100 * b['share']:.1f}% of the step time, {b['bound']}-bound")


def print_table(rows, eager=False):
    def f(r, key, spec):
        """The figure in spec, or '-' as wide, so that columns stay aligned."""
        if isinstance(r.get(key), (int, float)):
            return format(r[key], spec)
        return format("-", ">" + spec.split(".")[0])

    columns = [("model", 20), ("batch", 5), ("prec", 5), ("kiln gpu", 9), ("compile gpu", 11), ("kiln/comp", 9),
               ("vs tf32", 7), ("kiln req", 9), ("comp req", 9)]
    if eager:
        columns += [("eager gpu", 9), ("eager req", 9)]
    columns += [("max rel err", 11), ("cosine", 8), ("ok", 3)]
    print("times in ms; gpu = CUDA-event time on the device, req = host-to-host request; "
          "kiln/comp and vs tf32 are GPU-time ratios")
    print(" ".join(format(c, f">{w}" if i > 0 else f"<{w}") for i, (c, w) in enumerate(columns)))
    for r in rows:
        cells = [format(r["model"], "<20"), format(r["batch"], ">5"), format(r["precision"], ">5"),
                 f(r, "kiln_gpu_ms", "9.3f"), f(r, "torch_compile_gpu_ms", "11.3f"),
                 f(r, "ratio_kiln_vs_torch_compile_gpu", "9.2f"), f(r, "ratio_kiln_vs_kiln_tf32_gpu", "7.2f"),
                 f(r, "kiln_request_ms", "9.3f"), f(r, "torch_compile_request_ms", "9.3f")]
        if eager:
            cells += [f(r, "eager_gpu_ms", "9.3f"), f(r, "eager_request_ms", "9.3f")]
        accurate = {True: "yes", False: "NO"}.get(r.get("accurate"), "-")
        cells += [f(r, "max_rel_err", "11.2e"), f(r, "cosine", "8.5f"), format(accurate, ">3")]
        problems = [r[k] for k in ("error", "torch_compile_error", "eager_error", "note") if r.get(k)]
        print(" ".join(cells) + ("  " + " / ".join(p[:120] for p in problems) if problems else ""))
    for (model, batch, precision), bound in ACCEPTANCE.items():
        r = next((r for r in rows if (r["model"], r["batch"], r["precision"]) == (model, batch, precision)), None)
        if r and "ratio_kiln_vs_kiln_tf32_gpu" in r:
            ratio = r["ratio_kiln_vs_kiln_tf32_gpu"]
            print(f"acceptance {model} b{batch} {precision}: GPU time {ratio:.2f}x tf32 "
                  f"({'meets' if ratio <= bound else 'MISSES'} <= {bound})")
    sys.stdout.flush()


def results_path(results_dir, date, gpu, tag):
    suffix = f"_{tag}" if tag else ""
    return os.path.join(results_dir, f"{date}_{gpu.replace(' ', '_')}{suffix}.json")


def write_results(path, header, rows, complete):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(dict(header, complete=complete, rows=rows), f, indent=1)
    os.replace(tmp, path)


def merge(opts):
    """One results file from several runs' files (a later file's row replaces an earlier one's)."""
    merged, header = {}, {}
    for path in opts.merge:
        with open(path) as f:
            data = json.load(f)
        header = header or {k: v for k, v in data.items() if k not in ("rows", "complete")}
        header.setdefault("merged_from", []).append(os.path.basename(path))
        for r in data["rows"]:
            merged[(r["model"], r["batch"], r["precision"])] = r
    order = {key: i for i, key in enumerate(SUITE)}
    rows = sorted(merged.values(), key=lambda r: (order.get((r["model"], r["batch"]), len(order)), r["model"],
                                                  r["batch"], PRECISIONS.index(r["precision"])
                                                  if r["precision"] in PRECISIONS else 9))
    print_table(rows, eager=any("eager_gpu_ms" in r for r in rows))
    print_bottlenecks(rows)
    path = results_path(opts.results_dir, header.get("date", "merged"), header.get("gpu", "gpu"), opts.tag)
    write_results(path, header, rows, complete=True)
    log(f"wrote {path}")
    return 0


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kiln", help="the kiln binary (build-gpu/kiln on the GPU box); without it, torch only")
    parser.add_argument("--models", default="", help="comma list of name:batch (default: the whole suite)")
    parser.add_argument("--precisions", default=",".join(PRECISIONS))
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5, help="untimed calls first (at least 3: torch.compile "
                                                              "with CUDA graphs records on the second/third)")
    parser.add_argument("--eager", action="store_true", help="also time the uncompiled torch model")
    parser.add_argument("--skip-torch-compile", action="store_true")
    parser.add_argument("--culprits", action="store_true",
                        help="`kiln compare` culprits for every 8-bit plan at batch 1, not only those below "
                             "their cosine bound (a miss at a larger batch: MobileNetV3 fp8 b256)")
    parser.add_argument("--max-seconds", type=float, default=0,
                        help="start no new model after this many seconds (0: no limit)")
    parser.add_argument("--step-timeout", type=float, default=300, help="limit of one kiln compile, run or bench")
    parser.add_argument("--device", choices=["cuda", "cpu"], default="cuda",
                        help="cpu: a dry run without a GPU (torch timed on the CPU; kiln run and bench fail there)")
    parser.add_argument("--work-dir", default="/tmp/kiln-bench")
    parser.add_argument("--keep", action="store_true", help="keep the ONNX files, plans and outputs")
    parser.add_argument("--results-dir", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    parser.add_argument("--compile-args", default="", help="more `kiln compile` options for every plan, "
                        "e.g. '--layout nhwc' (kept in the results header)")
    parser.add_argument("--calibrate-device", choices=["auto", "gpu", "cpu"], default="auto",
                        help="`kiln calibrate --device` for the 8-bit plans (default: auto, the GPU when there is "
                             "one); a failed GPU calibration is recorded in the rows and redone on the interpreter")
    parser.add_argument("--tag", default="", help="suffix of the results file name, e.g. mixed-precision")
    parser.add_argument("--merge", nargs="+", metavar="JSON", help="merge these results files instead of running")
    opts = parser.parse_args(argv)
    opts.precisions = [p for p in opts.precisions.split(",") if p]
    unknown = [p for p in opts.precisions if p not in km.BOUNDS]
    if unknown:
        parser.error(f"unknown precision(s) {unknown}; known: {PRECISIONS}")
    opts.warmup = max(opts.warmup, 3)
    if opts.kiln:
        opts.kiln = os.path.abspath(opts.kiln)
    return opts


def main(argv=None):
    opts = parse_args(argv if argv is not None else sys.argv[1:])
    if opts.merge:
        return merge(opts)
    suite = SUITE
    if opts.models:
        suite = [(m.split(":")[0], int(m.split(":")[1])) for m in opts.models.split(",") if m]
    os.makedirs(opts.work_dir, exist_ok=True)
    opts.timing_cache = os.path.join(opts.work_dir, "timing_cache.txt")
    import torch
    device = Device(opts.device)
    gpu = device.name()
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    path = results_path(opts.results_dir, date, gpu, opts.tag)
    header = {"date": date, "gpu": gpu, "torch": torch.__version__, "iterations": opts.iterations,
              "warmup": opts.warmup, "precisions": opts.precisions, "tag": opts.tag,
              "compile_args": opts.compile_args,
              "calibrate_device": opts.calibrate_device,
              "note": "gpu_ms: CUDA events (kiln: compute_ms around the CUDA-graph replay; torch: back-to-back "
                      "calls, inputs on the device); request_ms: host inputs to host outputs; accuracy against "
                      "onnxruntime fp32 CPU"}
    rows, not_run = [], []
    started = time.perf_counter()
    for i, (name, batch) in enumerate(suite):
        if opts.max_seconds and time.perf_counter() - started >= opts.max_seconds:
            not_run = [f"{n}:{b}" for n, b in suite[i:]]
            log(f"--max-seconds {opts.max_seconds:g} spent; not run: {', '.join(not_run)}")
            break
        try:
            rows.extend(bench_one(opts, name, batch, device))
        except Exception as e:  # keep the other models' figures
            rows.append({"model": name, "batch": batch, "precision": "-", "error": f"{type(e).__name__}: {e}"[:400]})
            log(f"   {name} b{batch}: {rows[-1]['error']}")
            device.release()
        write_results(path, dict(header, not_run=not_run), rows, complete=False)
    write_results(path, dict(header, not_run=not_run, seconds=round(time.perf_counter() - started)), rows,
                  complete=not not_run)
    print_table(rows, eager=opts.eager)
    print_bottlenecks(rows)
    if not_run:
        print(f"not run (--max-seconds): {', '.join(not_run)}")
    log(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
