// `kiln eval` on kiln MLIR: given inputs by name, random ones otherwise, outputs as .npy.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np; np.save('%t/x.npy', np.array([[1, -2, 3]], np.float32))"
// RUN: kiln eval %s --input x=%t/x.npy --output-dir %t/out | FileCheck %s
// RUN: %python -c "import numpy as np; y = np.load('%t/out/y.npy'); assert y.dtype == np.float32 and y.tolist() == [[2.0, 0.0, 6.0]], y"
// RUN: not kiln eval %s --input x=%t/missing.npy 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not kiln eval %s --input nope=%t/x.npy 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: kiln eval %s --seed 7 > %t/a.txt && kiln eval %s --seed 7 > %t/b.txt
// RUN: %python -c "import sys; a, b = (open(p).read().split('\n', 1)[1] for p in sys.argv[1:]); assert a == b" %t/a.txt %t/b.txt

// CHECK: evaluated
// CHECK: y tensor<1x3xf32> min 0 max 6 mean 2.66667
// MISSING: kiln eval: error: cannot open
// UNKNOWN: --input names 'nope', which is not a model input

func.func @main(%x: tensor<1x3xf32> {kiln.name = "x"}) -> (tensor<1x3xf32> {kiln.name = "y"}) {
  %two = kiln.constant dense<2.0> : tensor<f32>
  %r = kiln.relu %x : tensor<1x3xf32>
  %y = kiln.mul %r, %two : (tensor<1x3xf32>, tensor<f32>) -> tensor<1x3xf32>
  return %y : tensor<1x3xf32>
}
