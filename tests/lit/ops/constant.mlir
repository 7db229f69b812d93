// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// The generic form (properties spelled out) parses back to the same ops.
// RUN: kiln-opt %s -mlir-print-op-generic | kiln-opt | FileCheck %s

// kiln.constant with inline dense values and with dense_resource blobs.

// CHECK-LABEL: func.func @dense
func.func @dense() -> (tensor<2xi64>, tensor<f32>, tensor<3xi1>, tensor<2x2xf16>,
                       tensor<4xui8>, tensor<2xbf16>, tensor<2xf8E4M3FN>, tensor<1x3x1x1xf32>,
                       tensor<0xi64>, tensor<3xi32>, tensor<2xi8>) {
  // CHECK: kiln.constant dense<[1, 2048]> : tensor<2xi64>
  %0 = kiln.constant dense<[1, 2048]> : tensor<2xi64>
  // CHECK: kiln.constant dense<5.000000e-01> : tensor<f32>
  %1 = kiln.constant dense<0.5> : tensor<f32>
  // CHECK: kiln.constant dense<[true, false, true]> : tensor<3xi1>
  %2 = kiln.constant dense<[true, false, true]> : tensor<3xi1>
  // CHECK: kiln.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf16>
  %3 = kiln.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf16>
  // CHECK: kiln.constant dense<[0, 128, 255, 7]> : tensor<4xui8>
  %4 = kiln.constant dense<[0, 128, 255, 7]> : tensor<4xui8>
  // CHECK: kiln.constant dense<[1.000000e+00, -2.500000e-01]> : tensor<2xbf16>
  %5 = kiln.constant dense<[1.0, -0.25]> : tensor<2xbf16>
  // CHECK: kiln.constant dense<[4.480000e+02, 1.250000e-01]> : tensor<2xf8E4M3FN>
  %6 = kiln.constant dense<[448.0, 0.125]> : tensor<2xf8E4M3FN>
  // Splats stay splats.
  // CHECK: kiln.constant dense<0.000000e+00> : tensor<1x3x1x1xf32>
  %7 = kiln.constant dense<0.0> : tensor<1x3x1x1xf32>
  // CHECK: kiln.constant dense<> : tensor<0xi64>
  %8 = kiln.constant dense<> : tensor<0xi64>
  // CHECK: kiln.constant dense<[-1, 0, 2147483647]> : tensor<3xi32>
  %9 = kiln.constant dense<[-1, 0, 2147483647]> : tensor<3xi32>
  // CHECK: kiln.constant dense<[-128, 127]> : tensor<2xi8>
  %10 = kiln.constant dense<[-128, 127]> : tensor<2xi8>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10
      : tensor<2xi64>, tensor<f32>, tensor<3xi1>, tensor<2x2xf16>, tensor<4xui8>,
        tensor<2xbf16>, tensor<2xf8E4M3FN>, tensor<1x3x1x1xf32>, tensor<0xi64>, tensor<3xi32>,
        tensor<2xi8>
}

// CHECK-LABEL: func.func @resource
func.func @resource(%x: tensor<1x2x2xf32>) -> (tensor<1x2x2xf32>, tensor<4xi8>) {
  // CHECK: %[[W:.*]] = kiln.constant dense_resource<conv1.weight> : tensor<2x2xf32>
  %w = kiln.constant dense_resource<conv1.weight> : tensor<2x2xf32>
  // CHECK: kiln.add %{{.*}}, %[[W]] : (tensor<1x2x2xf32>, tensor<2x2xf32>) -> tensor<1x2x2xf32>
  %0 = kiln.add %x, %w : (tensor<1x2x2xf32>, tensor<2x2xf32>) -> tensor<1x2x2xf32>
  // CHECK: kiln.constant dense_resource<blob1> : tensor<4xi8>
  %q = kiln.constant dense_resource<blob1> : tensor<4xi8>
  return %0, %q : tensor<1x2x2xf32>, tensor<4xi8>
}

// The blobs round-trip byte for byte: the 4-byte alignment header, then little-endian data.
// CHECK:      {-#
// CHECK-NEXT:   dialect_resources: {
// CHECK-NEXT:     builtin: {
// CHECK-DAG:        conv1.weight: "0x040000000000803F000000400000404000008040"
// CHECK-DAG:        blob1: "0x0400000001FF7F80"
// CHECK:          }
// CHECK-NEXT:   }
// CHECK-NEXT: #-}

{-#
  dialect_resources: {
    builtin: {
      conv1.weight: "0x040000000000803F000000400000404000008040",
      blob1: "0x0400000001FF7F80"
    }
  }
#-}
