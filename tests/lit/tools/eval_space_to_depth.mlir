// kiln-space-to-depth-convs against the interpreter: a strided conv over few channels and the
// stride-1 conv over the image's blocks it becomes compute the same sums (the interpreter
// accumulates in f64, so the same bits). Inputs/stem_convs.mlir: ResNet's 7x7 stride-2 stem
// over 3 channels, a 3x3 stride-2 conv over 2 channels, one with pads only at the end, a 6x6
// stride-4 conv over one channel. Their outputs are few, so `min-macs-per-pixel=0` makes the
// pass take them (kiln compile's pipeline takes ResNet-50's stem: resnet50_layout.mlir).
// RUN: rm -rf %t && mkdir -p %t
// RUN: kiln-opt %S/Inputs/stem_convs.mlir --kiln-convert-layout=layout=nhwc --canonicalize --kiln-space-to-depth-convs=min-macs-per-pixel=0 -o %t/rewritten.mlir
// RUN: kiln eval %t/rewritten.mlir --layout nchw --output-dir %t/rewritten --quiet
// RUN: kiln eval %S/Inputs/stem_convs.mlir --layout nchw --output-dir %t/direct --quiet
// RUN: %python -c "import numpy as np; ys = ('y1.npy', 'y2.npy', 'y3.npy', 'y4.npy'); [np.testing.assert_array_equal(np.load('%t/rewritten/' + y), np.load('%t/direct/' + y)) for y in ys]; assert min(abs(np.load('%t/direct/' + y)).max() for y in ys) > 0.5"

// What the convs became: each a stride-1 conv over the blocks gathered by one transpose of the
// channels-first input. Where 12 blocked channels are zero-padded to 16, that pad also pads the
// borders, begin and end apart, and the conv keeps its taps with no pad (the stem: 4 taps,
// begin pad 2, end pad 1; the end-padded conv: 2 taps, end pad 1). Where the channels need no
// pad, the conv's pads stay symmetric (the 2-channel conv's 2 taps, begin pad 1, grow to 3 with
// pad 1, the zero tap last); the one-channel input's channels-last form is a reshape, and its
// blocks are gathered from that.
// RUN: FileCheck %s < %t/rewritten.mlir
// CHECK: kiln.transpose %{{.*}} {perm = array<i64: 0, 2, 4, 3, 5, 1>} : (tensor<2x3x8x2x8x2xf32>) -> tensor<2x8x8x2x2x3xf32>
// CHECK: kiln.pad {{.*}} : (tensor<2x8x8x12xf32>, tensor<8xi64>, tensor<f32>) -> tensor<2x11x11x16xf32>
// CHECK: kiln.conv {{.*}}pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x11x11x16xf32>, tensor<8x4x4x16xf32>, tensor<8xf32>) -> tensor<2x8x8x8xf32>
// CHECK-NOT: kiln.pad
// CHECK: kiln.conv {{.*}}pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x5x5x8xf32>, tensor<4x3x3x8xf32>) -> tensor<2x5x5x4xf32>
// CHECK: kiln.pad {{.*}} : (tensor<2x5x5x12xf32>, tensor<8xi64>, tensor<f32>) -> tensor<2x6x6x16xf32>
// CHECK: kiln.conv {{.*}}pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x6x6x16xf32>, tensor<5x2x2x16xf32>) -> tensor<2x5x5x5xf32>
// CHECK: kiln.transpose %{{.*}} {perm = array<i64: 0, 1, 3, 2, 4, 5>} : (tensor<2x4x4x4x4x1xf32>)
// CHECK: kiln.conv {{.*}}pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x4x4x16xf32>, tensor<3x3x3x16xf32>) -> tensor<2x4x4x3xf32>

// With the default threshold none of these is rewritten (at most 1176 multiply-adds per output
// pixel; ResNet-50's stem has 9408, MobileNetV3's 432).
// RUN: kiln-opt %S/Inputs/stem_convs.mlir --kiln-convert-layout=layout=nhwc --canonicalize --kiln-space-to-depth-convs | FileCheck %s --check-prefix=DEFAULT
// DEFAULT-NOT: kiln.pad
// DEFAULT-COUNT-4: kiln.conv {{.*}}strides = array<i64: {{2, 2|4, 4}}>
