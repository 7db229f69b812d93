//===- FoldBatchNorm.cpp - inference BatchNorm into the conv or a multiply-add ===//
//
// An inference BatchNormalization with constant parameters is a per-channel affine map,
// y = x·s + t with s = scale / sqrt(var + epsilon) and t = bias − mean·s. Exporters leave it in
// the graph after a conv (the bundled tiny CNN has one); there the conv absorbs it, its weight
// scaled along the output-channel axis and its bias becoming bias·s + t. Elsewhere it becomes
// kiln.mul and kiln.add by [1, C, 1, ...] constants, which join the elementwise fusion groups
// around them instead of running as a kernel of their own.
//
// s, t and the new weights are computed in f64 and each value is rounded once to its type;
// the folded arithmetic associates differently from the interpreter's
// (x − mean) / sqrt(var + eps) · scale + bias, so results move by a few ulps.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "ir/Interpreter/Tensor.h"
#include "ir/KilnOps.h"
#include "ir/Provenance.h"

#include "mlir/IR/Builders.h"

#include <cmath>
#include <optional>

namespace kiln {

#define GEN_PASS_DEF_FOLDBATCHNORM
#include "passes/Passes.h.inc"

namespace {

using mlir::RankedTensorType;
using mlir::Value;

/// The values of a kiln.constant, or nullopt when `value` is not one (or cannot be read).
std::optional<interp::Tensor> constantValues(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto tensor = interp::fromAttr(constant.getValue());
  if (!tensor) {
    llvm::consumeError(tensor.takeError());
    return std::nullopt;
  }
  return std::move(*tensor);
}

/// The per-channel affine map of a batch_norm: y = x·scale[c] + shift[c], in f64.
struct Affine {
  std::vector<double> scale, shift;
};

std::optional<Affine> affineOf(BatchNormOp norm) {
  auto gamma = constantValues(norm.getScale()), beta = constantValues(norm.getBias());
  auto mean = constantValues(norm.getMean()), variance = constantValues(norm.getVariance());
  if (!gamma || !beta || !mean || !variance)
    return std::nullopt;
  double epsilon = norm.getEpsilonAttr().getValueAsDouble();
  Affine affine;
  for (size_t c = 0; c < gamma->f.size(); ++c) {
    double s = gamma->f[c] / std::sqrt(variance->f[c] + epsilon);
    affine.scale.push_back(s);
    affine.shift.push_back(beta->f[c] - mean->f[c] * s);
  }
  return affine;
}

/// A float tensor of `type` holding `values` (f64), each rounded once to the element type.
interp::Tensor rounded(RankedTensorType type, llvm::ArrayRef<double> values) {
  interp::Tensor t = interp::Tensor::zeros(type);
  auto element = llvm::cast<mlir::FloatType>(type.getElementType());
  for (size_t k = 0; k < values.size(); ++k)
    t.f[k] = interp::roundToFloat(values[k], element);
  return t;
}

struct FoldBatchNormPass : impl::FoldBatchNormBase<FoldBatchNormPass> {
  using FoldBatchNormBase::FoldBatchNormBase;

  void runOnOperation() override {
    llvm::SmallVector<BatchNormOp> norms;
    getOperation().walk([&](BatchNormOp op) { norms.push_back(op); });
    for (BatchNormOp norm : norms) {
      std::optional<Affine> affine = affineOf(norm);
      if (!affine)
        continue; // runtime parameters: the batch_norm kernel runs it
      if (!foldIntoConv(norm, *affine))
        toMultiplyAdd(norm, *affine);
    }
    // The parameters and the conv's old weight and bias, when nothing else reads them.
    getOperation().walk([](ConstantOp c) {
      if (c->use_empty())
        c->erase();
    });
  }

  mlir::Value constant(mlir::OpBuilder &builder, mlir::Location loc, const interp::Tensor &values) {
    return ConstantOp::create(builder, loc, values.type(), interp::toElementsAttr(values, inlineElements, "folded_bn"))
        .getResult();
  }

  /// Folds `norm` into the channels-first kiln.conv it normalizes, when that conv has no other
  /// user and constant weight and bias.
  bool foldIntoConv(BatchNormOp norm, const Affine &affine) {
    auto conv = norm.getInput().getDefiningOp<ConvOp>();
    if (!conv || !conv->hasOneUse() || conv.getChannelsLast())
      return false;
    std::optional<interp::Tensor> weight = constantValues(conv.getWeight());
    std::optional<interp::Tensor> bias;
    if (conv.getBias() && !(bias = constantValues(conv.getBias())))
      return false;
    RankedTensorType weightType = llvm::cast<RankedTensorType>(conv.getWeight().getType());
    if (!weight || !weight->isFloat() || weightType.getDimSize(0) != (int64_t)affine.scale.size())
      return false;

    // Output channel m is weight row m (KCRS: [M, C/group, K...]).
    int64_t channels = weightType.getDimSize(0), row = weightType.getNumElements() / std::max<int64_t>(channels, 1);
    std::vector<double> newWeight(weight->f.size()), newBias(channels);
    for (int64_t m = 0; m < channels; ++m) {
      for (int64_t k = 0; k < row; ++k)
        newWeight[m * row + k] = weight->f[m * row + k] * affine.scale[m];
      newBias[m] = (bias ? bias->f[m] : 0.0) * affine.scale[m] + affine.shift[m];
    }
    RankedTensorType biasType =
        bias ? llvm::cast<RankedTensorType>(conv.getBias().getType())
             : RankedTensorType::get({channels}, llvm::cast<RankedTensorType>(conv.getType()).getElementType());

    mlir::OpBuilder builder(conv);
    Value weightValue = constant(builder, conv.getWeight().getLoc(), rounded(weightType, newWeight));
    Value biasValue = constant(builder, conv.getBias() ? conv.getBias().getLoc() : norm.getLoc(),
                               rounded(biasType, newBias));
    // Both ONNX nodes in the conv's provenance: plan steps list them.
    mlir::Location loc = mlir::FusedLoc::get(conv.getContext(), {conv.getLoc(), norm.getLoc()});
    auto folded = ConvOp::create(builder, loc, conv.getType(), conv.getInput(), weightValue, biasValue,
                                 conv.getStridesAttr(), conv.getDilationsAttr(), conv.getPadsAttr(),
                                 conv.getGroupAttr(), conv.getChannelsLastAttr());
    folded->setDiscardableAttrs(conv->getDiscardableAttrDictionary());
    // The folded conv computes the normalization's output, no longer the conv's.
    clearOnnxValueNames(folded);
    setOnnxValueName(folded.getResult(), onnxValueName(norm.getResult()));
    norm.getResult().replaceAllUsesWith(folded.getResult());
    norm.erase();
    conv.erase();
    return true;
  }

  /// `norm` as x * s + t with s and t shaped [1, C, 1, ...].
  void toMultiplyAdd(BatchNormOp norm, const Affine &affine) {
    RankedTensorType type = llvm::cast<RankedTensorType>(norm.getType());
    llvm::SmallVector<int64_t> shape(type.getRank(), 1);
    shape[1] = type.getDimSize(1);
    RankedTensorType paramType = type.clone(shape);
    mlir::OpBuilder builder(norm);
    mlir::Location loc = norm.getLoc();
    Value scale = constant(builder, loc, rounded(paramType, affine.scale));
    Value shift = constant(builder, loc, rounded(paramType, affine.shift));
    Value product = MulOp::create(builder, loc, type, norm.getInput(), scale).getResult();
    Value sum = AddOp::create(builder, loc, type, product, shift).getResult();
    setOnnxValueName(sum, onnxValueName(norm.getResult()));
    norm.getResult().replaceAllUsesWith(sum);
    norm.erase();
  }
};

} // namespace
} // namespace kiln
