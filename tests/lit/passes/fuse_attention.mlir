// RUN: kiln-opt %s -kiln-fuse-attention -split-input-file -mlir-print-op-on-diagnostic=false 2>%t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=DIAG < %t.err
// RUN: kiln-opt %s -split-input-file --kiln-pipeline="precision=fp32" | FileCheck %s --check-prefix=FP32
// RUN: kiln-opt %s -split-input-file --kiln-pipeline="precision=bf16 fuse-attention=false" | FileCheck %s --check-prefix=OFF

// BERT (TorchScript exporter, HuggingFace): Q, K, V projections reshaped to [b, s, h, d] and
// transposed, Q and Kᵀ each scaled by sqrt(1/sqrt(d)), a [b, 1, 1, s] additive mask. The
// transposes become views of the projections ([b, s, h*d]), the two scales one (0.25), the
// mask is expanded over queries (cuDNN's bias rows), and the merge back to [b, s, h*d] is the
// result's view.
// CHECK-LABEL: func.func @bert
// CHECK: %[[M:.*]] = kiln.expand %arg3 : tensor<1x1x1x24xbf16> to tensor<1x1x24x24xbf16>
// CHECK-NOT: kiln.transpose
// CHECK: %[[O:.*]] = kiln.attention %arg0, %arg1, %arg2, %[[M]] {dims = array<i64: 1, 2, 24, 24, 16, 16>, k_view = array<i64: 0, 768, 16, 32, 1>, mask_view = array<i64: 0, 0, 0, 24, 1>, o_view = array<i64: 0, 768, 16, 32, 1>, q_view = array<i64: 0, 768, 16, 32, 1>, scale = 2.500000e-01 : f32, v_view = array<i64: 0, 768, 16, 32, 1>} : (tensor<1x24x32xbf16>, tensor<1x24x32xbf16>, tensor<1x24x32xbf16>, tensor<1x1x24x24xbf16>) -> tensor<1x24x32xbf16>
// CHECK-NOT: kiln.softmax
// CHECK: return %[[O]]
// FP32-LABEL: func.func @bert
// FP32: kiln.softmax
// FP32-NOT: kiln.attention
// OFF-LABEL: func.func @bert
// OFF: kiln.softmax
// OFF-NOT: kiln.attention
func.func @bert(%x: tensor<1x24x32xbf16>, %y: tensor<1x24x32xbf16>, %z: tensor<1x24x32xbf16>, %mask: tensor<1x1x1x24xbf16>) -> tensor<1x24x32xbf16> {
  %c = kiln.constant dense<5.000000e-01> : tensor<bf16>
  %q0 = kiln.reshape %x : tensor<1x24x32xbf16> to tensor<1x24x2x16xbf16>
  %q = kiln.transpose %q0 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x24x2x16xbf16>) -> tensor<1x2x24x16xbf16>
  %k0 = kiln.reshape %y : tensor<1x24x32xbf16> to tensor<1x24x2x16xbf16>
  %v0 = kiln.reshape %z : tensor<1x24x32xbf16> to tensor<1x24x2x16xbf16>
  %v = kiln.transpose %v0 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x24x2x16xbf16>) -> tensor<1x2x24x16xbf16>
  %kt = kiln.transpose %k0 {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x24x2x16xbf16>) -> tensor<1x2x16x24xbf16>
  %qs = kiln.mul %q, %c : (tensor<1x2x24x16xbf16>, tensor<bf16>) -> tensor<1x2x24x16xbf16>
  %ks = kiln.mul %kt, %c : (tensor<1x2x16x24xbf16>, tensor<bf16>) -> tensor<1x2x16x24xbf16>
  %s = kiln.matmul %qs, %ks : (tensor<1x2x24x16xbf16>, tensor<1x2x16x24xbf16>) -> tensor<1x2x24x24xbf16>
  %a = kiln.add %s, %mask : (tensor<1x2x24x24xbf16>, tensor<1x1x1x24xbf16>) -> tensor<1x2x24x24xbf16>
  %p = kiln.softmax %a {axis = 3 : i64} : tensor<1x2x24x24xbf16>
  %o = kiln.matmul %p, %v : (tensor<1x2x24x24xbf16>, tensor<1x2x24x16xbf16>) -> tensor<1x2x24x16xbf16>
  %ot = kiln.transpose %o {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x2x24x16xbf16>) -> tensor<1x24x2x16xbf16>
  %r = kiln.reshape %ot : tensor<1x24x2x16xbf16> to tensor<1x24x32xbf16>
  return %r : tensor<1x24x32xbf16>
}

// -----

// ViT (torchvision nn.MultiheadAttention): one in_proj output [s, b, 3*h*d] split by Gather of
// 0, 1, 2 out of a [3, s, b, h*d] transpose; Q, K and V are views of the packed projection at
// offsets 0, h*d and 2*h*d, and the result is the [s*b, h*d] the out_proj reads.
// CHECK-LABEL: func.func @vit
// CHECK-NOT: kiln.gather
// CHECK: %[[O:.*]] = kiln.attention %arg0, %arg0, %arg0 {dims = array<i64: 1, 2, 24, 24, 16, 16>, k_view = array<i64: 32, 2304, 16, 96, 1>, o_view = array<i64: 0, 768, 16, 32, 1>, q_view = array<i64: 0, 2304, 16, 96, 1>, scale = 2.500000e-01 : f32, v_view = array<i64: 64, 2304, 16, 96, 1>} : (tensor<24x1x96xbf16>, tensor<24x1x96xbf16>, tensor<24x1x96xbf16>) -> tensor<24x32xbf16>
// CHECK-NEXT: return %[[O]]
func.func @vit(%qkv: tensor<24x1x96xbf16>) -> tensor<24x32xbf16> {
  %i0 = kiln.constant dense<0> : tensor<i64>
  %i1 = kiln.constant dense<1> : tensor<i64>
  %i2 = kiln.constant dense<2> : tensor<i64>
  %c = kiln.constant dense<5.000000e-01> : tensor<1xbf16>
  %a = kiln.reshape %qkv : tensor<24x1x96xbf16> to tensor<24x1x3x32xbf16>
  %b = kiln.reshape %a : tensor<24x1x3x32xbf16> to tensor<1x24x1x3x32xbf16>
  %t = kiln.transpose %b {perm = array<i64: 3, 1, 2, 0, 4>} : (tensor<1x24x1x3x32xbf16>) -> tensor<3x24x1x1x32xbf16>
  %u = kiln.reshape %t : tensor<3x24x1x1x32xbf16> to tensor<3x24x1x32xbf16>
  %q0 = kiln.gather %u, %i0 {axis = 0 : i64} : (tensor<3x24x1x32xbf16>, tensor<i64>) -> tensor<24x1x32xbf16>
  %k0 = kiln.gather %u, %i1 {axis = 0 : i64} : (tensor<3x24x1x32xbf16>, tensor<i64>) -> tensor<24x1x32xbf16>
  %v0 = kiln.gather %u, %i2 {axis = 0 : i64} : (tensor<3x24x1x32xbf16>, tensor<i64>) -> tensor<24x1x32xbf16>
  %q1 = kiln.reshape %q0 : tensor<24x1x32xbf16> to tensor<24x2x16xbf16>
  %q2 = kiln.transpose %q1 {perm = array<i64: 1, 0, 2>} : (tensor<24x2x16xbf16>) -> tensor<2x24x16xbf16>
  %q = kiln.reshape %q2 : tensor<2x24x16xbf16> to tensor<1x2x24x16xbf16>
  %k1 = kiln.reshape %k0 : tensor<24x1x32xbf16> to tensor<24x2x16xbf16>
  %k2 = kiln.transpose %k1 {perm = array<i64: 1, 0, 2>} : (tensor<24x2x16xbf16>) -> tensor<2x24x16xbf16>
  %k = kiln.reshape %k2 : tensor<2x24x16xbf16> to tensor<1x2x24x16xbf16>
  %v1 = kiln.reshape %v0 : tensor<24x1x32xbf16> to tensor<24x2x16xbf16>
  %v2 = kiln.transpose %v1 {perm = array<i64: 1, 0, 2>} : (tensor<24x2x16xbf16>) -> tensor<2x24x16xbf16>
  %v = kiln.reshape %v2 : tensor<2x24x16xbf16> to tensor<1x2x24x16xbf16>
  %kt = kiln.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x24x16xbf16>) -> tensor<1x2x16x24xbf16>
  %qs = kiln.mul %q, %c : (tensor<1x2x24x16xbf16>, tensor<1xbf16>) -> tensor<1x2x24x16xbf16>
  %ks = kiln.mul %kt, %c : (tensor<1x2x16x24xbf16>, tensor<1xbf16>) -> tensor<1x2x16x24xbf16>
  %s = kiln.matmul %qs, %ks : (tensor<1x2x24x16xbf16>, tensor<1x2x16x24xbf16>) -> tensor<1x2x24x24xbf16>
  %p = kiln.softmax %s {axis = 3 : i64} : tensor<1x2x24x24xbf16>
  %o = kiln.matmul %p, %v : (tensor<1x2x24x24xbf16>, tensor<1x2x24x16xbf16>) -> tensor<1x2x24x16xbf16>
  %o1 = kiln.transpose %o {perm = array<i64: 2, 0, 1, 3>} : (tensor<1x2x24x16xbf16>) -> tensor<24x1x2x16xbf16>
  %r = kiln.reshape %o1 : tensor<24x1x2x16xbf16> to tensor<24x32xbf16>
  return %r : tensor<24x32xbf16>
}

// -----

// Head dim 12 (not a multiple of 8): cuDNN's flash attention refuses it, so the ops stay and a
// remark names the nodes. The scores are divided by a scalar (the other scaling form).
// CHECK-LABEL: func.func @head_dim_12
// CHECK-NOT: kiln.attention
// CHECK: kiln.softmax
// DIAG: m.onnx:3:0: remark: attention not fused (with node 'qk' (MatMul) and node 'pv' (MatMul)): head dim 12 is not a multiple of 8 up to 256
func.func @head_dim_12(%q: tensor<1x2x8x12xbf16>, %kt: tensor<1x2x12x8xbf16>, %v: tensor<1x2x8x12xbf16>) -> tensor<1x2x8x12xbf16> {
  %c = kiln.constant dense<3.464840e+00> : tensor<bf16>
  %s = kiln.matmul %q, %kt : (tensor<1x2x8x12xbf16>, tensor<1x2x12x8xbf16>) -> tensor<1x2x8x8xbf16> loc(fused<"MatMul">["qk"("m.onnx":1:0)])
  %d = kiln.div %s, %c : (tensor<1x2x8x8xbf16>, tensor<bf16>) -> tensor<1x2x8x8xbf16>
  %p = kiln.softmax %d {axis = 3 : i64} : tensor<1x2x8x8xbf16> loc(fused<"Softmax">["sm"("m.onnx":3:0)])
  %o = kiln.matmul %p, %v : (tensor<1x2x8x8xbf16>, tensor<1x2x8x12xbf16>) -> tensor<1x2x8x12xbf16> loc(fused<"MatMul">["pv"("m.onnx":4:0)])
  return %o : tensor<1x2x8x12xbf16>
}

// -----

// torch's SDPA export zeroes fully masked rows after the softmax (Where(IsNaN(p), 0, p)).
// With a mask whose values are unknown (a graph input: it may hold NaN or +inf, which make rows
// NaN too) the rows cannot be told apart: unfused, with a remark.
// CHECK-LABEL: func.func @where_after_softmax
// CHECK-NOT: kiln.attention
// DIAG: m.onnx:3:0: remark: attention not fused (with node 'qk' (MatMul) and node 'pv' (MatMul)): node 'nan' (Where) zeroes the rows the mask masks entirely, and the mask's values are not known
func.func @where_after_softmax(%q: tensor<1x2x8x16xbf16>, %k: tensor<1x2x8x16xbf16>, %v: tensor<1x2x8x16xbf16>, %mask: tensor<1x1x8x8xbf16>) -> tensor<1x2x8x16xbf16> {
  %zero = kiln.constant dense<0.0> : tensor<1xbf16>
  %kt = kiln.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x8x16xbf16>) -> tensor<1x2x16x8xbf16>
  %s = kiln.matmul %q, %kt : (tensor<1x2x8x16xbf16>, tensor<1x2x16x8xbf16>) -> tensor<1x2x8x8xbf16> loc(fused<"MatMul">["qk"("m.onnx":1:0)])
  %a = kiln.add %s, %mask : (tensor<1x2x8x8xbf16>, tensor<1x1x8x8xbf16>) -> tensor<1x2x8x8xbf16>
  %p = kiln.softmax %a {axis = 3 : i64} : tensor<1x2x8x8xbf16> loc(fused<"Softmax">["sm"("m.onnx":3:0)])
  %n = kiln.is_nan %p : tensor<1x2x8x8xbf16> -> tensor<1x2x8x8xi1>
  %w = kiln.where %n, %zero, %p : (tensor<1x2x8x8xi1>, tensor<1xbf16>, tensor<1x2x8x8xbf16>) -> tensor<1x2x8x8xbf16> loc(fused<"Where">["nan"("m.onnx":5:0)])
  %o = kiln.matmul %w, %v : (tensor<1x2x8x8xbf16>, tensor<1x2x8x16xbf16>) -> tensor<1x2x8x16xbf16> loc(fused<"MatMul">["pv"("m.onnx":4:0)])
  return %o : tensor<1x2x8x16xbf16>
}

// -----

// The same with BERT's mask, Where(mask, 0, -inf): its values are 0 or -inf, so p's NaN rows are
// exactly the rows whose mask is all -inf. Fused; those rows are zeroed after the step by
// Where(IsInf(ReduceMax(mask)), 0, o): the mask is the same for both heads, so the rows select
// on the merged [b, s, h * d] result as it is (an elementwise op its readers' group can take).
// CHECK-LABEL: func.func @sdpa_where
// CHECK: %[[MAX:.*]] = kiln.reduce_max %[[MASK:.*]] axes %{{.*}} : (tensor<1x1x8x8xbf16>, tensor<1xi64>) -> tensor<1x1x8x1xbf16>
// CHECK: %[[ALL:.*]] = kiln.is_inf %[[MAX]] {detect_positive = false}
// CHECK: %[[O:.*]] = kiln.attention %arg0, %arg1, %arg2, %[[MASK]] {{.*}} -> tensor<1x8x32xbf16>
// CHECK: %[[ROWS:.*]] = kiln.reshape %[[ALL]] : tensor<1x1x8x1xi1> to tensor<1x8x1x1xi1>
// CHECK: %[[ROWS3:.*]] = kiln.reshape %[[ROWS]] : tensor<1x8x1x1xi1> to tensor<1x8x1xi1>
// CHECK: %[[W:.*]] = kiln.where %[[ROWS3]], %{{.*}}, %[[O]] : (tensor<1x8x1xi1>, tensor<bf16>, tensor<1x8x32xbf16>) -> tensor<1x8x32xbf16>
// CHECK: return %[[W]]
func.func @sdpa_where(%x: tensor<1x8x32xbf16>, %y: tensor<1x8x32xbf16>, %z: tensor<1x8x32xbf16>, %b: tensor<1x1x8x8xi1>) -> tensor<1x8x32xbf16> {
  %zero = kiln.constant dense<0.0> : tensor<1xbf16>
  %zf = kiln.constant dense<0.0> : tensor<1xf32>
  %ninf = kiln.constant dense<0xFF800000> : tensor<1xf32>
  %mf = kiln.where %b, %zf, %ninf : (tensor<1x1x8x8xi1>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x8x8xf32>
  %mask = kiln.cast %mf : tensor<1x1x8x8xf32> to tensor<1x1x8x8xbf16>
  %q0 = kiln.reshape %x : tensor<1x8x32xbf16> to tensor<1x8x2x16xbf16>
  %q = kiln.transpose %q0 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x8x2x16xbf16>) -> tensor<1x2x8x16xbf16>
  %k0 = kiln.reshape %y : tensor<1x8x32xbf16> to tensor<1x8x2x16xbf16>
  %kt = kiln.transpose %k0 {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x8x2x16xbf16>) -> tensor<1x2x16x8xbf16>
  %v0 = kiln.reshape %z : tensor<1x8x32xbf16> to tensor<1x8x2x16xbf16>
  %v = kiln.transpose %v0 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x8x2x16xbf16>) -> tensor<1x2x8x16xbf16>
  %s = kiln.matmul %q, %kt : (tensor<1x2x8x16xbf16>, tensor<1x2x16x8xbf16>) -> tensor<1x2x8x8xbf16>
  %a = kiln.add %s, %mask : (tensor<1x2x8x8xbf16>, tensor<1x1x8x8xbf16>) -> tensor<1x2x8x8xbf16>
  %p = kiln.softmax %a {axis = 3 : i64} : tensor<1x2x8x8xbf16>
  %n = kiln.is_nan %p : tensor<1x2x8x8xbf16> -> tensor<1x2x8x8xi1>
  %w = kiln.where %n, %zero, %p : (tensor<1x2x8x8xi1>, tensor<1xbf16>, tensor<1x2x8x8xbf16>) -> tensor<1x2x8x8xbf16>
  %o = kiln.matmul %w, %v : (tensor<1x2x8x8xbf16>, tensor<1x2x8x16xbf16>) -> tensor<1x2x8x16xbf16>
  %ot = kiln.transpose %o {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x2x8x16xbf16>) -> tensor<1x8x2x16xbf16>
  %r = kiln.reshape %ot : tensor<1x8x2x16xbf16> to tensor<1x8x32xbf16>
  return %r : tensor<1x8x32xbf16>
}
