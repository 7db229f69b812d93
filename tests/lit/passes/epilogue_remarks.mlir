// RUN: kiln-opt %s -kiln-form-fusion-groups="approximate-gelu" -split-input-file --verify-diagnostics | FileCheck %s

// No silent loss: when the op after a linear layer could have joined its cuBLASLt epilogue but
// stays a step of its own, one remark per reason names the layers.

// The product is also a result of the function: the bias add cannot take it over.
// CHECK-LABEL: func.func @product_used_twice
// CHECK-NOT: kiln.fusion_group "gemm"
// expected-remark @below {{1 linear layers keep the op after their cuBLASLt epilogue as a separate step: the product is also read elsewhere, so no epilogue can take it over: kiln.matmul}}
func.func @product_used_twice(%x: tensor<4x16xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %w = kiln.constant dense<0.5> : tensor<16x8xf32>
  %b = kiln.constant dense<0.25> : tensor<8xf32>
  %m = kiln.matmul %x, %w : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %a = kiln.add %m, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %a, %m : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// An f32 linear layer with an exact GELU (ONNX Gelu): erf stays, outside the epilogue.
// CHECK-LABEL: func.func @exact_gelu_f32
// CHECK: kiln.fusion_group "gemm"
// CHECK: kiln.gelu {{.*}} : tensor<4x8xf32>
// CHECK-NOT: tanh
// expected-remark @below {{its erf GELU: cuBLASLt's epilogue has only the tanh GELU, which only bf16 plans use}}
func.func @exact_gelu_f32(%x: tensor<4x16xf32>) -> tensor<4x8xf32> {
  %w = kiln.constant dense<0.5> : tensor<16x8xf32>
  %b = kiln.constant dense<0.25> : tensor<8xf32>
  %m = kiln.matmul %x, %w : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %a = kiln.add %m, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %g = kiln.gelu %a : tensor<4x8xf32>
  return %g : tensor<4x8xf32>
}

// -----

// In bf16 the exact ONNX Gelu after a linear layer takes the tanh form in the epilogue, as the
// exporters' erf chain does.
// CHECK-LABEL: func.func @exact_gelu_bf16
// CHECK: kiln.fusion_group "gemm"
// CHECK: kiln.gelu {{.*}} {approximate = "tanh"} : tensor<4x8xf32>
// CHECK: kiln.yield
// expected-remark @below {{1 erf GELUs after bf16 linear layers run as the tanh approximation}}
func.func @exact_gelu_bf16(%x: tensor<4x16xbf16>) -> tensor<4x8xbf16> {
  %w = kiln.constant dense<0.5> : tensor<16x8xbf16>
  %m = kiln.matmul %x, %w : (tensor<4x16xbf16>, tensor<16x8xbf16>) -> tensor<4x8xbf16>
  %g = kiln.gelu %m : tensor<4x8xbf16>
  return %g : tensor<4x8xbf16>
}
