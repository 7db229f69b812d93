// How `kiln compile` lowers matmul onto cuBLASLt steps.
// RUN: rm -rf %t && mkdir -p %t
// RUN: kiln compile %s -o %t/m.kiln --quiet
// RUN: kiln inspect %t/m.kiln | FileCheck %s

// A shared weight folds the batch into the rows: one 6x8 by 8x5 product.
// CHECK: "linear" op="kiln.matmul" nodes=["linear"] gemm math=strict-f32 batch=1 m=6 n=5 k=8 {{.*}} a=x:f32[3,2,8] b={{.*}}:f32[8,5] d=linear:f32[3,2,5]
// Both operands batched: strided batches.
// CHECK: "batched" op="kiln.matmul" nodes=["batched"] gemm {{.*}} batch=3 m=2 n=5 k=8 {{.*}} strideA=16 strideB=40 strideC=0 strideD=10
// A shared left operand broadcasts with stride 0.
// CHECK: "shared_lhs" op="kiln.matmul" nodes=["shared_lhs"] gemm {{.*}} batch=3 m=2 n=5 k=8 {{.*}} strideA=0 strideB=40 strideC=0 strideD=10
// Batch dims that broadcast partially (2x1 against 1x3): both are expanded to 2x3 first.
// CHECK: "partial/expand_lhs" op="kiln.expand" nodes=["partial"] kernel {{.*}} args=[p:f32[2,1,2,8],partial/expand_lhs:f32[2,3,2,8]]
// CHECK: "partial/expand_rhs" op="kiln.expand" nodes=["partial"] kernel {{.*}} args=[q:f32[1,3,8,5],partial/expand_rhs:f32[2,3,8,5]]
// CHECK: "partial" op="kiln.matmul" nodes=["partial"] gemm {{.*}} batch=6 m=2 n=5 k=8 {{.*}} strideA=16 strideB=40 strideC=0 strideD=10
// 1-d operands are promoted: [8] x [8, 5] is a 1x8 by 8x5 product.
// CHECK: "vector" op="kiln.matmul" nodes=["vector"] gemm {{.*}} batch=1 m=1 n=5 k=8 {{.*}} a=v:f32[8]

func.func @main(%x: tensor<3x2x8xf32> {kiln.name = "x"}, %y: tensor<3x8x5xf32> {kiln.name = "y"},
                %p: tensor<2x1x2x8xf32> {kiln.name = "p"}, %q: tensor<1x3x8x5xf32> {kiln.name = "q"},
                %v: tensor<8xf32> {kiln.name = "v"})
    -> (tensor<3x2x5xf32>, tensor<3x2x5xf32>, tensor<3x2x5xf32>, tensor<2x3x2x5xf32>, tensor<5xf32>) {
  %w = kiln.constant dense<0.5> : tensor<8x5xf32>
  %a = kiln.constant dense<0.25> : tensor<2x8xf32>
  %linear = kiln.matmul %x, %w : (tensor<3x2x8xf32>, tensor<8x5xf32>) -> tensor<3x2x5xf32> loc("linear")
  %batched = kiln.matmul %x, %y : (tensor<3x2x8xf32>, tensor<3x8x5xf32>) -> tensor<3x2x5xf32> loc("batched")
  %shared = kiln.matmul %a, %y : (tensor<2x8xf32>, tensor<3x8x5xf32>) -> tensor<3x2x5xf32> loc("shared_lhs")
  %partial = kiln.matmul %p, %q : (tensor<2x1x2x8xf32>, tensor<1x3x8x5xf32>) -> tensor<2x3x2x5xf32> loc("partial")
  %vector = kiln.matmul %v, %w : (tensor<8xf32>, tensor<8x5xf32>) -> tensor<5xf32> loc("vector")
  return %linear, %batched, %shared, %partial, %vector : tensor<3x2x5xf32>, tensor<3x2x5xf32>, tensor<3x2x5xf32>, tensor<2x3x2x5xf32>, tensor<5xf32>
}
