#!/usr/bin/env python3
"""`kiln compare --html` opened in real headless Chromium.

Dumps the bundled tiny CNN with the interpreter in fp32 (A) and bf16 (B), writes the comparison
as HTML; does the same for two plans' dumps recorded on an H200 (tests/tools/Inputs/
tiny_cnn_gpu_dumps: fp32 and bf16 plans, every value with its step's time), whose page must
also draw a time bar per timed step and side; and loads each page in headless Chromium (Debian `chromium`, which
scripts/setup-deps.sh installs): the DOM after the scripts ran must say that no script error
happened and that one point was drawn per compared value, the culprits must be marked, the
table must hold a row per value, and a screenshot of the page must not be blank. No GPU
needed. Exits 1 on any failure (also when no Chromium is installed: the report is untested
then).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "..", "..", "examples", "tiny_cnn.onnx")


def browser():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def chromium(exe, work, *args):
    # A profile directory of its own: a test must not depend on (or touch) the user's.
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--allow-file-access-from-files",
           f"--user-data-dir={os.path.join(work, 'profile')}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def png_is_blank(path):
    """True when the decoded image data has (almost) one byte value: an empty page."""
    with open(path, "rb") as f:
        data = f.read()
    if not data.startswith(b"\x89PNG"):
        return True
    chunks, pos = [], 8
    while pos + 8 <= len(data):
        length = int.from_bytes(data[pos:pos + 4], "big")
        kind = data[pos + 4:pos + 8]
        if kind == b"IDAT":
            chunks.append(data[pos + 8:pos + 8 + length])
        pos += 12 + length
    pixels = zlib.decompress(b"".join(chunks))
    return len(set(pixels)) < 16


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


RECORDED = os.path.join(HERE, "Inputs", "tiny_cnn_gpu_dumps")


def check_page(exe, work, page, comparison, label):
    """Problems with the rendered `page` of `comparison` (the JSON `kiln compare --json` printed)."""
    problems = []
    measured = [v for v in comparison["values"] if "max_rel" in v]
    # Bars: one per side per value that took time (GPU dumps only), and they add up to the steps.
    bars = sum(1 for v in comparison["values"] for key in ("ms_a", "ms_b") if v.get(key, 0) > 0)
    for key, side in (("ms_a", "a"), ("ms_b", "b")):
        total = sum(v.get(key, 0) for v in comparison["values"])
        steps = comparison.get("steps_ms", {}).get(side)
        if steps is not None and not 0 < total <= steps * (1 + 1e-9):
            problems.append(f"{label}: the values' {key} add up to {total} ms, all steps {steps} ms")
    proc = chromium(exe, work, "--dump-dom", "file://" + page)
    dom = proc.stdout
    body = re.search(r'<body[^>]*data-drawn="(\d+)"[^>]*data-bars="(\d+)"[^>]*data-errors="([^"]*)"', dom)
    if proc.returncode or not body:
        return [f"{label}: chromium --dump-dom (exit {proc.returncode}) gave no <body> with data-drawn: "
                f"{(proc.stderr or dom)[-400:]}"]
    if body.group(3):
        problems.append(f"{label}: script errors in the page: {body.group(3)}")
    if int(body.group(1)) != len(measured) or not measured:
        problems.append(f"{label}: {body.group(1)} points drawn for {len(measured)} compared values")
    in_dom = dom.count('class="bar"')
    if int(body.group(2)) != bars or in_dom != bars:
        problems.append(f"{label}: {body.group(2)} time bars drawn ({in_dom} in the DOM), {bars} timed steps")
    points = dom.count('class="point"')
    if points != len(measured):
        problems.append(f"{label}: {points} plotted points in the DOM, {len(measured)} values")
    red = len(re.findall(r'<circle[^>]*fill="#d62728"', dom))
    if red != len(comparison["culprits"]):
        problems.append(f"{label}: {red} culprits marked red, the comparison names {len(comparison['culprits'])}")
    tbody = re.search(r"<tbody>(.*?)</tbody>", dom, re.S)
    rows = tbody.group(1).count("<tr") if tbody else 0
    if rows != len(comparison["values"]):
        problems.append(f"{label}: the table has {rows} rows for {len(comparison['values'])} values")
    if not all(v["name"] in dom for v in comparison["values"]):
        problems.append(f"{label}: a value's name is missing from the page")
    shot = os.path.join(work, label + ".png")
    proc = chromium(exe, work, f"--screenshot={shot}", "--window-size=1200,1000", "file://" + page)
    if not os.path.exists(shot):
        problems.append(f"{label}: no screenshot (exit {proc.returncode}): {proc.stderr[-300:]}")
    elif png_is_blank(shot):
        problems.append(f"{label}: the screenshot is blank")
    print(f"{label}: {len(measured)} values, {len(comparison['culprits'])} culprits, {bars} time bars")
    return problems


def compare_page(kiln, work, dumps, label, extra=()):
    page = os.path.join(work, label + ".html")
    proc = run([kiln, "compare", *dumps, "--json", "--html", page, *extra])
    if proc.returncode:
        raise RuntimeError(f"{label}: compare: " + proc.stderr.strip())
    return page, json.loads(proc.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", required=True)
    args = parser.parse_args()
    exe = browser()
    if not exe:
        print("compare report: FAILED: no chromium to test the HTML report in; run scripts/setup-deps.sh")
        return 1
    problems = []
    with tempfile.TemporaryDirectory() as work:
        dumps = []
        for precision in ("fp32", "bf16"):
            dump = os.path.join(work, precision)
            proc = run([args.kiln, "eval", MODEL, "--shape", "image=2x3x32x32", "--precision", precision, "--dump",
                        dump, "--quiet"])
            if proc.returncode:
                print("compare report: FAILED: eval: " + proc.stderr.strip())
                return 1
            dumps.append(dump)
        try:
            page, comparison = compare_page(args.kiln, work, dumps, "interpreter")
            problems += check_page(exe, work, page, comparison, "interpreter")
            # Two plans' dumps recorded on an H200 (bench/precision_report.py --tiny-dumps): both
            # sides timed, the value graph from the interpreter's dump.
            recorded = [os.path.join(RECORDED, p) for p in ("fp32", "bf16")]
            page, comparison = compare_page(args.kiln, work, recorded, "recorded-gpu", ["--edges", dumps[0]])
            if not comparison.get("steps_ms", {}).keys() >= {"a", "b"}:
                problems.append(f"recorded-gpu: no step time sums in the comparison: {comparison.get('steps_ms')}")
            problems += check_page(exe, work, page, comparison, "recorded-gpu")
        except RuntimeError as e:
            problems.append(str(e))
    for problem in problems:
        print("FAILED " + problem)
    print(f"compare report: {'FAILED' if problems else 'ok'} (in {os.path.basename(exe)})")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
