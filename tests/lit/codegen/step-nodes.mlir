// Every plan step lists the ONNX nodes it covers (`nodes=[...]`, read from the op's location):
// a fused step lists each node of its group once, in the order of the group's location (the
// node that names the step first); a step of one op lists that op's node; a copy for an output
// covers none. Without fusion every step covers one node.
// RUN: rm -rf %t && mkdir -p %t
// RUN: kiln compile %s -o %t/a.kiln --quiet
// RUN: kiln inspect %t/a.kiln | FileCheck %s
// RUN: kiln inspect --json %t/a.kiln | %python -c "import json, sys; print(' '.join(','.join(s['nodes']) or '-' for s in json.load(sys.stdin)['steps']))" | FileCheck %s --check-prefix=JSON
// RUN: kiln compile %s -o %t/nofusion.kiln --quiet --no-fusion
// RUN: kiln inspect %t/nofusion.kiln | FileCheck %s --check-prefix=NOFUSION

// Exp, Add and Sigmoid fuse into one elementwise group, named after Sigmoid (its result).
// CHECK: step 0 "sig" op="kiln.fusion_group" nodes=["sig","exp","add"] kernel
// The ONNX Gemm is a matmul and a bias add (both node "fc"), fused with the Relu after it into
// one cuBLASLt step named after the matmul: "fc" is listed once.
// CHECK: step 1 "fc" op="kiln.fusion_group" nodes=["fc","fc_relu"] gemm {{.*}} activation=relu
// CHECK: step 2 "x_again" op="copy" nodes=[] copy
// CHECK-NOT: step 3

// JSON: {{^}}sig,exp,add fc,fc_relu -{{$}}

// NOFUSION: step 0 "exp" op="kiln.exp" nodes=["exp"] kernel
// NOFUSION: step 1 "add" op="kiln.add" nodes=["add"] kernel
// NOFUSION: step 2 "sig" op="kiln.sigmoid" nodes=["sig"] kernel
// NOFUSION: step 3 "fc" op="kiln.matmul" nodes=["fc"] gemm
// NOFUSION: step 4 "fc" op="kiln.add" nodes=["fc"] kernel
// NOFUSION: step 5 "fc_relu" op="kiln.relu" nodes=["fc_relu"] kernel
// NOFUSION: step 6 "x_again" op="copy" nodes=[] copy

func.func @main(%x: tensor<4x8xf32> {kiln.name = "x"})
    -> (tensor<4x8xf32> {kiln.name = "y"}, tensor<4x16xf32> {kiln.name = "z"},
        tensor<4x8xf32> {kiln.name = "x_again"}) {
  %one = kiln.constant dense<1.0> : tensor<f32>
  %e = kiln.exp %x : tensor<4x8xf32> loc(fused<"Exp">["exp"("m.onnx":1:0)])
  %a = kiln.add %e, %one : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32> loc(fused<"Add">["add"("m.onnx":2:0)])
  %s = kiln.sigmoid %a : tensor<4x8xf32> loc(fused<"Sigmoid">["sig"("m.onnx":3:0)])
  %w = kiln.constant dense<0.5> : tensor<8x16xf32>
  %b = kiln.constant dense<0.25> : tensor<16xf32>
  %mm = kiln.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32> loc(fused<"Gemm">["fc"("m.onnx":4:0)])
  %fc = kiln.add %mm, %b : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32> loc(fused<"Gemm">["fc"("m.onnx":4:0)])
  %r = kiln.relu %fc : tensor<4x16xf32> loc(fused<"Relu">["fc_relu"("m.onnx":5:0)])
  return %s, %r, %x : tensor<4x8xf32>, tensor<4x16xf32>, tensor<4x8xf32>
}
