// Importer: frontend/ops/Quantization.cpp (QuantizeLinear, DequantizeLinear).
// Each model comes from Inputs/make_model.py. The axis attribute matters only for per-axis
// parameters; per-tensor ones get axis 0. kiln's default axis is 1 and prints as nothing.

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/make_model.py --out-dir %t \
// RUN:   quantize_per_axis \
// RUN:   quantize_per_tensor \
// RUN:   dequantize_per_tensor \
// RUN:   dequantize_per_axis_negative

// Per-axis QuantizeLinear, axis 1, i8 zero points: result i8.
// RUN: kiln import %t/quantize_per_axis.onnx --quiet | FileCheck %s --check-prefix=Q-AXIS
// Q-AXIS-DAG: %[[Z:.*]] = kiln.constant dense<[0, 1, -1]> : tensor<3xi8>
// Q-AXIS-DAG: %[[S:.*]] = kiln.constant dense<[1.000000e-01, 2.000000e-01, 3.000000e-01]> : tensor<3xf32>
// Q-AXIS: kiln.quantize %arg0, %[[S]], %[[Z]] : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xi8>) -> tensor<2x3x4xi8>

// Per-tensor QuantizeLinear without a zero point: a u8 zero, result u8.
// RUN: kiln import %t/quantize_per_tensor.onnx --quiet | FileCheck %s --check-prefix=Q-TENSOR
// Q-TENSOR-DAG: %[[S:.*]] = kiln.constant dense<5.000000e-01> : tensor<f32>
// Q-TENSOR-DAG: %[[Z:.*]] = kiln.constant dense<0> : tensor<ui8>
// Q-TENSOR: kiln.quantize %arg0, %[[S]], %[[Z]] {axis = 0 : i64} : (tensor<2x3xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x3xui8>

// Per-tensor DequantizeLinear of i8 with an i8 zero point: result f32 (the scale's type).
// RUN: kiln import %t/dequantize_per_tensor.onnx --quiet | FileCheck %s --check-prefix=DQ-TENSOR
// DQ-TENSOR-DAG: %[[Z:.*]] = kiln.constant dense<3> : tensor<i8>
// DQ-TENSOR-DAG: %[[S:.*]] = kiln.constant dense<2.500000e-01> : tensor<f32>
// DQ-TENSOR: kiln.dequantize %arg0, %[[S]], %[[Z]] {axis = 0 : i64} : (tensor<2x3xi8>, tensor<f32>, tensor<i8>) -> tensor<2x3xf32>

// Per-axis DequantizeLinear of u8, axis -2 normalized to 0, no zero point: u8 zeros.
// RUN: kiln import %t/dequantize_per_axis_negative.onnx --quiet | FileCheck %s --check-prefix=DQ-AXIS
// DQ-AXIS-DAG: %[[S:.*]] = kiln.constant dense<[5.000000e-01, 2.500000e-01, 1.250000e-01]> : tensor<3xf32>
// DQ-AXIS-DAG: %[[Z:.*]] = kiln.constant dense<0> : tensor<3xui8>
// DQ-AXIS: kiln.dequantize %arg0, %[[S]], %[[Z]] {axis = 0 : i64} : (tensor<3x2xui8>, tensor<3xf32>, tensor<3xui8>) -> tensor<3x2xf32>
