// kiln-convert-layout against the interpreter: a layout change is a permutation, so the small
// CNN (conv + bias + relu, max pool, a residual block with a [C,1,1] bias add, an SE gate, a
// depthwise conv + clip, avg pool, global pool, flatten, gemm) gives the same bits channels
// last (--layout nhwc) as channels first (--layout nchw), in bf16 and in fp32. Evaluated as the
// passes leave it (`--no-fusion`: fusion groups would change the roundings, not the layout).
// RUN: rm -rf %t && mkdir -p %t
// RUN: kiln eval %S/Inputs/small_cnn.mlir --precision bf16 --layout nhwc --no-fusion --output-dir %t/bf16-nhwc --quiet
// RUN: kiln eval %S/Inputs/small_cnn.mlir --precision bf16 --layout nchw --no-fusion --output-dir %t/bf16-nchw --quiet
// RUN: kiln eval %S/Inputs/small_cnn.mlir --precision fp32 --layout nhwc --no-fusion --output-dir %t/fp32-nhwc --quiet
// RUN: kiln eval %S/Inputs/small_cnn.mlir --precision fp32 --layout nchw --no-fusion --output-dir %t/fp32-nchw --quiet
// RUN: %python -c "import numpy as np; a, b = np.load('%t/bf16-nhwc/y.npy'), np.load('%t/bf16-nchw/y.npy'); assert a.tobytes() == b.tobytes(), abs(a - b).max(); assert abs(a).max() > 0.1"
// RUN: %python -c "import numpy as np; a, b = np.load('%t/fp32-nhwc/y.npy'), np.load('%t/fp32-nchw/y.npy'); assert a.tobytes() == b.tobytes(), abs(a - b).max(); assert abs(a).max() > 0.1"

// What ran channels last: one transpose, at the input; the classifier's flatten reads the
// global pool through a reshape. auto takes the bf16 convs, not the fp32 ones.
// RUN: kiln import %S/Inputs/small_cnn.mlir --precision bf16 --no-fusion 2>/dev/null | FileCheck %s
// RUN: kiln import %S/Inputs/small_cnn.mlir --precision fp32 --no-fusion 2>/dev/null | FileCheck %s --check-prefix=FP32
// CHECK: kiln.transpose %{{.*}} {perm = array<i64: 0, 2, 3, 1>} : (tensor<2x3x12x12xbf16>) -> tensor<2x12x12x3xbf16>
// CHECK-NOT: kiln.transpose
// CHECK-COUNT-6: kiln.conv {{.*}}channels_last = true
// CHECK-NOT: kiln.transpose
// CHECK: kiln.gemm
// FP32-NOT: kiln.transpose
// FP32-NOT: channels_last
