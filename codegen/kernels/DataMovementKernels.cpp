//===- DataMovementKernels.cpp - the data-movement family: prelude, table ---===//
//
// Registers the family (see DataMovementSource.h for how its kernels move data) and holds the
// three ops that are not pure index maps over another tensor: reshape (a straight copy),
// range (computes its values) and trilu (copies or zeroes).
//
//===----------------------------------------------------------------------===//

#include "codegen/kernels/DataMovementSource.h"

#include <cmath>

namespace kiln::codegen {

namespace {
constexpr std::string_view kPrelude = R"CUDA(
// Wraps a possibly negative index into [0, dim); -1 when it is out of range, where the
// interpreter reports an error and the kernels write zero instead (see the gather emitters).
__device__ __forceinline__ kiln_i64 kiln_dm_wrap_index(kiln_i64 index, kiln_i64 dim) {
  const kiln_i64 wrapped = index < 0 ? index + dim : index;
  return (wrapped >= 0 && wrapped < dim) ? wrapped : -1;
}
// Pad's wrap mode: t modulo n (n > 0), non-negative.
__device__ __forceinline__ kiln_i64 kiln_dm_pad_wrap(kiln_i64 t, kiln_i64 n) {
  const kiln_i64 m = t % n;
  return m < 0 ? m + n : m;
}
// Pad's reflect mode (numpy): mirror without repeating the edge, periodically (n > 0).
__device__ __forceinline__ kiln_i64 kiln_dm_pad_reflect(kiln_i64 t, kiln_i64 n) {
  const kiln_i64 period = 2 * (n - 1);
  if (period == 0)
    return 0;
  const kiln_i64 m = kiln_dm_pad_wrap(t, period);
  return m >= n ? period - m : m;
}
// double -> f8E4M3FN bits, round to nearest even, as the interpreter stores computed values:
// beyond the largest finite value (448, ties to it up to 464) is NaN, not saturation.
__device__ __forceinline__ unsigned char kiln_dm_f8_from_double(double v) {
  if (fabs(v) > 464.0)
    return (unsigned char)(v < 0 ? 0xff : 0x7f);
  return (unsigned char)__nv_cvt_double_to_fp8(v, __NV_SATFINITE, __NV_E4M3);
}
)CUDA";
} // namespace

std::string_view dataMovementPrelude() { return kPrelude; }

void registerDataMovementKernels(KernelEmitterTable &table) {
  using namespace datamovement;
  table.add("kiln.reshape", emitReshape);
  table.add("kiln.transpose", emitTranspose);
  table.add("kiln.concat", emitConcat);
  table.add("kiln.split", emitSplit);
  table.add("kiln.slice", emitSlice);
  table.add("kiln.gather", emitGather);
  table.add("kiln.gather_elements", emitGatherElements);
  table.add("kiln.gather_nd", emitGatherND);
  table.add("kiln.expand", emitExpand);
  table.add("kiln.tile", emitTile);
  table.add("kiln.pad", emitPad);
  table.add("kiln.range", emitRange);
  table.add("kiln.trilu", emitTrilu);
  table.add("kiln.depth_to_space", emitDepthToSpace);
  table.add("kiln.space_to_depth", emitSpaceToDepth);
}

namespace datamovement {

StatusOr<EmittedKernels> emitReshape(const OpDesc &op, const EmitContext &context) {
  if (Status s = expectArity(op, 1, 1); !s.isOk())
    return s;
  const TensorDesc &in = *op.operands[0];
  const TensorDesc &out = op.results[0];
  if (in.dtype != out.dtype || in.numElements() != out.numElements())
    return op.error("cannot reshape " + formatShape(in.shape) + " " + std::string(plan::dtypeName(in.dtype)) + " to " +
                    formatShape(out.shape) + " " + std::string(plan::dtypeName(out.dtype)) +
                    ": element type and element count must stay");
  // Row-major reinterpretation: the bytes stay in order, so this is a flat copy in the widest
  // access that divides the byte size.
  int64_t bytes = elementBytes(in.dtype);
  int64_t width = accessBytes(bytes, {in.numElements()});
  std::string raw = rawType(width);
  LoopKernel kernel;
  kernel.function = context.symbol + "reshape";
  kernel.params = {{"const " + raw + " *__restrict__ in", KernelArg::operand(0)},
                   {raw + " *__restrict__ out", KernelArg::result(0)}};
  kernel.body = "out[j] = in[j];\n";
  kernel.count = in.numElements() * bytes / width;
  EmittedKernels emitted;
  addLoopKernel(emitted, kernel);
  return emitted;
}

StatusOr<EmittedKernels> emitRange(const OpDesc &op, const EmitContext &context) {
  if (Status s = expectArity(op, 3, 1); !s.isOk())
    return s;
  const TensorDesc &out = op.results[0];
  DType type = out.dtype;
  if (type == DType::Bool)
    return op.error("range needs a numeric element type, got bool");
  if (out.shape.size() != 1)
    return op.error("result must be 1-d, got " + formatShape(out.shape));
  const char *names[] = {"start", "limit", "delta"};
  for (int i = 0; i < 3; ++i) {
    const TensorDesc &t = *op.operands[i];
    if (t.dtype != type || t.numElements() != 1)
      return op.error(std::string(names[i]) + " must be a one-element tensor of the result's type " +
                      std::string(plan::dtypeName(type)) + ", got " + formatShape(t.shape) + " " +
                      std::string(plan::dtypeName(t.dtype)));
  }
  bool isFloat = plan::isFloat(type);
  // The value of operand i as a C expression: baked when constant, read from memory otherwise.
  auto scalar = [&](int i, std::optional<double> &constant) -> std::string {
    const TensorDesc &t = *op.operands[i];
    if (t.floats)
      constant = t.floats->front();
    else if (t.ints)
      constant = static_cast<double>(t.ints->front());
    if (isFloat)
      return t.floats ? literal(DType::F64, t.floats->front()) : "(double)kiln_ld(" + std::string(names[i]) + ", 0)";
    return t.ints ? "(unsigned long long)" + literalInt(t.ints->front())
                  : "(unsigned long long)(kiln_i64)" + std::string(names[i]) + "[0]";
  };
  std::optional<double> start, limit, delta;
  std::string startExpr = scalar(0, start), deltaExpr = scalar(2, delta);
  scalar(1, limit);
  // With constant operands the element count is known: it must be the result's (as the
  // interpreter checks); with computed ones the static result size is the count.
  if (start && limit && delta) {
    if (*delta == 0)
      return op.error("range delta must not be 0");
    double n = std::ceil((*limit - *start) / *delta);
    int64_t count = n >= 0 ? static_cast<int64_t>(n) : 0;
    if (!(n < 1e15) || count != out.shape[0])
      return op.error("result has " + std::to_string(out.shape[0]) + " elements, start " + std::to_string(*start) +
                      ", limit " + std::to_string(*limit) + " and delta " + std::to_string(*delta) +
                      " give a different count");
  }

  LoopKernel kernel;
  kernel.function = context.symbol + "range";
  for (int i : {0, 2})
    if (!op.operands[i]->isConstant())
      kernel.params.push_back({"const " + storageType(type) + " *__restrict__ " + names[i], KernelArg::operand(i)});
  // f8 results are written as their bits (kiln_dm_f8_from_double).
  std::string outType = type == DType::F8E4M3FN ? "unsigned char" : storageType(type);
  kernel.params.push_back({outType + " *__restrict__ out", KernelArg::result(0)});
  if (isFloat) {
    // start + j * delta in double without FMA contraction (the interpreter's arithmetic), then
    // rounded once to the element type.
    kernel.prologue = "const double s = " + startExpr + ", d = " + deltaExpr + ";\n";
    std::string value = "__dadd_rn(s, __dmul_rn((double)j, d))";
    switch (type) {
    case DType::F64:
      kernel.body = "out[j] = " + value + ";\n";
      break;
    case DType::F32:
      kernel.body = "out[j] = __double2float_rn(" + value + ");\n";
      break;
    case DType::F16:
      kernel.body = "out[j] = __double2half(" + value + ");\n";
      break;
    case DType::BF16:
      kernel.body = "out[j] = __double2bfloat16(" + value + ");\n";
      break;
    default:
      kernel.body = "out[j] = kiln_dm_f8_from_double(" + value + ");\n";
      break;
    }
  } else {
    // Integers wrap: unsigned 64-bit arithmetic, truncated to the element width.
    kernel.prologue = "const unsigned long long s = " + startExpr + ", d = " + deltaExpr + ";\n";
    kernel.body = "out[j] = (" + storageType(type) + ")(s + (unsigned long long)j * d);\n";
  }
  kernel.count = out.shape[0];
  EmittedKernels emitted;
  addLoopKernel(emitted, kernel);
  return emitted;
}

StatusOr<EmittedKernels> emitTrilu(const OpDesc &op, const EmitContext &context) {
  if (Status s = expectArity(op, 2, 1); !s.isOk())
    return s;
  const TensorDesc &in = *op.operands[0];
  const TensorDesc &k = *op.operands[1];
  if (in.shape.size() < 2)
    return op.error("input must have rank >= 2, got " + formatShape(in.shape));
  if (Status s = expectDType(op, k, DType::I64, "k"); !s.isOk())
    return s;
  if (k.numElements() != 1)
    return op.error("k must hold one value, got shape " + formatShape(k.shape));
  if (op.results[0].dtype != in.dtype)
    return op.error("result must have the input's element type");
  if (Status s = expectResultShape(op, in.shape); !s.isOk())
    return s;
  bool upper = op.attrInt("upper", 1) != 0;
  int64_t rank = in.shape.size();
  int64_t rows = in.shape[rank - 2], cols = in.shape[rank - 1];
  IntOperand diagonal(k, 1, "k");
  std::string raw = rawType(in.dtype);

  LoopKernel kernel;
  kernel.function = context.symbol + "trilu";
  kernel.params.push_back({"const " + raw + " *__restrict__ in", KernelArg::operand(0)});
  addParam(kernel, diagonal.param());
  kernel.params.push_back({raw + " *__restrict__ out", KernelArg::result(0)});
  kernel.prologue = "const kiln_i64 kk = " + diagonal.at(context.symbol, "0") + ";\n";
  // Element (row, col) of the last two axes stays when col - row >= k (upper) or <= k (lower);
  // the others are zero, whose bits are 0 in every element type.
  kernel.body = "const kiln_i64 col = " + umod("j", cols) + ", row = " + umod(udiv("j", cols), rows) + ";\n" +
                "out[j] = (col - row " + (upper ? ">=" : "<=") + " kk) ? in[j] : (" + raw + ")0;\n";
  kernel.count = in.numElements();
  EmittedKernels emitted;
  addLoopKernel(emitted, kernel);
  return emitted;
}

} // namespace datamovement
} // namespace kiln::codegen
