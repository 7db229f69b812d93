// A bf16 plan: conv and gemm run on bf16 operands (weights stored as bf16, cast at compile
// time), ReLU follows, the f32 graph input and output are cast at the edges; two compiles give
// the same bytes. Per-op overrides reach the plan: conv2 forced to fp16 runs on f16 operands,
// and in a tf32 plan the gemm forced to fp32 runs in strict IEEE fp32 while conv1 uses TF32.
// Channels first (--layout nchw), so the steps are the ops as written.
// RUN: rm -rf %t && mkdir -p %t
// RUN: kiln compile %s -o %t/a.kiln --precision bf16 --layout nchw --quiet
// RUN: kiln compile %s -o %t/b.kiln --precision bf16 --layout nchw --quiet
// RUN: cmp %t/a.kiln %t/b.kiln
// RUN: kiln inspect %t/a.kiln | FileCheck %s
// RUN: kiln compile %s -o %t/c.kiln --precision bf16 --layout nchw --force-precision conv2=fp16 --quiet
// RUN: kiln inspect %t/c.kiln | FileCheck %s --check-prefix=FORCED
// RUN: kiln compile %s -o %t/d.kiln --precision tf32 --force-precision Gemm=fp32 --quiet
// RUN: kiln inspect %t/d.kiln | FileCheck %s --check-prefix=STRICT

// CHECK: precision="bf16"
// CHECK: input 0 "x" type=f32[1,2,6,6]
// CHECK: output 0 "y" type=f32[1,4]
// CHECK: buffer {{[0-9]+}} "conv1" space=weights {{.*}} type=bf16[3,2,3,3]
// CHECK: step 0 "conv1" op="kiln.cast" nodes=["conv1"] kernel {{.*}} args=[x:f32[1,2,6,6],conv1:bf16[1,2,6,6]]
// CHECK: "conv1" op="kiln.conv" nodes=["conv1"] conv {{.*}} x=conv1:bf16[1,2,6,6] w=conv1:bf16[3,2,3,3] y=conv1:bf16[1,3,6,6]
// CHECK: "relu" op="kiln.relu" nodes=["relu"] kernel {{.*}} args=[conv1:bf16[1,3,6,6],relu:bf16[1,3,6,6]]
// CHECK: "conv2" op="kiln.conv" nodes=["conv2"] conv {{.*}} y=conv2:bf16[1,3,6,6]
// CHECK: "fc" op="kiln.matmul" nodes=["fc"] gemm {{.*}} a={{.*}}:bf16[1,108] b=fc:bf16[108,4] d=fc:bf16[1,4]
// CHECK: "fc" op="kiln.cast" nodes=["fc"] kernel {{.*}} args=[fc:bf16[1,4],{{.*}}:f32[1,4]]

// FORCED: "conv1" op="kiln.conv" nodes=["conv1"] conv {{.*}} y=conv1:bf16[1,3,6,6]
// The cast to f16 that conv2 reads fuses with the ReLU: that step covers both nodes.
// FORCED: "relu" op="kiln.fusion_group" nodes=["relu","conv2"] kernel {{.*}} args=[conv1:bf16[1,3,6,6],relu:f16[1,3,6,6]]
// FORCED: "conv2" op="kiln.conv" nodes=["conv2"] conv {{.*}} x=relu:f16[1,3,6,6] w=conv2:f16[3,3,3,3] y=conv2:f16[1,3,6,6]

// STRICT: "conv1" op="kiln.conv" nodes=["conv1"] conv math=tf32 {{.*}} x=x:f32[1,2,6,6]
// STRICT: "fc" op="kiln.matmul" nodes=["fc"] gemm math=strict-f32 {{.*}} a={{.*}}:f32[1,108]

func.func @main(%x: tensor<1x2x6x6xf32> {kiln.name = "x"}) -> (tensor<1x4xf32> {kiln.name = "y"}) {
  %w1 = kiln.constant dense<0.5> : tensor<3x2x3x3xf32>
  %c1 = kiln.conv %x, %w1 {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x6x6xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x6x6xf32> loc(fused<"Conv">["conv1"("m.onnx":1:0)])
  %r = kiln.relu %c1 : tensor<1x3x6x6xf32> loc(fused<"Relu">["relu"("m.onnx":2:0)])
  %w2 = kiln.constant dense<0.25> : tensor<3x3x3x3xf32>
  %c2 = kiln.conv %r, %w2 {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x6x6xf32>, tensor<3x3x3x3xf32>) -> tensor<1x3x6x6xf32> loc(fused<"Conv">["conv2"("m.onnx":3:0)])
  %f = kiln.reshape %c2 : tensor<1x3x6x6xf32> to tensor<1x108xf32> loc(fused<"Flatten">["flat"("m.onnx":4:0)])
  %fw = kiln.constant dense<0.125> : tensor<4x108xf32>
  %y = kiln.gemm %f, %fw {trans_b = true} : (tensor<1x108xf32>, tensor<4x108xf32>) -> tensor<1x4xf32> loc(fused<"Gemm">["fc"("m.onnx":5:0)])
  return %y : tensor<1x4xf32>
}
