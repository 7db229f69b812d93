// ResNet-50 (bench/make_resnet50_onnx.py: torchvision's layout with a BatchNormalization after
// every conv) through the bf16 pipeline: every BatchNorm folds into its conv, all 53 convs and
// both pools run channels last, and one transpose remains, at the NCHW input boundary: the
// stem's, which gathers the image's 2x2 blocks for the stride-1 conv the 7x7 stride-2 stem over
// 3 channels becomes (kiln-space-to-depth-convs), padded from 12 channels to 16 and at the
// borders (2 blocks before, 1 after) for 4x4 taps with no pad: the cast, transpose and pad
// are one gather group (one kernel).
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/../../../bench/make_resnet50_onnx.py %t/resnet50.onnx
// RUN: kiln import %t/resnet50.onnx --precision bf16 -o %t/resnet50.mlir 2>/dev/null
// RUN: FileCheck %s < %t/resnet50.mlir
// RUN: grep -c "kiln.conv .*channels_last = true" %t/resnet50.mlir | FileCheck %s --check-prefix=CONVS
// RUN: grep -c "kiln.conv " %t/resnet50.mlir | FileCheck %s --check-prefix=CONVS
// RUN: grep "pool" %t/resnet50.mlir | FileCheck %s --check-prefix=POOLS

// CHECK-NOT: kiln.batch_norm
// CHECK: kiln.fusion_group "gather"(%arg0,
// CHECK-NEXT: ^bb0(%[[I:.*]]: tensor<1x3x224x224xf32>
// CHECK-NEXT: %[[X:.*]] = kiln.cast %[[I]]
// CHECK-NEXT: %[[S:.*]] = kiln.reshape %[[X]] : tensor<1x3x224x224xbf16> to tensor<1x3x112x2x112x2xbf16>
// CHECK-NEXT: %[[T:.*]] = kiln.transpose %[[S]] {perm = array<i64: 0, 2, 4, 3, 5, 1>}
// CHECK: kiln.pad {{.*}} -> tensor<1x115x115x16xbf16>
// CHECK: kiln.conv {{.*}}pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x115x115x16xf32>, tensor<64x4x4x16xf32>, tensor<64xf32>)
// CHECK-NOT: kiln.transpose
// CHECK-NOT: kiln.batch_norm
// CHECK: return

// CONVS: 53
// POOLS: kiln.max_pool {{.*}}channels_last = true
// POOLS: kiln.global_avg_pool {{.*}}channels_last = true
