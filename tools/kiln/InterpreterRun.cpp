//===- InterpreterRun.cpp - a model's inputs and values in the interpreter -===//

#include "InterpreterRun.h"

#include "ModelLoading.h"
#include "PipelineFlags.h"
#include "TensorNpy.h"
#include "ValueDump.h"

#include "ir/Interpreter/Interpreter.h"
#include "runtime/Npy.h"

#include "llvm/ADT/StringExtras.h"

#include <random>

namespace kiln::cli {

namespace {

llvm::Error runError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

interp::Tensor randomTensor(mlir::RankedTensorType type, std::mt19937_64 &rng) {
  interp::Tensor t = interp::Tensor::zeros(type);
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

} // namespace

llvm::Expected<llvm::SmallVector<interp::Tensor>> interpreterArguments(mlir::func::FuncOp func,
                                                                       const std::map<std::string, std::string> &files,
                                                                       std::optional<uint64_t> seed) {
  std::mt19937_64 rng(seed.value_or(0));
  llvm::SmallVector<interp::Tensor> arguments;
  std::map<std::string, std::string> unused = files;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    auto type = llvm::cast<mlir::RankedTensorType>(func.getArgument(i).getType());
    std::string name = interfaceName(func, i, false);
    auto it = files.find(name);
    if (it == files.end()) {
      if (!seed)
        return runError("no --input for model input '" + name + "'");
      arguments.push_back(randomTensor(type, rng));
      continue;
    }
    unused.erase(name);
    auto array = runtime::readNpy(it->second);
    if (!array.isOk())
      return runError(array.status().message());
    auto tensor = tensorFromNpy(array.value(), type, name);
    if (!tensor)
      return tensor.takeError();
    arguments.push_back(std::move(*tensor));
  }
  if (!unused.empty())
    return runError("--input names '" + unused.begin()->first + "', which is not a model input");
  return arguments;
}

llvm::Expected<llvm::SmallVector<interp::Tensor>> evaluateIntoDump(mlir::func::FuncOp func,
                                                                   llvm::ArrayRef<interp::Tensor> arguments,
                                                                   const std::string &modelPath,
                                                                   const PipelineOptions &options,
                                                                   const std::string &dir, size_t &count) {
  auto writer = ValueDumpWriter::create(dir);
  if (!writer)
    return writer.takeError();
  auto outputs = interp::evaluateFunction(
      func, arguments, [&](mlir::Operation *op, llvm::ArrayRef<interp::Tensor> results) {
        return writer->observe(op, results);
      });
  if (!outputs)
    return outputs.takeError();
  std::map<std::string, std::string> metadata{
      {"compiler", KILN_VERSION},
      {"precision", planPrecisionName(options)},
      {"strict_fp32", options.strictFp32 ? "yes" : "no"},
      {"fusion", options.fuse ? "yes" : "no"},
      {"fused_attention", options.fuseAttention ? "yes" : "no"},
      {"exact_gelu", options.exactGelu ? "yes" : "no"},
      {"layout", layoutName(options.layout).str()}};
  if (std::vector<std::string> overrides = precisionOverrideList(options); !overrides.empty())
    metadata["precision_overrides"] = llvm::join(overrides, ",");
  if (options.quantization)
    metadata["calibration"] = options.quantization->calibrationFile;
  auto written = writer->finish("interpreter", modelPath, planPrecisionName(options), metadata);
  if (!written)
    return written.takeError();
  count = *written;
  return outputs;
}

} // namespace kiln::cli
