// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// The generic form (properties spelled out) parses back to the same ops.
// RUN: kiln-opt %s -mlir-print-op-generic | kiln-opt | FileCheck %s

// Data movement: reshape, transpose, concat, split, slice, gather, expand, tile, pad, range,
// trilu, topk, depth/space rearrangements and resize.

// CHECK-LABEL: func.func @reshape
func.func @reshape(%x: tensor<1x2048x1x1xf32>, %m: tensor<2x3xi1>)
    -> (tensor<1x2048xf32>, tensor<6xi1>, tensor<1x2x1x3xi1>) {
  // CHECK: kiln.reshape %{{.*}} : tensor<1x2048x1x1xf32> to tensor<1x2048xf32>
  %0 = kiln.reshape %x : tensor<1x2048x1x1xf32> to tensor<1x2048xf32>
  // CHECK: kiln.reshape %{{.*}} : tensor<2x3xi1> to tensor<6xi1>
  %1 = kiln.reshape %m : tensor<2x3xi1> to tensor<6xi1>
  // CHECK: kiln.reshape %{{.*}} : tensor<2x3xi1> to tensor<1x2x1x3xi1>
  %2 = kiln.reshape %m : tensor<2x3xi1> to tensor<1x2x1x3xi1>
  return %0, %1, %2 : tensor<1x2048xf32>, tensor<6xi1>, tensor<1x2x1x3xi1>
}

// CHECK-LABEL: func.func @transpose
func.func @transpose(%x: tensor<1x128x12x64xf16>) -> tensor<1x12x64x128xf16> {
  // CHECK: kiln.transpose %{{.*}} {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x128x12x64xf16>) -> tensor<1x12x64x128xf16>
  %0 = kiln.transpose %x {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x128x12x64xf16>) -> tensor<1x12x64x128xf16>
  return %0 : tensor<1x12x64x128xf16>
}

// CHECK-LABEL: func.func @concat_split
func.func @concat_split(%a: tensor<1x64x56x56xf32>, %b: tensor<1x32x56x56xf32>,
                        %qkv: tensor<1x128x2304xbf16>)
    -> (tensor<1x96x56x56xf32>, tensor<1x128x768xbf16>, tensor<1x128x768xbf16>,
        tensor<1x128x768xbf16>, tensor<1x128x2048xbf16>) {
  // CHECK: kiln.concat %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<1x64x56x56xf32>, tensor<1x32x56x56xf32>) -> tensor<1x96x56x56xf32>
  %0 = kiln.concat %a, %b {axis = 1 : i64}
      : (tensor<1x64x56x56xf32>, tensor<1x32x56x56xf32>) -> tensor<1x96x56x56xf32>
  // CHECK: kiln.split %{{.*}} {axis = 2 : i64} : (tensor<1x128x2304xbf16>) -> (tensor<1x128x768xbf16>, tensor<1x128x768xbf16>, tensor<1x128x768xbf16>)
  %1:3 = kiln.split %qkv {axis = 2 : i64}
      : (tensor<1x128x2304xbf16>) -> (tensor<1x128x768xbf16>, tensor<1x128x768xbf16>, tensor<1x128x768xbf16>)
  // Uneven split sizes.
  // CHECK: kiln.split %{{.*}} {axis = 2 : i64} : (tensor<1x128x2304xbf16>) -> (tensor<1x128x256xbf16>, tensor<1x128x2048xbf16>)
  %2:2 = kiln.split %qkv {axis = 2 : i64}
      : (tensor<1x128x2304xbf16>) -> (tensor<1x128x256xbf16>, tensor<1x128x2048xbf16>)
  return %0, %1#0, %1#1, %1#2, %2#1 : tensor<1x96x56x56xf32>, tensor<1x128x768xbf16>,
      tensor<1x128x768xbf16>, tensor<1x128x768xbf16>, tensor<1x128x2048xbf16>
}

// CHECK-LABEL: func.func @slice
func.func @slice(%x: tensor<1x128x768xf32>, %s: tensor<2xi64>, %e: tensor<2xi64>,
                 %ax: tensor<2xi64>, %st: tensor<2xi64>)
    -> (tensor<1x64x768xf32>, tensor<1x128x768xf32>, tensor<1x32x384xf32>) {
  %starts = kiln.constant dense<[0]> : tensor<1xi64>
  %ends = kiln.constant dense<[64]> : tensor<1xi64>
  %axes = kiln.constant dense<[1]> : tensor<1xi64>
  %steps = kiln.constant dense<[1]> : tensor<1xi64>
  // CHECK: kiln.slice %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<1x128x768xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x64x768xf32>
  %0 = kiln.slice %x, %starts, %ends, %axes, %steps
      : (tensor<1x128x768xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>)
      -> tensor<1x64x768xf32>
  // Reversal with i32 parameters: start -1, end "minus infinity", step -1.
  %rs = kiln.constant dense<[-1]> : tensor<1xi32>
  %re = kiln.constant dense<[-2147483648]> : tensor<1xi32>
  %ra = kiln.constant dense<[-2]> : tensor<1xi32>
  %rst = kiln.constant dense<[-1]> : tensor<1xi32>
  // CHECK: kiln.slice {{.*}} : (tensor<1x128x768xf32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<1x128x768xf32>
  %1 = kiln.slice %x, %rs, %re, %ra, %rst
      : (tensor<1x128x768xf32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>)
      -> tensor<1x128x768xf32>
  // Computed parameters: the result type is taken as declared.
  // CHECK: kiln.slice {{.*}} : (tensor<1x128x768xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<1x32x384xf32>
  %2 = kiln.slice %x, %s, %e, %ax, %st
      : (tensor<1x128x768xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>)
      -> tensor<1x32x384xf32>
  return %0, %1, %2 : tensor<1x64x768xf32>, tensor<1x128x768xf32>, tensor<1x32x384xf32>
}

// CHECK-LABEL: func.func @gather
func.func @gather(%emb: tensor<30522x768xf32>, %ids: tensor<1x128xi64>,
                  %x: tensor<4x10xi8>, %idx: tensor<4x3xi32>, %i: tensor<i64>)
    -> (tensor<1x128x768xf32>, tensor<4x3xi8>, tensor<4xi8>) {
  // CHECK: kiln.gather %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<30522x768xf32>, tensor<1x128xi64>) -> tensor<1x128x768xf32>
  %0 = kiln.gather %emb, %ids {axis = 0 : i64}
      : (tensor<30522x768xf32>, tensor<1x128xi64>) -> tensor<1x128x768xf32>
  // CHECK: kiln.gather_elements %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<4x10xi8>, tensor<4x3xi32>) -> tensor<4x3xi8>
  %1 = kiln.gather_elements %x, %idx {axis = 1 : i64}
      : (tensor<4x10xi8>, tensor<4x3xi32>) -> tensor<4x3xi8>
  // A rank-0 index drops the axis.
  // CHECK: kiln.gather %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<4x10xi8>, tensor<i64>) -> tensor<4xi8>
  %2 = kiln.gather %x, %i {axis = 1 : i64} : (tensor<4x10xi8>, tensor<i64>) -> tensor<4xi8>
  return %0, %1, %2 : tensor<1x128x768xf32>, tensor<4x3xi8>, tensor<4xi8>
}

// CHECK-LABEL: func.func @expand_tile
func.func @expand_tile(%x: tensor<1x1x128x128xi1>, %y: tensor<3x1xf32>, %t: tensor<2x3xui8>)
    -> (tensor<2x12x128x128xi1>, tensor<4x3x5xf32>, tensor<4x9xui8>) {
  // CHECK: kiln.expand %{{.*}} : tensor<1x1x128x128xi1> to tensor<2x12x128x128xi1>
  %0 = kiln.expand %x : tensor<1x1x128x128xi1> to tensor<2x12x128x128xi1>
  // CHECK: kiln.expand %{{.*}} : tensor<3x1xf32> to tensor<4x3x5xf32>
  %1 = kiln.expand %y : tensor<3x1xf32> to tensor<4x3x5xf32>
  // CHECK: kiln.tile %{{.*}} : tensor<2x3xui8> to tensor<4x9xui8>
  %2 = kiln.tile %t : tensor<2x3xui8> to tensor<4x9xui8>
  return %0, %1, %2 : tensor<2x12x128x128xi1>, tensor<4x3x5xf32>, tensor<4x9xui8>
}

// CHECK-LABEL: func.func @pad
func.func @pad(%x: tensor<1x3x224x224xf32>, %p: tensor<8xi64>, %v: tensor<f32>)
    -> (tensor<1x3x226x226xf32>, tensor<1x3x230x230xf32>, tensor<1x3x220x220xf32>) {
  %pads = kiln.constant dense<[0, 0, 1, 1, 0, 0, 1, 1]> : tensor<8xi64>
  // CHECK: kiln.pad %{{.*}}, %{{.*}}, %{{.*}} : (tensor<1x3x224x224xf32>, tensor<8xi64>, tensor<f32>) -> tensor<1x3x226x226xf32>
  %0 = kiln.pad %x, %pads, %v
      : (tensor<1x3x224x224xf32>, tensor<8xi64>, tensor<f32>) -> tensor<1x3x226x226xf32>
  // CHECK: kiln.pad %{{.*}}, %{{.*}}, %{{.*}} {mode = "reflect"} : (tensor<1x3x224x224xf32>, tensor<8xi64>, tensor<f32>) -> tensor<1x3x230x230xf32>
  %1 = kiln.pad %x, %p, %v {mode = "reflect"}
      : (tensor<1x3x224x224xf32>, tensor<8xi64>, tensor<f32>) -> tensor<1x3x230x230xf32>
  // Negative pads crop.
  %crop = kiln.constant dense<[0, 0, -2, -2, 0, 0, -2, -2]> : tensor<8xi64>
  // CHECK: kiln.pad %{{.*}}, %{{.*}}, %{{.*}} {mode = "edge"} : (tensor<1x3x224x224xf32>, tensor<8xi64>, tensor<f32>) -> tensor<1x3x220x220xf32>
  %2 = kiln.pad %x, %crop, %v {mode = "edge"}
      : (tensor<1x3x224x224xf32>, tensor<8xi64>, tensor<f32>) -> tensor<1x3x220x220xf32>
  // CHECK: kiln.pad {{.*}} {mode = "wrap"}
  %3 = kiln.pad %x, %pads, %v {mode = "wrap"}
      : (tensor<1x3x224x224xf32>, tensor<8xi64>, tensor<f32>) -> tensor<1x3x226x226xf32>
  return %3, %1, %2 : tensor<1x3x226x226xf32>, tensor<1x3x230x230xf32>, tensor<1x3x220x220xf32>
}

// CHECK-LABEL: func.func @range
func.func @range(%a: tensor<i32>, %b: tensor<i32>, %c: tensor<i32>)
    -> (tensor<5xi64>, tensor<4xf32>, tensor<7xi32>) {
  %start = kiln.constant dense<0> : tensor<i64>
  %limit = kiln.constant dense<10> : tensor<i64>
  %delta = kiln.constant dense<2> : tensor<i64>
  // CHECK: kiln.range %{{.*}}, %{{.*}}, %{{.*}} : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<5xi64>
  %0 = kiln.range %start, %limit, %delta : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<5xi64>
  %fs = kiln.constant dense<1.0> : tensor<f32>
  %fl = kiln.constant dense<0.0> : tensor<f32>
  %fd = kiln.constant dense<-0.25> : tensor<f32>
  // CHECK: kiln.range %{{.*}}, %{{.*}}, %{{.*}} : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<4xf32>
  %1 = kiln.range %fs, %fl, %fd : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<4xf32>
  // CHECK: kiln.range %{{.*}}, %{{.*}}, %{{.*}} : (tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<7xi32>
  %2 = kiln.range %a, %b, %c : (tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<7xi32>
  return %0, %1, %2 : tensor<5xi64>, tensor<4xf32>, tensor<7xi32>
}

// CHECK-LABEL: func.func @trilu
func.func @trilu(%x: tensor<1x1x128x128xf32>, %k: tensor<i64>) -> tensor<1x1x128x128xf32> {
  // CHECK: kiln.trilu %{{.*}}, %{{.*}} : tensor<1x1x128x128xf32>, tensor<i64>
  %0 = kiln.trilu %x, %k : tensor<1x1x128x128xf32>, tensor<i64>
  // CHECK: kiln.trilu %{{.*}}, %{{.*}} {upper = false} : tensor<1x1x128x128xf32>, tensor<i64>
  %1 = kiln.trilu %0, %k {upper = false} : tensor<1x1x128x128xf32>, tensor<i64>
  return %1 : tensor<1x1x128x128xf32>
}

// CHECK-LABEL: func.func @topk
func.func @topk(%x: tensor<1x1000xf32>, %y: tensor<8x6xi32>)
    -> (tensor<1x5xf32>, tensor<1x5xi64>, tensor<2x6xi32>, tensor<2x6xi64>) {
  // CHECK: kiln.topk %{{.*}} {axis = 1 : i64} : (tensor<1x1000xf32>) -> (tensor<1x5xf32>, tensor<1x5xi64>)
  %v, %i = kiln.topk %x {axis = 1 : i64} : (tensor<1x1000xf32>) -> (tensor<1x5xf32>, tensor<1x5xi64>)
  // CHECK: kiln.topk %{{.*}} {axis = 0 : i64, largest = false, sorted = false} : (tensor<8x6xi32>) -> (tensor<2x6xi32>, tensor<2x6xi64>)
  %v2, %i2 = kiln.topk %y {axis = 0 : i64, largest = false, sorted = false}
      : (tensor<8x6xi32>) -> (tensor<2x6xi32>, tensor<2x6xi64>)
  return %v, %i, %v2, %i2 : tensor<1x5xf32>, tensor<1x5xi64>, tensor<2x6xi32>, tensor<2x6xi64>
}

// CHECK-LABEL: func.func @depth_space
func.func @depth_space(%x: tensor<1x64x8x8xf32>) -> (tensor<1x16x16x16xf32>, tensor<1x64x8x8xf32>) {
  // CHECK: kiln.depth_to_space %{{.*}} {blocksize = 2 : i64} : (tensor<1x64x8x8xf32>) -> tensor<1x16x16x16xf32>
  %0 = kiln.depth_to_space %x {blocksize = 2 : i64} : (tensor<1x64x8x8xf32>) -> tensor<1x16x16x16xf32>
  // CHECK: kiln.depth_to_space %{{.*}} {blocksize = 2 : i64, mode = "CRD"} : (tensor<1x64x8x8xf32>) -> tensor<1x16x16x16xf32>
  %1 = kiln.depth_to_space %x {blocksize = 2 : i64, mode = "CRD"} : (tensor<1x64x8x8xf32>) -> tensor<1x16x16x16xf32>
  // CHECK: kiln.space_to_depth %{{.*}} {blocksize = 2 : i64} : (tensor<1x16x16x16xf32>) -> tensor<1x64x8x8xf32>
  %2 = kiln.space_to_depth %1 {blocksize = 2 : i64} : (tensor<1x16x16x16xf32>) -> tensor<1x64x8x8xf32>
  return %0, %2 : tensor<1x16x16x16xf32>, tensor<1x64x8x8xf32>
}

// CHECK-LABEL: func.func @resize
func.func @resize(%x: tensor<1x3x32x32xf32>, %scales: tensor<4xf32>, %roi: tensor<8xf32>)
    -> (tensor<1x3x64x64xf32>, tensor<1x3x64x64xf32>, tensor<1x3x16x16xf32>) {
  // CHECK: kiln.resize %{{.*}} : (tensor<1x3x32x32xf32>) -> tensor<1x3x64x64xf32>
  %0 = kiln.resize %x : (tensor<1x3x32x32xf32>) -> tensor<1x3x64x64xf32>
  // CHECK: kiln.resize %{{.*}} scales %{{.*}} {coordinate_transformation_mode = "asymmetric", mode = "linear"} : (tensor<1x3x32x32xf32>, tensor<4xf32>) -> tensor<1x3x64x64xf32>
  %1 = kiln.resize %x scales %scales {mode = "linear", coordinate_transformation_mode = "asymmetric"}
      : (tensor<1x3x32x32xf32>, tensor<4xf32>) -> tensor<1x3x64x64xf32>
  // CHECK: kiln.resize %{{.*}} roi %{{.*}} {coordinate_transformation_mode = "tf_crop_and_resize", cubic_coeff_a = -5.000000e-01 : f32, exclude_outside = true, extrapolation_value = 1.000000e+00 : f32, mode = "cubic"} : (tensor<1x3x32x32xf32>, tensor<8xf32>) -> tensor<1x3x16x16xf32>
  %2 = kiln.resize %x roi %roi {mode = "cubic", coordinate_transformation_mode = "tf_crop_and_resize",
                                cubic_coeff_a = -0.5 : f32, exclude_outside = true,
                                extrapolation_value = 1.0 : f32}
      : (tensor<1x3x32x32xf32>, tensor<8xf32>) -> tensor<1x3x16x16xf32>
  // CHECK: kiln.resize %{{.*}} scales %{{.*}} roi %{{.*}} {nearest_mode = "floor"} : (tensor<1x3x32x32xf32>, tensor<4xf32>, tensor<8xf32>) -> tensor<1x3x64x64xf32>
  %3 = kiln.resize %x scales %scales roi %roi {nearest_mode = "floor"}
      : (tensor<1x3x32x32xf32>, tensor<4xf32>, tensor<8xf32>) -> tensor<1x3x64x64xf32>
  return %3, %1, %2 : tensor<1x3x64x64xf32>, tensor<1x3x64x64xf32>, tensor<1x3x16x16xf32>
}

// CHECK-LABEL: func.func @gather_nd
func.func @gather_nd(%x: tensor<2x3x4xf32>, %i: tensor<2x5x1xi64>) -> tensor<2x5x4xf32> {
  // CHECK: kiln.gather_nd %{{.*}}, %{{.*}} {batch_dims = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x5x1xi64>) -> tensor<2x5x4xf32>
  %0 = kiln.gather_nd %x, %i {batch_dims = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x5x1xi64>) -> tensor<2x5x4xf32>
  return %0 : tensor<2x5x4xf32>
}
