// Importer: frontend/ops/DataMovement.cpp (Reshape, Squeeze, Split, Slice, Pad, Resize, TopK,
// Gather, ...). Each model comes from Inputs/make_model.py. Inputs that only shape the result
// (Reshape's shape, Squeeze's axes, ...) are read as constants and give the static result type.

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/make_model.py --out-dir %t \
// RUN:   reshape_zero_minus_one \
// RUN:   reshape_allowzero \
// RUN:   reshape_runtime_shape_declared \
// RUN:   squeeze_unsqueeze_inputs \
// RUN:   squeeze_attr_opset11 \
// RUN:   squeeze_all \
// RUN:   flatten_axis2 \
// RUN:   split_num_outputs \
// RUN:   split_uneven \
// RUN:   split_attr_opset11 \
// RUN:   slice_negative_max \
// RUN:   slice_negative_step \
// RUN:   slice_opset1_attrs \
// RUN:   slice_constant_folded \
// RUN:   pad_reflect \
// RUN:   pad_constant_value \
// RUN:   pad_axes_opset18 \
// RUN:   pad_opset2_attrs \
// RUN:   resize_scales_nearest \
// RUN:   resize_sizes_linear \
// RUN:   resize_axes_scales \
// RUN:   topk \
// RUN:   topk_opset1 \
// RUN:   gather_negative_indices \
// RUN:   gather_scalar_index \
// RUN:   gather_elements \
// RUN:   transpose_default \
// RUN:   concat_negative_axis \
// RUN:   expand_tile \
// RUN:   depth_space \
// RUN:   trilu_range

// Reshape [0, -1] of 2x3x4: 0 copies dim 0, -1 takes the rest.
// RUN: kiln import %t/reshape_zero_minus_one.onnx --quiet | FileCheck %s --check-prefix=RESHAPE
// RESHAPE-NOT: kiln.constant
// RESHAPE: kiln.reshape %arg0 : tensor<2x3x4xf32> to tensor<2x12xf32>

// allowzero=1: a 0 in the target is a zero-sized dim.
// RUN: kiln import %t/reshape_allowzero.onnx --quiet | FileCheck %s --check-prefix=RESHAPE0
// RESHAPE0: kiln.reshape %arg0 : tensor<0x3xf32> to tensor<3x0xf32>

// A run-time shape input: the result type is the one value_info declares.
// RUN: kiln import %t/reshape_runtime_shape_declared.onnx --quiet | FileCheck %s --check-prefix=RESHAPE-RT
// RESHAPE-RT: %[[R:.*]] = kiln.reshape %arg0 : tensor<2x6xf32> to tensor<3x4xf32>
// RESHAPE-RT: kiln.relu %[[R]] : tensor<3x4xf32>

// Squeeze-13 / Unsqueeze-13 with axes inputs (negative axes count from the output's end).
// RUN: kiln import %t/squeeze_unsqueeze_inputs.onnx --quiet | FileCheck %s --check-prefix=SQUEEZE
// SQUEEZE: %[[S:.*]] = kiln.reshape %arg0 : tensor<3x1x4xf32> to tensor<3x4xf32>
// SQUEEZE: kiln.reshape %[[S]] : tensor<3x4xf32> to tensor<1x3x4x1xf32>

// Squeeze-11 / Unsqueeze-11: axes attributes.
// RUN: kiln import %t/squeeze_attr_opset11.onnx --quiet | FileCheck %s --check-prefix=SQUEEZE11
// SQUEEZE11: %[[S:.*]] = kiln.reshape %arg0 : tensor<3x4x1xf32> to tensor<3x4xf32>
// SQUEEZE11: kiln.reshape %[[S]] : tensor<3x4xf32> to tensor<3x1x4xf32>

// Squeeze without axes drops every size-1 dim.
// RUN: kiln import %t/squeeze_all.onnx --quiet | FileCheck %s --check-prefix=SQUEEZE-ALL
// SQUEEZE-ALL: kiln.reshape %arg0 : tensor<1x3x1x2xf32> to tensor<3x2xf32>

// RUN: kiln import %t/flatten_axis2.onnx --quiet | FileCheck %s --check-prefix=FLATTEN
// FLATTEN: kiln.reshape %arg0 : tensor<2x3x4x5xf32> to tensor<6x20xf32>

// Split-18 num_outputs=3 of 10: ceil-sized parts, the last smaller.
// RUN: kiln import %t/split_num_outputs.onnx --quiet | FileCheck %s --check-prefix=SPLIT18
// SPLIT18: kiln.split %arg0 {axis = 0 : i64} : (tensor<10x2xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>, tensor<2x2xf32>)

// Split-13 with uneven sizes from the split input, axis -1.
// RUN: kiln import %t/split_uneven.onnx --quiet | FileCheck %s --check-prefix=SPLIT13
// SPLIT13: kiln.split %arg0 {axis = 1 : i64} : (tensor<2x10xf32>) -> (tensor<2x2xf32>, tensor<2x3xf32>, tensor<2x5xf32>)

// Split-11: sizes from the split attribute.
// RUN: kiln import %t/split_attr_opset11.onnx --quiet | FileCheck %s --check-prefix=SPLIT11
// SPLIT11: kiln.split %arg0 {axis = 0 : i64} : (tensor<6x2xf32>) -> (tensor<1x2xf32>, tensor<5x2xf32>)

// Slice with a negative start and INT64_MAX ends: rows 1.., columns 7.. of 4x10. The
// parameters stay operands, as given.
// RUN: kiln import %t/slice_negative_max.onnx --quiet | FileCheck %s --check-prefix=SLICE
// SLICE-DAG: %[[AXES:.*]] = kiln.constant dense<[0, 1]> : tensor<2xi64>
// SLICE-DAG: %[[ENDS:.*]] = kiln.constant dense<9223372036854775807> : tensor<2xi64>
// SLICE-DAG: %[[STARTS:.*]] = kiln.constant dense<[1, -3]> : tensor<2xi64>
// SLICE-DAG: %[[STEPS:.*]] = kiln.constant dense<1> : tensor<2xi64>
// SLICE: kiln.slice %arg0, %[[STARTS]], %[[ENDS]], %[[AXES]], %[[STEPS]] : (tensor<4x10xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<3x3xf32>

// Negative step from -1 to INT64_MIN by -2 on an axis of 10: 9, 7, 5, 3, 1.
// RUN: kiln import %t/slice_negative_step.onnx --quiet | FileCheck %s --check-prefix=SLICE-NEG
// SLICE-NEG: kiln.constant dense<-9223372036854775808> : tensor<1xi64>
// SLICE-NEG: kiln.slice {{.*}} -> tensor<4x5xf32>

// Slice-9: starts, ends and axes are attributes, turned into i64 constants.
// RUN: kiln import %t/slice_opset1_attrs.onnx --quiet | FileCheck %s --check-prefix=SLICE9
// SLICE9-DAG: %[[STARTS:.*]] = kiln.constant dense<2> : tensor<1xi64>
// SLICE9-DAG: %[[ENDS:.*]] = kiln.constant dense<-1> : tensor<1xi64>
// SLICE9: kiln.slice %arg0, %[[STARTS]], %[[ENDS]], %{{.*}}, %{{.*}} : {{.*}} -> tensor<4x7xf32>

// A Slice of constants folds at import: [0..10)[2::3] = [2, 5, 8].
// RUN: kiln import %t/slice_constant_folded.onnx --quiet | FileCheck %s --check-prefix=SLICE-C
// SLICE-C-NOT: kiln.slice
// SLICE-C: %[[C:.*]] = kiln.constant dense<[2, 5, 8]> : tensor<3xi64>
// SLICE-C-NOT: kiln.slice
// SLICE-C: return %[[C]] : tensor<3xi64>

// Pad reflect on H (1, 3) and W (2, 0).
// RUN: kiln import %t/pad_reflect.onnx --quiet | FileCheck %s --check-prefix=PAD
// PAD-DAG: %[[P:.*]] = kiln.constant dense<[0, 0, 1, 2, 0, 0, 3, 0]> : tensor<8xi64>
// PAD-DAG: %[[V:.*]] = kiln.constant dense<0.000000e+00> : tensor<f32>
// PAD: kiln.pad %arg0, %[[P]], %[[V]] {mode = "reflect"} : (tensor<1x2x4x5xf32>, tensor<8xi64>, tensor<f32>) -> tensor<1x2x8x7xf32>

// Pad constant with a constant_value input and a negative (cropping) pad.
// RUN: kiln import %t/pad_constant_value.onnx --quiet | FileCheck %s --check-prefix=PAD-C
// PAD-C-DAG: %[[P:.*]] = kiln.constant dense<[1, 0, -1, 2]> : tensor<4xi64>
// PAD-C-DAG: %[[V:.*]] = kiln.constant dense<2.500000e+00> : tensor<f32>
// PAD-C: kiln.pad %arg0, %[[P]], %[[V]] : (tensor<3x4xf32>, tensor<4xi64>, tensor<f32>) -> tensor<3x6xf32>

// Pad-18 with an axes input: pads for axis -1 only, spread to every axis.
// RUN: kiln import %t/pad_axes_opset18.onnx --quiet | FileCheck %s --check-prefix=PAD18
// PAD18: %[[P:.*]] = kiln.constant dense<[0, 1, 0, 2]> : tensor<4xi64>
// PAD18: kiln.pad %arg0, %[[P]], %{{.*}} {mode = "edge"} : (tensor<3x4xf32>, tensor<4xi64>, tensor<f32>) -> tensor<3x7xf32>

// Pad-2: pads and value are attributes.
// RUN: kiln import %t/pad_opset2_attrs.onnx --quiet | FileCheck %s --check-prefix=PAD2
// PAD2-DAG: %[[P:.*]] = kiln.constant dense<[0, 1, 0, 1]> : tensor<4xi64>
// PAD2-DAG: %[[V:.*]] = kiln.constant dense<1.500000e+00> : tensor<f32>
// PAD2: kiln.pad %arg0, %[[P]], %[[V]] : (tensor<3x4xf32>, tensor<4xi64>, tensor<f32>) -> tensor<3x6xf32>

// Resize with scales: each dim is floor(in * scale): 5 * 1.5 -> 7, 5 * 2.5 -> 12. The nearest
// attributes are kept; mode nearest is the default.
// RUN: kiln import %t/resize_scales_nearest.onnx --quiet | FileCheck %s --check-prefix=RESIZE
// RESIZE: %[[SC:.*]] = kiln.constant dense<[1.000000e+00, 1.000000e+00, 1.500000e+00, 2.500000e+00]> : tensor<4xf32>
// RESIZE: kiln.resize %arg0 scales %[[SC]] {coordinate_transformation_mode = "asymmetric", nearest_mode = "floor"} : (tensor<1x3x5x5xf32>, tensor<4xf32>) -> tensor<1x3x7x12xf32>

// Resize with sizes: no scales operand, the sizes are the result type.
// RUN: kiln import %t/resize_sizes_linear.onnx --quiet | FileCheck %s --check-prefix=RESIZE-SZ
// RESIZE-SZ: kiln.resize %arg0 {mode = "linear"} : (tensor<1x3x5x5xf32>) -> tensor<1x3x9x4xf32>

// Resize-18 axes=[-1]: the one scale is spread to a constant over every axis.
// RUN: kiln import %t/resize_axes_scales.onnx --quiet | FileCheck %s --check-prefix=RESIZE-AX
// RESIZE-AX: %[[SC:.*]] = kiln.constant dense<[1.000000e+00, 1.000000e+00, 1.000000e+00, 2.000000e+00]> : tensor<4xf32>
// RESIZE-AX: kiln.resize %arg0 scales %[[SC]] {mode = "cubic"} : (tensor<1x3x4x5xf32>, tensor<4xf32>) -> tensor<1x3x4x10xf32>

// TopK-11 with K=4 from an initializer, largest=0.
// RUN: kiln import %t/topk.onnx --quiet | FileCheck %s --check-prefix=TOPK
// TOPK: -> (tensor<3x4xf32> {kiln.name = "v"}, tensor<3x4xi64> {kiln.name = "i"})
// TOPK: kiln.topk %arg0 {axis = 1 : i64, largest = false} : (tensor<3x10xf32>) -> (tensor<3x4xf32>, tensor<3x4xi64>)

// TopK-1: k is an attribute, axis defaults to -1.
// RUN: kiln import %t/topk_opset1.onnx --quiet | FileCheck %s --check-prefix=TOPK1
// TOPK1: kiln.topk %arg0 {axis = 1 : i64} : (tensor<3x10xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>)

// Gather axis=-1 with negative indices: the axis is normalized, the indices are kept as given.
// RUN: kiln import %t/gather_negative_indices.onnx --quiet | FileCheck %s --check-prefix=GATHER
// GATHER: %[[I:.*]] = kiln.constant dense<{{\[\[}}-1, 0, 2]]> : tensor<1x3xi64>
// GATHER: kiln.gather %arg0, %[[I]] {axis = 1 : i64} : (tensor<5x4xf32>, tensor<1x3xi64>) -> tensor<5x1x3xf32>

// A scalar index drops the axis.
// RUN: kiln import %t/gather_scalar_index.onnx --quiet | FileCheck %s --check-prefix=GATHER-S
// GATHER-S: %[[I:.*]] = kiln.constant dense<-2> : tensor<i64>
// GATHER-S: kiln.gather %arg0, %[[I]] {axis = 0 : i64} : (tensor<5x4xf32>, tensor<i64>) -> tensor<4xf32>

// RUN: kiln import %t/gather_elements.onnx --quiet | FileCheck %s --check-prefix=GATHER-E
// GATHER-E: kiln.gather_elements %arg0, %arg1 {axis = 1 : i64} : (tensor<3x4xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>

// Transpose without perm reverses the dims.
// RUN: kiln import %t/transpose_default.onnx --quiet | FileCheck %s --check-prefix=TRANSPOSE
// TRANSPOSE: kiln.transpose %arg0 {perm = array<i64: 2, 1, 0>} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>

// RUN: kiln import %t/concat_negative_axis.onnx --quiet | FileCheck %s --check-prefix=CONCAT
// CONCAT: kiln.concat %arg0, %arg1 {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>

// Expand broadcasts 3x1 to [2, 1, 4] -> 2x3x4; Tile repeats [1, 2, 3].
// RUN: kiln import %t/expand_tile.onnx --quiet | FileCheck %s --check-prefix=EXPAND
// EXPAND: %[[E:.*]] = kiln.expand %arg0 : tensor<3x1xf32> to tensor<2x3x4xf32>
// EXPAND: kiln.tile %[[E]] : tensor<2x3x4xf32> to tensor<2x6x12xf32>

// RUN: kiln import %t/depth_space.onnx --quiet | FileCheck %s --check-prefix=D2S
// D2S: %[[D:.*]] = kiln.depth_to_space %arg0 {blocksize = 2 : i64, mode = "CRD"} : (tensor<1x8x3x3xf32>) -> tensor<1x2x6x6xf32>
// D2S: kiln.space_to_depth %[[D]] {blocksize = 2 : i64} : (tensor<1x2x6x6xf32>) -> tensor<1x8x3x3xf32>

// Trilu with k; a Range of constants folds to a constant (1, 1.25, 1.5, 1.75), and so does the
// Relu of it (through the interpreter, after import).
// RUN: kiln import %t/trilu_range.onnx --quiet | FileCheck %s --check-prefix=TRILU
// TRILU: %[[K:.*]] = kiln.constant dense<1> : tensor<i64>
// TRILU: kiln.trilu %arg0, %[[K]] {upper = false} : tensor<3x3xf32>, tensor<i64>
// TRILU: kiln.constant dense<[1.000000e+00, 1.250000e+00, 1.500000e+00, 1.750000e+00]> : tensor<4xf32>
// TRILU-NOT: kiln.range
// TRILU-NOT: kiln.relu
