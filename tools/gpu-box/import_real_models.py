#!/usr/bin/env python3
"""Exports real models with torch and imports each with the statically linked `kiln` binary.

Runs on the GPU box (it has torch, torchvision, transformers and onnxscript, but no LLVM): in one
device call it proves the self-contained binary runs there and that the importer takes what the
TorchScript (opset 17) and dynamo (opset 18+) exporters emit. Models have random weights.

Prints one table row per (model, exporter): import ok, kiln op count, seconds, and the first
line of the error when the import fails. Exit status 1 when any import fails.
"""
import argparse
import os
import re
import subprocess
import sys
import time
import traceback

import torch


def build_models():
    import torchvision
    from transformers import BertConfig, BertModel

    class Bert(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bert = BertModel(BertConfig())

        def forward(self, input_ids, attention_mask):
            return self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    ids = torch.randint(0, 30522, (1, 128))
    return [
        ("resnet50", torchvision.models.resnet50(weights=None), (torch.randn(1, 3, 224, 224),)),
        ("mobilenet_v3_large", torchvision.models.mobilenet_v3_large(weights=None), (torch.randn(1, 3, 224, 224),)),
        ("vit_b_16", torchvision.models.vit_b_16(weights=None), (torch.randn(1, 3, 224, 224),)),
        ("bert_base_seq128", Bert(), (ids, torch.ones(1, 128, dtype=torch.int64))),
    ]


def export(model, args, path, dynamo):
    model.eval()
    # The TorchScript exporter cannot export the fused native multi-head-attention fast path
    # (aten::_native_multi_head_attention) that torchvision's ViT takes in eval mode.
    torch.backends.mha.set_fastpath_enabled(dynamo)
    with torch.no_grad():
        if dynamo:
            torch.onnx.export(model, args, path, dynamo=True, opset_version=18, external_data=False)
        else:
            torch.onnx.export(model, args, path, dynamo=False, opset_version=17)


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
    for name, model, inputs in build_models():
        for exporter in ("torchscript", "dynamo"):
            path = os.path.join(args.work, f"{name}_{exporter}.onnx")
            row = {"model": name, "exporter": exporter, "ok": False, "ops": "-", "seconds": "-", "note": ""}
            try:
                export(model, inputs, path, exporter == "dynamo")
            except Exception as e:  # an export failure is torch's, not kiln's: report it
                row["note"] = "export failed: " + str(e).splitlines()[0][:150]
                traceback.print_exc()
                rows.append(row)
                continue
            start = time.time()
            proc = subprocess.run([args.kiln, "import", path, "-o", path + ".mlir"],
                                  capture_output=True, text=True, errors="replace")
            row["seconds"] = f"{time.time() - start:.1f}"
            if proc.returncode == 0:
                row["ok"] = True
                m = re.search(r": (\d+) ops", proc.stderr)
                row["ops"] = m.group(1) if m else "?"
                row["note"] = proc.stderr.strip().splitlines()[-1][:150]
            else:
                failed += 1
                row["note"] = proc.stderr.strip()[:400].replace("\n", " | ")
            rows.append(row)
            print(f"{name:20s} {exporter:12s} ok={row['ok']} ops={row['ops']} {row['seconds']}s {row['note']}",
                  flush=True)
    table = ["| model | exporter | import ok | kiln ops | seconds | note |", "|---|---|---|---|---|---|"]
    table += [f"| {r['model']} | {r['exporter']} | {'yes' if r['ok'] else 'NO'} | {r['ops']} | {r['seconds']} | {r['note']} |"
              for r in rows]
    print("\n".join(table))
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        open(os.path.join(args.out, "real_models.md"), "w").write("\n".join(table) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
