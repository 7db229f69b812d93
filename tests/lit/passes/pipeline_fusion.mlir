// RUN: kiln-opt %s --kiln-pipeline="precision=bf16" | FileCheck %s
// RUN: kiln-opt %s --kiln-pipeline="precision=bf16 fuse=false" | FileCheck %s --check-prefix=UNFUSED

// In the pipeline, fusion comes after the precision pass: the bf16 matmul takes its bias add and
// ReLU as a cuBLASLt epilogue (a gemm group computing in f32 from bf16 operands, rounding once
// to bf16); the cast back to the graph's f32 output stays outside.
// CHECK-LABEL: func.func @main
// CHECK: %[[G:.*]] = kiln.fusion_group "gemm"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<4x16xbf16>, tensor<16x8xbf16>, tensor<8xbf16>) -> tensor<4x8xbf16>
// CHECK: kiln.matmul {{.*}} -> tensor<4x8xf32>
// CHECK: kiln.add {{.*}} -> tensor<4x8xf32>
// CHECK: kiln.relu {{.*}} : tensor<4x8xf32>
// CHECK: kiln.yield
// CHECK: %[[O:.*]] = kiln.cast %[[G]] : tensor<4x8xbf16> to tensor<4x8xf32>
// CHECK: return %[[O]]
// UNFUSED-NOT: kiln.fusion_group
// UNFUSED: kiln.add {{.*}} -> tensor<4x8xbf16>
func.func @main(%x: tensor<4x16xf32>) -> tensor<4x8xf32> {
  %w = kiln.constant dense<0.5> : tensor<16x8xf32>
  %b = kiln.constant dense<0.25> : tensor<8xf32>
  %m = kiln.matmul %x, %w : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %a = kiln.add %m, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %r = kiln.relu %a : tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
