// kiln-insert-quantization with `residuals`: the residual that the epilogue of a conv cuDNN's
// INT8 kernels will run adds (after the conv's bias add, if any) is read through its own
// quantization, one pair shared with every other reader of that value; a residual without a
// calibrated range stays as it is, with a remark, and so does the residual of a conv that goes
// back to bf16 (16 input channels: whyNoQuantizedConv), silently. Without the option the adds read
// their residuals as they are.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import json; act = lambda n, t: {'name': n, 'count': 1, 'non_finite': 0, 'min': -t, 'max': t, 'thresholds': {'minmax': t, 'percentile': t, 'entropy': t}}; json.dump({'format': 'kiln-calibration-1', 'model': 'm.onnx', 'compiler': 'test', 'samples': 1, 'method': 'minmax', 'percentile': 99.99, 'activations': [act('x', 2.54), act('r', 1.27), act('v', 1.0), act('s', 1.0)], 'weights': []}, open('%t/calib.json', 'w'))"
// RUN: kiln-opt %s --kiln-insert-quantization="calibration=%t/calib.json residuals" 2>&1 | FileCheck %s
// RUN: kiln-opt %s --kiln-insert-quantization="calibration=%t/calib.json" 2>&1 | FileCheck %s --check-prefix=PLAIN

// CHECK-COUNT-1: remark: residual not quantized: an input that names no ONNX value has no calibrated range
// CHECK-LABEL: func.func @main
// The residual r: scale 1.27 / 127, read by the add and by the second conv through one pair.
// CHECK: kiln.constant dense<0.00999{{[0-9]*}}> : tensor<f32>
// CHECK: %[[RQ:.*]] = kiln.quantize %arg1
// CHECK: %[[RD:.*]] = kiln.dequantize %[[RQ]]
// CHECK: %[[C:.*]] = kiln.conv
// CHECK: %[[B:.*]] = kiln.add %[[C]], %{{.*}} :
// CHECK: kiln.add %[[B]], %[[RD]]
// CHECK: kiln.conv %[[RD]]
// The residual without a range is added as it is, and so is the 16-channel conv's.
// CHECK: kiln.add %{{.*}}, %arg2
// CHECK: kiln.add %{{.*}}, %arg4

// PLAIN-NOT: residual not quantized
// PLAIN: kiln.add %{{.*}}, %arg1
// PLAIN: kiln.add %{{.*}}, %arg2
// PLAIN: kiln.add %{{.*}}, %arg4

func.func @main(%x: tensor<1x4x4x32xf32> {kiln.name = "x"}, %r: tensor<1x4x4x32xf32> {kiln.name = "r"},
                %u: tensor<1x4x4x32xf32>, %v: tensor<1x4x4x16xf32> {kiln.name = "v"},
                %s: tensor<1x4x4x16xf32> {kiln.name = "s"})
    -> (tensor<1x4x4x32xf32>, tensor<1x4x4x32xf32>, tensor<1x4x4x32xf32>, tensor<1x4x4x16xf32>) {
  %w = kiln.constant dense<0.5> : tensor<32x1x1x32xf32>
  %b = kiln.constant dense<0.25> : tensor<32xf32>
  %c = kiln.conv %x, %w {channels_last = true, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x4x4x32xf32>, tensor<32x1x1x32xf32>) -> tensor<1x4x4x32xf32>
  %cb = kiln.add %c, %b : (tensor<1x4x4x32xf32>, tensor<32xf32>) -> tensor<1x4x4x32xf32>
  %sum = kiln.add %cb, %r : (tensor<1x4x4x32xf32>, tensor<1x4x4x32xf32>) -> tensor<1x4x4x32xf32>
  %y = kiln.relu %sum : tensor<1x4x4x32xf32>
  %c2 = kiln.conv %r, %w {channels_last = true, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x4x4x32xf32>, tensor<32x1x1x32xf32>) -> tensor<1x4x4x32xf32>
  %c3 = kiln.conv %x, %w {channels_last = true, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x4x4x32xf32>, tensor<32x1x1x32xf32>) -> tensor<1x4x4x32xf32>
  %s3 = kiln.add %c3, %u : (tensor<1x4x4x32xf32>, tensor<1x4x4x32xf32>) -> tensor<1x4x4x32xf32>
  %w16 = kiln.constant dense<0.5> : tensor<16x1x1x16xf32>
  %c4 = kiln.conv %v, %w16 {channels_last = true, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x4x4x16xf32>, tensor<16x1x1x16xf32>) -> tensor<1x4x4x16xf32>
  %s4 = kiln.add %c4, %s : (tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
  return %y, %c2, %s3, %s4 : tensor<1x4x4x32xf32>, tensor<1x4x4x32xf32>, tensor<1x4x4x32xf32>, tensor<1x4x4x16xf32>
}
