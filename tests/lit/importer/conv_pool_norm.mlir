// Importer: frontend/ops/ConvPoolNorm.cpp (Conv, ConvTranspose, pooling, normalization).
// Each model comes from Inputs/make_model.py. auto_pad is resolved at import: kiln ops always
// carry explicit pads, in the ONNX order [begin of each spatial axis..., end of each...].

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/make_model.py --out-dir %t \
// RUN:   conv_same_upper \
// RUN:   conv_same_lower \
// RUN:   conv_valid_grouped \
// RUN:   conv_1d_dilated \
// RUN:   conv_transpose_output_shape \
// RUN:   conv_transpose_output_shape_same_upper \
// RUN:   conv_transpose_output_shape_same_lower \
// RUN:   conv_transpose_output_shape_big \
// RUN:   conv_transpose_same_upper \
// RUN:   conv_transpose_pads \
// RUN:   max_pool_ceil \
// RUN:   max_pool_same_upper \
// RUN:   avg_pool_count_include_pad \
// RUN:   avg_pool_defaults \
// RUN:   global_pools \
// RUN:   batch_norm \
// RUN:   instance_norm \
// RUN:   layer_norm_plain \
// RUN:   layer_norm_stats \
// RUN:   group_norm_opset18

// SAME_UPPER on 8x7, kernel 3, stride 2: H pads 1 in total (extra at the end), W pads 2.
// RUN: kiln import %t/conv_same_upper.onnx --quiet | FileCheck %s --check-prefix=CONV-SU
// CONV-SU: kiln.conv %arg0, %{{.*}} {dilations = array<i64: 1, 1>, pads = array<i64: 0, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x8x7xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>

// SAME_LOWER: the odd extra pad goes to the beginning.
// RUN: kiln import %t/conv_same_lower.onnx --quiet | FileCheck %s --check-prefix=CONV-SL
// CONV-SL: kiln.conv {{.*}}pads = array<i64: 1, 1, 0, 1>{{.*}} -> tensor<1x4x4x4xf32>

// VALID, grouped, with bias.
// RUN: kiln import %t/conv_valid_grouped.onnx --quiet | FileCheck %s --check-prefix=CONV-V
// CONV-V: kiln.conv %arg0, %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x6x6xf32>, tensor<2x1x3x3xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>

// 1-d, dilated, asymmetric explicit pads.
// RUN: kiln import %t/conv_1d_dilated.onnx --quiet | FileCheck %s --check-prefix=CONV-1D
// CONV-1D: kiln.conv %arg0, %{{.*}} {dilations = array<i64: 2>, pads = array<i64: 1, 0>, strides = array<i64: 1>} : (tensor<1x2x10xf32>, tensor<3x2x3xf32>) -> tensor<1x3x7xf32>

// ConvTranspose with output_shape 5x5: total pad 2*(3-1) + 3 - 5 = 2 per axis, split (1, 1);
// the pads attribute is ignored.
// RUN: kiln import %t/conv_transpose_output_shape.onnx --quiet | FileCheck %s --check-prefix=CT
// CT: kiln.conv_transpose %arg0, %{{.*}} {dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x2x3x3xf32>, tensor<2x4x3x3xf32>) -> tensor<1x4x5x5xf32>

// output_shape with SAME_UPPER / SAME_LOWER: an odd total pad of 1 goes to the end / beginning.
// RUN: kiln import %t/conv_transpose_output_shape_same_upper.onnx --quiet | FileCheck %s --check-prefix=CT-SU
// CT-SU: kiln.conv_transpose {{.*}}output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 1, 1>{{.*}} -> tensor<1x4x6x8xf32>
// RUN: kiln import %t/conv_transpose_output_shape_same_lower.onnx --quiet | FileCheck %s --check-prefix=CT-SL
// CT-SL: kiln.conv_transpose {{.*}}output_padding = array<i64: 0, 0>, pads = array<i64: 1, 1, 0, 0>{{.*}} -> tensor<1x4x6x8xf32>

// output_shape 8x8 beyond the full transposed conv (7x7): the extra goes to output_padding.
// RUN: kiln import %t/conv_transpose_output_shape_big.onnx --quiet | FileCheck %s --check-prefix=CT-BIG
// CT-BIG: kiln.conv_transpose {{.*}}output_padding = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>{{.*}} -> tensor<1x4x8x8xf32>

// ConvTranspose with auto_pad SAME_UPPER and no output_shape: output = input * stride.
// RUN: kiln import %t/conv_transpose_same_upper.onnx --quiet | FileCheck %s --check-prefix=CT-AUTO
// CT-AUTO: kiln.conv_transpose {{.*}}pads = array<i64: 0, 0, 1, 1>{{.*}} -> tensor<1x4x6x6xf32>

// Depthwise ConvTranspose with explicit pads, output_padding and bias.
// RUN: kiln import %t/conv_transpose_pads.onnx --quiet | FileCheck %s --check-prefix=CT-PADS
// CT-PADS: kiln.conv_transpose %arg0, %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, group = 4 : i64, output_padding = array<i64: 1, 0>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x4x5x5xf32>, tensor<4x1x4x4xf32>, tensor<4xf32>) -> tensor<1x4x11x10xf32>

// MaxPool ceil_mode: 8 -> 4 (3 with floor).
// RUN: kiln import %t/max_pool_ceil.onnx --quiet | FileCheck %s --check-prefix=MP-CEIL
// MP-CEIL: kiln.max_pool %arg0 {ceil_mode = true, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x1x8x8xf32>) -> tensor<1x1x4x4xf32>

// MaxPool SAME_UPPER with an even kernel.
// RUN: kiln import %t/max_pool_same_upper.onnx --quiet | FileCheck %s --check-prefix=MP-SU
// MP-SU: kiln.max_pool %arg0 {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x1x5x5xf32>) -> tensor<1x1x5x5xf32>

// AveragePool count_include_pad=1.
// RUN: kiln import %t/avg_pool_count_include_pad.onnx --quiet | FileCheck %s --check-prefix=AP-CIP
// AP-CIP: kiln.avg_pool %arg0 {count_include_pad = true, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>

// AveragePool defaults: count_include_pad and ceil_mode false (not printed).
// RUN: kiln import %t/avg_pool_defaults.onnx --quiet | FileCheck %s --check-prefix=AP-DEF
// AP-DEF: kiln.avg_pool %arg0 {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x3x3xf32>

// RUN: kiln import %t/global_pools.onnx --quiet | FileCheck %s --check-prefix=GP
// GP: kiln.global_avg_pool %arg0 : (tensor<2x3x5x7xf32>) -> tensor<2x3x1x1xf32>
// GP: kiln.global_max_pool %arg0 : (tensor<2x3x5x7xf32>) -> tensor<2x3x1x1xf32>

// RUN: kiln import %t/batch_norm.onnx --quiet | FileCheck %s --check-prefix=BN
// BN: kiln.batch_norm %arg0, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 1.000000e-03 : f32} : (tensor<1x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>

// RUN: kiln import %t/instance_norm.onnx --quiet | FileCheck %s --check-prefix=IN
// IN: kiln.instance_norm %arg0, %{{.*}}, %{{.*}} : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>

// LayerNormalization, default axis -1 normalized to 2 and default epsilon.
// RUN: kiln import %t/layer_norm_plain.onnx --quiet | FileCheck %s --check-prefix=LN
// LN: kiln.layer_norm %arg0, %{{.*}}, %{{.*}} {axis = 2 : i64} : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
// LN-NOT: kiln.reduce_mean

// LayerNormalization axis=-2 with the Mean and InvStdDev outputs: spelled out over axes [1, 2],
// dims kept: mean = E[x], inv_std_dev = 1 / sqrt(E[(x - mean)^2] + epsilon).
// RUN: kiln import %t/layer_norm_stats.onnx --quiet | FileCheck %s --check-prefix=LN-STATS
// LN-STATS: -> (tensor<2x3x4xf32> {kiln.name = "y"}, tensor<2x1x1xf32> {kiln.name = "mean"}, tensor<2x1x1xf32> {kiln.name = "inv_std"})
// LN-STATS: %[[Y:.*]] = kiln.layer_norm %arg0, %{{.*}} {axis = 1 : i64, epsilon = 9.99999997E-7 : f32}
// LN-STATS: %[[AXES:.*]] = kiln.constant dense<[1, 2]> : tensor<2xi64>
// LN-STATS: %[[MEAN:.*]] = kiln.reduce_mean %arg0 axes %[[AXES]] : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<2x1x1xf32>
// LN-STATS: %[[D:.*]] = kiln.sub %arg0, %[[MEAN]]
// LN-STATS: %[[SQ:.*]] = kiln.mul %[[D]], %[[D]]
// LN-STATS: %[[VAR:.*]] = kiln.reduce_mean %[[SQ]] axes %[[AXES]] : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<2x1x1xf32>
// LN-STATS: %[[EPS:.*]] = kiln.constant dense<9.99999997E-7> : tensor<f32>
// LN-STATS: %[[SH:.*]] = kiln.add %[[VAR]], %[[EPS]]
// LN-STATS: %[[ROOT:.*]] = kiln.sqrt %[[SH]] : tensor<2x1x1xf32>
// LN-STATS: %[[INV:.*]] = kiln.reciprocal %[[ROOT]] : tensor<2x1x1xf32>
// LN-STATS: return %[[Y]], %[[MEAN]], %[[INV]]

// GroupNormalization-18: scale and bias are per group; kiln.group_norm takes them per channel.
// RUN: kiln import %t/group_norm_opset18.onnx --quiet | FileCheck %s --check-prefix=GN
// GN-DAG: %[[S:.*]] = kiln.constant dense<[1.000000e+00, 1.000000e+00, 2.000000e+00, 2.000000e+00]> : tensor<4xf32>
// GN-DAG: %[[B:.*]] = kiln.constant dense<[3.000000e+00, 3.000000e+00, 4.000000e+00, 4.000000e+00]> : tensor<4xf32>
// GN: kiln.group_norm %arg0, %[[S]], %[[B]] {num_groups = 2 : i64} : (tensor<1x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x3x3xf32>
