// RUN: kiln-opt %s -kiln-fold-constants -split-input-file | FileCheck %s
// RUN: kiln-opt %s -kiln-fold-constants="max-elements=2" -split-input-file 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: kiln-opt %s -kiln-fold-constants="max-elements=2" -split-input-file 2>/dev/null | FileCheck %s --check-prefix=CAP

// A chain of constant ops folds to one constant computed by the interpreter.
// CHECK-LABEL: func.func @chain
// CHECK-NEXT: %[[C:.*]] = kiln.constant dense<[3.000000e+00, 7.000000e+00, 1.100000e+01]> : tensor<3xf32>
// CHECK-NEXT: %[[R:.*]] = kiln.add %arg0, %[[C]]
// CHECK-NEXT: return %[[R]]
func.func @chain(%x: tensor<3xf32>) -> tensor<3xf32> {
  %a = kiln.constant dense<[1.0, 3.0, 5.0]> : tensor<3xf32>
  %two = kiln.constant dense<2.0> : tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %m = kiln.mul %a, %two : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %c = kiln.add %m, %one : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %r = kiln.add %x, %c : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}

// -----

// Folding rounds to the result's storage type: 1 + 2^-11 is a tie in f16 and rounds to even.
// CHECK-LABEL: func.func @f16_rounding
// CHECK-NEXT: kiln.constant dense<1.000000e+00> : tensor<f16>
func.func @f16_rounding() -> tensor<f16> {
  %a = kiln.constant dense<1.0> : tensor<f32>
  %b = kiln.constant dense<0.00048828125> : tensor<f32>
  %s = kiln.add %a, %b : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %h = kiln.cast %s : tensor<f32> to tensor<f16>
  return %h : tensor<f16>
}

// -----

// Above max-elements and above every operand's size the op stays and a remark says why.
// REMARK: remark: not folded: the result has 9 elements, more than max-elements=2 and than any operand
// CAP-LABEL: func.func @capped
// CAP: kiln.add
func.func @capped() -> tensor<3x3xf32> {
  %a = kiln.constant dense<[[1.0], [3.0], [5.0]]> : tensor<3x1xf32>
  %b = kiln.constant dense<[[1.0, 2.0, 4.0]]> : tensor<1x3xf32>
  %m = kiln.add %a, %b : (tensor<3x1xf32>, tensor<1x3xf32>) -> tensor<3x3xf32>
  return %m : tensor<3x3xf32>
}

// -----

// A result no larger than an operand adds no elements: it folds above max-elements too (a
// weight's dequantization).
// CAP-LABEL: func.func @no_larger
// CAP-NOT: kiln.dequantize
// CAP: kiln.constant dense<[5.000000e-01, 1.000000e+00, -1.500000e+00]> : tensor<3xf32>
func.func @no_larger() -> tensor<3xf32> {
  %w = kiln.constant dense<[1, 2, -3]> : tensor<3xi8>
  %s = kiln.constant dense<0.5> : tensor<f32>
  %z = kiln.constant dense<0> : tensor<i8>
  %d = kiln.dequantize %w, %s, %z : (tensor<3xi8>, tensor<f32>, tensor<i8>) -> tensor<3xf32>
  return %d : tensor<3xf32>
}

// -----

// A gather at indices that are all one index (BERT's token types without a token_type_ids
// input: a folded blob) is that one slice broadcast: the slice folds and a kiln.expand spans
// the result, however large.
// CAP-LABEL: func.func @uniform_gather
// CAP-NEXT: %[[S:.*]] = kiln.constant dense<{{\[\[\[}}4.000000e+00, 5.000000e+00, 6.000000e+00]]]> : tensor<1x1x3xf32>
// CAP-NEXT: %[[E:.*]] = kiln.expand %[[S]] {kiln.onnx_values = ["types"]} : tensor<1x1x3xf32> to tensor<2x2x3xf32>
// CAP-NEXT: return %[[E]]
func.func @uniform_gather() -> tensor<2x2x3xf32> {
  %table = kiln.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %ids = kiln.constant dense_resource<ones> : tensor<2x2xi64>
  %g = kiln.gather %table, %ids {axis = 0 : i64, kiln.onnx_values = ["types"]} : (tensor<2x3xf32>, tensor<2x2xi64>) -> tensor<2x2x3xf32>
  return %g : tensor<2x2x3xf32>
}
{-#
  dialect_resources: {
    builtin: {
      ones: "0x080000000100000000000000010000000000000001000000000000000100000000000000"
    }
  }
#-}

// -----

// Indices that differ gather rows that differ: above max-elements the gather stays.
// REMARK: remark: not folded: the result has 12 elements
// CAP-LABEL: func.func @mixed_gather
// CAP: kiln.gather
func.func @mixed_gather() -> tensor<2x2x3xf32> {
  %table = kiln.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %ids = kiln.constant dense<[[1, 0], [1, 1]]> : tensor<2x2xi64>
  %g = kiln.gather %table, %ids {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x2xi64>) -> tensor<2x2x3xf32>
  return %g : tensor<2x2x3xf32>
}
