//===- ValueDump.h - intermediate values on disk, by ONNX name -*- C++ -*-===//
//
// A dump directory holds the ONNX values one evaluation computed (`kiln eval --dump` in the
// interpreter, `kiln run --dump` on the GPU, step by step): one
// .npy per value, named <NNNN>_<name>.npy in evaluation order, and manifest.json:
//
//   {"source": "interpreter" or "gpu", "model": ..., "precision": "bf16", "metadata": {...},
//    "values": [{"name", "file", "dtype", "shape", "op", "nodes": [...], "inputs": [...]}]}
//
// `inputs` are the ONNX values (or graph inputs) the op read, looking through the casts,
// transposes and reshapes passes insert; `kiln compare` uses them to say where error grows (a
// plan does not record them: a GPU dump's lists are empty).
// Shapes are as computed: channels-last values are NHWC.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TOOLS_KILN_VALUEDUMP_H
#define KILN_TOOLS_KILN_VALUEDUMP_H

#include "ir/Interpreter/Tensor.h"
#include "runtime/Npy.h"

#include "mlir/IR/Operation.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kiln::cli {

/// The ONNX values (or graph inputs) `op` reads, each once, in operand order, looking back
/// through the unnamed single-input ops passes insert (casts, transposes, reshapes): a value's
/// `inputs` in a dump.
std::vector<std::string> inputValueNames(mlir::Operation *op);

/// The plan step that completed a value (GPU dumps only): what ran it and how long it took,
/// timed alone as `kiln profile` times steps. A fused step completes several values.
struct StepTiming {
  int64_t index = -1;
  std::string runner;    // "cudnn", "cublasLt", "kernel", ... (plan::stepRunner)
  std::string algorithm; // the library's pick (algorithmLabel), "" for generated kernels
  double ms = 0;         // median over the timing passes
};

/// Writes the values an evaluation computes as the interpreter reports them (observe), then
/// the manifest (finish).
class ValueDumpWriter {
public:
  /// Creates `dir` if needed.
  static llvm::Expected<ValueDumpWriter> create(std::string dir);

  /// Writes each named result of `op` (onnxValueNames) not written before.
  llvm::Error observe(mlir::Operation *op, llvm::ArrayRef<interp::Tensor> results);
  /// Writes one value (unless one of that name was written before): `array` as .npy and its
  /// manifest entry, `dtype` the element type it was computed in ("bf16" for a float32 array
  /// of bf16 values).
  llvm::Error add(const std::string &name, const runtime::NpyArray &array, const std::string &dtype,
                  const std::string &op, const std::vector<std::string> &nodes,
                  const std::vector<std::string> &inputs, const StepTiming *step = nullptr);
  /// Writes manifest.json; returns how many values were dumped. `metadata` says how the values
  /// were computed (compiler version, pipeline options, library versions, ...): what `kiln
  /// compare` diffs.
  /// `steps`: every step of the plan timed alone (GPU dumps), listed with their sum.
  llvm::Expected<size_t> finish(llvm::StringRef source, llvm::StringRef model, llvm::StringRef precision,
                                const std::map<std::string, std::string> &metadata,
                                const std::vector<StepTiming> &steps = {});

private:
  explicit ValueDumpWriter(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
  llvm::json::Array entries_;
  std::set<std::string> written_;
};

/// One value of a dump, as its manifest lists it.
struct DumpedValue {
  std::string name, file, dtype, op;
  std::vector<int64_t> shape;
  std::vector<std::string> nodes, inputs;
  std::optional<StepTiming> step;
};

/// A dump directory's manifest.
struct Dump {
  std::string dir, source, model, precision;
  std::map<std::string, std::string> metadata;
  std::vector<DumpedValue> values;
  std::optional<double> stepsMs; // all steps timed alone, summed (GPU dumps)
  std::vector<StepTiming> steps; // each of them, in plan order (GPU dumps)
};

/// Reads `dir`/manifest.json; an error says what is missing or malformed.
llvm::Expected<Dump> readDump(const std::string &dir);

} // namespace kiln::cli

#endif // KILN_TOOLS_KILN_VALUEDUMP_H
