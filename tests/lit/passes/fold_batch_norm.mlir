// RUN: kiln-opt %s -kiln-fold-batch-norm -split-input-file -mlir-print-debuginfo -mlir-print-local-scope | FileCheck %s

// A BatchNorm after a conv: s = scale / sqrt(var + eps) = [4/2, 3/1] = [2, 3], t = beta - mean·s
// = [0.5 - 2, 0 - 6]; the weight rows scale by s, the bias becomes bias·s + t. The conv keeps
// both ONNX nodes in its location.
// CHECK-LABEL: func.func @conv_bn
// CHECK-DAG: %[[W:.*]] = kiln.constant dense<{{\[}}[{{\[}}[4.000000e+00]]], {{\[}}[{{\[}}9.000000e+00]]]]> : tensor<2x1x1x1xf32>
// CHECK-DAG: %[[B:.*]] = kiln.constant dense<[5.000000e-01, -9.000000e+00]> : tensor<2xf32>
// CHECK: %[[Y:.*]] = kiln.conv %arg0, %[[W]], %[[B]] {{.*}} loc(fused[fused<"Conv">["conv1"("m.onnx":1:0)], fused<"BatchNormalization">["bn1"("m.onnx":2:0)]])
// CHECK-NEXT: return %[[Y]]
// CHECK-NOT: kiln.batch_norm
func.func @conv_bn(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = kiln.constant dense<[[[[2.0]]], [[[3.0]]]]> : tensor<2x1x1x1xf32>
  %b = kiln.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %c = kiln.conv %x, %w, %b {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32> loc(fused<"Conv">["conv1"("m.onnx":1:0)])
  %scale = kiln.constant dense<[4.0, 3.0]> : tensor<2xf32>
  %beta = kiln.constant dense<[0.5, 0.0]> : tensor<2xf32>
  %mean = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %var = kiln.constant dense<[3.0, 0.0]> : tensor<2xf32>
  %y = kiln.batch_norm %c, %scale, %beta, %mean, %var {epsilon = 1.0 : f32} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32> loc(fused<"BatchNormalization">["bn1"("m.onnx":2:0)])
  return %y : tensor<1x2x3x3xf32>
}

// -----

// A conv without a bias gets one: t. Grouped (depthwise) weights scale by output channel too.
// CHECK-LABEL: func.func @conv_no_bias
// CHECK-DAG: %[[W:.*]] = kiln.constant dense<{{\[}}[{{\[}}[4.000000e+00]]], {{\[}}[{{\[}}-3.000000e+00]]]]> : tensor<2x1x1x1xf32>
// CHECK-DAG: %[[B:.*]] = kiln.constant dense<[-1.500000e+00, -6.000000e+00]> : tensor<2xf32>
// CHECK: kiln.conv %arg0, %[[W]], %[[B]] {{{.*}}group = 2 : i64{{.*}}}
// CHECK-NOT: kiln.batch_norm
func.func @conv_no_bias(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = kiln.constant dense<[[[[2.0]]], [[[-1.0]]]]> : tensor<2x1x1x1xf32>
  %c = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 2} : (tensor<1x2x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %scale = kiln.constant dense<[4.0, 3.0]> : tensor<2xf32>
  %beta = kiln.constant dense<[0.5, 0.0]> : tensor<2xf32>
  %mean = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %var = kiln.constant dense<[3.0, 0.0]> : tensor<2xf32>
  %y = kiln.batch_norm %c, %scale, %beta, %mean, %var {epsilon = 1.0 : f32} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  return %y : tensor<1x2x3x3xf32>
}

// -----

// A BatchNorm of a graph input: x·s + t with [1, C, 1, 1] constants, at the BatchNorm's location.
// CHECK-LABEL: func.func @alone
// CHECK-DAG: %[[S:.*]] = kiln.constant dense<{{\[}}[{{\[}}[2.000000e+00]], {{\[}}[3.000000e+00]]]]> : tensor<1x2x1x1xf32>
// CHECK-DAG: %[[T:.*]] = kiln.constant dense<{{\[}}[{{\[}}[-1.500000e+00]], {{\[}}[-6.000000e+00]]]]> : tensor<1x2x1x1xf32>
// CHECK: %[[M:.*]] = kiln.mul %arg0, %[[S]] : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32> loc(fused<"BatchNormalization">["bn"("m.onnx":3:0)])
// CHECK: %[[A:.*]] = kiln.add %[[M]], %[[T]] : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32> loc(fused<"BatchNormalization">["bn"("m.onnx":3:0)])
// CHECK: return %[[A]]
func.func @alone(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %scale = kiln.constant dense<[4.0, 3.0]> : tensor<2xf32>
  %beta = kiln.constant dense<[0.5, 0.0]> : tensor<2xf32>
  %mean = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %var = kiln.constant dense<[3.0, 0.0]> : tensor<2xf32>
  %y = kiln.batch_norm %x, %scale, %beta, %mean, %var {epsilon = 1.0 : f32} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32> loc(fused<"BatchNormalization">["bn"("m.onnx":3:0)])
  return %y : tensor<1x2x4x4xf32>
}

// -----

// The conv's result is used twice: scaling its weight would change the other use. The conv
// stays as it was and the BatchNorm becomes a multiply-add.
// CHECK-LABEL: func.func @conv_used_twice
// CHECK: %[[W:.*]] = kiln.constant dense<{{\[}}[{{\[}}[2.000000e+00]]], {{\[}}[{{\[}}3.000000e+00]]]]> : tensor<2x1x1x1xf32>
// CHECK: %[[C:.*]] = kiln.conv %arg0, %[[W]] {
// CHECK: %[[M:.*]] = kiln.mul %[[C]], %{{.*}} : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>)
// CHECK: %[[A:.*]] = kiln.add %[[M]]
// CHECK: return %[[A]], %[[C]]
// CHECK-NOT: kiln.batch_norm
func.func @conv_used_twice(%x: tensor<1x1x3x3xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) {
  %w = kiln.constant dense<[[[[2.0]]], [[[3.0]]]]> : tensor<2x1x1x1xf32>
  %c = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %scale = kiln.constant dense<[4.0, 3.0]> : tensor<2xf32>
  %beta = kiln.constant dense<[0.5, 0.0]> : tensor<2xf32>
  %mean = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %var = kiln.constant dense<[3.0, 0.0]> : tensor<2xf32>
  %y = kiln.batch_norm %c, %scale, %beta, %mean, %var {epsilon = 1.0 : f32} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  return %y, %c : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>
}

// -----

// A channels_last conv's axis 1 is a spatial axis ([N, H, W, M]): a BatchNorm over it is not
// the conv's output channels, so nothing folds into the weight.
// CHECK-LABEL: func.func @channels_last_conv
// CHECK: %[[C:.*]] = kiln.conv %arg0, %{{.*}} {channels_last = true
// CHECK: kiln.mul %[[C]], %{{.*}} : (tensor<1x2x3x2xf32>, tensor<1x2x1x1xf32>)
func.func @channels_last_conv(%x: tensor<1x2x3x1xf32>) -> tensor<1x2x3x2xf32> {
  %w = kiln.constant dense<[[[[2.0]]], [[[3.0]]]]> : tensor<2x1x1x1xf32>
  %c = kiln.conv %x, %w {channels_last = true, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x2x3x1xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x2xf32>
  %scale = kiln.constant dense<[4.0, 3.0]> : tensor<2xf32>
  %beta = kiln.constant dense<[0.5, 0.0]> : tensor<2xf32>
  %mean = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %var = kiln.constant dense<[3.0, 0.0]> : tensor<2xf32>
  %y = kiln.batch_norm %c, %scale, %beta, %mean, %var {epsilon = 1.0 : f32} : (tensor<1x2x3x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x2xf32>
  return %y : tensor<1x2x3x2xf32>
}

// -----

// Parameters computed at run time: the BatchNorm stays (its kernel reads them).
// CHECK-LABEL: func.func @runtime_parameters
// CHECK: kiln.batch_norm
func.func @runtime_parameters(%x: tensor<1x2x4x4xf32>, %scale: tensor<2xf32>) -> tensor<1x2x4x4xf32> {
  %beta = kiln.constant dense<[0.5, 0.0]> : tensor<2xf32>
  %mean = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %var = kiln.constant dense<[3.0, 0.0]> : tensor<2xf32>
  %y = kiln.batch_norm %x, %scale, %beta, %mean, %var : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

// The folded conv computes the BatchNorm's output: it takes that ONNX value's name (what
// `kiln eval --dump` writes it as), and the conv's own value is no longer computed.
// CHECK-LABEL: func.func @value_names
// CHECK: kiln.conv {{.*}}kiln.onnx_values = ["y"]
// CHECK-NOT: "c"
func.func @value_names(%x: tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32> {
  %w = kiln.constant dense<[[[[2.0]]]]> : tensor<1x1x1x1xf32>
  %c = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, kiln.onnx_values = ["c"]} : (tensor<1x1x3x3xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x3x3xf32>
  %s = kiln.constant dense<[1.0]> : tensor<1xf32>
  %y = kiln.batch_norm %c, %s, %s, %s, %s {epsilon = 0.0 : f32, kiln.onnx_values = ["y"]} : (tensor<1x1x3x3xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x3x3xf32>
  return %y : tensor<1x1x3x3xf32>
}
