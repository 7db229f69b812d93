// RUN: kiln-opt %s --kiln-pipeline="precision=bf16" | FileCheck %s
// RUN: kiln-opt %s --kiln-pipeline="precision=bf16 fuse=false" | FileCheck %s --check-prefix=UNFUSED

// In the pipeline, fusion comes after the precision pass: the matmul runs in bf16, and its bias
// add, ReLU and the cast back to the graph's f32 output become one group computing in f32.
// CHECK-LABEL: func.func @main
// CHECK: %[[M:.*]] = kiln.matmul {{.*}} -> tensor<4x8xbf16>
// CHECK: %[[G:.*]] = kiln.fusion_group "elementwise"(%[[M]], %{{.*}}) : (tensor<4x8xbf16>, tensor<8xbf16>) -> tensor<4x8xf32>
// CHECK: kiln.add {{.*}} -> tensor<4x8xf32>
// CHECK: kiln.relu {{.*}} : tensor<4x8xf32>
// CHECK: kiln.yield
// CHECK: return %[[G]]
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
