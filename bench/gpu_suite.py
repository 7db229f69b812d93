#!/usr/bin/env python3
"""Kiln against PyTorch eager and torch.compile on the suite models, on the GPU box.

In one run, for each suite model and batch size: build the torch model (random weights, fixed
seed), export it to ONNX (opset 17), compile it with `kiln compile` in fp32 and tf32, check
`kiln run`'s outputs against onnxruntime (CPU) on the same inputs, then time

  kiln      `kiln bench --json`: whole requests (pinned host input -> GPU -> host output)
  eager     the torch model, same weights and batch, host tensor in and host tensor out
  compile   torch.compile(mode="reduce-overhead") of the same model, timed the same way

in fp32 (TF32 off everywhere) and tf32 (torch with TF32 allowed for matmul and cuDNN). Prints a
table (median ms, items/s, ratio Kiln/torch.compile, Kiln/eager) and writes JSON into
bench/results/<date>_<gpu>.json. Medians over --iterations runs after --warmup runs; nothing
here is a pass/fail test except the accuracy bound (max relative error to the output's largest
magnitude: 1e-3 fp32, 1e-2 tf32), which is reported per row.

Usage (GPU box): python3 bench/gpu_suite.py --kiln build-gpu/kiln [--models resnet50:1,vit_b_16:64]
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

SUITE = [("resnet50", 1), ("resnet50", 256), ("mobilenet_v3_large", 1), ("mobilenet_v3_large", 256),
         ("vit_b_16", 1), ("vit_b_16", 64), ("bert_base_seq128", 1), ("bert_base_seq128", 32)]
TOLERANCE = {"fp32": 1e-3, "tf32": 1e-2}


def log(*parts):
    print(*parts, file=sys.stderr, flush=True)


def build_model(name, batch):
    """(torch module on the GPU, list of host input tensors, input names)."""
    import torch
    torch.manual_seed(0)
    if name == "bert_base_seq128":
        from transformers import BertConfig, BertModel
        model = BertModel(BertConfig()).eval()
        ids = torch.randint(0, 30522, (batch, 128), dtype=torch.int64)
        mask = torch.ones(batch, 128, dtype=torch.int64)
        return model, [ids, mask], ["input_ids", "attention_mask"]
    import torchvision
    model = getattr(torchvision.models, name)(weights=None).eval()
    if name == "vit_b_16":  # torchvision zero-initializes the head: randomize it for a real check
        torch.nn.init.normal_(model.heads.head.weight, std=0.02)
    x = torch.rand(batch, 3, 224, 224) * 2 - 1
    return model, [x], ["input"]


def export_onnx(model, inputs, names, path):
    import torch
    wrapped = model
    if names[0] == "input_ids":
        class Wrapped(torch.nn.Module):
            def __init__(self, inner):
                super().__init__()
                self.inner = inner

            def forward(self, input_ids, attention_mask):
                out = self.inner(input_ids=input_ids, attention_mask=attention_mask)
                return out.last_hidden_state, out.pooler_output
        wrapped = Wrapped(model).eval()
    # The TorchScript exporter cannot export the fused multi-head-attention fast path that
    # torchvision's ViT takes in eval mode; eager and torch.compile keep it for their timings.
    torch.backends.mha.set_fastpath_enabled(False)
    try:
        with torch.no_grad():
            torch.onnx.export(wrapped, tuple(inputs), path, input_names=names, opset_version=17, dynamo=False)
    finally:
        torch.backends.mha.set_fastpath_enabled(True)
    return wrapped


def onnxruntime_outputs(path, feeds):
    import onnxruntime as ort
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    return session.run(None, feeds), [o.name for o in session.get_outputs()]


def max_relative_error(actual, expected):
    expected = expected.astype(np.float64)
    scale = max(float(np.abs(expected).max()), 1e-30)
    return float(np.abs(actual.astype(np.float64) - expected).max() / scale)


def time_torch(fn, inputs, iterations, warmup):
    """Median/p90 ms of whole requests: host inputs to the GPU, the model, outputs back to the host."""
    import torch
    pinned = [t.pin_memory() for t in inputs]

    def request():
        device_inputs = [t.cuda(non_blocking=True) for t in pinned]
        out = fn(*device_inputs)
        out = out[0] if isinstance(out, (tuple, list)) else out
        if hasattr(out, "last_hidden_state"):
            out = out.last_hidden_state
        host = out.cpu()
        torch.cuda.synchronize()
        return host

    with torch.no_grad():
        for _ in range(warmup):
            request()
        times = []
        for _ in range(iterations):
            start = time.perf_counter()
            request()
            times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return statistics.median(times), times[int(0.9 * (len(times) - 1))]


def set_tf32(enabled):
    import torch
    torch.backends.cuda.matmul.allow_tf32 = enabled
    torch.backends.cudnn.allow_tf32 = enabled
    torch.set_float32_matmul_precision("high" if enabled else "highest")


def run_kiln(kiln, args, **kw):
    return subprocess.run([kiln] + args, capture_output=True, text=True, errors="replace", **kw)


def bench_one(opts, name, batch, work):
    import torch
    rows = []
    tag = f"{name}_b{batch}"
    log(f"== {tag}: building and exporting")
    model, inputs, names = build_model(name, batch)
    onnx_path = os.path.join(work, tag + ".onnx")
    wrapped = export_onnx(model, inputs, names, onnx_path)
    feeds = {n: t.numpy() for n, t in zip(names, inputs)}
    input_args = []
    for n, value in feeds.items():
        npy = os.path.join(work, f"{tag}_{n}.npy")
        np.save(npy, value)
        input_args += ["--input", f"{n}={npy}"]
    log(f"   onnxruntime reference")
    reference, output_names = onnxruntime_outputs(onnx_path, feeds)
    gpu_model = wrapped.cuda()
    for precision in opts.precisions:
        row = {"model": name, "batch": batch, "precision": precision}
        rows.append(row)
        plan = os.path.join(work, f"{tag}_{precision}.kiln")
        start = time.perf_counter()
        # The GPU hidden: compiling must not need one.
        proc = run_kiln(opts.kiln, ["compile", onnx_path, "-o", plan, "--precision", precision, "--quiet"],
                        env=dict(os.environ, CUDA_VISIBLE_DEVICES=""))
        row["compile_s"] = round(time.perf_counter() - start, 2)
        if proc.returncode != 0:
            row["error"] = "compile: " + proc.stderr.strip()[-400:]
            log("   " + row["error"])
            continue
        row["plan_bytes"] = os.path.getsize(plan)
        out_dir = os.path.join(work, f"{tag}_{precision}_out")
        proc = run_kiln(opts.kiln, ["run", plan, "--output-dir", out_dir, "--quiet",
                                    "--timing-cache", opts.timing_cache] + input_args)
        if proc.returncode != 0:
            row["error"] = "run: " + proc.stderr.strip()[-400:]
            log("   " + row["error"])
            continue
        errors = []
        for out_name, expected in zip(output_names, reference):
            file = "".join(c if c.isalnum() or c in "_-." else "_" for c in out_name)
            errors.append(max_relative_error(np.load(os.path.join(out_dir, file + ".npy")), expected))
        row["max_rel_err"] = max(errors)
        row["accurate"] = row["max_rel_err"] <= TOLERANCE[precision]
        proc = run_kiln(opts.kiln, ["bench", plan, "--json", "--quiet", "--profile", "--iterations",
                                    str(opts.iterations), "--warmup", str(opts.warmup), "--timing-cache",
                                    opts.timing_cache] + input_args)
        # The per-step profile (stderr): the slowest steps and the time by op, kept with the row.
        row["kiln_profile"] = [line.rstrip() for line in proc.stderr.splitlines() if line.startswith(("profile", "  "))][:30]
        if proc.returncode != 0:
            row["error"] = "bench: " + proc.stderr.strip()[-400:]
            log("   " + row["error"])
            continue
        kiln = json.loads(proc.stdout.strip().splitlines()[-1])
        row.update({"kiln_ms": kiln["median_ms"], "kiln_p90_ms": kiln["p90_ms"], "kiln_compute_ms": kiln["compute_ms"],
                    "kiln_copy_share": kiln["copy_share"], "kiln_items_per_s": kiln["items_per_s"],
                    # `kiln run` tuned first; this second load should take everything from the cache.
                    "kiln_bench_tuned": kiln["tuned"], "kiln_bench_tuned_from_cache": kiln["tuned_from_cache"]})
        set_tf32(precision == "tf32")
        row["eager_ms"], row["eager_p90_ms"] = time_torch(gpu_model, inputs, opts.iterations, opts.warmup)
        if not opts.skip_torch_compile:
            torch._dynamo.reset()
            compiled = torch.compile(gpu_model, mode="reduce-overhead")
            start = time.perf_counter()
            row["torch_compile_ms"], row["torch_compile_p90_ms"] = time_torch(compiled, inputs, opts.iterations,
                                                                              max(opts.warmup, 3))
            row["torch_compile_build_s"] = round(time.perf_counter() - start, 1)
            row["ratio_kiln_vs_compile"] = row["kiln_ms"] / row["torch_compile_ms"]
        row["ratio_kiln_vs_eager"] = row["kiln_ms"] / row["eager_ms"]
        log("   " + json.dumps(row))
    del gpu_model
    torch.cuda.empty_cache()
    return rows


def print_table(rows):
    header = (f"{'model':<20} {'batch':>5} {'prec':>5} {'kiln ms':>9} {'eager ms':>9} {'compile ms':>10} "
              f"{'kiln items/s':>12} {'kiln/compile':>12} {'kiln/eager':>10} {'max rel err':>11}")
    print(header)
    for r in rows:
        def f(key, fmt):
            return format(r[key], fmt) if key in r else "-"
        print(f"{r['model']:<20} {r['batch']:>5} {r['precision']:>5} {f('kiln_ms', '9.3f')} {f('eager_ms', '9.3f')} "
              f"{f('torch_compile_ms', '10.3f')} {f('kiln_items_per_s', '12.1f')} "
              f"{f('ratio_kiln_vs_compile', '12.2f')} {f('ratio_kiln_vs_eager', '10.2f')} "
              f"{f('max_rel_err', '11.2e')}" + (f"  ERROR {r['error'][:80]}" if "error" in r else ""))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", required=True)
    parser.add_argument("--models", default="", help="comma list of name:batch (default: the whole suite)")
    parser.add_argument("--precisions", default="fp32,tf32")
    parser.add_argument("--iterations", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--skip-torch-compile", action="store_true")
    parser.add_argument("--work-dir", default="/tmp/kiln-bench")
    parser.add_argument("--results-dir", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    opts = parser.parse_args()
    opts.precisions = opts.precisions.split(",")
    suite = SUITE
    if opts.models:
        suite = [(m.split(":")[0], int(m.split(":")[1])) for m in opts.models.split(",")]
    os.makedirs(opts.work_dir, exist_ok=True)
    opts.timing_cache = os.path.join(opts.work_dir, "timing_cache.txt")
    import torch
    gpu = torch.cuda.get_device_name(0)
    rows = []
    for name, batch in suite:
        try:
            rows.extend(bench_one(opts, name, batch, opts.work_dir))
        except Exception as e:  # keep the other models' figures
            rows.append({"model": name, "batch": batch, "precision": "-", "error": f"{type(e).__name__}: {e}"[:400]})
            log(f"   {name} b{batch}: {rows[-1]['error']}")
    print_table(rows)
    os.makedirs(opts.results_dir, exist_ok=True)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    path = os.path.join(opts.results_dir, f"{stamp}_{gpu.replace(' ', '_')}.json")
    with open(path, "w") as f:
        json.dump({"date": stamp, "gpu": gpu, "torch": torch.__version__, "iterations": opts.iterations,
                   "warmup": opts.warmup, "rows": rows}, f, indent=1)
    log(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
