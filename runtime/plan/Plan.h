//===- Plan.h - the plan: what the compiler hands the runtime --*- C++ -*-===//
//
// A plan is everything the runtime needs to run one static-shape model: the I/O tensors, the
// buffers (offsets in a per-context activation arena or in the engine's shared weights), the
// steps in execution order (generated CUDA kernels, cuBLASLt matmuls, cuDNN convolutions and
// fused attention, device copies), the kernel images (sm_90 cubin plus PTX) and the weights
// blob.
//
// The runtime owns this schema; codegen/ builds a Plan and calls writePlan. Nothing here needs
// CUDA, MLIR or LLVM. Choices that need a GPU (cuDNN algorithm, cuBLASLt algorithm, workspace
// sizes) are NOT in the plan: the runtime makes them at load time (timing cache), so the same
// model and options always give the same bytes.
//
// Conventions:
// - Offsets of buffers are multiples of kBufferAlignment inside their memory space.
// - Tensors are dense, row-major (C order); element types below; bool is one byte (0/1).
// - Every buffer records the element type and shape of the tensor it holds; a step reads the
//   type of each operand from its buffer, so operands of one step may differ in type.
// - Every index (buffer, image) is checked against its table when a plan is read.
//
// The schema is declarative: each struct lists its fields once, in file order, in
// visitFields(self, v), with the tags of FieldTags.h on the fields that need a role (buffer
// and image indices, tensor types, blobs, versions). The file encoding, the decoder, the
// index and enum checks, the text and JSON views and FORMAT.md's record table all follow from
// those lists: adding a field is a change here (and a kFormatVersion bump), nowhere else.
// Equality is the defaulted operator== of each struct.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_PLAN_PLAN_H
#define KILN_RUNTIME_PLAN_PLAN_H

#include "runtime/plan/FieldTags.h"

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
inline constexpr uint32_t kFormatVersion = 9;
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
/// Whether cuDNN's 8-bit convolutions read (and may write) `type`: int8 (INT8 kernels, int32
/// sums) or f8e4m3fn (FP8 kernels, f32 sums).
bool isQuantizedConvType(DType type);
/// Bytes of a dense tensor; nullopt for a negative dimension, an unknown type or a size that
/// does not fit 64 bits.
std::optional<uint64_t> denseBytes(std::span<const int64_t> shape, DType dtype);

enum class MemorySpace : uint8_t {
  Arena = 1,   // per execution context: inputs, outputs, intermediates, scratch
  Weights = 2, // per engine, read-only, uploaded once
};

/// A tensor in a byte range of one memory space. Views (reshape and the like) are buffers that
/// share the range of the tensor they view, with their own shape. Scratch space of a kernel is
/// a u8 tensor of shape {bytes}. bytes == product(shape) * dtypeBytes(dtype).
struct Buffer {
  std::string name; // the value it holds, for messages and inspect (e.g. "conv1/Relu_output_0")
  MemorySpace space = MemorySpace::Arena;
  uint64_t offset = 0;
  uint64_t bytes = 0;
  DType dtype = DType::U8;
  std::vector<int64_t> shape;

  template <class Self, class V> static void visitFields(Self &self, V &&v) {
    v("name", self.name);
    v("space", self.space);
    v("offset", self.offset);
    v("bytes", self.bytes);
    v("type", tensorType(self.dtype, self.shape));
  }
  bool operator==(const Buffer &) const = default;
};

/// A model input or output: where the caller's data goes in or comes out. Its type and shape
/// are those of its buffer.
struct TensorBinding {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  uint32_t buffer = 0; // index into Plan::buffers (always an Arena buffer)

  template <class Self, class V> static void visitFields(Self &self, V &&v) {
    v("name", self.name);
    v("type", tensorType(self.dtype, self.shape));
    v("buffer", bufferRef(self.buffer));
  }
  bool operator==(const TensorBinding &) const = default;
};

/// Code for the GPU, compiled by NVRTC at compile time.
struct KernelImage {
  std::string name;            // e.g. "kernels0"
  uint32_t smVersion = 90;     // the cubin's target, e.g. 90 for sm_90
  std::vector<uint8_t> cubin;  // ELF for smVersion
  std::string ptx;             // the same code as PTX, for JIT on newer GPUs

  template <class Self, class V> static void visitFields(Self &self, V &&v) {
    v("name", self.name);
    v("smVersion", self.smVersion);
    v("cubin", blob(self.cubin));
    v("ptx", blob(self.ptx));
  }
  bool operator==(const KernelImage &) const = default;
};

// The step kinds below carry kTag, their explicit tag in the file (never the std::variant
// index, which would change the format whenever someone reorders the variant), and kKind,
// their name in the views.

/// A generated kernel launch. Every argument is a device pointer (the start of a buffer); all
/// shapes are compile-time constants inside the kernel.
struct KernelStep {
  static constexpr uint8_t kTag = 1;
  static constexpr const char *kKind = "kernel";
  uint32_t image = 0;                      // index into Plan::images
  std::string function;                    // extern "C" __global__ name in the image
  std::array<uint32_t, 3> grid = {1, 1, 1};
  std::array<uint32_t, 3> block = {1, 1, 1};
  uint32_t sharedBytes = 0;                // dynamic shared memory
  std::vector<uint32_t> args;              // buffer indices, in parameter order

  template <class Self, class V> static void visitFields(Self &self, V &&v) {
    v("image", imageRef(self.image));
    v("function", self.function);
    v("grid", self.grid);
    v("block", self.block);
    v("sharedBytes", self.sharedBytes);
    v("args", bufferRef(self.args));
  }
  bool operator==(const KernelStep &) const = default;
};

/// How fp32 tensor-core math is allowed. It matters for f32 operands only: f16 and bf16
/// operands always run on tensor cores with fp32 accumulation.
enum class MathMode : uint8_t {
  StrictF32 = 0, // IEEE fp32 FMA only (cuDNN CUDNN_FMA_MATH, cuBLASLt CUBLAS_COMPUTE_32F)
  TF32 = 1,      // TF32 tensor cores (CUDNN_TENSOR_OP_MATH, CUBLAS_COMPUTE_32F_FAST_TF32)
};

/// The activation a library step applies last. Gemms take None, Relu and Gelu; channels-last
/// convolutions every one but Gelu (activationAlpha/Beta hold Clip's bounds and HardSigmoid's
/// alpha and beta); channels-first convolutions None and Relu.
enum class Activation : uint8_t {
  None = 0,
  Relu = 1,
  Gelu = 2,        // tanh approximation
  Clip = 3,        // min(max(x, alpha), beta)
  Sigmoid = 4,     // 1 / (1 + exp(-x))
  HardSigmoid = 5, // max(0, min(1, alpha * x + beta))
  HardSwish = 6,   // x * max(0, min(1, x / 6 + 1 / 2))
};

/// Row-major batched matmul on cuBLASLt:
///   D[b] = act(alpha * op(A[b]) x op(B[b]) + beta * C[b] + bias)
/// op(A) is m x k (A stored k x m when transA), op(B) is k x n (B stored n x k when transB),
/// C and D are m x n, bias has n elements (broadcast over rows). Strides are in elements
/// between consecutive batch matrices; 0 broadcasts one matrix over the batch.
/// C may be the same buffer as D (in-place accumulate).
/// Element types (of the operands' buffers): A and B share one of f32, f16, bf16; D has A's
/// type or f32; C and bias have D's type. Accumulation is fp32.
struct GemmStep {
  static constexpr uint8_t kTag = 2;
  static constexpr const char *kKind = "gemm";
  MathMode math = MathMode::StrictF32;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool transA = false, transB = false;
  int64_t strideA = 0, strideB = 0, strideC = 0, strideD = 0;
  float alpha = 1.0f, beta = 0.0f;
  Activation activation = Activation::None;
  uint32_t a = 0, b = 0, d = 0;
  std::optional<uint32_t> c;    // required when beta != 0
  std::optional<uint32_t> bias; // n elements
  // An FP8 gemm whose D is f8e4m3fn: one f32 holding the factor D is multiplied by before it
  // is rounded to E4M3 (1 / the next quantization's scale); C and bias are then bf16 or f16.
  std::optional<uint32_t> scaleD;

  template <class Self, class V> static void visitFields(Self &self, V &&v) {
    v("math", self.math);
    v("batch", self.batch);
    v("m", self.m);
    v("n", self.n);
    v("k", self.k);
    v("transA", self.transA);
    v("transB", self.transB);
    v("strideA", self.strideA);
    v("strideB", self.strideB);
    v("strideC", self.strideC);
    v("strideD", self.strideD);
    v("alpha", self.alpha);
    v("beta", self.beta);
    v("activation", self.activation);
    v("a", bufferRef(self.a));
    v("b", bufferRef(self.b));
    v("d", bufferRef(self.d));
    v("c", bufferRef(self.c));
    v("bias", bufferRef(self.bias));
    v("scaleD", bufferRef(self.scaleD));
  }
  bool operator==(const GemmStep &) const = default;
};

/// N-d convolution on cuDNN, NCHW-style layout (x: N,C,spatial...; w: K,C/groups,kernel...).
/// 1-d convolutions are given with spatial rank 1; the runtime lifts them to 2-d for cuDNN.
/// Padding is symmetric (codegen pads explicitly otherwise). With `transpose` the step is a
/// ConvTranspose computed as cuDNN's backward-data: then x is the (smaller) input, w is
/// C,K/groups,kernel... as in ONNX, and y the larger output.
/// x, w, y and bias share one element type: f32, f16 or bf16. Accumulation is fp32.
struct ConvStep {
  static constexpr uint8_t kTag = 3;
  static constexpr const char *kKind = "conv";
  MathMode math = MathMode::StrictF32;
  bool transpose = false;
  std::vector<int64_t> xShape, wShape, yShape;
  std::vector<int64_t> pads;      // per spatial dim (same at begin and end)
  std::vector<int64_t> strides;   // per spatial dim
  std::vector<int64_t> dilations; // per spatial dim
  int64_t groups = 1;
  // Shapes are always in channels-first order (x N,C,spatial; w K,C/groups,spatial; y
  // N,K,spatial). channelsLast says how x, w and y are stored: N,spatial,C and K,spatial,C/groups
  // (2-d forward convolutions only, run as a cuDNN frontend graph with the epilogue below).
  bool channelsLast = false;
  Activation activation = Activation::None; // channels-first: only None or Relu
  float activationAlpha = 0, activationBeta = 0;
  uint32_t x = 0, w = 0, y = 0;
  std::optional<uint32_t> bias;     // K (or output channels) elements, added per channel
  std::optional<uint32_t> residual; // channels-last only: y's shape, added after bias
  // y = act(conv(x, w) + bias + residual), the sum in fp32, rounded once to y's type.
  // INT8 or FP8 (channels-last only): x and w are both int8 (summed in int32) or both
  // f8e4m3fn (summed in f32), and the sums are multiplied by `scale` (K f32: x's quantization
  // scale times w's of each output channel) before the bias. y is 8-bit (int8 or f8e4m3fn)
  // with `yScale` (one f32, the reciprocal of y's quantization scale: y =
  // saturate(round(value * yScale)), half to even), or without it a float type. With
  // `yQuantized` (8-bit, y's shape) a convolution writes both: y as a float type and its value
  // quantized with yScale (a ResNet block's output: the next residual and the next 8-bit
  // convolution's input). A float convolution (channels last) may write 8 bits the same way.
  // With `residualScale` (one f32) the residual is 8-bit, multiplied by it before the add (a
  // ResNet block's input, kept in 8 bits between blocks).
  std::optional<uint32_t> scale;
  std::optional<uint32_t> yScale;
  std::optional<uint32_t> yQuantized;
  std::optional<uint32_t> residualScale;

  template <class Self, class V> static void visitFields(Self &self, V &&v) {
    v("math", self.math);
    v("transpose", self.transpose);
    v("xShape", self.xShape);
    v("wShape", self.wShape);
    v("yShape", self.yShape);
    v("pads", self.pads);
    v("strides", self.strides);
    v("dilations", self.dilations);
    v("groups", self.groups);
    v("channelsLast", self.channelsLast);
    v("activation", self.activation);
    v("activationAlpha", self.activationAlpha);
    v("activationBeta", self.activationBeta);
    v("x", bufferRef(self.x));
    v("w", bufferRef(self.w));
    v("y", bufferRef(self.y));
    v("bias", bufferRef(self.bias));
    v("residual", bufferRef(self.residual));
    v("scale", bufferRef(self.scale));
    v("yScale", bufferRef(self.yScale));
    v("yQuantized", bufferRef(self.yQuantized));
    v("residualScale", bufferRef(self.residualScale));
  }
  bool operator==(const ConvStep &) const = default;
};

/// Device-to-device copy of `bytes` from the start of src to the start of dst.
struct CopyStep {
  static constexpr uint8_t kTag = 4;
  static constexpr const char *kKind = "copy";
  uint32_t src = 0, dst = 0;
  uint64_t bytes = 0;

  template <class Self, class V> static void visitFields(Self &self, V &&v) {
    v("src", bufferRef(self.src));
    v("dst", bufferRef(self.dst));
    v("bytes", self.bytes);
  }
  bool operator==(const CopyStep &) const = default;
};

/// Scaled dot-product attention, fused (cuDNN's flash attention through the cuDNN frontend SDPA
/// graph):
///   O[b,h,i,:] = sum_j softmax_j(scale * Q[b,h,i,:].K[b,h,j,:] + mask[b,h,i,j]) * V[b,h,j,:]
/// over keys j < seqKv; with `causal`, key j is visible to query i only when j <= i (top-left
/// aligned, as torch's is_causal). Q is [batch, heads, seqQ, headDim], K [batch, heads, seqKv,
/// headDim], V [batch, heads, seqKv, headDimV], O [batch, heads, seqQ, headDimV], mask
/// [batch, heads, seqQ, seqKv] (additive, optional).
/// Every operand is a strided view of its buffer, so codegen points the step at existing
/// tensors without copies (Q, K and V sliced out of one packed QKV projection, or laid out
/// [b, s, h, d] as ONNX exporters leave them after the head split): element [i0,i1,i2,i3] of Q is
/// qOffset + i0*qStrides[0] + i1*qStrides[1] + i2*qStrides[2] + i3*qStrides[3] elements from the
/// start of buffer q, and likewise for k, v, o and mask. A mask stride of 0 broadcasts that
/// dimension (e.g. one mask for every head).
/// Element types (of the operands' buffers): q, k, v, o and mask share f16 or bf16 (fp32 has no
/// flash path: codegen keeps the unfused ops there). Both matmuls accumulate in fp32, the
/// softmax runs in fp32, and the probabilities are rounded to the element type before they
/// multiply V (as every flash-attention kernel does).
/// cuDNN's limits, checked by validatePlan: head dims multiples of 8 up to 256, the head dim
/// contiguous (innermost stride 1) in q, k, v and o, and their offsets and other strides
/// multiples of 16 bytes (the kernels move them with 16-byte loads).
struct AttentionStep {
  static constexpr uint8_t kTag = 5;
  static constexpr const char *kKind = "attention";
  int64_t batch = 1, heads = 1, seqQ = 0, seqKv = 0, headDim = 0, headDimV = 0;
  float scale = 1.0f; // usually 1/sqrt(headDim)
  bool causal = false;
  uint32_t q = 0, k = 0, v = 0, o = 0;
  int64_t qOffset = 0, kOffset = 0, vOffset = 0, oOffset = 0; // elements
  std::vector<int64_t> qStrides, kStrides, vStrides, oStrides; // 4 each, in elements
  std::optional<uint32_t> mask;
  int64_t maskOffset = 0;
  std::vector<int64_t> maskStrides; // 4 with a mask, empty without

  template <class Self, class V> static void visitFields(Self &self, V &&v) {
    v("batch", self.batch);
    v("heads", self.heads);
    v("seqQ", self.seqQ);
    v("seqKv", self.seqKv);
    v("headDim", self.headDim);
    v("headDimV", self.headDimV);
    v("scale", self.scale);
    v("causal", self.causal);
    v("q", bufferRef(self.q));
    v("qOffset", self.qOffset);
    v("qStrides", self.qStrides);
    v("k", bufferRef(self.k));
    v("kOffset", self.kOffset);
    v("kStrides", self.kStrides);
    v("v", bufferRef(self.v));
    v("vOffset", self.vOffset);
    v("vStrides", self.vStrides);
    v("o", bufferRef(self.o));
    v("oOffset", self.oOffset);
    v("oStrides", self.oStrides);
    v("mask", bufferRef(self.mask));
    v("maskOffset", self.maskOffset);
    v("maskStrides", self.maskStrides);
  }
  bool operator==(const AttentionStep &) const = default;
};

using StepParams = std::variant<KernelStep, GemmStep, ConvStep, CopyStep, AttentionStep>;

struct Step {
  std::string name; // the ONNX node (or kiln op location) it comes from, for messages/profiles
  std::string op;   // the kiln op, e.g. "kiln.conv"
  /// The ONNX nodes the step covers, in order, without duplicates (a fused step, e.g. a
  /// kiln.fusion_group, covers several); empty when unknown (e.g. a copy for an output).
  std::vector<std::string> nodes;
  StepParams params; // in the file: the alternative's kTag, then its fields
  /// The ONNX values complete once this step has run (a fused step: only what leaves it),
  /// by name, and the buffers holding them (in the layout and type the plan computes them in:
  /// a channels-last value is NHWC, a bf16 one bf16). What `kiln run --dump` reads.
  std::vector<std::string> values;
  std::vector<uint32_t> valueBuffers; // one per value

  template <class Self, class V> static void visitFields(Self &self, V &&v) {
    v("name", self.name);
    v("op", self.op);
    v("nodes", self.nodes);
    v("params", self.params);
    v("values", self.values);
    v("valueBuffers", bufferRef(self.valueBuffers));
  }
  bool operator==(const Step &) const = default;
};
/// What runs a step: "kernel" (generated), "cublaslt", "cudnn" (convolutions and attention) or
/// "copy".
std::string_view stepRunner(const Step &step);

/// Where and with what a plan was built; checked against the machine at load.
struct Metadata {
  std::string compilerVersion;  // kiln version that wrote it, e.g. "0.1.0"
  uint32_t computeCapability = 90; // major*10+minor the cubins target
  uint32_t cudaVersion = 0;     // CUDA toolkit (NVRTC) version, e.g. 13000
  uint32_t cudnnVersion = 0;    // cuDNN headers compiled against, e.g. 91900
  uint32_t cublasLtVersion = 0; // cuBLASLt headers compiled against, e.g. 130100
  std::string precision;        // the --precision compiled for: "fp32", "tf32", "bf16", "fp16"
  /// Per-node precision asked of the compiler or chosen by it: "--keep-fp32 TARGET",
  /// "--force-precision TARGET=fp32", or "auto: NODE=fp32" for each node the precision search
  /// kept in fp32, in the order they were given or ranked.
  std::vector<std::string> precisionOverrides;
  /// How `--precision auto` chose (budget, measured error, calibration inputs); "" otherwise.
  std::string precisionChoice;
  std::string model;            // source model file name (no directory), for inspect
  uint64_t arenaBytes = 0;      // activation arena size (peak of the memory plan)
  uint64_t arenaLowerBound = 0; // liveness lower bound of the same program

  template <class Self, class V> static void visitFields(Self &self, V &&v) {
    v("compilerVersion", self.compilerVersion);
    v("computeCapability", self.computeCapability);
    v("cudaVersion", asCudaVersion(self.cudaVersion));
    v("cudnnVersion", asLibraryVersion(self.cudnnVersion));
    v("cublasLtVersion", asLibraryVersion(self.cublasLtVersion));
    v("precision", self.precision);
    v("precisionOverrides", self.precisionOverrides);
    v("precisionChoice", self.precisionChoice);
    v("model", self.model);
    v("arenaBytes", self.arenaBytes);
    v("arenaLowerBound", self.arenaLowerBound);
  }
  bool operator==(const Metadata &) const = default;
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
  /// Same content: every field, and the weights byte for byte (wherever they are stored).
  bool operator==(const Plan &other) const;
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
/// have PTX to JIT, and only the libraries the steps call (cuDNN for conv and attention,
/// cuBLASLt for gemm) are checked.
Status checkCompatibility(const Plan &plan, const TargetInfo &target);

//===-- Human- and machine-readable views (PlanText.cpp) -------------------===//

/// A stable textual dump (one line per buffer/step), used by `kiln inspect` and lit tests.
std::string planToText(const Plan &plan);
/// The same content as JSON (`kiln inspect --json`).
std::string planToJson(const Plan &plan);

} // namespace kiln::plan

#endif // KILN_RUNTIME_PLAN_PLAN_H
