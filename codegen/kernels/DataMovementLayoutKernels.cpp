//===- DataMovementLayoutKernels.cpp - transpose, concat, split, expand, ... -===//
//
// The ops whose index map depends on shapes and attributes only: transpose, concat, split,
// expand, tile, depth_to_space and space_to_depth. Before writing the map, axes are
// simplified where that is free (size-1 axes dropped, axes that stay neighbours merged), so
// the kernel divides by fewer constants and the innermost run can move in wide accesses.
//
//===----------------------------------------------------------------------===//

#include "codegen/kernels/DataMovementSource.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <sstream>

namespace kiln::codegen::datamovement {
namespace {

std::string dtypeText(DType type) { return std::string(plan::dtypeName(type)); }

/// A flat copy of `count` elements of `bytes` bytes from operand 0 to result 0.
EmittedKernels flatCopy(const std::string &function, int64_t count, int64_t bytes) {
  int64_t width = accessBytes(bytes, {count});
  std::string raw = rawType(width);
  LoopKernel kernel;
  kernel.function = function;
  kernel.params = {{"const " + raw + " *__restrict__ in", KernelArg::operand(0)},
                   {raw + " *__restrict__ out", KernelArg::result(0)}};
  kernel.body = "out[j] = in[j];\n";
  kernel.count = count * bytes / width;
  EmittedKernels emitted;
  addLoopKernel(emitted, kernel);
  return emitted;
}

/// Reads the non-negative axis attribute of concat/split and checks it against `rank`.
StatusOr<int64_t> axisAttr(const OpDesc &op, int64_t rank) {
  if (!op.hasAttr("axis"))
    return op.error("the required attribute 'axis' is missing");
  int64_t axis = op.attrInt("axis", 0);
  if (axis < 0 || axis >= rank)
    return op.error("axis " + std::to_string(axis) + " must be in [0, " + std::to_string(rank) +
                    ") (import normalizes negative axes)");
  return axis;
}

/// Writes `leaf(k)` for the band of `offsets` (ascending starts of bands 0..n-1) that holds
/// `col`, as a balanced tree of comparisons: log2(n) branches however many operands there are.
void emitBandSelect(std::ostringstream &os, const std::vector<size_t> &bands, const std::vector<int64_t> &offsets,
                    size_t lo, size_t hi, const std::function<std::string(size_t)> &leaf) {
  if (lo == hi) {
    os << leaf(bands[lo]);
    return;
  }
  size_t mid = (lo + hi + 1) / 2;
  os << "if (col < " << literalInt(offsets[bands[mid]]) << ") {\n";
  emitBandSelect(os, bands, offsets, lo, mid - 1, leaf);
  os << "} else {\n";
  emitBandSelect(os, bands, offsets, mid, hi, leaf);
  os << "}\n";
}

/// Concat and split view every tensor as [outer, row]: the bands of the axis are contiguous
/// runs of `rows[k]` elements inside a row of sum(rows) elements.
struct BandView {
  int64_t outer = 1;
  std::vector<int64_t> rows;    // per band, in access units
  std::vector<int64_t> offsets; // start of each band in the joined row, in access units
  int64_t joined = 0;           // the joined row, in access units
  int64_t width = 1;            // bytes per access
};

BandView bandView(const std::vector<int64_t> &joinedShape, const std::vector<int64_t> &axisSizes, int64_t axis,
                  int64_t bytes) {
  BandView view;
  int64_t inner = 1;
  for (size_t d = 0; d < joinedShape.size(); ++d) {
    if (static_cast<int64_t>(d) < axis)
      view.outer *= joinedShape[d];
    else if (static_cast<int64_t>(d) > axis)
      inner *= joinedShape[d];
  }
  for (int64_t size : axisSizes)
    view.rows.push_back(size * inner);
  view.width = accessBytes(bytes, view.rows);
  int64_t perAccess = view.width / bytes;
  for (int64_t &r : view.rows) {
    r /= perAccess;
    view.offsets.push_back(view.joined);
    view.joined += r;
  }
  return view;
}

std::string rowColumn(const BandView &view) {
  if (view.outer == 1)
    return "const kiln_i64 row = 0, col = j;\n";
  return "const kiln_i64 row = " + udiv("j", view.joined) + ", col = " + umod("j", view.joined) + ";\n";
}

//===-- Transpose ---------------------------------------------------------===//

/// A transpose with size-1 axes dropped and axes that stay neighbours merged: output axis i is
/// input axis perm[i] of `shape`.
struct SimpleTranspose {
  std::vector<int64_t> shape;
  std::vector<int64_t> perm;
};

SimpleTranspose simplifyTranspose(const std::vector<int64_t> &shape, const std::vector<int64_t> &perm) {
  // Size-1 axes move nothing.
  std::vector<int64_t> kept;
  for (int64_t p : perm)
    if (shape[p] != 1)
      kept.push_back(p);
  // Runs of output axes that are consecutive input axes move as one.
  std::vector<std::vector<int64_t>> groups;
  for (int64_t p : kept) {
    if (!groups.empty() && groups.back().back() + 1 == p)
      groups.back().push_back(p);
    else
      groups.push_back({p});
  }
  std::vector<size_t> byInput(groups.size());
  std::iota(byInput.begin(), byInput.end(), 0);
  std::sort(byInput.begin(), byInput.end(), [&](size_t a, size_t b) { return groups[a][0] < groups[b][0]; });
  SimpleTranspose simple;
  simple.perm.resize(groups.size());
  for (size_t rank = 0; rank < byInput.size(); ++rank) {
    int64_t size = 1;
    for (int64_t axis : groups[byInput[rank]])
      size *= shape[axis];
    simple.shape.push_back(size);
    simple.perm[byInput[rank]] = static_cast<int64_t>(rank);
  }
  return simple;
}

/// Output element j reads input element sum(coord_i * inStride[perm[i]]).
EmittedKernels transposeIndexMap(const std::string &function, const SimpleTranspose &t, int64_t bytes) {
  std::vector<int64_t> shape = t.shape;
  // The innermost axis stays innermost: rows are contiguous on both sides, move them wide.
  int64_t width = bytes;
  if (t.perm.back() == static_cast<int64_t>(shape.size()) - 1) {
    width = accessBytes(bytes, {shape.back()});
    shape.back() /= width / bytes;
  }
  std::vector<int64_t> inStrides = rowMajorStrides(shape), outShape;
  for (int64_t p : t.perm)
    outShape.push_back(shape[p]);
  std::string raw = rawType(width);
  LoopKernel kernel;
  kernel.function = function;
  kernel.params = {{"const " + raw + " *__restrict__ in", KernelArg::operand(0)},
                   {raw + " *__restrict__ out", KernelArg::result(0)}};
  std::ostringstream body;
  body << decodeCoords(outShape, "j", "o") << "out[j] = in[";
  for (size_t i = 0; i < t.perm.size(); ++i)
    body << (i ? " + " : "") << "o" << i << " * " << literalInt(inStrides[t.perm[i]]);
  body << "];\n";
  kernel.body = body.str();
  kernel.count = product(outShape);
  EmittedKernels emitted;
  addLoopKernel(emitted, kernel);
  return emitted;
}

/// The innermost axis moves: 32x32 tiles through shared memory, so that both the reads (along
/// the input's innermost axis) and the writes (along the output's) are coalesced.
EmittedKernels transposeTiled(const std::string &function, const SimpleTranspose &t, int64_t bytes) {
  int64_t rank = t.shape.size();
  int64_t a = t.perm.back(), b = rank - 1; // a: the output's innermost axis; b: the input's
  std::vector<int64_t> inStrides = rowMajorStrides(t.shape), outShape;
  for (int64_t p : t.perm)
    outShape.push_back(t.shape[p]);
  std::vector<int64_t> outStrides = rowMajorStrides(outShape), outStrideOf(rank);
  for (int64_t i = 0; i < rank; ++i)
    outStrideOf[t.perm[i]] = outStrides[i];
  std::vector<int64_t> others, restShape;
  for (int64_t d = 0; d < rank; ++d)
    if (d != a && d != b) {
      others.push_back(d);
      restShape.push_back(t.shape[d]);
    }
  int64_t sizeA = t.shape[a], sizeB = t.shape[b];
  int64_t tilesA = (sizeA + 31) / 32, tilesB = (sizeB + 31) / 32;
  int64_t total = tilesA * tilesB * product(restShape);
  std::string raw = rawType(bytes);

  std::ostringstream os;
  os << "extern \"C\" __global__ void __launch_bounds__(256) " << function << "(const " << raw << " *__restrict__ in, "
     << raw << " *__restrict__ out) {\n"
     << "__shared__ " << raw << " tile[32][33]; // +1 column: no bank conflicts on the transposed read\n"
     << "for (kiln_i64 t = blockIdx.x; t < " << literalInt(total) << "; t += gridDim.x) {\n"
     << "const kiln_i64 b0 = " << umod("t", tilesB) << " * 32;\n"
     << "const kiln_i64 a0 = " << umod(udiv("t", tilesB), tilesA) << " * 32;\n"
     << "[[maybe_unused]] const kiln_i64 rest = " << udiv("t", tilesA * tilesB) << ";\n"
     << decodeCoords(restShape, "rest", "r");
  std::string inBase = "0", outBase = "0";
  for (size_t m = 0; m < others.size(); ++m) {
    inBase += " + r" + std::to_string(m) + " * " + literalInt(inStrides[others[m]]);
    outBase += " + r" + std::to_string(m) + " * " + literalInt(outStrideOf[others[m]]);
  }
  os << "const kiln_i64 inBase = " << inBase << ", outBase = " << outBase << ";\n"
     << "for (int y = threadIdx.y; y < 32; y += 8) {\n"
     << "const kiln_i64 ai = a0 + y, bi = b0 + threadIdx.x;\n"
     << "if (ai < " << literalInt(sizeA) << " && bi < " << literalInt(sizeB)
     << ") tile[y][threadIdx.x] = in[inBase + ai * " << literalInt(inStrides[a]) << " + bi];\n"
     << "}\n__syncthreads();\n"
     << "for (int y = threadIdx.y; y < 32; y += 8) {\n"
     << "const kiln_i64 bi = b0 + y, ai = a0 + threadIdx.x;\n"
     << "if (ai < " << literalInt(sizeA) << " && bi < " << literalInt(sizeB) << ") out[outBase + bi * "
     << literalInt(outStrideOf[b]) << " + ai] = tile[threadIdx.x][y];\n"
     << "}\n__syncthreads();\n"
     << "}\n}\n";

  EmittedKernels emitted;
  emitted.source = os.str();
  KernelLaunch launch;
  launch.function = function;
  launch.grid = {static_cast<uint32_t>(std::clamp<int64_t>(total, 1, 16384)), 1, 1};
  launch.block = {32, 8, 1};
  launch.args = {KernelArg::operand(0), KernelArg::result(0)};
  emitted.launches.push_back(launch);
  return emitted;
}

} // namespace

StatusOr<EmittedKernels> emitTranspose(const OpDesc &op, const EmitContext &context) {
  if (Status s = expectArity(op, 1, 1); !s.isOk())
    return s;
  const TensorDesc &in = *op.operands[0];
  int64_t rank = in.shape.size();
  if (!op.hasAttr("perm"))
    return op.error("the required attribute 'perm' is missing");
  std::vector<int64_t> perm = op.attrInts("perm");
  std::vector<int64_t> sorted = perm, identity(rank);
  std::sort(sorted.begin(), sorted.end());
  std::iota(identity.begin(), identity.end(), 0);
  if (sorted != identity)
    return op.error("perm must be a permutation of [0, " + std::to_string(rank) + ")");
  std::vector<int64_t> outShape;
  for (int64_t p : perm)
    outShape.push_back(in.shape[p]);
  if (Status s = expectResultShape(op, outShape); !s.isOk())
    return s;
  if (op.results[0].dtype != in.dtype)
    return op.error("result must have the input's element type");

  std::string function = context.symbol + "transpose";
  int64_t bytes = elementBytes(in.dtype);
  SimpleTranspose simple = simplifyTranspose(in.shape, perm);
  bool identityPerm = true;
  for (size_t i = 0; i < simple.perm.size(); ++i)
    identityPerm = identityPerm && simple.perm[i] == static_cast<int64_t>(i);
  if (in.numElements() == 0 || identityPerm)
    return flatCopy(function, in.numElements(), bytes); // the order of the bytes does not change
  int64_t rankS = simple.shape.size();
  bool innermostMoves = simple.perm.back() != rankS - 1;
  // Tiles pay off when both innermost axes fill a good part of a 32-wide tile; otherwise the
  // plain map is coalesced on the writes and near-coalesced on the reads.
  if (innermostMoves && simple.shape[simple.perm.back()] >= 16 && simple.shape[rankS - 1] >= 16)
    return transposeTiled(function, simple, bytes);
  return transposeIndexMap(function, simple, bytes);
}

//===-- Concat and split --------------------------------------------------===//

StatusOr<EmittedKernels> emitConcat(const OpDesc &op, const EmitContext &context) {
  if (op.operands.empty() || op.results.size() != 1)
    return op.error("expected at least one operand and one result");
  for (size_t k = 0; k < op.operands.size(); ++k)
    if (!op.operands[k])
      return op.error("operand " + std::to_string(k) + " is missing");
  const TensorDesc &first = *op.operands[0];
  int64_t rank = first.shape.size();
  auto axis = axisAttr(op, rank);
  if (!axis.isOk())
    return axis.status();
  std::vector<int64_t> outShape = first.shape, axisSizes;
  outShape[axis.value()] = 0;
  for (size_t k = 0; k < op.operands.size(); ++k) {
    const TensorDesc &in = *op.operands[k];
    bool fits = in.dtype == first.dtype && static_cast<int64_t>(in.shape.size()) == rank;
    for (int64_t d = 0; fits && d < rank; ++d)
      fits = d == axis.value() || in.shape[d] == first.shape[d];
    if (!fits)
      return op.error("operand " + std::to_string(k) + " (" + formatShape(in.shape) + " " + dtypeText(in.dtype) +
                      ") must match operand 0 (" + formatShape(first.shape) + " " + dtypeText(first.dtype) +
                      ") in element type and off axis " + std::to_string(axis.value()));
    axisSizes.push_back(in.shape[axis.value()]);
    outShape[axis.value()] += in.shape[axis.value()];
  }
  if (Status s = expectResultShape(op, outShape); !s.isOk())
    return s;
  if (op.results[0].dtype != first.dtype)
    return op.error("result must have the operands' element type");

  // Each output element reads the band of the input that holds it.
  BandView view = bandView(outShape, axisSizes, axis.value(), elementBytes(first.dtype));
  std::string raw = rawType(view.width);
  LoopKernel kernel;
  kernel.function = context.symbol + "concat";
  std::vector<size_t> bands;
  for (size_t k = 0; k < op.operands.size(); ++k) {
    kernel.params.push_back(
        {"const " + raw + " *__restrict__ in" + std::to_string(k), KernelArg::operand(static_cast<uint32_t>(k))});
    if (view.rows[k] > 0)
      bands.push_back(k);
  }
  kernel.params.push_back({raw + " *__restrict__ out", KernelArg::result(0)});
  std::ostringstream body;
  body << rowColumn(view);
  if (!bands.empty())
    emitBandSelect(body, bands, view.offsets, 0, bands.size() - 1, [&](size_t k) {
      return "out[j] = in" + std::to_string(k) + "[row * " + literalInt(view.rows[k]) + " + col - " +
             literalInt(view.offsets[k]) + "];\n";
    });
  kernel.body = body.str();
  kernel.count = view.outer * view.joined;
  EmittedKernels emitted;
  addLoopKernel(emitted, kernel);
  return emitted;
}

StatusOr<EmittedKernels> emitSplit(const OpDesc &op, const EmitContext &context) {
  if (op.operands.size() != 1 || !op.operands[0] || op.results.empty())
    return op.error("expected one operand and at least one result");
  const TensorDesc &in = *op.operands[0];
  int64_t rank = in.shape.size();
  auto axis = axisAttr(op, rank);
  if (!axis.isOk())
    return axis.status();
  std::vector<int64_t> axisSizes;
  int64_t total = 0;
  for (size_t r = 0; r < op.results.size(); ++r) {
    const TensorDesc &out = op.results[r];
    bool fits = out.dtype == in.dtype && static_cast<int64_t>(out.shape.size()) == rank;
    for (int64_t d = 0; fits && d < rank; ++d)
      fits = d == axis.value() || out.shape[d] == in.shape[d];
    if (!fits)
      return op.error("result " + std::to_string(r) + " (" + formatShape(out.shape) + " " + dtypeText(out.dtype) +
                      ") must match the input (" + formatShape(in.shape) + " " + dtypeText(in.dtype) +
                      ") in element type and off axis " + std::to_string(axis.value()));
    axisSizes.push_back(out.shape[axis.value()]);
    total += out.shape[axis.value()];
  }
  if (total != in.shape[axis.value()])
    return op.error("split sizes add up to " + std::to_string(total) + ", the axis has " +
                    std::to_string(in.shape[axis.value()]));

  // One pass over the input (coalesced reads); each element goes to the result that holds its band.
  BandView view = bandView(in.shape, axisSizes, axis.value(), elementBytes(in.dtype));
  std::string raw = rawType(view.width);
  LoopKernel kernel;
  kernel.function = context.symbol + "split";
  kernel.params.push_back({"const " + raw + " *__restrict__ in", KernelArg::operand(0)});
  std::vector<size_t> bands;
  for (size_t r = 0; r < op.results.size(); ++r) {
    kernel.params.push_back(
        {raw + " *__restrict__ out" + std::to_string(r), KernelArg::result(static_cast<uint32_t>(r))});
    if (view.rows[r] > 0)
      bands.push_back(r);
  }
  std::ostringstream body;
  body << rowColumn(view);
  if (!bands.empty())
    emitBandSelect(body, bands, view.offsets, 0, bands.size() - 1, [&](size_t r) {
      return "out" + std::to_string(r) + "[row * " + literalInt(view.rows[r]) + " + col - " +
             literalInt(view.offsets[r]) + "] = in[j];\n";
    });
  kernel.body = body.str();
  kernel.count = view.outer * view.joined;
  EmittedKernels emitted;
  addLoopKernel(emitted, kernel);
  return emitted;
}

//===-- Expand and tile ---------------------------------------------------===//

StatusOr<EmittedKernels> emitExpand(const OpDesc &op, const EmitContext &context) {
  if (Status s = expectArity(op, 1, 1); !s.isOk())
    return s;
  const TensorDesc &in = *op.operands[0];
  const TensorDesc &out = op.results[0];
  if (out.dtype != in.dtype)
    return op.error("result must have the input's element type");
  bool fits = in.shape.size() <= out.shape.size();
  size_t lead = fits ? out.shape.size() - in.shape.size() : 0;
  for (size_t d = 0; fits && d < in.shape.size(); ++d)
    fits = in.shape[d] == out.shape[d + lead] || in.shape[d] == 1;
  if (!fits)
    return op.error("input " + formatShape(in.shape) + " does not broadcast to the result " + formatShape(out.shape));

  // Align the ranks, drop axes of size 1 in the result and merge neighbouring axes that are
  // both copied or both broadcast: fewer divisions, and a copied innermost run moves wide.
  std::vector<int64_t> inShape, outShape;
  std::vector<bool> copied;
  for (size_t d = 0; d < out.shape.size(); ++d) {
    int64_t i = d < lead ? 1 : in.shape[d - lead], o = out.shape[d];
    if (o == 1)
      continue;
    bool copy = i == o;
    if (!copied.empty() && copied.back() == copy) {
      inShape.back() *= i;
      outShape.back() *= o;
    } else {
      inShape.push_back(i);
      outShape.push_back(o);
      copied.push_back(copy);
    }
  }
  int64_t bytes = elementBytes(in.dtype), width = bytes;
  if (!copied.empty() && copied.back()) {
    width = accessBytes(bytes, {outShape.back()});
    inShape.back() /= width / bytes;
    outShape.back() /= width / bytes;
  }
  std::string raw = rawType(width);
  LoopKernel kernel;
  kernel.function = context.symbol + "expand";
  kernel.params = {{"const " + raw + " *__restrict__ in", KernelArg::operand(0)},
                   {raw + " *__restrict__ out", KernelArg::result(0)}};
  kernel.body = "out[j] = in[" + broadcastOffset(inShape, outShape, "j") + "];\n";
  kernel.count = product(outShape);
  EmittedKernels emitted;
  addLoopKernel(emitted, kernel);
  return emitted;
}

StatusOr<EmittedKernels> emitTile(const OpDesc &op, const EmitContext &context) {
  if (Status s = expectArity(op, 1, 1); !s.isOk())
    return s;
  const TensorDesc &in = *op.operands[0];
  const TensorDesc &out = op.results[0];
  if (out.dtype != in.dtype || out.shape.size() != in.shape.size())
    return op.error("result must have the input's element type and rank");
  for (size_t d = 0; d < in.shape.size(); ++d)
    if ((in.shape[d] == 0 && out.shape[d] != 0) || (in.shape[d] != 0 && out.shape[d] % in.shape[d] != 0))
      return op.error("result axis " + std::to_string(d) + " (" + std::to_string(out.shape[d]) +
                      ") is not a whole multiple of the input's " + std::to_string(in.shape[d]));
  std::vector<int64_t> inShape = in.shape, outShape = out.shape;
  int64_t bytes = elementBytes(in.dtype), width = bytes;
  // An innermost axis that is not repeated is a contiguous run on both sides: move it wide.
  if (!inShape.empty() && inShape.back() == outShape.back() && inShape.back() > 0) {
    width = accessBytes(bytes, {inShape.back()});
    inShape.back() /= width / bytes;
    outShape.back() /= width / bytes;
  }
  std::vector<int64_t> inStrides = rowMajorStrides(inShape);
  std::string raw = rawType(width);
  LoopKernel kernel;
  kernel.function = context.symbol + "tile";
  kernel.params = {{"const " + raw + " *__restrict__ in", KernelArg::operand(0)},
                   {raw + " *__restrict__ out", KernelArg::result(0)}};
  std::ostringstream body;
  body << decodeCoords(outShape, "j", "c") << "out[j] = in[0";
  for (size_t d = 0; d < inShape.size(); ++d) {
    if (inShape[d] == 1)
      continue; // every repeat reads coordinate 0
    std::string coord = "c" + std::to_string(d);
    if (inShape[d] != outShape[d])
      coord = umod(coord, inShape[d]);
    body << " + " << coord << " * " << literalInt(inStrides[d]);
  }
  body << "];\n";
  kernel.body = body.str();
  kernel.count = product(outShape);
  EmittedKernels emitted;
  addLoopKernel(emitted, kernel);
  return emitted;
}

//===-- Depth/space rearrangements ----------------------------------------===//

namespace {
StatusOr<int64_t> blocksizeAttr(const OpDesc &op, const TensorDesc &in) {
  if (in.shape.size() != 4)
    return op.error("input must be 4-d [N, C, H, W], got " + formatShape(in.shape));
  if (!op.hasAttr("blocksize"))
    return op.error("the required attribute 'blocksize' is missing");
  int64_t b = op.attrInt("blocksize", 0);
  if (b <= 0)
    return op.error("blocksize must be positive, got " + std::to_string(b));
  if (op.results[0].dtype != in.dtype)
    return op.error("result must have the input's element type");
  return b;
}

/// A gather kernel for result 0 whose source offset, given coordinates c0..c3 of the result, is `source`.
EmittedKernels rearrange(const OpDesc &op, const std::string &function, const std::string &source) {
  std::string raw = rawType(op.results[0].dtype);
  LoopKernel kernel;
  kernel.function = function;
  kernel.params = {{"const " + raw + " *__restrict__ in", KernelArg::operand(0)},
                   {raw + " *__restrict__ out", KernelArg::result(0)}};
  kernel.body = decodeCoords(op.results[0].shape, "j", "c") + "out[j] = in[" + source + "];\n";
  kernel.count = op.results[0].numElements();
  EmittedKernels emitted;
  addLoopKernel(emitted, kernel);
  return emitted;
}
} // namespace

StatusOr<EmittedKernels> emitDepthToSpace(const OpDesc &op, const EmitContext &context) {
  if (Status s = expectArity(op, 1, 1); !s.isOk())
    return s;
  const TensorDesc &in = *op.operands[0];
  auto blocksize = blocksizeAttr(op, in);
  if (!blocksize.isOk())
    return blocksize.status();
  int64_t b = blocksize.value();
  std::string mode = op.attrString("mode", "DCR");
  if (mode != "DCR" && mode != "CRD")
    return op.error("mode '" + mode + "' is not supported; use DCR or CRD");
  if (in.shape[1] % (b * b) != 0)
    return op.error("channels (" + std::to_string(in.shape[1]) + ") must be a multiple of blocksize^2 (" +
                    std::to_string(b * b) + ")");
  int64_t channels = in.shape[1] / (b * b);
  if (Status s = expectResultShape(op, {in.shape[0], channels, in.shape[2] * b, in.shape[3] * b}); !s.isOk())
    return s;
  std::vector<int64_t> st = rowMajorStrides(in.shape);
  std::string B = literalInt(b);
  // out[n, c, h*b + i, w*b + j] = in[n, (i*b + j)*C' + c, h, w] (DCR)
  //                             = in[n, c*b*b + i*b + j, h, w]   (CRD).
  std::string bi = umod("c2", b), bj = umod("c3", b);
  std::string channel = mode == "CRD" ? "(c1 * " + literalInt(b * b) + " + " + bi + " * " + B + " + " + bj + ")"
                                      : "((" + bi + " * " + B + " + " + bj + ") * " + literalInt(channels) + " + c1)";
  std::string source = "c0 * " + literalInt(st[0]) + " + " + channel + " * " + literalInt(st[1]) + " + " +
                       udiv("c2", b) + " * " + literalInt(st[2]) + " + " + udiv("c3", b);
  return rearrange(op, context.symbol + "depth_to_space", source);
}

StatusOr<EmittedKernels> emitSpaceToDepth(const OpDesc &op, const EmitContext &context) {
  if (Status s = expectArity(op, 1, 1); !s.isOk())
    return s;
  const TensorDesc &in = *op.operands[0];
  auto blocksize = blocksizeAttr(op, in);
  if (!blocksize.isOk())
    return blocksize.status();
  int64_t b = blocksize.value();
  if (in.shape[2] % b != 0 || in.shape[3] % b != 0)
    return op.error("height and width (" + std::to_string(in.shape[2]) + ", " + std::to_string(in.shape[3]) +
                    ") must be multiples of blocksize " + std::to_string(b));
  int64_t channels = in.shape[1];
  if (Status s = expectResultShape(op, {in.shape[0], channels * b * b, in.shape[2] / b, in.shape[3] / b}); !s.isOk())
    return s;
  std::vector<int64_t> st = rowMajorStrides(in.shape);
  std::string B = literalInt(b);
  // out[n, (i*b + j)*C + c, h, w] = in[n, c, h*b + i, w*b + j].
  std::string block = udiv("c1", channels);
  std::string source = "c0 * " + literalInt(st[0]) + " + " + umod("c1", channels) + " * " + literalInt(st[1]) +
                       " + (c2 * " + B + " + " + udiv(block, b) + ") * " + literalInt(st[2]) + " + c3 * " + B + " + " +
                       umod(block, b);
  return rearrange(op, context.symbol + "space_to_depth", source);
}

} // namespace kiln::codegen::datamovement
