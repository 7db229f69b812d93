// kiln-fuse-attention through codegen: one attention step per attention, its operands strided
// views of the tensors the head split starts from (no transpose, gather or copy steps).
// RUN: rm -rf %t && mkdir -p %t
// RUN: kiln compile %s -o %t/vit.kiln --precision bf16 --quiet
// RUN: kiln inspect %t/vit.kiln | FileCheck %s --check-prefix=VIT
// RUN: kiln compile %S/../tools/Inputs/attention.mlir -o %t/bert.kiln --precision bf16 --quiet
// RUN: kiln inspect %t/bert.kiln | FileCheck %s --check-prefix=BERT
// RUN: kiln compile %s -o %t/fp32.kiln --quiet
// RUN: kiln inspect %t/fp32.kiln | FileCheck %s --check-prefix=FP32

// ViT (nn.MultiheadAttention): Q, K and V at offsets 0, 32 and 64 of the packed in_proj output
// [s, b, 3*h*d]; the result written as the [s*b, h*d] out_proj reads. Nothing else runs.
// VIT-NOT: transpose
// VIT-NOT: gather
// VIT: step 0 "pv" op="kiln.attention" nodes=["pv"] attention batch=1 heads=2 seqQ=24 seqKv=24 headDim=16 headDimV=16 scale=0.25 causal=0 q=qkv:bf16[24,1,96] qOffset=0 qStrides=[2304,16,96,1] k=qkv:bf16[24,1,96] kOffset=32 kStrides=[2304,16,96,1] v=qkv:bf16[24,1,96] vOffset=64 vStrides=[2304,16,96,1] o=pv:bf16[24,32] oOffset=0 oStrides=[768,16,32,1] mask=- maskOffset=0 maskStrides=[]
// VIT-NOT: step 1 "

// BERT (torch SDPA export): [b, s, h*d] views, the mask expanded over queries, fully masked rows
// zeroed after the step (reduce_max of the mask, then one fused IsInf + Where kernel).
// BERT-NOT: transpose
// BERT: op="kiln.expand"
// BERT: op="kiln.attention" nodes={{.*}}"pv"{{.*}} attention batch=1 heads=2 seqQ=32 seqKv=32 headDim=16 headDimV=16 scale=0.25 causal=0 q={{.*}} qOffset=0 qStrides=[1024,16,32,1] {{.*}} kStrides=[1024,16,32,1] {{.*}} vStrides=[1024,16,32,1] {{.*}} oStrides=[1024,16,32,1] mask=kiln.expand:bf16[1,1,32,32] maskOffset=0 maskStrides=[0,0,32,1]
// BERT-NOT: softmax
// BERT-NOT: transpose

// fp32 plans keep the unfused ops (the step has no fp32 path).
// FP32-NOT: op="kiln.attention"
// FP32: op="kiln.softmax"
// FP32-NOT: op="kiln.attention"
func.func @main(%qkv: tensor<24x1x96xbf16> {kiln.name = "qkv"}) -> (tensor<24x32xbf16> {kiln.name = "out"}) {
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
  %o = kiln.matmul %p, %v : (tensor<1x2x24x24xbf16>, tensor<1x2x24x16xbf16>) -> tensor<1x2x24x16xbf16> loc(fused<"MatMul">["pv"("m.onnx":1:0)])
  %o1 = kiln.transpose %o {perm = array<i64: 2, 0, 1, 3>} : (tensor<1x2x24x16xbf16>) -> tensor<24x1x2x16xbf16>
  %r = kiln.reshape %o1 : tensor<24x1x2x16xbf16> to tensor<24x32xbf16>
  return %r : tensor<24x32xbf16>
}
