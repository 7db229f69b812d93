// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// What an elementwise fusion group may hold (ir/FusionGroup.cpp).

func.func @not_elementwise(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %g = kiln.fusion_group "elementwise"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    // expected-error @+1 {{'kiln.softmax' op cannot be in an elementwise fusion group}}
    %s = kiln.softmax %a {axis = 1 : i64} : tensor<4x8xf32>
    kiln.yield %s : tensor<4x8xf32>
  }
  return %g : tensor<4x8xf32>
}

// -----

func.func @argument_types(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{block argument 0 has type 'tensor<4x8xbf16>', input 0 has type 'tensor<4x8xf32>'}}
  %g = kiln.fusion_group "elementwise"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xbf16>):
    %c = kiln.cast %a : tensor<4x8xbf16> to tensor<4x8xf32>
    kiln.yield %c : tensor<4x8xf32>
  }
  return %g : tensor<4x8xf32>
}

// -----

func.func @larger_than_result(%x: tensor<4x8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{input 0 of shape [4x8] does not broadcast to the result shape [8]}}
  %g = kiln.fusion_group "elementwise"(%x, %y) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<8xf32>):
    %r = kiln.relu %b : tensor<8xf32>
    kiln.yield %r : tensor<8xf32>
  }
  return %g : tensor<8xf32>
}

// -----

func.func @yield_types(%x: tensor<4x8xf32>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{kiln.yield gives 1 values whose types differ from the group's results}}
  %g = kiln.fusion_group "elementwise"(%x) : (tensor<4x8xf32>) -> tensor<4x8xbf16> {
  ^bb0(%a: tensor<4x8xf32>):
    %r = kiln.relu %a : tensor<4x8xf32>
    kiln.yield %r : tensor<4x8xf32>
  }
  return %g : tensor<4x8xbf16>
}

// -----

func.func @unknown_kind(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{attribute 'kind' failed to satisfy constraint: string attribute one of: elementwise, gemm, conv}}
  %g = kiln.fusion_group "scan"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %r = kiln.relu %a : tensor<4x8xf32>
    kiln.yield %r : tensor<4x8xf32>
  }
  return %g : tensor<4x8xf32>
}

// -----

func.func @yield_outside(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'kiln.yield' op expects parent op 'kiln.fusion_group'}}
  kiln.yield %x : tensor<4x8xf32>
}

// -----

func.func @gemm_with_softmax(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %g = kiln.fusion_group "gemm"(%x, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<8x8xf32>):
    %m = kiln.matmul %a, %b : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    // expected-error @+1 {{'kiln.softmax' op cannot be in a gemm fusion group}}
    %s = kiln.softmax %m {axis = 1 : i64} : tensor<4x8xf32>
    kiln.yield %s : tensor<4x8xf32>
  }
  return %g : tensor<4x8xf32>
}

// -----

func.func @gemm_batched_weight(%x: tensor<2x4x8xf32>, %w: tensor<2x8x8xf32>) -> tensor<2x4x8xf32> {
  %g = kiln.fusion_group "gemm"(%x, %w) : (tensor<2x4x8xf32>, tensor<2x8x8xf32>) -> tensor<2x4x8xf32> {
  ^bb0(%a: tensor<2x4x8xf32>, %b: tensor<2x8x8xf32>):
    // expected-error @+1 {{'kiln.matmul' op in a gemm fusion group must have a 2-d right operand (a weight)}}
    %m = kiln.matmul %a, %b : (tensor<2x4x8xf32>, tensor<2x8x8xf32>) -> tensor<2x4x8xf32>
    %r = kiln.relu %m : tensor<2x4x8xf32>
    kiln.yield %r : tensor<2x4x8xf32>
  }
  return %g : tensor<2x4x8xf32>
}

// -----

func.func @conv_group_without_conv(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{a conv fusion group holds one kiln.conv}}
  %g = kiln.fusion_group "conv"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>):
    %r = kiln.relu %a : tensor<4x8xf32>
    kiln.yield %r : tensor<4x8xf32>
  }
  return %g : tensor<4x8xf32>
}

// -----

func.func @conv_group_channels_first(%x: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %w = kiln.constant dense<0.5> : tensor<8x8x1x1xf32>
  %g = kiln.fusion_group "conv"(%x, %w) : (tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x4x4xf32> {
  ^bb0(%a: tensor<1x8x4x4xf32>, %b: tensor<8x8x1x1xf32>):
    // expected-error @+1 {{in a conv fusion group must be a channels_last 2-d convolution}}
    %c = kiln.conv %a, %b {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x8x4x4xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x4x4xf32>
    %r = kiln.relu %c : tensor<1x8x4x4xf32>
    kiln.yield %r : tensor<1x8x4x4xf32>
  }
  return %g : tensor<1x8x4x4xf32>
}

// -----

func.func @conv_group_softmax(%x: tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %w = kiln.constant dense<0.5> : tensor<8x1x1x8xf32>
  %g = kiln.fusion_group "conv"(%x, %w) : (tensor<1x4x4x8xf32>, tensor<8x1x1x8xf32>) -> tensor<1x4x4x8xf32> {
  ^bb0(%a: tensor<1x4x4x8xf32>, %b: tensor<8x1x1x8xf32>):
    %c = kiln.conv %a, %b {channels_last = true, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x4x4x8xf32>, tensor<8x1x1x8xf32>) -> tensor<1x4x4x8xf32>
    // expected-error @+1 {{cannot be in a conv fusion group}}
    %r = kiln.softmax %c {axis = 3 : i64} : tensor<1x4x4x8xf32>
    kiln.yield %r : tensor<1x4x4x8xf32>
  }
  return %g : tensor<1x4x4x8xf32>
}

// -----

func.func @norm_group_two_layer_norms(%x: tensor<4x8xf32>, %g: tensor<8xf32>) -> tensor<4x8xf32> {
  %r = kiln.fusion_group "norm"(%x, %g) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>, %s: tensor<8xf32>):
    %y = kiln.layer_norm %a, %s {axis = 1 : i64} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    // expected-error @+1 {{is the second layer_norm of a norm fusion group}}
    %z = kiln.layer_norm %y, %s {axis = 1 : i64} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    kiln.yield %z : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

// -----

func.func @norm_group_computed_scale(%x: tensor<4x8xf32>, %g: tensor<8xf32>) -> tensor<4x8xf32> {
  %r = kiln.fusion_group "norm"(%x, %g) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>, %s: tensor<8xf32>):
    %t = kiln.relu %s : tensor<8xf32>
    // expected-error @+1 {{must read its scale and bias from group inputs}}
    %y = kiln.layer_norm %a, %t {axis = 1 : i64} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    kiln.yield %y : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

// -----

func.func @norm_group_epilogue_reads_prologue(%x: tensor<4x8xf32>, %g: tensor<8xf32>) -> tensor<4x8xf32> {
  %r = kiln.fusion_group "norm"(%x, %g) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>, %s: tensor<8xf32>):
    %p = kiln.relu %a : tensor<4x8xf32>
    %y = kiln.layer_norm %p, %s {axis = 1 : i64} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    // expected-error @+1 {{after the layer_norm of a norm fusion group reads a value computed before it}}
    %z = kiln.add %y, %p : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    kiln.yield %z : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

// -----

func.func @norm_group_softmax(%x: tensor<4x8xf32>, %g: tensor<8xf32>) -> tensor<4x8xf32> {
  %r = kiln.fusion_group "norm"(%x, %g) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
  ^bb0(%a: tensor<4x8xf32>, %s: tensor<8xf32>):
    %y = kiln.layer_norm %a, %s {axis = 1 : i64} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    // expected-error @+1 {{cannot be in a norm fusion group}}
    %z = kiln.softmax %y {axis = 1 : i64} : tensor<4x8xf32>
    kiln.yield %z : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

// -----

func.func @norm_group_yields_input(%x: tensor<4x8xf32>, %g: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  // expected-error @+1 {{a norm fusion group's results are values its body computes}}
  %r:2 = kiln.fusion_group "norm"(%x, %g) : (tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  ^bb0(%a: tensor<4x8xf32>, %s: tensor<8xf32>):
    %y = kiln.layer_norm %a, %s {axis = 1 : i64} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    kiln.yield %y, %a : tensor<4x8xf32>, tensor<4x8xf32>
  }
  return %r#0, %r#1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

func.func @elementwise_group_two_results(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  // expected-error @+1 {{a fusion group has one result (a norm group one or more, a conv group one or two), got 2}}
  %r:2 = kiln.fusion_group "elementwise"(%x) : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  ^bb0(%a: tensor<4x8xf32>):
    %y = kiln.relu %a : tensor<4x8xf32>
    %z = kiln.neg %a : tensor<4x8xf32>
    kiln.yield %y, %z : tensor<4x8xf32>, tensor<4x8xf32>
  }
  return %r#0, %r#1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

func.func @gather_group_elementwise_after_index_map(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %r = kiln.fusion_group "gather"(%x) : (tensor<2x3xf32>) -> tensor<3x2xf32> {
  ^bb0(%a: tensor<2x3xf32>):
    %t = kiln.transpose %a {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
    // expected-error @+1 {{in a gather fusion group comes after an index map; elementwise ops come first}}
    %y = kiln.relu %t : tensor<3x2xf32>
    kiln.yield %y : tensor<3x2xf32>
  }
  return %r : tensor<3x2xf32>
}

// -----

func.func @gather_group_pad_amounts_not_constant(%x: tensor<2x3xf32>, %p: tensor<4xi64>) -> tensor<4x3xf32> {
  %zero = kiln.constant dense<0.0> : tensor<f32>
  %r = kiln.fusion_group "gather"(%x, %p, %zero) : (tensor<2x3xf32>, tensor<4xi64>, tensor<f32>) -> tensor<4x3xf32> {
  ^bb0(%a: tensor<2x3xf32>, %q: tensor<4xi64>, %v: tensor<f32>):
    // expected-error @+1 {{in a gather fusion group pads in constant mode by constant non-negative amounts with a constant value}}
    %y = kiln.pad %a, %q, %v : (tensor<2x3xf32>, tensor<4xi64>, tensor<f32>) -> tensor<4x3xf32>
    kiln.yield %y : tensor<4x3xf32>
  }
  return %r : tensor<4x3xf32>
}

// -----

func.func @gather_group_elementwise_reads_a_tensor(%x: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %r = kiln.fusion_group "gather"(%x, %b) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<3x2xf32> {
  ^bb0(%a: tensor<2x3xf32>, %c: tensor<2x3xf32>):
    // expected-error @+1 {{in a gather fusion group reads, besides the chain, only one-element constants}}
    %s = kiln.add %a, %c : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %t = kiln.transpose %s {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
    kiln.yield %t : tensor<3x2xf32>
  }
  return %r : tensor<3x2xf32>
}

// -----

func.func @gather_group_moves_nothing(%x: tensor<2x3xf32>) -> tensor<6xbf16> {
  // expected-error @+1 {{a gather fusion group moves elements: a transpose or a pad}}
  %r = kiln.fusion_group "gather"(%x) : (tensor<2x3xf32>) -> tensor<6xbf16> {
  ^bb0(%a: tensor<2x3xf32>):
    %c = kiln.cast %a : tensor<2x3xf32> to tensor<2x3xbf16>
    %y = kiln.reshape %c : tensor<2x3xbf16> to tensor<6xbf16>
    kiln.yield %y : tensor<6xbf16>
  }
  return %r : tensor<6xbf16>
}

// -----

func.func @pool_group_channels_first(%x: tensor<1x4x4x8xf32>) -> tensor<1x4x2x4xf32> {
  %r = kiln.fusion_group "pool"(%x) : (tensor<1x4x4x8xf32>) -> tensor<1x4x2x4xf32> {
  ^bb0(%a: tensor<1x4x4x8xf32>):
    // expected-error @+1 {{cannot start a pool fusion group: it starts with a channels_last kiln.max_pool or kiln.avg_pool of the group's first input}}
    %p = kiln.max_pool %a {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x4x4x8xf32>) -> tensor<1x4x2x4xf32>
    %y = kiln.relu %p : tensor<1x4x2x4xf32>
    kiln.yield %y : tensor<1x4x2x4xf32>
  }
  return %r : tensor<1x4x2x4xf32>
}

// -----

func.func @pool_group_reads_a_tensor(%x: tensor<1x4x4x8xf32>, %b: tensor<8xf32>) -> tensor<1x2x2x8xf32> {
  %r = kiln.fusion_group "pool"(%x, %b) : (tensor<1x4x4x8xf32>, tensor<8xf32>) -> tensor<1x2x2x8xf32> {
  ^bb0(%a: tensor<1x4x4x8xf32>, %c: tensor<8xf32>):
    %p = kiln.max_pool %a {channels_last = true, kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x4x4x8xf32>) -> tensor<1x2x2x8xf32>
    // expected-error @+1 {{in a pool fusion group reads, besides the chain, only one-element constants}}
    %y = kiln.add %p, %c : (tensor<1x2x2x8xf32>, tensor<8xf32>) -> tensor<1x2x2x8xf32>
    kiln.yield %y : tensor<1x2x2x8xf32>
  }
  return %r : tensor<1x2x2x8xf32>
}

// -----

func.func @pool_group_pool_alone(%x: tensor<1x4x4x8xf32>) -> tensor<1x2x2x8xf32> {
  // expected-error @+1 {{a pool fusion group converts the pool's value: a pool alone is no group}}
  %r = kiln.fusion_group "pool"(%x) : (tensor<1x4x4x8xf32>) -> tensor<1x2x2x8xf32> {
  ^bb0(%a: tensor<1x4x4x8xf32>):
    %p = kiln.max_pool %a {channels_last = true, kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x4x4x8xf32>) -> tensor<1x2x2x8xf32>
    kiln.yield %p : tensor<1x2x2x8xf32>
  }
  return %r : tensor<1x2x2x8xf32>
}

// -----

func.func @norm_group_gather_after_norm(%t: tensor<50x8xf32>, %ids: tensor<4xi64>, %x: tensor<4x8xf32>,
                                        %g: tensor<8xf32>) -> tensor<4x8xf32> {
  %r = kiln.fusion_group "norm"(%t, %ids, %x, %g) : (tensor<50x8xf32>, tensor<4xi64>, tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
  ^bb0(%tt: tensor<50x8xf32>, %i: tensor<4xi64>, %a: tensor<4x8xf32>, %s: tensor<8xf32>):
    %y = kiln.layer_norm %a, %s {axis = 1 : i64} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    // expected-error @+1 {{in a norm fusion group must come before its layer_norm}}
    %e = kiln.gather %tt, %i {axis = 0 : i64} : (tensor<50x8xf32>, tensor<4xi64>) -> tensor<4x8xf32>
    %z = kiln.add %y, %e : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    kiln.yield %z : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

// -----

func.func @norm_group_gather_of_computed_table(%t: tensor<50x8xf32>, %ids: tensor<4xi64>, %g: tensor<8xf32>) -> tensor<4x8xf32> {
  %r = kiln.fusion_group "norm"(%t, %ids, %g) : (tensor<50x8xf32>, tensor<4xi64>, tensor<8xf32>) -> tensor<4x8xf32> {
  ^bb0(%tt: tensor<50x8xf32>, %i: tensor<4xi64>, %s: tensor<8xf32>):
    %n = kiln.neg %tt : tensor<50x8xf32>
    // expected-error @+1 {{in a norm fusion group must read its table and indices from group inputs}}
    %e = kiln.gather %n, %i {axis = 0 : i64} : (tensor<50x8xf32>, tensor<4xi64>) -> tensor<4x8xf32>
    %y = kiln.layer_norm %e, %s {axis = 1 : i64} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    kiln.yield %y : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

// -----

func.func @norm_group_gather_of_short_rows(%t: tensor<50x4xf32>, %ids: tensor<4x2xi64>, %g: tensor<8xf32>) -> tensor<4x8xf32> {
  %r = kiln.fusion_group "norm"(%t, %ids, %g) : (tensor<50x4xf32>, tensor<4x2xi64>, tensor<8xf32>) -> tensor<4x8xf32> {
  ^bb0(%tt: tensor<50x4xf32>, %i: tensor<4x2xi64>, %s: tensor<8xf32>):
    // expected-error @+1 {{cannot be in a norm fusion group}}
    %e = kiln.gather %tt, %i {axis = 0 : i64} : (tensor<50x4xf32>, tensor<4x2xi64>) -> tensor<4x2x4xf32>
    %v = kiln.reshape %e : tensor<4x2x4xf32> to tensor<4x8xf32>
    %y = kiln.layer_norm %v, %s {axis = 1 : i64} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    kiln.yield %y : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}
