#!/usr/bin/env python3
"""Generated kernels on the GPU against the reference interpreter, at awkward sizes.

Each case is a one-op kiln MLIR module whose sizes are odd on purpose: 1 element, primes, one
past and one short of the vector width and of the block size, a million and three. `kiln compile`
+ `kiln run` (which poisons the arena with 0xFF first, so an element no thread writes shows up
as NaN) must match `kiln eval` on the same inputs: exactly for data movement and integer ops,
within a few float ulps for arithmetic (the GPU computes f32 transcendentals in float, the
interpreter in double). Pools with channels_last (C = 3, 13, 64, 72, f32 and bf16) are checked
against the channels-first pool on the transposed input. Prints one line per failing case and

    generated-kernels: P passed, F failed, T cases

Exit status 77 (ctest's skip code) without a CUDA device.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

SKIP_EXIT_CODE = 77
EMBEDDING_ROWS = 50  # i64 inputs are ids into a table of this many rows, drawn from [-50, 50)
ODD_SIZES = [1, 3, 7, 255, 257, 1023, 1025, 4099, 1000003]


def shape_text(shape, elem):
    return "tensor<" + "".join(f"{d}x" for d in shape) + elem + ">"


def unary(op, shape, elem="f32", attrs=""):
    t = shape_text(shape, elem)
    return (f"%y = kiln.{op} %x {attrs}: {t}", [("x", shape, elem)], t)


def binary(op, lhs, rhs, out, elem="f32"):
    a, b, r = shape_text(lhs, elem), shape_text(rhs, elem), shape_text(out, elem)
    return (f"%y = kiln.{op} %x, %z : ({a}, {b}) -> {r}", [("x", lhs, elem), ("z", rhs, elem)], r)


def cases():
    out = []
    for n in ODD_SIZES:
        out.append((f"relu_{n}", unary("relu", [n])))
        out.append((f"exp_{n}", unary("exp", [n])))
        out.append((f"add_{n}", binary("add", [n], [n], [n])))
        out.append((f"mul_f16_{n}", binary("mul", [n], [n], [n], "f16")))
        out.append((f"add_scalar_{n}", binary("add", [n], [1], [n])))
        out.append((f"cast_{n}", (f"%y = kiln.cast %x : {shape_text([n], 'f32')} to {shape_text([n], 'f16')}",
                                  [("x", [n], "f32")], shape_text([n], "f16"))))
        out.append((f"add_i32_{n}", binary("add", [n], [n], [n], "i32")))
    for rows, cols in [(1, 1), (3, 7), (33, 65), (257, 129), (7, 1025), (1, 1000003)]:
        out.append((f"bias_add_{rows}x{cols}", binary("add", [rows, cols], [cols], [rows, cols])))
        out.append((f"row_add_{rows}x{cols}", binary("add", [rows, cols], [rows, 1], [rows, cols])))
        t_in, t_out = shape_text([rows, cols], "f32"), shape_text([cols, rows], "f32")
        out.append((f"transpose_{rows}x{cols}", (
            f"%y = kiln.transpose %x {{perm = array<i64: 1, 0>}} : ({t_in}) -> {t_out}", [("x", [rows, cols], "f32")],
            t_out)))
        out.append((f"softmax_{rows}x{cols}", unary("softmax", [rows, cols], attrs="{axis = 1 : i64} ")))
        t_red = shape_text([rows, 1], "f32")
        out.append((f"reduce_sum_{rows}x{cols}", (
            "%a = kiln.constant dense<[1]> : tensor<1xi64>\n"
            f"  %y = kiln.reduce_sum %x axes %a : ({t_in}, tensor<1xi64>) -> {t_red}", [("x", [rows, cols], "f32")],
            t_red)))
    # Broadcasts whose innermost axis is a multiple of the vector width take the vectorized
    # path: a row (bias) read as vectors at each chunk's offset, or one element per chunk.
    for elem in ["f32", "f16"]:
        for rows, cols in [(33, 64), (5, 3072), (3, 8)]:
            out.append((f"bias_add_{elem}_{rows}x{cols}", binary("add", [rows, cols], [cols], [rows, cols], elem)))
        out.append((f"channel_mul_{elem}_2x8x64", binary("mul", [2, 8, 64], [8, 1], [2, 8, 64], elem)))
        out.append((f"plane_add_{elem}_4x8x48", binary("add", [4, 8, 48], [1, 8, 48], [4, 8, 48], elem)))
    for n in [7, 512, 769, 1025]:  # 512: rows a warp takes in chunks of 8
        t = shape_text([5, n], "f32")
        tw = shape_text([n], "f32")
        out.append((f"layer_norm_5x{n}", (
            f"%y = kiln.layer_norm %x, %g, %b {{axis = 1 : i64}} : ({t}, {tw}, {tw}) -> {t}",
            [("x", [5, n], "f32"), ("g", [n], "f32"), ("b", [n], "f32")], t)))
    out += fused_cases()
    out += gemm_group_cases()
    out += norm_group_cases()
    # BERT's where(row fully masked, 0, attention) over the bytes of the value it keeps (the
    # softmax's: it dies there): a warp a row writes only the flagged rows (about 30% here).
    for rows, n in [(33, 768), (7, 100)]:
        t, tc = shape_text([rows, n], "f32"), shape_text([rows, 1], "i1")
        body = (f"%s = kiln.softmax %x {{axis = 1 : i64}} : {t}\n"
                f"  %z = kiln.constant dense<0.0> : tensor<f32>\n"
                f"  %y = kiln.where %c, %z, %s : ({tc}, tensor<f32>, {t}) -> {t}")
        out.append((f"softmax_where_in_place_{rows}x{n}", (body, [("x", [rows, n], "f32"), ("c", [rows, 1], "i1")], t)))
    out += gather_group_cases()
    return out


def norm_group_cases():
    """Layer norms as kiln compile fuses them (a norm group, one kernel): the residual sum before
    (the prologue), the bf16 cast and the E4M3 quantize of the normalized value after (the
    epilogue), three results. Rows of a warp (7; 768 and 384 in chunks of 8 and 4 elements per
    lane), of a block in registers (1025, 5000) and streamed from memory (20000)."""
    out = []
    for rows, n in [(5, 7), (33, 768), (9, 384), (3, 1025), (2, 5000), (2, 20000)]:
        t, tw = shape_text([rows, n], "f32"), shape_text([n], "f32")
        th, tq = shape_text([rows, n], "bf16"), shape_text([rows, n], "f8E4M3FN")
        body = (f"%s = kiln.add %x, %r : ({t}, {t}) -> {t}\n"
                f"  %y = kiln.layer_norm %s, %g, %b {{axis = 1 : i64}} : ({t}, {tw}, {tw}) -> {t}\n"
                f"  %h = kiln.cast %y : {t} to {th}\n"
                f"  %c = kiln.constant dense<0.0078125> : tensor<f32>\n"
                f"  %z = kiln.constant dense<0.0> : tensor<f8E4M3FN>\n"
                f"  %q = kiln.quantize %y, %c, %z : ({t}, tensor<f32>, tensor<f8E4M3FN>) -> {tq}")
        inputs = [("x", [rows, n], "f32"), ("r", [rows, n], "f32"), ("g", [n], "f32"), ("b", [n], "f32")]
        out.append((f"norm_group_{rows}x{n}", (body, inputs, [("y", t), ("h", th), ("q", tq)])))
    # A bf16 layer_norm (BERT's in bf16 plans): the body computes it in f32, its scale and bias
    # are converted to f32 before the group, the result is rounded to bf16 once.
    for rows, n in [(33, 768), (3, 1025)]:
        t, tw, th, tq = (shape_text(s, e) for s, e in
                         [([rows, n], "f32"), ([n], "f32"), ([rows, n], "bf16"), ([rows, n], "f8E4M3FN")])
        thw = shape_text([n], "bf16")
        body = (f"%xb = kiln.cast %x : {t} to {th}\n  %rb = kiln.cast %r : {t} to {th}\n"
                f"  %gb = kiln.cast %g : {tw} to {thw}\n  %bb = kiln.cast %b : {tw} to {thw}\n"
                f"  %s = kiln.add %xb, %rb : ({th}, {th}) -> {th}\n"
                f"  %n = kiln.layer_norm %s, %gb, %bb {{axis = 1 : i64}} : ({th}, {thw}, {thw}) -> {th}\n"
                f"  %y = kiln.cast %n : {th} to {t}\n"
                f"  %c = kiln.constant dense<0.0078125> : tensor<bf16>\n"
                f"  %z = kiln.constant dense<0.0> : tensor<f8E4M3FN>\n"
                f"  %q = kiln.quantize %n, %c, %z : ({th}, tensor<bf16>, tensor<f8E4M3FN>) -> {tq}")
        inputs = [("x", [rows, n], "f32"), ("r", [rows, n], "f32"), ("g", [n], "f32"), ("b", [n], "f32")]
        out.append((f"norm_group_bf16_{rows}x{n}", (body, inputs, [("y", t), ("q", tq)])))
    # BERT's embedding layer_norm (f32): its bf16 cast is read outside the group (the next
    # residual) and by the quantize of the next linear layer's E4M3 input; the group writes both.
    rows, n = 33, 768
    t, tw, th, tq = (shape_text(s, e) for s, e in
                     [([rows, n], "f32"), ([n], "f32"), ([rows, n], "bf16"), ([rows, n], "f8E4M3FN")])
    body = (f"%s = kiln.add %x, %r : ({t}, {t}) -> {t}\n"
            f"  %y = kiln.layer_norm %s, %g, %b {{axis = 1 : i64}} : ({t}, {tw}, {tw}) -> {t}\n"
            f"  %h = kiln.cast %y : {t} to {th}\n"
            f"  %c = kiln.constant dense<0.0078125> : tensor<bf16>\n"
            f"  %z = kiln.constant dense<0.0> : tensor<f8E4M3FN>\n"
            f"  %q = kiln.quantize %h, %c, %z : ({th}, tensor<bf16>, tensor<f8E4M3FN>) -> {tq}")
    inputs = [("x", [rows, n], "f32"), ("r", [rows, n], "f32"), ("g", [n], "f32"), ("b", [n], "f32")]
    out.append((f"norm_group_cast_quantize_{rows}x{n}", (body, inputs, [("h", th), ("q", tq)])))
    # BERT's word embeddings: the lookup (a gather of whole rows of a 50-row table, ids from -50
    # on, negatives counting from the end) read by the norm group's kernel from the table; rows
    # of a warp in chunks (768) and element by element (100).
    for rows, n in [(33, 768), (5, 100)]:
        t, tw, th = (shape_text(s, e) for s, e in [([rows, n], "f32"), ([n], "f32"), ([rows, n], "bf16")])
        tt, ti = shape_text([EMBEDDING_ROWS, n], "f32"), shape_text([rows], "i64")
        body = (f"%e = kiln.gather %t, %i {{axis = 0 : i64}} : ({tt}, {ti}) -> {t}\n"
                f"  %s = kiln.add %e, %r : ({t}, {t}) -> {t}\n"
                f"  %y = kiln.layer_norm %s, %g, %b {{axis = 1 : i64}} : ({t}, {tw}, {tw}) -> {t}\n"
                f"  %h = kiln.cast %y : {t} to {th}")
        inputs = [("t", [EMBEDDING_ROWS, n], "f32"), ("i", [rows], "i64"), ("r", [rows, n], "f32"), ("g", [n], "f32"),
                  ("b", [n], "f32")]
        out.append((f"norm_group_embedding_{rows}x{n}", (body, inputs, [("y", t), ("h", th)])))
    return out


def pool_shape(shape, kernel, strides, dilations, pads, ceil):
    """ONNX output size of a channels-first pool (a ceil_mode window starting in the end padding
    is dropped)."""
    out = list(shape[:2])
    k = len(kernel)
    for a in range(k):
        span = (kernel[a] - 1) * dilations[a] + 1
        numer = shape[a + 2] + pads[a] + pads[a + k] - span
        size = (-(-numer // strides[a]) if ceil else numer // strides[a]) + 1
        if ceil and (size - 1) * strides[a] >= shape[a + 2] + pads[a]:
            size -= 1
        out.append(size)
    return out


def to_last(shape):
    return [shape[0]] + list(shape[2:]) + [shape[1]]


def layout_module(op, shape_first, out_first, elem, attrs, last):
    """One pool over [N, C, D...] (or [N, D..., C] with `last`), f32 at the edges: bf16 and E4M3
    have no numpy type, so such a pool sits between casts (exact back to f32)."""
    in_shape, out_shape = (to_last(shape_first), to_last(out_first)) if last else (shape_first, out_first)
    attr_text = ", ".join(attrs + (["channels_last = true"] if last else []))
    attr_text = f" {{{attr_text}}}" if attr_text else ""
    t_in, t_out = shape_text(in_shape, "f32"), shape_text(out_shape, "f32")
    if elem == "f32":
        body = f"%y = kiln.{op} %x{attr_text} : ({t_in}) -> {t_out}"
    else:
        h_in, h_out = shape_text(in_shape, elem), shape_text(out_shape, elem)
        body = (f"%xh = kiln.cast %x : {t_in} to {h_in}\n  %p = kiln.{op} %xh{attr_text} : ({h_in}) -> {h_out}\n"
                f"  %y = kiln.cast %p : {h_out} to {t_out}")
    return body, [("x", in_shape, "f32")], t_out


def channels_last_pool_cases():
    """Pools with channels_last (kernels vectorized over channels, or scalar at odd counts)
    against the channels-first op on the transposed input in the interpreter: the same
    arithmetic, so it checks the kernels without relying on the interpreter's own
    channels_last support. Each case: (name, channels-last spec, channels-first spec)."""
    out = []
    arr = lambda values: "array<i64: " + ", ".join(str(v) for v in values) + ">"
    windows = [
        # ResNet's stem pool at an odd size.
        ("k3s2", [3, 3], [2, 2], [1, 1], [1, 1, 1, 1], False, False),
        # ceil_mode, dilation, asymmetric pads, and count_include_pad for avg.
        ("k23d2ceil", [2, 3], [2, 2], [2, 1], [0, 1, 1, 1], True, True),
    ]

    def windowed(op, elem, c, window):
        tag, kernel, strides, dilations, pads, ceil, include_pad = window
        shape = [2, c, 9, 11]
        out_shape = pool_shape(shape, kernel, strides, dilations, pads, ceil)
        attrs = [f"kernel_shape = {arr(kernel)}", f"strides = {arr(strides)}", f"dilations = {arr(dilations)}",
                 f"pads = {arr(pads)}"] + (["ceil_mode = true"] if ceil else [])
        if op == "avg_pool" and include_pad:
            attrs.append("count_include_pad = true")
        return (f"pool_last_{op}_{tag}_{elem}_c{c}", layout_module(op, shape, out_shape, elem, attrs, True),
                layout_module(op, shape, out_shape, elem, attrs, False))

    for elem in ["f32", "bf16"]:
        for c in [3, 13, 64, 72]:
            for window in windows:
                for op in ["max_pool", "avg_pool"]:
                    out.append(windowed(op, elem, c, window))
        # Global pools: small planes at odd channel counts, ResNet-50's head, an SE block whose
        # 112x112 plane is split across blocks (two kernels), a 1-d plane.
        for shape in [[2, 3, 7, 7], [2, 13, 7, 7], [2, 72, 7, 7], [1, 2048, 7, 7], [1, 16, 112, 112],
                      [1, 72, 28, 28], [3, 64, 5]]:
            out_shape = shape[:2] + [1] * (len(shape) - 2)
            for op in ["global_max_pool", "global_avg_pool"]:
                name = f"pool_last_{op}_{elem}_" + "x".join(str(d) for d in shape)
                out.append((name, layout_module(op, shape, out_shape, elem, [], True),
                            layout_module(op, shape, out_shape, elem, [], False)))
    # E4M3 max pools (an fp8 plan's quantize may move above its max pool only once these pass:
    # E4M3FN has no -inf, so the kernel starts from f32's and compares in f32). The casts to and
    # from E4M3 round the same way on both sides, and a max is one of its inputs: exact.
    for c in [13, 64, 72]:
        for window in windows:
            out.append(windowed("max_pool", "f8E4M3FN", c, window))
    return out


def gemm_group_cases():
    """Linear layers with their epilogue as one cuBLASLt matmul (a gemm fusion group) against the
    interpreter evaluating the group's body (f32 math from the operands, one rounding)."""
    out = []
    for elem, (b, m, k, n), act in [("f32", (2, 37, 65, 33), "relu"), ("f16", (1, 64, 128, 256), "relu"),
                                    ("f16", (3, 5, 72, 40), "gelu"), ("f32", (1, 1, 7, 9), "")]:
        tx, tw, tb, ty = (shape_text(s, elem) for s in ([b, m, k], [k, n], [n], [b, m, n]))
        body = (f"%p = kiln.matmul %x, %w : ({tx}, {tw}) -> {ty}\n  %a = kiln.add %p, %b : ({ty}, {tb}) -> {ty}\n"
                f"  %s = kiln.add %r, %a : ({ty}, {ty}) -> {ty}")
        if act == "relu":
            body += f"\n  %y = kiln.relu %s : {ty}"
        elif act == "gelu":
            body += f"\n  %y = kiln.gelu %s {{approximate = \"tanh\"}} : {ty}"
        else:
            body = body.replace("%s = kiln.add", "%y = kiln.add")
        inputs = [("x", [b, m, k], elem), ("w", [k, n], elem), ("b", [n], elem), ("r", [b, m, n], elem)]
        out.append((f"gemm_group_{act or 'bias'}_{elem}_{b}x{m}x{k}x{n}", (body, inputs, ty)))
    return out


def gelu_chain(x, shape, elem):
    """Bias-free GELU(erf) as the TorchScript exporter writes it: x * 0.5 * (1 + erf(x / sqrt(2)))."""
    t, s = shape_text(shape, elem), shape_text([], elem)
    return (f"%c2 = kiln.constant dense<1.4142135> : {s}\n  %c1 = kiln.constant dense<1.0> : {s}\n"
            f"  %ch = kiln.constant dense<0.5> : {s}\n"
            f"  %gd = kiln.div {x}, %c2 : ({t}, {s}) -> {t}\n  %ge = kiln.erf %gd : {t}\n"
            f"  %ga = kiln.add %ge, %c1 : ({t}, {s}) -> {t}\n  %gm = kiln.mul {x}, %ga : ({t}, {t}) -> {t}\n"
            f"  %y = kiln.mul %gm, %ch : ({t}, {s}) -> {t}")


def fused_cases():
    """Chains of elementwise ops, which kiln compile and kiln eval both turn into one fusion group:
    the fused kernel (every body op's element code in one loop, fp32 inside) against the
    interpreter evaluating the group's body."""
    out = []
    for n in [1, 7, 1025, 1000003]:
        out.append((f"fused_gelu_{n}", (gelu_chain("%x", [n], "f32"), [("x", [n], "f32")], shape_text([n], "f32"))))
    for elem in ["f32", "f16"]:
        for rows, cols in [(3, 7), (33, 64), (5, 3072)]:
            t, tb = shape_text([rows, cols], elem), shape_text([cols], elem)
            body = f"%xb = kiln.add %x, %b : ({t}, {tb}) -> {t}\n  " + gelu_chain("%xb", [rows, cols], elem)
            out.append((f"fused_bias_gelu_{elem}_{rows}x{cols}", (body, [("x", [rows, cols], elem), ("b", [cols], elem)], t)))
    # bf16 inside the group (numpy has no bf16: f32 graph edges, casts inside), rounding once
    # at each explicit cast.
    for n in [7, 4099]:
        t, tb = shape_text([n], "f32"), shape_text([n], "bf16")
        body = (f"%xb = kiln.cast %x : {t} to {tb}\n  %r = kiln.relu %xb : {tb}\n"
                f"  %m = kiln.mul %r, %xb : ({tb}, {tb}) -> {tb}\n  %y = kiln.cast %m : {tb} to {t}")
        out.append((f"fused_bf16_casts_{n}", (body, [("x", [n], "f32")], t)))
    # Attention-score shapes: scale, additive mask [B,1,1,S], a bool intermediate and where.
    for s in [5, 37, 128]:
        t, tm, ts = shape_text([2, 3, s, s], "f32"), shape_text([2, 1, 1, s], "f32"), shape_text([], "f32")
        ti = shape_text([2, 3, s, s], "i1")
        body = (f"%k = kiln.constant dense<8.0> : {ts}\n  %z = kiln.constant dense<0.0> : {ts}\n"
                f"  %d = kiln.div %x, %k : ({t}, {ts}) -> {t}\n  %a = kiln.add %d, %m : ({t}, {tm}) -> {t}\n"
                f"  %p = kiln.greater %a, %z : ({t}, {ts}) -> {ti}\n"
                f"  %y = kiln.where %p, %a, %d : ({ti}, {t}, {t}) -> {t}")
        out.append((f"fused_scale_mask_{s}", (body, [("x", [2, 3, s, s], "f32"), ("m", [2, 1, 1, s], "f32")], t)))
    return out


def gather_group_cases():
    """Chains of index maps that kiln compile runs as one `gather` group kernel: an image's cast
    to bf16, its 2x2 blocks gathered to channels by a transpose and padded at the borders and
    to 16 channels (kiln-space-to-depth-convs' stem input), at odd sizes; the same with a pad
    value of 1.5 and an elementwise op before the cast; a transpose and pad of f32 with no
    elementwise op. The bf16 result is widened to f32 by a cast after the group (numpy has no
    bf16), which the poisoned arena's NaNs pass through."""
    out = []
    for n, h, w, value, pre in [(1, 4, 6, "0.0", ""), (3, 18, 10, "1.5", "relu"), (5, 66, 70, "0.0", ""),
                                (2, 230, 226, "0.0", "")]:
        t = shape_text([n, 3, h, w], "f32")
        tb, tr = shape_text([n, 3, h, w], "bf16"), shape_text([n, 3, h // 2, 2, w // 2, 2], "bf16")
        tt, tc = shape_text([n, h // 2, w // 2, 2, 2, 3], "bf16"), shape_text([n, h // 2, w // 2, 12], "bf16")
        padded = [n, h // 2 + 3, w // 2 + 3, 16]
        tp = shape_text(padded, "bf16")
        body = f"%r = kiln.relu %x : {t}\n  " if pre else ""
        body += (f"%b = kiln.cast {'%r' if pre else '%x'} : {t} to {tb}\n"
                 f"  %s = kiln.reshape %b : {tb} to {tr}\n"
                 f"  %g = kiln.transpose %s {{perm = array<i64: 0, 2, 4, 3, 5, 1>}} : ({tr}) -> {tt}\n"
                 f"  %c = kiln.reshape %g : {tt} to {tc}\n"
                 f"  %a = kiln.constant dense<[0, 2, 2, 0, 0, 1, 1, 4]> : tensor<8xi64>\n"
                 f"  %v = kiln.constant dense<{value}> : tensor<bf16>\n"
                 f"  %p = kiln.pad %c, %a, %v : ({tc}, tensor<8xi64>, tensor<bf16>) -> {tp}\n"
                 f"  %y = kiln.cast %p : {tp} to {shape_text(padded, 'f32')}")
        out.append((f"gather_stem_{n}x{h}x{w}{'_' + pre if pre else ''}",
                    (body, [("x", [n, 3, h, w], "f32")], shape_text(padded, "f32"))))
    for a, b, c, d in [(2, 5, 7, 3), (1, 33, 65, 2), (3, 1, 1025, 7)]:
        t, tt = shape_text([a, b, c, d], "f32"), shape_text([a, d, b, c], "f32")
        tp = shape_text([a, d + 1, b, c + 5], "f32")
        body = (f"%g = kiln.transpose %x {{perm = array<i64: 0, 3, 1, 2>}} : ({t}) -> {tt}\n"
                f"  %a = kiln.constant dense<[0, 1, 0, 3, 0, 0, 0, 2]> : tensor<8xi64>\n"
                f"  %v = kiln.constant dense<-2.0> : tensor<f32>\n"
                f"  %y = kiln.pad %g, %a, %v : ({tt}, tensor<8xi64>, tensor<f32>) -> {tp}")
        out.append((f"gather_transpose_pad_{a}x{b}x{c}x{d}", (body, [("x", [a, b, c, d], "f32")], tp)))
    return out


def outputs_of(result):
    """A spec's outputs as (name, type): one named y, or the list a multi-output spec gives."""
    return [("y", result)] if isinstance(result, str) else result


def module(body, inputs, result):
    args = ", ".join(f"%{name}: {shape_text(shape, elem)} {{kiln.name = \"{name}\"}}" for name, shape, elem in inputs)
    outputs = outputs_of(result)
    results = ", ".join(f"{t} {{kiln.name = \"{name}\"}}" for name, t in outputs)
    values = ", ".join(f"%{name}" for name, _ in outputs)
    types = ", ".join(t for _, t in outputs)
    return f"func.func @main({args}) -> ({results}) {{\n  {body}\n  return {values} : {types}\n}}\n"


def tolerance(name, output="y"):
    if name.startswith("norm_group"):
        # The f32 value as layer_norm's; its bf16 and E4M3 roundings may fall the other way
        # where the GPU's float statistics and the interpreter's double ones differ in the
        # last bit: one bf16 ulp, one E4M3 step (1/8 relative; the scale 2^-7 below 2^-3).
        if output == "y" and "bf16" in name:
            return 8e-3, 8e-3
        return {"y": (1e-5, 1e-6), "h": (8e-3, 8e-3), "q": (0.126, 2.0 ** -10)}[output]
    if "bf16" in name:
        return 8e-3, 8e-3  # one bf16 ulp: the interpreter rounds from double, the GPU from float
    if "f16" in name or name.startswith("cast"):
        return 1e-3, 1e-3
    if name.startswith("fused"):
        return 1e-5, 1e-6
    if name.startswith("pool_last"):
        if "max_pool" in name:
            return 0.0, 0.0  # a max is one of the inputs
        # One rounding of an f32 sum (the interpreter sums in double); bf16: an ulp either way.
        return (8e-3, 8e-3) if "bf16" in name else (1e-5, 1e-6)
    if name.startswith("gemm_group"):
        # Sums of up to 128 products of values in [-4, 4]: the interpreter accumulates in
        # double, cuBLASLt in fp32 (strict for these fp32 plans) in another order.
        return (4e-3, 4e-2) if "f16" in name else (1e-5, 1e-4)
    if name.startswith(("exp", "softmax", "layer_norm", "reduce", "row_add", "bias_add", "add", "mul", "channel_mul",
                        "plane_add")):
        return 1e-5, 1e-6
    return 0.0, 0.0  # data movement, relu: exact


def run_case(kiln, name, spec, tmp, rng, reference_spec=None):
    """Compiles and runs `spec` on the GPU and evaluates it in the interpreter, on the same
    random inputs. With `reference_spec` (a channels-first module of a channels_last `spec`) the
    interpreter evaluates that instead, on the inputs moved to channels first, and the GPU
    result is moved back before comparing."""
    body, inputs, result = spec
    path = os.path.join(tmp, name + ".mlir")
    with open(path, "w") as f:
        f.write(module(body, inputs, result))
    ref_path = path
    if reference_spec:
        ref_path = os.path.join(tmp, name + "_first.mlir")
        with open(ref_path, "w") as f:
            f.write(module(*reference_spec))
    feeds, ref_feeds = [], []
    for input_name, shape, elem in inputs:
        dtype = {"f32": np.float32, "f16": np.float16, "i32": np.int32, "i64": np.int64, "i1": np.bool_}[elem]
        if elem == "i1":
            value = rng.random(size=shape) < 0.3
        elif elem == "i64":
            value = rng.integers(-EMBEDDING_ROWS, EMBEDDING_ROWS, size=shape).astype(dtype)
        else:
            value = (rng.integers(-1000, 1000, size=shape) if elem == "i32" else rng.uniform(-4, 4, size=shape)).astype(dtype)
        npy = os.path.join(tmp, f"{name}_{input_name}.npy")
        np.save(npy, value)
        feeds += ["--input", f"{input_name}={npy}"]
        if reference_spec:
            npy = os.path.join(tmp, f"{name}_{input_name}_first.npy")
            np.save(npy, np.ascontiguousarray(np.moveaxis(value, -1, 1)))
            ref_feeds += ["--input", f"{input_name}={npy}"]
    plan = os.path.join(tmp, name + ".kiln")
    steps = [([kiln, "compile", path, "-o", plan, "--quiet"], "compile"),
             ([kiln, "run", plan, "--quiet", "--timing-cache", "none", "--output-dir", os.path.join(tmp, name + "_gpu")] + feeds,
              "run"),
             ([kiln, "eval", ref_path, "--output-dir", os.path.join(tmp, name + "_ref")] + (ref_feeds or feeds), "eval")]
    for command, what in steps:
        proc = subprocess.run(command, capture_output=True, text=True, errors="replace")
        if proc.returncode != 0:
            return f"{what}: {(proc.stderr.strip().splitlines() or ['exit ' + str(proc.returncode)])[-1][:300]}"
    if name.startswith("gather"):
        # The case is about the gather group's kernel: it must be what ran.
        listing = subprocess.run([kiln, "inspect", plan], capture_output=True, text=True).stdout
        gathers = [line for line in listing.splitlines() if line.startswith("step ") and '_gather"' in line]
        if len(gathers) != 1 or "kiln.transpose" in listing or "kiln.pad" in listing:
            return f"expected the transpose and pad in one gather group step, got {len(gathers)}"
    if "where_in_place" in name:
        listing = subprocess.run([kiln, "inspect", plan], capture_output=True, text=True).stdout
        if '_where_in_place"' not in listing:
            return "expected the where to run in place (a where_in_place kernel step)"
    if name.startswith("norm_group"):
        # The case is about the fused kernel: it must be what ran.
        listing = subprocess.run([kiln, "inspect", plan], capture_output=True, text=True).stdout
        norm_steps = [line for line in listing.splitlines() if line.startswith("step ") and "norm_group" in line]
        if len(norm_steps) != 1 or " layer_norm" in listing:
            return f"expected the layer_norm in one norm group kernel step, got {len(norm_steps)}"
    for output, _ in outputs_of(result):
        gpu = np.load(os.path.join(tmp, name + "_gpu", f"{output}.npy")).astype(np.float64)
        ref = np.load(os.path.join(tmp, name + "_ref", f"{output}.npy")).astype(np.float64)
        if reference_spec:
            gpu = np.moveaxis(gpu, -1, 1)
        if gpu.shape != ref.shape:
            return f"{output}: shape {gpu.shape}, interpreter {ref.shape}"
        if np.isnan(gpu).any() and not np.isnan(ref).any():
            return f"{output}: {int(np.isnan(gpu).sum())} elements NaN (unwritten: the arena was poisoned)"
        rtol, atol = tolerance(name, output)
        ok = np.isclose(gpu, ref, rtol=rtol, atol=atol, equal_nan=True)
        if not ok.all():
            k = int(np.argmax(~ok.ravel()))
            return (f"{output}: {int((~ok).sum())} of {ok.size} differ; first at {k}: gpu {gpu.ravel()[k]!r}, "
                    f"interpreter {ref.ravel()[k]!r}")
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", required=True)
    parser.add_argument("--only", default="",
                        help="comma list of case-name prefixes to run (e.g. fused_,gemm_group_); default: all")
    args = parser.parse_args()
    try:
        present = subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        present = False
    if not present:
        print("generated-kernels: SKIPPED, no CUDA device here (nvidia-smi finds none); run it on the GPU box")
        return SKIP_EXIT_CODE
    rng = np.random.default_rng(0)
    failed = 0
    prefixes = tuple(p for p in args.only.split(",") if p)
    all_cases = [c for c in cases() + channels_last_pool_cases() if not prefixes or c[0].startswith(prefixes)]
    with tempfile.TemporaryDirectory() as tmp:
        for index, (name, spec, *reference) in enumerate(all_cases):
            problem = run_case(args.kiln, name, spec, tmp, rng, *reference)
            if problem:
                failed += 1
            # Flushed case by case: a run cut short (a device call's time limit) still says how
            # far it got.
            line = f"FAILED {name}: {problem}" if problem else f"ok     {name} ({index + 1}/{len(all_cases)})"
            print(line, flush=True)
    print(f"generated-kernels: {len(all_cases) - failed} passed, {failed} failed, {len(all_cases)} cases")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
