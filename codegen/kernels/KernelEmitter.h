//===- KernelEmitter.h - CUDA source for one op ----------------*- C++ -*-===//
//
// Every op that no library (cuDNN, cuBLASLt) runs becomes one or more CUDA kernels whose source
// codegen writes here and NVRTC compiles at compile time. Emitters see an op through OpDesc, a
// plain description (no MLIR), so this part of codegen can be built and tested alone
// (KILN_BUILD_KERNELS_ONLY) and the MLIR side converts each op generically (codegen/OpDescription).
//
// Contract of an emitter:
// - All shapes are static: sizes, strides and attribute values are baked into the source as
//   constants. Kernel parameters are device pointers only, in KernelLaunch::args order, each the
//   start of an operand, a result or a scratch buffer.
// - Every global symbol in `source` (kernels, __device__ helpers, __constant__ tables) starts
//   with EmitContext::symbol, so the sources of all ops can be concatenated into one NVRTC
//   program. Kernels are `extern "C" __global__`. Helpers shared by many ops live in a family's
//   prelude (emitted once per program), never in `source`.
// - Indexing is 64-bit; loops are grid-stride so any grid size is correct.
// - Results are computed the way the reference interpreter (ir/Interpreter) defines them,
//   including NaN propagation, integer wrap-around and rounding to the element type.
// - An op the emitter cannot handle gives an error that names the op (OpDesc::name), says what
//   is unsupported and what to do; never a kernel that computes something else.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_KERNELS_KERNELEMITTER_H
#define KILN_CODEGEN_KERNELS_KERNELEMITTER_H

#include "runtime/Status.h"
#include "runtime/plan/Plan.h"

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace kiln::codegen {

using plan::DType;
using runtime::Status;
using runtime::StatusCode;
using runtime::StatusOr;

/// Constants with at most this many elements carry their values in TensorDesc.
inline constexpr int64_t kMaxConstantValues = 4096;

struct TensorDesc {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  /// Values of a compile-time constant operand (row-major), when it has at most
  /// kMaxConstantValues elements: `ints` for integer and bool types, `floats` for float types.
  std::optional<std::vector<int64_t>> ints;
  std::optional<std::vector<double>> floats;

  int64_t numElements() const;
  bool isConstant() const { return ints.has_value() || floats.has_value(); }
};

/// BoolAttr and I64Attr become int64_t, F32Attr double, StrAttr string, DenseI64ArrayAttr
/// vector<int64_t>, DenseF32ArrayAttr vector<double>.
using AttrValue = std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>>;

struct BodyOp;

/// Where an operand of a fusion group's body op comes from: operand `index` of the group
/// (isInput) or the result of body op `index`.
struct BodyRef {
  bool isInput = true;
  uint32_t index = 0;
};

struct OpDesc {
  std::string op;   // kiln op name, e.g. "kiln.add"
  std::string name; // the ONNX node it comes from (for messages)
  /// One entry per ODS operand, in ODS order; an absent optional operand is std::nullopt.
  std::vector<std::optional<TensorDesc>> operands;
  std::vector<TensorDesc> results;
  /// The attributes present on the op. Defaulted ODS attributes may be absent: read them with
  /// the accessors below and the default from ir/KilnOps.td.
  std::map<std::string, AttrValue> attrs;
  /// "kiln.fusion_group" only: the body's ops in order (each described as the op would be on its
  /// own; an operand that is a group operand carries that operand's description, constant values
  /// included) and the values the group yields, one per result.
  std::vector<BodyOp> body;
  std::vector<BodyRef> yields;

  bool hasAttr(const std::string &key) const { return attrs.count(key) != 0; }
  int64_t attrInt(const std::string &key, int64_t fallback) const;
  double attrFloat(const std::string &key, double fallback) const;
  std::string attrString(const std::string &key, const std::string &fallback) const;
  std::vector<int64_t> attrInts(const std::string &key, std::vector<int64_t> fallback = {}) const;
  std::vector<double> attrFloats(const std::string &key, std::vector<double> fallback = {}) const;

  /// kInvalidArgument "<op> '<name>': <message>".
  Status error(const std::string &message) const;
};

struct BodyOp {
  OpDesc op;
  std::vector<BodyRef> args; // one per entry of op.operands
};

/// A kernel parameter: the start of an operand, a result, or a scratch buffer of the op.
struct KernelArg {
  enum class Kind : uint8_t { Operand, Result, Scratch };
  Kind kind = Kind::Operand;
  uint32_t index = 0;
  static KernelArg operand(uint32_t i) { return {Kind::Operand, i}; }
  static KernelArg result(uint32_t i) { return {Kind::Result, i}; }
  static KernelArg scratch(uint32_t i) { return {Kind::Scratch, i}; }
};

struct KernelLaunch {
  std::string function; // an extern "C" __global__ in EmittedKernels::source
  std::array<uint32_t, 3> grid = {1, 1, 1};
  std::array<uint32_t, 3> block = {1, 1, 1};
  uint32_t sharedBytes = 0; // dynamic shared memory
  std::vector<KernelArg> args;
};

/// What an emitter produces: source text and the launches to run in order.
struct EmittedKernels {
  std::string source;
  std::vector<KernelLaunch> launches;
  /// Scratch buffers (bytes each) the launches use; the memory planner gives them arena space
  /// live only during this op. Contents are undefined at the first launch.
  std::vector<uint64_t> scratchBytes;
};

struct EmitContext {
  /// Prefix of every global symbol the emitter defines, e.g. "k17_".
  std::string symbol;
};

using KernelEmitter = StatusOr<EmittedKernels> (*)(const OpDesc &op, const EmitContext &context);

/// Explicit table from kiln op name to emitter; each family registers its ops.
class KernelEmitterTable {
public:
  void add(std::string opName, KernelEmitter emitter) { table_[std::move(opName)] = emitter; }
  KernelEmitter lookup(const std::string &opName) const;
  /// The table with every family registered.
  static const KernelEmitterTable &get();

private:
  std::map<std::string, KernelEmitter> table_;
};

// One registration function (and one prelude) per family, each in its own file.
void registerElementwiseKernels(KernelEmitterTable &table);   // ElementwiseKernels.cpp
void registerDataMovementKernels(KernelEmitterTable &table);  // DataMovementKernels.cpp
void registerReductionKernels(KernelEmitterTable &table);     // ReductionKernels.cpp
void registerNormPoolKernels(KernelEmitterTable &table);      // NormPoolKernels.cpp
void registerFusionGroupKernels(KernelEmitterTable &table);   // FusionGroupKernels.cpp
std::string_view elementwisePrelude();
std::string_view dataMovementPrelude();
std::string_view reductionPrelude();
std::string_view normPoolPrelude();

/// The source every program starts with: includes, element types, load/store conversions
/// (KernelSource.cpp) followed by every family's prelude.
std::string programPrelude();

/// Emits `op` with the emitter registered for op.op; kUnimplemented-style error naming the op
/// when none is.
StatusOr<EmittedKernels> emitKernels(const OpDesc &op, const EmitContext &context);

} // namespace kiln::codegen

#endif // KILN_CODEGEN_KERNELS_KERNELEMITTER_H
