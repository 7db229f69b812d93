// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// The generic form (properties spelled out) parses back to the same ops.
// RUN: kiln-opt %s -mlir-print-op-generic | kiln-opt | FileCheck %s

// QuantizeLinear / DequantizeLinear, per tensor and per axis.

// CHECK-LABEL: func.func @per_tensor
func.func @per_tensor(%x: tensor<1x3x224x224xf32>, %s: tensor<f32>, %zu: tensor<ui8>,
                      %zi: tensor<i8>) -> (tensor<1x3x224x224xf32>, tensor<1x3x224x224xi8>) {
  // CHECK: kiln.quantize %{{.*}}, %{{.*}}, %{{.*}} : (tensor<1x3x224x224xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x3x224x224xui8>
  %0 = kiln.quantize %x, %s, %zu
      : (tensor<1x3x224x224xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x3x224x224xui8>
  // CHECK: kiln.dequantize %{{.*}}, %{{.*}}, %{{.*}} : (tensor<1x3x224x224xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x3x224x224xf32>
  %1 = kiln.dequantize %0, %s, %zu
      : (tensor<1x3x224x224xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x3x224x224xf32>
  // CHECK: kiln.quantize %{{.*}}, %{{.*}}, %{{.*}} {saturate = false} : (tensor<1x3x224x224xf32>, tensor<f32>, tensor<i8>) -> tensor<1x3x224x224xi8>
  %2 = kiln.quantize %1, %s, %zi {saturate = false}
      : (tensor<1x3x224x224xf32>, tensor<f32>, tensor<i8>) -> tensor<1x3x224x224xi8>
  return %1, %2 : tensor<1x3x224x224xf32>, tensor<1x3x224x224xi8>
}

// CHECK-LABEL: func.func @per_axis
func.func @per_axis(%w: tensor<64x3x7x7xi8>, %s: tensor<64xf32>, %z: tensor<64xi8>,
                    %b: tensor<64xi32>, %bz: tensor<64xi32>, %h: tensor<128x768xf16>,
                    %hs: tensor<768xf16>, %hz: tensor<768xi8>)
    -> (tensor<64x3x7x7xf32>, tensor<64xf32>, tensor<128x768xi8>) {
  // CHECK: kiln.dequantize %{{.*}}, %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<64x3x7x7xi8>, tensor<64xf32>, tensor<64xi8>) -> tensor<64x3x7x7xf32>
  %0 = kiln.dequantize %w, %s, %z {axis = 0 : i64}
      : (tensor<64x3x7x7xi8>, tensor<64xf32>, tensor<64xi8>) -> tensor<64x3x7x7xf32>
  // i32 biases of quantized convolutions.
  // CHECK: kiln.dequantize %{{.*}}, %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<64xi32>, tensor<64xf32>, tensor<64xi32>) -> tensor<64xf32>
  %1 = kiln.dequantize %b, %s, %bz {axis = 0 : i64}
      : (tensor<64xi32>, tensor<64xf32>, tensor<64xi32>) -> tensor<64xf32>
  // Default axis 1, f16 scales.
  // CHECK: kiln.quantize %{{.*}}, %{{.*}}, %{{.*}} : (tensor<128x768xf16>, tensor<768xf16>, tensor<768xi8>) -> tensor<128x768xi8>
  %2 = kiln.quantize %h, %hs, %hz
      : (tensor<128x768xf16>, tensor<768xf16>, tensor<768xi8>) -> tensor<128x768xi8>
  return %0, %1, %2 : tensor<64x3x7x7xf32>, tensor<64xf32>, tensor<128x768xi8>
}

// CHECK-LABEL: func.func @float8
func.func @float8(%x: tensor<16x32xbf16>, %s: tensor<1xbf16>, %z: tensor<1xf8E4M3FN>)
    -> tensor<16x32xbf16> {
  // CHECK: kiln.quantize %{{.*}}, %{{.*}}, %{{.*}} : (tensor<16x32xbf16>, tensor<1xbf16>, tensor<1xf8E4M3FN>) -> tensor<16x32xf8E4M3FN>
  %0 = kiln.quantize %x, %s, %z
      : (tensor<16x32xbf16>, tensor<1xbf16>, tensor<1xf8E4M3FN>) -> tensor<16x32xf8E4M3FN>
  // CHECK: kiln.dequantize %{{.*}}, %{{.*}}, %{{.*}} : (tensor<16x32xf8E4M3FN>, tensor<1xbf16>, tensor<1xf8E4M3FN>) -> tensor<16x32xbf16>
  %1 = kiln.dequantize %0, %s, %z
      : (tensor<16x32xf8E4M3FN>, tensor<1xbf16>, tensor<1xf8E4M3FN>) -> tensor<16x32xbf16>
  return %1 : tensor<16x32xbf16>
}
