//===- GemmGroupLowering.cpp - a gemm fusion group as one cuBLASLt matmul --===//
//
// A `gemm` kiln.fusion_group (passes/FormFusionGroups.cpp) is a matmul of a 2-d weight and the
// epilogue cuBLASLt runs in the same call:
//   D = act(A x B + C + bias)       (C: a residual of D's shape, bias: one row of N)
// The body computes this in f32 from widened inputs and rounds once, which is what cuBLASLt does
// with fp32 compute: accumulate, add C and the bias, apply the activation, round to D's type.
// Here the body is read back into one GemmStep: each body value is traced to the group input it
// widens, and every step operand is that input's buffer.
//
//===----------------------------------------------------------------------===//

#include "codegen/OpDescription.h"
#include "codegen/PlanBuilderImpl.h"

#include "ir/Interpreter/Tensor.h"
#include "ir/KilnOps.h"

namespace kiln::codegen {

llvm::Expected<unsigned> groupInputOf(FusionGroupOp group, mlir::Value value) {
  if (auto cast = value.getDefiningOp<CastOp>())
    value = cast.getInput();
  if (auto argument = llvm::dyn_cast<mlir::BlockArgument>(value))
    if (argument.getOwner() == &group.getBody().front())
      return argument.getArgNumber();
  return opError(group, "internal: a " + group.getKind() +
                            " group's library call or epilogue reads a value computed inside the group");
}

llvm::Expected<std::vector<double>> groupConstantFloats(FusionGroupOp group, mlir::Value value) {
  auto index = groupInputOf(group, value);
  if (!index)
    return index.takeError();
  auto constant = group.getInputs()[*index].getDefiningOp<ConstantOp>();
  auto values = constant ? interp::fromAttr(constant.getValue())
                         : llvm::Expected<interp::Tensor>(opError(group, "an 8-bit layer's scale must be a constant"));
  if (!values)
    return values.takeError();
  if (!values->isFloat())
    return opError(group, "an 8-bit layer's scale must be a float constant");
  return values->f;
}

namespace {

/// The value of the one-element constant a group input `value` (or its widening cast) is.
llvm::Expected<double> groupConstantScalar(FusionGroupOp group, mlir::Value value) {
  auto values = groupConstantFloats(group, value);
  if (!values || values->size() != 1) {
    if (!values)
      llvm::consumeError(values.takeError());
    return opError(group, "an 8-bit GEMM's scale must be one constant (per tensor); recompile with per-tensor scales");
  }
  return values->front();
}

} // namespace

llvm::Error PlanBuilderImpl::lowerGemmGroup(mlir::Operation *operation) {
  auto group = llvm::cast<FusionGroupOp>(operation);
  auto matmul = llvm::dyn_cast_or_null<MatMulOp>(group.getMatmul());
  if (!matmul)
    return opError(operation, "internal: a gemm group without its matmul");
  auto result = describeValue(group.getResult(0));
  if (!result)
    return opError(operation, llvm::toString(result.takeError()));
  std::string name = nodeName(operation);

  auto inputBuffer = [&](mlir::Value value) -> llvm::Expected<std::pair<uint32_t, TensorDesc>> {
    auto index = groupInputOf(group, value);
    if (!index)
      return index.takeError();
    mlir::Value input = group.getInputs()[*index];
    auto desc = describeValue(input);
    if (!desc)
      return opError(operation, llvm::toString(desc.takeError()));
    auto buffer = bufferFor(input);
    if (!buffer)
      return buffer.takeError();
    return std::make_pair(*buffer, *desc);
  };
  // An 8-bit GEMM (kiln-fold-quantization's form): the operands are the dequantized group
  // inputs, the weight stored [N, K] and transposed back; the scales multiply into alpha.
  float alpha = 1.0f;
  bool transB = false;
  auto operandOf = [&](mlir::Value value) -> llvm::Expected<mlir::Value> {
    if (auto transpose = value.getDefiningOp<TransposeOp>()) {
      transB = true; // the verifier admits only perm [1, 0] of a dequantized weight
      value = transpose.getInput();
    }
    auto dequantize = value.getDefiningOp<DequantizeOp>();
    if (!dequantize)
      return value;
    auto scale = groupConstantScalar(group, dequantize.getScale());
    if (!scale)
      return scale.takeError();
    alpha *= static_cast<float>(*scale);
    return dequantize.getInput();
  };
  auto lhs = operandOf(matmul.getLhs());
  if (!lhs)
    return lhs.takeError();
  auto rhs = operandOf(matmul.getRhs());
  if (!rhs)
    return rhs.takeError();
  auto a = inputBuffer(*lhs);
  if (!a)
    return a.takeError();
  auto b = inputBuffer(*rhs);
  if (!b)
    return b.takeError();
  const TensorDesc &aDesc = a->second, &bDesc = b->second;
  if (aDesc.shape.size() < 2 || bDesc.shape.size() != 2)
    return opError(operation, "internal: a gemm group's matmul takes a matrix (or a batch of rows) and a 2-d weight");

  plan::GemmStep step;
  step.math = mathFor(matmul);
  step.k = aDesc.shape.back();
  step.n = transB ? bDesc.shape.front() : bDesc.shape.back();
  step.transB = transB;
  step.alpha = alpha;
  step.m = 1;
  for (size_t d = 0; d + 1 < aDesc.shape.size(); ++d)
    step.m *= aDesc.shape[d]; // batch rows are contiguous: one (batch x M) x K x N product
  step.a = a->first;
  step.b = b->first;
  std::optional<DType> cType;
  // Bias and C have the result's type; beside an FP8 result (a group ending in its consumer's
  // quantization) the 16-bit type the epilogue computed in before.
  bool fp8Out = result->dtype == DType::F8E4M3FN;
  auto widened = [&](DType t) { return fp8Out ? (t == DType::BF16 || t == DType::F16) : t == result->dtype; };

  // The epilogue, in body order after the matmul.
  mlir::Value current = matmul.getResult();
  for (mlir::Operation &op : group.getBody().front().without_terminator()) {
    if (auto add = llvm::dyn_cast<AddOp>(op)) {
      mlir::Value other = add.getLhs() == current ? add.getRhs() : add.getLhs();
      auto operand = inputBuffer(other);
      if (!operand)
        return operand.takeError();
      if (operand->second.numElements() == step.n && !step.bias) {
        step.bias = operand->first;
        if (!widened(operand->second.dtype) || (cType && *cType != operand->second.dtype))
          return opError(operation, "the bias of a gemm group must have the result's element type (cuBLASLt; bf16 "
                                    "or f16 beside an FP8 result, C's type)");
        cType = operand->second.dtype;
      } else if (operand->second.shape == result->shape && !step.c) {
        step.c = operand->first;
        step.beta = 1.0f;
        if (fp8Out && (!widened(operand->second.dtype) || (cType && *cType != operand->second.dtype)))
          return opError(operation, "beside an FP8 result, a gemm group's residual is bf16 or f16, the bias's type");
        cType = operand->second.dtype;
      } else {
        return opError(operation, "internal: a gemm group adds a value that is neither its bias row nor a residual");
      }
      current = add.getResult();
    } else if (llvm::isa<ReluOp>(op)) {
      step.activation = plan::Activation::Relu;
      current = op.getResult(0);
    } else if (llvm::isa<GeluOp>(op)) {
      step.activation = plan::Activation::Gelu; // the verifier admits only the tanh approximation
      current = op.getResult(0);
    } else if (auto quantize = llvm::dyn_cast<QuantizeOp>(op)) {
      // The consumer's quantization: cuBLASLt multiplies D by scaleD and rounds to E4M3
      // (saturating), x * (1 / s) where the interpreter divides, x / s: an f32 rounding apart.
      auto scale = groupConstantScalar(group, quantize.getScale());
      if (!scale)
        return scale.takeError();
      step.scaleD = newF32Weights(name + ".scale_d", {static_cast<float>(1.0 / *scale)});
      current = quantize.getResult();
    }
  }
  if (auto problem = gemmTypeProblem(aDesc.dtype, bDesc.dtype, result->dtype, cType))
    return opError(operation, *problem);
  step.strideD = step.m * step.n;
  step.d = defineResult(group.getResult(0), name, *result);
  addStep(operation, name, "kiln.fusion_group", std::move(step));
  return llvm::Error::success();
}

} // namespace kiln::codegen
