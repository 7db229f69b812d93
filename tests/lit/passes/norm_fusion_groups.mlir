// RUN: kiln-opt %s -kiln-form-fusion-groups -split-input-file | FileCheck %s

// Post-LN BERT: the residual sum computed before the layer_norm (its only reader), and the
// conversions of the normalized value for the next linear layers (bf16, E4M3) after it: one
// norm group whose results are what is read outside it.
// CHECK-LABEL: func.func @post_ln
// CHECK: %[[G:.*]]:3 = kiln.fusion_group "norm"(%arg0, %arg1, %arg2, %arg3, {{.*}}) : {{.*}} -> (tensor<4x64xf32>, tensor<4x64xbf16>, tensor<4x64xf8E4M3FN>)
// CHECK: %[[S:.*]] = kiln.add
// CHECK: %[[Y:.*]] = kiln.layer_norm %[[S]]
// CHECK: %[[H:.*]] = kiln.cast %[[Y]] : tensor<4x64xf32> to tensor<4x64xbf16>
// CHECK: %[[Q:.*]] = kiln.quantize %[[Y]]
// CHECK: kiln.yield %[[Y]], %[[H]], %[[Q]]
// CHECK: kiln.matmul %[[G]]#1
// CHECK: return %[[G]]#0, {{.*}}, %[[G]]#2
func.func @post_ln(%x: tensor<4x64xbf16>, %r: tensor<4x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>,
                   %w: tensor<64x32xbf16>) -> (tensor<4x64xf32>, tensor<4x32xbf16>, tensor<4x64xf8E4M3FN>) {
  %xw = kiln.cast %x : tensor<4x64xbf16> to tensor<4x64xf32>
  %s = kiln.add %xw, %r : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
  %y = kiln.layer_norm %s, %g, %b {axis = 1 : i64} : (tensor<4x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
  %h = kiln.cast %y : tensor<4x64xf32> to tensor<4x64xbf16>
  %m = kiln.matmul %h, %w : (tensor<4x64xbf16>, tensor<64x32xbf16>) -> tensor<4x32xbf16>
  %sc = kiln.constant dense<0.25> : tensor<f32>
  %zp = kiln.constant dense<0.0> : tensor<f8E4M3FN>
  %q = kiln.quantize %y, %sc, %zp : (tensor<4x64xf32>, tensor<f32>, tensor<f8E4M3FN>) -> tensor<4x64xf8E4M3FN>
  return %y, %m, %q : tensor<4x64xf32>, tensor<4x32xbf16>, tensor<4x64xf8E4M3FN>
}

// -----

// Pre-LN (ViT): the residual sum is read again by the next residual add, so the layer_norm
// does not take it (only a value nothing else reads joins as the prologue). The group is the
// layer_norm and its bf16 cast for the matmul.
// CHECK-LABEL: func.func @pre_ln
// CHECK: %[[S:.*]] = kiln.add %arg0, %arg1
// CHECK: %[[G:.*]] = kiln.fusion_group "norm"(%[[S]], %arg2, %arg3) : {{.*}} -> tensor<4x64xbf16>
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.layer_norm
// CHECK-NEXT: kiln.cast
// CHECK-NEXT: kiln.yield
// CHECK: kiln.matmul %[[G]]
func.func @pre_ln(%x: tensor<4x64xf32>, %r: tensor<4x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>,
                  %w: tensor<64x64xbf16>) -> tensor<4x64xf32> {
  %s = kiln.add %x, %r : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
  %y = kiln.layer_norm %s, %g, %b {axis = 1 : i64} : (tensor<4x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
  %h = kiln.cast %y : tensor<4x64xf32> to tensor<4x64xbf16>
  %m = kiln.matmul %h, %w : (tensor<4x64xbf16>, tensor<64x64xbf16>) -> tensor<4x64xbf16>
  %mw = kiln.cast %m : tensor<4x64xbf16> to tensor<4x64xf32>
  %o = kiln.add %mw, %s : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
  return %o : tensor<4x64xf32>
}

// -----

// A layer_norm with nothing to take (its input is an argument, its result read by a matmul as
// it is) stays an op of its own.
// CHECK-LABEL: func.func @alone
// CHECK-NOT: kiln.fusion_group
// CHECK: kiln.layer_norm
func.func @alone(%x: tensor<4x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>, %w: tensor<64x64xf32>) -> tensor<4x64xf32> {
  %y = kiln.layer_norm %x, %g, %b {axis = 1 : i64} : (tensor<4x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
  %m = kiln.matmul %y, %w : (tensor<4x64xf32>, tensor<64x64xf32>) -> tensor<4x64xf32>
  return %m : tensor<4x64xf32>
}

// -----

// A bf16 layer_norm computes in f32 in the body like every narrow op: its constant scale and
// bias come in as f32 constants (the cast folds), the quantize reads the f32 normalized value,
// and the bf16 result is rounded once at the yield.
// CHECK-LABEL: func.func @bf16_layer_norm
// CHECK-DAG: %[[G:.*]] = kiln.constant dense<1.500000e+00> : tensor<64xf32>
// CHECK-DAG: %[[B:.*]] = kiln.constant dense<2.500000e-01> : tensor<64xf32>
// CHECK: kiln.fusion_group "norm"(%arg0, %arg1, %[[G]], %[[B]], {{.*}}) : {{.*}} -> (tensor<4x64xbf16>, tensor<4x64xf8E4M3FN>)
// CHECK: %[[S:.*]] = kiln.add {{.*}} -> tensor<4x64xf32>
// CHECK: %[[Y:.*]] = kiln.layer_norm %[[S]], {{.*}} -> tensor<4x64xf32>
// CHECK: %[[Q:.*]] = kiln.quantize %[[Y]]
// CHECK: %[[H:.*]] = kiln.cast %[[Y]] : tensor<4x64xf32> to tensor<4x64xbf16>
// CHECK: kiln.yield %[[H]], %[[Q]]
// CHECK-NOT: tensor<64xbf16>
func.func @bf16_layer_norm(%x: tensor<4x64xbf16>, %r: tensor<4x64xbf16>) -> (tensor<4x64xbf16>, tensor<4x64xf8E4M3FN>) {
  %g = kiln.constant dense<1.5> : tensor<64xbf16>
  %b = kiln.constant dense<0.25> : tensor<64xbf16>
  %s = kiln.add %x, %r : (tensor<4x64xbf16>, tensor<4x64xbf16>) -> tensor<4x64xbf16>
  %y = kiln.layer_norm %s, %g, %b {axis = 1 : i64} : (tensor<4x64xbf16>, tensor<64xbf16>, tensor<64xbf16>) -> tensor<4x64xbf16>
  %sc = kiln.constant dense<0.25> : tensor<bf16>
  %zp = kiln.constant dense<0.0> : tensor<f8E4M3FN>
  %q = kiln.quantize %y, %sc, %zp : (tensor<4x64xbf16>, tensor<bf16>, tensor<f8E4M3FN>) -> tensor<4x64xf8E4M3FN>
  return %y, %q : tensor<4x64xbf16>, tensor<4x64xf8E4M3FN>
}

// -----

// BERT's embedding layer_norm stays f32 (its inputs are f32 gathers): its bf16 cast is read by
// the next layer's residual add (outside the group) and by the quantize of the next linear
// layer's E4M3 input. The group takes both conversions and writes both, where separate cast and
// quantize kernels re-read the tensors.
// CHECK-LABEL: func.func @cast_read_by_quantize_and_outside
// CHECK: %[[G:.*]]:2 = kiln.fusion_group "norm"({{.*}}) : {{.*}} -> (tensor<4x64xbf16>, tensor<4x64xf8E4M3FN>)
// CHECK: kiln.layer_norm
// CHECK: kiln.quantize
// CHECK: kiln.yield
// CHECK-NOT: kiln.quantize
// CHECK: kiln.fusion_group "gemm"(%[[G]]#0
// CHECK: return {{.*}}%[[G]]#1
func.func @cast_read_by_quantize_and_outside(%x: tensor<4x64xf32>, %r: tensor<4x64xf32>, %g: tensor<64xf32>,
                                             %b: tensor<64xf32>, %o: tensor<64x64xbf16>)
    -> (tensor<4x64xbf16>, tensor<4x64xf8E4M3FN>) {
  %s = kiln.add %x, %r : (tensor<4x64xf32>, tensor<4x64xf32>) -> tensor<4x64xf32>
  %y = kiln.layer_norm %s, %g, %b {axis = 1 : i64} : (tensor<4x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
  %h = kiln.cast %y : tensor<4x64xf32> to tensor<4x64xbf16>
  %sc = kiln.constant dense<0.25> : tensor<bf16>
  %zp = kiln.constant dense<0.0> : tensor<f8E4M3FN>
  %q = kiln.quantize %h, %sc, %zp : (tensor<4x64xbf16>, tensor<bf16>, tensor<f8E4M3FN>) -> tensor<4x64xf8E4M3FN>
  %m = kiln.matmul %h, %o : (tensor<4x64xbf16>, tensor<64x64xbf16>) -> tensor<4x64xbf16>
  %res = kiln.add %m, %h : (tensor<4x64xbf16>, tensor<4x64xbf16>) -> tensor<4x64xbf16>
  return %res, %q : tensor<4x64xbf16>, tensor<4x64xf8E4M3FN>
}

// -----

// BERT's embeddings: the word-embedding lookup (a gather of whole table rows, read only by the
// sum) joins the norm group, whose kernel reads the table rows itself; the position rows come
// in as they are.
// CHECK-LABEL: func.func @embedding_lookup
// CHECK-NOT: kiln.gather
// CHECK: kiln.fusion_group "norm"(%[[T:.*]], %arg0, %arg1, %arg2, %arg3)
// CHECK: %[[E:.*]] = kiln.gather %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<50x64xf32>, tensor<2x4xi64>) -> tensor<2x4x64xf32>
// CHECK: %[[S:.*]] = kiln.add %[[E]]
// CHECK: kiln.layer_norm %[[S]]
func.func @embedding_lookup(%ids: tensor<2x4xi64>, %pos: tensor<1x4x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>)
    -> tensor<2x4x64xbf16> {
  %table = kiln.constant dense<0.5> : tensor<50x64xf32>
  %e = kiln.gather %table, %ids {axis = 0 : i64} : (tensor<50x64xf32>, tensor<2x4xi64>) -> tensor<2x4x64xf32>
  %s = kiln.add %e, %pos : (tensor<2x4x64xf32>, tensor<1x4x64xf32>) -> tensor<2x4x64xf32>
  %y = kiln.layer_norm %s, %g, %b {axis = 2 : i64} : (tensor<2x4x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x4x64xf32>
  %h = kiln.cast %y : tensor<2x4x64xf32> to tensor<2x4x64xbf16>
  return %h : tensor<2x4x64xbf16>
}

// -----

// A lookup read outside the group too stays a step of its own (the group would not hold the
// value another reader needs).
// CHECK-LABEL: func.func @embedding_read_twice
// CHECK: %[[E:.*]] = kiln.gather
// CHECK: kiln.fusion_group "norm"(%[[E]],
// CHECK: return {{.*}}, %[[E]]
func.func @embedding_read_twice(%ids: tensor<2x4xi64>, %pos: tensor<1x4x64xf32>, %g: tensor<64xf32>)
    -> (tensor<2x4x64xbf16>, tensor<2x4x64xf32>) {
  %table = kiln.constant dense<0.5> : tensor<50x64xf32>
  %e = kiln.gather %table, %ids {axis = 0 : i64} : (tensor<50x64xf32>, tensor<2x4xi64>) -> tensor<2x4x64xf32>
  %s = kiln.add %e, %pos : (tensor<2x4x64xf32>, tensor<1x4x64xf32>) -> tensor<2x4x64xf32>
  %y = kiln.layer_norm %s, %g {axis = 2 : i64} : (tensor<2x4x64xf32>, tensor<64xf32>) -> tensor<2x4x64xf32>
  %h = kiln.cast %y : tensor<2x4x64xf32> to tensor<2x4x64xbf16>
  return %h, %e : tensor<2x4x64xbf16>, tensor<2x4x64xf32>
}

// -----

// A gather along another axis is no lookup of whole rows: it stays.
// CHECK-LABEL: func.func @column_gather
// CHECK: kiln.gather
// CHECK: kiln.fusion_group "norm"
func.func @column_gather(%ids: tensor<4xi64>, %g: tensor<4xf32>) -> tensor<64x4xbf16> {
  %table = kiln.constant dense<0.5> : tensor<64x50xf32>
  %e = kiln.gather %table, %ids {axis = 1 : i64} : (tensor<64x50xf32>, tensor<4xi64>) -> tensor<64x4xf32>
  %s = kiln.add %e, %e : (tensor<64x4xf32>, tensor<64x4xf32>) -> tensor<64x4xf32>
  %y = kiln.layer_norm %s, %g {axis = 1 : i64} : (tensor<64x4xf32>, tensor<4xf32>) -> tensor<64x4xf32>
  %h = kiln.cast %y : tensor<64x4xf32> to tensor<64x4xbf16>
  return %h : tensor<64x4xbf16>
}
