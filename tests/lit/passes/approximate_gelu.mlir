// RUN: kiln-opt %s -kiln-form-fusion-groups="approximate-gelu" -split-input-file --verify-diagnostics | FileCheck %s
// RUN: kiln-opt %s -kiln-form-fusion-groups -split-input-file | FileCheck %s --check-prefix=EXACT

// A bf16 linear layer with bias and the exporters' erf GELU, x * (1 + erf(x / sqrt 2)) * 0.5:
// with approximate-gelu the chain becomes the tanh GELU of the cuBLASLt epilogue, one gemm
// group; without it the erf chain is its own elementwise group.
// CHECK-LABEL: func.func @linear_gelu
// CHECK: kiln.fusion_group "gemm"
// CHECK: kiln.matmul
// CHECK: kiln.add
// CHECK: kiln.gelu {{.*}} {approximate = "tanh"} : tensor<4x8xf32>
// CHECK-NOT: kiln.erf
// EXACT-LABEL: func.func @linear_gelu
// EXACT: kiln.fusion_group "gemm"
// EXACT: kiln.fusion_group "elementwise"
// EXACT: kiln.erf
// expected-remark @below {{1 erf GELUs after bf16 linear layers run as the tanh approximation in the cuBLASLt epilogue}}
func.func @linear_gelu(%x: tensor<4x16xbf16>) -> tensor<4x8xbf16> {
  %w = kiln.constant dense<0.5> : tensor<16x8xbf16>
  %b = kiln.constant dense<0.25> : tensor<8xbf16>
  %half = kiln.constant dense<0.5> : tensor<bf16>
  %one = kiln.constant dense<1.0> : tensor<bf16>
  %sqrt2 = kiln.constant dense<1.414> : tensor<bf16>
  %m = kiln.matmul %x, %w : (tensor<4x16xbf16>, tensor<16x8xbf16>) -> tensor<4x8xbf16>
  %y = kiln.add %b, %m : (tensor<8xbf16>, tensor<4x8xbf16>) -> tensor<4x8xbf16>
  %d = kiln.div %y, %sqrt2 : (tensor<4x8xbf16>, tensor<bf16>) -> tensor<4x8xbf16>
  %e = kiln.erf %d : tensor<4x8xbf16>
  %a = kiln.add %e, %one : (tensor<4x8xbf16>, tensor<bf16>) -> tensor<4x8xbf16>
  %p = kiln.mul %y, %a : (tensor<4x8xbf16>, tensor<4x8xbf16>) -> tensor<4x8xbf16>
  %g = kiln.mul %p, %half : (tensor<4x8xbf16>, tensor<bf16>) -> tensor<4x8xbf16>
  return %g : tensor<4x8xbf16>
}

// -----

// The other association, (x * 0.5) * (1 + erf(x * (1/sqrt 2))), with no bias: also matched.
// CHECK-LABEL: func.func @half_first
// CHECK: kiln.fusion_group "gemm"
// CHECK: kiln.gelu {{.*}} {approximate = "tanh"}
// expected-remark @below {{1 erf GELUs after bf16 linear layers}}
func.func @half_first(%x: tensor<4x16xbf16>) -> tensor<4x8xbf16> {
  %w = kiln.constant dense<0.5> : tensor<16x8xbf16>
  %half = kiln.constant dense<0.5> : tensor<bf16>
  %one = kiln.constant dense<1.0> : tensor<bf16>
  %rsqrt2 = kiln.constant dense<0.7071> : tensor<bf16>
  %y = kiln.matmul %x, %w : (tensor<4x16xbf16>, tensor<16x8xbf16>) -> tensor<4x8xbf16>
  %h = kiln.mul %half, %y : (tensor<bf16>, tensor<4x8xbf16>) -> tensor<4x8xbf16>
  %d = kiln.mul %y, %rsqrt2 : (tensor<4x8xbf16>, tensor<bf16>) -> tensor<4x8xbf16>
  %e = kiln.erf %d : tensor<4x8xbf16>
  %a = kiln.add %one, %e : (tensor<bf16>, tensor<4x8xbf16>) -> tensor<4x8xbf16>
  %g = kiln.mul %h, %a : (tensor<4x8xbf16>, tensor<4x8xbf16>) -> tensor<4x8xbf16>
  return %g : tensor<4x8xbf16>
}

// -----

// Not a GELU (the half is 0.25), an f32 linear layer (kept fp32 by the user's policy: erf stays
// exact), and a GELU whose input is also a result: none is approximated.
// CHECK-LABEL: func.func @not_approximated
// CHECK-NOT: kiln.gelu
// expected-remark @below {{1 linear layers keep the op after their cuBLASLt epilogue as a separate step: its erf GELU}}
func.func @not_approximated(%x: tensor<4x16xbf16>, %xf: tensor<4x16xf32>) -> (tensor<4x8xbf16>, tensor<4x8xf32>, tensor<4x8xbf16>, tensor<4x8xbf16>) {
  %w = kiln.constant dense<0.5> : tensor<16x8xbf16>
  %wf = kiln.constant dense<0.5> : tensor<16x8xf32>
  %quarter = kiln.constant dense<0.25> : tensor<bf16>
  %half = kiln.constant dense<0.5> : tensor<bf16>
  %halff = kiln.constant dense<0.5> : tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<bf16>
  %onef = kiln.constant dense<1.0> : tensor<f32>
  %sqrt2 = kiln.constant dense<1.414> : tensor<bf16>
  %sqrt2f = kiln.constant dense<1.4142135> : tensor<f32>
  %y = kiln.matmul %x, %w : (tensor<4x16xbf16>, tensor<16x8xbf16>) -> tensor<4x8xbf16>
  %d = kiln.div %y, %sqrt2 : (tensor<4x8xbf16>, tensor<bf16>) -> tensor<4x8xbf16>
  %e = kiln.erf %d : tensor<4x8xbf16>
  %a = kiln.add %e, %one : (tensor<4x8xbf16>, tensor<bf16>) -> tensor<4x8xbf16>
  %p = kiln.mul %y, %a : (tensor<4x8xbf16>, tensor<4x8xbf16>) -> tensor<4x8xbf16>
  %g = kiln.mul %p, %quarter : (tensor<4x8xbf16>, tensor<bf16>) -> tensor<4x8xbf16>
  %yf = kiln.matmul %xf, %wf : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %df = kiln.div %yf, %sqrt2f : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %ef = kiln.erf %df : tensor<4x8xf32>
  %af = kiln.add %ef, %onef : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %pf = kiln.mul %yf, %af : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %gf = kiln.mul %pf, %halff : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %y2 = kiln.matmul %x, %w : (tensor<4x16xbf16>, tensor<16x8xbf16>) -> tensor<4x8xbf16>
  %d2 = kiln.div %y2, %sqrt2 : (tensor<4x8xbf16>, tensor<bf16>) -> tensor<4x8xbf16>
  %e2 = kiln.erf %d2 : tensor<4x8xbf16>
  %a2 = kiln.add %e2, %one : (tensor<4x8xbf16>, tensor<bf16>) -> tensor<4x8xbf16>
  %p2 = kiln.mul %y2, %a2 : (tensor<4x8xbf16>, tensor<4x8xbf16>) -> tensor<4x8xbf16>
  %g2 = kiln.mul %p2, %half : (tensor<4x8xbf16>, tensor<bf16>) -> tensor<4x8xbf16>
  return %g, %gf, %g2, %y2 : tensor<4x8xbf16>, tensor<4x8xf32>, tensor<4x8xbf16>, tensor<4x8xbf16>
}
