//===- KilnOps.td - kiln dialect ops ------------------------*- tablegen -*-===//
//
// Op granularity, in one place:
//  * one op per ONNX operator meaning (Add, Conv, ReduceSum, ...), named in snake_case;
//  * Squeeze, Unsqueeze and Flatten are all `kiln.reshape`; Identity and inference Dropout are
//    elided at import; Shape, Size and ConstantOfShape fold to `kiln.constant`;
//  * ONNX inputs stay operands, ONNX attributes stay attributes, shape-only inputs live in the
//    static result type (see the dialect description).
// Ops whose result follows from operand types and attributes alone implement result-type
// inference (and so are verified against it); ops with value operands that shape the result
// (slice, pad, reductions) verify against those operands when they are constants.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_OPS_TD
#define KILN_OPS_TD

include "KilnDialect.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Types and attribute constraints
//===----------------------------------------------------------------------===//

def Kiln_FloatElement : AnyTypeOf<[F64, F32, F16, BF16, F8E4M3FN]>;
def Kiln_IntElement : AnyTypeOf<[I8, I16, I32, I64, UI8, UI16, UI32, UI64]>;
def Kiln_NumericElement : AnyTypeOf<[F64, F32, F16, BF16, F8E4M3FN,
                                     I8, I16, I32, I64, UI8, UI16, UI32, UI64]>;
def Kiln_AnyElement : AnyTypeOf<[F64, F32, F16, BF16, F8E4M3FN,
                                 I1, I8, I16, I32, I64, UI8, UI16, UI32, UI64]>;

def Kiln_Tensor : StaticShapeTensorOf<[Kiln_AnyElement]>;
def Kiln_NumericTensor : StaticShapeTensorOf<[Kiln_NumericElement]>;
def Kiln_FloatTensor : StaticShapeTensorOf<[Kiln_FloatElement]>;
def Kiln_BoolTensor : StaticShapeTensorOf<[I1]>;
def Kiln_IndexTensor : StaticShapeTensorOf<[I32, I64]>;
def Kiln_I64Tensor : StaticShapeTensorOf<[I64]>;
def Kiln_QuantTensor : StaticShapeTensorOf<[I8, UI8, I32, F8E4M3FN]>;

// A string attribute restricted to a fixed set of spellings (ONNX's string enums).
class Kiln_OneOf<list<string> values> : AttrConstraint<
  CPred<"::llvm::is_contained(::llvm::ArrayRef<::llvm::StringRef>{\"" #
        !interleave(values, "\", \"") #
        "\"}, ::llvm::cast<::mlir::StringAttr>($_self).getValue())">,
  "one of: " # !interleave(values, ", ")>;
class Kiln_StrEnum<list<string> values, string default>
  : DefaultValuedAttr<ConfinedAttr<StrAttr, [Kiln_OneOf<values>]>, "\"" # default # "\"">;

def Kiln_F32Default0 : DefaultValuedAttr<F32Attr, "0.0f">;

// The op computes result[i] from its operands' elements at the broadcast of index i alone (numpy
// broadcasting, one result): it may join an elementwise fusion group (ir/FusionGroup.cpp).
def Kiln_ElementwiseMap : NativeOpTrait<"ElementwiseMap"> {
  let cppNamespace = "::kiln::OpTrait";
}

//===----------------------------------------------------------------------===//
// Constant
//===----------------------------------------------------------------------===//

def Kiln_ConstantOp : Kiln_Op<"constant", [ConstantLike, Pure,
    AllTypesMatch<["value", "output"]>]> {
  let summary = "A constant tensor (weights, folded shapes, scalars)";
  let description = [{
    `value` is a `DenseElementsAttr` for small tensors and a `DenseResourceElementsAttr` for
    weights: their payloads live in the module's `dialect_resources` section as blobs and are
    never printed inline.

    ```mlir
    %w = kiln.constant dense_resource<conv1.weight> : tensor<64x3x7x7xf32>
    %s = kiln.constant dense<[1, 2048]> : tensor<2xi64>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$value attr-dict";
  let hasFolder = 1;
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise unary
//===----------------------------------------------------------------------===//

class Kiln_UnaryOp<string mnemonic, Type type, string summaryText, list<Trait> traits = []>
    : Kiln_Op<mnemonic, !listconcat(traits, [Pure, SameOperandsAndResultType, Kiln_ElementwiseMap])> {
  let summary = summaryText;
  let description = "Elementwise `" # mnemonic # "`; the result has the operand's type.";
  let arguments = (ins type:$input);
  let results = (outs type:$output);
  let assemblyFormat = "$input attr-dict `:` type($output)";
}

def Kiln_SqrtOp : Kiln_UnaryOp<"sqrt", Kiln_FloatTensor, "square root">;
def Kiln_ReciprocalOp : Kiln_UnaryOp<"reciprocal", Kiln_FloatTensor, "1 / x">;
def Kiln_ExpOp : Kiln_UnaryOp<"exp", Kiln_FloatTensor, "natural exponential">;
def Kiln_LogOp : Kiln_UnaryOp<"log", Kiln_FloatTensor, "natural logarithm">;
def Kiln_ErfOp : Kiln_UnaryOp<"erf", Kiln_FloatTensor, "Gauss error function">;
def Kiln_TanhOp : Kiln_UnaryOp<"tanh", Kiln_FloatTensor, "hyperbolic tangent">;
def Kiln_SigmoidOp : Kiln_UnaryOp<"sigmoid", Kiln_FloatTensor, "1 / (1 + exp(-x))">;
def Kiln_SoftplusOp : Kiln_UnaryOp<"softplus", Kiln_FloatTensor, "log(1 + exp(x))">;
def Kiln_HardSwishOp : Kiln_UnaryOp<"hard_swish", Kiln_FloatTensor,
                                    "x * max(0, min(1, x / 6 + 1 / 2))">;
def Kiln_FloorOp : Kiln_UnaryOp<"floor", Kiln_FloatTensor, "round toward -inf">;
def Kiln_CeilOp : Kiln_UnaryOp<"ceil", Kiln_FloatTensor, "round toward +inf">;
def Kiln_RoundOp : Kiln_UnaryOp<"round", Kiln_FloatTensor, "round half to even">;
def Kiln_SinOp : Kiln_UnaryOp<"sin", Kiln_FloatTensor, "sine">;
def Kiln_CosOp : Kiln_UnaryOp<"cos", Kiln_FloatTensor, "cosine">;
def Kiln_ReluOp : Kiln_UnaryOp<"relu", Kiln_NumericTensor, "max(x, 0)">;
def Kiln_NegOp : Kiln_UnaryOp<"neg", Kiln_NumericTensor, "-x">;
def Kiln_AbsOp : Kiln_UnaryOp<"abs", Kiln_NumericTensor, "|x|">;
def Kiln_SignOp : Kiln_UnaryOp<"sign", Kiln_NumericTensor, "-1, 0 or 1 by the sign of x">;
def Kiln_NotOp : Kiln_UnaryOp<"not", Kiln_BoolTensor, "logical not">;

class Kiln_FloatTestOp<string mnemonic, string summaryText, dag attrs>
    : Kiln_Op<mnemonic, [Pure, SameOperandsAndResultShape, Kiln_ElementwiseMap]> {
  let summary = summaryText;
  let description = "Elementwise test of a float; the result is i1 of the operand's shape.";
  let arguments = !con((ins Kiln_FloatTensor:$input), attrs);
  let results = (outs Kiln_BoolTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
}
def Kiln_IsNaNOp : Kiln_FloatTestOp<"is_nan", "x is NaN", (ins)>;
def Kiln_IsInfOp : Kiln_FloatTestOp<"is_inf", "x is +inf (detect_positive) or -inf (detect_negative)",
    (ins DefaultValuedAttr<BoolAttr, "true">:$detect_negative,
         DefaultValuedAttr<BoolAttr, "true">:$detect_positive)>;

class Kiln_UnaryAttrOp<string mnemonic, string summaryText, dag attrs>
    : Kiln_UnaryOp<mnemonic, Kiln_FloatTensor, summaryText> {
  let arguments = !con((ins Kiln_FloatTensor:$input), attrs);
}

def Kiln_LeakyReluOp : Kiln_UnaryAttrOp<"leaky_relu", "x if x >= 0 else alpha * x",
    (ins DefaultValuedAttr<F32Attr, "0.01f">:$alpha)>;
def Kiln_EluOp : Kiln_UnaryAttrOp<"elu", "x if x >= 0 else alpha * (exp(x) - 1)",
    (ins DefaultValuedAttr<F32Attr, "1.0f">:$alpha)>;
def Kiln_SeluOp : Kiln_UnaryAttrOp<"selu",
    "gamma * (x if x > 0 else alpha * (exp(x) - 1))",
    (ins DefaultValuedAttr<F32Attr, "1.67326319217681884765625f">:$alpha,
         DefaultValuedAttr<F32Attr, "1.05070102214813232421875f">:$gamma)>;
def Kiln_HardSigmoidOp : Kiln_UnaryAttrOp<"hard_sigmoid", "max(0, min(1, alpha * x + beta))",
    (ins DefaultValuedAttr<F32Attr, "0.2f">:$alpha, DefaultValuedAttr<F32Attr, "0.5f">:$beta)>;
def Kiln_GeluOp : Kiln_UnaryAttrOp<"gelu",
    "x * Phi(x); `approximate = \"tanh\"` uses the tanh approximation",
    (ins Kiln_StrEnum<["none", "tanh"], "none">:$approximate)>;

//===----------------------------------------------------------------------===//
// Elementwise binary and ternary with numpy broadcasting
//===----------------------------------------------------------------------===//

class Kiln_BroadcastOp<string mnemonic, Type operandType, Type resultType, string summaryText,
                       string resultElement>
    : Kiln_Op<mnemonic, [Pure, InferTypeOpAdaptor, Kiln_ElementwiseMap]> {
  let summary = summaryText;
  let description = "Elementwise `" # mnemonic # "` with numpy broadcasting; both operands "
                    # "have one element type.";
  let arguments = (ins operandType:$lhs, operandType:$rhs);
  let results = (outs resultType:$output);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(::mlir::MLIRContext *context,
        std::optional<::mlir::Location> location, Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &inferred) {
      return ::kiln::inferBroadcastResult(location, adaptor.getOperands(), }] #
        resultElement # [{, inferred);
    }
  }];
}
class Kiln_ArithOp<string mnemonic, Type type, string summaryText>
    : Kiln_BroadcastOp<mnemonic, type, type, summaryText, "::mlir::Type()">;
class Kiln_CompareOp<string mnemonic, string summaryText>
    : Kiln_BroadcastOp<mnemonic, Kiln_NumericTensor, Kiln_BoolTensor, summaryText,
                       "::mlir::IntegerType::get(context, 1)">;

def Kiln_AddOp : Kiln_ArithOp<"add", Kiln_NumericTensor, "lhs + rhs">;
def Kiln_SubOp : Kiln_ArithOp<"sub", Kiln_NumericTensor, "lhs - rhs">;
def Kiln_MulOp : Kiln_ArithOp<"mul", Kiln_NumericTensor, "lhs * rhs">;
def Kiln_DivOp : Kiln_ArithOp<"div", Kiln_NumericTensor,
                              "lhs / rhs (integer division truncates toward zero)">;
def Kiln_PowOp : Kiln_BroadcastOp<"pow", Kiln_NumericTensor, Kiln_NumericTensor,
    "lhs ** rhs; the exponent may have another element type, the result has the base's",
    "::kiln::elementOfFirst(adaptor.getOperands())"> {
  let description = [{
    `lhs ** rhs` with numpy broadcasting, computed in f64 from both operands' values and
    stored in the base's element type (ONNX Pow: an int base with a float exponent stays int).
  }];
}
def Kiln_MinOp : Kiln_ArithOp<"min", Kiln_NumericTensor, "elementwise minimum (NaN wins)">;
def Kiln_MaxOp : Kiln_ArithOp<"max", Kiln_NumericTensor, "elementwise maximum (NaN wins)">;
def Kiln_ModOp : Kiln_ArithOp<"mod", Kiln_NumericTensor,
    "remainder: with the divisor's sign, or C fmod (the dividend's sign) with `fmod`"> {
  let arguments = (ins Kiln_NumericTensor:$lhs, Kiln_NumericTensor:$rhs,
                       DefaultValuedAttr<BoolAttr, "false">:$fmod);
}
def Kiln_PReluOp : Kiln_ArithOp<"prelu", Kiln_NumericTensor,
                                "lhs if lhs >= 0 else rhs * lhs (rhs is the slope)">;
def Kiln_AndOp : Kiln_ArithOp<"and", Kiln_BoolTensor, "logical and">;
def Kiln_OrOp : Kiln_ArithOp<"or", Kiln_BoolTensor, "logical or">;
def Kiln_XorOp : Kiln_ArithOp<"xor", Kiln_BoolTensor, "logical xor">;
def Kiln_EqualOp : Kiln_CompareOp<"equal", "lhs == rhs">;
def Kiln_LessOp : Kiln_CompareOp<"less", "lhs < rhs">;
def Kiln_LessEqualOp : Kiln_CompareOp<"less_equal", "lhs <= rhs">;
def Kiln_GreaterOp : Kiln_CompareOp<"greater", "lhs > rhs">;
def Kiln_GreaterEqualOp : Kiln_CompareOp<"greater_equal", "lhs >= rhs">;

def Kiln_WhereOp : Kiln_Op<"where", [Pure, InferTypeOpAdaptor, Kiln_ElementwiseMap]> {
  let summary = "condition ? x : y, with numpy broadcasting of all three";
  let arguments = (ins Kiln_BoolTensor:$condition, Kiln_Tensor:$x, Kiln_Tensor:$y);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$condition `,` $x `,` $y attr-dict `:` functional-type(operands, results)";
}

def Kiln_ClipOp : Kiln_Op<"clip", [Pure, InferTypeOpAdaptor, Kiln_ElementwiseMap]> {
  let summary = "min(max(x, min), max)";
  let description = [{
    `min` and `max` are rank-0 tensors of x's element type (operands, as in ONNX, so they may
    be computed); the importer supplies the type's lowest/highest value for a missing bound.
  }];
  let arguments = (ins Kiln_NumericTensor:$input, Kiln_NumericTensor:$min, Kiln_NumericTensor:$max);
  let results = (outs Kiln_NumericTensor:$output);
  let assemblyFormat = "$input `,` $min `,` $max attr-dict `:` functional-type(operands, results)";
}

def Kiln_CastOp : Kiln_Op<"cast", [Pure, SameOperandsAndResultShape, Kiln_ElementwiseMap]> {
  let summary = "element type conversion";
  let description = [{
    Converts each element to the result's element type with ONNX Cast semantics: float to
    integer truncates toward zero, to bool is `x != 0`; `saturate` clamps out-of-range values
    when converting to f8E4M3FN (otherwise they become NaN).
  }];
  let arguments = (ins Kiln_Tensor:$input, DefaultValuedAttr<BoolAttr, "true">:$saturate);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($output)";
  // Identity casts, lossless cast chains and casts of constants fold (ir/CastFolding.cpp).
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Convolution, pooling and normalization (NCHW, or channels last where an op says
// `channels_last`; spatial rank 1 to 3)
//===----------------------------------------------------------------------===//

def Kiln_ConvOp : Kiln_Op<"conv", [Pure, InferTypeOpAdaptor]> {
  let summary = "N-d convolution with groups, dilation and explicit padding";
  let description = [{
    Input `[N, C, D1..Dk]`, weight `[M, C/group, K1..Kk]`, optional bias `[M]`. `pads` holds the
    begin pads of every spatial axis, then the end pads (ONNX order); `auto_pad` is resolved at
    import. With `channels_last` (set by kiln-convert-layout) the channel axis is last
    everywhere: input `[N, D1..Dk, C]`, weight `[M, K1..Kk, C/group]` (KRSC), output
    `[N, D1..Dk, M]`; the arithmetic is the same.
  }];
  let arguments = (ins Kiln_FloatTensor:$input, Kiln_FloatTensor:$weight,
                       Optional<Kiln_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                       DenseI64ArrayAttr:$pads, DefaultValuedAttr<I64Attr, "1">:$group,
                       DefaultValuedAttr<BoolAttr, "false">:$channels_last);
  let results = (outs Kiln_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
}

def Kiln_ConvTransposeOp : Kiln_Op<"conv_transpose", [Pure, InferTypeOpAdaptor]> {
  let summary = "N-d transposed convolution (the gradient of conv)";
  let description = [{
    Input `[N, C, D1..Dk]`, weight `[C, M/group, K1..Kk]`, optional bias `[M]`. Output size per
    axis: `stride * (in - 1) + output_padding + ((K - 1) * dilation + 1) - pad_begin - pad_end`.
    ONNX's `output_shape` and `auto_pad` are resolved into `pads` at import.
  }];
  let arguments = (ins Kiln_FloatTensor:$input, Kiln_FloatTensor:$weight,
                       Optional<Kiln_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                       DenseI64ArrayAttr:$pads, DenseI64ArrayAttr:$output_padding,
                       DefaultValuedAttr<I64Attr, "1">:$group);
  let results = (outs Kiln_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
}

class Kiln_PoolOp<string mnemonic, string summaryText, dag extraAttrs,
                  Type type = Kiln_FloatTensor>
    : Kiln_Op<mnemonic, [Pure, InferTypeOpAdaptor]> {
  let summary = summaryText;
  let description = [{
    Sliding window over the spatial axes of `[N, C, D1..Dk]` (`[N, D1..Dk, C]` with
    `channels_last`). `pads` is begin pads then end pads; with `ceil_mode` the output size
    rounds up, and a window that would start in the end padding is dropped (ONNX semantics).
  }];
  let arguments = !con((ins type:$input, DenseI64ArrayAttr:$kernel_shape,
                            DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                            DenseI64ArrayAttr:$pads,
                            DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                            DefaultValuedAttr<BoolAttr, "false">:$channels_last), extraAttrs);
  let results = (outs type:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}
def Kiln_MaxPoolOp : Kiln_PoolOp<"max_pool", "max pooling", (ins),
    StaticShapeTensorOf<[Kiln_FloatElement, I8, UI8]>>;
def Kiln_AvgPoolOp : Kiln_PoolOp<"avg_pool", "average pooling",
    (ins DefaultValuedAttr<BoolAttr, "false">:$count_include_pad)>;

class Kiln_GlobalPoolOp<string mnemonic, string summaryText>
    : Kiln_Op<mnemonic, [Pure, InferTypeOpAdaptor]> {
  let summary = summaryText;
  let description = [{
    Pools all spatial axes of `[N, C, D1..Dk]` into `[N, C, 1..1]`; with `channels_last`,
    `[N, D1..Dk, C]` into `[N, 1..1, C]`.
  }];
  let arguments = (ins Kiln_FloatTensor:$input,
                       DefaultValuedAttr<BoolAttr, "false">:$channels_last);
  let results = (outs Kiln_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}
def Kiln_GlobalAvgPoolOp : Kiln_GlobalPoolOp<"global_avg_pool", "mean over spatial axes">;
def Kiln_GlobalMaxPoolOp : Kiln_GlobalPoolOp<"global_max_pool", "max over spatial axes">;

def Kiln_BatchNormOp : Kiln_Op<"batch_norm", [Pure, InferTypeOpAdaptor]> {
  let summary = "inference batch normalization over axis 1";
  let description = "`(x - mean) / sqrt(var + epsilon) * scale + bias`, each of shape `[C]`.";
  let arguments = (ins Kiln_FloatTensor:$input, Kiln_FloatTensor:$scale, Kiln_FloatTensor:$bias,
                       Kiln_FloatTensor:$mean, Kiln_FloatTensor:$variance,
                       DefaultValuedAttr<F32Attr, "1e-5f">:$epsilon);
  let results = (outs Kiln_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $scale `,` $bias `,` $mean `,` $variance attr-dict `:`
    functional-type(operands, results)
  }];
}

def Kiln_InstanceNormOp : Kiln_Op<"instance_norm", [Pure, InferTypeOpAdaptor]> {
  let summary = "normalization over the spatial axes of each (n, c)";
  let description = "Mean and variance per `(n, c)`; `scale` and `bias` have shape `[C]`.";
  let arguments = (ins Kiln_FloatTensor:$input, Kiln_FloatTensor:$scale, Kiln_FloatTensor:$bias,
                       DefaultValuedAttr<F32Attr, "1e-5f">:$epsilon);
  let results = (outs Kiln_FloatTensor:$output);
  let assemblyFormat = "$input `,` $scale `,` $bias attr-dict `:` functional-type(operands, results)";
}

def Kiln_LayerNormOp : Kiln_Op<"layer_norm", [Pure, InferTypeOpAdaptor]> {
  let summary = "normalization over the axes from `axis` to the last";
  let description = [{
    Mean and variance over axes `[axis, rank)`; `scale` and optional `bias` broadcast to
    those trailing axes. `axis` is normalized to be non-negative at import.
  }];
  let arguments = (ins Kiln_FloatTensor:$input, Kiln_FloatTensor:$scale,
                       Optional<Kiln_FloatTensor>:$bias,
                       I64Attr:$axis, DefaultValuedAttr<F32Attr, "1e-5f">:$epsilon);
  let results = (outs Kiln_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $scale (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
}

def Kiln_GroupNormOp : Kiln_Op<"group_norm", [Pure, InferTypeOpAdaptor]> {
  let summary = "normalization over groups of channels";
  let description = [{
    Channels split into `num_groups` groups; mean and variance per `(n, group)` over the
    group's channels and all spatial axes; `scale` and `bias` are per channel `[C]`.
  }];
  let arguments = (ins Kiln_FloatTensor:$input, Kiln_FloatTensor:$scale, Kiln_FloatTensor:$bias,
                       I64Attr:$num_groups, DefaultValuedAttr<F32Attr, "1e-5f">:$epsilon);
  let results = (outs Kiln_FloatTensor:$output);
  let assemblyFormat = "$input `,` $scale `,` $bias attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Matrix products, softmax
//===----------------------------------------------------------------------===//

def Kiln_MatMulOp : Kiln_Op<"matmul", [Pure, InferTypeOpAdaptor]> {
  let summary = "numpy matmul: batched, with broadcast batch axes and 1-d promotion";
  let arguments = (ins Kiln_NumericTensor:$lhs, Kiln_NumericTensor:$rhs);
  let results = (outs Kiln_NumericTensor:$output);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}

def Kiln_GemmOp : Kiln_Op<"gemm", [Pure, InferTypeOpAdaptor]> {
  let summary = "alpha * op(A) * op(B) + beta * C for 2-d A and B";
  let description = "`op` transposes when `trans_a`/`trans_b`; C broadcasts to `[M, N]`.";
  let arguments = (ins Kiln_NumericTensor:$a, Kiln_NumericTensor:$b,
                       Optional<Kiln_NumericTensor>:$c,
                       DefaultValuedAttr<F32Attr, "1.0f">:$alpha,
                       DefaultValuedAttr<F32Attr, "1.0f">:$beta,
                       DefaultValuedAttr<BoolAttr, "false">:$trans_a,
                       DefaultValuedAttr<BoolAttr, "false">:$trans_b);
  let results = (outs Kiln_NumericTensor:$output);
  let assemblyFormat = "$a `,` $b (`,` $c^)? attr-dict `:` functional-type(operands, results)";
}

def Kiln_EinsumOp : Kiln_Op<"einsum", [Pure, InferTypeOpAdaptor]> {
  let summary = "Einstein summation over explicit or implicit output labels";
  let description = "`equation` as in numpy.einsum, including `...` for broadcast axes.";
  let arguments = (ins Variadic<Kiln_NumericTensor>:$inputs, StrAttr:$equation);
  let results = (outs Kiln_NumericTensor:$output);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
}

class Kiln_SoftmaxOp<string mnemonic, string summaryText>
    : Kiln_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = summaryText;
  let description = "Along one non-negative `axis` (ONNX opset 13 semantics).";
  let arguments = (ins Kiln_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Kiln_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($output)";
  let hasVerifier = 1;
}
def Kiln_SoftmaxOp : Kiln_SoftmaxOp<"softmax", "exp(x) / sum(exp(x)) along axis">;
def Kiln_LogSoftmaxOp : Kiln_SoftmaxOp<"log_softmax", "log(softmax(x)) along axis">;

def Kiln_AttentionOp : Kiln_Op<"attention", [Pure]> {
  let summary = "fused scaled dot-product attention over strided views of its operands";
  let description = [{
    `O[b,h,i,:] = sum_j softmax_j(scale * Q[b,h,i,:].K[b,h,j,:] + mask[b,h,i,j]) * V[b,h,j,:]`,
    with `dims = [B, H, Sq, Skv, D, Dv]`: Q is `[B, H, Sq, D]`, K `[B, H, Skv, D]`, V
    `[B, H, Skv, Dv]`, the additive mask (optional) `[B, H, Sq, Skv]` and O `[B, H, Sq, Dv]`.
    With `causal`, key j is visible to query i only when j <= i (top-left aligned).

    Layouts are views, not copies: each operand is the tensor the exporter's head split starts
    from, read through `<role>_view = [offset, s_b, s_h, s_s, s_d]` (elements of the operand's
    row-major storage), and the result is the tensor after the head merge, written through
    `o_view`. So `[B, S, H, D]` tensors (BERT's Reshape), `[S, B, H*D]` projections and Q, K, V
    packed in one in_proj output (ViT's MultiheadAttention, a different `offset` each) need no
    transpose or slice; a mask stride of 0 broadcasts. The result view covers every element of
    the result exactly once. This is the runtime's `AttentionStep` (runtime/plan/Plan.h) as an
    op; kiln-fuse-attention only forms it where that step accepts it (f16/bf16, head dims
    multiples of 8 up to 256, 16-byte aligned views).

    Rounding promise: the scores, the softmax and the weighted sum are computed in f32 or wider
    (the interpreter: f64) from the operands as stored, and the result is rounded once to the
    element type. The GPU step additionally rounds the unnormalized probabilities to the element
    type before they multiply V (every flash-attention kernel does), so it agrees with the
    interpreter within that rounding; the unfused ops round Q·Kᵀ, the scaled scores and the
    probabilities each, so fused and unfused half-precision results differ by those roundings.
    A query row whose scores are all -inf (every key masked) gives NaN, as softmax does.
  }];
  let arguments = (ins Kiln_FloatTensor:$q, Kiln_FloatTensor:$k, Kiln_FloatTensor:$v,
                       Optional<Kiln_FloatTensor>:$mask,
                       DenseI64ArrayAttr:$dims,
                       F32Attr:$scale,
                       DefaultValuedAttr<BoolAttr, "false">:$causal,
                       DenseI64ArrayAttr:$q_view, DenseI64ArrayAttr:$k_view,
                       DenseI64ArrayAttr:$v_view, DenseI64ArrayAttr:$o_view,
                       OptionalAttr<DenseI64ArrayAttr>:$mask_view);
  let results = (outs Kiln_FloatTensor:$output);
  let assemblyFormat = "$q `,` $k `,` $v (`,` $mask^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The logical [b, h, s, d] dims of a role: "q", "k", "v", "o" or "mask".
    std::array<int64_t, 4> viewDims(llvm::StringRef role);
  }];
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Kiln_ReshapeOp : Kiln_Op<"reshape", [Pure]> {
  let summary = "row-major reinterpretation to the result's static shape";
  let description = "Also stands for ONNX Squeeze, Unsqueeze and Flatten.";
  let arguments = (ins Kiln_Tensor:$input);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($output)";
  let hasVerifier = 1;
}

def Kiln_TransposeOp : Kiln_Op<"transpose", [Pure, InferTypeOpAdaptor]> {
  let summary = "permutes axes: output axis i is input axis perm[i]";
  let description = [{
    Canonicalizes to `kiln.reshape` when the axes of size greater than one keep their order
    (the permutation only moves unit axes, as torch's MultiheadAttention [S, B, E] <-> [B, S, E]
    transposes do at batch 1): the bytes do not move, so no kernel is needed.
  }];
  let arguments = (ins Kiln_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasCanonicalizer = 1;
}

def Kiln_ConcatOp : Kiln_Op<"concat", [Pure, InferTypeOpAdaptor]> {
  let summary = "joins tensors along a non-negative axis";
  let arguments = (ins Variadic<Kiln_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
}

def Kiln_SplitOp : Kiln_Op<"split", [Pure]> {
  let summary = "splits a tensor along an axis; result sizes give the split sizes";
  let arguments = (ins Kiln_Tensor:$input, I64Attr:$axis);
  let results = (outs Variadic<Kiln_Tensor>:$outputs);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Kiln_SliceOp : Kiln_Op<"slice", [Pure]> {
  let summary = "strided slice (ONNX Slice: starts, ends, axes, steps as 1-d operands)";
  let description = [{
    `starts`, `ends`, `axes` and `steps` are 1-d integer tensors of one length, with ONNX's
    clamping of out-of-range and negative values. When they are constants the result shape is
    verified against them.
  }];
  let arguments = (ins Kiln_Tensor:$input, Kiln_IndexTensor:$starts, Kiln_IndexTensor:$ends,
                       Kiln_IndexTensor:$axes, Kiln_IndexTensor:$steps);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = [{
    $input `,` $starts `,` $ends `,` $axes `,` $steps attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Kiln_GatherOp : Kiln_Op<"gather", [Pure, InferTypeOpAdaptor]> {
  let summary = "takes slices of `input` along `axis` at `indices` (negative wraps)";
  let description = [{
    Canonicalization: a gather at the constant indices 0, 1, ..., n - 1 (in order, n the size
    of `axis`) moves every slice to where it already is: a kiln.reshape (a view). BERT's export
    gathers its flattened attention mask this way.
  }];
  let arguments = (ins Kiln_Tensor:$input, Kiln_IndexTensor:$indices, I64Attr:$axis);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasCanonicalizer = 1;
}

def Kiln_GatherElementsOp : Kiln_Op<"gather_elements", [Pure, InferTypeOpAdaptor]> {
  let summary = "output[i][j] = input[index[i][j]][j] along `axis`";
  let arguments = (ins Kiln_Tensor:$input, Kiln_IndexTensor:$indices, I64Attr:$axis);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input `,` $indices attr-dict `:` functional-type(operands, results)";
}

def Kiln_GatherNDOp : Kiln_Op<"gather_nd", [Pure, InferTypeOpAdaptor]> {
  let summary = "gathers slices of `input` at the index tuples in the last axis of `indices`";
  let description = [{
    ONNX GatherND: the first `batch_dims` axes of input and indices are batch axes; each
    index tuple (the last axis of `indices`, i64) addresses the next axes of `input`. Result
    shape: `indices.shape[:-1] + input.shape[batch_dims + indices.shape[-1]:]`.
  }];
  let arguments = (ins Kiln_Tensor:$input, Kiln_I64Tensor:$indices,
                       DefaultValuedAttr<I64Attr, "0">:$batch_dims);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input `,` $indices attr-dict `:` functional-type(operands, results)";
}

def Kiln_ExpandOp : Kiln_Op<"expand", [Pure]> {
  let summary = "numpy broadcast of the input to the result's static shape";
  let description = [{
    Canonicalization: an expand to the input's own shape is its input, and an elementwise op
    with numpy broadcasting (kiln.add, kiln.where, ...) reads the expand's input instead when
    its result keeps its shape, so the broadcast is never written out as a tensor.
  }];
  let arguments = (ins Kiln_Tensor:$input);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($output)";
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Kiln_TileOp : Kiln_Op<"tile", [Pure]> {
  let summary = "repeats the input; the repeat count per axis is result dim / input dim";
  let arguments = (ins Kiln_Tensor:$input);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($output)";
  let hasVerifier = 1;
}

def Kiln_PadOp : Kiln_Op<"pad", [Pure]> {
  let summary = "pads with a constant, reflection, edge or wrap values";
  let description = [{
    `pads` is a 1-d i64 tensor of length 2 * rank (begins, then ends; negative values crop);
    `value` is the rank-0 padding value for `constant` mode.
  }];
  let arguments = (ins Kiln_Tensor:$input, Kiln_I64Tensor:$pads, Kiln_Tensor:$value,
                       Kiln_StrEnum<["constant", "reflect", "edge", "wrap"], "constant">:$mode);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input `,` $pads `,` $value attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Kiln_RangeOp : Kiln_Op<"range", [Pure]> {
  let summary = "start + i * delta for i in [0, n), n = max(ceil((limit - start) / delta), 0)";
  let arguments = (ins Kiln_NumericTensor:$start, Kiln_NumericTensor:$limit,
                       Kiln_NumericTensor:$delta);
  let results = (outs Kiln_NumericTensor:$output);
  let assemblyFormat = "$start `,` $limit `,` $delta attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Kiln_TriluOp : Kiln_Op<"trilu", [Pure, AllTypesMatch<["input", "output"]>]> {
  let summary = "keeps the upper (or lower) triangle of the last two axes";
  let description = "`k` is a rank-0 i64 diagonal offset (an operand, as in ONNX).";
  let arguments = (ins Kiln_Tensor:$input, Kiln_I64Tensor:$k,
                       DefaultValuedAttr<BoolAttr, "true">:$upper);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input `,` $k attr-dict `:` type($input) `,` type($k)";
  let hasVerifier = 1;
}

def Kiln_TopKOp : Kiln_Op<"topk", [Pure]> {
  let summary = "k largest (or smallest) values along an axis and their i64 indices";
  let description = "k is the size of the results along `axis`.";
  let arguments = (ins Kiln_NumericTensor:$input, I64Attr:$axis,
                       DefaultValuedAttr<BoolAttr, "true">:$largest,
                       DefaultValuedAttr<BoolAttr, "true">:$sorted);
  let results = (outs Kiln_NumericTensor:$values, Kiln_I64Tensor:$indices);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Kiln_DepthToSpaceOp : Kiln_Op<"depth_to_space", [Pure, InferTypeOpAdaptor]> {
  let summary = "moves channel blocks into spatial blocks (DCR or CRD order)";
  let arguments = (ins Kiln_Tensor:$input, I64Attr:$blocksize,
                       Kiln_StrEnum<["DCR", "CRD"], "DCR">:$mode);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Kiln_SpaceToDepthOp : Kiln_Op<"space_to_depth", [Pure, InferTypeOpAdaptor]> {
  let summary = "moves spatial blocks into channels";
  let arguments = (ins Kiln_Tensor:$input, I64Attr:$blocksize);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Kiln_ResizeOp : Kiln_Op<"resize", [Pure, AttrSizedOperandSegments]> {
  let summary = "nearest, linear or cubic resampling to the result's static shape";
  let description = [{
    The output size is the result type. `scales` (1-d f32, one per axis), when present, is the
    scale ONNX's coordinate transforms use; without it the scale is output / input size. `roi`
    (1-d, begins then ends) serves `tf_crop_and_resize`.
  }];
  let arguments = (ins Kiln_FloatTensor:$input, Optional<StaticShapeTensorOf<[F32]>>:$scales,
      Optional<Kiln_FloatTensor>:$roi,
      Kiln_StrEnum<["nearest", "linear", "cubic"], "nearest">:$mode,
      Kiln_StrEnum<["half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                    "asymmetric", "tf_crop_and_resize", "tf_half_pixel_for_nn"],
                   "half_pixel">:$coordinate_transformation_mode,
      Kiln_StrEnum<["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"],
                   "round_prefer_floor">:$nearest_mode,
      DefaultValuedAttr<F32Attr, "-0.75f">:$cubic_coeff_a,
      DefaultValuedAttr<BoolAttr, "false">:$exclude_outside,
      DefaultValuedAttr<F32Attr, "0.0f">:$extrapolation_value);
  let results = (outs Kiln_FloatTensor:$output);
  let assemblyFormat = [{
    $input (`scales` $scales^)? (`roi` $roi^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Reductions and scans
//===----------------------------------------------------------------------===//

class Kiln_ReduceOp<string mnemonic, string summaryText>
    : Kiln_Op<mnemonic, [Pure]> {
  let summary = summaryText;
  let description = [{
    Reduces over `axes` (an optional 1-d i64 operand, as in ONNX opset 18). Without axes, or
    with empty axes, all axes are reduced unless `noop_with_empty_axes`. When axes is a
    constant, the result shape is verified against it.
  }];
  let arguments = (ins Kiln_NumericTensor:$input, Optional<Kiln_I64Tensor>:$axes,
                       DefaultValuedAttr<BoolAttr, "true">:$keepdims,
                       DefaultValuedAttr<BoolAttr, "false">:$noop_with_empty_axes);
  let results = (outs Kiln_NumericTensor:$output);
  let assemblyFormat = "$input (`axes` $axes^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}
def Kiln_ReduceMeanOp : Kiln_ReduceOp<"reduce_mean", "mean">;
def Kiln_ReduceSumOp : Kiln_ReduceOp<"reduce_sum", "sum">;
def Kiln_ReduceMaxOp : Kiln_ReduceOp<"reduce_max", "maximum">;
def Kiln_ReduceMinOp : Kiln_ReduceOp<"reduce_min", "minimum">;
def Kiln_ReduceProdOp : Kiln_ReduceOp<"reduce_prod", "product">;
def Kiln_ReduceL1Op : Kiln_ReduceOp<"reduce_l1", "sum of absolute values">;
def Kiln_ReduceL2Op : Kiln_ReduceOp<"reduce_l2", "square root of the sum of squares">;
def Kiln_ReduceSumSquareOp : Kiln_ReduceOp<"reduce_sum_square", "sum of squares">;
def Kiln_ReduceLogSumOp : Kiln_ReduceOp<"reduce_log_sum", "log of the sum">;
def Kiln_ReduceLogSumExpOp : Kiln_ReduceOp<"reduce_log_sum_exp", "log of the sum of exp">;

class Kiln_ArgOp<string mnemonic, string summaryText>
    : Kiln_Op<mnemonic, [Pure, InferTypeOpAdaptor]> {
  let summary = summaryText;
  let description = "i64 index along `axis`; ties pick the first (or last with `select_last_index`).";
  let arguments = (ins Kiln_NumericTensor:$input, I64Attr:$axis,
                       DefaultValuedAttr<BoolAttr, "true">:$keepdims,
                       DefaultValuedAttr<BoolAttr, "false">:$select_last_index);
  let results = (outs Kiln_I64Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}
def Kiln_ArgMaxOp : Kiln_ArgOp<"argmax", "index of the maximum">;
def Kiln_ArgMinOp : Kiln_ArgOp<"argmin", "index of the minimum">;

def Kiln_CumSumOp : Kiln_Op<"cumsum", [Pure, AllTypesMatch<["input", "output"]>]> {
  let summary = "cumulative sum along `axis` (a rank-0 integer operand, as in ONNX)";
  let arguments = (ins Kiln_NumericTensor:$input, Kiln_IndexTensor:$axis,
                       DefaultValuedAttr<BoolAttr, "false">:$exclusive,
                       DefaultValuedAttr<BoolAttr, "false">:$reverse);
  let results = (outs Kiln_NumericTensor:$output);
  let assemblyFormat = "$input `,` $axis attr-dict `:` type($input) `,` type($axis)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Quantization
//===----------------------------------------------------------------------===//

def Kiln_QuantizeOp : Kiln_Op<"quantize", [Pure]> {
  let summary = "saturate(round_half_even(x / scale) + zero_point)";
  let description = [{
    Per-tensor when `scale` is rank 0 (or has one element), per-axis when `scale` is 1-d with
    the size of `axis`. `zero_point` has the result's element type (i8, u8 or f8E4M3FN).
  }];
  let arguments = (ins Kiln_FloatTensor:$input, Kiln_FloatTensor:$scale, Kiln_QuantTensor:$zero_point,
                       DefaultValuedAttr<I64Attr, "1">:$axis,
                       DefaultValuedAttr<BoolAttr, "true">:$saturate);
  let results = (outs Kiln_QuantTensor:$output);
  let assemblyFormat = [{
    $input `,` $scale `,` $zero_point attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Kiln_DequantizeOp : Kiln_Op<"dequantize", [Pure]> {
  let summary = "(x - zero_point) * scale";
  let description = "Per-tensor or per-axis as for `kiln.quantize`.";
  let arguments = (ins Kiln_QuantTensor:$input, Kiln_FloatTensor:$scale, Kiln_QuantTensor:$zero_point,
                       DefaultValuedAttr<I64Attr, "1">:$axis);
  let results = (outs Kiln_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $scale `,` $zero_point attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Fusion groups
//===----------------------------------------------------------------------===//

def Kiln_FusionGroupOp : Kiln_Op<"fusion_group", [Pure, IsolatedFromAbove, SingleBlock]> {
  let summary = "ops that run as one step: a generated kernel or a library call with its epilogue";
  let description = [{
    Formed by `kiln-form-fusion-groups` the way IREE forms dispatch regions. The body is one
    block whose arguments are the group's inputs (same types, in order) and which ends in
    `kiln.yield` of the group's results (one, except for `norm` groups). The group is isolated
    from above: constants it reads are inputs, so codegen sees every tensor a step touches as
    an operand.

    `kind` says what the group may hold and how codegen runs it:
     * `elementwise`: ops with the ElementwiseMap trait only, one result, every value's shape
       broadcasting to the result's; one generated kernel computes the whole expression per
       result element.
     * `gemm`: one `kiln.matmul` of a 2-d right operand (a linear layer's weight) and its
       epilogue, in this order: `kiln.add` of a bias row (`[N]`) and/or of a residual of the
       result's shape, then at most one `kiln.relu` or tanh `kiln.gelu`, then the rounding
       cast; one cuBLASLt matmul with its bias/activation epilogue and the residual as C.
       An 8-bit GEMM starts with `kiln.dequantize` of its input and of its weight, stored
       `[N, K]` and read through `kiln.transpose` [1, 0] (kiln-fold-quantization), and may end
       in a per-tensor `kiln.quantize` to f8E4M3FN (its consumer's: the scaled FP8 result).
     * `conv`: one `channels_last` 2-d `kiln.conv` and its epilogue: `kiln.add` of a bias row
       (`[M]`, when the conv has no bias operand) and/or of a residual of the result's shape,
       then at most one of `kiln.relu`, `kiln.clip` (constant bounds), `kiln.sigmoid`,
       `kiln.hard_sigmoid`, `kiln.hard_swish`, then the rounding cast; one cuDNN graph
       (convolution and pointwise epilogue, fp32 inside).
     * `norm`: one `kiln.layer_norm` whose scale and bias are group inputs, the elementwise
       ops computing its input before it (the prologue: a residual sum) and elementwise ops
       reading its result after it (the epilogue: casts, a per-tensor `kiln.quantize`), which
       do not read prologue values. It may have several results, each a value of the
       layer_norm's shape the body computes (the normalized value and its conversions, say);
       one generated kernel normalizes each row and stores every result element.
     * `gather`: one chain from the group's first input: elementwise ops (each reading the
       chain's value and otherwise only one-element constants), then index maps, at least one
       not a reshape: `kiln.reshape`, `kiln.transpose`, and `kiln.pad` in constant mode with
       constant non-negative pads and a constant value. Every op keeps its own types (no
       widening: each computes what it computes alone). One generated kernel finds, for each
       result element, the input element the index maps take it from (or the pad value) and
       applies the elementwise ops to it: an image's cast, space-to-depth transpose and
       channel pad in one pass over memory.
     * `pool`: one `kiln.max_pool` or `kiln.avg_pool` with `channels_last`, reading the group's
       first input, then a chain of elementwise ops of its result's shape, each reading the
       chain's value and otherwise only one-element constants (a per-tensor `kiln.quantize`, a
       cast). Every op keeps its own types, as in a gather group: the pool rounds its value to
       its own type, then the chain converts it. One generated kernel pools each output
       element and writes the chain's value: a bf16 max pool and the int8 or E4M3
       quantization of its result (ResNet's stem) in one pass over memory.

    Rounding (all but gather and pool groups): inside a group every computed value stays in
    fp32 (f64 and integers in their own type); values of f16/bf16 are widened by explicit
    `kiln.cast`s at the group's inputs and rounded once by a `kiln.cast` before `kiln.yield`. A
    `kiln.cast` to a narrow type inside the body still rounds, as a cast does anywhere. The
    body states this in types, so the interpreter evaluating it gives exactly what the fused
    kernel computes.

    ```mlir
    %r = kiln.fusion_group "elementwise" (%x, %b) : (tensor<2x8xbf16>, tensor<8xbf16>) -> tensor<2x8xbf16> {
    ^bb0(%a0: tensor<2x8xbf16>, %a1: tensor<8xbf16>):
      %w0 = kiln.cast %a0 : tensor<2x8xbf16> to tensor<2x8xf32>
      %w1 = kiln.cast %a1 : tensor<8xbf16> to tensor<8xf32>
      %s = kiln.add %w0, %w1 : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
      %t = kiln.relu %s : tensor<2x8xf32>
      %n = kiln.cast %t : tensor<2x8xf32> to tensor<2x8xbf16>
      kiln.yield %n : tensor<2x8xbf16>
    }
    ```
  }];
  let arguments = (ins ConfinedAttr<StrAttr, [Kiln_OneOf<["elementwise", "gemm", "conv", "norm", "gather", "pool"]>]>:$kind,
                       Variadic<Kiln_Tensor>:$inputs);
  let results = (outs Variadic<Kiln_Tensor>:$outputs);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $kind `(` $inputs `)` attr-dict `:` functional-type($inputs, results) $body
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The matmul of a gemm group (the op codegen lowers the group around); null for other kinds.
    ::mlir::Operation *getMatmul();
    /// The convolution of a conv group; null for other kinds.
    ::mlir::Operation *getConv();
  }];
}

def Kiln_YieldOp : Kiln_Op<"yield", [Pure, Terminator, HasParent<"FusionGroupOp">]> {
  let summary = "the results of a fusion group";
  let arguments = (ins Variadic<Kiln_Tensor>:$values);
  let assemblyFormat = "$values attr-dict `:` type($values)";
}

#endif // KILN_OPS_TD
