// RUN: kiln-opt %s -kiln-pack-attention-projections -split-input-file --verify-diagnostics | FileCheck %s

// BERT's self-attention after kiln-fuse-attention: Q, K and V are three linear layers of one
// hidden state [1, 16, 32], split into 2 heads of 16 by views. They become one matmul by the
// concatenated [32, 96] weight plus the concatenated bias, and the views read columns 0, 32
// and 64 of its rows (row stride 32 becomes 96).
// CHECK-LABEL: func.func @bert_self_attention
// CHECK: %[[W:.*]] = kiln.constant dense_resource<{{.*}}> : tensor<32x96xbf16>
// CHECK: %[[M:.*]] = kiln.matmul %arg0, %[[W]] : (tensor<1x16x32xbf16>, tensor<32x96xbf16>) -> tensor<1x16x96xbf16>
// CHECK: %[[B:.*]] = kiln.constant dense_resource<{{.*}}> : tensor<96xbf16>
// CHECK: %[[P:.*]] = kiln.add %[[M]], %[[B]] : (tensor<1x16x96xbf16>, tensor<96xbf16>) -> tensor<1x16x96xbf16>
// CHECK: kiln.attention %[[P]], %[[P]], %[[P]] {{{.*}}k_view = array<i64: 32, 1536, 16, 96, 1>{{.*}}q_view = array<i64: 0, 1536, 16, 96, 1>{{.*}}v_view = array<i64: 64, 1536, 16, 96, 1>}
// CHECK-NOT: kiln.matmul
// expected-remark @below {{packed the Q, K and V projections of 1 attention layers into one GEMM each}}
func.func @bert_self_attention(%x: tensor<1x16x32xbf16>) -> tensor<1x16x32xbf16> {
  %wq = kiln.constant dense<0.5> : tensor<32x32xbf16>
  %wk = kiln.constant dense<0.25> : tensor<32x32xbf16>
  %wv = kiln.constant dense<0.125> : tensor<32x32xbf16>
  %bq = kiln.constant dense<1.0> : tensor<32xbf16>
  %bk = kiln.constant dense<2.0> : tensor<32xbf16>
  %bv = kiln.constant dense<3.0> : tensor<32xbf16>
  %mq = kiln.matmul %x, %wq : (tensor<1x16x32xbf16>, tensor<32x32xbf16>) -> tensor<1x16x32xbf16>
  %q = kiln.add %mq, %bq : (tensor<1x16x32xbf16>, tensor<32xbf16>) -> tensor<1x16x32xbf16>
  %mk = kiln.matmul %x, %wk : (tensor<1x16x32xbf16>, tensor<32x32xbf16>) -> tensor<1x16x32xbf16>
  %k = kiln.add %bk, %mk : (tensor<32xbf16>, tensor<1x16x32xbf16>) -> tensor<1x16x32xbf16>
  %mv = kiln.matmul %x, %wv : (tensor<1x16x32xbf16>, tensor<32x32xbf16>) -> tensor<1x16x32xbf16>
  %v = kiln.add %mv, %bv : (tensor<1x16x32xbf16>, tensor<32xbf16>) -> tensor<1x16x32xbf16>
  %o = kiln.attention %q, %k, %v {dims = array<i64: 1, 2, 16, 16, 16, 16>, scale = 0.25 : f32,
      q_view = array<i64: 0, 512, 16, 32, 1>, k_view = array<i64: 0, 512, 16, 32, 1>,
      v_view = array<i64: 0, 512, 16, 32, 1>, o_view = array<i64: 0, 512, 16, 32, 1>}
      : (tensor<1x16x32xbf16>, tensor<1x16x32xbf16>, tensor<1x16x32xbf16>) -> tensor<1x16x32xbf16>
  return %o : tensor<1x16x32xbf16>
}

// -----

// K's projection is also a result of the function, so it must stay as it is: nothing is packed.
// CHECK-LABEL: func.func @projection_used_elsewhere
// CHECK-COUNT-3: kiln.matmul {{.*}} -> tensor<1x16x32xbf16>
// CHECK: kiln.attention %{{.*}}, %{{.*}}, %{{.*}} {{{.*}}q_view = array<i64: 0, 512, 16, 32, 1>
func.func @projection_used_elsewhere(%x: tensor<1x16x32xbf16>) -> (tensor<1x16x32xbf16>, tensor<1x16x32xbf16>) {
  %w = kiln.constant dense<0.5> : tensor<32x32xbf16>
  %q = kiln.matmul %x, %w : (tensor<1x16x32xbf16>, tensor<32x32xbf16>) -> tensor<1x16x32xbf16>
  %k = kiln.matmul %x, %w : (tensor<1x16x32xbf16>, tensor<32x32xbf16>) -> tensor<1x16x32xbf16>
  %v = kiln.matmul %x, %w : (tensor<1x16x32xbf16>, tensor<32x32xbf16>) -> tensor<1x16x32xbf16>
  %o = kiln.attention %q, %k, %v {dims = array<i64: 1, 2, 16, 16, 16, 16>, scale = 0.25 : f32,
      q_view = array<i64: 0, 512, 16, 32, 1>, k_view = array<i64: 0, 512, 16, 32, 1>,
      v_view = array<i64: 0, 512, 16, 32, 1>, o_view = array<i64: 0, 512, 16, 32, 1>}
      : (tensor<1x16x32xbf16>, tensor<1x16x32xbf16>, tensor<1x16x32xbf16>) -> tensor<1x16x32xbf16>
  return %o, %k : tensor<1x16x32xbf16>, tensor<1x16x32xbf16>
}

// -----

// A view whose sequence stride crosses rows (a [16, 16] tensor read as 32 rows of 8) has no
// packed form: row and column of an element are not affine in the packed [16, 48] rows, so
// nothing is packed.
// CHECK-LABEL: func.func @view_crosses_rows
// CHECK-COUNT-3: kiln.matmul
func.func @view_crosses_rows(%x: tensor<1x16x16xbf16>) -> tensor<1x16x16xbf16> {
  %w = kiln.constant dense<0.5> : tensor<16x16xbf16>
  %q = kiln.matmul %x, %w : (tensor<1x16x16xbf16>, tensor<16x16xbf16>) -> tensor<1x16x16xbf16>
  %k = kiln.matmul %x, %w : (tensor<1x16x16xbf16>, tensor<16x16xbf16>) -> tensor<1x16x16xbf16>
  %v = kiln.matmul %x, %w : (tensor<1x16x16xbf16>, tensor<16x16xbf16>) -> tensor<1x16x16xbf16>
  %o = kiln.attention %q, %k, %v {dims = array<i64: 1, 1, 32, 32, 8, 8>, scale = 0.25 : f32,
      q_view = array<i64: 0, 256, 256, 8, 1>, k_view = array<i64: 0, 256, 256, 8, 1>,
      v_view = array<i64: 0, 256, 256, 8, 1>, o_view = array<i64: 0, 256, 256, 8, 1>}
      : (tensor<1x16x16xbf16>, tensor<1x16x16xbf16>, tensor<1x16x16xbf16>) -> tensor<1x16x16xbf16>
  return %o : tensor<1x16x16xbf16>
}

// -----

// Q read transposed (d moving by rows, s by columns) still has a packed form: the row stride
// 16 becomes 48 and V's columns start at 32.
// CHECK-LABEL: func.func @transposed_view
// CHECK: kiln.matmul %arg0, %{{.*}} -> tensor<1x16x48xbf16>
// CHECK: kiln.attention {{.*}}q_view = array<i64: 0, 768, 768, 1, 48>{{.*}}v_view = array<i64: 32, 768, 768, 48, 1>
// expected-remark @below {{packed the Q, K and V projections of 1 attention layers}}
func.func @transposed_view(%x: tensor<1x16x16xbf16>) -> tensor<1x16x16xbf16> {
  %w = kiln.constant dense<0.5> : tensor<16x16xbf16>
  %q = kiln.matmul %x, %w : (tensor<1x16x16xbf16>, tensor<16x16xbf16>) -> tensor<1x16x16xbf16>
  %k = kiln.matmul %x, %w : (tensor<1x16x16xbf16>, tensor<16x16xbf16>) -> tensor<1x16x16xbf16>
  %v = kiln.matmul %x, %w : (tensor<1x16x16xbf16>, tensor<16x16xbf16>) -> tensor<1x16x16xbf16>
  %o = kiln.attention %q, %k, %v {dims = array<i64: 1, 1, 16, 16, 16, 16>, scale = 0.25 : f32,
      q_view = array<i64: 0, 256, 256, 1, 16>, k_view = array<i64: 0, 256, 256, 16, 1>,
      v_view = array<i64: 0, 256, 256, 16, 1>, o_view = array<i64: 0, 256, 256, 16, 1>}
      : (tensor<1x16x16xbf16>, tensor<1x16x16xbf16>, tensor<1x16x16xbf16>) -> tensor<1x16x16xbf16>
  return %o : tensor<1x16x16xbf16>
}
