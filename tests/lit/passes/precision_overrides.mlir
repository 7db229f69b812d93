// RUN: kiln-opt %s -kiln-mixed-precision="precision=bf16 keep-fp32=Softmax,fc1,NoSuchNode force-precision=fc2=fp16,kiln.gelu=fp32" -mlir-print-op-on-diagnostic=false 2>%t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=DIAG < %t.err

// --keep-fp32 by ONNX op type (Softmax) and by node name (fc1); --force-precision by node name
// (fc2, to fp16 in a bf16 plan) and by kiln op name (gelu, to strict fp32: kiln.math). Each
// override is a remark on the node; a summary remark and warnings for unmatched targets go on
// the function.
// CHECK-LABEL: func.func @overrides
// CHECK: %[[FC1:.*]] = kiln.matmul %arg0, %{{.*}} : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
// CHECK-NOT: kiln.math
// CHECK: %[[SM:.*]] = kiln.softmax %[[FC1]] {axis = 1 : i64} : tensor<2x8xf32>
// CHECK: %[[G:.*]] = kiln.gelu %[[SM]] {kiln.math = "strict"} : tensor<2x8xf32>
// CHECK: %[[H:.*]] = kiln.cast %[[G]] : tensor<2x8xf32> to tensor<2x8xf16>
// CHECK: kiln.matmul %[[H]], %{{.*}} : (tensor<2x8xf16>, tensor<8x4xf16>) -> tensor<2x4xf16>
// CHECK: kiln.matmul %{{.*}}, %{{.*}} : (tensor<2x8xbf16>, tensor<8x4xbf16>) -> tensor<2x4xbf16>
// DIAG: model.onnx:1:0: remark: runs in fp32 (--keep-fp32 fc1)
// DIAG: model.onnx:2:0: remark: runs in fp32 (--keep-fp32 Softmax)
// DIAG: model.onnx:3:0: remark: runs in fp32 (--force-precision kiln.gelu=fp32)
// DIAG: model.onnx:4:0: remark: runs in fp16 (--force-precision fc2=fp16)
// DIAG: warning: --keep-fp32 'NoSuchNode' matches no ONNX node name, ONNX op type or kiln op in this model
// DIAG: remark: mixed precision: 2 ops in half precision, 3 in fp32
func.func @overrides(%x: tensor<2x8xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %w1 = kiln.constant dense<0.5> : tensor<8x8xf32>
  %a = kiln.matmul %x, %w1 : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32> loc(fused<"MatMul">["fc1"("model.onnx":1:0)])
  %s = kiln.softmax %a {axis = 1 : i64} : tensor<2x8xf32> loc(fused<"Softmax">["sm"("model.onnx":2:0)])
  %g = kiln.gelu %s : tensor<2x8xf32> loc(fused<"Gelu">["act"("model.onnx":3:0)])
  %w2 = kiln.constant dense<0.25> : tensor<8x4xf32>
  %b = kiln.matmul %g, %w2 : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32> loc(fused<"MatMul">["fc2"("model.onnx":4:0)])
  %c = kiln.matmul %g, %w2 : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32> loc(fused<"MatMul">["fc3"("model.onnx":5:0)])
  return %b, %c : tensor<2x4xf32>, tensor<2x4xf32>
}
