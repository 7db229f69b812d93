// kiln-fuse-attention against the interpreter: the fused module (one kiln.attention, computed in
// f64 and rounded once) and the unfused one (--no-fused-attention: bf16 matmul, softmax, ...,
// each rounded) agree within bf16 rounding; where every key is masked both give exact zeros
// (the unfused Where(IsNaN) and the fused module's zeroing of fully masked rows).
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np; r = np.random.default_rng(1); [np.save('%t/' + n + '.npy', r.uniform(-1, 1, (1, 32, 32)).astype(np.float32)) for n in 'xyz']; m = np.ones((1, 32), np.int64); m[0, 20:] = 0; np.save('%t/m.npy', m); np.save('%t/m0.npy', np.zeros((1, 32), np.int64))"
// RUN: kiln eval %S/Inputs/attention.mlir --precision bf16 --input x=%t/x.npy --input y=%t/y.npy --input z=%t/z.npy --input m=%t/m.npy --output-dir %t/fused --quiet
// RUN: kiln eval %S/Inputs/attention.mlir --precision bf16 --no-fused-attention --input x=%t/x.npy --input y=%t/y.npy --input z=%t/z.npy --input m=%t/m.npy --output-dir %t/unfused --quiet
// RUN: %python -c "import numpy as np; a, b = np.load('%t/fused/o.npy'), np.load('%t/unfused/o.npy'); d = abs(a - b).max(); print(d); assert np.isfinite(a).all() and 0 < d < 2e-2, d"
// RUN: kiln eval %S/Inputs/attention.mlir --precision bf16 --input x=%t/x.npy --input y=%t/y.npy --input z=%t/z.npy --input m=%t/m0.npy --output-dir %t/fused0 --quiet
// RUN: kiln eval %S/Inputs/attention.mlir --precision bf16 --no-fused-attention --input x=%t/x.npy --input y=%t/y.npy --input z=%t/z.npy --input m=%t/m0.npy --output-dir %t/unfused0 --quiet
// RUN: %python -c "import numpy as np; a, b = np.load('%t/fused0/o.npy'), np.load('%t/unfused0/o.npy'); assert a.tobytes() == b.tobytes() and (a == 0).all(), (a, b)"
// RUN: kiln import %S/Inputs/attention.mlir --precision bf16 | FileCheck %s
// RUN: kiln import %S/Inputs/attention.mlir --precision bf16 --no-fused-attention | FileCheck %s --check-prefix=OFF

// CHECK: kiln.attention
// CHECK-NOT: kiln.softmax
// OFF-NOT: kiln.attention
// OFF: kiln.softmax
