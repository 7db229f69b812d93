//===- InsertQuantization.cpp - Q/DQ pairs from a calibration file ---------===//
//
// kiln-insert-quantization: explicit 8-bit quantization of the inputs of conv,
// conv_transpose, matmul and gemm (Passes.td says what and why).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "ir/KilnOps.h"
#include "ir/Provenance.h"
#include "passes/CalibrationTable.h"
#include "passes/QuantizableOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cmath>

namespace kiln {

#define GEN_PASS_DEF_INSERTQUANTIZATION
#include "passes/Passes.h.inc"

namespace {

using mlir::Value;

/// The 8-bit type and the largest magnitude it holds.
struct Grid {
  mlir::Type element;
  double largest;
};

/// Whether `op` moves its operand 0's values without changing them or adding others beyond 0
/// (which no symmetric range misses): reshapes and transposes (which passes insert), casts (the
/// precision pass's, which round them), zero padding (kiln-space-to-depth-convs' channels).
bool keepsRange(mlir::Operation *op) {
  return isZeroPadding(op) || mlir::isa_and_nonnull<ReshapeOp, TransposeOp, CastOp>(op);
}

/// The residual operand `conv`'s epilogue adds: along its result's single-use chain of adds
/// (a bias first, perhaps), the operand of the result's type that is not a constant; null when
/// there is none.
mlir::OpOperand *residualOperandOf(ConvOp conv) {
  Value current = conv.getResult();
  while (current.hasOneUse()) {
    auto add = llvm::dyn_cast<AddOp>(*current.getUsers().begin());
    if (!add || add.getLhs() == add.getRhs())
      return nullptr;
    mlir::OpOperand &other = add->getOpOperand(add.getLhs() == current ? 1 : 0);
    if (other.get().getType() == add.getType() && !other.get().getDefiningOp<ConstantOp>())
      return &other;
    current = add.getResult();
  }
  return nullptr;
}

/// The ONNX value whose range `value` has: an op result's name, or a graph input's
/// `kiln.name`, looking back through unnamed ops that keep the range (keepsRange).
std::string valueName(Value value) {
  while (onnxValueName(value).empty() && keepsRange(value.getDefiningOp()))
    value = value.getDefiningOp()->getOperand(0);
  if (auto arg = llvm::dyn_cast<mlir::BlockArgument>(value)) {
    auto func = llvm::dyn_cast<mlir::func::FuncOp>(arg.getOwner()->getParentOp());
    if (auto name = func ? func.getArgAttrOfType<mlir::StringAttr>(arg.getArgNumber(), "kiln.name") : nullptr)
      return name.str();
    return "";
  }
  return onnxValueName(value);
}

/// Whether `value` is an argument of the function, through the data movement and casts that
/// do not change which values it holds (keepsRange).
bool readsGraphInput(Value value) {
  while (keepsRange(value.getDefiningOp()))
    value = value.getDefiningOp()->getOperand(0);
  return llvm::isa<mlir::BlockArgument>(value);
}

/// The ops of `candidates` that no other candidate computes from, through any chain of ops:
/// the last layers, whose results reach the network's outputs without passing another.
llvm::DenseSet<mlir::Operation *> lastLayers(mlir::func::FuncOp func,
                                             const llvm::SmallPtrSetImpl<mlir::Operation *> &candidates) {
  // Walking the body backwards, every user is settled before the ops it reads.
  llvm::DenseMap<mlir::Operation *, bool> feedsCandidate;
  llvm::DenseSet<mlir::Operation *> last;
  for (mlir::Operation &op : llvm::reverse(func.getBody().front())) {
    bool feeds = false;
    for (mlir::Operation *user : op.getUsers()) {
      mlir::Operation *top = func.getBody().front().findAncestorOpInBlock(*user);
      if (top && (candidates.contains(top) || feedsCandidate.lookup(top)))
        feeds = true;
    }
    feedsCandidate[&op] = feeds;
    if (candidates.contains(&op) && !feeds)
      last.insert(&op);
  }
  return last;
}

struct InsertQuantizationPass : impl::InsertQuantizationBase<InsertQuantizationPass> {
  using InsertQuantizationBase::InsertQuantizationBase;

  void runOnOperation() override;

private:
  /// `value` through a quantize -> dequantize pair with `scales` (one: per tensor; else along
  /// `axis`), placed right after it is defined.
  Value quantizeDequantize(mlir::OpBuilder &builder, Value value, llvm::ArrayRef<float> scales, int64_t axis,
                           const Grid &grid);
  /// The per-tensor scale of an activation, or an explanation of why there is none.
  llvm::Expected<float> activationScale(Value value, const Grid &grid) const;
  /// Per-channel scales of a constant weight along `axis`.
  llvm::Expected<std::vector<float>> weightScales(ConstantOp weight, int64_t axis, const Grid &grid) const;

  CalibrationTable table_;
  CalibrationMethod method_ = CalibrationMethod::Entropy;
};

llvm::Expected<float> InsertQuantizationPass::activationScale(Value value, const Grid &grid) const {
  std::string name = valueName(value);
  const ActivationRange *range = name.empty() ? nullptr : table_.activation(name);
  if (!range)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   name.empty() ? "an input that names no ONNX value has no calibrated range "
                                                  "(kiln.onnx_values; `kiln import --onnx-value-names` keeps them)"
                                                : "input '" + name + "' has no calibrated range");
  double threshold = range->threshold(method_);
  if (!(threshold > 0) || !std::isfinite(threshold))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "input '" + name + "' was 0 on every calibration input");
  return (float)(threshold / grid.largest);
}

llvm::Expected<std::vector<float>> InsertQuantizationPass::weightScales(ConstantOp weight, int64_t axis,
                                                                        const Grid &grid) const {
  auto absMax = channelAbsMax(weight, axis);
  if (!absMax)
    return absMax.takeError();
  std::vector<float> scales;
  for (double m : *absMax) // an all-zero channel quantizes to zeros whatever its scale
    scales.push_back(m > 0 ? (float)(m / grid.largest) : 1.0f);
  return scales;
}

Value InsertQuantizationPass::quantizeDequantize(mlir::OpBuilder &builder, Value value, llvm::ArrayRef<float> scales,
                                                 int64_t axis, const Grid &grid) {
  mlir::OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointAfterValue(value);
  mlir::Location loc = value.getLoc();
  auto type = llvm::cast<mlir::RankedTensorType>(value.getType());
  bool perTensor = scales.size() == 1;
  llvm::SmallVector<int64_t> paramShape;
  if (!perTensor)
    paramShape.push_back((int64_t)scales.size());
  // The scale has the value's type (as ONNX types QuantizeLinear's scale): a bf16 plan's
  // scales are bf16, each rounded to nearest (half to even) from the f32 scale.
  auto scaleElement = llvm::cast<mlir::FloatType>(type.getElementType());
  auto scaleType = mlir::RankedTensorType::get(paramShape, scaleElement);
  auto zeroType = mlir::RankedTensorType::get(paramShape, grid.element);
  llvm::SmallVector<llvm::APFloat> scaleValues;
  for (float s : scales) {
    llvm::APFloat v(s);
    bool lost = false;
    v.convert(scaleElement.getFloatSemantics(), llvm::APFloat::rmNearestTiesToEven, &lost);
    scaleValues.push_back(v);
  }
  auto scaleAttr = mlir::DenseElementsAttr::get(scaleType, scaleValues);
  Value scale = ConstantOp::create(builder, loc, scaleType, scaleAttr);
  Value zeroPoint = ConstantOp::create(builder, loc, zeroType, zeros(zeroType));
  int64_t paramAxis = perTensor ? 1 : axis;
  auto quantized = QuantizeOp::create(builder, loc, type.clone(grid.element), value, scale, zeroPoint,
                                      builder.getI64IntegerAttr(paramAxis), builder.getBoolAttr(true));
  return DequantizeOp::create(builder, loc, type, quantized, scale, zeroPoint, builder.getI64IntegerAttr(paramAxis));
}

void InsertQuantizationPass::runOnOperation() {
  mlir::func::FuncOp func = getOperation();
  if (func.getBody().empty())
    return;
  mlir::MLIRContext *context = &getContext();
  Grid grid;
  if (type == "int8")
    grid = {mlir::IntegerType::get(context, 8), 127.0};
  else if (type == "fp8")
    grid = {mlir::Float8E4M3FNType::get(context), 448.0};
  else {
    mlir::emitError(func.getLoc()) << "kiln-insert-quantization: type '" << type << "' is not int8 or fp8";
    return signalPassFailure();
  }
  if (calibration.empty()) {
    mlir::emitError(func.getLoc()) << "kiln-insert-quantization needs calibration=FILE (written by kiln calibrate)";
    return signalPassFailure();
  }
  auto buffer = llvm::MemoryBuffer::getFile(calibration);
  if (!buffer) {
    mlir::emitError(func.getLoc()) << "kiln-insert-quantization: cannot read '" << calibration
                                   << "': " << buffer.getError().message();
    return signalPassFailure();
  }
  auto table = parseCalibrationTable((*buffer)->getBuffer());
  if (!table) {
    mlir::emitError(func.getLoc()) << "kiln-insert-quantization: '" << calibration
                                   << "': " << llvm::toString(table.takeError());
    return signalPassFailure();
  }
  table_ = std::move(*table);
  method_ = table_.method;
  if (!method.empty()) {
    std::optional<CalibrationMethod> parsed = parseCalibrationMethod(method);
    if (!parsed) {
      mlir::emitError(func.getLoc()) << "kiln-insert-quantization: method '" << method
                                     << "' is not minmax, percentile or entropy";
      return signalPassFailure();
    }
    method_ = *parsed;
  }

  llvm::SmallVector<mlir::Operation *> ops;
  func.walk([&](mlir::Operation *op) {
    if (isQuantizableOp(op))
      ops.push_back(op);
  });
  llvm::DenseSet<mlir::Operation *> last;
  if (keepLast) {
    // Every conv, conv_transpose, matmul and gemm counts, quantized or not: a CNN's last conv
    // is not a last layer while its classifier reads it.
    llvm::SmallPtrSet<mlir::Operation *, 32> candidates(ops.begin(), ops.end());
    last = lastLayers(func, candidates);
  }
  mlir::OpBuilder builder(context);
  llvm::DenseMap<Value, Value> dequantizedForm; // one pair per activation, whatever its users
  llvm::StringSet<> matched;
  llvm::SmallVector<ConvOp> quantizedConvs;
  for (mlir::Operation *op : ops) {
    auto keptBy = llvm::find_if(keep, [&](const std::string &target) { return matchesOpTarget(op, target); });
    if (keptBy != keep.end()) {
      matched.insert(*keptBy);
      op->emitRemark() << "not quantized: keep=" << *keptBy;
      continue;
    }
    if (!quantizeOps.empty() && !llvm::is_contained(quantizeOps, op->getName().getStringRef()))
      continue; // not asked for: the caller says which kinds of op its codegen runs in 8 bits
    if (keepFirst && readsGraphInput(op->getOperand(0))) {
      op->emitRemark() << "not quantized: it reads the network input (the first layer; keep-first)";
      continue;
    }
    if (last.contains(op)) {
      op->emitRemark() << "not quantized: no other quantizable op reads what it computes (a last layer; keep-last)";
      continue;
    }
    // Every scale first: an op is quantized whole or not at all.
    Value input = op->getOperand(0), weight = op->getOperand(1);
    mlir::Type inputElement = llvm::cast<mlir::RankedTensorType>(input.getType()).getElementType();
    mlir::Type weightElement = llvm::cast<mlir::RankedTensorType>(weight.getType()).getElementType();
    if (inputElement != weightElement || !(inputElement.isF32() || inputElement.isBF16() || inputElement.isF16())) {
      op->emitRemark() << "not quantized: its input and weight are not both f32, bf16 or f16";
      continue;
    }
    auto inputScale = activationScale(input, grid);
    if (!inputScale) {
      op->emitRemark() << "not quantized: " << llvm::toString(inputScale.takeError());
      continue;
    }
    int64_t axis = *weightChannelAxis(op);
    auto constant = weight.getDefiningOp<ConstantOp>();
    std::vector<float> weightScale;
    if (constant) {
      auto scales = weightScales(constant, axis, grid);
      if (!scales) {
        op->emitRemark() << "not quantized: its weight: " << llvm::toString(scales.takeError());
        continue;
      }
      weightScale = std::move(*scales);
      if (llvm::is_contained(perTensorWeightOps, op->getName().getStringRef())) // the largest channel's
        weightScale = {*std::max_element(weightScale.begin(), weightScale.end())};
    } else {
      auto scale = activationScale(weight, grid);
      if (!scale) {
        op->emitRemark() << "not quantized: " << llvm::toString(scale.takeError());
        continue;
      }
      weightScale = {*scale};
    }
    auto &dequantized = dequantizedForm[input];
    if (!dequantized)
      dequantized = quantizeDequantize(builder, input, {*inputScale}, 1, grid);
    op->setOperand(0, dequantized);
    if (constant) {
      op->setOperand(1, quantizeDequantize(builder, weight, weightScale, axis, grid));
    } else {
      auto &other = dequantizedForm[weight];
      if (!other)
        other = quantizeDequantize(builder, weight, weightScale, 1, grid);
      op->setOperand(1, other);
    }
    // Residuals only of the convs cuDNN's 8-bit kernels will run (the others go back to bf16,
    // where an 8-bit residual would only round).
    if (auto conv = llvm::dyn_cast<ConvOp>(op); residuals && conv)
      if (!whyNoQuantizedConv(conv, conv.getInput().getDefiningOp<DequantizeOp>(),
                         conv.getWeight().getDefiningOp<DequantizeOp>()))
        quantizedConvs.push_back(conv);
  }
  // The residual a quantized conv's epilogue adds, read through its own quantization (shared
  // with the convs reading that value): the block's input stays 8-bit for the convolution
  // graph too, and a value every reader takes quantized is written once, in 8 bits.
  for (ConvOp conv : quantizedConvs) {
    mlir::OpOperand *operand = residualOperandOf(conv);
    if (!operand)
      continue;
    Value residual = operand->get();
    auto &dequantized = dequantizedForm[residual];
    if (!dequantized) {
      auto scale = activationScale(residual, grid);
      if (!scale) {
        operand->getOwner()->emitRemark() << "residual not quantized: " << llvm::toString(scale.takeError());
        continue;
      }
      dequantized = quantizeDequantize(builder, residual, {*scale}, 1, grid);
    }
    operand->set(dequantized);
  }
  // A name that matches nothing is a typo or a module without its ONNX node names (locations).
  for (const std::string &target : keep)
    if (!matched.contains(target))
      mlir::emitWarning(func.getLoc()) << "kiln-insert-quantization: keep '" << target
                                       << "' matches no conv, conv_transpose, matmul or gemm by ONNX node name, "
                                          "ONNX op type or kiln op name (a module printed by `kiln import` keeps "
                                          "node names only with --locations)";
}

} // namespace

} // namespace kiln
