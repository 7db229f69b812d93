// Importer translations where the ONNX spec is easy to get wrong; each once was.

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/make_model.py --out-dir %t \
// RUN:   repro_quantize21_output_dtype repro_layer_norm_f16_stats repro_dropout7_mask \
// RUN:   repro_pow_int_base_float_exponent repro_conv_transpose_notset_odd

// QuantizeLinear-21 without a zero point takes its result type from output_dtype.
// RUN: kiln import %t/repro_quantize21_output_dtype.onnx --quiet | FileCheck %s --check-prefix=QDTYPE
// QDTYPE: kiln.quantize {{.*}} -> tensor<2x3xi8>

// LayerNormalization's Mean and InvStdDev are f32 (stash_type) for an f16 input.
// RUN: kiln import %t/repro_layer_norm_f16_stats.onnx --quiet | FileCheck %s --check-prefix=LNF16
// LNF16: kiln.cast %arg0 : tensor<2x4xf16> to tensor<2x4xf32>
// LNF16: kiln.reduce_mean {{.*}} -> tensor<2x1xf32>
// LNF16: return {{.*}} : tensor<2x4xf16>, tensor<2x1xf32>, tensor<2x1xf32>

// Dropout-7's mask has the data's type (bool only from opset 10).
// RUN: kiln import %t/repro_dropout7_mask.onnx --quiet | FileCheck %s --check-prefix=DROP7
// DROP7: kiln.constant dense<1.000000e+00> : tensor<2x2xf32>

// Pow keeps a float exponent for an int base (no cast to the base type).
// RUN: kiln import %t/repro_pow_int_base_float_exponent.onnx --quiet | FileCheck %s --check-prefix=POW
// POW-NOT: kiln.cast
// POW: kiln.pow %arg0, %arg1 : (tensor<2xi32>, tensor<2xf32>) -> tensor<2xi32>

// ConvTranspose with output_shape and auto_pad NOTSET: the odd pad goes to the start.
// RUN: kiln import %t/repro_conv_transpose_notset_odd.onnx --quiet | FileCheck %s --check-prefix=CTODD
// CTODD: kiln.conv_transpose {{.*}}pads = array<i64: 1, 1, 0, 0>
