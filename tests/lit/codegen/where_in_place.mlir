// BERT's where(row fully masked, 0, attention) after the value it keeps dies: run in place
// over that value's bytes (the result shares its buffer), a warp a row, writing only the rows
// whose flag is set. The same where beside another reader of the value computes every element.
// RUN: rm -rf %t && mkdir -p %t
// RUN: kiln compile %s -o %t/m.kiln --quiet
// RUN: kiln inspect %t/m.kiln | FileCheck %s

// The first where's result is the first softmax's bytes (same offset), and its kernel reads
// the flags alone.
// CHECK: buffer {{[0-9]+}} "kiln.softmax" space=arena offset=[[OFF:[0-9]+]] bytes=1024
// CHECK: buffer {{[0-9]+}} "kiln.where" space=arena offset=[[OFF]] bytes=1024
// CHECK: op="kiln.where" {{.*}} function="{{k[0-9]+}}_where_in_place" grid=[1,1,1] block=[256,1,1] {{.*}} args=[c:bool[4,1],kiln.where:f32[4,64]]
// The second where keeps a value the function also returns: a kernel of its own computes it.
// CHECK: op="kiln.where" {{.*}} function="{{k[0-9]+}}_where" {{.*}} args=[c:bool[4,1],kiln.softmax:f32[4,64],kiln.where:f32[4,64]]
func.func @main(%x: tensor<4x64xf32> {kiln.name = "x"}, %c: tensor<4x1xi1> {kiln.name = "c"})
    -> (tensor<4x64xf32> {kiln.name = "masked"}, tensor<4x64xf32> {kiln.name = "z"}, tensor<4x64xf32> {kiln.name = "y"}) {
  %zero = kiln.constant dense<0.0> : tensor<f32>
  %r = kiln.softmax %x {axis = 1 : i64} : tensor<4x64xf32>
  %m = kiln.where %c, %zero, %r : (tensor<4x1xi1>, tensor<f32>, tensor<4x64xf32>) -> tensor<4x64xf32>
  %y = kiln.softmax %x {axis = 0 : i64} : tensor<4x64xf32>
  %z = kiln.where %c, %zero, %y : (tensor<4x1xi1>, tensor<f32>, tensor<4x64xf32>) -> tensor<4x64xf32>
  return %m, %z, %y : tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>
}
