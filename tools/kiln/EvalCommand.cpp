//===- EvalCommand.cpp - `kiln eval` ----------------------------------------===//
//
// Runs a model through the CPU reference interpreter: ONNX (imported first) or kiln MLIR.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "frontend/OnnxImporter.h"
#include "ir/Interpreter/Interpreter.h"
#include "ir/KilnDialect.h"
#include "runtime/Npy.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <random>

namespace kiln::cli {

const char *const kEvalHelp = R"(kiln eval - run a model on the CPU reference interpreter

USAGE: kiln eval <model.onnx|model.mlir> [options]

Evaluates every op with its reference meaning (f32 compute, f64 accumulation, exact rounding
of f16/bf16/f8 storage). Inputs are .npy files matched to the model's inputs by name; inputs
not given are random with a fixed seed (floats uniform in [-1, 1), integers in [0, 10), bools
fair coins), so two runs agree. Outputs are written as <output name>.npy. numpy has no bf16 or
f8 dtype: such inputs are given as float32 (and rounded), such outputs are written as float32.

OPTIONS:
  --input <name>=<file.npy>  Value of a model input (repeatable)
  --output-dir <dir>         Where to write the outputs (default: print a summary only)
  --seed <n>                 Seed of the random inputs (default 0)
  --shape <name>=<dims>      Static shape of an ONNX input with symbolic dims (repeatable)
  --help                     Show this help

EXIT STATUS: 0 on success, 1 when the model cannot be loaded or evaluated, 2 on a usage error.
)";

namespace {

using interp::Tensor;

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

} // namespace

int runEval(const std::vector<std::string> &args) {
  frontend::ImportOptions options;
  std::map<std::string, std::string> inputFiles;
  std::string model, outputDir;
  uint64_t seed = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &a = args[i];
    auto value = [&]() -> const std::string * { return i + 1 < args.size() ? &args[++i] : nullptr; };
    if (a == "--help" || a == "-h") {
      llvm::outs() << kEvalHelp;
      return 0;
    }
    if (a == "--input" || a == "--output-dir" || a == "--seed" || a == "--shape") {
      const std::string *v = value();
      if (!v) {
        llvm::errs() << "kiln eval: " << a << " needs a value\n";
        return 2;
      }
      if (a == "--output-dir") {
        outputDir = *v;
      } else if (a == "--seed") {
        if (llvm::StringRef(*v).getAsInteger(10, seed)) {
          llvm::errs() << "kiln eval: --seed '" << *v << "' is not a number\n";
          return 2;
        }
      } else if (a == "--shape") {
        if (auto err = frontend::parseShapeOption(*v, options)) {
          llvm::errs() << "kiln eval: " << llvm::toString(std::move(err)) << "\n";
          return 2;
        }
      } else {
        auto [name, file] = llvm::StringRef(*v).split('=');
        if (name.empty() || file.empty()) {
          llvm::errs() << "kiln eval: --input '" << *v << "' is not name=file.npy\n";
          return 2;
        }
        inputFiles[name.str()] = file.str();
      }
    } else if (!a.empty() && a[0] == '-') {
      llvm::errs() << "kiln eval: unknown option '" << a << "'; run 'kiln eval --help'\n";
      return 2;
    } else if (model.empty()) {
      model = a;
    } else {
      llvm::errs() << "kiln eval: more than one model given\n";
      return 2;
    }
  }
  if (model.empty()) {
    llvm::errs() << "kiln eval: no model given; run 'kiln eval --help'\n";
    return 2;
  }

  mlir::MLIRContext context;
  frontend::registerImportDialects(context);
  mlir::OwningOpRef<mlir::ModuleOp> module;
  if (llvm::StringRef(model).ends_with(".mlir")) {
    module = mlir::parseSourceFile<mlir::ModuleOp>(model, &context);
    if (!module) {
      llvm::errs() << "kiln eval: error: cannot parse '" << model << "' as kiln MLIR\n";
      return 1;
    }
  } else {
    auto imported = frontend::importOnnxFile(context, model, options);
    if (!imported) {
      llvm::errs() << "kiln eval: error: " << llvm::toString(imported.takeError()) << "\n";
      return 1;
    }
    module = std::move(*imported);
  }
  auto funcs = module->getOps<mlir::func::FuncOp>();
  if (funcs.empty()) {
    llvm::errs() << "kiln eval: error: the module has no function\n";
    return 1;
  }
  mlir::func::FuncOp func = *funcs.begin();

  std::mt19937_64 rng(seed);
  llvm::SmallVector<Tensor> inputs;
  std::map<std::string, std::string> unused = inputFiles;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    auto type = llvm::cast<mlir::RankedTensorType>(func.getArgument(i).getType());
    std::string name = nameOf(func, i, false);
    auto it = inputFiles.find(name);
    if (it == inputFiles.end()) {
      inputs.push_back(randomTensor(type, rng));
      continue;
    }
    unused.erase(name);
    auto array = runtime::readNpy(it->second);
    if (!array.isOk()) {
      llvm::errs() << "kiln eval: error: " << array.status().message() << "\n";
      return 1;
    }
    auto tensor = tensorFromNpy(array.value(), type, name);
    if (!tensor) {
      llvm::errs() << "kiln eval: error: " << llvm::toString(tensor.takeError()) << "\n";
      return 1;
    }
    inputs.push_back(std::move(*tensor));
  }
  if (!unused.empty()) {
    llvm::errs() << "kiln eval: error: --input names '" << unused.begin()->first
                 << "', which is not a model input\n";
    return 1;
  }

  auto start = std::chrono::steady_clock::now();
  auto outputs = interp::evaluateFunction(func, inputs);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!outputs) {
    llvm::errs() << "kiln eval: error: " << llvm::toString(outputs.takeError()) << "\n";
    return 1;
  }
  if (!outputDir.empty())
    if (std::error_code ec = llvm::sys::fs::create_directories(outputDir)) {
      llvm::errs() << "kiln eval: error: cannot create '" << outputDir << "': " << ec.message() << "\n";
      return 1;
    }
  llvm::outs() << "evaluated " << model << " in " << llvm::format("%.3f", seconds) << " s\n";
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
    if (!array) {
      llvm::errs() << "kiln eval: error: " << llvm::toString(array.takeError()) << "\n";
      return 1;
    }
    runtime::Status status = runtime::writeNpy(std::string(path), *array);
    if (!status.isOk()) {
      llvm::errs() << "kiln eval: error: " << status.message() << "\n";
      return 1;
    }
  }
  return 0;
}

} // namespace kiln::cli
