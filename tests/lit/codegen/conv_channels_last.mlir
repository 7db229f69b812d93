// How `kiln compile` lowers channels-last convolutions and conv groups (cuDNN graphs), and
// that a residual stays live until the conv group that adds it (MobileNetV3's inverted
// residual: the block input is read again after two larger intermediates).
// RUN: rm -rf %t && mkdir -p %t
// RUN: kiln compile %s -o %t/m.kiln --quiet --layout nchw
// RUN: kiln inspect %t/m.kiln | FileCheck %s
// RUN: kiln inspect %t/m.kiln --json | %python %S/Inputs/check_arena_liveness.py | FileCheck %s --check-prefix=LIVE

// Shapes are channels-first in the step, storage NHWC (channelsLast=1).
// CHECK: "expand" op="kiln.fusion_group" nodes=["expand","expand_relu"] conv {{.*}} xShape=[1,8,6,6] wShape=[24,8,1,1] yShape=[1,24,6,6] {{.*}} channelsLast=1 activation=relu {{.*}} x=x:bf16[1,6,6,8] w={{.*}}:bf16[24,1,1,8] y=expand:bf16[1,6,6,24] bias={{.*}}:bf16[24] residual=-
// A depthwise conv keeps no epilogue; its bias and ReLU are one generated kernel.
// CHECK: "depthwise" op="kiln.conv" nodes=["depthwise"] conv {{.*}} groups=24 channelsLast=1 activation=none {{.*}} bias=- residual=-
// CHECK: op="kiln.fusion_group" nodes=["depthwise_relu","depthwise"] kernel
// The projection adds the block input as its residual.
// CHECK: "project" op="kiln.fusion_group" nodes=["project","block_add"] conv {{.*}} activation=none {{.*}} residual=x:bf16[1,6,6,8]
// Asymmetric pads: an explicit pad of the NHWC input first (axes 1 and 2), then the conv.
// CHECK: "strided/pad" op="kiln.pad" {{.*}} args=[project:bf16[1,6,6,8],strided/padded:bf16[1,7,7,8]]
// CHECK: "strided" op="kiln.fusion_group" nodes=["strided","strided_clip"] conv {{.*}} xShape=[1,8,7,7] {{.*}} pads=[0,0] strides=[2,2] {{.*}} activation=clip activationAlpha=0 activationBeta=6
// LIVE: arena liveness ok

func.func @main(%x: tensor<1x6x6x8xbf16> {kiln.name = "x"}) -> (tensor<1x3x3x8xbf16> {kiln.name = "y"}) {
  %we = kiln.constant dense<0.125> : tensor<24x1x1x8xbf16>
  %be = kiln.constant dense<0.25> : tensor<24xbf16>
  %wd = kiln.constant dense<0.5> : tensor<24x3x3x1xbf16>
  %bd = kiln.constant dense<-0.25> : tensor<24xbf16>
  %wp = kiln.constant dense<0.0625> : tensor<8x1x1x24xbf16>
  %bp = kiln.constant dense<0.5> : tensor<8xbf16>
  %ws = kiln.constant dense<0.25> : tensor<8x3x3x8xbf16>
  %lo = kiln.constant dense<0.0> : tensor<bf16>
  %hi = kiln.constant dense<6.0> : tensor<bf16>
  %e = kiln.conv %x, %we, %be {channels_last = true, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x6x6x8xbf16>, tensor<24x1x1x8xbf16>, tensor<24xbf16>) -> tensor<1x6x6x24xbf16> loc("expand")
  %er = kiln.relu %e : tensor<1x6x6x24xbf16> loc("expand_relu")
  %d = kiln.conv %er, %wd, %bd {channels_last = true, group = 24 : i64, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x6x6x24xbf16>, tensor<24x3x3x1xbf16>, tensor<24xbf16>) -> tensor<1x6x6x24xbf16> loc("depthwise")
  %dr = kiln.relu %d : tensor<1x6x6x24xbf16> loc("depthwise_relu")
  %p = kiln.conv %dr, %wp, %bp {channels_last = true, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x6x6x24xbf16>, tensor<8x1x1x24xbf16>, tensor<8xbf16>) -> tensor<1x6x6x8xbf16> loc("project")
  %a = kiln.add %p, %x : (tensor<1x6x6x8xbf16>, tensor<1x6x6x8xbf16>) -> tensor<1x6x6x8xbf16> loc("block_add")
  %s = kiln.conv %a, %ws {channels_last = true, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 1, 1>} : (tensor<1x6x6x8xbf16>, tensor<8x3x3x8xbf16>) -> tensor<1x3x3x8xbf16> loc("strided")
  %c = kiln.clip %s, %lo, %hi : (tensor<1x3x3x8xbf16>, tensor<bf16>, tensor<bf16>) -> tensor<1x3x3x8xbf16> loc("strided_clip")
  return %c : tensor<1x3x3x8xbf16>
}
