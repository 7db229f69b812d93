//===- CalibrationOnGpu.cpp - calibration ranges measured on the GPU ------===//

#include "CalibrationOnGpu.h"
#include "InterpreterRun.h"
#include "ModelLoading.h"
#include "TensorNpy.h"

#include "codegen/PlanBuilder.h"
#include "ir/Provenance.h"
#include "runtime/Runtime.h"
#include "runtime/TensorData.h"
#include "runtime/plan/Plan.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <chrono>

namespace kiln::cli {

namespace {

llvm::Error gpuError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "calibration on the GPU: " + message);
}

/// The ONNX values a plan's steps complete (plan::Step::values).
llvm::StringSet<> planValueNames(const plan::Plan &plan) {
  llvm::StringSet<> names;
  for (const plan::Step &step : plan.steps)
    for (const std::string &name : step.values)
      names.insert(name);
  return names;
}

/// Ops whose result holds exactly the elements of their only data operand, rearranged: a value
/// such an op computes has the statistics of its source.
bool keepsElements(mlir::Operation *op) {
  llvm::StringRef name = op->getName().getStringRef();
  return name == "kiln.reshape" || name == "kiln.transpose" || name == "kiln.identity";
}

/// The ONNX value (or graph input) `value` is; "" for anything unnamed.
std::string sourceName(mlir::func::FuncOp func, mlir::Value value) {
  if (auto arg = llvm::dyn_cast<mlir::BlockArgument>(value))
    return arg.getOwner()->getParentOp() == func.getOperation() ? interfaceName(func, arg.getArgNumber(), false) : "";
  return onnxValueName(value);
}

} // namespace

llvm::Expected<std::vector<std::pair<std::string, std::string>>> valuesFromAliases(mlir::func::FuncOp func,
                                                                                  const plan::Plan &plan) {
  llvm::StringSet<> computed = planValueNames(plan);
  llvm::StringSet<> known; // graph inputs, values a step completes and those found so far
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    known.insert(interfaceName(func, i, false));
  for (const auto &entry : computed)
    known.insert(entry.getKey());
  std::vector<std::pair<std::string, std::string>> aliases;
  llvm::Error missing = llvm::Error::success();
  func.walk([&](mlir::Operation *op) {
    for (auto [r, name] : llvm::enumerate(onnxValueNames(op))) {
      if (name.empty() || known.contains(name) ||
          !llvm::isa<mlir::FloatType>(llvm::cast<mlir::ShapedType>(op->getResult(r).getType()).getElementType()))
        continue;
      std::string source = op->getNumOperands() >= 1 ? sourceName(func, op->getOperand(0)) : "";
      if (keepsElements(op) && !source.empty() && known.contains(source)) {
        aliases.emplace_back(name, source);
        known.insert(name);
        continue;
      }
      missing = gpuError("the plan computes ONNX value '" + name + "' (" + describeNode(op) +
                         ") in no step of its own; calibrate on the CPU (--device cpu)");
      return mlir::WalkResult::interrupt();
    }
    return mlir::WalkResult::advance();
  });
  if (missing)
    return std::move(missing);
  return aliases;
}

std::unique_ptr<Runtime> openCalibrationDevice(const std::string &timingCache, std::string &why) {
  RuntimeOptions options;
  options.timingCachePath = timingCache;
  auto runtime = Runtime::create(options);
  if (!runtime.isOk()) {
    why = runtime.status().message();
    return nullptr;
  }
  return std::move(runtime.value());
}

llvm::Expected<RangeMap> collectRangesOnGpu(Runtime &runtime, mlir::func::FuncOp func,
                                            const std::vector<CalibrationSample> &samples,
                                            const std::function<void(const std::string &)> &progress) {
  auto say = [&](const std::string &line) {
    if (progress)
      progress(line);
  };
  // Lowering rewrites the module; the caller's stays as it is for the names and weights.
  mlir::OwningOpRef<mlir::ModuleOp> copy(func->getParentOfType<mlir::ModuleOp>().clone());
  codegen::CompileOptions compile;
  compile.math = plan::MathMode::StrictF32;
  compile.precision = "fp32";
  compile.smVersion = runtime.target().computeCapability;
  compile.modelName = "calibration";
  say(llvm::formatv("compiling the strict-fp32 calibration plan for sm_{0}", compile.smVersion));
  auto plan = codegen::buildPlan(*copy, compile);
  if (!plan)
    return gpuError(llvm::toString(plan.takeError()));
  auto aliases = valuesFromAliases(func, *plan);
  if (!aliases)
    return aliases.takeError();
  say("loading it on the " + runtime.deviceName());
  auto engine = runtime.loadEngine(std::move(*plan));
  if (!engine.isOk())
    return gpuError(engine.status().message());
  ContextOptions contextOptions;
  contextOptions.useCudaGraph = false; // every run is a step-by-step pass
  auto context = engine.value()->createContext(contextOptions);
  if (!context.isOk())
    return gpuError(context.status().message());

  RangeMap ranges;
  auto start = std::chrono::steady_clock::now();
  std::vector<double> values;
  for (auto [s, sample] : llvm::enumerate(samples)) {
    // The interpreter's reading of the files checks them against the model's inputs and gives
    // the inputs' own statistics, as the CPU calibration records them; the same tensors feed
    // the plan.
    auto arguments = interpreterArguments(func, sample.files, std::nullopt);
    if (!arguments)
      return gpuError("calibration input '" + sample.name + "': " + llvm::toString(arguments.takeError()));
    for (auto [i, t] : llvm::enumerate(*arguments)) {
      std::string name = interfaceName(func, i, false);
      if (t.isFloat())
        ranges[name].add(t.f);
      const std::vector<TensorDesc> &inputs = engine.value()->inputs();
      auto input = llvm::find_if(inputs, [&](const TensorDesc &d) { return d.name == name; });
      if (input == inputs.end())
        continue; // an input no step reads
      auto array = tensorToNpy(t);
      if (!array)
        return gpuError("calibration input '" + sample.name + "': " + llvm::toString(array.takeError()));
      auto bytes = runtime::bytesFromNpy(*array, plan::TensorBinding{name, input->dtype, input->shape, 0});
      if (!bytes.isOk())
        return gpuError(bytes.status().message());
      if (Status status = context.value()->setInput(name, bytes.value().data(), bytes.value().size()); !status.isOk())
        return gpuError(status.message());
    }
    Status status = context.value()->runStepsObserved(
        [&](size_t, std::vector<ExecutionContext::StepValue> stepValues) -> Status {
          for (const ExecutionContext::StepValue &value : stepValues) {
            if (!plan::isFloat(value.dtype))
              continue;
            int64_t count = 1;
            for (int64_t d : value.shape)
              count *= d;
            values.resize(count);
            for (int64_t k = 0; k < count; ++k)
              values[k] = runtime::elementAsDouble(value.bytes.data(), value.dtype, k);
            ranges[value.name].add(values);
          }
          return Status::ok();
        });
    if (!status.isOk())
      return gpuError("calibration input '" + sample.name + "': " + status.message());
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    say(llvm::formatv("input {0}/{1} ({2}) done, {3:f1} s", s + 1, samples.size(), sample.name, seconds));
  }

  for (const auto &[name, source] : *aliases) {
    RangeHistogram copy = ranges[source];
    ranges[name] = std::move(copy);
  }
  return ranges;
}

} // namespace kiln::cli
