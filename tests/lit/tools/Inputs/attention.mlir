// Attention as torch's SDPA export writes it (BERT-style): [b, s, h*d] projections split into
// heads, Q and Kᵀ each scaled by sqrt(1/sqrt(d)), an additive mask Where(mask, 0, -inf) from an
// i64 attention mask, Softmax, Where(IsNaN(p), 0, p) for fully masked rows, the head merge.
// The model casts its inputs to bf16 itself (as a bf16 export would), so the head split runs
// on bf16 tensors; `--precision bf16` casts the mask and constants to bf16 and fuses.
func.func @main(%x: tensor<1x32x32xf32> {kiln.name = "x"}, %y: tensor<1x32x32xf32> {kiln.name = "y"},
                %z: tensor<1x32x32xf32> {kiln.name = "z"}, %m: tensor<1x32xi64> {kiln.name = "m"})
    -> (tensor<1x32x32xf32> {kiln.name = "o"}) {
  %c = kiln.constant dense<5.000000e-01> : tensor<bf16>
  %zerob = kiln.constant dense<0.000000e+00> : tensor<1xbf16>
  %zero = kiln.constant dense<0.000000e+00> : tensor<1xf32>
  %ninf = kiln.constant dense<0xFF800000> : tensor<1xf32>
  %b = kiln.cast %m : tensor<1x32xi64> to tensor<1x32xi1>
  %b4 = kiln.reshape %b : tensor<1x32xi1> to tensor<1x1x1x32xi1>
  %mask = kiln.where %b4, %zero, %ninf : (tensor<1x1x1x32xi1>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x1x32xf32>
  %xb = kiln.cast %x : tensor<1x32x32xf32> to tensor<1x32x32xbf16>
  %yb = kiln.cast %y : tensor<1x32x32xf32> to tensor<1x32x32xbf16>
  %zb = kiln.cast %z : tensor<1x32x32xf32> to tensor<1x32x32xbf16>
  %q0 = kiln.reshape %xb : tensor<1x32x32xbf16> to tensor<1x32x2x16xbf16>
  %q = kiln.transpose %q0 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x32x2x16xbf16>) -> tensor<1x2x32x16xbf16>
  %k0 = kiln.reshape %yb : tensor<1x32x32xbf16> to tensor<1x32x2x16xbf16>
  %kt = kiln.transpose %k0 {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x32x2x16xbf16>) -> tensor<1x2x16x32xbf16>
  %v0 = kiln.reshape %zb : tensor<1x32x32xbf16> to tensor<1x32x2x16xbf16>
  %v = kiln.transpose %v0 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x32x2x16xbf16>) -> tensor<1x2x32x16xbf16>
  %qs = kiln.mul %q, %c : (tensor<1x2x32x16xbf16>, tensor<bf16>) -> tensor<1x2x32x16xbf16>
  %ks = kiln.mul %kt, %c : (tensor<1x2x16x32xbf16>, tensor<bf16>) -> tensor<1x2x16x32xbf16>
  %s = kiln.matmul %qs, %ks : (tensor<1x2x32x16xbf16>, tensor<1x2x16x32xbf16>) -> tensor<1x2x32x32xbf16> loc(fused<"MatMul">["qk"("m.onnx":1:0)])
  %maskb = kiln.cast %mask : tensor<1x1x1x32xf32> to tensor<1x1x1x32xbf16>
  %a = kiln.add %s, %maskb : (tensor<1x2x32x32xbf16>, tensor<1x1x1x32xbf16>) -> tensor<1x2x32x32xbf16>
  %p = kiln.softmax %a {axis = 3 : i64} : tensor<1x2x32x32xbf16> loc(fused<"Softmax">["sm"("m.onnx":2:0)])
  %n = kiln.is_nan %p : tensor<1x2x32x32xbf16> -> tensor<1x2x32x32xi1>
  %w = kiln.where %n, %zerob, %p : (tensor<1x2x32x32xi1>, tensor<1xbf16>, tensor<1x2x32x32xbf16>) -> tensor<1x2x32x32xbf16>
  %o = kiln.matmul %w, %v : (tensor<1x2x32x32xbf16>, tensor<1x2x32x16xbf16>) -> tensor<1x2x32x16xbf16> loc(fused<"MatMul">["pv"("m.onnx":3:0)])
  %ot = kiln.transpose %o {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x2x32x16xbf16>) -> tensor<1x32x2x16xbf16>
  %r = kiln.reshape %ot : tensor<1x32x2x16xbf16> to tensor<1x32x32xbf16>
  %rf = kiln.cast %r : tensor<1x32x32xbf16> to tensor<1x32x32xf32>
  return %rf : tensor<1x32x32xf32>
}
