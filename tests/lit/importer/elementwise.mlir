// Importer: frontend/ops/Elementwise.cpp (unary, binary, variadic, Clip, Pow, Where, Cast).
// Each model comes from Inputs/make_model.py; the CHECKs pin the kiln ops and types it imports to.

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/make_model.py --out-dir %t \
// RUN:   add_broadcast \
// RUN:   clip_missing_min \
// RUN:   clip_int_no_bounds \
// RUN:   clip_opset6_attrs \
// RUN:   pow_int_exponent \
// RUN:   sum3 \
// RUN:   mean3 \
// RUN:   max2 \
// RUN:   cast_f16 \
// RUN:   castlike_i32 \
// RUN:   where_broadcast \
// RUN:   unary_attrs \
// RUN:   compare_not

// Binary ops infer numpy-broadcast result types.
// RUN: kiln import %t/add_broadcast.onnx --quiet | FileCheck %s --check-prefix=ADD
// ADD: func.func @main(%[[A:.*]]: tensor<2x1x4xf32> {kiln.name = "a"}, %[[B:.*]]: tensor<3x1xf32> {kiln.name = "b"}) -> (tensor<2x3x4xf32> {kiln.name = "y"})
// ADD: kiln.add %[[A]], %[[B]] : (tensor<2x1x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xf32>

// Clip-13 with min left out: the lowest value of the type (-inf for f32); max, a shape-[1]
// initializer, becomes a scalar (its reshape folds away; --no-fold keeps it).
// RUN: kiln import %t/clip_missing_min.onnx --quiet | FileCheck %s --check-prefix=CLIP
// CLIP-DAG: %[[MIN:.*]] = kiln.constant dense<0xFF800000> : tensor<f32>
// CLIP-DAG: %[[MAX:.*]] = kiln.constant dense<6.000000e+00> : tensor<f32>
// CLIP-NOT: kiln.reshape
// CLIP: kiln.clip %arg0, %[[MIN]], %[[MAX]] : (tensor<2x3xf32>, tensor<f32>, tensor<f32>) -> tensor<2x3xf32>
// RUN: kiln import %t/clip_missing_min.onnx --quiet --no-fold | FileCheck %s --check-prefix=CLIP-NOFOLD
// CLIP-NOFOLD: %[[MAX1:.*]] = kiln.constant dense<6.000000e+00> : tensor<1xf32>
// CLIP-NOFOLD: kiln.reshape %[[MAX1]] : tensor<1xf32> to tensor<f32>

// Clip on i32 without bounds: the i32 limits.
// RUN: kiln import %t/clip_int_no_bounds.onnx --quiet | FileCheck %s --check-prefix=CLIPI
// CLIPI-DAG: %[[LO:.*]] = kiln.constant dense<-2147483648> : tensor<i32>
// CLIPI-DAG: %[[HI:.*]] = kiln.constant dense<2147483647> : tensor<i32>
// CLIPI: kiln.clip %arg0, %[[LO]], %[[HI]] : (tensor<4xi32>, tensor<i32>, tensor<i32>) -> tensor<4xi32>

// Clip-6: min and max are attributes.
// RUN: kiln import %t/clip_opset6_attrs.onnx --quiet | FileCheck %s --check-prefix=CLIP6
// CLIP6-DAG: %[[LO:.*]] = kiln.constant dense<-1.000000e+00> : tensor<f32>
// CLIP6-DAG: %[[HI:.*]] = kiln.constant dense<1.000000e+00> : tensor<f32>
// CLIP6: kiln.clip %arg0, %[[LO]], %[[HI]]

// Pow with an i64 exponent: kiln.pow keeps the exponent's type (the result has the base's).
// RUN: kiln import %t/pow_int_exponent.onnx --quiet | FileCheck %s --check-prefix=POW
// POW: %[[E:.*]] = kiln.constant dense<[2, 3, 4]> : tensor<3xi64>
// POW-NOT: kiln.cast
// POW: kiln.pow %arg0, %[[E]] : (tensor<2x3xf32>, tensor<3xi64>) -> tensor<2x3xf32>

// Sum of 3 inputs: a chain of broadcasting adds.
// RUN: kiln import %t/sum3.onnx --quiet | FileCheck %s --check-prefix=SUM
// SUM: %[[S0:.*]] = kiln.add %arg0, %arg1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// SUM: kiln.add %[[S0]], %arg2 : (tensor<2x3xf32>, tensor<1x1xf32>) -> tensor<2x3xf32>
// SUM-NOT: kiln.div

// Mean of 3 inputs: the adds, then a division by 3.
// RUN: kiln import %t/mean3.onnx --quiet | FileCheck %s --check-prefix=MEAN
// MEAN: %[[M0:.*]] = kiln.add %arg0, %arg1
// MEAN: %[[M1:.*]] = kiln.add %[[M0]], %arg2
// MEAN: %[[N:.*]] = kiln.constant dense<3.000000e+00> : tensor<f32>
// MEAN: kiln.div %[[M1]], %[[N]] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>

// Max of 2 inputs.
// RUN: kiln import %t/max2.onnx --quiet | FileCheck %s --check-prefix=VMAX
// VMAX: kiln.max %arg0, %arg1 : (tensor<4x1xf32>, tensor<5xf32>) -> tensor<4x5xf32>

// Cast to f16 (saturate defaults to true and prints as the default).
// RUN: kiln import %t/cast_f16.onnx --quiet | FileCheck %s --check-prefix=CAST
// CAST: -> (tensor<2x3xf16> {kiln.name = "y"})
// CAST: kiln.cast %arg0 : tensor<2x3xf32> to tensor<2x3xf16>

// CastLike takes the element type of its second input.
// RUN: kiln import %t/castlike_i32.onnx --quiet | FileCheck %s --check-prefix=CASTLIKE
// CASTLIKE: kiln.cast %arg0 : tensor<5xf32> to tensor<5xi32>

// Where broadcasts all three operands.
// RUN: kiln import %t/where_broadcast.onnx --quiet | FileCheck %s --check-prefix=WHERE
// WHERE: kiln.where %arg0, %arg1, %arg2 : (tensor<2x1xi1>, tensor<1x3xf32>, tensor<f32>) -> tensor<2x3xf32>

// Unary ops with attributes: ONNX defaults equal to the kiln defaults print as nothing.
// RUN: kiln import %t/unary_attrs.onnx --quiet | FileCheck %s --check-prefix=UNARY
// UNARY: %[[L:.*]] = kiln.leaky_relu %arg0 : tensor<2x3xf32>
// UNARY: %[[E:.*]] = kiln.elu %[[L]] {alpha = 5.000000e-01 : f32} : tensor<2x3xf32>
// UNARY: %[[H:.*]] = kiln.hard_sigmoid %[[E]] {alpha = 2.500000e-01 : f32} : tensor<2x3xf32>
// UNARY: kiln.gelu %[[H]] {approximate = "tanh"} : tensor<2x3xf32>

// Comparisons give i1.
// RUN: kiln import %t/compare_not.onnx --quiet | FileCheck %s --check-prefix=CMP
// CMP: %[[LE:.*]] = kiln.less_equal %arg0, %arg1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// CMP: kiln.not %[[LE]] : tensor<2x3xi1>
