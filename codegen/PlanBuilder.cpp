//===- PlanBuilder.cpp - lower a kiln module to a plan --------------------===//

#include "codegen/PlanBuilder.h"

#include "codegen/MemoryPlanner.h"
#include "codegen/OpDescription.h"
#include "codegen/PlanBuilderImpl.h"
#include "codegen/kernels/Nvrtc.h"
#include "codegen/kernels/WhereInPlace.h"
#include "ir/KilnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringSet.h"

#include <cublas_api.h>
#include <cudnn_version.h>

#include <algorithm>
#include <climits>

namespace kiln::codegen {
namespace {

llvm::Error statusError(const Status &status) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), status.message());
}

std::string replaceAll(std::string text, const std::string &from, const std::string &to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

/// Ops whose kernel reads element i of a full-shape operand and then writes element i of the
/// result, so the result may take the operand's bytes when the operand dies there.
bool isInPlaceCandidate(mlir::Operation *op) {
  static const llvm::StringSet<> ops = {
      "kiln.sqrt", "kiln.reciprocal", "kiln.exp", "kiln.log", "kiln.erf", "kiln.tanh", "kiln.sigmoid",
      "kiln.softplus", "kiln.hard_swish", "kiln.floor", "kiln.ceil", "kiln.round", "kiln.sin", "kiln.cos",
      "kiln.relu", "kiln.neg", "kiln.abs", "kiln.sign", "kiln.not", "kiln.leaky_relu", "kiln.elu", "kiln.selu",
      "kiln.hard_sigmoid", "kiln.gelu", "kiln.add", "kiln.sub", "kiln.mul", "kiln.div", "kiln.pow", "kiln.min",
      "kiln.max", "kiln.mod", "kiln.prelu", "kiln.and", "kiln.or", "kiln.xor", "kiln.where", "kiln.clip",
      // An elementwise group reads a same-shaped input only at the element it writes; a norm
      // group too, and each row before it writes the row (not a gather group: it moves
      // elements; not a pool group: it reads windows).
      "kiln.fusion_group"};
  if (auto group = llvm::dyn_cast<FusionGroupOp>(op); group && (group.getKind() == "gather" || group.getKind() == "pool"))
    return false;
  return ops.contains(op->getName().getStringRef());
}

/// A buffer of `type` (its bytes follow from it; a size past 64 bits, impossible for a tensor
/// the importer accepted, gives 0 bytes and a plan that validatePlan refuses).
plan::Buffer typedBuffer(const std::string &name, plan::MemorySpace space, const TensorDesc &type) {
  plan::Buffer buffer;
  buffer.name = name;
  buffer.space = space;
  buffer.dtype = type.dtype;
  buffer.shape = type.shape;
  buffer.bytes = plan::denseBytes(type.shape, type.dtype).value_or(0);
  return buffer;
}

} // namespace

const char *precisionName(plan::MathMode math) { return math == plan::MathMode::TF32 ? "tf32" : "fp32"; }

plan::MathMode PlanBuilderImpl::mathFor(mlir::Operation *op) const {
  auto math = op->getAttrOfType<mlir::StringAttr>("kiln.math");
  return math && math.getValue() == "strict" ? plan::MathMode::StrictF32 : options_.math;
}

//===-- Buffers -----------------------------------------------------------===//

uint32_t PlanBuilderImpl::newArenaBuffer(const std::string &name, const TensorDesc &type) {
  plan_.buffers.push_back(typedBuffer(name, plan::MemorySpace::Arena, type));
  storageOf_.push_back(static_cast<int>(storages_.size()));
  storages_.push_back(Storage{plan_.buffers.back().bytes});
  return static_cast<uint32_t>(plan_.buffers.size() - 1);
}

uint32_t PlanBuilderImpl::viewOf(uint32_t base, const std::string &name, const TensorDesc &type) {
  plan::Buffer buffer = typedBuffer(name, plan_.buffers[base].space, type);
  buffer.offset = plan_.buffers[base].offset;
  plan_.buffers.push_back(buffer);
  storageOf_.push_back(storageOf_[base]);
  return static_cast<uint32_t>(plan_.buffers.size() - 1);
}

uint32_t PlanBuilderImpl::defineResult(mlir::Value result, const std::string &name, const TensorDesc &type) {
  uint32_t buffer = newArenaBuffer(name, type);
  bufferOf_[result] = buffer;
  storages_[storageOf_[buffer]].lastValueUse = lastUse_.lookup(result);
  return buffer;
}

llvm::Expected<uint32_t> PlanBuilderImpl::bufferFor(mlir::Value value) {
  if (auto it = bufferOf_.find(value); it != bufferOf_.end())
    return it->second;
  auto constant = value.getDefiningOp<ConstantOp>();
  if (!constant)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "internal: a value is used before it is defined");
  auto type = describeValue(value);
  if (!type)
    return opError(constant, llvm::toString(type.takeError()));
  auto bytes = constantBytes(constant.getValue());
  if (!bytes)
    return opError(constant, llvm::toString(bytes.takeError()));
  uint32_t index = newWeightBuffer(nodeName(constant), *type, *bytes);
  bufferOf_[value] = index;
  return index;
}

uint32_t PlanBuilderImpl::newWeightBuffer(const std::string &name, const TensorDesc &type,
                                          llvm::ArrayRef<uint8_t> bytes) {
  weights_.resize((weights_.size() + plan::kBufferAlignment - 1) / plan::kBufferAlignment * plan::kBufferAlignment, 0);
  plan::Buffer buffer = typedBuffer(name, plan::MemorySpace::Weights, type);
  buffer.offset = weights_.size();
  weights_.insert(weights_.end(), bytes.begin(), bytes.end());
  plan_.buffers.push_back(buffer);
  storageOf_.push_back(-1);
  return static_cast<uint32_t>(plan_.buffers.size() - 1);
}

uint32_t PlanBuilderImpl::newF32Weights(const std::string &name, llvm::ArrayRef<float> values) {
  TensorDesc type;
  type.dtype = DType::F32;
  type.shape = {static_cast<int64_t>(values.size())};
  std::vector<uint8_t> bytes(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size()); // little-endian host, as the plan
  return newWeightBuffer(name, type, bytes);
}

//===-- Generated kernels -------------------------------------------------===//

llvm::Error PlanBuilderImpl::emitKernelOp(mlir::Operation *source, const OpDesc &desc,
                                          const std::vector<std::optional<uint32_t>> &operands,
                                          const std::vector<uint32_t> &results, const std::string &stepName) {
  auto emitted = emitKernels(desc, EmitContext{kSymbolPlaceholder});
  if (!emitted.isOk())
    return statusError(emitted.status());
  return addKernelSteps(source, emitted.value(), desc.op, desc.op + " '" + desc.name + "'", operands, results, stepName);
}

llvm::Error PlanBuilderImpl::addKernelSteps(mlir::Operation *source, const EmittedKernels &emitted,
                                            const std::string &op, const std::string &opLabel,
                                            const std::vector<std::optional<uint32_t>> &operands,
                                            const std::vector<uint32_t> &results, const std::string &stepName) {
  std::string &prefix = prefixOfSource_[emitted.source];
  if (prefix.empty()) {
    prefix = "k" + std::to_string(kernelCount_++) + "_";
    programSource_ += replaceAll(emitted.source, kSymbolPlaceholder, prefix);
    programSource_ += "\n";
  }
  std::vector<uint32_t> scratch;
  for (auto [i, bytes] : llvm::enumerate(emitted.scratchBytes)) {
    TensorDesc raw; // scratch space is untyped: u8[bytes]
    raw.dtype = DType::U8;
    raw.shape = {static_cast<int64_t>(bytes)};
    scratch.push_back(newArenaBuffer(stepName + "#scratch" + std::to_string(i), raw));
  }
  for (const KernelLaunch &launch : emitted.launches) {
    plan::KernelStep step;
    step.image = 0;
    step.function = replaceAll(launch.function, kSymbolPlaceholder, prefix);
    step.grid = launch.grid;
    step.block = launch.block;
    step.sharedBytes = launch.sharedBytes;
    for (const KernelArg &arg : launch.args) {
      const char *what = arg.kind == KernelArg::Kind::Operand  ? "operand"
                         : arg.kind == KernelArg::Kind::Result ? "result"
                                                               : "scratch";
      size_t limit = arg.kind == KernelArg::Kind::Operand  ? operands.size()
                     : arg.kind == KernelArg::Kind::Result ? results.size()
                                                           : scratch.size();
      if (arg.index >= limit || (arg.kind == KernelArg::Kind::Operand && !operands[arg.index]))
        return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                       opLabel + ": internal: kernel " + launch.function +
                                           " takes " + what + " " + std::to_string(arg.index) +
                                           ", which the op does not have");
      step.args.push_back(arg.kind == KernelArg::Kind::Operand  ? *operands[arg.index]
                          : arg.kind == KernelArg::Kind::Result ? results[arg.index]
                                                                : scratch[arg.index]);
    }
    addStep(source, stepName, op, std::move(step));
  }
  return llvm::Error::success();
}

llvm::Error PlanBuilderImpl::lowerGeneric(mlir::Operation *op, int64_t index) {
  auto desc = describeOp(op);
  if (!desc)
    return opError(op, llvm::toString(desc.takeError()));
  std::vector<std::optional<uint32_t>> operands;
  for (mlir::Value slot : operandSlots(op)) {
    if (!slot) {
      operands.push_back(std::nullopt);
      continue;
    }
    auto buffer = bufferFor(slot);
    if (!buffer)
      return buffer.takeError();
    operands.push_back(*buffer);
  }
  std::string name = nodeName(op);
  std::vector<uint32_t> results;
  for (auto [i, result] : llvm::enumerate(op->getResults())) {
    std::string resultName = op->getNumResults() == 1 ? name : name + "#" + std::to_string(i);
    // In place: the result takes the bytes of a same-size operand that dies here.
    if (i == 0 && isInPlaceCandidate(op)) {
      for (auto [slot, operand] : llvm::enumerate(op->getOperands())) {
        if (operand.getType() != result.getType() || !bufferOf_.count(operand))
          continue;
        int storage = storageOf_[bufferOf_[operand]];
        if (storage < 0 || storages_[storage].isOutput || storages_[storage].lastValueUse != index)
          continue;
        // A graph output written over an input's bytes would need a copy to an output of its own.
        if (storages_[storage].isInput && lastUse_.lookup(result) == INT64_MAX)
          continue;
        bool sharedWithOther = llvm::any_of(op->getOperands(), [&](mlir::Value other) {
          return other != operand && bufferOf_.count(other) && storageOf_[bufferOf_[other]] == storage;
        });
        if (sharedWithOther)
          continue;
        uint32_t buffer = viewOf(bufferOf_[operand], resultName, desc->results[i]);
        bufferOf_[result] = buffer;
        storages_[storage].lastValueUse = lastUse_.lookup(result);
        break;
      }
    }
    results.push_back(bufferOf_.count(result) ? bufferOf_[result] : defineResult(result, resultName, desc->results[i]));
  }
  // A where run over the bytes of the operand it keeps writes only the rows it changes.
  if (llvm::isa<WhereOp>(op))
    for (size_t kept : {1, 2})
      if (operands[kept] && storageOf_[results[0]] >= 0 && storageOf_[results[0]] == storageOf_[*operands[kept]])
        if (std::optional<EmittedKernels> emitted = emitWhereInPlace(*desc, kept, EmitContext{kSymbolPlaceholder}))
          return addKernelSteps(op, *emitted, desc->op, desc->op + " '" + desc->name + "'", operands, results, name);
  return emitKernelOp(op, *desc, operands, results, name);
}

//===-- The walk ----------------------------------------------------------===//

void PlanBuilderImpl::recordValues(mlir::Operation *op) {
  if (plan_.steps.empty())
    return;
  // The op's last step completes its values. An op that made no step (a reshape view) names
  // bytes an earlier step wrote and that are still live: they are its value after the last
  // step so far.
  plan::Step &step = plan_.steps.back();
  for (auto [i, name] : llvm::enumerate(onnxValueNames(op))) {
    mlir::Value result = op->getResult(i);
    if (name.empty() || !bufferOf_.count(result))
      continue;
    if (llvm::is_contained(step.values, name))
      continue;
    step.values.push_back(name);
    step.valueBuffers.push_back(bufferOf_[result]);
  }
}

llvm::Error PlanBuilderImpl::lowerOp(mlir::Operation *op, int64_t index) {
  if (llvm::isa<ConstantOp>(op))
    return llvm::Error::success(); // placed in the weights blob when a step first reads it
  if (llvm::isa<ReshapeOp>(op)) {
    auto input = bufferFor(op->getOperand(0));
    if (!input)
      return input.takeError();
    auto type = describeValue(op->getResult(0));
    if (!type)
      return opError(op, llvm::toString(type.takeError()));
    uint32_t view = viewOf(*input, nodeName(op), *type); // the reshape's result shape
    bufferOf_[op->getResult(0)] = view;
    if (storageOf_[view] >= 0)
      storages_[storageOf_[view]].lastValueUse =
          std::max(storages_[storageOf_[view]].lastValueUse, lastUse_.lookup(op->getResult(0)));
    return llvm::Error::success();
  }
  if (llvm::isa<ConvOp>(op))
    return lowerConv(op);
  if (llvm::isa<ConvTransposeOp>(op))
    return lowerConvTranspose(op);
  if (llvm::isa<MatMulOp>(op))
    return lowerMatMul(op);
  if (llvm::isa<GemmOp>(op))
    return lowerGemm(op);
  if (auto group = llvm::dyn_cast<FusionGroupOp>(op); group && group.getKind() == "gemm")
    return lowerGemmGroup(op);
  if (auto group = llvm::dyn_cast<FusionGroupOp>(op); group && group.getKind() == "conv")
    return lowerConvGroup(op);
  if (llvm::isa<AttentionOp>(op))
    return lowerAttention(op);
  return lowerGeneric(op, index);
}

llvm::Error PlanBuilderImpl::bindOutputs(mlir::Operation *terminator) {
  auto func = llvm::cast<mlir::func::FuncOp>(terminator->getParentOp());
  for (auto [i, value] : llvm::enumerate(terminator->getOperands())) {
    auto nameAttr = func.getResultAttrOfType<mlir::StringAttr>(i, "kiln.name");
    std::string name = nameAttr ? nameAttr.getValue().str() : "output" + std::to_string(i);
    auto desc = describeValue(value);
    if (!desc)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "output '" + name + "': " + llvm::toString(desc.takeError()));
    auto buffer = bufferFor(value);
    if (!buffer)
      return buffer.takeError();
    uint32_t bound = *buffer;
    int storage = storageOf_[bound];
    // An output needs arena bytes of its own: copy when it is a weight, an input or another output.
    if (storage < 0 || storages_[storage].isInput || storages_[storage].isOutput) {
      bound = newArenaBuffer(name, *desc);
      plan::CopyStep copy{*buffer, bound, plan_.buffers[*buffer].bytes};
      addStep(nullptr, name, "copy", copy); // covers no ONNX node
      storage = storageOf_[bound];
    }
    storages_[storage].isOutput = true;
    plan_.outputs.push_back(plan::TensorBinding{name, desc->dtype, desc->shape, bound});
  }
  return llvm::Error::success();
}

llvm::Error PlanBuilderImpl::planArena() {
  int64_t lastStep = std::max<int64_t>(0, static_cast<int64_t>(plan_.steps.size()) - 1);
  std::vector<MemoryRequest> requests(storages_.size());
  for (auto [i, storage] : llvm::enumerate(storages_)) {
    requests[i].bytes = storage.bytes;
    requests[i].firstStep = storage.isInput ? 0 : INT64_MAX;
    requests[i].lastStep = storage.isOutput ? lastStep : -1;
  }
  auto touch = [&](uint32_t buffer, int64_t step) {
    int storage = storageOf_[buffer];
    if (storage < 0)
      return;
    requests[storage].firstStep = std::min(requests[storage].firstStep, step);
    requests[storage].lastStep = std::max(requests[storage].lastStep, step);
  };
  // Every buffer a step's schema names (Plan.h), read or written, is live at that step.
  for (auto [s, step] : llvm::enumerate(plan_.steps)) {
    int64_t index = static_cast<int64_t>(s);
    std::visit([&](const auto &params) { plan::forEachBufferIndex(params, [&](uint32_t b) { touch(b, index); }); },
               step.params);
  }
  for (MemoryRequest &request : requests)
    if (request.firstStep > request.lastStep) { // never touched (an unused input)
      request.firstStep = 0;
      request.lastStep = 0;
    }
  MemoryPlan memory = planMemory(requests, plan::kBufferAlignment);
  if (!isValidMemoryPlan(requests, memory, plan::kBufferAlignment))
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "internal: the memory plan overlaps live tensors");
  for (auto [b, buffer] : llvm::enumerate(plan_.buffers))
    if (storageOf_[b] >= 0)
      buffer.offset = memory.offsets[storageOf_[b]];
  plan_.metadata.arenaBytes = memory.peakBytes;
  plan_.metadata.arenaLowerBound = memory.lowerBound;
  return llvm::Error::success();
}

llvm::Error PlanBuilderImpl::compileKernels() {
  if (kernelCount_ == 0)
    return llvm::Error::success();
  progress("compiling " + std::to_string(kernelCount_) + " distinct kernels with NVRTC for sm_" +
           std::to_string(options_.smVersion));
  std::string source = programPrelude() + "\n" + programSource_;
  auto compiled = compileWithNvrtc(source, "kiln_kernels.cu", NvrtcOptions{options_.smVersion, options_.emitPtx});
  if (!compiled.isOk())
    return statusError(compiled.status());
  plan::KernelImage image;
  image.name = "kernels";
  image.smVersion = options_.smVersion;
  image.cubin = std::move(compiled.value().cubin);
  image.ptx = std::move(compiled.value().ptx);
  plan_.images.push_back(std::move(image));
  return llvm::Error::success();
}

llvm::Expected<plan::Plan> PlanBuilderImpl::build(mlir::Operation *function) {
  auto func = llvm::cast<mlir::func::FuncOp>(function);
  mlir::Block &body = func.getBody().front();

  // Last reader of every value (outputs live to the end).
  int64_t index = 0;
  for (mlir::Operation &op : body) {
    for (mlir::Value operand : op.getOperands())
      lastUse_[operand] = llvm::isa<mlir::func::ReturnOp>(op) ? INT64_MAX : index;
    ++index;
  }

  for (auto [i, argument] : llvm::enumerate(func.getArguments())) {
    auto nameAttr = func.getArgAttrOfType<mlir::StringAttr>(i, "kiln.name");
    std::string name = nameAttr ? nameAttr.getValue().str() : "input" + std::to_string(i);
    auto desc = describeValue(argument);
    if (!desc)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "input '" + name + "': " + llvm::toString(desc.takeError()) +
                                         "; give it a static shape with --shape " + name + "=...");
    uint32_t buffer = defineResult(argument, name, *desc);
    storages_[storageOf_[buffer]].isInput = true;
    plan_.inputs.push_back(plan::TensorBinding{name, desc->dtype, desc->shape, buffer});
  }

  int64_t total = static_cast<int64_t>(body.getOperations().size());
  progress("lowering " + std::to_string(total) + " ops");
  index = 0;
  for (mlir::Operation &op : body) {
    if (llvm::isa<mlir::func::ReturnOp>(op)) {
      if (auto err = bindOutputs(&op))
        return std::move(err);
    } else {
      if (auto err = lowerOp(&op, index))
        return std::move(err);
      recordValues(&op);
    }
    ++index;
  }
  progress("planning memory for " + std::to_string(storages_.size()) + " tensors");
  if (auto err = planArena())
    return std::move(err);
  if (auto err = compileKernels())
    return std::move(err);

  plan::Metadata &meta = plan_.metadata;
  meta.compilerVersion = KILN_VERSION;
  meta.computeCapability = options_.smVersion;
  meta.cudaVersion = nvrtcToolkitVersion();
  meta.cudnnVersion = CUDNN_VERSION;
  meta.cublasLtVersion = CUBLAS_VER_MAJOR * 10000 + CUBLAS_VER_MINOR * 100 + CUBLAS_VER_PATCH;
  meta.precision = options_.precision.empty() ? precisionName(options_.math) : options_.precision;
  meta.precisionOverrides = options_.precisionOverrides;
  meta.precisionChoice = options_.precisionChoice;
  meta.model = options_.modelName;
  plan_.setWeights(std::move(weights_));
  return std::move(plan_);
}

llvm::Expected<plan::Plan> buildPlan(mlir::ModuleOp module, const CompileOptions &options) {
  mlir::func::FuncOp main;
  for (auto func : module.getOps<mlir::func::FuncOp>())
    if (!main || func.getSymName() == "main")
      main = func;
  if (!main || main.getBody().empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "the module has no function to compile");
  PlanBuilderImpl builder(options);
  auto plan = builder.build(main);
  if (!plan)
    return plan.takeError();
  Status valid = plan::validatePlan(*plan);
  if (!valid.isOk())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "internal: codegen produced an invalid plan: " + valid.message());
  return plan;
}

} // namespace kiln::codegen
