//===- EvalCommand.cpp - `kiln eval` ----------------------------------------===//
//
// Runs a model through the CPU reference interpreter: ONNX (imported first) or kiln MLIR,
// after the optimization pipeline `kiln compile` runs, so it evaluates the module a plan is
// built from.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "Diagnostics.h"
#include "InputFlags.h"
#include "ModelLoading.h"
#include "PipelineFlags.h"

#include "ir/Interpreter/Interpreter.h"
#include "ir/Provenance.h"
#include "runtime/Npy.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <map>
#include <optional>
#include <random>
#include <set>

namespace kiln::cli {

namespace {

namespace cl = llvm::cl;
using interp::Tensor;

const char *const kEvalOverview =
    R"(Runs the optimization pipeline of `kiln compile` with the same options (fp32 by default),
then evaluates every op with its reference meaning (f32 compute, f64 accumulation, exact
rounding of f16/bf16/f8 storage), so `kiln eval --precision bf16` computes what a bf16 plan
should. Inputs are .npy files matched to the model's inputs by name; inputs not given are
random with a fixed seed, so two runs agree. Outputs are written as <output name>.npy. numpy
has no bf16 or f8 dtype: such inputs are given as float32 (and rounded), such outputs are
written as float32.

Exit status: 0 on success, 1 when the model cannot be loaded or evaluated, 2 on a usage error.
)";

/// The numpy dtype of an element type, or "" when numpy has none (bf16, f8).
std::string npyDtype(mlir::Type t) {
  if (t.isF32()) return "<f4";
  if (t.isF64()) return "<f8";
  if (t.isF16()) return "<f2";
  if (t.isInteger(1)) return "|b1";
  if (auto i = llvm::dyn_cast<mlir::IntegerType>(t)) {
    std::string kind = i.isUnsigned() ? "u" : "i";
    int bytes = i.getWidth() / 8;
    return (bytes == 1 ? "|" : "<") + kind + std::to_string(bytes);
  }
  return "";
}

llvm::Expected<Tensor> tensorFromNpy(const runtime::NpyArray &array, mlir::RankedTensorType type,
                                     llvm::StringRef name) {
  auto fail = [&](const std::string &why) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "input '" + name + "': " + why);
  };
  std::string want = npyDtype(type.getElementType());
  // bf16 and f8 have no numpy dtype: they are given as f32 and rounded to the element type.
  bool widened = want.empty();
  if (widened)
    want = "<f4";
  if (array.dtype != want && !(want[0] == '|' && array.dtype.substr(1) == want.substr(1)))
    return fail("dtype " + array.dtype + " differs from the model's " + want +
                (widened ? " (bf16 and f8 inputs are given as float32)" : ""));
  if (llvm::ArrayRef<int64_t>(array.shape) != type.getShape())
    return fail("shape " + formatShape(array.shape) + " differs from the model's " +
                formatShape(type.getShape()));
  Tensor t = Tensor::zeros(type);
  const char *p = array.data.data();
  for (int64_t k = 0; k < t.size(); ++k) {
    if (want == "<f4") { float v; std::memcpy(&v, p + 4 * k, 4); interp::storeDouble(t, k, v); }
    else if (want == "<f8") { double v; std::memcpy(&v, p + 8 * k, 8); t.f[k] = v; }
    else if (want == "<f2") {
      uint16_t bits; std::memcpy(&bits, p + 2 * k, 2);
      llvm::APFloat f(llvm::APFloat::IEEEhalf(), llvm::APInt(16, bits));
      bool lost; f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven, &lost);
      t.f[k] = f.convertToDouble();
    } else {
      size_t bytes = runtime::NpyArray::elementSize(want);
      uint64_t raw = 0;
      std::memcpy(&raw, p + bytes * k, bytes);
      llvm::APInt v(bytes * 8, raw);
      t.i[k] = want[1] == 'i' ? v.getSExtValue() : (int64_t)v.getZExtValue();
    }
  }
  return t;
}

llvm::Expected<runtime::NpyArray> tensorToNpy(const Tensor &t) {
  runtime::NpyArray array;
  array.dtype = npyDtype(t.element);
  if (array.dtype.empty()) {
    // bf16 and f8 have no numpy dtype: write them widened to f32 (exact).
    array.dtype = "<f4";
  }
  array.shape.assign(t.shape.begin(), t.shape.end());
  size_t bytes = runtime::NpyArray::elementSize(array.dtype);
  array.data.resize(bytes * t.size());
  char *p = array.data.data();
  for (int64_t k = 0; k < t.size(); ++k) {
    if (array.dtype == "<f4") { float v = (float)t.f[k]; std::memcpy(p + 4 * k, &v, 4); }
    else if (array.dtype == "<f8") { std::memcpy(p + 8 * k, &t.f[k], 8); }
    else if (array.dtype == "<f2") {
      llvm::APFloat f(t.f[k]);
      bool lost; f.convert(llvm::APFloat::IEEEhalf(), llvm::APFloat::rmNearestTiesToEven, &lost);
      uint16_t bits = (uint16_t)f.bitcastToAPInt().getZExtValue();
      std::memcpy(p + 2 * k, &bits, 2);
    } else {
      std::memcpy(p + bytes * k, &t.i[k], bytes);
    }
  }
  return array;
}

Tensor randomTensor(mlir::RankedTensorType type, std::mt19937_64 &rng) {
  Tensor t = Tensor::zeros(type);
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int64_t> integer(0, 9), coin(0, 1);
  for (int64_t k = 0; k < t.size(); ++k) {
    if (t.isFloat())
      interp::storeDouble(t, k, real(rng));
    else
      t.i[k] = type.getElementType().isInteger(1) ? coin(rng) : integer(rng);
  }
  return t;
}

std::string nameOf(mlir::func::FuncOp func, unsigned i, bool result) {
  auto attr = result ? func.getResultAttrOfType<mlir::StringAttr>(i, "kiln.name")
                     : func.getArgAttrOfType<mlir::StringAttr>(i, "kiln.name");
  return attr ? attr.getValue().str() : (result ? "output" : "input") + std::to_string(i);
}

class EvalCommand : public Command {
public:
  explicit EvalCommand(Categories &categories)
      : Command("eval", "Run a model (ONNX or kiln MLIR) on the CPU reference interpreter", kEvalOverview),
        model(sub, categories), inputs(sub, categories), pipeline(sub, categories),
        outputDir("output-dir", cl::value_desc("dir"),
                  cl::desc("Where to write the outputs (default: print a summary only)"), cl::sub(sub),
                  cl::cat(categories.output)),
        dumpDir("dump", cl::value_desc("dir"),
                cl::desc("Also write every ONNX value the module computes, in evaluation order, as\n"
                         "<dir>/<NNNN>_<name>.npy with <dir>/manifest.json listing name, file, type,\n"
                         "shape (channels-last values as computed: NHWC), op and ONNX nodes. Values\n"
                         "a pass folded away or that only live inside a fused step are not computed\n"
                         "as such and are not written; the reference side of `kiln compare`"),
                cl::sub(sub), cl::cat(categories.output)),
        quiet("quiet", cl::desc("Do not print the passes' remarks"), cl::sub(sub), cl::cat(categories.output)) {}

  int run() override;

private:
  ModelFlags model;
  InputFlags inputs;
  PipelineFlags pipeline;
  cl::opt<std::string> outputDir;
  cl::opt<std::string> dumpDir;
  cl::opt<bool> quiet;
};

/// `kiln eval --dump`: writes each named value as the interpreter computes it and keeps the
/// manifest's entries; write() finishes the manifest.
class ValueDump {
public:
  explicit ValueDump(std::string dir) : dir_(std::move(dir)) {}

  llvm::Error observe(mlir::Operation *op, llvm::ArrayRef<Tensor> results) {
    std::vector<std::string> names = onnxValueNames(op);
    for (auto [i, name] : llvm::enumerate(names)) {
      if (name.empty() || !written_.insert(name).second)
        continue;
      const Tensor &t = results[i];
      char prefix[16];
      std::snprintf(prefix, sizeof prefix, "%04zu_", entries_.size());
      std::string file = prefix + runtime::npyFileName(name);
      llvm::SmallString<256> path(dir_);
      llvm::sys::path::append(path, file);
      auto array = tensorToNpy(t);
      if (!array)
        return array.takeError();
      if (runtime::Status status = runtime::writeNpy(std::string(path), *array); !status.isOk())
        return llvm::createStringError(llvm::inconvertibleErrorCode(), status.message());
      std::string type;
      llvm::raw_string_ostream os(type);
      os << t.element;
      llvm::json::Array shape, nodes;
      for (int64_t d : t.shape)
        shape.push_back(d);
      for (const std::string &node : nodeNames(op->getLoc()))
        nodes.push_back(node);
      entries_.push_back(llvm::json::Object{{"name", name},
                                            {"file", file},
                                            {"dtype", type},
                                            {"shape", std::move(shape)},
                                            {"op", op->getName().getStringRef()},
                                            {"nodes", std::move(nodes)}});
    }
    return llvm::Error::success();
  }

  llvm::Error write(llvm::StringRef model, llvm::StringRef precision) {
    llvm::SmallString<256> path(dir_);
    llvm::sys::path::append(path, "manifest.json");
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (ec)
      return llvm::createStringError(ec, "cannot write '" + path + "': " + ec.message());
    size_t count = entries_.size();
    os << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object{{"source", "interpreter"},
                                                                      {"model", model},
                                                                      {"precision", precision},
                                                                      {"values", std::move(entries_)}}))
       << "\n";
    llvm::outs() << "dumped " << count << " values into " << dir_ << "\n";
    return llvm::Error::success();
  }

private:
  std::string dir_;
  llvm::json::Array entries_;
  std::set<std::string> written_;
};

int EvalCommand::run() {
  auto importOptions = model.importOptions();
  if (!importOptions)
    return usageError(llvm::toString(importOptions.takeError()));
  auto files = inputs.inputFiles();
  if (!files)
    return usageError(llvm::toString(files.takeError()));
  const std::map<std::string, std::string> &inputFiles = *files;

  mlir::MLIRContext context;
  DiagnosticPrinter diagnostics(context, prefix(), /*showRemarks=*/!quiet);
  auto module = loadModel(context, model.path(), *importOptions);
  if (!module)
    return failure(llvm::toString(module.takeError()));
  if (mlir::failed(pipeline.runOptimizationPipeline(**module)))
    return kExitFailure;
  auto funcs = (*module)->getOps<mlir::func::FuncOp>();
  if (funcs.empty())
    return failure("the module has no function");
  mlir::func::FuncOp func = *funcs.begin();

  std::mt19937_64 rng(inputs.seed());
  llvm::SmallVector<Tensor> arguments;
  std::map<std::string, std::string> unused = inputFiles;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    auto type = llvm::cast<mlir::RankedTensorType>(func.getArgument(i).getType());
    std::string name = nameOf(func, i, false);
    auto it = inputFiles.find(name);
    if (it == inputFiles.end()) {
      arguments.push_back(randomTensor(type, rng));
      continue;
    }
    unused.erase(name);
    auto array = runtime::readNpy(it->second);
    if (!array.isOk())
      return failure(array.status().message());
    auto tensor = tensorFromNpy(array.value(), type, name);
    if (!tensor)
      return failure(llvm::toString(tensor.takeError()));
    arguments.push_back(std::move(*tensor));
  }
  if (!unused.empty())
    return failure("--input names '" + unused.begin()->first + "', which is not a model input");

  std::optional<ValueDump> dump;
  interp::ResultObserver observe;
  if (!dumpDir.empty()) {
    if (std::error_code ec = llvm::sys::fs::create_directories(dumpDir))
      return failure("cannot create '" + dumpDir + "': " + ec.message());
    dump.emplace(dumpDir);
    observe = [&](mlir::Operation *op, llvm::ArrayRef<Tensor> results) { return dump->observe(op, results); };
  }
  auto start = std::chrono::steady_clock::now();
  auto outputs = interp::evaluateFunction(func, arguments, observe);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!outputs)
    return failure(llvm::toString(outputs.takeError()));
  if (!outputDir.empty())
    if (std::error_code ec = llvm::sys::fs::create_directories(outputDir))
      return failure("cannot create '" + outputDir + "': " + ec.message());
  llvm::outs() << "evaluated " << model.path() << " in " << llvm::format("%.3f", seconds) << " s\n";
  if (dump)
    if (llvm::Error err = dump->write(model.path(), precisionName(pipeline.pipelineOptions().precision)))
      return failure(llvm::toString(std::move(err)));
  for (auto [i, t] : llvm::enumerate(*outputs)) {
    std::string name = nameOf(func, i, true);
    double lo = INFINITY, hi = -INFINITY, sum = 0;
    for (int64_t k = 0; k < t.size(); ++k) {
      double v = t.getDouble(k);
      lo = std::min(lo, v);
      hi = std::max(hi, v);
      sum += v;
    }
    llvm::outs() << "  " << name << " " << t.type() << " min " << llvm::format("%g", lo) << " max "
                 << llvm::format("%g", hi) << " mean "
                 << llvm::format("%g", t.size() ? sum / t.size() : 0.0) << "\n";
    if (outputDir.empty())
      continue;
    llvm::SmallString<256> path(outputDir);
    llvm::sys::path::append(path, runtime::npyFileName(name));
    auto array = tensorToNpy(t);
    if (!array)
      return failure(llvm::toString(array.takeError()));
    runtime::Status status = runtime::writeNpy(std::string(path), *array);
    if (!status.isOk())
      return failure(status.message());
  }
  return kExitOk;
}

} // namespace

std::unique_ptr<Command> makeEvalCommand(Categories &categories) {
  return std::make_unique<EvalCommand>(categories);
}

} // namespace kiln::cli
