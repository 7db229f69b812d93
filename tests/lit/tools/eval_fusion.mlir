// The interpreter is the oracle for fusion: in fp32 a fused module gives exactly what the
// unfused one gives (same ops, same types inside the group). With the chain in bf16 (forced from
// Exp on), the group keeps its intermediates in f32 and rounds once, where the unfused module
// rounds after every op: against float64 on inputs exact in bf16 (multiples of 1/64 up to 3),
// the fused error is smaller.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np; np.save('%t/x.npy', (np.arange(4099) %% 385 - 192).astype(np.float32) / 64)"
// RUN: kiln eval %s --input x=%t/x.npy --output-dir %t/fused --quiet
// RUN: kiln eval %s --input x=%t/x.npy --output-dir %t/unfused --quiet --no-fusion
// RUN: %python -c "import numpy as np; a, b = np.load('%t/fused/y.npy'), np.load('%t/unfused/y.npy'); assert a.tobytes() == b.tobytes(), abs(a - b).max()"
// RUN: kiln eval %s --input x=%t/x.npy --output-dir %t/fused16 --quiet --precision bf16 --force-precision Exp=bf16
// RUN: kiln eval %s --input x=%t/x.npy --output-dir %t/unfused16 --quiet --precision bf16 --force-precision Exp=bf16 --no-fusion
// RUN: %python -c "import numpy as np; x = np.load('%t/x.npy').astype(np.float64); t = 1 / (1 + np.exp(-(np.exp(x) + 1) * 0.5)) - 0.5; f, u = (abs(np.load('%t/' + d + '/y.npy') - t).max() for d in ('fused16', 'unfused16')); print(f, u); assert f < u, (f, u)"
// RUN: kiln import %s --precision bf16 --force-precision Exp=bf16 | FileCheck %s

// CHECK: kiln.fusion_group "elementwise"
// CHECK: kiln.exp {{.*}} : tensor<4099xf32>
func.func @main(%x: tensor<4099xf32> {kiln.name = "x"}) -> (tensor<4099xf32> {kiln.name = "y"}) {
  %one = kiln.constant dense<1.0> : tensor<f32>
  %h = kiln.constant dense<0.5> : tensor<f32>
  %e = kiln.exp %x : tensor<4099xf32> loc(fused<"Exp">["exp"("m.onnx":1:0)])
  %a = kiln.add %e, %one : (tensor<4099xf32>, tensor<f32>) -> tensor<4099xf32>
  %m = kiln.mul %a, %h : (tensor<4099xf32>, tensor<f32>) -> tensor<4099xf32>
  %s = kiln.sigmoid %m : tensor<4099xf32>
  %y = kiln.sub %s, %h : (tensor<4099xf32>, tensor<f32>) -> tensor<4099xf32>
  return %y : tensor<4099xf32>
}
