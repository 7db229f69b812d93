// kiln-fold-transposes-into-attention against the interpreter: the module with both
// MultiheadAttention transposes folded into the attention's views gives exactly what the
// module with the transposes gives (evaluated as written: `--no-fusion`, whose pipeline
// leaves both modules' ops alone, so fusion's fewer roundings do not enter).
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np; np.save('%t/x.npy', np.random.default_rng(4).uniform(-1, 1, (2, 8, 16)).astype(np.float32))"
// RUN: kiln-opt %S/Inputs/mha_batch2.mlir -kiln-fold-transposes-into-attention -o %t/folded.mlir 2>/dev/null
// RUN: FileCheck %s < %t/folded.mlir
// RUN: kiln eval %t/folded.mlir --input x=%t/x.npy --output-dir %t/folded --quiet --no-fusion
// RUN: kiln eval %S/Inputs/mha_batch2.mlir --input x=%t/x.npy --output-dir %t/original --quiet --no-fusion
// RUN: %python -c "import numpy as np; a, b = np.load('%t/folded/y.npy'), np.load('%t/original/y.npy'); assert a.tobytes() == b.tobytes(), abs(a - b).max(); assert abs(a).max() > 0.1"

// CHECK-NOT: kiln.transpose
