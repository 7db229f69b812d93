//===- MixedPrecision.cpp - the autocast-style precision policy -------------===//
//
// One walk over the function in order. For each op computing in f32, the policy
// (PrecisionPolicy.h) or an override picks the element type T it runs in; every operand sharing
// the op's float type that is not already T gets a kiln.cast to T (one cast per value and type,
// reused by later users), and the op's float results become T. Producers are visited before
// consumers, so "follows its inputs" sees its inputs' final types. Constants, and values a
// following op computes from constants alone, are weak: they take the type of what they meet. The function's results are
// cast back to their declared types at the end. Folding the casts of weights and cancelling
// cast chains is canonicalize's work (CastOp::fold), not this pass's.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/Pipelines.h"
#include "passes/PrecisionPolicy.h"
#include "passes/QuantizableOps.h"

#include "ir/KilnOps.h"
#include "ir/Provenance.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"

namespace kiln {

#define GEN_PASS_DEF_MIXEDPRECISION
#include "passes/Passes.h.inc"

namespace {

using mlir::Type;
using mlir::Value;

/// What an override asks an op to run in.
struct Decision {
  Precision precision = Precision::FP32;
  bool strictFp32 = false; // `--force-precision X=fp32`: IEEE fp32 even in a TF32 plan
  std::string why;         // the option that decided it, for remarks
};

/// The element type of a tensor value.
Type elementOf(Value v) { return llvm::cast<mlir::RankedTensorType>(v.getType()).getElementType(); }

bool isHalf(Type t) { return t.isBF16() || t.isF16(); }

/// The widest of the types non-constant inputs bring: f32 if any is f32 (or bf16 meets f16,
/// which neither holds), else their common half type.
Type widest(llvm::ArrayRef<Type> types, Type f32) {
  Type result;
  for (Type t : types) {
    if (!result)
      result = t;
    else if (t != result)
      return f32;
  }
  return result ? result : f32;
}


class PrecisionRewriter {
public:
  PrecisionRewriter(mlir::func::FuncOp func, std::optional<Type> half, llvm::ArrayRef<std::string> keepFp32,
                    llvm::ArrayRef<PrecisionOverride> forced)
      : func_(func), f32_(mlir::Float32Type::get(func.getContext())), half_(half), keepFp32_(keepFp32),
        forced_(forced) {}

  void run();

private:
  std::optional<Decision> overrideFor(mlir::Operation *op);
  Type typeFor(Precision precision);
  void retype(mlir::Operation *op);
  /// The one cast of `value` to `element`, created before `before` with location `loc`.
  Value castTo(Value value, Type element, mlir::Operation *before, mlir::Location loc);
  void reportUnmatched();
  bool isWeak(Value v) const {
    return llvm::isa_and_nonnull<ConstantOp>(v.getDefiningOp()) || weak_.contains(v);
  }

  mlir::func::FuncOp func_;
  Type f32_;
  std::optional<Type> half_; // the plan's half type; none for fp32/tf32
  llvm::ArrayRef<std::string> keepFp32_;
  llvm::ArrayRef<PrecisionOverride> forced_;
  llvm::DenseMap<Value, Type> original_;                         // element types before the pass
  llvm::DenseMap<std::pair<Value, Type>, Value> casts_;           // one cast per value and type
  // Values computed from constants alone (an embedding gathered from its table, a mask made of
  // two constants): like constants they carry no precision of their own and take the type of
  // the data they meet instead of promoting it.
  llvm::DenseSet<Value> weak_;
  llvm::StringSet<> matched_;                                    // override targets that matched
  int64_t inHalf_ = 0, inFp32_ = 0;
  int64_t importedQuantizedConvs_ = 0, importedFp8Gemms_ = 0;

public:
  int64_t importedQuantizedConvs() const { return importedQuantizedConvs_; }
  int64_t importedFp8Gemms() const { return importedFp8Gemms_; }
};

std::optional<Decision> PrecisionRewriter::overrideFor(mlir::Operation *op) {
  auto matches = [&](llvm::StringRef target) {
    bool hit = matchesOpTarget(op, target);
    if (hit)
      matched_.insert(target);
    return hit;
  };
  std::optional<Decision> decision;
  for (const std::string &target : keepFp32_)
    if (matches(target))
      decision = Decision{Precision::FP32, false, "--keep-fp32 " + target};
  for (const PrecisionOverride &o : forced_) // the last one that matches wins
    if (matches(o.target))
      decision = Decision{o.precision, o.precision == Precision::FP32,
                          "--force-precision " + o.target + "=" + precisionName(o.precision).str()};
  return decision;
}

Type PrecisionRewriter::typeFor(Precision precision) {
  mlir::MLIRContext *context = func_.getContext();
  switch (precision) {
  case Precision::BF16: return mlir::BFloat16Type::get(context);
  case Precision::FP16: return mlir::Float16Type::get(context);
  case Precision::FP32:
  case Precision::TF32: return f32_;
  }
  return f32_;
}

Value PrecisionRewriter::castTo(Value value, Type element, mlir::Operation *before, mlir::Location loc) {
  Value &cast = casts_[{value, element}];
  if (!cast) {
    mlir::OpBuilder builder(before);
    auto type = llvm::cast<mlir::RankedTensorType>(value.getType()).clone(element);
    cast = CastOp::create(builder, loc, type, value).getResult();
  }
  return cast;
}

void PrecisionRewriter::retype(mlir::Operation *op) {
  // The op's float type: its first float result's, else its first float operand's (compares).
  // 8-bit floats are storage, not a type ops compute in: an FP8 quantize computes in its
  // input's type, as an int8 one does.
  auto computesIn = [](Type t) { return t && llvm::isa<mlir::FloatType>(t) && t.getIntOrFloatBitWidth() >= 16; };
  Type opType;
  for (Value v : op->getResults())
    if (auto t = original_.lookup(v); computesIn(t) && !opType)
      opType = t;
  for (auto [i, v] : llvm::enumerate(op->getOperands()))
    if (auto t = original_.lookup(v); !opType && computesIn(t) && sharesOpFloatType(op, i))
      opType = t;
  if (opType != f32_)
    return; // no float computation, or one already in another type: not the policy's to change
  llvm::SmallVector<unsigned> shared;
  for (auto [i, v] : llvm::enumerate(op->getOperands()))
    if (original_.lookup(v) == opType && sharesOpFloatType(op, i))
      shared.push_back(i);

  std::optional<Decision> decision = overrideFor(op);
  Type target;
  if (decision) {
    target = typeFor(decision->precision);
    // --keep-fp32 keeps the plan's f32 math (TF32 unless --strict-fp32); only an explicit
    // `=fp32` asks for IEEE fp32.
    if (decision->strictFp32)
      op->setAttr("kiln.math", mlir::StringAttr::get(op->getContext(), "strict"));
    // A location-only remark: attaching it to the op would print the op with it.
    mlir::emitRemark(op->getLoc()) << "runs in " << precisionName(decision->precision) << " (" << decision->why << ")";
  } else if (isImportedQuantizedOp(op)) {
    // The model states its precision: 8-bit values and scales, which its INT8 convolution
    // (int32 sums scaled in f32) or FP8 GEMM (fp32 accumulation) computes from. Its float type
    // stays the dequantizations'.
    target = f32_;
    ++(llvm::isa<ConvOp>(op) ? importedQuantizedConvs_ : importedFp8Gemms_);
  } else {
    switch (precisionClassOf(op->getName().getStringRef())) {
    case PrecisionClass::Compute: target = half_ ? *half_ : f32_; break;
    case PrecisionClass::Fp32: target = f32_; break;
    case PrecisionClass::Follow: {
      llvm::SmallVector<Type> inputs;
      for (unsigned i : shared)
        if (!isWeak(op->getOperand(i)))
          inputs.push_back(elementOf(op->getOperand(i)));
      target = widest(inputs, f32_);
      if (inputs.empty())
        weak_.insert(op->result_begin(), op->result_end());
      break;
    }
    }
  }
  (isHalf(target) ? inHalf_ : inFp32_)++;
  for (unsigned i : shared)
    if (elementOf(op->getOperand(i)) != target)
      op->setOperand(i, castTo(op->getOperand(i), target, op, op->getLoc())); // serves op's node
  for (Value result : op->getResults())
    if (original_.lookup(result) == opType)
      result.setType(llvm::cast<mlir::RankedTensorType>(result.getType()).clone(target));
}

void PrecisionRewriter::reportUnmatched() {
  auto warn = [&](llvm::StringRef option, llvm::StringRef target) {
    if (!matched_.contains(target))
      mlir::emitWarning(func_.getLoc()) << option << " '" << target
                          << "' matches no ONNX node name, ONNX op type or kiln op in this model";
  };
  for (const std::string &target : keepFp32_)
    warn("--keep-fp32", target);
  for (const PrecisionOverride &o : forced_)
    warn("--force-precision", o.target);
}

void PrecisionRewriter::run() {
  mlir::Block &body = func_.getBody().front();
  for (Value arg : body.getArguments())
    original_[arg] = elementOf(arg);
  for (mlir::Operation &op : body)
    for (Value result : op.getResults())
      if (llvm::isa<mlir::RankedTensorType>(result.getType()))
        original_[result] = elementOf(result);

  llvm::SmallVector<mlir::Operation *> ops;
  for (mlir::Operation &op : body)
    ops.push_back(&op);
  for (mlir::Operation *op : ops) {
    if (llvm::isa<ConstantOp, CastOp>(op))
      continue; // constants adapt at their uses; a model's own casts keep their result type
    if (auto ret = llvm::dyn_cast<mlir::func::ReturnOp>(op)) {
      // Graph outputs keep their declared types: cast back at the edge.
      for (auto [i, value] : llvm::enumerate(ret.getOperands()))
        if (Type declared = func_.getResultTypes()[i]; value.getType() != declared)
          // The cast back finishes the producer's node: it carries that node's provenance.
          ret->setOperand(i, castTo(value, llvm::cast<mlir::RankedTensorType>(declared).getElementType(), op,
                                    value.getDefiningOp() ? value.getDefiningOp()->getLoc() : op->getLoc()));
      continue;
    }
    retype(op);
  }
  reportUnmatched();
  if (half_ || !forced_.empty() || !keepFp32_.empty())
    mlir::emitRemark(func_.getLoc()) << "mixed precision: " << inHalf_ << " ops in half precision, " << inFp32_
                       << " in fp32, " << casts_.size() << " casts inserted (casts of weights fold)";
}

/// A model in ONNX's QDQ format: its convolutions that read int8 (or E4M3) inputs and weights in
/// the form 8-bit kernels take, and its linear layers that read E4M3 in the form FP8 GEMMs take, keep them
/// (isImportedQuantizedOp); every other QuantizeLinear and DequantizeLinear runs as a kernel of
/// its own around float ops (weights of other ops folded into float weights before this pass),
/// as onnxruntime computes them. One remark says how many ops keep 8 bits, and what form the
/// 8-bit kernels take when none does.
void reportImportedQuantization(mlir::func::FuncOp func, int64_t quantizedConvs, int64_t fp8Gemms) {
  int64_t quantize = 0, dequantize = 0;
  func.walk([&](mlir::Operation *op) {
    quantize += llvm::isa<QuantizeOp>(op);
    dequantize += llvm::isa<DequantizeOp>(op);
  });
  if (quantize + dequantize == 0)
    return;
  auto remark = mlir::emitRemark(func.getLoc());
  remark << "the model's " << quantize << " QuantizeLinear and " << dequantize << " DequantizeLinear (QDQ format): ";
  if (quantizedConvs > 0)
    remark << quantizedConvs << (quantizedConvs == 1 ? " convolution keeps its" : " convolutions keep their")
           << " 8-bit inputs, weights and scales for INT8 or FP8 kernels "
           << "(kiln-fold-quantization remarks any that cannot run one); ";
  if (fp8Gemms > 0)
    remark << fp8Gemms << (fp8Gemms == 1 ? " linear layer keeps its" : " linear layers keep their")
           << " E4M3 inputs, weights and scales for FP8 GEMMs; ";
  if (quantizedConvs + fp8Gemms == 0)
    remark << "no convolution reads int8 or E4M3 in the form 8-bit kernels take (input per tensor, weight of its "
              "type per tensor or per output channel, zero points 0, one group, C a multiple of 32 and K of 16: "
              "onnxruntime's quantize_static writes it with extra_options ActivationSymmetric), and no linear "
              "layer E4M3 in the form FP8 GEMMs take (one scale each, zero points 0, a constant 2-d weight, K and "
              "N multiples of 16); ";
  remark << "the other quantizations run as kernels of their own around float ops, as onnxruntime computes them, "
            "and other GEMMs and matmuls in float (INT8 GEMMs are not implemented: compile the float model with "
            "--precision fp8 --calibration for FP8 linear layers)";
}

struct MixedPrecisionPass : impl::MixedPrecisionBase<MixedPrecisionPass> {
  using MixedPrecisionBase::MixedPrecisionBase;

  void runOnOperation() override {
    mlir::func::FuncOp func = getOperation();
    if (func.getBody().empty())
      return;
    std::optional<Precision> plan = parsePrecision(precision);
    if (!plan) {
      mlir::emitError(func.getLoc()) << "kiln-mixed-precision: precision '" << precision
                       << "' is not one of fp32, tf32, bf16, fp16";
      return signalPassFailure();
    }
    std::vector<PrecisionOverride> forced;
    for (const std::string &text : forcePrecision) {
      auto parsed = parsePrecisionOverride(text);
      if (!parsed) {
        mlir::emitError(func.getLoc()) << "kiln-mixed-precision: force-precision " << llvm::toString(parsed.takeError());
        return signalPassFailure();
      }
      forced.push_back(*parsed);
    }
    std::optional<Type> half;
    if (*plan == Precision::BF16)
      half = mlir::BFloat16Type::get(&getContext());
    else if (*plan == Precision::FP16)
      half = mlir::Float16Type::get(&getContext());
    std::vector<std::string> keep(keepFp32.begin(), keepFp32.end());
    PrecisionRewriter rewriter(func, half, keep, forced);
    rewriter.run();
    reportImportedQuantization(func, rewriter.importedQuantizedConvs(), rewriter.importedFp8Gemms());
  }
};

} // namespace
} // namespace kiln
