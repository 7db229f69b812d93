//===- ReductionKernels.cpp - reduce_* kernels, family prelude, registration ===//
//
// A reduction is planned on the input's dimensions with size-1 axes dropped and neighbouring
// axes of the same kind (kept / reduced) merged, so each output element is one offset over the
// kept dimensions plus one over the reduced dimensions. Two layouts:
// - the innermost dimension is reduced ("row"): a group of threads (a warp, or a block for long
//   rows) walks the reduced elements of one output, consecutive lanes on consecutive addresses;
// - the innermost dimension is kept ("column"): consecutive threads take consecutive outputs
//   (coalesced), and for long reductions several thread rows of a block split the reduced range.
// When there are too few outputs to fill the GPU, the reduced range is also split across blocks:
// partials go to a scratch buffer and a second kernel folds them in a fixed order. Every
// combination order is fixed, so results are deterministic run to run.
//
// reduce_log_sum_exp is two such reductions: the maximum (the shift, kept in scratch) and the
// sum of exp(x - shift), as the interpreter computes it.
//
// An axes operand that is a runtime tensor: when the static shapes fix which axes are reduced,
// the kernels above run after a tiny kernel that checks the operand's values; when they do not
// (keepdims=0 and equal sizes, e.g. 3x2x2 -> 3x2), one kernel reads the axes on the device and
// walks the reduced dims per output. Axes the interpreter would reject trap on the device.
//
//===----------------------------------------------------------------------===//

#include "codegen/kernels/ReductionSupport.h"

#include <algorithm>
#include <bit>
#include <optional>

namespace kiln::codegen {

using namespace reduction;

namespace {

// Integer results that the interpreter computes in double (mean, l2, log_sum, log_sum_exp) are
// converted like its storeDouble: truncation toward zero, saturation at the type's range,
// NaN -> 0.
constexpr std::string_view kPrelude = R"CUDA(
__device__ __forceinline__ long long kiln_red_sat_s(double v, long long lo, long long hi) {
  if (isnan(v)) return 0;
  double t = trunc(v);
  if (t <= (double)lo) return lo;
  if (t >= (double)hi) return hi;
  return (long long)t;
}
__device__ __forceinline__ unsigned long long kiln_red_sat_u(double v, unsigned long long hi) {
  if (isnan(v)) return 0ULL;
  double t = trunc(v);
  if (t <= 0.0) return 0ULL;
  if (t >= (double)hi) return hi;
  return (unsigned long long)t;
}
// |v| of a sign-extended integer, wrapping like the interpreter's int64 (|INT64_MIN| wraps).
__device__ __forceinline__ unsigned long long kiln_red_abs_s(long long v) {
  return v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
}
)CUDA";

enum class Reduce { Sum, Mean, Max, Min, Prod, L1, L2, SumSquare, LogSum, LogSumExp };

/// One reduction over the op's geometry: accumulator, how an element enters it, how two
/// accumulators combine, and what happens to the final value of output `o` (variable `a`).
struct Pass {
  std::string acc;
  std::string identity;
  std::string combine; // expression of `a` and `b`
  std::string load;    // expression of `in`, `off`, `o`
  std::string finalize; // statements using `a` and `o`
};

struct Geometry {
  Dims kept, reduced;  // merged (size, input stride), outermost first
  int64_t outputs = 0; // product of kept sizes
  int64_t count = 0;   // product of reduced sizes (elements per output)
  bool innerReduced = false;
};

Geometry planGeometry(const std::vector<int64_t> &shape, const std::vector<int64_t> &axes) {
  Geometry g;
  std::vector<int64_t> strides = rowMajorStrides(shape);
  struct Dim {
    int64_t size, stride;
    bool reduced;
  };
  std::vector<Dim> dims;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1)
      continue;
    bool reduced = std::find(axes.begin(), axes.end(), static_cast<int64_t>(d)) != axes.end();
    // Row-major: a dimension followed by one of the same kind merges into one (size-1 axes
    // between them are no obstacle: they add nothing to any offset).
    if (!dims.empty() && dims.back().reduced == reduced) {
      dims.back().size *= shape[d];
      dims.back().stride = strides[d];
    } else {
      dims.push_back({shape[d], strides[d], reduced});
    }
  }
  g.outputs = 1;
  g.count = 1;
  for (const Dim &d : dims) {
    (d.reduced ? g.reduced : g.kept).push_back({d.size, d.stride});
    (d.reduced ? g.count : g.outputs) *= d.size;
  }
  g.innerReduced = !dims.empty() && dims.back().reduced;
  // An empty side is never indexed: drop its dims so no "% 0" reaches the source.
  if (g.outputs == 0 || g.count == 0) {
    if (g.outputs == 0)
      g.kept.clear();
    if (g.count == 0)
      g.reduced.clear();
  }
  return g;
}

size_t accBytes(const std::string &acc) { return acc == "float" ? 4 : 8; }

/// Emits `pass` as one kernel (or a partial kernel plus a fold kernel when the reduced range is
/// split across blocks) and appends its launches.
void emitPass(EmittedKernels &out, const std::string &fn, const Pass &pass, const Geometry &g,
              std::string params, std::vector<KernelArg> args, uint32_t partialScratch) {
  const int64_t O = g.outputs, R = g.count;
  const int64_t kFill = 2 * 264; // ~4 blocks per SM of an H200 (132 SMs)
  bool row = g.innerReduced;
  int group = 1, ty = 1, tx = 1;
  int64_t units, split = 1;
  if (row) {
    group = R >= 2048 ? kBlock : R >= 32 ? 32 : 1;
    units = O;
    if (group == kBlock && O < kFill / 2 && R >= 4 * 4096)
      split = std::min<int64_t>(ceilDiv(kFill, std::max<int64_t>(O, 1)), R / 8192);
  } else {
    // Outputs across the x threads (at most a warp's worth when the reduction is long, fewer when
    // there are fewer outputs), the reduced range across the y threads.
    tx = kBlock;
    if (R >= 64) {
      tx = 1;
      while (tx < 32 && tx < O)
        tx *= 2;
    }
    ty = kBlock / tx;
    units = ceilDiv(O, tx);
    if (units < kFill / 2 && R >= ty * 256)
      split = std::min<int64_t>(ceilDiv(kFill, std::max<int64_t>(units, 1)), R / (ty * 64));
  }
  split = std::max<int64_t>(split, 1);
  const int64_t chunk = std::max<int64_t>(ceilDiv(R, split), 1);

  std::string combineFn = fn + "_combine";
  std::string src = "__device__ __forceinline__ " + pass.acc + " " + combineFn + "(" + pass.acc + " a, " +
                    pass.acc + " b) { return " + pass.combine + "; }\n";
  CombineFn combine = [&](const std::string &a, const std::string &b) {
    return combineFn + "(" + a + ", " + b + ")";
  };
  if (split > 1) {
    params += ", " + pass.acc + " *__restrict__ partial";
    args.push_back(KernelArg::scratch(partialScratch));
    if (out.scratchBytes.size() <= partialScratch)
      out.scratchBytes.resize(partialScratch + 1, 0);
    out.scratchBytes[partialScratch] =
        std::max<uint64_t>(out.scratchBytes[partialScratch], uint64_t(split * O) * accBytes(pass.acc));
  }
  std::string write = split > 1 ? "partial[s * " + literalInt(O) + " + o] = a;" : pass.finalize;
  std::map<std::string, std::string> vars = {
      {"FN", fn},
      {"PARAMS", params},
      {"ACC", pass.acc},
      {"IDENT", pass.identity},
      {"O", literalInt(O)},
      {"R", literalInt(R)},
      {"S", literalInt(split)},
      {"CHUNK", literalInt(chunk)},
      {"OUTOFF", offsetExpr(g.kept, "o")},
      {"REDOFF", offsetExpr(g.reduced, "r")},
      {"LOAD", pass.load},
      {"COMBINE", combineFn},
      {"WRITE", write},
  };
  int64_t blocks;
  if (row) {
    vars["G"] = std::to_string(group);
    vars["UNITS"] = literalInt(O * split);
    std::string reduceGroup = group == kBlock ? blockReduce("a", "red", kBlock, combine)
                              : group == 32   ? warpReduce("a", combine)
                                              : "";
    vars["GROUPREDUCE"] = reduceGroup;
    vars["SHARED"] = group == kBlock ? "__shared__ ${ACC} red[32];" : "";
    vars["SHARED"] = substitute(vars["SHARED"], vars);
    src += substitute(R"CUDA(
extern "C" __global__ void __launch_bounds__(256) ${FN}(${PARAMS}) {
  constexpr int kGroup = ${G};
  constexpr long long kGroupsPerBlock = 256 / kGroup;
  const int lane = threadIdx.x % kGroup;
  ${SHARED}
  // The loop bound is uniform across a group, so its shuffles and barriers are safe.
  for (long long unit = blockIdx.x * kGroupsPerBlock + threadIdx.x / kGroup; unit < ${UNITS};
       unit += (long long)gridDim.x * kGroupsPerBlock) {
    const long long o = unit / ${S}, s = unit % ${S};
    const long long base = ${OUTOFF};
    const long long rEnd = (s + 1) * ${CHUNK} < ${R} ? (s + 1) * ${CHUNK} : ${R};
    ${ACC} a = ${IDENT};
    for (long long r = s * ${CHUNK} + lane; r < rEnd; r += kGroup) {
      const long long off = base + ${REDOFF};
      a = ${COMBINE}(a, ${LOAD});
    }
    ${GROUPREDUCE}
    if (lane == 0) { ${WRITE} }
  }
}
)CUDA",
                      vars);
    blocks = ceilDiv(O * split, kBlock / group);
  } else {
    vars["TX"] = std::to_string(tx);
    vars["TY"] = std::to_string(ty);
    vars["UNITS"] = literalInt(units * split);
    vars["FOLD"] = ty == 1 ? ""
                           : substitute(R"CUDA(red[ty][tx] = a;
    __syncthreads();
    if (ty == 0)
      for (int y = 1; y < kTy; ++y) a = ${COMBINE}(a, red[y][tx]);
    __syncthreads();)CUDA",
                                        vars);
    vars["SHARED"] = ty == 1 ? "" : "__shared__ " + pass.acc + " red[kTy][kTx];";
    src += substitute(R"CUDA(
extern "C" __global__ void __launch_bounds__(256) ${FN}(${PARAMS}) {
  constexpr int kTx = ${TX}, kTy = ${TY};
  const int tx = threadIdx.x % kTx, ty = threadIdx.x / kTx;
  ${SHARED}
  // One tile of kTx consecutive outputs per block iteration (uniform across the block).
  for (long long unit = blockIdx.x; unit < ${UNITS}; unit += gridDim.x) {
    const long long tile = unit / ${S}, s = unit % ${S};
    const long long o = tile * kTx + tx;
    ${ACC} a = ${IDENT};
    if (o < ${O}) {
      const long long base = ${OUTOFF};
      const long long rEnd = (s + 1) * ${CHUNK} < ${R} ? (s + 1) * ${CHUNK} : ${R};
      for (long long r = s * ${CHUNK} + ty; r < rEnd; r += kTy) {
        const long long off = base + ${REDOFF};
        a = ${COMBINE}(a, ${LOAD});
      }
    }
    ${FOLD}
    if (ty == 0 && o < ${O}) { ${WRITE} }
  }
}
)CUDA",
                      vars);
    blocks = units * split;
  }
  out.launches.push_back(launch(fn, blocks, kBlock, args));
  if (split > 1) {
    vars["FINALIZE"] = pass.finalize;
    src += substitute(R"CUDA(
extern "C" __global__ void __launch_bounds__(256) ${FN}_fold(${PARAMS}) {
  for (long long o = blockIdx.x * (long long)blockDim.x + threadIdx.x; o < ${O}; o += (long long)gridDim.x * blockDim.x) {
    ${ACC} a = ${IDENT};
    for (long long s = 0; s < ${S}; ++s) a = ${COMBINE}(a, partial[s * ${O} + o]);
    ${FINALIZE}
  }
}
)CUDA",
                      vars);
    out.launches.push_back(launch(fn + "_fold", ceilDiv(O, kBlock), kBlock, args));
  }
  out.source += src;
}

/// Reduction axes when the axes operand is not a compile-time constant. The static result shape
/// decides them when only one choice of reduced non-size-1 axes fits (reducing a size-1 axis
/// or not gives the same values once anything is reduced); otherwise the choice is `ambiguous`
/// and only the operand's values on the device say which axes are reduced.
struct DerivedAxes {
  bool ambiguous = false;
  std::vector<int64_t> axes;
};

StatusOr<DerivedAxes> axesFromShapes(const OpDesc &op, const std::vector<int64_t> &in,
                                     const std::vector<int64_t> &out, int64_t axesCount, bool keepdims) {
  const int64_t rank = static_cast<int64_t>(in.size());
  DerivedAxes derived;
  if (keepdims) {
    if (static_cast<int64_t>(out.size()) != rank)
      return op.error("result rank " + std::to_string(out.size()) + " does not match input rank " +
                      std::to_string(rank) + " with keepdims");
    for (int64_t d = 0; d < rank; ++d) {
      if (in[d] != out[d] && out[d] != 1)
        return op.error("result shape " + formatShape(out) + " is no reduction of " + formatShape(in));
      if (in[d] != out[d] || in[d] == 1)
        derived.axes.push_back(d);
    }
    return derived;
  }
  const int64_t keptCount = rank - axesCount;
  if (keptCount < 0 || static_cast<int64_t>(out.size()) != keptCount)
    return op.error("result shape " + formatShape(out) + " does not fit reducing " + std::to_string(axesCount) +
                    " axes of " + formatShape(in) + " without keepdims");
  if (rank > 20) { // too many placements to enumerate: read the axes on the device
    derived.ambiguous = true;
    return derived;
  }
  // Every way to place the result dims in order over the input dims; the non-size-1 axes each
  // way reduces must agree.
  std::optional<std::vector<int64_t>> found, foundEffective;
  for (uint32_t mask = 0; mask < (1u << rank); ++mask) {
    if (std::popcount(mask) != keptCount)
      continue;
    std::vector<int64_t> reduced, effective;
    bool fits = true;
    int64_t k = 0;
    for (int64_t d = 0; d < rank && fits; ++d) {
      if (mask & (1u << d)) {
        fits = in[d] == out[k++];
      } else {
        reduced.push_back(d);
        if (in[d] != 1)
          effective.push_back(d);
      }
    }
    if (!fits)
      continue;
    if (foundEffective && *foundEffective != effective) {
      derived.ambiguous = true;
      return derived;
    }
    found = reduced;
    foundEffective = effective;
  }
  if (!found)
    return op.error("result shape " + formatShape(out) + " is no reduction of " + formatShape(in));
  derived.axes = *found;
  return derived;
}

/// The passes of one reduction kind, in the order they run for each output (log_sum_exp: the
/// maximum, which becomes the shift, then the sum of exp(x - shift)), and the device helpers
/// their expressions call. Shared by the static-axes kernels and the runtime-axes kernel so both
/// accumulate and finalize identically.
struct ReducePlan {
  std::string helpers;
  std::vector<Pass> passes;
};

/// `count` is the number of reduced elements per output when it is a compile-time constant;
/// without it the expressions read the kernel variable `count` (a long long). `shift` is the
/// lvalue holding log_sum_exp's shift of output `o`.
ReducePlan planReduce(Reduce kind, DType type, const std::string &fn, std::optional<int64_t> count,
                      const std::string &shift) {
  const bool isFloat = plan::isFloat(type);
  const bool isUnsigned = isUnsignedInt(type);
  // Max/min of integers compare in 64 bits with the type's signedness; log_sum_exp of integers
  // goes through double, as in the interpreter; everything else uses accType.
  std::string acc = accType(type);
  if (!isFloat && (kind == Reduce::Max || kind == Reduce::Min))
    acc = isUnsigned ? "unsigned long long" : "long long";
  if (!isFloat && kind == Reduce::LogSumExp)
    acc = "double";
  const bool accFloat = acc == "float" || acc == "double";
  // An element in the accumulator type.
  std::string x;
  if (isFloat || acc == "unsigned long long")
    x = loadAcc(type, "in", "off");
  else if (acc == "long long")
    x = "((long long)kiln_ld(in, off))";
  else // log_sum_exp of integers: the interpreter's (double)int64, so u64 reads as signed
    x = "((double)(long long)kiln_ld(in, off))";
  const std::string R = count ? literalInt(*count) : "count";
  const std::string zero = accFloat ? typedLiteral(acc, 0) : "0ULL";

  auto storeInt = [&](const std::string &value) { return "kiln_st(out, o, " + saturateToInt(type, value) + ");"; };
  auto asDouble = [&](const std::string &a) {
    return isUnsigned ? "((double)" + a + ")" : "((double)(long long)" + a + ")";
  };

  ReducePlan plan;
  Pass pass;
  pass.acc = acc;
  pass.identity = zero;
  pass.combine = "a + b"; // unsigned long long wraps like the interpreter's int64
  pass.load = x;
  pass.finalize = "kiln_st(out, o, a);";
  std::string maxCombine, minCombine;
  if (accFloat) {
    // The first NaN sticks; otherwise the larger (smaller) value.
    maxCombine = "isnan(a) ? a : (isnan(b) ? b : (b > a ? b : a))";
    minCombine = "isnan(a) ? a : (isnan(b) ? b : (b < a ? b : a))";
  } else {
    maxCombine = "b > a ? b : a";
    minCombine = "b < a ? b : a";
  }
  switch (kind) {
  case Reduce::Sum: break;
  case Reduce::Mean:
    if (accFloat) {
      // Empty: 0 / 0 = NaN, as the interpreter.
      pass.finalize = "kiln_st(out, o, a / " +
                      (count ? typedLiteral(acc, static_cast<double>(*count)) : "(" + acc + ")count") + ");";
    } else {
      // Integer division of the int64 sum, then through double, as the interpreter; empty: 0.
      std::string divide = storeInt("(double)((long long)a / " + R + ")");
      if (!count)
        pass.finalize = "if (count == 0) { kiln_st(out, o, 0); } else { " + divide + " }";
      else
        pass.finalize = *count == 0 ? "kiln_st(out, o, 0);" : divide;
    }
    break;
  case Reduce::Max:
  case Reduce::Min: {
    bool isMax = kind == Reduce::Max;
    pass.combine = isMax ? maxCombine : minCombine;
    // Empty: -inf / +inf, or the integer type's lowest / highest value (storeDouble of +-inf).
    pass.identity = accFloat ? infinity(acc, isMax) : isMax ? intLowest(type) : intHighest(type);
    break;
  }
  case Reduce::Prod:
    pass.identity = accFloat ? typedLiteral(acc, 1) : "1ULL";
    pass.combine = "a * b";
    break;
  case Reduce::L1:
    pass.load = isFloat ? mathFn("fabs", acc) + "(" + x + ")"
                : isUnsigned ? x
                             : "kiln_red_abs_s((long long)kiln_ld(in, off))";
    break;
  case Reduce::L2:
  case Reduce::SumSquare:
    // x * x in the accumulator's arithmetic (wrapping for integers).
    plan.helpers += "__device__ __forceinline__ " + acc + " " + fn + "_sq(" + acc + " v) { return v * v; }\n";
    pass.load = fn + "_sq(" + x + ")";
    if (kind == Reduce::L2)
      pass.finalize = isFloat ? "kiln_st(out, o, " + mathFn("sqrt", acc) + "(a));" : storeInt("sqrt(" + asDouble("a") + ")");
    break;
  case Reduce::LogSum:
    pass.finalize = isFloat ? "kiln_st(out, o, " + mathFn("log", acc) + "(a));" : storeInt("log(" + asDouble("a") + ")");
    break;
  case Reduce::LogSumExp: {
    Pass max;
    max.acc = acc;
    max.identity = infinity(acc, true);
    max.combine = maxCombine;
    max.load = x;
    // A non-finite maximum shifts by 0 (the interpreter's rule: -inf rows give log(0) = -inf).
    max.finalize = shift + " = isfinite(a) ? a : " + zero + ";";
    plan.passes.push_back(max);
    pass.load = mathFn("exp", acc) + "(" + x + " - " + shift + ")";
    std::string value = mathFn("log", acc) + "(a) + " + shift;
    pass.finalize = isFloat ? "kiln_st(out, o, " + value + ");" : storeInt(value);
    break;
  }
  }
  plan.passes.push_back(pass);
  return plan;
}

/// Device code that reads the `axesCount` values of the axes operand (`axesValue`), normalizes
/// them as the interpreter's normalizeReduceAxes (negative values count from the end) and checks
/// that they reduce `in` to the static result shape `out`. What the interpreter rejects (an axis
/// out of range, a repeated axis, axes that give another shape) cannot be reported from a
/// kernel: it leaves `axesValid` false and the kernel fills its result with NaN (0 for
/// integers) instead of computing something else. No trap: that would leave the CUDA context
/// unusable, and contexts run their steps once on zeroed inputs when they are created. Leaves
/// `dims[kRank]`, `reduced[kRank]` and `axesValid`.
std::string runtimeAxesPrologue(const std::vector<int64_t> &in, const std::vector<int64_t> &out,
                                int64_t axesCount, bool keepdims) {
  auto list = [](const std::vector<int64_t> &values) {
    std::string s;
    for (int64_t v : values)
      s += (s.empty() ? "" : ", ") + literalInt(v);
    return s.empty() ? std::string("0LL") : s; // rank-0 result: one unused slot
  };
  std::map<std::string, std::string> vars = {
      {"RANK", std::to_string(in.size())},
      {"DIMS", list(in)},
      {"NAXES", literalInt(axesCount)},
      {"OUTRANK", std::to_string(out.size())},
      {"OUTSLOTS", std::to_string(std::max<size_t>(out.size(), 1))},
      {"OUTDIMS", list(out)},
  };
  std::string src = R"CUDA(
  constexpr int kRank = ${RANK};
  const long long dims[kRank] = {${DIMS}};
  bool reduced[kRank];
  bool axesValid = true;
  for (int d = 0; d < kRank; ++d) reduced[d] = false;
  for (long long i = 0; i < ${NAXES}; ++i) {
    long long axis = (long long)axesValue[i];
    if (axis < 0) axis += kRank;
    // Out of range or repeated: the interpreter rejects the op.
    if (axis < 0 || axis >= kRank || reduced[axis]) { axesValid = false; break; }
    reduced[axis] = true;
  }
  // The result shape is static: axes that reduce to any other shape fail the launch too.
  const long long resultDims[${OUTSLOTS}] = {${OUTDIMS}};
)CUDA";
  src += keepdims ? R"CUDA(  for (int d = 0; d < kRank && axesValid; ++d)
    if (resultDims[d] != (reduced[d] ? 1LL : dims[d])) axesValid = false;
)CUDA"
                  : R"CUDA(  int kept = 0;
  for (int d = 0; d < kRank && axesValid; ++d) {
    if (reduced[d]) continue;
    if (kept == ${OUTRANK} || dims[d] != resultDims[kept]) { axesValid = false; break; }
    ++kept;
  }
  if (kept != ${OUTRANK}) axesValid = false;
)CUDA";
  return substitute(src, vars);
}

/// The reduction when only the device knows the axes: one thread per output element maps its
/// index onto the kept input dims and walks the reduced dims in row-major order (the
/// interpreter's order), running the plan's passes one after another. Performance is secondary:
/// static shapes only leave the axes open in small cases (the ONNX node tests); the usual
/// constant axes take the tuned kernels.
EmittedKernels emitRuntimeAxesReduce(const OpDesc &op, const std::string &fn, Reduce kind,
                                     int64_t axesCount, bool keepdims) {
  const TensorDesc &input = *op.operands[0];
  const TensorDesc &result = op.results[0];
  const DType type = input.dtype;
  ReducePlan plan = planReduce(kind, type, fn, std::nullopt, "shift");
  EmittedKernels out;
  out.source = plan.helpers;
  std::string strides;
  for (int64_t s : rowMajorStrides(input.shape))
    strides += (strides.empty() ? "" : ", ") + literalInt(s);
  std::string passes;
  for (size_t i = 0; i < plan.passes.size(); ++i) {
    const Pass &pass = plan.passes[i];
    std::string combineFn = fn + "_c" + std::to_string(i);
    out.source += "__device__ __forceinline__ " + pass.acc + " " + combineFn + "(" + pass.acc + " a, " + pass.acc +
                  " b) { return " + pass.combine + "; }\n";
    passes += substitute(R"CUDA(    {
      ${ACC} a = ${IDENT};
      long long idx[kRank];
      for (int k = 0; k < nRed; ++k) idx[k] = 0;
      long long off = base;
#pragma unroll 1
      for (long long r = 0; r < count; ++r) {
        a = ${COMBINE}(a, ${LOAD});
        // Odometer step to the next reduced element (innermost reduced dim fastest).
#pragma unroll 1
        for (int k = nRed - 1; k >= 0; --k) {
          off += redStride[k];
          if (++idx[k] < redSize[k]) break;
          off -= redStride[k] * redSize[k];
          idx[k] = 0;
        }
      }
      ${FINALIZE}
    }
)CUDA",
                         {{"ACC", pass.acc},
                          {"IDENT", pass.identity},
                          {"COMBINE", combineFn},
                          {"LOAD", pass.load},
                          {"FINALIZE", pass.finalize}});
  }
  // log_sum_exp: the first pass leaves the shift of output o here for the second.
  const std::string shiftDecl = plan.passes.size() > 1 ? plan.passes[0].acc + " shift;" : "";
  out.source += substitute(R"CUDA(
extern "C" __global__ void __launch_bounds__(256) ${FN}(${PARAMS}) {${PROLOGUE}
  if (!axesValid) {
    for (long long o = blockIdx.x * (long long)blockDim.x + threadIdx.x; o < ${O};
         o += (long long)gridDim.x * blockDim.x)
      kiln_st(out, o, (${COMPUTE})${POISON});
    return;
  }
  // The kept and the reduced dims in input order, with their input strides.
  const long long strides[kRank] = {${STRIDES}};
  long long keptSize[kRank], keptStride[kRank], redSize[kRank], redStride[kRank];
  int nKept = 0, nRed = 0;
  long long count = 1; // reduced elements per output
  for (int d = 0; d < kRank; ++d) {
    if (reduced[d]) {
      redSize[nRed] = dims[d];
      redStride[nRed++] = strides[d];
      count *= dims[d];
    } else {
      keptSize[nKept] = dims[d];
      keptStride[nKept++] = strides[d];
    }
  }
  for (long long o = blockIdx.x * (long long)blockDim.x + threadIdx.x; o < ${O};
       o += (long long)gridDim.x * blockDim.x) {
    // o is row-major over the kept dims (keepdims only adds size-1 dims, which move nothing).
    long long base = 0, rest = o;
    for (int k = nKept - 1; k >= 0; --k) {
      base += rest % keptSize[k] * keptStride[k];
      rest /= keptSize[k];
    }
    ${SHIFTDECL}
${PASSES}  }
}
)CUDA",
                           {{"FN", fn},
                            {"PARAMS", param(type, "in", true) + ", " + param(DType::I64, "axesValue", true) + ", " +
                                           param(type, "out", false)},
                            {"PROLOGUE", runtimeAxesPrologue(input.shape, result.shape, axesCount, keepdims)},
                            {"STRIDES", strides},
                            {"O", literalInt(result.numElements())},
                            {"SHIFTDECL", shiftDecl},
                            {"PASSES", passes},
                            {"COMPUTE", computeType(type)},
                            {"POISON", plan::isFloat(type) ? "NAN" : "0"}});
  out.launches.push_back(
      gridStrideLaunch(fn, result.numElements(), {KernelArg::operand(0), KernelArg::operand(1), KernelArg::result(0)}));
  return out;
}

StatusOr<EmittedKernels> emitReduce(const OpDesc &op, const EmitContext &context, Reduce kind) {
  if (op.operands.empty() || !op.operands[0] || op.results.size() != 1)
    return op.error("expects an input operand and one result");
  const TensorDesc &input = *op.operands[0];
  const TensorDesc &result = op.results[0];
  const DType type = input.dtype;
  if (type == DType::Bool)
    return op.error("bool inputs are not supported (the op takes numeric tensors)");
  if (result.dtype != type)
    return op.error("result element type must equal the input's");
  const bool keepdims = op.attrInt("keepdims", 1) != 0;
  const bool noop = op.attrInt("noop_with_empty_axes", 0) != 0;
  const int64_t rank = static_cast<int64_t>(input.shape.size());
  const std::string fn = context.symbol + "reduce";

  // Normalized, sorted axes, as the interpreter's normalizeReduceAxes.
  std::optional<std::vector<int64_t>> given;
  std::vector<int64_t> axes;
  // A runtime axes operand with values: `derived` when the shapes fix the reduced axes (its
  // values are then only checked on the device), `runtimeAxes` when the kernel must read them.
  bool derived = false, runtimeAxes = false;
  int64_t axesCount = 0;
  if (op.operands.size() > 1 && op.operands[1]) {
    const TensorDesc &axesDesc = *op.operands[1];
    if (axesDesc.shape.size() != 1)
      return op.error("axes must be 1-d, got " + formatShape(axesDesc.shape));
    axesCount = axesDesc.shape[0];
    if (axesDesc.ints) {
      given = *axesDesc.ints;
    } else if (axesCount != 0) {
      // An empty runtime operand needs no values: it means all axes (or noop) like no operand.
      if (axesDesc.dtype != DType::I64)
        return op.error("the axes operand must be i64 (it is read on the device), got " +
                        std::string(plan::dtypeName(axesDesc.dtype)));
      if (rank == 0)
        return op.error("the axes operand has " + std::to_string(axesCount) +
                        " values but a rank-0 input has no axis to reduce; pass empty axes");
      auto inferred = axesFromShapes(op, input.shape, result.shape, axesCount, keepdims);
      if (!inferred.isOk())
        return inferred.status();
      runtimeAxes = inferred.value().ambiguous;
      derived = !runtimeAxes;
      axes = inferred.value().axes;
    }
  } else if (op.hasAttr("axes")) {
    given = op.attrInts("axes");
  }
  if (runtimeAxes)
    return emitRuntimeAxesReduce(op, fn, kind, axesCount, keepdims);
  if (!derived) {
    if (!given || given->empty()) {
      if (!noop)
        for (int64_t d = 0; d < rank; ++d)
          axes.push_back(d);
    } else {
      for (int64_t a : *given) {
        if (a < -rank || a >= rank)
          return op.error("reduction axis " + std::to_string(a) + " is out of range for rank " +
                          std::to_string(rank));
        int64_t axis = a < 0 ? a + rank : a;
        if (std::find(axes.begin(), axes.end(), axis) != axes.end())
          return op.error("reduction axis " + std::to_string(axis) + " is repeated");
        axes.push_back(axis);
      }
      std::sort(axes.begin(), axes.end());
    }
  }
  const bool identity = axes.empty() && noop;
  std::vector<int64_t> expected;
  for (int64_t d = 0; d < rank; ++d) {
    bool reduced = std::find(axes.begin(), axes.end(), d) != axes.end();
    if (!reduced)
      expected.push_back(input.shape[d]);
    else if (keepdims)
      expected.push_back(1);
  }
  if (expected != result.shape)
    return op.error("axes reduce " + formatShape(input.shape) + " to " + formatShape(expected) +
                    ", the result has " + formatShape(result.shape));

  EmittedKernels out;
  // The shapes fixed the reduced axes, but the operand's values must still be ones the
  // interpreter accepts: after the reduction, a check fills the result with NaN (0 for
  // integers) when they are not.
  std::optional<KernelLaunch> axesCheck;
  if (derived) {
    out.source += substitute(R"CUDA(
extern "C" __global__ void __launch_bounds__(32) ${FN}_axes(${PARAMS}) {${PROLOGUE}
  if (axesValid) return;
  for (long long o = threadIdx.x; o < ${O}; o += blockDim.x)
    kiln_st(out, o, (${COMPUTE})${POISON});
}
)CUDA",
                             {{"FN", fn},
                              {"PARAMS", param(DType::I64, "axesValue", true) + ", " + param(type, "out", false)},
                              {"PROLOGUE", runtimeAxesPrologue(input.shape, result.shape, axesCount, keepdims)},
                              {"O", literalInt(result.numElements())},
                              {"COMPUTE", computeType(type)},
                              {"POISON", plan::isFloat(type) ? "NAN" : "0"}});
    axesCheck = launch(fn + "_axes", 1, 32, {KernelArg::operand(1), KernelArg::result(0)});
  }
  auto finish = [&]() {
    if (axesCheck)
      out.launches.push_back(*axesCheck);
    return out;
  };
  if (identity) {
    // noop_with_empty_axes: the input unchanged.
    out.source += "extern \"C\" __global__ void " + fn + "(" + param(type, "in", true) + ", " +
                  param(type, "out", false) + ") {\n  for (long long i = blockIdx.x * (long long)blockDim.x + "
                  "threadIdx.x; i < " + literalInt(input.numElements()) +
                  "; i += (long long)gridDim.x * blockDim.x) out[i] = in[i];\n}\n";
    out.launches.push_back(gridStrideLaunch(fn, input.numElements(), {KernelArg::operand(0), KernelArg::result(0)}));
    return finish();
  }

  Geometry g = planGeometry(input.shape, axes);
  ReducePlan plan = planReduce(kind, type, fn, g.count, "shift[o]");
  out.source += plan.helpers;
  if (kind == Reduce::LogSumExp) {
    // The maximum pass writes the shift of each output to scratch 0 for the sum pass.
    const std::string &acc = plan.passes[0].acc;
    std::string params = param(type, "in", true) + ", " + param(type, "out", false) + ", " + acc +
                         " *__restrict__ shift";
    std::vector<KernelArg> args = {KernelArg::operand(0), KernelArg::result(0), KernelArg::scratch(0)};
    out.scratchBytes.push_back(std::max<uint64_t>(uint64_t(g.outputs) * accBytes(acc), 1));
    emitPass(out, fn + "_max", plan.passes[0], g, params, args, 1);
    emitPass(out, fn + "_sum", plan.passes[1], g, params, args, 1);
    return finish();
  }
  emitPass(out, fn, plan.passes[0], g, param(type, "in", true) + ", " + param(type, "out", false),
           {KernelArg::operand(0), KernelArg::result(0)}, 0);
  return finish();
}

template <Reduce Kind> StatusOr<EmittedKernels> emitReduceOp(const OpDesc &op, const EmitContext &context) {
  return emitReduce(op, context, Kind);
}

} // namespace

std::string_view reductionPrelude() { return kPrelude; }

void registerReductionKernels(KernelEmitterTable &table) {
  table.add("kiln.reduce_mean", emitReduceOp<Reduce::Mean>);
  table.add("kiln.reduce_sum", emitReduceOp<Reduce::Sum>);
  table.add("kiln.reduce_max", emitReduceOp<Reduce::Max>);
  table.add("kiln.reduce_min", emitReduceOp<Reduce::Min>);
  table.add("kiln.reduce_prod", emitReduceOp<Reduce::Prod>);
  table.add("kiln.reduce_l1", emitReduceOp<Reduce::L1>);
  table.add("kiln.reduce_l2", emitReduceOp<Reduce::L2>);
  table.add("kiln.reduce_sum_square", emitReduceOp<Reduce::SumSquare>);
  table.add("kiln.reduce_log_sum", emitReduceOp<Reduce::LogSum>);
  table.add("kiln.reduce_log_sum_exp", emitReduceOp<Reduce::LogSumExp>);
  table.add("kiln.argmax", emitArgMax);
  table.add("kiln.argmin", emitArgMin);
  table.add("kiln.topk", emitTopK);
  table.add("kiln.cumsum", emitCumSum);
  table.add("kiln.softmax", emitSoftmax);
  table.add("kiln.log_softmax", emitLogSoftmax);
  table.add("kiln.einsum", emitEinsum);
}

} // namespace kiln::codegen
