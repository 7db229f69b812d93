"""What the GPU-box scripts share: building models with meaningful random weights, exporting
them to ONNX, the onnxruntime reference, the accuracy metrics and bounds, and running `kiln`.

Used by bench/gpu_suite.py (timing against torch.compile), tools/gpu-box/accuracy_torchvision.py
(the precision sweep over torchvision classifiers) and tools/gpu-box/import_real_models.py (import
and interpreter parity), so that all build, export and judge a model the same way. torch is imported inside the functions that need it: the merge and table paths of
the bench, and the sweep's scheduler process, run without it.
"""
import copy
import os
import subprocess
import sys
import time

import numpy as np

# Accuracy of a Kiln plan against onnxruntime fp32 on the same inputs: (max relative error,
# minimum cosine similarity or None). Relative error is max |kiln - ref| / max |ref|, per output,
# worst over outputs. Half precisions also need the output's direction kept (cosine), since a
# max-based figure can hide a wholesale drift of small values.
BOUNDS = {"fp32": (1e-3, None), "tf32": (1e-2, None), "bf16": (3e-2, 0.999), "fp16": (1e-2, 0.999),
          # 8-bit plans are judged by cosine alone (the quantization issue's bounds)
          "fp8": (float("inf"), 0.995), "int8": (float("inf"), 0.99)}

# Classifiers whose native resolution is not 224: they run at theirs (Kiln compiles static
# shapes, so a different size is just another plan).
INPUT_SIZE = {"inception_v3": 299}


def log(*parts):
    print(*parts, file=sys.stderr, flush=True)


def torch_dtype(precision):
    """The torch dtype of a model's weights and float inputs at a Kiln precision."""
    import torch
    # 8-bit plans are measured against torch.compile bf16 (the anchor 8-bit plans must beat)
    return {"bf16": torch.bfloat16, "fp16": torch.float16, "fp8": torch.bfloat16,
            "int8": torch.bfloat16}.get(precision, torch.float32)


def randomize_degenerate_parameters(model, seed=0):
    """Re-draws the parameters that torchvision initializes to a tiny constant; returns their names.

    ViT's classifier head is zero-initialized (its logits would be all zeros, and any comparison
    trivially exact) and ConvNeXt scales every residual branch by 1e-6 (the network would be its
    stem and head, the blocks invisible to the check). Biases stay as they are: zero biases are
    normal. Layer scales get U(0.1, 1), the range trained ConvNeXts have; other tensors N(0, 0.02).
    """
    import torch
    generator = torch.Generator().manual_seed(seed)
    changed = []
    with torch.no_grad():
        for name, p in model.named_parameters():
            first = p.flatten()[0].item()
            if name.endswith("bias") or p.numel() < 2 or abs(first) >= 1e-3 or not bool(torch.all(p == first)):
                continue
            if name.endswith("layer_scale"):
                p.copy_(torch.rand(p.shape, generator=generator) * 0.9 + 0.1)
            else:
                p.copy_(torch.randn(p.shape, generator=generator) * 0.02)
            changed.append(name)
    return changed


def set_batchnorm_statistics(model, size, seed, keep_mean):
    """Measures every BatchNorm's running statistics in one forward pass on random images (with
    keep_mean, only the variance: the mean stays 0)."""
    import torch
    norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    saved = [m.momentum for m in norms]
    for m in norms:
        m.reset_running_stats()
        m.momentum = None  # a cumulative average: one pass sets the statistics to its own
        m.train()
    generator = torch.Generator().manual_seed(seed + 2)
    with torch.no_grad():
        model(torch.rand(4, 3, size, size, generator=generator) * 2 - 1)
    for m, momentum in zip(norms, saved):
        m.momentum = momentum
        m.eval()
        if keep_mean:
            m.running_mean.zero_()


def conditioning(model, x):
    """How fit a random model is for judging half precision, from three fp32 forward passes: the
    largest activation anywhere, the largest output, the amplification of a 1e-6 relative input
    perturbation (output relative change / 1e-6) and how much another image changes the output
    (max relative difference)."""
    import torch
    largest = [0.0]

    def record(module, inputs, output):
        if isinstance(output, torch.Tensor) and output.is_floating_point():
            largest[0] = max(largest[0], float(output.detach().abs().max()))
    hooks = [m.register_forward_hook(record) for m in model.modules() if not list(m.children())]
    try:
        with torch.no_grad():
            y = model(x)
    finally:
        for h in hooks:
            h.remove()
    generator = torch.Generator().manual_seed(3)
    noise = torch.randn(x.shape, generator=generator)
    other = torch.rand(x.shape, generator=generator) * 2 - 1
    with torch.no_grad():
        moved, y_other = model(x * (1 + 1e-6 * noise)), model(other)
    amplification, _ = error_metrics(moved.numpy(), y.numpy())
    dependence, _ = error_metrics(y_other.numpy(), y.numpy())
    return {"max_activation": largest[0], "output_max": float(y.abs().max()), "amplification": amplification / 1e-6,
            "input_dependence": dependence}


def fit_for_half(c):
    """Outputs above fp16's underflow, activations well below its 65504 overflow, outputs that
    depend on the input (not a bias with the features vanished: shufflenet's and googlenet's with
    the initial statistics), and small input changes not amplified: a model where half
    precision's error measures the plan, not the model."""
    return (c["output_max"] >= 1e-3 and c["max_activation"] <= 2e4 and c["amplification"] <= 10
            and c["input_dependence"] >= 1e-3)


def condition_batchnorm(model, x, seed=0):
    """Picks the BatchNorm statistics that make a random model fit for a half-precision check;
    returns (the choice, the conditioning figures of the model as returned).

    Random weights with the initial statistics (mean 0, variance 1) normalize nothing: activations
    drift layer after layer, up (inception_v3's logits reach 1e12, resnet152's 1e8: fp16
    overflows) or down (EfficientNet's and MobileNet's logits fall to 1e-10 and below: fp16
    flushes them to zero). Statistics measured on data, as training leaves them, fix the scale but
    make deep residual nets chaotic (a 1e-6 input change moves resnet50's output by 5e-5, and
    bf16 rounding by 13%), which no trained model is. So, in order: the initial statistics, the
    measured ones, the measured variance with mean 0; the first fit_for_half wins. When none is,
    the initial statistics stay and the figures (of every try) say why a miss may be the model's.
    """
    import torch
    if not any(isinstance(m, torch.nn.modules.batchnorm._BatchNorm) for m in model.modules()):
        return "no BatchNorm", conditioning(model, x)
    initial = copy.deepcopy(model.state_dict())
    tried = {}
    for choice in ("initial statistics", "measured statistics", "measured variance"):
        model.load_state_dict(initial)
        if choice != "initial statistics":
            set_batchnorm_statistics(model, x.shape[-1], seed, keep_mean=choice == "measured variance")
        figures = conditioning(model, x)
        if fit_for_half(figures):
            return choice, figures
        tried[choice] = figures
    model.load_state_dict(initial)
    return "initial statistics (none fit)", dict(tried["initial statistics"], tried=tried)


def build_torchvision(name, batch, seed=0):
    """(eval-mode model with random weights, [image input], ["input"], how it was conditioned).

    Random weights with a fixed seed, then what makes a random model behave like a trained one
    where an accuracy check needs it: degenerate parameters re-drawn, BatchNorm statistics chosen
    (condition_batchnorm)."""
    import torch
    import torchvision
    torch.manual_seed(seed)
    kwargs = {"init_weights": True} if name in ("googlenet", "inception_v3") else {}
    model = torchvision.models.get_model(name, weights=None, **kwargs).eval()
    changed = randomize_degenerate_parameters(model, seed)
    size = INPUT_SIZE.get(name, 224)
    generator = torch.Generator().manual_seed(seed + 1)
    x = torch.rand(batch, 3, size, size, generator=generator) * 2 - 1
    choice, figures = condition_batchnorm(model, x[:1], seed)
    return model, [x], ["input"], {"redrawn": changed, "batchnorm": choice, "conditioning": figures}


def bert_with_outputs():
    """BERT-base (random weights) returning (last_hidden_state, pooler_output) as a tuple, so
    that the exported graph, eager and torch.compile all run one module with positional inputs
    and plain tensor outputs."""
    import torch
    from transformers import BertConfig, BertModel

    class BertOutputs(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = BertModel(BertConfig())

        def forward(self, input_ids, attention_mask):
            out = self.inner(input_ids=input_ids, attention_mask=attention_mask)
            return out.last_hidden_state, out.pooler_output
    return BertOutputs().eval()


def build_suite_model(name, batch, seed=0):
    """(eval-mode model, list of host input tensors, input names, how it was prepared) for a
    bench suite model."""
    import torch
    if name == "bert_base_seq128":
        torch.manual_seed(seed)
        model = bert_with_outputs()
        ids = torch.randint(0, 30522, (batch, 128), dtype=torch.int64)
        mask = torch.ones(batch, 128, dtype=torch.int64)
        return model, [ids, mask], ["input_ids", "attention_mask"], {}
    return build_torchvision(name, batch, seed)


def export_onnx(model, inputs, names, path, exporter="torchscript"):
    """Exports with the TorchScript exporter (opset 17) or the dynamo exporter (opset 18).

    The TorchScript exporter cannot export the fused multi-head-attention fast path that
    torchvision's ViT takes in eval mode, so that path is off while exporting (and on again
    after: eager and torch.compile keep it). Weights over ~2 GB go to external data.
    """
    import torch
    big = sum(p.numel() * p.element_size() for p in model.parameters()) > 1.8e9
    torch.backends.mha.set_fastpath_enabled(False)
    try:
        with torch.no_grad():
            if exporter == "dynamo":
                torch.onnx.export(model, tuple(inputs), path, input_names=names, dynamo=True, opset_version=18,
                                  external_data=big, verbose=False)
            elif exporter == "torchscript":
                torch.onnx.export(model, tuple(inputs), path, input_names=names, opset_version=17, dynamo=False)
            else:
                raise ValueError(f"unknown exporter {exporter!r}")
    finally:
        torch.backends.mha.set_fastpath_enabled(True)


def onnx_input_names(path):
    """The graph inputs that are not initializers, in order."""
    import onnx
    model = onnx.load(path, load_external_data=False)
    initializers = {t.name for t in model.graph.initializer}
    return [i.name for i in model.graph.input if i.name not in initializers]


def onnxruntime_outputs(path, feeds, threads=0):
    """(outputs, output names) of onnxruntime's CPU provider: the fp32 reference."""
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.log_severity_level = 3
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    return session.run(None, feeds), [o.name for o in session.get_outputs()]


def error_metrics(actual, expected):
    """(max |actual - expected| / max |expected|, cosine similarity), flattened, in float64.

    Non-finite values in the result make both figures fail (inf, nan) rather than be hidden by
    numpy's comparisons. An all-zero reference gives a relative error against 1e-30 (so any
    nonzero result fails) and cosine 1 only when the result is all zero too.
    """
    a = np.asarray(actual, dtype=np.float64).ravel()
    e = np.asarray(expected, dtype=np.float64).ravel()
    if a.shape != e.shape:
        raise ValueError(f"shape {np.shape(actual)}, reference {np.shape(expected)}")
    if not np.all(np.isfinite(a)):
        return float("inf"), float("nan")
    rel = float(np.abs(a - e).max() / max(float(np.abs(e).max()), 1e-30)) if a.size else 0.0
    na, ne = float(np.linalg.norm(a)), float(np.linalg.norm(e))
    if na == 0.0 or ne == 0.0:
        cosine = 1.0 if na == ne else 0.0
    else:
        cosine = float(np.dot(a, e) / (na * ne))
    return rel, cosine


def worst_metrics(actuals, references):
    """Worst relative error and worst cosine over all outputs (lists in the same order)."""
    rels, cosines = zip(*(error_metrics(a, e) for a, e in zip(actuals, references)))
    worst_cos = float("nan") if any(c != c for c in cosines) else min(cosines)
    return max(rels), worst_cos


def judge(precision, rel, cosine):
    """None when the figures are within the precision's bounds, else why not."""
    max_rel, min_cos = BOUNDS[precision]
    problems = []
    if not rel <= max_rel:
        problems.append(f"max rel err {rel:.2e} > {max_rel:g}")
    if min_cos is not None and not cosine >= min_cos:
        problems.append(f"cosine {cosine:.6f} < {min_cos}")
    return "; ".join(problems) or None


def save_inputs(feeds, directory, prefix):
    """Writes each feed as .npy; returns the `--input name=file` arguments for kiln."""
    args = []
    for name, value in feeds.items():
        path = os.path.join(directory, f"{prefix}_{sanitize(name)}.npy")
        np.save(path, value)
        args += ["--input", f"{name}={path}"]
    return args


def write_calibration_inputs(feeds, directory, count=4, seed=1):
    """`count` calibration inputs unlike `feeds` (one input: name -> array) into
    directory/<i>/<name>.npy, as kiln calibrate and --precision auto read them: floats redrawn
    with the feed's mean and spread, integers (token ids, masks) permuted."""
    rng = np.random.default_rng(seed)
    for i in range(count):
        os.makedirs(os.path.join(directory, str(i)), exist_ok=True)
        for name, value in feeds.items():
            if np.issubdtype(value.dtype, np.floating):
                x = rng.standard_normal(value.shape) * (value.std() or 1.0) + value.mean()
            else:
                x = rng.permutation(value.reshape(-1)).reshape(value.shape)
            np.save(os.path.join(directory, str(i), sanitize(name) + ".npy"), x.astype(value.dtype))


def sanitize(name):
    """A tensor name as kiln writes its .npy file name (runtime npyFileName)."""
    return "".join(c if c.isalnum() or c in "_-." else "_" for c in name)


def load_kiln_outputs(out_dir, output_names):
    """The outputs `kiln run --output-dir` wrote, in the order of output_names."""
    return [np.load(os.path.join(out_dir, sanitize(n) + ".npy")) for n in output_names]


def error_tail(text, limit=600):
    """The end of a tool's stderr, one line, for a report."""
    return " | ".join(line for line in text.strip().splitlines()[-8:])[-limit:]


def run_kiln(kiln, args, timeout, hide_gpu=False):
    """Runs `kiln args...`; returns (returncode, stdout, stderr, seconds). A timeout is an error
    (returncode -9 with a message), never a hang."""
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="") if hide_gpu else None
    start = time.perf_counter()
    try:
        proc = subprocess.run([kiln] + args, capture_output=True, text=True, errors="replace", env=env,
                              timeout=timeout)
        return proc.returncode, proc.stdout, proc.stderr, time.perf_counter() - start
    except subprocess.TimeoutExpired as e:
        err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        return -9, "", f"{err}\ntimed out after {timeout} s", time.perf_counter() - start


class ParallelCompile:
    """`kiln compile` of one ONNX file at several precisions at once, with the GPU hidden
    (compiling must not need one). start() returns at once, so the caller can compute the
    onnxruntime reference meanwhile; wait() gives {precision: (error or None, seconds)}."""

    def __init__(self, kiln, onnx_path, plans, timeout, extra_args=(), precision_args=None):
        self.kiln, self.onnx_path, self.plans, self.timeout = kiln, onnx_path, plans, timeout
        self.extra_args = list(extra_args)  # more `kiln compile` options, e.g. --layout nhwc
        self.precision_args = precision_args or {}  # per precision, e.g. fp8's --calibration
        self.pool, self.futures = None, {}

    def start(self):
        from concurrent.futures import ThreadPoolExecutor
        self.pool = ThreadPoolExecutor(max_workers=max(1, len(self.plans)))
        for precision, plan in self.plans.items():
            args = (["compile", self.onnx_path, "-o", plan, "--precision", precision, "--quiet"] + self.extra_args +
                    list(self.precision_args.get(precision, [])))
            self.futures[precision] = self.pool.submit(run_kiln, self.kiln, args, self.timeout, True)
        return self

    def wait(self):
        results = {}
        for precision, future in self.futures.items():
            try:
                code, _, err, seconds = future.result()
                problem = None if code == 0 else f"compile (exit {code}): {error_tail(err)}"
            except OSError as e:  # the binary is missing or not executable
                problem, seconds = f"compile: cannot start kiln: {e}", 0.0
            results[precision] = (problem, round(seconds, 2))
        self.pool.shutdown()
        return results


def kiln_accuracy(kiln, plan, input_args, out_dir, output_names, reference, precision, timeout,
                  timing_cache="none"):
    """Runs the plan once with `kiln run` and judges its outputs against the reference. Returns a
    dict: max_rel_err, cosine, accurate, run_s, and error (why it failed or missed) when not ok."""
    row = {}
    code, _, err, seconds = run_kiln(kiln, ["run", plan, "--output-dir", out_dir, "--quiet", "--timing-cache",
                                            timing_cache] + input_args, timeout)
    row["run_s"] = round(seconds, 2)
    if code != 0:
        row["error"] = f"run (exit {code}): {error_tail(err)}"
        return row
    try:
        actual = load_kiln_outputs(out_dir, output_names)
        rel, cosine = worst_metrics(actual, reference)
    except (OSError, ValueError) as e:
        row["error"] = f"outputs: {e}"
        return row
    row.update(max_rel_err=rel, cosine=cosine)
    problem = judge(precision, rel, cosine)
    row["accurate"] = problem is None
    if problem:
        row["error"] = "accuracy: " + problem
    return row
