//===- CalibrationRun.cpp - activation ranges measured on calibration inputs ===//

#include "CalibrationRun.h"
#include "CalibrationOnGpu.h"
#include "InterpreterRun.h"
#include "ModelLoading.h"

#include "ir/Interpreter/Interpreter.h"
#include "ir/KilnOps.h"
#include "ir/Provenance.h"
#include "passes/Pipelines.h"
#include "passes/QuantizableOps.h"
#include "passes/RangeHistogram.h"
#include "runtime/Runtime.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

namespace kiln::cli {

namespace {

using interp::Tensor;

/// The ONNX values `func` computes in evaluation order, graph inputs first (only names).
std::vector<std::string> valueOrder(mlir::func::FuncOp func) {
  std::vector<std::string> order;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    order.push_back(interfaceName(func, i, false));
  func.walk([&](mlir::Operation *op) {
    for (const std::string &name : onnxValueNames(op))
      if (!name.empty())
        order.push_back(name);
  });
  return order;
}

/// The output-channel axis of the constant weight of a conv, conv_transpose, matmul or gemm,
/// with that weight; nullopt for other ops and weights computed at run time.
std::optional<std::pair<int64_t, ConstantOp>> constantWeight(mlir::Operation *op) {
  std::optional<int64_t> axis = weightChannelAxis(op);
  if (!axis)
    return std::nullopt;
  auto constant = op->getOperand(1).getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto type = llvm::cast<mlir::RankedTensorType>(constant.getType());
  if (!llvm::isa<mlir::FloatType>(type.getElementType()) || type.getRank() <= *axis)
    return std::nullopt;
  return std::make_pair(*axis, constant);
}

llvm::Expected<std::vector<WeightRange>> weightRanges(mlir::func::FuncOp func) {
  std::vector<WeightRange> out;
  llvm::Error failed = llvm::Error::success();
  func.walk([&](mlir::Operation *op) {
    auto weight = constantWeight(op);
    if (!weight)
      return mlir::WalkResult::advance();
    auto [axis, constant] = *weight;
    auto absMax = channelAbsMax(constant, axis);
    if (!absMax) {
      failed = llvm::createStringError(llvm::inconvertibleErrorCode(),
                                       "the weight of " + describeNode(op) + ": " + llvm::toString(absMax.takeError()));
      return mlir::WalkResult::interrupt();
    }
    WeightRange range{nodeName(op), op->getName().getStringRef().str(), axis, std::move(*absMax)};
    out.push_back(std::move(range));
    return mlir::WalkResult::advance();
  });
  if (failed)
    return std::move(failed);
  return out;
}

/// Evaluates `func` on every sample (in parallel) and merges every value's statistics.
llvm::Expected<RangeMap> collect(mlir::func::FuncOp func, const std::vector<CalibrationSample> &samples,
                                  const std::function<void(const std::string &)> &progress) {
  RangeMap merged;
  std::mutex mutex;
  std::vector<std::string> errors(samples.size());
  std::atomic<size_t> next{0}, done{0};
  auto start = std::chrono::steady_clock::now();
  auto work = [&] {
    for (size_t s = next++; s < samples.size(); s = next++) {
      RangeMap ranges;
      llvm::StringSet<> seen;
      auto record = [&](const std::string &name, const Tensor &t) {
        if (!name.empty() && t.isFloat() && seen.insert(name).second)
          ranges[name].add(t.f);
      };
      auto arguments = interpreterArguments(func, samples[s].files, std::nullopt);
      if (!arguments) {
        errors[s] = llvm::toString(arguments.takeError());
        continue;
      }
      for (auto [i, t] : llvm::enumerate(*arguments))
        record(interfaceName(func, i, false), t);
      auto outputs =
          interp::evaluateFunction(func, *arguments, [&](mlir::Operation *op, llvm::ArrayRef<Tensor> results) {
            std::vector<std::string> names = onnxValueNames(op);
            for (size_t r = 0; r < results.size() && r < names.size(); ++r)
              record(names[r], results[r]);
            return llvm::Error::success();
          });
      if (!outputs) {
        errors[s] = llvm::toString(outputs.takeError());
        continue;
      }
      // Merging is exact and order-free (RangeHistogram), so samples merge as they finish.
      std::lock_guard<std::mutex> lock(mutex);
      for (auto &entry : ranges)
        merged[entry.getKey()].merge(entry.getValue());
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (progress)
        progress(llvm::formatv("input {0}/{1} ({2}) done, {3:f1} s", ++done, samples.size(), samples[s].name, seconds));
    }
  };
  size_t workers = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, samples.size());
  std::vector<std::thread> pool;
  for (size_t w = 0; w < workers; ++w)
    pool.emplace_back(work);
  for (std::thread &t : pool)
    t.join();
  for (size_t s = 0; s < samples.size(); ++s)
    if (!errors[s].empty())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "calibration input '" + samples[s].name + "': " + errors[s]);
  return merged;
}

/// The fp32 module the quantization pass sees: the ONNX layout, before fusion.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> calibrationModule(mlir::ModuleOp imported) {
  mlir::OwningOpRef<mlir::ModuleOp> module(imported.clone());
  PipelineOptions options;
  options.strictFp32 = true;
  options.fuse = false;
  options.fuseAttention = false;
  options.layout = Layout::NCHW;
  mlir::PassManager pm(module->getContext(), mlir::ModuleOp::getOperationName());
  buildOptimizationPipeline(pm, options);
  if (mlir::failed(pm.run(*module)))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the fp32 optimization pipeline failed (the errors above say where)");
  return module;
}

} // namespace

llvm::Expected<std::vector<std::string>> calibrationInputNames(mlir::ModuleOp imported) {
  auto main = mainFunction(imported);
  if (!main)
    return main.takeError();
  std::vector<std::string> names;
  for (unsigned i = 0; i < main->getNumArguments(); ++i)
    names.push_back(interfaceName(*main, i, false));
  return names;
}

llvm::Expected<CalibrationTable> measureCalibration(mlir::ModuleOp imported, const std::vector<CalibrationSample> &samples,
                                                    const CalibrationRunOptions &options) {
  auto module = calibrationModule(imported);
  if (!module)
    return module.takeError();
  auto main = mainFunction(**module);
  if (!main)
    return main.takeError();
  mlir::func::FuncOp func = *main;
  auto say = [&](const std::string &line) {
    if (options.progress)
      options.progress(line);
  };
  std::unique_ptr<Runtime> runtime;
  if (options.device != CalibrationDevice::Cpu) {
    std::string why;
    runtime = openCalibrationDevice(options.timingCache, why);
    if (!runtime && options.device == CalibrationDevice::Gpu)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "--device gpu: " + why + "; calibrate with --device cpu (the interpreter) instead");
    if (!runtime)
      say(why + "; evaluating on the CPU interpreter");
  }
  if (runtime)
    say("evaluating on the " + runtime->deviceName() + " (a strict-fp32 plan run step by step)");
  auto ranges = runtime ? collectRangesOnGpu(*runtime, func, samples, options.progress)
                        : collect(func, samples, options.progress);
  if (!ranges)
    return ranges.takeError();

  CalibrationTable table;
  table.model = options.model;
  table.compiler = KILN_VERSION;
  table.samples = samples.size();
  if (runtime)
    table.measuredOn = runtime->deviceName();
  table.method = options.method;
  table.percent = options.percentile;
  llvm::StringSet<> listed;
  for (const std::string &name : valueOrder(func)) {
    auto it = ranges->find(name);
    if (it == ranges->end() || !listed.insert(name).second)
      continue;
    const RangeHistogram &h = it->getValue();
    ActivationRange a;
    a.name = name;
    a.count = h.count();
    a.nonFinite = h.nonFinite();
    a.min = h.min();
    a.max = h.max();
    a.minmax = h.absMax();
    a.percentile = h.percentileThreshold(options.percentile);
    a.entropy = h.entropyThreshold();
    table.activations.push_back(std::move(a));
  }
  auto weights = weightRanges(func);
  if (!weights)
    return weights.takeError();
  table.weights = std::move(*weights);
  return table;
}

llvm::Error writeCalibrationTable(const CalibrationTable &table, const std::string &path) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_Text);
  if (ec)
    return llvm::createStringError(ec, "cannot write '" + path + "': " + ec.message());
  os << llvm::formatv("{0:2}", toJSON(table)) << "\n";
  return llvm::Error::success();
}

} // namespace kiln::cli
