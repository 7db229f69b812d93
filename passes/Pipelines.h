//===- Pipelines.h - the optimization pipeline, built in one place -*- C++ -*-===//
//
// `kiln compile` and `kiln-opt --kiln-pipeline=...` run the same passes: both build them with
// buildOptimizationPipeline from one PipelineOptions. Later passes (such as
// quantization) add their options here and their passes in Pipelines.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_PIPELINES_H
#define KILN_PASSES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln {

/// What `--precision` asks for. fp32/tf32 keep every tensor f32 (tf32 lets conv and matmul use
/// TF32 tensor cores); bf16/fp16 run compute-bound ops in half precision with fp32 accumulation.
enum class Precision { FP32, TF32, BF16, FP16 };

/// "fp32", "tf32", "bf16", "fp16".
llvm::StringRef precisionName(Precision precision);
/// The inverse of precisionName; std::nullopt for anything else.
std::optional<Precision> parsePrecision(llvm::StringRef text);

/// What `--layout` asks for: channels last for the convs where tensor cores win (auto: bf16
/// and fp16 convs), for none (nchw) or for every 2-d conv (nhwc). kiln-convert-layout.
enum class Layout { Auto, NCHW, NHWC };

/// "auto", "nchw", "nhwc".
llvm::StringRef layoutName(Layout layout);
/// The inverse of layoutName; std::nullopt for anything else.
std::optional<Layout> parseLayout(llvm::StringRef text);

/// `--force-precision NAME=bf16`: run the op(s) matched by `target` (an ONNX node name, an ONNX
/// op type such as `Softmax`, or a kiln op name such as `kiln.softmax`) in `precision`.
struct PrecisionOverride {
  std::string target;
  Precision precision = Precision::FP32;
};

struct PipelineOptions {
  Precision precision = Precision::FP32;
  /// fp32 ops that remain in a bf16/fp16 or tf32 plan use TF32 tensor cores unless this is set.
  bool strictFp32 = false;
  /// `--keep-fp32`: ONNX node names, ONNX op types or kiln op names that stay fp32.
  std::vector<std::string> keepFp32;
  /// `--force-precision`: applied after keepFp32; the last override of a target wins.
  std::vector<PrecisionOverride> forcePrecision;
  /// Fold ops whose operands are all constants (through the reference interpreter), and
  /// BatchNorms with constant parameters into their convs or a multiply-add.
  bool foldConstants = true;
  /// Group elementwise chains into kiln.fusion_group regions (one generated kernel each).
  bool fuse = true;
  /// Replace scaled dot-product attention with kiln.attention (bf16/fp16 plans only: the
  /// runtime's attention step has no fp32 path).
  bool fuseAttention = true;
  /// Keep erf GELUs exact in bf16 plans (otherwise those after a linear layer run as the tanh
  /// GELU of its cuBLASLt epilogue; fp16 and fp32 plans always keep erf).
  bool exactGelu = false;
  /// Which convs run channels last (kiln-convert-layout).
  Layout layout = Layout::Auto;
  /// `--precision fp8`: linear layers quantized from a calibration file (kiln-insert-quantization
  /// on kiln.matmul, per-tensor weights) and folded into FP8 GEMMs (kiln-fold-quantization), on
  /// top of `precision`.
  struct Quantization {
    std::string type = "fp8";
    std::string calibrationFile;
    std::string method; // "" for the file's
    /// ONNX node names, ONNX op types or kiln op names that stay unquantized (the pass's `keep`).
    std::vector<std::string> keep;
    /// The first layers (reading the network input) and the last ones (whose results no other
    /// conv, matmul or gemm reads) stay unquantized: the pass's keep-first and keep-last.
    /// Unset: the type's default (fp8 keeps the first layer; nothing else is kept).
    std::optional<bool> keepFirst, keepLast;
  };
  std::optional<Quantization> quantization;
};

/// Parses one `--force-precision` value, "NAME=bf16" (fp32, tf32, bf16 or fp16); the error
/// quotes the value and says the form (callers name the option).
llvm::Expected<PrecisionOverride> parsePrecisionOverride(llvm::StringRef text);

/// What a plan of `options` is called: "int8" or "fp8" with 8-bit quantization, else the
/// precision's name (kiln inspect's and the value dumps' `precision`).
std::string planPrecisionName(const PipelineOptions &options);

/// Adds the whole optimization pipeline for `options` to `pm` (which runs on a ModuleOp).
void buildOptimizationPipeline(mlir::OpPassManager &pm, const PipelineOptions &options);

/// Registers `kiln-pipeline` with MLIR's pass registry (for kiln-opt), with options mirroring
/// PipelineOptions: `--kiln-pipeline="precision=bf16 keep-fp32=Softmax,conv1"`.
void registerKilnPipelines();

} // namespace kiln

#endif // KILN_PASSES_PIPELINES_H
