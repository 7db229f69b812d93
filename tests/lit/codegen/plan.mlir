// `kiln compile` on kiln MLIR, checked through `kiln inspect`: library steps, generated
// kernels, views, in-place results, copies for outputs that have no arena bytes of their own.
// RUN: rm -rf %t && mkdir -p %t
// RUN: kiln compile %s -o %t/a.kiln --quiet
// RUN: kiln inspect %t/a.kiln | FileCheck %s
// Same module, same options: the same bytes.
// RUN: kiln compile %s -o %t/b.kiln --quiet && cmp %t/a.kiln %t/b.kiln
// RUN: kiln compile %s -o %t/nofusion.kiln --quiet --no-fusion
// RUN: kiln inspect %t/nofusion.kiln | FileCheck %s --check-prefix=NOFUSION
// RUN: kiln compile %s -o %t/tf32.kiln --quiet --precision tf32
// RUN: kiln inspect %t/tf32.kiln | FileCheck %s --check-prefix=TF32
// RUN: kiln inspect --json %t/a.kiln | %python -c "import json, sys; p = json.load(sys.stdin); print(len(p['steps']))" | FileCheck %s --check-prefix=JSON
// A flipped byte is caught before anything is trusted.
// RUN: %python -c "import sys; b = bytearray(open(sys.argv[1], 'rb').read()); b[200] ^= 4; open(sys.argv[2], 'wb').write(b)" %t/a.kiln %t/bad.kiln
// RUN: not kiln inspect %t/bad.kiln 2>&1 | FileCheck %s --check-prefix=CORRUPT
// RUN: not kiln compile %s 2>&1 | FileCheck %s --check-prefix=USAGE

// CHECK: precision="fp32"
// CHECK: input 0 "x" type=f32[1,2,5,5]
// CHECK: output 0 "y" type=f32[1,4]
// CHECK: output 1 "same" type=f32[1,2,5,5]
// CHECK: output 2 "table" type=f32[4]
// Every buffer has its tensor's type. relu runs in place on the conv result it consumes last,
// and the reshape is a view of the same bytes with the reshape's own shape.
// CHECK: buffer {{[0-9]+}} "conv" space=arena offset=[[CONV:[0-9]+]] bytes=108 type=f32[1,3,3,3]
// CHECK: buffer {{[0-9]+}} "relu" space=arena offset=[[CONV]] bytes=108 type=f32[1,3,3,3]
// CHECK: buffer {{[0-9]+}} "{{.*}}" space=arena offset=[[CONV]] bytes=108 type=f32[1,27]
// Asymmetric padding: an explicit pad kernel, then a conv with no padding; both cover the
// conv's node. Copies for outputs cover none.
// CHECK: "conv/pad" op="kiln.pad" nodes=["conv"] kernel {{.*}} args=[x:f32[1,2,5,5],conv/padded:f32[1,2,6,6]]
// CHECK: "conv" op="kiln.conv" nodes=["conv"] conv math=strict-f32 transpose=0 xShape=[1,2,6,6] {{.*}} pads=[0,0] {{.*}} x=conv/padded:f32[1,2,6,6] w={{.*}}:f32[3,2,2,2] y=conv:f32[1,3,3,3] bias=-
// CHECK: "relu" op="kiln.relu" nodes=["relu"] kernel {{.*}} args=[conv:f32[1,3,3,3],relu:f32[1,3,3,3]]
// A bias row with beta 1 becomes cuBLASLt's bias epilogue.
// CHECK: "fc" op="kiln.fusion_group" nodes=["fc"] gemm {{.*}} transB=0 {{.*}} a={{.*}}:f32[1,27] b={{.*}}:f32[27,4] d=fc:f32[1,4] c=- bias={{.*}}:f32[4]
// NOFUSION: "fc" op="kiln.gemm" nodes=["fc"] gemm {{.*}} transB=1 {{.*}} a={{.*}}:f32[1,27] b={{.*}}:f32[4,27] d=fc:f32[1,4] c=- bias={{.*}}:f32[4]
// CHECK: "same" op="copy" nodes=[] copy src=x:f32[1,2,5,5] dst=same:f32[1,2,5,5]
// CHECK: "table" op="copy" nodes=[] copy
// CHECK: image 0 "kernels" smVersion=90

// TF32: precision="tf32"
// TF32: conv math=tf32
// TF32: gemm math=tf32

// JSON: 6

// CORRUPT: kiln inspect: error: {{.*}}checksum
// USAGE: no output given

func.func @main(%x: tensor<1x2x5x5xf32> {kiln.name = "x"})
    -> (tensor<1x4xf32> {kiln.name = "y"}, tensor<1x2x5x5xf32> {kiln.name = "same"},
        tensor<4xf32> {kiln.name = "table"}) {
  %w = kiln.constant dense<0.5> : tensor<3x2x2x2xf32>
  %conv = kiln.conv %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 1, 1>} : (tensor<1x2x5x5xf32>, tensor<3x2x2x2xf32>) -> tensor<1x3x3x3xf32> loc("conv")
  %relu = kiln.relu %conv : tensor<1x3x3x3xf32> loc("relu")
  %flat = kiln.reshape %relu : tensor<1x3x3x3xf32> to tensor<1x27xf32>
  %fw = kiln.constant dense<0.25> : tensor<4x27xf32>
  %fb = kiln.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %y = kiln.gemm %flat, %fw, %fb {trans_b = true} : (tensor<1x27xf32>, tensor<4x27xf32>, tensor<4xf32>) -> tensor<1x4xf32> loc("fc")
  return %y, %x, %fb : tensor<1x4xf32>, tensor<1x2x5x5xf32>, tensor<4xf32>
}
