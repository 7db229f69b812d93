// Every plan buffer records its tensor's element type and shape, and `kiln inspect` shows each
// step operand with its own type: library steps take their operand types from their buffers.
// RUN: rm -rf %t && mkdir -p %t
// RUN: kiln compile %s -o %t/a.kiln --quiet
// RUN: kiln inspect %t/a.kiln | FileCheck %s
// RUN: kiln inspect --json %t/a.kiln | FileCheck %s --check-prefix=JSON
// Integer matrix products have no cuBLASLt step: a clear error, not an invalid plan.
// RUN: not kiln compile %S/Inputs/integer-matmul.mlir -o %t/i.kiln 2>&1 | FileCheck %s --check-prefix=INT

// CHECK: input 0 "x" type=bf16[2,8] buffer=x:bf16[2,8]
// CHECK: buffer {{[0-9]+}} "x" space=arena offset={{[0-9]+}} bytes=32 type=bf16[2,8]
// CHECK: "mm" op="kiln.matmul" nodes=["mm"] gemm {{.*}} a=x:bf16[2,8] b={{.*}}:bf16[8,5] d=mm:bf16[2,5] c=- bias=-
// CHECK: "up" op="kiln.cast" nodes=["up"] kernel {{.*}} args=[mm:bf16[2,5],up:f32[2,5]]

// JSON: "a": {"index": 0, "name": "x", "dtype": "bf16", "shape": [2,8]}

// INT: kiln.matmul 'mm': GPU matrix products take f32, f16, bf16 or f8e4m3fn operands of one type (cuBLASLt), not i32 and i32; this one runs in the interpreter only

func.func @main(%x: tensor<2x8xbf16> {kiln.name = "x"}) -> (tensor<2x5xf32> {kiln.name = "y"}) {
  %w = kiln.constant dense<0.5> : tensor<8x5xbf16>
  %mm = kiln.matmul %x, %w : (tensor<2x8xbf16>, tensor<8x5xbf16>) -> tensor<2x5xbf16> loc("mm")
  %up = kiln.cast %mm : tensor<2x5xbf16> to tensor<2x5xf32> loc("up")
  return %up : tensor<2x5xf32>
}
