//===- ReductionSupport.h - shared pieces of the reduction family -*- C++ -*-===//
//
// The reduction family (reductions, arg reductions, cumsum, top-k, softmax, einsum) is split
// over several Reduction*.cpp files; this header holds what they share: the accumulator policy,
// element loads in accumulator type, block/warp reduction snippets and template substitution.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_KERNELS_REDUCTIONSUPPORT_H
#define KILN_CODEGEN_KERNELS_REDUCTIONSUPPORT_H

#include "codegen/kernels/KernelSource.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace kiln::codegen::reduction {

/// Threads per block of every kernel of this family.
inline constexpr int kBlock = 256;
/// Cap of grid-stride grids (enough to fill an H200 many times over).
inline constexpr int64_t kMaxBlocks = 32768;

bool isUnsignedInt(DType type);
bool isSignedInt(DType type);

/// Accumulator type. The interpreter accumulates floats in double and rounds once; on the GPU
/// f64 and f32 accumulate in double too (memory-bound kernels, so exact agreement is free),
/// f16/bf16/f8 in float (24 bits hold their sums well). Integers accumulate in 64 bits with
/// wrap-around ("unsigned long long"), as the interpreter's wrapping int64.
std::string accType(DType type);
/// Element `off` of `ptr` (of element type `type`) converted to accType(type); integers are
/// sign- or zero-extended to 64 bits first.
std::string loadAcc(DType type, const std::string &ptr, const std::string &off);
/// Element `off` of `ptr` as a comparable value: computeType for floats, the storage type for
/// integers.
std::string loadValue(DType type, const std::string &ptr, const std::string &off);
/// The type loadValue returns.
std::string valueType(DType type);

/// `name` ("exp", "log", "sqrt", "fmax", "fabs") for float or double arguments: expf or exp.
std::string mathFn(const std::string &name, const std::string &type);
/// A literal of `value` in C type `type` ("float", "double", "unsigned long long", ...).
std::string typedLiteral(const std::string &type, double value);
/// Infinity of C type `type` (float or double), negative when `negative`.
std::string infinity(const std::string &type, bool negative);

/// Lowest / highest value of an integer type as a C literal of its storage type.
std::string intLowest(DType type);
std::string intHighest(DType type);
/// A C expression converting the double expression `value` to integer `type` the way the
/// interpreter's storeDouble does: truncation toward zero, saturation, NaN -> 0.
std::string saturateToInt(DType type, const std::string &value);

/// `ptr` declared as a kernel parameter: "const float *__restrict__ x".
std::string param(DType type, const std::string &name, bool isConst);

/// Replaces every ${KEY} in `text` by its value.
std::string substitute(std::string text, const std::map<std::string, std::string> &values);

/// (size, input stride) of the dimensions an index walks row-major.
using Dims = std::vector<std::pair<int64_t, int64_t>>;
/// C expression of the input offset of row-major index `var` over `dims`.
std::string offsetExpr(const Dims &dims, const std::string &var);

/// Combines two values of a reduction: returns the C expression for `op(a, b)`.
using CombineFn = std::function<std::string(const std::string &a, const std::string &b)>;
/// Source that reduces variable `x` over the whole block (blockDim.x == threads, a multiple of
/// 32) with `combine`, leaving the result in `x` of every thread. Uses `__shared__ T red[32]`
/// named `sharedName`, which the kernel declares. Every thread folds the warp partials in the
/// same order, so the result is deterministic and identical across threads.
std::string blockReduce(const std::string &x, const std::string &sharedName, int threads,
                        const CombineFn &combine);
/// Source that reduces `x` over a warp (xor butterfly: every lane ends with the same value).
std::string warpReduce(const std::string &x, const CombineFn &combine);

/// Launch of `function` with `blocks` (clamped to [1, kMaxBlocks]) blocks of `threads` threads.
KernelLaunch launch(std::string function, int64_t blocks, int threads, std::vector<KernelArg> args);

int64_t ceilDiv(int64_t a, int64_t b);

/// A tensor seen as [outer, size, inner] around one axis.
struct AxisView {
  int64_t outer = 1, size = 1, inner = 1;
};
AxisView axisView(const std::vector<int64_t> &shape, int64_t axis);

/// "1x3x224x224" (or "scalar") for messages.
std::string formatShape(const std::vector<int64_t> &shape);

// Emitters of the family's other files (registered by registerReductionKernels).
StatusOr<EmittedKernels> emitArgMax(const OpDesc &op, const EmitContext &context);
StatusOr<EmittedKernels> emitArgMin(const OpDesc &op, const EmitContext &context);
StatusOr<EmittedKernels> emitTopK(const OpDesc &op, const EmitContext &context);
StatusOr<EmittedKernels> emitCumSum(const OpDesc &op, const EmitContext &context);
StatusOr<EmittedKernels> emitSoftmax(const OpDesc &op, const EmitContext &context);
StatusOr<EmittedKernels> emitLogSoftmax(const OpDesc &op, const EmitContext &context);
StatusOr<EmittedKernels> emitEinsum(const OpDesc &op, const EmitContext &context);

} // namespace kiln::codegen::reduction

#endif // KILN_CODEGEN_KERNELS_REDUCTIONSUPPORT_H
