//===- AttentionChecks.cpp - what an attention step's fields mean together -===//
//
// An attention operand is a strided view (offset and four strides, in elements) of its buffer.
// The checks below make sure that every element a view names lies inside its buffer (so cuDNN
// never reads or writes past it), that the views satisfy what cuDNN's flash attention needs
// (which codegen must know to decide whether to fuse: these messages say what to keep unfused),
// and that the output is a proper tensor: no two of its elements at one address, and no byte
// shared with an input.
//
//===----------------------------------------------------------------------===//

#include "runtime/plan/AttentionChecks.h"

#include "runtime/plan/FieldChecks.h"

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>

namespace kiln::plan::detail {
namespace {

/// cuDNN's flash attention (fp16/bf16, Hopper): head dims multiples of 8 up to 256.
constexpr int64_t kHeadDimMultiple = 8;
constexpr int64_t kMaxHeadDim = 256;
/// Q, K, V and O move through 16-byte vector loads and TMA: every row start must be aligned.
constexpr int64_t kVectorBytes = 16;

/// One operand: where it lives and how it is laid out.
struct View {
  std::string role; // "q", "mask", ...
  uint32_t buffer = 0;
  int64_t offset = 0;
  const std::vector<int64_t> *strides = nullptr;
  std::array<int64_t, 4> dims{};
  // Set by extent(): the byte range the view spans inside its memory space.
  uint64_t begin = 0, end = 0;
};

std::string dimsString(const std::array<int64_t, 4> &dims) {
  return shapeString(std::span<const int64_t>(dims.data(), dims.size()));
}

class AttentionChecker {
public:
  AttentionChecker(const Plan &plan, const std::string &where, const AttentionStep &a)
      : plan_(plan), where_(where), a_(a) {}

  std::optional<std::string> run() {
    if (check())
      return std::nullopt;
    return error_;
  }

private:
  bool check() {
    if (!checkSizes() || !checkTypes())
      return false;
    if (plan_.buffers[a_.o].space != MemorySpace::Arena)
      return fail("writes o into " + bufferLabel(a_.o) + ", which is in the read-only weights");
    std::array<int64_t, 4> qDims = {a_.batch, a_.heads, a_.seqQ, a_.headDim};
    std::array<int64_t, 4> kDims = {a_.batch, a_.heads, a_.seqKv, a_.headDim};
    std::array<int64_t, 4> vDims = {a_.batch, a_.heads, a_.seqKv, a_.headDimV};
    std::array<int64_t, 4> oDims = {a_.batch, a_.heads, a_.seqQ, a_.headDimV};
    std::vector<View> views = {{"q", a_.q, a_.qOffset, &a_.qStrides, qDims},
                               {"k", a_.k, a_.kOffset, &a_.kStrides, kDims},
                               {"v", a_.v, a_.vOffset, &a_.vStrides, vDims},
                               {"o", a_.o, a_.oOffset, &a_.oStrides, oDims}};
    if (a_.mask)
      views.push_back({"mask", *a_.mask, a_.maskOffset, &a_.maskStrides, {a_.batch, a_.heads, a_.seqQ, a_.seqKv}});
    else if (!a_.maskStrides.empty() || a_.maskOffset != 0)
      return fail("maskStrides " + shapeString(a_.maskStrides) + " and maskOffset " + std::to_string(a_.maskOffset) +
                  " are set but there is no mask");
    for (View &view : views)
      if (!checkLayout(view) || !extent(view))
        return false;
    const View &o = views[3];
    if (!outputIsInjective(o))
      return false;
    for (const View &input : views)
      if (&input != &o && overlaps(input, o))
        return fail("o (" + bufferLabel(o.buffer) + ") overlaps " + input.role + " (" + bufferLabel(input.buffer) +
                    "): attention cannot run in place; give o its own arena range");
    return true;
  }

  bool fail(const std::string &message) {
    error_ = where_ + ": " + message;
    return false;
  }

  std::string bufferLabel(uint32_t index) const {
    return "buffer " + std::to_string(index) + " '" + plan_.buffers[index].name + "'";
  }

  DType typeOf(uint32_t index) const { return plan_.buffers[index].dtype; }

  bool checkSizes() {
    if (a_.batch < 1 || a_.heads < 1 || a_.seqQ < 1 || a_.seqKv < 1 || a_.headDim < 1 || a_.headDimV < 1)
      return fail("batch, heads, seqQ, seqKv, headDim, headDimV (" + std::to_string(a_.batch) + ", " +
                  std::to_string(a_.heads) + ", " + std::to_string(a_.seqQ) + ", " + std::to_string(a_.seqKv) + ", " +
                  std::to_string(a_.headDim) + ", " + std::to_string(a_.headDimV) + ") must all be at least 1");
    for (int64_t d : {a_.headDim, a_.headDimV})
      if (d % kHeadDimMultiple != 0 || d > kMaxHeadDim)
        return fail("head dims " + std::to_string(a_.headDim) + " (q, k) and " + std::to_string(a_.headDimV) +
                    " (v, o) must be multiples of " + std::to_string(kHeadDimMultiple) + " up to " +
                    std::to_string(kMaxHeadDim) +
                    " (cuDNN's flash attention); codegen must keep the unfused path "
                    "for other head sizes");
    if (!std::isfinite(a_.scale))
      return fail("scale must be finite");
    return true;
  }

  /// q is f16 or bf16; k, v, o and mask have q's type.
  bool checkTypes() {
    DType q = typeOf(a_.q);
    if (q != DType::F16 && q != DType::BF16) {
      std::string why = q == DType::F32 ? "cuDNN's flash attention has no fp32 path; codegen must keep the unfused "
                                          "path for fp32/tf32"
                                        : "attention steps take f16 or bf16 operands";
      return fail("q (" + bufferLabel(a_.q) + ") is " + std::string(dtypeName(q)) + "; " + why);
    }
    std::vector<std::pair<const char *, uint32_t>> others = {{"k", a_.k}, {"v", a_.v}, {"o", a_.o}};
    if (a_.mask)
      others.push_back({"mask", *a_.mask});
    for (auto [role, index] : others)
      if (typeOf(index) != q)
        return fail(std::string(role) + " (" + bufferLabel(index) + ") is " + std::string(dtypeName(typeOf(index))) +
                    " but q is " + std::string(dtypeName(q)) + "; q, k, v, o and mask share one element type");
    return true;
  }

  /// Four non-negative strides, the innermost one 1, and (for q, k, v, o) every row start on a
  /// 16-byte boundary.
  bool checkLayout(const View &view) {
    const std::vector<int64_t> &s = *view.strides;
    std::string strides = view.role + "Strides " + shapeString(s);
    if (s.size() != 4)
      return fail(strides + " has " + std::to_string(s.size()) + " values; " + view.role +
                  " needs 4 (dims [batch, heads, " + (view.role == "mask" ? "seqQ, seqKv" : "seq, headDim") + "])");
    if (view.offset < 0 || std::any_of(s.begin(), s.end(), [](int64_t x) { return x < 0; }))
      return fail(view.role + "Offset " + std::to_string(view.offset) + " and " + strides + " must not be negative");
    if (s[3] != 1)
      return fail(strides + ": the innermost dimension of " + view.role + " must be contiguous (stride 1, not " +
                  std::to_string(s[3]) + "); cuDNN's flash attention reads whole rows");
    if (view.role == "mask")
      return true; // the bias is read element by element
    int64_t elem = static_cast<int64_t>(dtypeBytes(typeOf(view.buffer)));
    bool aligned = view.offset * elem % kVectorBytes == 0;
    for (int i = 0; i < 3; ++i)
      aligned = aligned && (view.dims[i] == 1 || s[i] * elem % kVectorBytes == 0);
    if (!aligned)
      return fail(view.role + "Offset " + std::to_string(view.offset) + " and " + strides + " must be multiples of " +
                  std::to_string(kVectorBytes / elem) + " elements (" + std::to_string(kVectorBytes) +
                  " bytes): cuDNN's flash attention moves q, k, v and o 16 bytes at a time");
    return true;
  }

  /// The view's last element must lie inside its buffer; records the byte range it spans.
  bool extent(View &view) {
    const Buffer &b = plan_.buffers[view.buffer];
    const std::vector<int64_t> &s = *view.strides;
    int64_t last = view.offset, elem = static_cast<int64_t>(dtypeBytes(b.dtype)), bytes = 0, start = 0;
    bool overflow = false;
    for (int i = 0; i < 4; ++i) {
      int64_t step = 0;
      overflow = overflow || __builtin_mul_overflow(view.dims[i] - 1, s[i], &step) ||
                 __builtin_add_overflow(last, step, &last);
    }
    overflow = overflow || __builtin_add_overflow(last, 1, &bytes) || __builtin_mul_overflow(bytes, elem, &bytes) ||
               __builtin_mul_overflow(view.offset, elem, &start);
    std::string layout =
        "offset " + std::to_string(view.offset) + " and strides " + shapeString(s) + " over " + dimsString(view.dims);
    if (overflow)
      return fail("the size of " + view.role + " (" + layout + ") overflows 64 bits");
    if (static_cast<uint64_t>(bytes) > b.bytes)
      return fail(view.role + " (" + layout + ") needs " + std::to_string(bytes) + " bytes but " +
                  bufferLabel(view.buffer) + " has " + std::to_string(b.bytes));
    view.begin = b.offset + static_cast<uint64_t>(start);
    view.end = b.offset + static_cast<uint64_t>(bytes);
    return true;
  }

  /// Sorted by stride, each dimension (of more than one element) must step over the whole
  /// extent of the ones inside it: then no two output elements share an address. Every layout
  /// codegen produces (dense, permuted, padded) passes.
  bool outputIsInjective(const View &o) {
    std::vector<std::pair<int64_t, int64_t>> used; // (stride, dim)
    for (int i = 0; i < 4; ++i)
      if (o.dims[i] > 1)
        used.push_back({(*o.strides)[i], o.dims[i]});
    std::sort(used.begin(), used.end());
    int64_t span = 1; // elements covered by the dimensions so far
    for (auto [stride, dim] : used) {
      if (stride < span)
        return fail("oStrides " + shapeString(*o.strides) + " over " + dimsString(o.dims) +
                    " put two output elements at one address; the step would race with itself");
      if (__builtin_mul_overflow(stride, dim, &span))
        span = INT64_MAX; // nothing can step over it: a later dimension of more than one fails
    }
    return true;
  }

  bool overlaps(const View &input, const View &o) const {
    bool sameSpace = plan_.buffers[input.buffer].space == plan_.buffers[o.buffer].space;
    return sameSpace && input.begin < o.end && o.begin < input.end;
  }

  const Plan &plan_;
  const std::string &where_;
  const AttentionStep &a_;
  std::string error_;
};

} // namespace

std::optional<std::string> checkAttentionStep(const Plan &plan, const std::string &where, const AttentionStep &step) {
  return AttentionChecker(plan, where, step).run();
}

} // namespace kiln::plan::detail
