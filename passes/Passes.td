//===- Passes.td - kiln passes -----------------------------*- tablegen -*-===//
//
// Every kiln pass, one per file in passes/. Pipelines are built in one place (Pipelines.cpp,
// with the optimization issues).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_TD
#define KILN_PASSES_TD

include "mlir/Pass/PassBase.td"

def FoldConstants : Pass<"kiln-fold-constants", "mlir::func::FuncOp"> {
  let summary = "Evaluate ops whose operands are all constants with the reference interpreter";
  let description = [{
    Replaces every kiln op whose operands are all `kiln.constant` with constants computed by
    the CPU reference interpreter (ir/Interpreter), so folding means exactly what the op means.
    A result larger than `max-elements` and than every operand is not folded and is reported
    as a remark, so that a small model cannot expand into gigabytes of constants (a weight's
    dequantization or cast, no larger than the weight, always folds). A gather of a constant
    at indices that are all one index folds to its one slice and a `kiln.expand` (which
    elementwise readers then read unexpanded). One exception: the
    `kiln.dequantize` of an imported QDQ model's int8 or E4M3 conv weight stays when every
    reader is a conv with a dequantized input that an 8-bit kernel can run (per-tensor input of
    the weight's type, zero points 0, C a multiple of 32, ...: whyNoQuantizedConvOnceChannelsLast),
    so the weight keeps its 8-bit values and scales for kiln-fold-quantization.
  }];
  let options = [
    Option<"maxElements", "max-elements", "int64_t", /*default=*/"1 << 20",
           "Largest result (in elements) that is folded">,
    Option<"inlineElements", "inline-elements", "int64_t", /*default=*/"16",
           "Folded constants with more elements become resource blobs">,
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

def MergeEquivalentOps : Pass<"kiln-merge-equivalent-ops", "mlir::func::FuncOp"> {
  let summary = "Common subexpressions that differ only in the ONNX value they are named as";
  let description = [{
    MLIR's CSE merges two ops only when every attribute matches, and the importer names each
    op's result after its ONNX value (`kiln.onnx_values`), so an exporter's repeated
    computation stays repeated: BERT's exported attention builds `Where(mask, 0, -inf)` anew in
    every layer, and each layer then got its own masked-row reduction. This pass merges ops
    without side effects or regions whose operands, result types and attributes other than
    `kiln.onnx_values` are equal, in block order: the first op stays, with its location and
    names, and later ones are replaced by it (their ONNX values are the same values, so
    `kiln eval --dump` and `kiln compare` find them under the first op's names).
  }];
  let dependentDialects = ["kiln::KilnDialect"];
}

def FoldBatchNorm : Pass<"kiln-fold-batch-norm", "mlir::func::FuncOp"> {
  let summary = "Inference BatchNorm into the preceding conv, or into a multiply-add";
  let description = [{
    A kiln.batch_norm whose scale, bias, mean and variance are constants is x·s + t per
    channel, s = scale / sqrt(variance + epsilon), t = bias − mean·s. When its input is a
    channels-first kiln.conv that nothing else uses, with a constant weight and an optional
    constant bias, the conv absorbs it: weight·s along the output channels, bias·s + t. The
    conv's location fuses the BatchNorm's, so plan steps name both ONNX nodes. Any other
    BatchNorm with constant parameters becomes kiln.mul by s and kiln.add of t, constants of
    shape [1, C, 1, ...] that join elementwise fusion groups. s, t and the new values are
    computed in f64 and rounded once to their type; the folded arithmetic associates
    differently, so results move by a few ulps.
  }];
  let options = [
    Option<"inlineElements", "inline-elements", "int64_t", /*default=*/"16",
           "Folded constants with more elements become resource blobs">,
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

def MixedPrecision : Pass<"kiln-mixed-precision", "mlir::func::FuncOp"> {
  let summary = "Autocast-style precision policy with explicit kiln.cast ops";
  let description = [{
    Gives every op the element type it runs in, by the policy of passes/PrecisionPolicy.h:
    compute-bound ops (conv, conv_transpose, matmul, gemm, einsum) take `precision` (bf16 or
    fp16; fp32 accumulation is the kernels' business), ops whose results can outgrow their
    inputs stay fp32, every other op follows its non-constant inputs. Where a value meets an op
    of another type a `kiln.cast` is inserted, one per (value, type); graph inputs and outputs
    keep their declared types. Weight casts and cast chains are left to canonicalize
    (kiln.cast's folder). Only f32 computation is retargeted: ops already in another type stay.
    An imported QDQ model's conv that keeps its 8-bit weight for an 8-bit kernel (its weight's
    dequantization left by kiln-fold-constants) keeps its dequantizations' type: the model
    states its precision. A remark counts such convs, or says what form 8-bit kernels take when
    a QDQ model has none. `keep-fp32` and `force-precision` name ONNX nodes, ONNX op types or kiln op names; an op
    forced to `fp32` (not tf32) is marked `kiln.math = "strict"` so codegen runs it in IEEE
    fp32 even in a TF32 plan. Each override is reported as a remark on the ops it matched, and
    as a warning when it matches nothing.
  }];
  let options = [
    Option<"precision", "precision", "std::string", /*default=*/"\"fp32\"",
           "Half type of compute-bound ops: bf16 or fp16 (fp32 and tf32 change nothing)">,
    ListOption<"keepFp32", "keep-fp32", "std::string",
               "ONNX node names, ONNX op types or kiln op names that stay fp32">,
    ListOption<"forcePrecision", "force-precision", "std::string",
               "NAME=PRECISION pairs (fp32, tf32, bf16, fp16) that override the policy">,
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

def InsertQuantization : Pass<"kiln-insert-quantization", "mlir::func::FuncOp"> {
  let summary = "8-bit quantization of conv, conv_transpose, matmul and gemm inputs from a calibration file";
  let description = [{
    Explicit quantization, as a QDQ model states it: each conv, conv_transpose, matmul and
    gemm (of `ops`, when given) whose input and weight are f32, bf16 or f16 gets a
    kiln.quantize -> kiln.dequantize pair on its input and on its weight (operand 1), so it
    computes on values of the 8-bit grid; the dequantized values, its bias and its result keep
    the op's type. Activations
    are per-tensor and symmetric, scale = threshold / 127 (int8) or / 448 (fp8, E4M3), the
    threshold read for the value's ONNX name from the `kiln calibrate` file (`method`, or the
    file's), looking back through unnamed reshapes and transposes; one pair serves every user
    of a value. A constant weight gets symmetric
    per-output-channel scales, max |w| / 127 (or / 448), computed from the constant (one scale,
    the largest, for the ops named in `per-tensor-weight-ops`: Hopper's FP8 GEMMs take one); a weight
    computed at run time (attention's K) is an activation. An op named in `keep` (ONNX node
    name, ONNX op type or kiln op name), or whose input has no calibrated range, stays as it
    is, with a remark; with `keep-first`, so does an op reading the network's input (through
    reshapes, transposes and casts): the first layer, which sees the raw data; with
    `keep-last`, so does an op from whose result no other conv, conv_transpose, matmul or gemm
    is computed (quantized or not): a last layer, whose error reaches the network's output
    unaveraged (a classifier's logits). With `residuals`, the residual the epilogue of a conv cuDNN's 8-bit kernels will run adds (a
    ResNet block's input or its downsample branch; whyNoQuantizedConv) is read through its
    quantization too, shared with the convs reading
    it: between 8-bit convolution graphs the block's values then stay 8-bit. Folding the
    pairs into 8-bit kernels is for codegen; the interpreter evaluates them exactly, so the
    module measures the accuracy 8-bit plans will have.
  }];
  let options = [
    Option<"calibration", "calibration", "std::string", /*default=*/"\"\"",
           "The calibration file (kiln calibrate -o FILE)">,
    Option<"type", "type", "std::string", /*default=*/"\"int8\"", "int8 or fp8 (float8e4m3fn)">,
    Option<"method", "method", "std::string", /*default=*/"\"\"",
           "minmax, percentile or entropy (default: the file's)">,
    ListOption<"keep", "keep", "std::string",
               "ONNX node names, ONNX op types or kiln op names that stay unquantized">,
    ListOption<"quantizeOps", "ops", "std::string",
               "The kiln ops to quantize (default: kiln.conv, kiln.conv_transpose, kiln.matmul, kiln.gemm)">,
    ListOption<"perTensorWeightOps", "per-tensor-weight-ops", "std::string",
               "The kiln ops whose constant weight gets one scale instead of one per output channel">,
    Option<"keepFirst", "keep-first", "bool", /*default=*/"false",
           "Ops whose input is a graph input (through reshapes, transposes and casts) stay unquantized">,
    Option<"keepLast", "keep-last", "bool", /*default=*/"false",
           "Ops from whose result no other quantizable op is computed (the last layers) stay unquantized">,
    Option<"residuals", "residuals", "bool", /*default=*/"false",
           "A quantized conv's residual add reads the residual through its quantization">,
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

def FoldQuantization : Pass<"kiln-fold-quantization", "mlir::func::FuncOp"> {
  let summary = "8-bit weights quantized at compile time, FP8 linear layers and 8-bit convs in their libraries' forms";
  let description = [{
    Runs after kiln-insert-quantization, or in any pipeline for an imported QDQ model (a module
    without Q/DQ ops stays as it is), and before kiln-form-fusion-groups. A kiln.quantize of a constant (a weight) becomes the 8-bit
    constant the interpreter computes, so no plan quantizes weights at run time. A kiln.matmul
    of two dequantized FP8 E4M3 operands, its weight a constant, both per tensor with zero
    points 0, is what Hopper's FP8 GEMMs run (cuBLASLt, TN only): its weight is stored
    transposed, [N, K], and read back through `kiln.transpose` [1, 0] after its
    kiln.dequantize, and each such matmul gets a kiln.dequantize of its input of its own, so
    kiln-form-fusion-groups can take both dequantizations into the matmul's `gemm` group (the
    8-bit GEMM's operands are then the group's inputs). A dequantized matmul that does not fit
    (int8, per-channel weights, a weight computed at run time, K or N not a multiple of 16,
    a zero point not 0) keeps its Q/DQ ops, evaluated as they are (fake quantization), with a
    remark saying why; with `drop-unfoldable` (kiln compile's fp8 plans) such a matmul whose
    operands were quantized from unquantized values reads those again instead (a fake-quantized
    GEMM is slower than the unquantized one and less accurate). A kiln.conv of two dequantized
    int8 operands or two E4M3 ones that cuDNN's INT8 or FP8 convolutions run (whyNoQuantizedConv:
    zero points 0, the input
    per tensor, a constant weight per tensor or per output channel, channels last, one group,
    C a multiple of 32 and K of 16) gets a kiln.dequantize of its input of its own, for its `conv`
    group to take; the others are remarked or, with `drop-unfoldable`, read their unquantized
    operands again; a fake-quantized conv's 8-bit constant weight folds into its float values.
    quantize(relu(dequantize(quantize(v)))) with one scale and zero point and an f32
    dequantization (onnxruntime's QDQ ReLU) becomes quantize(relu(v)), exactly, and, after the
    moves below, quantize(dequantize(q)) with one scale and zero point becomes q.
    A reshape or transpose of a per-tensor int8 or E4M3 activation's dequantization moves the
    8-bit values and is dequantized after (an imported QDQ model's conv then reads a dequantization
    where the layout pass transposed its dequantized input). Last, a per-tensor quantization with zero point 0 moves above the reshapes,
    transposes, zero paddings and (int8 only: no E4M3 max pool has run on a GPU yet) max
    pools that only it reads (exact: quantization keeps order and maps 0 to 0), so those move
    8-bit values and the quantize joins what computes theirs.
  }];
  let options = [
    Option<"dropUnfoldable", "drop-unfoldable", "bool", /*default=*/"false",
           "Matmuls and convs no 8-bit kernel runs read their unquantized operands again">,
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

def SpaceToDepthConvs : Pass<"kiln-space-to-depth-convs", "mlir::func::FuncOp"> {
  let summary = "A strided channels-last conv over few channels as a stride-1 conv over blocks";
  let description = [{
    A CNN's stem (ResNet's 7x7 stride-2 conv over 3 channels) keeps cuDNN's tensor-core
    kernels far from their peak: ResNet-50's took 24% of a batch-256 bf16 plan on an H200
    (1.9 ms), and padding the 3 channels to 4 or 8 did not help. Such a conv (channels last,
    one group, no dilation, the same stride s ≥ 2 on both axes, a kernel larger than s,
    s·s·C ≤ `max-channels`, at least `min-macs-per-pixel` multiply-adds per output pixel, a
    constant weight, H and W multiples of s) becomes a stride-1 conv
    over the image's s x s blocks: x [N, H, W, C] gathered to [N, H/s, W/s, s·s·C] (a view, a
    transpose and a view, from the channels-first image when the layout pass's transpose is all
    that reads it), zero-padded to a multiple of 8 channels (tensor cores take 8 at a time), and
    the weight rearranged at compile time into ceil-sized taps over those channels, zeros where
    no original tap lands. The sums are the same products (plus zeros). cuDNN takes one pad
    per axis: where the channels are padded, that pad kernel also pads the borders (begin and
    end apart) and the conv has none; otherwise the conv's pads are made symmetric with zero
    taps (the file comment says how). The rewrite multiplies the work (1.7x for ResNet's
    stem: 4x4 taps over 16 channels for 7x7 over 3) and
    adds a gather and a pad of the image (0.36 ms at batch 256 on an H100), so a conv with few
    multiply-adds per pixel (MobileNetV3's 3x3 to 16 channels: 432; ResNet's stem: 9408), which
    is fast enough at 3 channels, stays as it is.
  }];
  let options = [
    Option<"maxChannels", "max-channels", "int64_t", /*default=*/"16",
           "Largest s·s·C (channels of the blocked image) that is rewritten">,
    Option<"minMacsPerPixel", "min-macs-per-pixel", "int64_t", /*default=*/"4096",
           "Fewest multiply-adds per output pixel (R·S·C·K) of a conv that is rewritten">,
    Option<"inlineElements", "inline-elements", "int64_t", /*default=*/"16",
           "Rearranged weights with more elements become resource blobs">,
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

def ConvertLayout : Pass<"kiln-convert-layout", "mlir::func::FuncOp"> {
  let summary = "Channels-last 2-d convolutions and pools, with the transposes between them cancelled";
  let description = [{
    Each 2-d kiln.conv that `layout` selects becomes `transpose(x, [0,2,3,1])` → conv with
    `channels_last` → `transpose(y, [0,3,1,2])`, its weight permuted to KRSC at compile time
    (a constant, or the 8-bit constant under an imported weight's dequantization; a transpose
    otherwise). `auto` selects the convs whose input is bf16 or f16 (tensor-core convs) and an
    imported QDQ model's convs that keep 8-bit weights for 8-bit kernels (cuDNN's are NHWC),
    `nhwc` every 2-d conv, `nchw` none. The channels-first transposes
    then sink through elementwise ops (constant operands permuted at compile time), pools
    whose input is one take `channels_last` too, and transposes compose and vanish, so what
    remains are the transposes at the layout's boundaries. conv_transpose and 1-d/3-d convs
    stay channels first. A layout change is a permutation: the module means what it meant.
  }];
  let options = [
    Option<"layout", "layout", "std::string", /*default=*/"\"auto\"",
           "auto (channels last for bf16/fp16 convs), nchw (no change) or nhwc (every 2-d conv)">,
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

def FormFusionGroups : Pass<"kiln-form-fusion-groups", "mlir::func::FuncOp"> {
  let summary = "Group chains of elementwise ops into kiln.fusion_group regions";
  let description = [{
    Each elementwise op (ElementwiseMap trait) not yet in a group roots one, which absorbs its
    elementwise producers whose every use is inside the group; groups of one op are not formed.
    The group body computes f16/bf16 values in f32 and rounds once at its result (explicit
    casts in the body), which is the promise codegen's fused kernel and the interpreter keep.

    Linear layers come first: a kiln.matmul of a 2-d weight absorbs its bias row, residual and
    ReLU or tanh GELU into a `gemm` group (one cuBLASLt call with that epilogue). With
    `approximate-gelu`, an erf GELU after a bf16 linear layer (the exporters' decomposition)
    becomes a tanh GELU in that epilogue, reported in one remark; the two differ by at most
    4.7e-4, within bf16's rounding of the result. An FP8 linear layer also takes its operands'
    dequantizations and, when it is the result's only reader, the next layer's quantization.

    Channels-last convolutions absorb their bias, residual and one activation into a `conv`
    group (one cuDNN graph); an 8-bit one (INT8 or FP8) also its operands' dequantizations. Any
    of them takes the dequantization of an 8-bit residual (cloned when other ops read it) and
    the next 8-bit conv's quantization, as its only result when that is the value's only reader, or as a
    second result beside the value when other steps read it too. Layer norms form `norm`
    groups with the elementwise ops computing their input and the conversions of their result
    whose elementwise readers they take.
  }];
  let options = [
    Option<"approximateGelu", "approximate-gelu", "bool", /*default=*/"false",
           "Run erf GELUs after bf16 linear layers as the tanh GELU of the cuBLASLt epilogue">,
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

def FuseAttention : Pass<"kiln-fuse-attention", "mlir::func::FuncOp"> {
  let summary = "Scaled dot-product attention into kiln.attention";
  let description = [{
    Replaces MatMul(Q, Kᵀ) → scale by scalar constants (of the scores, or of Q and Kᵀ) →
    optional Add of a mask → Softmax over the last axis → MatMul(·, V) with one
    `kiln.attention`, absorbing the Reshape/Transpose/Gather head split and merge around it into
    the op's strided views, when the runtime's attention step accepts it (f16/bf16, head dims
    multiples of 8 up to 256, 16-byte aligned views, mask rows of 16 bytes). A pattern of that
    shape that cannot be fused is reported as a remark with the reason. Ops left dead are
    erased.
  }];
  let dependentDialects = ["kiln::KilnDialect"];
}

def PackAttentionProjections : Pass<"kiln-pack-attention-projections", "mlir::func::FuncOp"> {
  let summary = "One linear layer for the Q, K and V projections of a kiln.attention";
  let description = [{
    When the q, k and v operands of a kiln.attention are three linear layers of the same input
    (kiln.matmul by a constant 2-d weight, optionally plus a constant bias row) that nothing
    else uses, the weights (and biases) are concatenated at compile time into one matmul (and
    one bias add) and the attention reads q, k and v as views of its packed result, as it does
    for nn.MultiheadAttention's in_proj. One GEMM of N = Nq + Nk + Nv replaces three.
  }];
  let options = [
    Option<"inlineElements", "inline-elements", "int64_t", /*default=*/"16",
           "Packed constants with more elements become resource blobs">,
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

def NormalizeLinearLayers : Pass<"kiln-normalize-linear-layers", "mlir::func::FuncOp"> {
  let summary = "Linear layers as kiln.matmul of a 2-d weight in the shape their epilogue has";
  let description = [{
    Rewrites two export forms into the one kiln-form-fusion-groups takes as a linear layer:
    `kiln.gemm` with a constant B, alpha = 1, no trans_a and beta = 1 (or no C) becomes
    `kiln.matmul` by the weight (transposed at compile time when trans_b) plus a `kiln.add` of
    C; and a chain of single-use reshapes of a matmul's result that keeps rows of N moves onto
    its left operand, so the product has the shape of the residual add that follows. A
    channels-last convolution over non-overlapping patches (kernel = stride, no padding or
    dilation, one group) becomes a `kiln.matmul` of the patches (a reshape, transpose and
    reshape of the image) by the weight read as [kh·kw·C, K], plus its bias.
  }];
  let options = [
    Option<"inlineElements", "inline-elements", "int64_t", /*default=*/"16",
           "Transposed weights with more elements become resource blobs">,
  ];
  let dependentDialects = ["kiln::KilnDialect"];
}

def FoldTransposesIntoAttention : Pass<"kiln-fold-transposes-into-attention", "mlir::func::FuncOp"> {
  let summary = "Row-permuting transposes around attention's linear layers into its views";
  let description = [{
    A transpose that keeps the last axis permutes rows, and commutes with a linear layer
    (kiln.matmul by a 2-d weight plus a bias row). Before the packed Q/K/V projection of a
    kiln.attention, it moves into the attention's q/k/v views; after the out-projection of its
    result, into the attention's o_view (the attention writes its result already permuted).
    nn.MultiheadAttention's [B, S, E] <-> [S, B, E] transposes at batch > 1 disappear, and the
    residual add after the out-projection can join its epilogue. New views are checked on every
    element and against the runtime's alignment rules; otherwise nothing changes.
  }];
  let dependentDialects = ["kiln::KilnDialect"];
}

#endif // KILN_PASSES_TD
