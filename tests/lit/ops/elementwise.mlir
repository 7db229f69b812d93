// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// The generic form (properties spelled out) parses back to the same ops.
// RUN: kiln-opt %s -mlir-print-op-generic | kiln-opt | FileCheck %s

// Elementwise unary, binary (with numpy broadcasting), comparison, where, clip and cast.

// CHECK-LABEL: func.func @unary_float
func.func @unary_float(%x: tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32> {
  // CHECK: kiln.sqrt %{{.*}} : tensor<1x64x56x56xf32>
  %0 = kiln.sqrt %x : tensor<1x64x56x56xf32>
  // CHECK: kiln.reciprocal %{{.*}} : tensor<1x64x56x56xf32>
  %1 = kiln.reciprocal %0 : tensor<1x64x56x56xf32>
  // CHECK: kiln.exp %{{.*}} : tensor<1x64x56x56xf32>
  %2 = kiln.exp %1 : tensor<1x64x56x56xf32>
  // CHECK: kiln.log %{{.*}} : tensor<1x64x56x56xf32>
  %3 = kiln.log %2 : tensor<1x64x56x56xf32>
  // CHECK: kiln.erf %{{.*}} : tensor<1x64x56x56xf32>
  %4 = kiln.erf %3 : tensor<1x64x56x56xf32>
  // CHECK: kiln.tanh %{{.*}} : tensor<1x64x56x56xf32>
  %5 = kiln.tanh %4 : tensor<1x64x56x56xf32>
  // CHECK: kiln.sigmoid %{{.*}} : tensor<1x64x56x56xf32>
  %6 = kiln.sigmoid %5 : tensor<1x64x56x56xf32>
  // CHECK: kiln.softplus %{{.*}} : tensor<1x64x56x56xf32>
  %7 = kiln.softplus %6 : tensor<1x64x56x56xf32>
  // CHECK: kiln.hard_swish %{{.*}} : tensor<1x64x56x56xf32>
  %8 = kiln.hard_swish %7 : tensor<1x64x56x56xf32>
  // CHECK: kiln.floor %{{.*}} : tensor<1x64x56x56xf32>
  %9 = kiln.floor %8 : tensor<1x64x56x56xf32>
  // CHECK: kiln.ceil %{{.*}} : tensor<1x64x56x56xf32>
  %10 = kiln.ceil %9 : tensor<1x64x56x56xf32>
  // CHECK: kiln.round %{{.*}} : tensor<1x64x56x56xf32>
  %11 = kiln.round %10 : tensor<1x64x56x56xf32>
  // CHECK: kiln.sin %{{.*}} : tensor<1x64x56x56xf32>
  %12 = kiln.sin %11 : tensor<1x64x56x56xf32>
  // CHECK: kiln.cos %{{.*}} : tensor<1x64x56x56xf32>
  %13 = kiln.cos %12 : tensor<1x64x56x56xf32>
  // CHECK: kiln.relu %{{.*}} : tensor<1x64x56x56xf32>
  %14 = kiln.relu %13 : tensor<1x64x56x56xf32>
  // CHECK: kiln.neg %{{.*}} : tensor<1x64x56x56xf32>
  %15 = kiln.neg %14 : tensor<1x64x56x56xf32>
  // CHECK: kiln.abs %{{.*}} : tensor<1x64x56x56xf32>
  %16 = kiln.abs %15 : tensor<1x64x56x56xf32>
  // CHECK: kiln.sign %{{.*}} : tensor<1x64x56x56xf32>
  %17 = kiln.sign %16 : tensor<1x64x56x56xf32>
  return %17 : tensor<1x64x56x56xf32>
}

// CHECK-LABEL: func.func @unary_other_types
func.func @unary_other_types(%h: tensor<2x128xf16>, %b: tensor<2x128xbf16>,
                             %f8: tensor<16xf8E4M3FN>, %i: tensor<4x5xi32>,
                             %q: tensor<4x5xi8>, %m: tensor<4x5xi1>)
    -> (tensor<2x128xf16>, tensor<2x128xbf16>, tensor<16xf8E4M3FN>, tensor<4x5xi32>,
        tensor<4x5xi8>, tensor<4x5xi1>) {
  // CHECK: kiln.tanh %{{.*}} : tensor<2x128xf16>
  %0 = kiln.tanh %h : tensor<2x128xf16>
  // CHECK: kiln.exp %{{.*}} : tensor<2x128xbf16>
  %1 = kiln.exp %b : tensor<2x128xbf16>
  // CHECK: kiln.neg %{{.*}} : tensor<16xf8E4M3FN>
  %2 = kiln.neg %f8 : tensor<16xf8E4M3FN>
  // CHECK: kiln.abs %{{.*}} : tensor<4x5xi32>
  %3 = kiln.abs %i : tensor<4x5xi32>
  // CHECK: kiln.relu %{{.*}} : tensor<4x5xi8>
  %4 = kiln.relu %q : tensor<4x5xi8>
  // CHECK: kiln.not %{{.*}} : tensor<4x5xi1>
  %5 = kiln.not %m : tensor<4x5xi1>
  return %0, %1, %2, %3, %4, %5 : tensor<2x128xf16>, tensor<2x128xbf16>, tensor<16xf8E4M3FN>,
                                  tensor<4x5xi32>, tensor<4x5xi8>, tensor<4x5xi1>
}

// CHECK-LABEL: func.func @unary_attrs
func.func @unary_attrs(%x: tensor<8x512xf32>) -> tensor<8x512xf32> {
  // CHECK: kiln.leaky_relu %{{.*}} {alpha = 1.000000e-01 : f32} : tensor<8x512xf32>
  %0 = kiln.leaky_relu %x {alpha = 0.1 : f32} : tensor<8x512xf32>
  // Default-valued attributes are elided.
  // CHECK: kiln.leaky_relu %{{.*}} : tensor<8x512xf32>
  %1 = kiln.leaky_relu %0 : tensor<8x512xf32>
  // CHECK: kiln.elu %{{.*}} {alpha = 5.000000e-01 : f32} : tensor<8x512xf32>
  %2 = kiln.elu %1 {alpha = 0.5 : f32} : tensor<8x512xf32>
  // CHECK: kiln.selu %{{.*}} : tensor<8x512xf32>
  %3 = kiln.selu %2 : tensor<8x512xf32>
  // CHECK: kiln.selu %{{.*}} {alpha = 2.000000e+00 : f32, gamma = 3.000000e+00 : f32} : tensor<8x512xf32>
  %4 = kiln.selu %3 {alpha = 2.0 : f32, gamma = 3.0 : f32} : tensor<8x512xf32>
  // CHECK: kiln.hard_sigmoid %{{.*}} {alpha = 1.000000e+00 : f32, beta = 0.000000e+00 : f32} : tensor<8x512xf32>
  %5 = kiln.hard_sigmoid %4 {alpha = 1.0 : f32, beta = 0.0 : f32} : tensor<8x512xf32>
  // CHECK: kiln.gelu %{{.*}} {approximate = "tanh"} : tensor<8x512xf32>
  %6 = kiln.gelu %5 {approximate = "tanh"} : tensor<8x512xf32>
  // CHECK: kiln.gelu %{{.*}} : tensor<8x512xf32>
  %7 = kiln.gelu %6 {approximate = "none"} : tensor<8x512xf32>
  return %7 : tensor<8x512xf32>
}

// CHECK-LABEL: func.func @arith_broadcast
func.func @arith_broadcast(%x: tensor<1x64x56x56xf32>, %c: tensor<64x1x1xf32>,
                           %s: tensor<f32>) -> tensor<1x64x56x56xf32> {
  // CHECK: kiln.add %{{.*}}, %{{.*}} : (tensor<1x64x56x56xf32>, tensor<64x1x1xf32>) -> tensor<1x64x56x56xf32>
  %0 = kiln.add %x, %c : (tensor<1x64x56x56xf32>, tensor<64x1x1xf32>) -> tensor<1x64x56x56xf32>
  // CHECK: kiln.sub %{{.*}}, %{{.*}} : (tensor<1x64x56x56xf32>, tensor<f32>) -> tensor<1x64x56x56xf32>
  %1 = kiln.sub %0, %s : (tensor<1x64x56x56xf32>, tensor<f32>) -> tensor<1x64x56x56xf32>
  // CHECK: kiln.mul %{{.*}}, %{{.*}} : (tensor<64x1x1xf32>, tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
  %2 = kiln.mul %c, %1 : (tensor<64x1x1xf32>, tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
  // CHECK: kiln.div %{{.*}}, %{{.*}} : (tensor<1x64x56x56xf32>, tensor<64x1x1xf32>) -> tensor<1x64x56x56xf32>
  %3 = kiln.div %2, %c : (tensor<1x64x56x56xf32>, tensor<64x1x1xf32>) -> tensor<1x64x56x56xf32>
  // CHECK: kiln.pow %{{.*}}, %{{.*}} : (tensor<1x64x56x56xf32>, tensor<f32>) -> tensor<1x64x56x56xf32>
  %4 = kiln.pow %3, %s : (tensor<1x64x56x56xf32>, tensor<f32>) -> tensor<1x64x56x56xf32>
  // CHECK: kiln.min %{{.*}}, %{{.*}} : (tensor<1x64x56x56xf32>, tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
  %5 = kiln.min %4, %x : (tensor<1x64x56x56xf32>, tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
  // CHECK: kiln.max %{{.*}}, %{{.*}} : (tensor<1x64x56x56xf32>, tensor<f32>) -> tensor<1x64x56x56xf32>
  %6 = kiln.max %5, %s : (tensor<1x64x56x56xf32>, tensor<f32>) -> tensor<1x64x56x56xf32>
  // CHECK: kiln.prelu %{{.*}}, %{{.*}} : (tensor<1x64x56x56xf32>, tensor<64x1x1xf32>) -> tensor<1x64x56x56xf32>
  %7 = kiln.prelu %6, %c : (tensor<1x64x56x56xf32>, tensor<64x1x1xf32>) -> tensor<1x64x56x56xf32>
  return %7 : tensor<1x64x56x56xf32>
}

// CHECK-LABEL: func.func @arith_integer
func.func @arith_integer(%a: tensor<3x4xi64>, %b: tensor<4xi64>, %u: tensor<3x1xui8>,
                         %v: tensor<1x4xui8>) -> (tensor<3x4xi64>, tensor<3x4xui8>) {
  // CHECK: kiln.add %{{.*}}, %{{.*}} : (tensor<3x4xi64>, tensor<4xi64>) -> tensor<3x4xi64>
  %0 = kiln.add %a, %b : (tensor<3x4xi64>, tensor<4xi64>) -> tensor<3x4xi64>
  // Both operands broadcast.
  // CHECK: kiln.mul %{{.*}}, %{{.*}} : (tensor<3x1xui8>, tensor<1x4xui8>) -> tensor<3x4xui8>
  %1 = kiln.mul %u, %v : (tensor<3x1xui8>, tensor<1x4xui8>) -> tensor<3x4xui8>
  return %0, %1 : tensor<3x4xi64>, tensor<3x4xui8>
}

// CHECK-LABEL: func.func @logical
func.func @logical(%a: tensor<2x3xi1>, %b: tensor<3xi1>) -> tensor<2x3xi1> {
  // CHECK: kiln.and %{{.*}}, %{{.*}} : (tensor<2x3xi1>, tensor<3xi1>) -> tensor<2x3xi1>
  %0 = kiln.and %a, %b : (tensor<2x3xi1>, tensor<3xi1>) -> tensor<2x3xi1>
  // CHECK: kiln.or %{{.*}}, %{{.*}} : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  %1 = kiln.or %0, %a : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  // CHECK: kiln.xor %{{.*}}, %{{.*}} : (tensor<2x3xi1>, tensor<3xi1>) -> tensor<2x3xi1>
  %2 = kiln.xor %1, %b : (tensor<2x3xi1>, tensor<3xi1>) -> tensor<2x3xi1>
  return %2 : tensor<2x3xi1>
}

// CHECK-LABEL: func.func @compare
func.func @compare(%a: tensor<2x3xf16>, %b: tensor<2x1xf16>, %i: tensor<5xi32>,
                   %j: tensor<i32>) -> (tensor<2x3xi1>, tensor<5xi1>) {
  // CHECK: kiln.equal %{{.*}}, %{{.*}} : (tensor<2x3xf16>, tensor<2x1xf16>) -> tensor<2x3xi1>
  %0 = kiln.equal %a, %b : (tensor<2x3xf16>, tensor<2x1xf16>) -> tensor<2x3xi1>
  // CHECK: kiln.less %{{.*}}, %{{.*}} : (tensor<2x3xf16>, tensor<2x1xf16>) -> tensor<2x3xi1>
  %1 = kiln.less %a, %b : (tensor<2x3xf16>, tensor<2x1xf16>) -> tensor<2x3xi1>
  // CHECK: kiln.less_equal %{{.*}}, %{{.*}} : (tensor<5xi32>, tensor<i32>) -> tensor<5xi1>
  %2 = kiln.less_equal %i, %j : (tensor<5xi32>, tensor<i32>) -> tensor<5xi1>
  // CHECK: kiln.greater %{{.*}}, %{{.*}} : (tensor<5xi32>, tensor<i32>) -> tensor<5xi1>
  %3 = kiln.greater %i, %j : (tensor<5xi32>, tensor<i32>) -> tensor<5xi1>
  // CHECK: kiln.greater_equal %{{.*}}, %{{.*}} : (tensor<2x3xf16>, tensor<2x3xf16>) -> tensor<2x3xi1>
  %4 = kiln.greater_equal %a, %a : (tensor<2x3xf16>, tensor<2x3xf16>) -> tensor<2x3xi1>
  %5 = kiln.and %0, %1 : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  %6 = kiln.and %5, %4 : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  %7 = kiln.or %2, %3 : (tensor<5xi1>, tensor<5xi1>) -> tensor<5xi1>
  return %6, %7 : tensor<2x3xi1>, tensor<5xi1>
}

// CHECK-LABEL: func.func @where
func.func @where(%c: tensor<1x1x8x8xi1>, %x: tensor<2x4x8x8xf32>, %y: tensor<f32>)
    -> tensor<2x4x8x8xf32> {
  // CHECK: kiln.where %{{.*}}, %{{.*}}, %{{.*}} : (tensor<1x1x8x8xi1>, tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
  %0 = kiln.where %c, %x, %y : (tensor<1x1x8x8xi1>, tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
  return %0 : tensor<2x4x8x8xf32>
}

// CHECK-LABEL: func.func @clip
func.func @clip(%x: tensor<1x32x112x112xf32>, %lo: tensor<f32>, %hi: tensor<f32>,
                %i: tensor<10xui8>, %ilo: tensor<ui8>, %ihi: tensor<ui8>)
    -> (tensor<1x32x112x112xf32>, tensor<10xui8>) {
  // CHECK: kiln.clip %{{.*}}, %{{.*}}, %{{.*}} : (tensor<1x32x112x112xf32>, tensor<f32>, tensor<f32>) -> tensor<1x32x112x112xf32>
  %0 = kiln.clip %x, %lo, %hi : (tensor<1x32x112x112xf32>, tensor<f32>, tensor<f32>) -> tensor<1x32x112x112xf32>
  // CHECK: kiln.clip %{{.*}}, %{{.*}}, %{{.*}} : (tensor<10xui8>, tensor<ui8>, tensor<ui8>) -> tensor<10xui8>
  %1 = kiln.clip %i, %ilo, %ihi : (tensor<10xui8>, tensor<ui8>, tensor<ui8>) -> tensor<10xui8>
  return %0, %1 : tensor<1x32x112x112xf32>, tensor<10xui8>
}

// CHECK-LABEL: func.func @cast
func.func @cast(%x: tensor<4x16xf32>, %m: tensor<4x16xi1>)
    -> (tensor<4x16xf16>, tensor<4x16xbf16>, tensor<4x16xf8E4M3FN>, tensor<4x16xi64>,
        tensor<4x16xi1>, tensor<4x16xf32>) {
  // CHECK: kiln.cast %{{.*}} : tensor<4x16xf32> to tensor<4x16xf16>
  %0 = kiln.cast %x : tensor<4x16xf32> to tensor<4x16xf16>
  // CHECK: kiln.cast %{{.*}} : tensor<4x16xf16> to tensor<4x16xbf16>
  %1 = kiln.cast %0 : tensor<4x16xf16> to tensor<4x16xbf16>
  // CHECK: kiln.cast %{{.*}} {saturate = false} : tensor<4x16xf32> to tensor<4x16xf8E4M3FN>
  %2 = kiln.cast %x {saturate = false} : tensor<4x16xf32> to tensor<4x16xf8E4M3FN>
  // CHECK: kiln.cast %{{.*}} : tensor<4x16xf32> to tensor<4x16xi64>
  %3 = kiln.cast %x : tensor<4x16xf32> to tensor<4x16xi64>
  // CHECK: kiln.cast %{{.*}} : tensor<4x16xi64> to tensor<4x16xi1>
  %4 = kiln.cast %3 : tensor<4x16xi64> to tensor<4x16xi1>
  // CHECK: kiln.cast %{{.*}} : tensor<4x16xi1> to tensor<4x16xf32>
  %5 = kiln.cast %m : tensor<4x16xi1> to tensor<4x16xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<4x16xf16>, tensor<4x16xbf16>, tensor<4x16xf8E4M3FN>,
                                  tensor<4x16xi64>, tensor<4x16xi1>, tensor<4x16xf32>
}

// CHECK-LABEL: func.func @float_tests
func.func @float_tests(%x: tensor<2x5xf32>) -> (tensor<2x5xi1>, tensor<2x5xi1>) {
  // CHECK: kiln.is_nan %{{.*}} : tensor<2x5xf32> -> tensor<2x5xi1>
  %0 = kiln.is_nan %x : tensor<2x5xf32> -> tensor<2x5xi1>
  // CHECK: kiln.is_inf %{{.*}} {detect_negative = false} : tensor<2x5xf32> -> tensor<2x5xi1>
  %1 = kiln.is_inf %x {detect_negative = false} : tensor<2x5xf32> -> tensor<2x5xi1>
  return %0, %1 : tensor<2x5xi1>, tensor<2x5xi1>
}

// CHECK-LABEL: func.func @mod
func.func @mod(%a: tensor<6xi32>, %b: tensor<6xi32>, %x: tensor<6xf32>) -> (tensor<6xi32>, tensor<6xf32>) {
  // CHECK: kiln.mod %{{.*}}, %{{.*}} : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>
  %0 = kiln.mod %a, %b : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>
  // CHECK: kiln.mod %{{.*}}, %{{.*}} {fmod = true} : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
  %1 = kiln.mod %x, %x {fmod = true} : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
  return %0, %1 : tensor<6xi32>, tensor<6xf32>
}
