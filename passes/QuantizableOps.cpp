//===- QuantizableOps.cpp - which ops 8-bit quantization covers -----------===//

#include "passes/QuantizableOps.h"

#include "passes/LinearLayer.h"

#include <functional>

#include "ir/Interpreter/Tensor.h"

#include "mlir/IR/BuiltinTypes.h"

#include <cmath>

namespace kiln {

bool isConvQuantizedElement(mlir::Type element) {
  return element.isSignlessInteger(8) || element.isSignedInteger(8) || llvm::isa<mlir::Float8E4M3FNType>(element);
}

bool isQuantizableOp(mlir::Operation *op) { return mlir::isa<ConvOp, ConvTransposeOp, MatMulOp, GemmOp>(op); }

std::optional<int64_t> weightChannelAxis(mlir::Operation *op) {
  if (mlir::isa<ConvOp>(op))
    return 0;
  if (mlir::isa<ConvTransposeOp>(op))
    return 1;
  if (auto gemm = mlir::dyn_cast<GemmOp>(op))
    return gemm.getTransB() ? 0 : 1;
  if (mlir::isa<MatMulOp>(op))
    return llvm::cast<mlir::RankedTensorType>(op->getOperand(1).getType()).getRank() - 1;
  return std::nullopt;
}

llvm::Expected<std::vector<double>> channelAbsMax(ConstantOp weight, int64_t axis) {
  auto tensor = interp::fromAttr(llvm::cast<mlir::ElementsAttr>(weight.getValue()));
  if (!tensor)
    return tensor.takeError();
  int64_t channels = tensor->shape[axis], inner = 1;
  for (size_t d = axis + 1; d < tensor->shape.size(); ++d)
    inner *= tensor->shape[d];
  std::vector<double> absMax(channels, 0.0);
  for (int64_t k = 0; k < tensor->size(); ++k) {
    double &m = absMax[(k / inner) % channels];
    m = std::max(m, std::fabs(tensor->f[k]));
  }
  return absMax;
}

std::optional<QuantizedLinearLayer> matchQuantizedLinearLayer(MatMulOp matmul) {
  auto input = matmul.getLhs().getDefiningOp<DequantizeOp>();
  auto transpose = matmul.getRhs().getDefiningOp<TransposeOp>();
  if (!input || !transpose || !input->hasOneUse() || !transpose->hasOneUse() ||
      transpose.getPerm() != llvm::ArrayRef<int64_t>{1, 0})
    return std::nullopt;
  auto weight = transpose.getInput().getDefiningOp<DequantizeOp>();
  if (!weight || !weight->hasOneUse())
    return std::nullopt;
  return QuantizedLinearLayer{input, weight, transpose};
}

bool isConstantWeight(DequantizeOp weight) {
  mlir::Value stored = weight.getInput();
  if (auto quantize = stored.getDefiningOp<QuantizeOp>())
    stored = quantize.getInput();
  return stored.getDefiningOp<ConstantOp>() != nullptr;
}

namespace {

mlir::RankedTensorType tensorType(mlir::Value value) { return llvm::cast<mlir::RankedTensorType>(value.getType()); }

mlir::Type storedElement(DequantizeOp dq) { return tensorType(dq.getInput()).getElementType(); }

} // namespace

std::optional<std::string> whyNoQuantizedConvOnceChannelsLast(ConvOp conv, DequantizeOp input, DequantizeOp weight) {
  if (!isConvQuantizedElement(storedElement(input)) || storedElement(input) != storedElement(weight))
    return std::string("its input and weight are not both int8 or both float8e4m3fn (what cuDNN's 8-bit "
                       "convolutions read)");
  if (!isPerTensorQuantization(input))
    return std::string("its input's scale is per channel; the convolution takes one input scale");
  if (!isPerTensorQuantization(weight) && weight.getAxis() != 0)
    return std::string("its weight is not scaled per tensor or per output channel");
  if (!isZeroConstant(input.getZeroPoint()) || !isZeroConstant(weight.getZeroPoint()))
    return std::string("a zero point is not 0");
  if (!isConstantWeight(weight))
    return std::string("its weight is computed at run time, not a constant");
  auto x = tensorType(conv.getInput());
  if (x.getRank() != 4)
    return std::string("it is not a 2-d convolution (cuDNN's 8-bit kernels are 2-d, NHWC)");
  if (conv.getGroup() != 1)
    return std::string("it has ") + std::to_string(conv.getGroup()) +
           " groups (cuDNN's 8-bit kernels take one; depthwise convolutions stay in their float type)";
  int64_t c = conv.getChannelsLast() ? x.getShape().back() : x.getShape()[1];
  int64_t k = tensorType(conv.getWeight()).getShape().front();
  if (c % kQuantizedConvOutputChannelMultiple != 0 || k % kQuantizedConvOutputChannelMultiple != 0)
    return "C = " + std::to_string(c) + " or K = " + std::to_string(k) + " is not a multiple of " +
           std::to_string(kQuantizedConvOutputChannelMultiple) + ", as cuDNN's 8-bit convolutions need";
  // Hopper's 8-bit MMA (int8 and E4M3) takes 32 input channels a step: with 16, cuDNN offers
  // only a fallback engine (ResNet-50's space-to-depth stem, C = 16: 3.9 ms in INT8 against
  // 0.99 in bf16, H100). Zero-padding that stem to 32 channels did not pay either: 2.65 ms in
  // INT8 (4 engines) against 0.98 (b256, H100, bench/conv8_probe.cpp).
  if (c % kQuantizedConvInputChannelMultiple != 0)
    return "C = " + std::to_string(c) + " is not a multiple of " + std::to_string(kQuantizedConvInputChannelMultiple) +
           ": cuDNN's 8-bit kernels for it are slower than bf16's";
  return std::nullopt;
}

std::optional<std::string> whyNoQuantizedConv(ConvOp conv, DequantizeOp input, DequantizeOp weight) {
  if (std::optional<std::string> why = whyNoQuantizedConvOnceChannelsLast(conv, input, weight))
    return why;
  if (!conv.getChannelsLast())
    return std::string("it is not a channels-last convolution (cuDNN's 8-bit kernels are NHWC)");
  return std::nullopt;
}

bool isImportedQuantizedConvWeight(DequantizeOp weight) {
  if (!weight.getInput().getDefiningOp<ConstantOp>() || weight->use_empty())
    return false;
  return llvm::all_of(weight->getUses(), [&](mlir::OpOperand &use) {
    auto conv = llvm::dyn_cast<ConvOp>(use.getOwner());
    if (!conv || use.getOperandNumber() != 1)
      return false;
    auto input = conv.getInput().getDefiningOp<DequantizeOp>();
    return input && !whyNoQuantizedConvOnceChannelsLast(conv, input, weight);
  });
}

bool isImportedFp8GemmWeight(DequantizeOp weight) {
  auto isE4M3 = [](DequantizeOp dq) {
    return dq && llvm::isa<mlir::Float8E4M3FNType>(tensorType(dq.getInput()).getElementType()) &&
           isSymmetricPerTensorQuantization(dq);
  };
  if (!isE4M3(weight) || !weight.getInput().getDefiningOp<ConstantOp>() || weight->use_empty() ||
      tensorType(weight.getInput()).getRank() != 2)
    return false;
  llvm::ArrayRef<int64_t> shape = tensorType(weight.getInput()).getShape();
  std::function<bool(mlir::OpOperand &, bool)> readsAsWeight = [&](mlir::OpOperand &use, bool transposed) {
    mlir::Operation *op = use.getOwner();
    // A transpose [1, 0] (kiln-normalize-linear-layers' form of a Gemm's trans_b) read by
    // matmuls as their weight.
    if (auto t = llvm::dyn_cast<TransposeOp>(op))
      return !transposed && t.getPerm() == llvm::ArrayRef<int64_t>{1, 0} && !t->use_empty() &&
             llvm::all_of(t->getUses(), [&](mlir::OpOperand &u) {
               return llvm::isa<MatMulOp>(u.getOwner()) && readsAsWeight(u, true);
             });
    if (auto gemm = llvm::dyn_cast<GemmOp>(op)) {
      // What kiln-normalize-linear-layers makes a matmul of.
      if (!isProductPlusBias(gemm))
        return false;
      transposed = gemm.getTransB();
    } else if (!llvm::isa<MatMulOp>(op)) {
      return false;
    }
    int64_t k = transposed ? shape[1] : shape[0], n = transposed ? shape[0] : shape[1];
    return use.getOperandNumber() == 1 && isE4M3(op->getOperand(0).getDefiningOp<DequantizeOp>()) &&
           tensorType(op->getOperand(0)).getRank() >= 2 && k % 16 == 0 && n % 16 == 0;
  };
  return llvm::all_of(weight->getUses(), [&](mlir::OpOperand &use) { return readsAsWeight(use, false); });
}

bool isImportedQuantizedOp(mlir::Operation *op) {
  if (!llvm::isa<ConvOp, GemmOp, MatMulOp>(op) || op->getNumOperands() < 2 ||
      !op->getOperand(0).getDefiningOp<DequantizeOp>())
    return false;
  auto weight = op->getOperand(1).getDefiningOp<DequantizeOp>();
  return weight && (llvm::isa<ConvOp>(op) ? isImportedQuantizedConvWeight(weight) : isImportedFp8GemmWeight(weight));
}

std::optional<QuantizedConv> matchQuantizedConv(ConvOp conv) {
  auto input = conv.getInput().getDefiningOp<DequantizeOp>();
  auto weight = conv.getWeight().getDefiningOp<DequantizeOp>();
  if (!input || !weight || !input->hasOneUse() || !weight->hasOneUse() || whyNoQuantizedConv(conv, input, weight))
    return std::nullopt;
  return QuantizedConv{input, weight};
}

bool isSymmetricPerTensorQuantization(mlir::Operation *op) {
  // Both ops take (value, scale, zero point).
  return op && isPerTensorQuantization(op) && isZeroConstant(op->getOperand(2));
}

bool isZeroPadding(mlir::Operation *op) {
  auto pad = llvm::dyn_cast_or_null<PadOp>(op);
  return pad && pad.getMode() == "constant" && isZeroConstant(pad.getValue());
}

mlir::DenseElementsAttr zeros(mlir::RankedTensorType type) {
  mlir::Type element = type.getElementType();
  mlir::Attribute zero = llvm::isa<mlir::FloatType>(element) ? mlir::Attribute(mlir::FloatAttr::get(element, 0.0))
                                                            : mlir::Attribute(mlir::IntegerAttr::get(element, 0));
  return mlir::DenseElementsAttr::get(type, zero);
}

bool isZeroConstant(mlir::Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  if (!constant)
    return false;
  auto tensor = interp::fromAttr(llvm::cast<mlir::ElementsAttr>(constant.getValue()));
  if (!tensor) {
    llvm::consumeError(tensor.takeError());
    return false;
  }
  return tensor->isFloat() ? llvm::all_of(tensor->f, [](double v) { return v == 0; })
                           : llvm::all_of(tensor->i, [](int64_t v) { return v == 0; });
}

} // namespace kiln
