//===- PlanBuilderImpl.h - state of one lowering (private) -----*- C++ -*-===//
//
// Shared by PlanBuilder.cpp (the walk, kernels, memory plan, NVRTC) and LibrarySteps.cpp
// (conv, matmul, gemm). Every tensor a step touches is a plan buffer; arena buffers belong to
// a "storage" (views and in-place results share their operand's storage) that the memory
// planner places once.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_PLANBUILDERIMPL_H
#define KILN_CODEGEN_PLANBUILDERIMPL_H

#include "codegen/PlanBuilder.h"
#include "codegen/kernels/KernelEmitter.h"
#include "ir/KilnOps.h"
#include "ir/Provenance.h"

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"

#include <map>
#include <string>
#include <vector>

namespace kiln::codegen {

/// Why cuBLASLt cannot run a product of these operand, result and C types, if it cannot.
std::optional<std::string> gemmTypeProblem(DType a, DType b, DType result, std::optional<DType> c);

/// The input of a library group (gemm, conv) that `value` of its body is, or widens by a
/// cast; an error naming the group when the body computed it.
llvm::Expected<unsigned> groupInputOf(FusionGroupOp group, mlir::Value value);

/// The values of the float constant a group input `value` (or its widening cast) is: an 8-bit
/// layer's scales.
llvm::Expected<std::vector<double>> groupConstantFloats(FusionGroupOp group, mlir::Value value);

/// Stands for a kernel's symbol prefix in emitted source until the source is added to the
/// program under the prefix of its first use ("k17_").
inline constexpr const char *kSymbolPlaceholder = "KILN_SYMBOL_";

class PlanBuilderImpl {
public:
  explicit PlanBuilderImpl(const CompileOptions &options) : options_(options) {}

  llvm::Expected<plan::Plan> build(mlir::Operation *function);

  //===-- Used by the op lowerings -----------------------------------------===//

  /// The buffer holding `value` (weights are placed on first use).
  llvm::Expected<uint32_t> bufferFor(mlir::Value value);
  /// A weights buffer of `type` holding `bytes` (a constant codegen computes itself).
  uint32_t newWeightBuffer(const std::string &name, const TensorDesc &type, llvm::ArrayRef<uint8_t> bytes);
  /// A 1-d f32 weights buffer of `values` (an 8-bit step's scales).
  uint32_t newF32Weights(const std::string &name, llvm::ArrayRef<float> values);
  /// A fresh arena tensor of `type` (its own storage). Every plan buffer records the element
  /// type and shape it holds; steps take their operands' types from their buffers.
  uint32_t newArenaBuffer(const std::string &name, const TensorDesc &type);
  /// Binds an op result, of `type`, to a fresh arena buffer.
  uint32_t defineResult(mlir::Value result, const std::string &name, const TensorDesc &type);
  /// Emits `desc` through the kernel emitters; operand/result buffers in slot order (an absent
  /// optional operand has no buffer and must not be a kernel argument). `source` is the op the
  /// kernels are for (as in addStep).
  llvm::Error emitKernelOp(mlir::Operation *source, const OpDesc &desc,
                           const std::vector<std::optional<uint32_t>> &operands, const std::vector<uint32_t> &results,
                           const std::string &stepName);
  /// Adds the steps of kernels an emitter gave for the op `opLabel` ("kiln.pad 'x/pad'", for
  /// messages), as emitKernelOp does; `op` is the steps' kiln op.
  llvm::Error addKernelSteps(mlir::Operation *source, const EmittedKernels &emitted, const std::string &op,
                             const std::string &opLabel, const std::vector<std::optional<uint32_t>> &operands,
                             const std::vector<uint32_t> &results, const std::string &stepName);
  /// Appends a step `name` of kiln op `op` that covers the ONNX nodes of `source`'s location
  /// (several for a fused op; none when `source` is null, as for a copy to an output).
  void addStep(mlir::Operation *source, std::string name, std::string op, plan::StepParams params) {
    std::vector<std::string> nodes = source ? nodeNames(source->getLoc()) : std::vector<std::string>{};
    plan_.steps.push_back(plan::Step{std::move(name), std::move(op), std::move(nodes), std::move(params)});
  }
  /// Records on the last step, just lowered from `op`, the ONNX values `op` computes
  /// (onnxValueNames) with their buffers.
  void recordValues(mlir::Operation *op);
  /// How an f32 conv/matmul op runs: the plan's math, or IEEE fp32 when the precision pass
  /// marked the op `kiln.math = "strict"` (`--force-precision NAME=fp32`).
  plan::MathMode mathFor(mlir::Operation *op) const;

  // Library lowerings (LibrarySteps.cpp).
  struct ConvLowering {
    TensorDesc x, w, y;  // as stored (channels last when the conv is)
    plan::ConvStep step; // operands, shapes, strides, dilations, groups and math filled in
    std::string name;
    size_t rank = 0; // spatial
    bool channelsLast = false;
  };
  /// The values a convolution step reads and defines (bias and residual may be null).
  struct ConvOperands {
    mlir::Value input, weight, bias, residual, result;
    /// INT8 or FP8 (a conv group's dequantized operands): input and weight are both int8 or
    /// both E4M3, the result 8-bit or a float type, bias and residual floats.
    bool quantized = false;
    /// An 8-bit residual's scale (a conv group's dequantized residual); otherwise the residual
    /// is a float.
    std::optional<float> residualScale;
  };
  /// What conv, conv groups and conv_transpose share: the operands' descriptions and a step
  /// with its buffers. `op` names the step and gives its math.
  llvm::Expected<ConvLowering> beginConvStep(mlir::Operation *op, const ConvOperands &operands,
                                             llvm::ArrayRef<int64_t> strides, llvm::ArrayRef<int64_t> dilations,
                                             int64_t group, bool channelsLast);
  /// Pads (explicitly first when they are asymmetric), defines `result` and adds the step.
  llvm::Error finishConvStep(mlir::Operation *op, ConvLowering &conv, llvm::ArrayRef<int64_t> pads,
                             mlir::Value result);
  llvm::Error lowerConv(mlir::Operation *op);
  llvm::Error lowerConvTranspose(mlir::Operation *op);
  llvm::Error lowerMatMul(mlir::Operation *op);
  llvm::Error lowerGemm(mlir::Operation *op);
  /// A `gemm` kiln.fusion_group as one GemmStep with its epilogue (GemmGroupLowering.cpp).
  llvm::Error lowerGemmGroup(mlir::Operation *op);
  /// A `conv` kiln.fusion_group as one channels-last ConvStep with its epilogue
  /// (ConvGroupLowering.cpp).
  llvm::Error lowerConvGroup(mlir::Operation *op);
  llvm::Error lowerAttention(mlir::Operation *op);

private:
  llvm::Error lowerOp(mlir::Operation *op, int64_t index);
  llvm::Error lowerGeneric(mlir::Operation *op, int64_t index);
  llvm::Error bindOutputs(mlir::Operation *terminator);
  llvm::Error planArena();
  llvm::Error compileKernels();
  /// Another name and type (same byte count) for the bytes of buffer `base`.
  uint32_t viewOf(uint32_t base, const std::string &name, const TensorDesc &type);
  void progress(const std::string &line) const {
    if (options_.progress)
      options_.progress(line);
  }

  struct Storage {
    uint64_t bytes = 0;
    bool isInput = false, isOutput = false;
    int64_t lastValueUse = -1; // last op index that reads a value held in it
  };

  const CompileOptions &options_;
  plan::Plan plan_;
  std::vector<uint8_t> weights_;
  std::vector<int> storageOf_; // per buffer; -1 for weights
  std::vector<Storage> storages_;
  llvm::DenseMap<mlir::Value, uint32_t> bufferOf_;
  llvm::DenseMap<mlir::Value, int64_t> lastUse_; // op index of the last reader (INT64_MAX: output)
  // Generated code: each distinct kernel source once, under the prefix of its first use.
  std::map<std::string, std::string> prefixOfSource_;
  std::string programSource_;
  int kernelCount_ = 0;
};

} // namespace kiln::codegen

#endif // KILN_CODEGEN_PLANBUILDERIMPL_H
