// --print-ir-after-all prints the whole module after every pass to stderr, headed by the
// pass's name and argument, weights elided.
// RUN: kiln compile %S/Inputs/tiny_cnn.mlir -o %t.kiln --quiet --precision bf16 --print-ir-after-all 2> %t.err
// RUN: FileCheck %s --input-file %t.err

// CHECK: IR Dump After FoldConstants (kiln-fold-constants)
// CHECK: module {
// CHECK: kiln.gemm {{.*}} -> tensor<1x20xf32>
// CHECK: IR Dump After MixedPrecision (kiln-mixed-precision)
// CHECK: kiln.gemm {{.*}} -> tensor<1x20xbf16>
// CHECK-NOT: 0000003F
