// kiln-insert-quantization looks back through zero padding (kiln-space-to-depth-convs pads a
// stem's channels) for a value's range: a conv reading pad(x, 0) takes x's scale; keep-first
// sees through it to the network input. Padding with another value adds values the range may
// miss: no range, no quantization.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import json; act = lambda n, t: {'name': n, 'count': 1, 'non_finite': 0, 'min': -t, 'max': t, 'thresholds': {'minmax': t, 'percentile': t, 'entropy': t}}; json.dump({'format': 'kiln-calibration-1', 'model': 'm.onnx', 'compiler': 'test', 'samples': 1, 'method': 'minmax', 'percentile': 99.99, 'activations': [act('x', 2.54)], 'weights': []}, open('%t/calib.json', 'w'))"
// RUN: kiln-opt %s --kiln-insert-quantization="calibration=%t/calib.json" 2>&1 | FileCheck %s
// RUN: kiln-opt %s --kiln-insert-quantization="calibration=%t/calib.json keep-first" 2>&1 | FileCheck %s --check-prefix=FIRST

// CHECK: remark: not quantized: an input that names no ONNX value has no calibrated range
// CHECK-LABEL: func.func @main
// CHECK: %[[P:.*]] = kiln.pad %arg0, %{{.*}}, %[[ZERO:.*]] :
// CHECK-NEXT: kiln.constant dense<2.000000e-02> : tensor<f32>
// CHECK-NEXT: kiln.constant dense<0> : tensor<i8>
// CHECK-NEXT: kiln.quantize %[[P]]

// FIRST-COUNT-1: remark: not quantized: it reads the network input (the first layer; keep-first)

func.func @main(%x: tensor<1x4x4x12xf32> {kiln.name = "x"}) -> (tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>) {
  %pads = kiln.constant dense<[0, 0, 0, 0, 0, 0, 0, 4]> : tensor<8xi64>
  %zero = kiln.constant dense<0.0> : tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %xp = kiln.pad %x, %pads, %zero : (tensor<1x4x4x12xf32>, tensor<8xi64>, tensor<f32>) -> tensor<1x4x4x16xf32>
  %w = kiln.constant dense<0.5> : tensor<16x1x1x16xf32>
  %c = kiln.conv %xp, %w {channels_last = true, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x4x4x16xf32>, tensor<16x1x1x16xf32>) -> tensor<1x4x4x16xf32> loc(fused<"Conv">["conv1"("m.onnx":1:0)])
  %xo = kiln.pad %x, %pads, %one : (tensor<1x4x4x12xf32>, tensor<8xi64>, tensor<f32>) -> tensor<1x4x4x16xf32>
  %c2 = kiln.conv %xo, %w {channels_last = true, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x4x4x16xf32>, tensor<16x1x1x16xf32>) -> tensor<1x4x4x16xf32> loc(fused<"Conv">["conv2"("m.onnx":2:0)])
  return %c, %c2 : tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>
}
