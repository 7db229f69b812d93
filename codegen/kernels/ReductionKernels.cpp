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

/// Reduction axes when the axes operand is not a compile-time constant: the static result shape
/// decides them when only one choice of reduced non-size-1 axes fits (reducing a size-1 axis
/// or not gives the same values once anything is reduced).
StatusOr<std::vector<int64_t>> axesFromShapes(const OpDesc &op, const std::vector<int64_t> &in,
                                              const std::vector<int64_t> &out, int64_t axesCount,
                                              bool keepdims) {
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> axes;
  if (keepdims) {
    if (static_cast<int64_t>(out.size()) != rank)
      return op.error("result rank " + std::to_string(out.size()) + " does not match input rank " +
                      std::to_string(rank) + " with keepdims");
    for (int64_t d = 0; d < rank; ++d) {
      if (in[d] != out[d] && out[d] != 1)
        return op.error("result shape " + formatShape(out) + " is no reduction of " + formatShape(in));
      if (in[d] != out[d] || in[d] == 1)
        axes.push_back(d);
    }
    return axes;
  }
  const int64_t keptCount = rank - axesCount;
  if (keptCount < 0 || static_cast<int64_t>(out.size()) != keptCount)
    return op.error("result shape " + formatShape(out) + " does not fit reducing " + std::to_string(axesCount) +
                    " axes of " + formatShape(in) + " without keepdims");
  if (rank > 20)
    return op.error("the axes operand is not a constant and the input rank is too large to infer them; "
                    "make axes a constant");
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
    if (foundEffective && *foundEffective != effective)
      return op.error("the axes operand is not a constant and the result shape " + formatShape(out) +
                      " fits more than one choice of axes of " + formatShape(in) +
                      "; make axes a constant (or use keepdims=1)");
    found = reduced;
    foundEffective = effective;
  }
  if (!found)
    return op.error("result shape " + formatShape(out) + " is no reduction of " + formatShape(in));
  return *found;
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

  // Normalized, sorted axes, as the interpreter's normalizeReduceAxes.
  std::optional<std::vector<int64_t>> given;
  std::vector<int64_t> axes;
  bool derived = false;
  if (op.operands.size() > 1 && op.operands[1]) {
    const TensorDesc &axesDesc = *op.operands[1];
    if (axesDesc.shape.size() != 1)
      return op.error("axes must be 1-d, got " + formatShape(axesDesc.shape));
    if (axesDesc.ints) {
      given = *axesDesc.ints;
    } else if (axesDesc.shape[0] != 0) {
      auto inferred = axesFromShapes(op, input.shape, result.shape, axesDesc.shape[0], keepdims);
      if (!inferred.isOk())
        return inferred.status();
      axes = inferred.value();
      derived = true;
    }
  } else if (op.hasAttr("axes")) {
    given = op.attrInts("axes");
  }
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
  const std::string fn = context.symbol + "reduce";
  if (identity) {
    // noop_with_empty_axes: the input unchanged.
    out.source = "extern \"C\" __global__ void " + fn + "(" + param(type, "in", true) + ", " +
                 param(type, "out", false) + ") {\n  for (long long i = blockIdx.x * (long long)blockDim.x + "
                 "threadIdx.x; i < " + literalInt(input.numElements()) +
                 "; i += (long long)gridDim.x * blockDim.x) out[i] = in[i];\n}\n";
    out.launches.push_back(gridStrideLaunch(fn, input.numElements(), {KernelArg::operand(0), KernelArg::result(0)}));
    return out;
  }

  Geometry g = planGeometry(input.shape, axes);
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
  const std::string R = literalInt(g.count);
  const std::string zero = accFloat ? typedLiteral(acc, 0) : "0ULL";

  auto storeInt = [&](const std::string &value) { return "kiln_st(out, o, " + saturateToInt(type, value) + ");"; };
  auto asDouble = [&](const std::string &a) {
    return isUnsigned ? "((double)" + a + ")" : "((double)(long long)" + a + ")";
  };

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
    if (accFloat)
      pass.finalize = "kiln_st(out, o, a / " + typedLiteral(acc, static_cast<double>(g.count)) + ");";
    else if (g.count == 0)
      pass.finalize = "kiln_st(out, o, 0);";
    else // integer division of the int64 sum, then through double, as the interpreter
      pass.finalize = storeInt("(double)((long long)a / " + R + ")");
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
    out.source += "__device__ __forceinline__ " + acc + " " + fn + "_sq(" + acc + " v) { return v * v; }\n";
    pass.load = fn + "_sq(" + x + ")";
    if (kind == Reduce::L2)
      pass.finalize = isFloat ? "kiln_st(out, o, " + mathFn("sqrt", acc) + "(a));" : storeInt("sqrt(" + asDouble("a") + ")");
    break;
  case Reduce::LogSum:
    pass.finalize = isFloat ? "kiln_st(out, o, " + mathFn("log", acc) + "(a));" : storeInt("log(" + asDouble("a") + ")");
    break;
  case Reduce::LogSumExp: {
    std::string params = param(type, "in", true) + ", " + param(type, "out", false) + ", " + acc +
                         " *__restrict__ shift";
    std::vector<KernelArg> args = {KernelArg::operand(0), KernelArg::result(0), KernelArg::scratch(0)};
    out.scratchBytes.push_back(std::max<uint64_t>(uint64_t(g.outputs) * accBytes(acc), 1));
    Pass max;
    max.acc = acc;
    max.identity = infinity(acc, true);
    max.combine = maxCombine;
    max.load = x;
    // A non-finite maximum shifts by 0 (the interpreter's rule: -inf rows give log(0) = -inf).
    max.finalize = "shift[o] = isfinite(a) ? a : " + zero + ";";
    emitPass(out, fn + "_max", max, g, params, args, 1);
    pass.load = mathFn("exp", acc) + "(" + x + " - shift[o])";
    std::string value = mathFn("log", acc) + "(a) + shift[o]";
    pass.finalize = isFloat ? "kiln_st(out, o, " + value + ");" : storeInt(value);
    emitPass(out, fn + "_sum", pass, g, params, args, 1);
    return out;
  }
  }
  emitPass(out, fn, pass, g, param(type, "in", true) + ", " + param(type, "out", false),
           {KernelArg::operand(0), KernelArg::result(0)}, 0);
  return out;
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
