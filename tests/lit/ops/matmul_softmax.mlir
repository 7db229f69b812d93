// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// The generic form (properties spelled out) parses back to the same ops.
// RUN: kiln-opt %s -mlir-print-op-generic | kiln-opt | FileCheck %s

// Matrix products (matmul, gemm, einsum) and softmax.

// CHECK-LABEL: func.func @matmul
func.func @matmul(%a: tensor<8x12x128x64xf32>, %b: tensor<8x12x64x128xf32>,
                  %w: tensor<768x3072xbf16>, %x: tensor<1x128x768xbf16>,
                  %v: tensor<64xf32>, %m: tensor<1x64x32xf32>)
    -> (tensor<8x12x128x128xf32>, tensor<1x128x3072xbf16>, tensor<1x32xf32>,
        tensor<8x12x128xf32>) {
  // CHECK: kiln.matmul %{{.*}}, %{{.*}} : (tensor<8x12x128x64xf32>, tensor<8x12x64x128xf32>) -> tensor<8x12x128x128xf32>
  %0 = kiln.matmul %a, %b : (tensor<8x12x128x64xf32>, tensor<8x12x64x128xf32>) -> tensor<8x12x128x128xf32>
  // A 2-d rhs broadcasts over the batch axes.
  // CHECK: kiln.matmul %{{.*}}, %{{.*}} : (tensor<1x128x768xbf16>, tensor<768x3072xbf16>) -> tensor<1x128x3072xbf16>
  %1 = kiln.matmul %x, %w : (tensor<1x128x768xbf16>, tensor<768x3072xbf16>) -> tensor<1x128x3072xbf16>
  // 1-d operands are promoted and the added axis removed again.
  // CHECK: kiln.matmul %{{.*}}, %{{.*}} : (tensor<64xf32>, tensor<1x64x32xf32>) -> tensor<1x32xf32>
  %2 = kiln.matmul %v, %m : (tensor<64xf32>, tensor<1x64x32xf32>) -> tensor<1x32xf32>
  // CHECK: kiln.matmul %{{.*}}, %{{.*}} : (tensor<8x12x128x64xf32>, tensor<64xf32>) -> tensor<8x12x128xf32>
  %3 = kiln.matmul %a, %v : (tensor<8x12x128x64xf32>, tensor<64xf32>) -> tensor<8x12x128xf32>
  return %0, %1, %2, %3 : tensor<8x12x128x128xf32>, tensor<1x128x3072xbf16>, tensor<1x32xf32>,
                          tensor<8x12x128xf32>
}

// CHECK-LABEL: func.func @matmul_integer
func.func @matmul_integer(%a: tensor<16x32xi32>, %b: tensor<32x8xi32>) -> tensor<16x8xi32> {
  // CHECK: kiln.matmul %{{.*}}, %{{.*}} : (tensor<16x32xi32>, tensor<32x8xi32>) -> tensor<16x8xi32>
  %0 = kiln.matmul %a, %b : (tensor<16x32xi32>, tensor<32x8xi32>) -> tensor<16x8xi32>
  return %0 : tensor<16x8xi32>
}

// CHECK-LABEL: func.func @gemm
func.func @gemm(%x: tensor<1x2048xf32>, %w: tensor<1000x2048xf32>, %b: tensor<1000xf32>,
                %at: tensor<64x32xf16>, %bt: tensor<64x16xf16>, %c: tensor<f16>)
    -> (tensor<1x1000xf32>, tensor<32x16xf16>) {
  // CHECK: kiln.gemm %{{.*}}, %{{.*}}, %{{.*}} {trans_b = true} : (tensor<1x2048xf32>, tensor<1000x2048xf32>, tensor<1000xf32>) -> tensor<1x1000xf32>
  %0 = kiln.gemm %x, %w, %b {trans_b = true}
      : (tensor<1x2048xf32>, tensor<1000x2048xf32>, tensor<1000xf32>) -> tensor<1x1000xf32>
  // CHECK: kiln.gemm %{{.*}}, %{{.*}}, %{{.*}} {alpha = 5.000000e-01 : f32, beta = 2.000000e+00 : f32, trans_a = true} : (tensor<64x32xf16>, tensor<64x16xf16>, tensor<f16>) -> tensor<32x16xf16>
  %1 = kiln.gemm %at, %bt, %c {alpha = 0.5 : f32, beta = 2.0 : f32, trans_a = true}
      : (tensor<64x32xf16>, tensor<64x16xf16>, tensor<f16>) -> tensor<32x16xf16>
  return %0, %1 : tensor<1x1000xf32>, tensor<32x16xf16>
}

// CHECK-LABEL: func.func @gemm_no_c
func.func @gemm_no_c(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>) -> tensor<4x3xf32> {
  // CHECK: kiln.gemm %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %0 = kiln.gemm %a, %b : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @einsum
func.func @einsum(%q: tensor<2x12x64x128xf32>, %k: tensor<2x12x64x128xf32>,
                  %a: tensor<3x4xf32>, %b: tensor<4x5xf32>, %t: tensor<3x3xf32>)
    -> (tensor<2x12x128x128xf32>, tensor<3x5xf32>, tensor<f32>, tensor<5x3xf32>) {
  // CHECK: kiln.einsum %{{.*}}, %{{.*}} {equation = "bhdi,bhdj->bhij"} : (tensor<2x12x64x128xf32>, tensor<2x12x64x128xf32>) -> tensor<2x12x128x128xf32>
  %0 = kiln.einsum %q, %k {equation = "bhdi,bhdj->bhij"}
      : (tensor<2x12x64x128xf32>, tensor<2x12x64x128xf32>) -> tensor<2x12x128x128xf32>
  // Implicit output: labels seen once, sorted.
  // CHECK: kiln.einsum %{{.*}}, %{{.*}} {equation = "ij,jk"} : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  %1 = kiln.einsum %a, %b {equation = "ij,jk"} : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  // Trace of one operand.
  // CHECK: kiln.einsum %{{.*}} {equation = "ii->"} : (tensor<3x3xf32>) -> tensor<f32>
  %2 = kiln.einsum %t {equation = "ii->"} : (tensor<3x3xf32>) -> tensor<f32>
  // Ellipsis.
  // CHECK: kiln.einsum %{{.*}}, %{{.*}} {equation = "...j,jk->k..."} : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<5x3xf32>
  %3 = kiln.einsum %a, %b {equation = "...j,jk->k..."} : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<5x3xf32>
  return %0, %1, %2, %3 : tensor<2x12x128x128xf32>, tensor<3x5xf32>, tensor<f32>, tensor<5x3xf32>
}

// CHECK-LABEL: func.func @softmax
func.func @softmax(%x: tensor<2x12x128x128xf32>, %l: tensor<1x1000xf16>)
    -> (tensor<2x12x128x128xf32>, tensor<1x1000xf16>) {
  // CHECK: kiln.softmax %{{.*}} {axis = 3 : i64} : tensor<2x12x128x128xf32>
  %0 = kiln.softmax %x {axis = 3 : i64} : tensor<2x12x128x128xf32>
  // CHECK: kiln.log_softmax %{{.*}} {axis = 1 : i64} : tensor<1x1000xf16>
  %1 = kiln.log_softmax %l {axis = 1 : i64} : tensor<1x1000xf16>
  return %0, %1 : tensor<2x12x128x128xf32>, tensor<1x1000xf16>
}
