// Importer: models `kiln import` must reject (exit status 1) with an error that names the node,
// its op type and opset, and says what to do. Each model comes from Inputs/make_model.py.

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/make_model.py --out-dir %t \
// RUN:   bad_unsupported_ops \
// RUN:   bad_gemm_old_opset \
// RUN:   bad_max_pool_indices \
// RUN:   bad_max_pool_storage_order \
// RUN:   bad_batch_norm_training \
// RUN:   bad_dropout_training \
// RUN:   bad_resize_antialias \
// RUN:   bad_layer_norm_stash_type \
// RUN:   bad_group_norm_runtime_scale \
// RUN:   bad_quantize_block_size \
// RUN:   bad_conv_auto_pad \
// RUN:   bad_pad_wrap_opset18 \
// RUN:   bad_reshape_runtime_shape \
// RUN:   bad_split_num_outputs_mismatch \
// RUN:   bad_split_opset13_uneven \
// RUN:   bad_topk_k_too_large \
// RUN:   bad_symbolic_input

// Every unsupported (op, opset) pair is listed at once, before any import work: ops Kiln lacks,
// a custom-domain op, and (in the next model) an op at an opset before its supported range.
// RUN: not kiln import %t/bad_unsupported_ops.onnx --quiet 2>&1 | FileCheck %s --check-prefix=UNSUP-OPS
// UNSUP-OPS: kiln import: error: 3 unsupported (op, opset) pairs in the model:
// UNSUP-OPS-NEXT: {{^}}  Hardmax (opset 17): not supported
// UNSUP-OPS-NEXT: {{^}}  Mish (opset 17): not supported
// UNSUP-OPS-NEXT: {{^}}  com.example.FusedThing (opset 1): not supported
// RUN: not kiln import %t/bad_gemm_old_opset.onnx --quiet 2>&1 | FileCheck %s --check-prefix=OLD-OPSET
// OLD-OPSET: error: 1 unsupported (op, opset) pair in the model:
// OLD-OPSET-NEXT: Gemm (opset 9): supported in opsets 11-21

// MaxPool's Indices output.
// RUN: not kiln import %t/bad_max_pool_indices.onnx --quiet 2>&1 | FileCheck %s --check-prefix=MP-INDICES
// MP-INDICES: error: node 'maxpool' (MaxPool, opset 17): the Indices output is not supported; use MaxPool without it

// RUN: not kiln import %t/bad_max_pool_storage_order.onnx --quiet 2>&1 | FileCheck %s --check-prefix=MP-STORAGE
// MP-STORAGE: error: node 'maxpool' (MaxPool, opset 17): storage_order=1 (column major) is not supported

// Training-mode BatchNormalization and Dropout.
// RUN: not kiln import %t/bad_batch_norm_training.onnx --quiet 2>&1 | FileCheck %s --check-prefix=BN-TRAINING
// BN-TRAINING: error: node 'batchnormalization' (BatchNormalization, opset 15): training_mode=1; Kiln compiles inference graphs (export with model.eval())
// RUN: not kiln import %t/bad_dropout_training.onnx --quiet 2>&1 | FileCheck %s --check-prefix=DROPOUT-TRAINING
// DROPOUT-TRAINING: error: node 'dropout' (Dropout, opset 13): training_mode is true; Kiln compiles inference graphs

// RUN: not kiln import %t/bad_resize_antialias.onnx --quiet 2>&1 | FileCheck %s --check-prefix=RESIZE-AA
// RESIZE-AA: error: node 'resize' (Resize, opset 18): antialias is not supported; export the model with antialias=0

// RUN: not kiln import %t/bad_layer_norm_stash_type.onnx --quiet 2>&1 | FileCheck %s --check-prefix=LN-STASH
// LN-STASH: error: node 'layernormalization' (LayerNormalization, opset 17): stash_type other than float is not supported

// Opset-18 GroupNormalization needs constant per-group scale and bias.
// RUN: not kiln import %t/bad_group_norm_runtime_scale.onnx --quiet 2>&1 | FileCheck %s --check-prefix=GN-RUNTIME
// GN-RUNTIME: error: node 'groupnormalization' (GroupNormalization, opset 18): opset-18 GroupNormalization needs constant scale and bias (they are per group); re-export with opset 21

// RUN: not kiln import %t/bad_quantize_block_size.onnx --quiet 2>&1 | FileCheck %s --check-prefix=Q-BLOCK
// Q-BLOCK: error: node 'quantizelinear' (QuantizeLinear, opset 21): blocked quantization (block_size) is not supported

// RUN: not kiln import %t/bad_conv_auto_pad.onnx --quiet 2>&1 | FileCheck %s --check-prefix=CONV-AUTOPAD
// CONV-AUTOPAD: error: node 'conv' (Conv, opset 17): auto_pad 'SAME' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID

// RUN: not kiln import %t/bad_pad_wrap_opset18.onnx --quiet 2>&1 | FileCheck %s --check-prefix=PAD-WRAP
// PAD-WRAP: error: node 'pad' (Pad, opset 18): mode 'wrap' needs opset 19 or newer

// A run-time shape input with no declared output type.
// RUN: not kiln import %t/bad_reshape_runtime_shape.onnx --quiet 2>&1 | FileCheck %s --check-prefix=RESHAPE-RT
// RESHAPE-RT: error: node 'reshape' (Reshape, opset 17): input 'shape' ('s') is computed at run time, but its value determines the static shape of output 0, which the model does not declare

// Split: num_outputs disagreeing with the outputs; an uneven equal split before opset 18.
// RUN: not kiln import %t/bad_split_num_outputs_mismatch.onnx --quiet 2>&1 | FileCheck %s --check-prefix=SPLIT-N
// SPLIT-N: error: node 'split' (Split, opset 18): num_outputs is 3 but the node has 2 outputs
// RUN: not kiln import %t/bad_split_opset13_uneven.onnx --quiet 2>&1 | FileCheck %s --check-prefix=SPLIT-UNEVEN
// SPLIT-UNEVEN: error: node 'split' (Split, opset 13): axis of size 5 does not split into 2 equal parts; give explicit split sizes

// RUN: not kiln import %t/bad_topk_k_too_large.onnx --quiet 2>&1 | FileCheck %s --check-prefix=TOPK-K
// TOPK-K: error: node 'topk' (TopK, opset 11): k = 5 is out of range for an axis of size 4

// A symbolic dim without --shape; --shape with the wrong rank.
// RUN: not kiln import %t/bad_symbolic_input.onnx --quiet 2>&1 | FileCheck %s --check-prefix=SYMBOLIC
// SYMBOLIC: error: graph input 'x' has symbolic dims [batch]; Kiln compiles static shapes: pass --shape x=Nx3 with every N replaced by a size
// RUN: not kiln import %t/bad_symbolic_input.onnx --shape x=2x3x4 --quiet 2>&1 | FileCheck %s --check-prefix=SHAPE-RANK
// SHAPE-RANK: error: --shape x: gives rank 3, the model declares rank 2
