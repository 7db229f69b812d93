// kiln-insert-quantization: Q/DQ pairs on the inputs of convs and matmuls from a calibration
// file; activation scales per tensor (threshold / 127, or / 448 in fp8), constant weights per
// output channel (max |w| / 127), one pair per value, ops kept or without a range untouched.
// RUN: rm -rf %t && mkdir -p %t/in
// RUN: %python -c "import numpy as np; np.save('%t/in/image.npy', np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype(np.float32))"
// RUN: %python -c "import json; act = lambda n, t: {'name': n, 'count': 1, 'non_finite': 0, 'min': -t, 'max': t, 'thresholds': {'minmax': t, 'percentile': t / 2, 'entropy': t / 4}}; json.dump({'format': 'kiln-calibration-1', 'model': 'm.onnx', 'compiler': 'test', 'samples': 1, 'method': 'minmax', 'percentile': 99.99, 'activations': [act('x', 2.54), act('c', 1.27), act('k', 12.7)], 'weights': []}, open('%t/calib.json', 'w'))"
// RUN: kiln-opt %s --kiln-insert-quantization="calibration=%t/calib.json" 2>&1 | FileCheck %s
// RUN: kiln-opt %s --kiln-insert-quantization="calibration=%t/calib.json" 2>&1 | FileCheck %s --check-prefix=RESHAPE
// RUN: kiln-opt %s --kiln-insert-quantization="calibration=%t/calib.json method=percentile type=fp8 keep=MatMul" 2>&1 | FileCheck %s --check-prefix=FP8
// RUN: kiln-opt %s --kiln-insert-quantization="calibration=%t/calib.json ops=kiln.conv per-tensor-weight-ops=kiln.conv" 2>&1 | FileCheck %s --check-prefix=OPS
// RUN: kiln-opt %s --kiln-insert-quantization="calibration=%t/calib.json keep-first" 2>&1 | FileCheck %s --check-prefix=FIRST
// RUN: kiln-opt %s --kiln-insert-quantization="calibration=%t/calib.json keep-last" 2>&1 | FileCheck %s --check-prefix=LAST
// RUN: kiln-opt %s --kiln-insert-quantization="calibration=%t/calib.json" --kiln-fold-constants -o %t/q.mlir
// RUN: kiln eval %t/q.mlir --output-dir %t/out > /dev/null

// CHECK-DAG: remark: not quantized: input 'r' has no calibrated range
// CHECK-LABEL: func.func @main
// Both matmul operands are activations, per tensor: k at 12.7 / 127 (a graph input: its
// pair comes first), c at 1.27 / 127.
// CHECK: kiln.constant dense<1.000000e-01> : tensor<f32>
// CHECK: %[[KD:.*]] = kiln.dequantize
// CHECK: %[[XS:.*]] = kiln.constant dense<2.000000e-02> : tensor<f32>
// CHECK: %[[XZ:.*]] = kiln.constant dense<0> : tensor<i8>
// CHECK: %[[XQ:.*]] = kiln.quantize %arg0, %[[XS]], %[[XZ]] : (tensor<1x2x2x2xf32>, tensor<f32>, tensor<i8>) -> tensor<1x2x2x2xi8>
// CHECK: %[[XD:.*]] = kiln.dequantize %[[XQ]], %[[XS]], %[[XZ]]
// CHECK: %[[WS:.*]] = kiln.constant dense<[0.00999999977, 2.000000e-03]> : tensor<2xf32>
// CHECK: %[[WQ:.*]] = kiln.quantize %{{.*}}, %[[WS]], %{{.*}} {axis = 0 : i64} : (tensor<2x2x1x1xf32>, tensor<2xf32>, tensor<2xi8>) -> tensor<2x2x1x1xi8>
// The second conv reads x too: the same pair.
// CHECK: kiln.conv %[[XD]]
// CHECK: kiln.conv %[[XD]]
// CHECK: kiln.constant dense<0.00999999977> : tensor<f32>
// CHECK: %[[CD:.*]] = kiln.dequantize
// CHECK: kiln.matmul %[[CD]], %[[KD]]
// The second matmul's input has no range: it stays as it was.
// CHECK: kiln.matmul %{{.*}}, %arg1

// An unnamed reshape (passes insert them) has the range of the value it reshapes: x's.
// RESHAPE: %[[R:.*]] = kiln.reshape %arg0 : tensor<1x2x2x2xf32> to tensor<4x2xf32>
// RESHAPE-NEXT: kiln.constant dense<2.000000e-02> : tensor<f32>
// RESHAPE-NEXT: kiln.constant dense<0> : tensor<i8>
// RESHAPE-NEXT: kiln.quantize %[[R]]

// fp8, percentile: x at 1.27 / 448; the matmuls kept.
// FP8: remark: not quantized: keep=MatMul
// FP8: kiln.constant dense<0.00283482135> : tensor<f32>
// FP8: kiln.quantize %arg0, {{.*}} -> tensor<1x2x2x2xf8E4M3FN>

// ops= quantizes only the ops named (no remark for the others); per-tensor-weight-ops gives the
// conv's weight one scale, its largest channel's (1.27 / 127).
// OPS-NOT: remark
// OPS: kiln.constant dense<0.00999999977> : tensor<f32>
// OPS-NEXT: kiln.constant dense<0> : tensor<i8>
// OPS-NEXT: kiln.quantize {{.*}} : (tensor<2x2x1x1xf32>, tensor<f32>, tensor<i8>) -> tensor<2x2x1x1xi8>
// OPS: kiln.matmul %{{.*}}, %arg1

// keep-first: the convs and mm3 read the network input x (mm3 through a reshape) and stay as
// they are; the matmul reading c is quantized.
// FIRST-COUNT-3: remark: not quantized: it reads the network input (the first layer; keep-first)
// FIRST-LABEL: func.func @main
// FIRST: kiln.conv %arg0
// FIRST: kiln.conv %arg0
// FIRST: kiln.quantize
// FIRST: kiln.matmul %[[CD:.*]], %{{.*}}
// FIRST: kiln.matmul %{{.*}}, %arg1
// FIRST: kiln.matmul %{{.*}}, %arg1

// keep-last: conv1, mm2 and mm3 compute what no other conv or matmul reads (outputs); conv2
// feeds mm through a reshape, and mm feeds mm2 through a relu: those two are quantized.
// LAST: remark: not quantized: no other quantizable op reads what it computes (a last layer; keep-last)
// LAST-NEXT: note: see current operation: {{.*}} = kiln.conv %arg0
// LAST: remark: not quantized: no other quantizable op reads what it computes (a last layer; keep-last)
// LAST-NEXT: note: see current operation: {{.*}} = kiln.matmul
// LAST: remark: not quantized: no other quantizable op reads what it computes (a last layer; keep-last)
// LAST-NOT: remark
// LAST-LABEL: func.func @main
// LAST: kiln.conv %arg0, %
// LAST: %[[CONV2:.*]] = kiln.conv %{{.*}}, %{{.*}}
// LAST: kiln.matmul %{{.*}}, %[[KD:.*]] :
// LAST: kiln.matmul %{{.*}}, %arg1
// LAST: kiln.matmul %{{.*}}, %arg1

func.func @main(%x: tensor<1x2x2x2xf32> {kiln.name = "x"}, %k: tensor<2x2xf32> {kiln.name = "k"}) -> (tensor<1x2x2x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>) {
  %w = kiln.constant dense<[[[[1.27]], [[-0.5]]], [[[0.1]], [[-0.254]]]]> : tensor<2x2x1x1xf32>
  %c = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x2x2x2xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x2x2xf32> loc(fused<"Conv">["conv1"("m.onnx":1:0)])
  %c2 = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x2x2x2xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x2x2xf32> loc(fused<"Conv">["conv2"("m.onnx":2:0)])
  %s = kiln.reshape %c2 {kiln.onnx_values = ["c"]} : tensor<1x2x2x2xf32> to tensor<4x2xf32> loc(fused<"Reshape">["flat"("m.onnx":3:0)])
  %m = kiln.matmul %s, %k : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32> loc(fused<"MatMul">["mm"("m.onnx":4:0)])
  %r = kiln.relu %m {kiln.onnx_values = ["r"]} : tensor<4x2xf32> loc(fused<"Relu">["relu"("m.onnx":5:0)])
  %m2 = kiln.matmul %r, %k : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32> loc(fused<"MatMul">["mm2"("m.onnx":6:0)])
  %xr = kiln.reshape %x : tensor<1x2x2x2xf32> to tensor<4x2xf32>
  %m3 = kiln.matmul %xr, %k : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32> loc(fused<"MatMul">["mm3"("m.onnx":7:0)])
  return %c, %m, %m2, %m3 : tensor<1x2x2x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>
}

// A keep target that matches nothing is a warning (a typo, or node names not in the module).
// RUN: kiln-opt %s --kiln-insert-quantization="calibration=%t/calib.json keep=conv9" 2>&1 | FileCheck %s --check-prefix=UNMATCHED
// UNMATCHED: warning: kiln-insert-quantization: keep 'conv9' matches no conv, conv_transpose, matmul or gemm
// Node names come from locations: `kiln import --locations` prints them, and they read back.
// RUN: kiln import %S/../../../examples/tiny_cnn.onnx --shape image=1x3x32x32 --locations --onnx-value-names --quiet -o %t/tiny.mlir
// RUN: kiln calibrate %S/../../../examples/tiny_cnn.onnx --shape image=1x3x32x32 --calibration %t/in -o %t/tiny.json --quiet
// RUN: kiln-opt %t/tiny.mlir --kiln-insert-quantization="calibration=%t/tiny.json keep=conv2,Gemm" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TINY
// TINY: remark: not quantized: keep=conv2
// TINY: remark: not quantized: keep=Gemm
// TINY-NOT: warning

// Bad options fail with the fix in the message.
// RUN: not kiln-opt %s --kiln-insert-quantization 2>&1 | FileCheck %s --check-prefix=NO-FILE
// RUN: not kiln-opt %s --kiln-insert-quantization="calibration=%t/missing.json" 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not kiln-opt %s --kiln-insert-quantization="calibration=%t/calib.json type=int4" 2>&1 | FileCheck %s --check-prefix=TYPE
// RUN: not kiln-opt %s --kiln-insert-quantization="calibration=%t/calib.json method=mean" 2>&1 | FileCheck %s --check-prefix=METHOD
// RUN: echo '{"format": "other"}' > %t/other.json
// RUN: not kiln-opt %s --kiln-insert-quantization="calibration=%t/other.json" 2>&1 | FileCheck %s --check-prefix=FORMAT
// NO-FILE: kiln-insert-quantization needs calibration=FILE (written by kiln calibrate)
// MISSING: kiln-insert-quantization: cannot read '{{.*}}missing.json'
// TYPE: type 'int4' is not int8 or fp8
// METHOD: method 'mean' is not minmax, percentile or entropy
// FORMAT: not a Kiln calibration file
