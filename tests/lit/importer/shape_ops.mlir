// Importer: frontend/ops/ShapeOps.cpp and import-time folding (Constant, ConstantOfShape, Shape,
// Size, Identity, Dropout). None of these produce a kiln op of their own: constants become
// kiln.constant where an op uses them, shape queries fold, Identity and Dropout forward.
// Each model comes from Inputs/make_model.py.

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/make_model.py --out-dir %t \
// RUN:   constant_value_ints \
// RUN:   constant_scalars \
// RUN:   constant_of_shape \
// RUN:   constant_of_shape_default \
// RUN:   shape_gather_concat_reshape \
// RUN:   shape_start_end_size \
// RUN:   identity_dropout \
// RUN:   dropout_mask

// Constant value_ints [3, -1]: folded into the Reshape's static type, and returned as a
// kiln.constant.
// RUN: kiln import %t/constant_value_ints.onnx --quiet | FileCheck %s --check-prefix=CONST
// CONST: -> (tensor<3x4xf32> {kiln.name = "y"}, tensor<2xi64> {kiln.name = "s"})
// CONST-DAG: %[[S:.*]] = kiln.constant dense<[3, -1]> : tensor<2xi64>
// CONST-DAG: %[[Y:.*]] = kiln.reshape %arg0 : tensor<2x6xf32> to tensor<3x4xf32>
// CONST: return %[[Y]], %[[S]]

// Constant value_float (rank 0) and value_floats (1-d).
// RUN: kiln import %t/constant_scalars.onnx --quiet | FileCheck %s --check-prefix=CONST-F
// CONST-F-DAG: %[[FS:.*]] = kiln.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>
// CONST-F-DAG: %[[F:.*]] = kiln.constant dense<5.000000e-01> : tensor<f32>
// CONST-F: %[[M:.*]] = kiln.mul %arg0, %[[F]] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
// CONST-F: kiln.add %[[M]], %[[FS]] : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>

// ConstantOfShape [2, 3] with value 1.5: a splat constant of that shape.
// RUN: kiln import %t/constant_of_shape.onnx --quiet | FileCheck %s --check-prefix=COS
// COS: %[[C:.*]] = kiln.constant dense<1.500000e+00> : tensor<2x3xf32>
// COS: kiln.add %arg0, %[[C]] : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>

// ConstantOfShape without a value: f32 zeros, the shape from a folded Shape of an i32 input.
// RUN: kiln import %t/constant_of_shape_default.onnx --quiet | FileCheck %s --check-prefix=COS0
// COS0-NOT: kiln.shape
// COS0: %[[C:.*]] = kiln.constant dense<0.000000e+00> : tensor<4x2xf32>
// COS0: return %[[C]] : tensor<4x2xf32>

// The exporter's Shape -> Gather -> Unsqueeze -> Concat -> Reshape on a symbolic batch: with
// --shape the whole shape subgraph folds, leaving one kiln.reshape with a static type.
// RUN: kiln import %t/shape_gather_concat_reshape.onnx --shape x=2x3x4x4 --quiet | FileCheck %s --check-prefix=FOLD
// FOLD: func.func @main(%arg0: tensor<2x3x4x4xf32> {kiln.name = "x"}) -> (tensor<2x48xf32> {kiln.name = "y"})
// FOLD-NEXT: %[[Y:.*]] = kiln.reshape %arg0 : tensor<2x3x4x4xf32> to tensor<2x48xf32>
// FOLD-NEXT: return %[[Y]] : tensor<2x48xf32>
// Another batch size folds to another type; the summary counts one op.
// RUN: kiln import %t/shape_gather_concat_reshape.onnx --shape x=5x3x4x4 -o %t/fold5.mlir 2>&1 | FileCheck %s --check-prefix=FOLD-SUMMARY
// RUN: FileCheck %s --check-prefix=FOLD5 < %t/fold5.mlir
// FOLD-SUMMARY: inputs: x tensor<5x3x4x4xf32>
// FOLD-SUMMARY: outputs: y tensor<5x48xf32>
// FOLD-SUMMARY: ops: reshape=1{{$}}
// FOLD5: kiln.reshape %arg0 : tensor<5x3x4x4xf32> to tensor<5x48xf32>

// Shape with start/end (opset 15) and Size fold to constants.
// RUN: kiln import %t/shape_start_end_size.onnx --quiet | FileCheck %s --check-prefix=SHAPE
// SHAPE-DAG: %[[N:.*]] = kiln.constant dense<120> : tensor<i64>
// SHAPE-DAG: %[[S:.*]] = kiln.constant dense<[3, 4]> : tensor<2xi64>
// SHAPE: return %[[S]], %[[N]] : tensor<2xi64>, tensor<i64>

// Identity and Dropout are elided: Relu reads the graph input.
// RUN: kiln import %t/identity_dropout.onnx --quiet | FileCheck %s --check-prefix=IDENTITY
// IDENTITY: func.func @main
// IDENTITY-NEXT: %[[R:.*]] = kiln.relu %arg0 : tensor<2x3xf32>
// IDENTITY-NEXT: return %[[R]]

// Dropout-13 with training_mode false: the output is the input, the mask all true.
// RUN: kiln import %t/dropout_mask.onnx --quiet | FileCheck %s --check-prefix=MASK
// MASK: %[[M:.*]] = kiln.constant dense<true> : tensor<2x2xi1>
// MASK-NEXT: return %arg0, %[[M]] : tensor<2x2xf32>, tensor<2x2xi1>
