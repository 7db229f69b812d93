//===- DataMovementIndexKernels.cpp - slice, the gathers, pad ---------------===//
//
// The ops whose index map depends on operand values: slice parameters, gather indices and pad
// amounts. Constant operands are validated here exactly as the interpreter validates them and
// baked into the source; computed ones are read by the kernel. A kernel cannot report an error,
// so where the interpreter would (an index out of range, slice parameters that disagree with
// the static result shape) the kernel stays inside its buffers instead:
//  - gathers write 0 (all bits zero) for an element whose index is out of range after
//    wrapping negatives once;
//  - slice clamps every source coordinate into the input;
//  - pad clamps the kept part of each axis into the input, and writes 0 where a reflect, edge
//    or wrap axis has nothing left to repeat.
//
//===----------------------------------------------------------------------===//

#include "codegen/kernels/DataMovementSource.h"

#include <algorithm>
#include <functional>
#include <sstream>

namespace kiln::codegen::datamovement {
namespace {

std::string zeroOf(int64_t width) { return width == 16 ? "make_uint4(0u, 0u, 0u, 0u)" : "(" + rawType(width) + ")0"; }

Status expectIndexType(const OpDesc &op, const TensorDesc &t, const std::string &what) {
  if (t.dtype != DType::I32 && t.dtype != DType::I64)
    return op.error(what + " must be i32 or i64, got " + std::string(plan::dtypeName(t.dtype)));
  return Status::ok();
}

/// Wraps constant indices on the host; an index out of range is an error naming it, as in the
/// interpreter. `dimOf(n)` is the size of the axis entry n addresses.
template <typename DimOf>
StatusOr<std::vector<int64_t>> wrapConstantIndices(const OpDesc &op, const std::vector<int64_t> &indices, DimOf dimOf) {
  std::vector<int64_t> wrapped;
  for (size_t n = 0; n < indices.size(); ++n) {
    auto [dim, axis] = dimOf(n);
    int64_t index = indices[n];
    if (index < -dim || index >= dim)
      return op.error("index " + std::to_string(index) + " (entry " + std::to_string(n) +
                      " of the indices) is out of range for axis " + std::to_string(axis) + " of size " +
                      std::to_string(dim));
    wrapped.push_back(index < 0 ? index + dim : index);
  }
  return wrapped;
}

/// The index operand of a gather: wrapped constants, or values the kernel wraps.
StatusOr<IntOperand> indexOperand(const OpDesc &op, const TensorDesc &indices,
                                  const std::function<std::pair<int64_t, int64_t>(size_t)> &dimOf) {
  if (!indices.ints)
    return IntOperand(indices, 1, "indices");
  auto wrapped = wrapConstantIndices(op, *indices.ints, dimOf);
  if (!wrapped.isOk())
    return wrapped.status();
  return IntOperand(indices, 1, "indices", std::move(wrapped).value());
}

/// The C expression of a gather index: already wrapped when constant, wrapped now otherwise
/// (-1 when out of range).
std::string wrappedIndex(const IntOperand &indices, const std::string &symbol, const std::string &n, int64_t dim) {
  if (indices.isConstant())
    return indices.at(symbol, n);
  return "kiln_dm_wrap_index(" + indices.at(symbol, n) + ", " + literalInt(dim) + ")";
}

/// "a * 3LL" without the multiplication by 1.
std::string times(const std::string &a, int64_t b) { return b == 1 ? a : a + " * " + literalInt(b); }

} // namespace

//===-- Slice -------------------------------------------------------------===//

StatusOr<EmittedKernels> emitSlice(const OpDesc &op, const EmitContext &context) {
  if (Status s = expectArity(op, 5, 1); !s.isOk())
    return s;
  const TensorDesc &in = *op.operands[0];
  const TensorDesc &out = op.results[0];
  const char *names[] = {"starts", "ends", "axes", "steps"};
  int64_t length = op.operands[1]->numElements();
  for (int p = 1; p <= 4; ++p) {
    const TensorDesc &t = *op.operands[p];
    if (Status s = expectIndexType(op, t, names[p - 1]); !s.isOk())
      return s;
    if (t.shape.size() != 1 || t.shape[0] != length)
      return op.error("starts, ends, axes and steps must be 1-d tensors of one length; " + std::string(names[p - 1]) +
                      " has shape " + formatShape(t.shape));
  }
  int64_t rank = in.shape.size();
  if (out.dtype != in.dtype || static_cast<int64_t>(out.shape.size()) != rank)
    return op.error("result must have the input's element type and rank");
  for (int64_t d = 0; d < rank; ++d)
    if (out.shape[d] > in.shape[d])
      return op.error("result shape " + formatShape(out.shape) + " is larger than the input's " +
                      formatShape(in.shape));

  IntOperand starts(*op.operands[1], 1, "starts"), ends(*op.operands[2], 2, "ends");
  IntOperand axes(*op.operands[3], 3, "axes"), steps(*op.operands[4], 4, "steps");
  int64_t bytes = elementBytes(in.dtype);
  std::string function = context.symbol + "slice";
  EmittedKernels emitted;

  if (starts.isConstant() && axes.isConstant() && steps.isConstant()) {
    // Normalize as ONNX (and normalizeSlice in ir/ShapeRules.cpp) does, then bake.
    std::vector<int64_t> start(rank, 0), step(rank, 1);
    std::vector<bool> seen(rank, false);
    for (int64_t i = 0; i < length; ++i) {
      int64_t axis = axes.values()[i] < 0 ? axes.values()[i] + rank : axes.values()[i];
      if (axis < 0 || axis >= rank)
        return op.error("slice axis " + std::to_string(axes.values()[i]) + " is out of range for rank " +
                        std::to_string(rank));
      if (seen[axis])
        return op.error("slice axis " + std::to_string(axis) + " is repeated");
      seen[axis] = true;
      int64_t dim = in.shape[axis], s = starts.values()[i], st = steps.values()[i];
      if (st == 0)
        return op.error("slice step must not be 0");
      if (dim == 0)
        continue;
      s = s < 0 ? s + dim : s;
      s = st > 0 ? std::clamp<int64_t>(s, 0, dim) : std::clamp<int64_t>(s, 0, dim - 1);
      // The elements from `s` in direction `st` up to the end of the axis; constant ends give
      // the exact count, which must be the result's.
      int64_t end = st > 0 ? dim : -1;
      if (ends.isConstant()) {
        int64_t e = ends.values()[i] < 0 ? ends.values()[i] + dim : ends.values()[i];
        end = st > 0 ? std::clamp<int64_t>(e, 0, dim) : std::clamp<int64_t>(e, -1, dim - 1);
      }
      // ceil(span / |step|), without overflow for steps near the int64 limits.
      int64_t span = st > 0 ? end - s : s - end;
      uint64_t stride = st > 0 ? static_cast<uint64_t>(st) : uint64_t{0} - static_cast<uint64_t>(st);
      int64_t count = span > 0 ? 1 + static_cast<int64_t>(static_cast<uint64_t>(span - 1) / stride) : 0;
      bool fits = ends.isConstant() ? out.shape[axis] == count : out.shape[axis] <= count;
      if (!fits)
        return op.error("result axis " + std::to_string(axis) + " has " + std::to_string(out.shape[axis]) +
                        " elements, the slice parameters give " + std::to_string(count) +
                        (ends.isConstant() ? "" : " at most"));
      start[axis] = count == 0 ? 0 : s;
      step[axis] = st;
    }
    if (ends.isConstant())
      for (int64_t d = 0; d < rank; ++d)
        if (!seen[d] && out.shape[d] != in.shape[d])
          return op.error("result axis " + std::to_string(d) + " is not sliced, yet has " +
                          std::to_string(out.shape[d]) + " elements of the input's " + std::to_string(in.shape[d]));
    // A unit-step innermost axis is a contiguous run on both sides: move it wide.
    std::vector<int64_t> inShape = in.shape, outShape = out.shape;
    int64_t width = bytes;
    if (rank > 0 && step.back() == 1) {
      width = accessBytes(bytes, {outShape.back(), inShape.back(), start.back()});
      int64_t perAccess = width / bytes;
      outShape.back() /= perAccess;
      inShape.back() /= perAccess;
      start.back() /= perAccess;
    }
    std::vector<int64_t> inStrides = rowMajorStrides(inShape);
    int64_t base = 0;
    for (int64_t d = 0; d < rank; ++d)
      base += start[d] * inStrides[d];
    std::string raw = rawType(width);
    LoopKernel kernel;
    kernel.function = function;
    kernel.params = {{"const " + raw + " *__restrict__ in", KernelArg::operand(0)},
                     {raw + " *__restrict__ out", KernelArg::result(0)}};
    std::ostringstream body;
    body << decodeCoords(outShape, "j", "c") << "out[j] = in[" << literalInt(base);
    for (int64_t d = 0; d < rank; ++d)
      if (outShape[d] != 1)
        body << " + " << times("c" + std::to_string(d), step[d] * inStrides[d]);
    body << "];\n";
    kernel.body = body.str();
    kernel.count = product(outShape);
    addLoopKernel(emitted, kernel);
    return emitted;
  }

  // Computed parameters: every thread normalizes them (a handful of cached loads) before its
  // loop. The static result shape fixes the counts, so `ends` is not needed; invalid entries
  // (axis out of range, step 0) are skipped and a repeated axis takes its last entry.
  std::string raw = rawType(bytes);
  LoopKernel kernel;
  kernel.function = function;
  kernel.params.push_back({"const " + raw + " *__restrict__ in", KernelArg::operand(0)});
  addParam(kernel, starts.param());
  addParam(kernel, axes.param());
  addParam(kernel, steps.param());
  kernel.params.push_back({raw + " *__restrict__ out", KernelArg::result(0)});
  std::ostringstream prologue, body;
  for (const IntOperand *t : {&starts, &axes, &steps})
    emitted.source += t->globals(context.symbol);
  std::string sym = context.symbol;
  for (int64_t d = 0; d < rank; ++d) {
    std::string D = literalInt(in.shape[d]), n = std::to_string(d);
    prologue << "kiln_i64 start" << n << " = 0, step" << n << " = 1;\n";
    if (length == 0)
      continue; // nothing is sliced (and constant operands have no table to read)
    prologue << "for (int i = 0; i < " << length << "; ++i) {\n"
             << "kiln_i64 axis = " << axes.at(sym, "i") << ";\n"
             << "if (axis < 0) axis += " << rank << ";\n"
             << "const kiln_i64 step = " << steps.at(sym, "i") << ";\n"
             << "if (axis != " << d << " || step == 0) continue;\n"
             << "kiln_i64 s = " << starts.at(sym, "i") << ";\n"
             << "if (s < 0) s += " << D << ";\n"
             << "s = s < 0 ? 0 : s;\n"
             << "s = step > 0 ? (s > " << D << " ? " << D << " : s) : (s > " << D << " - 1 ? " << D << " - 1 : s);\n"
             << "start" << n << " = s; step" << n << " = step;\n"
             << "}\n";
  }
  std::vector<int64_t> inStrides = rowMajorStrides(in.shape);
  body << decodeCoords(out.shape, "j", "c") << "kiln_i64 k = 0;\n";
  for (int64_t d = 0; d < rank; ++d) {
    std::string n = std::to_string(d), D = literalInt(in.shape[d]);
    // Unsigned arithmetic: parameters that disagree with the result shape may overflow; the
    // clamp below then keeps the read inside the input.
    body << "{ kiln_i64 x = (kiln_i64)((kiln_u64)start" << n << " + (kiln_u64)c" << n << " * (kiln_u64)step" << n
         << ");\n"
         << "x = x < 0 ? 0 : (x > " << D << " - 1 ? " << D << " - 1 : x);\n"
         << "k += " << times("x", inStrides[d]) << "; }\n";
  }
  body << "out[j] = in[k];\n";
  kernel.prologue = prologue.str();
  kernel.body = body.str();
  kernel.count = out.numElements();
  addLoopKernel(emitted, kernel);
  return emitted;
}

//===-- Gathers -----------------------------------------------------------===//

StatusOr<EmittedKernels> emitGather(const OpDesc &op, const EmitContext &context) {
  if (Status s = expectArity(op, 2, 1); !s.isOk())
    return s;
  const TensorDesc &in = *op.operands[0], &indices = *op.operands[1];
  if (Status s = expectIndexType(op, indices, "indices"); !s.isOk())
    return s;
  int64_t rank = in.shape.size();
  if (!op.hasAttr("axis"))
    return op.error("the required attribute 'axis' is missing");
  int64_t axis = op.attrInt("axis", 0);
  if (axis < 0 || axis >= rank)
    return op.error("axis " + std::to_string(axis) + " must be in [0, " + std::to_string(rank) + ")");
  std::vector<int64_t> outShape(in.shape.begin(), in.shape.begin() + axis);
  outShape.insert(outShape.end(), indices.shape.begin(), indices.shape.end());
  outShape.insert(outShape.end(), in.shape.begin() + axis + 1, in.shape.end());
  if (Status s = expectResultShape(op, outShape); !s.isOk())
    return s;
  if (op.results[0].dtype != in.dtype)
    return op.error("result must have the input's element type");
  int64_t dim = in.shape[axis];
  auto index = indexOperand(op, indices, [&](size_t) { return std::pair<int64_t, int64_t>{dim, axis}; });
  if (!index.isOk())
    return index.status();

  // Result = [outer, Q, inner] reading input [outer, dim, inner]: rows of `inner` elements
  // are contiguous on both sides (embedding lookups move whole rows), so they move wide.
  int64_t bytes = elementBytes(in.dtype);
  int64_t inner = product(std::vector<int64_t>(in.shape.begin() + axis + 1, in.shape.end()));
  int64_t width = accessBytes(bytes, {inner});
  inner /= width / bytes;
  int64_t q = indices.numElements();
  std::string raw = rawType(width), sym = context.symbol;
  LoopKernel kernel;
  kernel.function = sym + "gather";
  kernel.params.push_back({"const " + raw + " *__restrict__ in", KernelArg::operand(0)});
  addParam(kernel, index.value().param());
  kernel.params.push_back({raw + " *__restrict__ out", KernelArg::result(0)});
  std::ostringstream body;
  body << "[[maybe_unused]] const kiln_i64 i = " << umod("j", inner) << ", n = " << umod(udiv("j", inner), q)
       << ", o = " << udiv("j", inner * q) << ";\n"
       << "const kiln_i64 idx = " << wrappedIndex(index.value(), sym, "n", dim) << ";\n"
       << "out[j] = idx < 0 ? " << zeroOf(width) << " : in[(o * " << literalInt(dim) << " + idx) * "
       << literalInt(inner) << " + i];\n";
  EmittedKernels emitted;
  emitted.source = index.value().globals(sym);
  kernel.body = body.str();
  kernel.count = product(outShape) / (width / bytes);
  addLoopKernel(emitted, kernel);
  return emitted;
}

StatusOr<EmittedKernels> emitGatherElements(const OpDesc &op, const EmitContext &context) {
  if (Status s = expectArity(op, 2, 1); !s.isOk())
    return s;
  const TensorDesc &in = *op.operands[0], &indices = *op.operands[1];
  if (Status s = expectIndexType(op, indices, "indices"); !s.isOk())
    return s;
  int64_t rank = in.shape.size();
  if (!op.hasAttr("axis"))
    return op.error("the required attribute 'axis' is missing");
  int64_t axis = op.attrInt("axis", 0);
  if (static_cast<int64_t>(indices.shape.size()) != rank || axis < 0 || axis >= rank)
    return op.error("indices must have the input's rank and axis (" + std::to_string(axis) + ") must be in [0, " +
                    std::to_string(rank) + ")");
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && indices.shape[d] > in.shape[d])
      return op.error("indices shape " + formatShape(indices.shape) + " exceeds the input shape " +
                      formatShape(in.shape) + " off axis " + std::to_string(axis));
  if (Status s = expectResultShape(op, indices.shape); !s.isOk())
    return s;
  if (op.results[0].dtype != in.dtype)
    return op.error("result must have the input's element type");
  int64_t dim = in.shape[axis];
  auto index = indexOperand(op, indices, [&](size_t) { return std::pair<int64_t, int64_t>{dim, axis}; });
  if (!index.isOk())
    return index.status();

  std::vector<int64_t> inStrides = rowMajorStrides(in.shape);
  std::string raw = rawType(in.dtype), sym = context.symbol;
  LoopKernel kernel;
  kernel.function = sym + "gather_elements";
  kernel.params.push_back({"const " + raw + " *__restrict__ in", KernelArg::operand(0)});
  addParam(kernel, index.value().param());
  kernel.params.push_back({raw + " *__restrict__ out", KernelArg::result(0)});
  std::ostringstream body;
  body << decodeCoords(indices.shape, "j", "c") << "const kiln_i64 idx = " << wrappedIndex(index.value(), sym, "j", dim)
       << ";\n"
       << "out[j] = idx < 0 ? (" << raw << ")0 : in[" << times("idx", inStrides[axis]);
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && indices.shape[d] != 1)
      body << " + " << times("c" + std::to_string(d), inStrides[d]);
  body << "];\n";
  EmittedKernels emitted;
  emitted.source = index.value().globals(sym);
  kernel.body = body.str();
  kernel.count = indices.numElements();
  addLoopKernel(emitted, kernel);
  return emitted;
}

StatusOr<EmittedKernels> emitGatherND(const OpDesc &op, const EmitContext &context) {
  if (Status s = expectArity(op, 2, 1); !s.isOk())
    return s;
  const TensorDesc &in = *op.operands[0], &indices = *op.operands[1];
  if (Status s = expectDType(op, indices, DType::I64, "indices"); !s.isOk())
    return s;
  int64_t rank = in.shape.size(), q = indices.shape.size();
  int64_t batchDims = op.attrInt("batch_dims", 0);
  if (q < 1 || batchDims < 0 || batchDims >= std::min(rank, q))
    return op.error("batch_dims (" + std::to_string(batchDims) + ") must be in [0, min(input rank " +
                    std::to_string(rank) + ", indices rank " + std::to_string(q) + "))");
  int64_t tuple = indices.shape[q - 1];
  if (batchDims + tuple > rank)
    return op.error("index tuples of " + std::to_string(tuple) + " entries address more axes than the input's " +
                    std::to_string(rank - batchDims) + " after the batch axes");
  for (int64_t d = 0; d < batchDims; ++d)
    if (indices.shape[d] != in.shape[d])
      return op.error("batch axis " + std::to_string(d) + " differs: input " + formatShape(in.shape) + ", indices " +
                      formatShape(indices.shape));
  std::vector<int64_t> outShape(indices.shape.begin(), indices.shape.end() - 1);
  outShape.insert(outShape.end(), in.shape.begin() + batchDims + tuple, in.shape.end());
  if (Status s = expectResultShape(op, outShape); !s.isOk())
    return s;
  if (op.results[0].dtype != in.dtype)
    return op.error("result must have the input's element type");
  auto index = indexOperand(op, indices, [&](size_t n) {
    int64_t axis = batchDims + static_cast<int64_t>(n) % tuple;
    return std::pair<int64_t, int64_t>{in.shape[axis], axis};
  });
  if (!index.isOk())
    return index.status();

  // Each index tuple selects a contiguous slice of `inner` elements: move it wide.
  int64_t bytes = elementBytes(in.dtype);
  int64_t inner = product(std::vector<int64_t>(in.shape.begin() + batchDims + tuple, in.shape.end()));
  int64_t width = accessBytes(bytes, {inner});
  inner /= width / bytes;
  int64_t tuplesPerBatch = product(std::vector<int64_t>(indices.shape.begin() + batchDims, indices.shape.end() - 1));
  std::vector<int64_t> addressed(in.shape.begin() + batchDims, in.shape.begin() + batchDims + tuple);
  std::vector<int64_t> strides = rowMajorStrides(addressed);
  std::string raw = rawType(width), sym = context.symbol;
  LoopKernel kernel;
  kernel.function = sym + "gather_nd";
  kernel.params.push_back({"const " + raw + " *__restrict__ in", KernelArg::operand(0)});
  addParam(kernel, index.value().param());
  kernel.params.push_back({raw + " *__restrict__ out", KernelArg::result(0)});
  std::ostringstream body;
  body << "[[maybe_unused]] const kiln_i64 i = " << umod("j", inner) << ", g = " << udiv("j", inner) << ";\n"
       << "kiln_i64 k = i;\nbool inRange = true;\n";
  if (batchDims > 0) // the batch of the tuple: its coordinates are the input's leading ones
    body << "k += " << times(udiv("g", tuplesPerBatch), product(addressed) * inner) << ";\n";
  for (int64_t m = 0; m < tuple; ++m) {
    std::string entry = "g * " + literalInt(tuple) + " + " + std::to_string(m);
    body << "{ const kiln_i64 x = " << wrappedIndex(index.value(), sym, entry, addressed[m]) << ";\n"
         << "inRange = inRange && x >= 0; k += " << times("x", strides[m] * inner) << "; }\n";
  }
  body << "out[j] = inRange ? in[k] : " << zeroOf(width) << ";\n";
  EmittedKernels emitted;
  emitted.source = index.value().globals(sym);
  kernel.body = body.str();
  kernel.count = product(outShape) / (width / bytes);
  addLoopKernel(emitted, kernel);
  return emitted;
}

//===-- Pad ---------------------------------------------------------------===//

StatusOr<EmittedKernels> emitPad(const OpDesc &op, const EmitContext &context) {
  if (Status s = expectArity(op, 3, 1); !s.isOk())
    return s;
  const TensorDesc &in = *op.operands[0], &padsDesc = *op.operands[1], &value = *op.operands[2];
  const TensorDesc &out = op.results[0];
  int64_t rank = in.shape.size();
  std::string mode = op.attrString("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap")
    return op.error("mode '" + mode + "' is not supported; use constant, reflect, edge or wrap");
  if (Status s = expectDType(op, padsDesc, DType::I64, "pads"); !s.isOk())
    return s;
  if (padsDesc.shape != std::vector<int64_t>{2 * rank})
    return op.error("pads must have shape [" + std::to_string(2 * rank) + "] (begins then ends of every axis), got " +
                    formatShape(padsDesc.shape));
  if (value.dtype != in.dtype || value.numElements() != 1 || out.dtype != in.dtype)
    return op.error("result and padding value must have the input's element type, the value one element");
  if (static_cast<int64_t>(out.shape.size()) != rank)
    return op.error("result must have the input's rank");

  IntOperand pads(padsDesc, 1, "pads");
  std::vector<int64_t> keptBegin(rank), keptSize(rank), padBegin(rank);
  if (pads.isConstant()) {
    // Negative pads crop first; the rest extends what is left (as the interpreter does).
    std::vector<int64_t> computed;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t begin = pads.values()[d], end = pads.values()[d + rank];
      computed.push_back(in.shape[d] + begin + end);
      keptBegin[d] = std::max<int64_t>(0, -begin);
      keptSize[d] = in.shape[d] + std::min<int64_t>(0, begin) + std::min<int64_t>(0, end);
      padBegin[d] = std::max<int64_t>(0, begin);
      if (computed.back() < 0)
        return op.error("pads crop axis " + std::to_string(d) + " below zero (" + std::to_string(computed.back()) +
                        ")");
    }
    if (Status s = expectResultShape(op, computed); !s.isOk())
      return s;
    for (int64_t d = 0; d < rank; ++d)
      if (keptSize[d] == 0 && mode != "constant" && out.numElements() > 0)
        return op.error("cannot pad an empty axis " + std::to_string(d) + " in " + mode + " mode");
  }

  std::string raw = rawType(in.dtype), sym = context.symbol;
  LoopKernel kernel;
  kernel.function = sym + "pad";
  kernel.params.push_back({"const " + raw + " *__restrict__ in", KernelArg::operand(0)});
  addParam(kernel, pads.param());
  std::ostringstream prologue, body;
  // The fill value matters in constant mode only (the other modes copy input elements).
  if (mode == "constant" && value.isConstant()) {
    prologue << "const " << raw << " fill = "
             << rawLiteral(in.dtype, value.ints ? value.ints->front() : 0, value.floats ? value.floats->front() : 0.0)
             << ";\n";
  } else if (mode == "constant") {
    kernel.params.push_back({"const " + raw + " *__restrict__ value", KernelArg::operand(2)});
    prologue << "const " << raw << " fill = value[0];\n";
  }
  kernel.params.push_back({raw + " *__restrict__ out", KernelArg::result(0)});
  if (!pads.isConstant()) {
    // Computed pads: the same crop-then-extend, with the kept part clamped into the input so
    // that pads disagreeing with the static result shape cannot read outside it.
    for (int64_t d = 0; d < rank; ++d) {
      std::string n = std::to_string(d), D = literalInt(in.shape[d]);
      prologue << "const kiln_i64 pb" << n << " = " << pads.at(sym, std::to_string(d)) << ", pe" << n << " = "
               << pads.at(sym, std::to_string(d + rank)) << ";\n"
               << "const kiln_i64 kb" << n << " = pb" << n << " >= 0 ? 0 : (-pb" << n << " > " << D << " ? " << D
               << " : -pb" << n << ");\n"
               << "const kiln_i64 pad" << n << " = pb" << n << " > 0 ? pb" << n << " : 0;\n"
               << "kiln_i64 n" << n << " = " << D << " + (pb" << n << " < 0 ? pb" << n << " : 0) + (pe" << n
               << " < 0 ? pe" << n << " : 0);\n"
               << "n" << n << " = n" << n << " < 0 ? 0 : (n" << n << " > " << D << " - kb" << n << " ? " << D << " - kb"
               << n << " : n" << n << ");\n";
    }
  }
  std::vector<int64_t> inStrides = rowMajorStrides(in.shape);
  body << decodeCoords(out.shape, "j", "c") << "kiln_i64 k = 0;\n";
  if (mode == "constant")
    body << "bool inside = true;\n";
  else if (!pads.isConstant())
    body << "bool empty = false;\n";
  for (int64_t d = 0; d < rank; ++d) {
    std::string n = std::to_string(d), c = "c" + n;
    std::string kb = pads.isConstant() ? literalInt(keptBegin[d]) : "kb" + n;
    std::string size = pads.isConstant() ? literalInt(keptSize[d]) : "n" + n;
    std::string pb = pads.isConstant() ? literalInt(padBegin[d]) : "pad" + n;
    if (pads.isConstant() && padBegin[d] == 0 && out.shape[d] <= keptSize[d]) {
      body << "k += " << times("(" + c + " + " + kb + ")", inStrides[d]) << ";\n"; // only cropped
      continue;
    }
    body << "{ kiln_i64 t = " << c << " - " << pb << ";\n";
    if (mode == "constant") {
      body << "inside = inside && t >= 0 && t < " << size << ";\n";
    } else {
      std::string fold = mode == "edge"   ? "t < 0 ? 0 : " + size + " - 1"
                         : mode == "wrap" ? "kiln_dm_pad_wrap(t, " + size + ")"
                                          : "kiln_dm_pad_reflect(t, " + size + ")";
      if (!pads.isConstant())
        body << "empty = empty || " << size << " == 0;\n";
      body << "if (" << size << " > 0 && (t < 0 || t >= " << size << ")) t = " << fold << ";\n";
    }
    body << "k += " << times("(" + kb + " + t)", inStrides[d]) << "; }\n";
  }
  if (mode == "constant")
    body << "out[j] = inside ? in[k] : fill;\n";
  else if (!pads.isConstant())
    body << "out[j] = empty ? (" << raw << ")0 : in[k];\n";
  else
    body << "out[j] = in[k];\n";
  EmittedKernels emitted;
  kernel.prologue = prologue.str();
  kernel.body = body.str();
  kernel.count = out.numElements();
  addLoopKernel(emitted, kernel);
  return emitted;
}

} // namespace kiln::codegen::datamovement
