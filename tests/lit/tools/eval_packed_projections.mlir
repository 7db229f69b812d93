// kiln-pack-attention-projections against the interpreter: the bf16 pipeline with the Q, K and V
// projections packed into one [32, 96] GEMM gives exactly what the same passes give without the
// packing (each output element is the same dot product plus the same bias), and within bf16
// rounding of float64 attention computed from the f32 model.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np; np.save('%t/x.npy', np.random.default_rng(3).uniform(-1, 1, (1, 32, 32)).astype(np.float32)); m = np.ones((1, 32), np.int64); m[0, 25:] = 0; np.save('%t/m.npy', m)"
// RUN: kiln-opt %S/Inputs/attention_projections.mlir --kiln-pipeline="precision=bf16" -o %t/packed.mlir 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: kiln-opt %S/Inputs/attention_projections.mlir -o %t/unpacked.mlir --pass-pipeline="builtin.module(func.func(kiln-fold-constants,kiln-mixed-precision{precision=bf16},canonicalize,cse,kiln-fuse-attention,kiln-form-fusion-groups))" 2>/dev/null
// RUN: FileCheck %s --check-prefix=PACKED < %t/packed.mlir
// RUN: FileCheck %s --check-prefix=UNPACKED < %t/unpacked.mlir
// RUN: kiln eval %t/packed.mlir --input x=%t/x.npy --input m=%t/m.npy --output-dir %t/packed --quiet
// RUN: kiln eval %t/unpacked.mlir --input x=%t/x.npy --input m=%t/m.npy --output-dir %t/unpacked --quiet
// RUN: kiln eval %S/Inputs/attention_projections.mlir --input x=%t/x.npy --input m=%t/m.npy --output-dir %t/f32 --quiet
// RUN: %python -c "import numpy as np; a, b, r = (np.load('%t/' + d + '/o.npy') for d in ('packed', 'unpacked', 'f32')); assert a.tobytes() == b.tobytes(), abs(a - b).max(); e = abs(a - r).max() / abs(r).max(); print(e); assert 0 < e < 2e-2, e"

// REMARK: remark: packed the Q, K and V projections of 1 attention layers into one GEMM each
// PACKED: kiln.fusion_group "gemm"({{.*}}) : (tensor<1x32x32xbf16>, tensor<32x96xbf16>, tensor<96xbf16>) -> tensor<1x32x96xbf16>
// PACKED: kiln.attention %[[P:.*]], %[[P]], %[[P]],
// UNPACKED-COUNT-3: kiln.fusion_group "gemm"({{.*}}) -> tensor<1x32x32xbf16>
// UNPACKED: kiln.attention
