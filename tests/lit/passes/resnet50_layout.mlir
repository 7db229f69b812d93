// ResNet-50 (bench/make_resnet50_onnx.py: torchvision's layout with a BatchNormalization after
// every conv) through the bf16 pipeline: every BatchNorm folds into its conv, all 53 convs and
// both pools run channels last, and one transpose remains, at the NCHW input boundary.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/../../../bench/make_resnet50_onnx.py %t/resnet50.onnx
// RUN: kiln import %t/resnet50.onnx --precision bf16 -o %t/resnet50.mlir 2>/dev/null
// RUN: FileCheck %s < %t/resnet50.mlir
// RUN: grep -c "kiln.conv .*channels_last = true" %t/resnet50.mlir | FileCheck %s --check-prefix=CONVS
// RUN: grep -c "kiln.conv " %t/resnet50.mlir | FileCheck %s --check-prefix=CONVS
// RUN: grep "pool" %t/resnet50.mlir | FileCheck %s --check-prefix=POOLS

// CHECK-NOT: kiln.batch_norm
// CHECK: %[[X:.*]] = kiln.cast %arg0
// CHECK-NEXT: %[[T:.*]] = kiln.transpose %[[X]] {perm = array<i64: 0, 2, 3, 1>}
// CHECK-NOT: kiln.transpose
// CHECK-NOT: kiln.batch_norm
// CHECK: return

// CONVS: 53
// POOLS: kiln.max_pool {{.*}}channels_last = true
// POOLS: kiln.global_avg_pool {{.*}}channels_last = true
