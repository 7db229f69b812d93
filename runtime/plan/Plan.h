//===- Plan.h - the plan: what the compiler hands the runtime --*- C++ -*-===//
//
// A plan is everything the runtime needs to run one static-shape model: the I/O tensors, the
// buffers (offsets in a per-context activation arena or in the engine's shared weights), the
// steps in execution order (generated CUDA kernels, cuBLASLt matmuls, cuDNN convolutions,
// device copies), the kernel images (sm_90 cubin plus PTX) and the weights blob.
//
// The runtime owns this schema; codegen/ builds a Plan and calls writePlan. Nothing here needs
// CUDA, MLIR or LLVM. Choices that need a GPU (cuDNN algorithm, cuBLASLt algorithm, workspace
// sizes) are NOT in the plan: the runtime makes them at load time (timing cache), so the same
// model and options always give the same bytes.
//
// Conventions:
// - Offsets of buffers are multiples of kBufferAlignment inside their memory space.
// - Tensors are dense, row-major (C order); element types below; bool is one byte (0/1).
// - Every index (buffer, image) is checked against its table when a plan is read.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_PLAN_PLAN_H
#define KILN_RUNTIME_PLAN_PLAN_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace kiln::plan {

/// Format version of the container; bump on any incompatible change of the byte layout.
inline constexpr uint32_t kFormatVersion = 1;
/// Alignment of buffer offsets in the arena and in the weights blob.
inline constexpr uint64_t kBufferAlignment = 256;
/// Alignment of the weights blob's offset in the file (a page, so it can be memory-mapped).
inline constexpr uint64_t kWeightsFileAlignment = 4096;

enum class DType : uint8_t {
  F32 = 1,
  F16 = 2,
  BF16 = 3,
  F64 = 4,
  F8E4M3FN = 5,
  I8 = 6,
  I16 = 7,
  I32 = 8,
  I64 = 9,
  U8 = 10,
  U16 = 11,
  U32 = 12,
  U64 = 13,
  Bool = 14,
};
/// Bytes per element; 0 for a value that is not a DType.
size_t dtypeBytes(DType type);
/// "f32", "f16", "bf16", "f64", "f8e4m3fn", "i8", ..., "u64", "bool".
std::string_view dtypeName(DType type);
std::optional<DType> parseDType(std::string_view name);
bool isFloat(DType type);

enum class MemorySpace : uint8_t {
  Arena = 1,   // per execution context: inputs, outputs, intermediates, scratch
  Weights = 2, // per engine, read-only, uploaded once
};

/// A byte range in one memory space. Views (reshape and the like) are buffers that share the
/// range of the tensor they view.
struct Buffer {
  std::string name; // the value it holds, for messages and inspect (e.g. "conv1/Relu_output_0")
  MemorySpace space = MemorySpace::Arena;
  uint64_t offset = 0;
  uint64_t bytes = 0;
};

/// A model input or output: where the caller's data goes in or comes out.
struct TensorBinding {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  uint32_t buffer = 0; // index into Plan::buffers (always an Arena buffer)
};

/// Code for the GPU, compiled by NVRTC at compile time.
struct KernelImage {
  std::string name;            // e.g. "kernels0"
  uint32_t smVersion = 90;     // the cubin's target, e.g. 90 for sm_90
  std::vector<uint8_t> cubin;  // ELF for smVersion
  std::string ptx;             // the same code as PTX, for JIT on newer GPUs
};

/// A generated kernel launch. Every argument is a device pointer (the start of a buffer); all
/// shapes are compile-time constants inside the kernel.
struct KernelStep {
  uint32_t image = 0;                      // index into Plan::images
  std::string function;                    // extern "C" __global__ name in the image
  std::array<uint32_t, 3> grid = {1, 1, 1};
  std::array<uint32_t, 3> block = {1, 1, 1};
  uint32_t sharedBytes = 0;                // dynamic shared memory
  std::vector<uint32_t> args;              // buffer indices, in parameter order
};

/// How fp32 tensor-core math is allowed.
enum class MathMode : uint8_t {
  StrictF32 = 0, // IEEE fp32 FMA only (cuDNN CUDNN_FMA_MATH, cuBLASLt CUBLAS_COMPUTE_32F)
  TF32 = 1,      // TF32 tensor cores (CUDNN_TENSOR_OP_MATH, CUBLAS_COMPUTE_32F_FAST_TF32)
};

enum class Activation : uint8_t { None = 0, Relu = 1, Gelu = 2 /* tanh approximation */ };

/// Row-major batched matmul on cuBLASLt:
///   D[b] = act(alpha * op(A[b]) x op(B[b]) + beta * C[b] + bias)
/// op(A) is m x k (A stored k x m when transA), op(B) is k x n (B stored n x k when transB),
/// C and D are m x n, bias has n elements (broadcast over rows). Strides are in elements
/// between consecutive batch matrices; 0 broadcasts one matrix over the batch.
/// C may be the same buffer as D (in-place accumulate).
struct GemmStep {
  DType dtype = DType::F32; // of A, B, C, D and bias
  MathMode math = MathMode::StrictF32;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool transA = false, transB = false;
  int64_t strideA = 0, strideB = 0, strideC = 0, strideD = 0;
  float alpha = 1.0f, beta = 0.0f;
  Activation activation = Activation::None;
  uint32_t a = 0, b = 0, d = 0;
  std::optional<uint32_t> c;    // required when beta != 0
  std::optional<uint32_t> bias; // n elements
};

/// N-d convolution on cuDNN, NCHW-style layout (x: N,C,spatial...; w: K,C/groups,kernel...).
/// 1-d convolutions are given with spatial rank 1; the runtime lifts them to 2-d for cuDNN.
/// Padding is symmetric (codegen pads explicitly otherwise). With `transpose` the step is a
/// ConvTranspose computed as cuDNN's backward-data: then x is the (smaller) input, w is
/// C,K/groups,kernel... as in ONNX, and y the larger output.
struct ConvStep {
  DType dtype = DType::F32;
  MathMode math = MathMode::StrictF32;
  bool transpose = false;
  std::vector<int64_t> xShape, wShape, yShape;
  std::vector<int64_t> pads;      // per spatial dim (same at begin and end)
  std::vector<int64_t> strides;   // per spatial dim
  std::vector<int64_t> dilations; // per spatial dim
  int64_t groups = 1;
  Activation activation = Activation::None; // only None or Relu
  uint32_t x = 0, w = 0, y = 0;
  std::optional<uint32_t> bias; // K (or output channels) elements, added per channel
};

/// Device-to-device copy of `bytes` from the start of src to the start of dst.
struct CopyStep {
  uint32_t src = 0, dst = 0;
  uint64_t bytes = 0;
};

using StepParams = std::variant<KernelStep, GemmStep, ConvStep, CopyStep>;

struct Step {
  std::string name; // the ONNX node (or kiln op location) it comes from, for messages/profiles
  std::string op;   // the kiln op, e.g. "kiln.conv"
  StepParams params;
};
/// What runs a step: "kernel" (generated), "cublaslt", "cudnn" or "copy".
std::string_view stepRunner(const Step &step);

/// Where and with what a plan was built; checked against the machine at load.
struct Metadata {
  std::string compilerVersion;  // kiln version that wrote it, e.g. "0.1.0"
  uint32_t computeCapability = 90; // major*10+minor the cubins target
  uint32_t cudaVersion = 0;     // CUDA toolkit (NVRTC) version, e.g. 13000
  uint32_t cudnnVersion = 0;    // cuDNN headers compiled against, e.g. 91900
  uint32_t cublasLtVersion = 0; // cuBLASLt headers compiled against, e.g. 130100
  std::string precision;        // "fp32" or "tf32"
  std::string model;            // source model file name (no directory), for inspect
  uint64_t arenaBytes = 0;      // activation arena size (peak of the memory plan)
  uint64_t arenaLowerBound = 0; // liveness lower bound of the same program
};

struct Plan {
  Metadata metadata;
  std::vector<TensorBinding> inputs;
  std::vector<TensorBinding> outputs;
  std::vector<Buffer> buffers;
  std::vector<Step> steps;
  std::vector<KernelImage> images;
  /// The weights blob (Weights-space buffers index into it). A view: the bytes are owned by
  /// `weightsStorage` (a vector or a memory-mapped file), which keeps them alive.
  std::span<const uint8_t> weights;
  std::shared_ptr<const void> weightsStorage;

  /// Points `weights` at a copy of `bytes` owned by the plan.
  void setWeights(std::vector<uint8_t> bytes);
};

//===-- Reading and writing (PlanIO.cpp) -----------------------------------===//

/// The file bytes of `plan`: deterministic (no time stamps, paths or pointer values), every
/// section checksummed, the weights blob at a kWeightsFileAlignment-aligned file offset.
std::vector<uint8_t> serializePlan(const Plan &plan);
}  // namespace kiln::plan

#include "runtime/Status.h"

namespace kiln::plan {
using runtime::Status;
using runtime::StatusOr;

/// Writes serializePlan(plan) to `path` (via a temporary file and rename).
Status writePlanFile(const Plan &plan, const std::string &path);
/// Parses and validates file bytes (checksums, bounds, every index, alignment). The returned
/// plan copies the weights. `origin` names the source in messages.
StatusOr<Plan> parsePlan(std::span<const uint8_t> bytes, const std::string &origin = "plan");
/// Memory-maps `path`, validates it like parsePlan; the weights stay mapped (not copied).
StatusOr<Plan> readPlanFile(const std::string &path);
/// Structural checks of an in-memory plan (what parsePlan runs after decoding): indices in
/// range, buffers inside their space, aligned, I/O buffers in the arena with matching sizes,
/// step parameters consistent (gemm/conv shapes vs buffer sizes). writePlanFile refuses a plan
/// that fails them.
Status validatePlan(const Plan &plan);

/// What the machine that loads a plan has.
struct TargetInfo {
  uint32_t computeCapability = 0; // of the device
  uint32_t cudaDriverVersion = 0; // cudaDriverGetVersion
  uint32_t cudnnVersion = 0;      // cudnnGetVersion
  uint32_t cublasLtVersion = 0;   // cublasLtGetVersion
};
/// kIncompatible with what to rebuild (or upgrade) when the plan cannot run on `target`:
/// cubins for another architecture and no usable PTX, a driver older than the plan's CUDA,
/// another cuDNN or cuBLASLt major version.
/// Metadata alone does not say whether the images carry PTX: for a device newer than the plan
/// this form assumes they do. The Plan form below also checks the images; prefer it.
Status checkCompatibility(const Metadata &metadata, const TargetInfo &target);
/// Like the Metadata form, but on a device newer than the plan's cubins every kernel image must
/// have PTX to JIT, and only the libraries the steps call (cuDNN for conv, cuBLASLt for gemm)
/// are checked.
Status checkCompatibility(const Plan &plan, const TargetInfo &target);

//===-- Human- and machine-readable views (PlanText.cpp) -------------------===//

/// A stable textual dump (one line per buffer/step), used by `kiln inspect` and lit tests.
std::string planToText(const Plan &plan);
/// The same content as JSON (`kiln inspect --json`).
std::string planToJson(const Plan &plan);

} // namespace kiln::plan

#endif // KILN_RUNTIME_PLAN_PLAN_H
