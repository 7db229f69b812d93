// Importer: frontend/ops/Reduction.cpp (Reduce*, ArgMax/ArgMin, CumSum).
// Each model comes from Inputs/make_model.py. Axes moved from an attribute to an input in opset
// 13 for ReduceSum and in opset 18 for the other reductions; kiln takes them as an operand.

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/make_model.py --out-dir %t \
// RUN:   reduce_mean_attr_axes \
// RUN:   reduce_sum_axes_input \
// RUN:   reduce_sum_all \
// RUN:   reduce_sum_noop \
// RUN:   reduce_max_opset18 \
// RUN:   reduce_l2_opset11 \
// RUN:   argmax_last_index \
// RUN:   argmin_defaults \
// RUN:   cumsum

// ReduceMean-13: attribute axes [1, -1] become an i64 constant operand; keepdims=0.
// RUN: kiln import %t/reduce_mean_attr_axes.onnx --quiet | FileCheck %s --check-prefix=RMEAN
// RMEAN: %[[AX:.*]] = kiln.constant dense<[1, -1]> : tensor<2xi64>
// RMEAN: kiln.reduce_mean %arg0 axes %[[AX]] {keepdims = false} : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<2xf32>

// ReduceSum-13: axes is an input; keepdims=0.
// RUN: kiln import %t/reduce_sum_axes_input.onnx --quiet | FileCheck %s --check-prefix=RSUM
// RSUM: %[[AX:.*]] = kiln.constant dense<-2> : tensor<1xi64>
// RSUM: kiln.reduce_sum %arg0 axes %[[AX]] {keepdims = false} : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<2x4xf32>

// ReduceSum-13 without axes reduces every axis (keepdims defaults to 1).
// RUN: kiln import %t/reduce_sum_all.onnx --quiet | FileCheck %s --check-prefix=RSUM-ALL
// RSUM-ALL: kiln.reduce_sum %arg0 : (tensor<2x3x4xf32>) -> tensor<1x1x1xf32>

// ... unless noop_with_empty_axes=1.
// RUN: kiln import %t/reduce_sum_noop.onnx --quiet | FileCheck %s --check-prefix=RSUM-NOOP
// RSUM-NOOP: kiln.reduce_sum %arg0 {noop_with_empty_axes = true} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>

// ReduceMax-18: axes is an input.
// RUN: kiln import %t/reduce_max_opset18.onnx --quiet | FileCheck %s --check-prefix=RMAX
// RMAX: %[[AX:.*]] = kiln.constant dense<[0, 2]> : tensor<2xi64>
// RMAX: kiln.reduce_max %arg0 axes %[[AX]] : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<1x3x1xf32>

// ReduceL2-11: attribute axes.
// RUN: kiln import %t/reduce_l2_opset11.onnx --quiet | FileCheck %s --check-prefix=RL2
// RL2: %[[AX:.*]] = kiln.constant dense<0> : tensor<1xi64>
// RL2: kiln.reduce_l2 %arg0 axes %[[AX]] : (tensor<2x3x4xf32>, tensor<1xi64>) -> tensor<1x3x4xf32>

// ArgMax axis=-1 (normalized), keepdims=0, select_last_index=1.
// RUN: kiln import %t/argmax_last_index.onnx --quiet | FileCheck %s --check-prefix=ARGMAX
// ARGMAX: kiln.argmax %arg0 {axis = 2 : i64, keepdims = false, select_last_index = true} : (tensor<2x3x4xf32>) -> tensor<2x3xi64>

// ArgMin defaults: axis 0, keepdims.
// RUN: kiln import %t/argmin_defaults.onnx --quiet | FileCheck %s --check-prefix=ARGMIN
// ARGMIN: kiln.argmin %arg0 {axis = 0 : i64} : (tensor<2x3x4xf32>) -> tensor<1x3x4xi64>

// CumSum: the axis stays an operand (a rank-0 i32 here); exclusive and reverse.
// RUN: kiln import %t/cumsum.onnx --quiet | FileCheck %s --check-prefix=CUMSUM
// CUMSUM: %[[AX:.*]] = kiln.constant dense<1> : tensor<i32>
// CUMSUM: kiln.cumsum %arg0, %[[AX]] {exclusive = true, reverse = true} : tensor<2x3xf32>, tensor<i32>
