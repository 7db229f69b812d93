//===- ConstantFolding.cpp - import-time folding of shape subgraphs --------===//

#include "frontend/ConstantFolding.h"
#include "frontend/NodeContext.h"
#include "frontend/OnnxShapes.h"

#include "onnx/onnx.pb.h"

#include "llvm/ADT/StringSet.h"

#include <cmath>
#include <functional>

namespace kiln::frontend {
namespace {

using TP = onnx::TensorProto;

/// A fold that would exceed ImportOptions::foldElementLimit: not an error, the node is then
/// imported as a kiln op.
class NotFolded : public llvm::ErrorInfo<NotFolded> {
public:
  static char ID;
  void log(llvm::raw_ostream &os) const override { os << "result too large to fold"; }
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }
};
char NotFolded::ID = 0;

bool isFoldableType(int32_t t) {
  switch (t) {
  case TP::FLOAT: case TP::DOUBLE: case TP::BOOL: case TP::INT8: case TP::INT16: case TP::INT32:
  case TP::INT64: case TP::UINT8: case TP::UINT16: case TP::UINT32: case TP::UINT64:
    return true;
  default:
    return false;
  }
}
bool isFloatType(int32_t t) { return t == TP::FLOAT || t == TP::DOUBLE; }

/// Rounds/wraps a value to what `type` can store (C++ conversion semantics, as ONNX Cast).
long double storeAs(long double v, int32_t type) {
  switch (type) {
  case TP::FLOAT: return (long double)(float)v;
  case TP::DOUBLE: return (long double)(double)v;
  case TP::BOOL: return v != 0;
  case TP::INT8: return (int8_t)(int64_t)v;
  case TP::INT16: return (int16_t)(int64_t)v;
  case TP::INT32: return (int32_t)(int64_t)v;
  case TP::UINT8: return (uint8_t)(int64_t)v;
  case TP::UINT16: return (uint16_t)(int64_t)v;
  case TP::UINT32: return (uint32_t)(int64_t)v;
  case TP::UINT64: return v < 0 ? (long double)(uint64_t)(int64_t)v : v;
  default: return (long double)(int64_t)v;
  }
}

Shape stridesOf(llvm::ArrayRef<int64_t> shape) {
  Shape strides(shape.size(), 1);
  for (int i = (int)shape.size() - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

/// Flat index into `shape` (broadcast from `outShape`) of the element at `outIndex`.
int64_t broadcastIndex(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> outShape,
                       int64_t outIndex) {
  Shape outStrides = stridesOf(outShape), strides = stridesOf(shape);
  int64_t index = 0;
  size_t offset = outShape.size() - shape.size();
  for (size_t i = 0; i < outShape.size(); ++i) {
    int64_t coord = (outIndex / outStrides[i]) % outShape[i];
    if (i >= offset && shape[i - offset] != 1)
      index += coord * strides[i - offset];
  }
  return index;
}

using Fn = std::function<long double(llvm::ArrayRef<long double>)>;

/// Elementwise op with numpy broadcasting over all inputs.
llvm::Expected<HostTensor> elementwise(const NodeContext &ctx, llvm::ArrayRef<const HostTensor *> in,
                                       int32_t outType, const Fn &fn) {
  Shape shape;
  for (const HostTensor *t : in) {
    auto merged = broadcastShapes(shape, t->shape);
    if (!merged)
      return ctx.error(llvm::toString(merged.takeError()));
    shape = *merged;
  }
  HostTensor out;
  out.onnxType = outType;
  out.shape = shape;
  auto total = checkedElementCount(shape);
  if (!total)
    return ctx.error(llvm::toString(total.takeError()));
  int64_t count = *total;
  if (count > ctx.foldElementLimit())
    return llvm::make_error<NotFolded>();
  llvm::SmallVector<long double, 3> args(in.size());
  for (int64_t i = 0; i < count; ++i) {
    for (size_t k = 0; k < in.size(); ++k)
      args[k] = in[k]->values[broadcastIndex(in[k]->shape, shape, i)];
    out.values.push_back(storeAs(fn(args), outType));
  }
  return out;
}

HostTensor reshaped(const HostTensor &t, Shape shape) {
  HostTensor out = t;
  out.shape = std::move(shape);
  return out;
}

llvm::Expected<HostTensor> gather(const NodeContext &ctx, const HostTensor &data,
                                  const HostTensor &indices, int64_t axis) {
  auto a = nodeAxis(ctx, axis, data.shape.size());
  if (!a)
    return a.takeError();
  auto shape = gatherShape(data.shape, indices.shape, *a);
  if (!shape)
    return ctx.error(llvm::toString(shape.takeError()));
  auto total = checkedElementCount(*shape);
  if (!total || *total > ctx.foldElementLimit()) {
    if (!total)
      llvm::consumeError(total.takeError());
    return llvm::make_error<NotFolded>();
  }
  HostTensor out;
  out.onnxType = data.onnxType;
  out.shape = *shape;
  int64_t outer = 1, inner = 1, dim = data.shape[*a];
  for (int64_t i = 0; i < *a; ++i)
    outer *= data.shape[i];
  for (size_t i = *a + 1; i < data.shape.size(); ++i)
    inner *= data.shape[i];
  for (int64_t o = 0; o < outer; ++o)
    for (long double idxValue : indices.values) {
      int64_t idx = (int64_t)idxValue;
      if (idx < -dim || idx >= dim)
        return ctx.error("gather index " + std::to_string(idx) + " is out of range for axis size " +
                         std::to_string(dim));
      if (idx < 0)
        idx += dim;
      for (int64_t k = 0; k < inner; ++k)
        out.values.push_back(data.values[(o * dim + idx) * inner + k]);
    }
  return out;
}

llvm::Expected<HostTensor> concat(const NodeContext &ctx, llvm::ArrayRef<const HostTensor *> in,
                                  int64_t axis) {
  auto a = nodeAxis(ctx, axis, in[0]->shape.size());
  if (!a)
    return a.takeError();
  llvm::SmallVector<llvm::ArrayRef<int64_t>> shapes;
  for (const HostTensor *t : in)
    shapes.push_back(t->shape);
  auto shape = concatShape(shapes, *a);
  if (!shape)
    return ctx.error(llvm::toString(shape.takeError()));
  HostTensor out;
  out.onnxType = in[0]->onnxType;
  out.shape = *shape;
  int64_t outer = 1;
  for (int64_t i = 0; i < *a; ++i)
    outer *= (*shape)[i];
  for (int64_t o = 0; o < outer; ++o)
    for (const HostTensor *t : in) {
      int64_t chunk = outer ? (int64_t)t->values.size() / outer : 0;
      out.values.insert(out.values.end(), t->values.begin() + o * chunk,
                        t->values.begin() + (o + 1) * chunk);
    }
  return out;
}

llvm::Expected<HostTensor> slice(const NodeContext &ctx, const HostTensor &data,
                                 std::vector<int64_t> starts, std::vector<int64_t> ends,
                                 std::vector<int64_t> axes, std::vector<int64_t> steps) {
  auto norm = normalizeSlice(data.shape, starts, ends, axes, steps);
  if (!norm)
    return ctx.error(llvm::toString(norm.takeError()));
  HostTensor out;
  out.onnxType = data.onnxType;
  int64_t count = 1;
  for (const SliceAxis &s : *norm) {
    out.shape.push_back(s.count);
    count *= s.count;
  }
  Shape inStrides = stridesOf(data.shape), outStrides = stridesOf(out.shape);
  for (int64_t i = 0; i < count; ++i) {
    int64_t src = 0;
    for (size_t d = 0; d < norm->size(); ++d) {
      int64_t coord = (i / outStrides[d]) % out.shape[d];
      src += ((*norm)[d].start + coord * (*norm)[d].step) * inStrides[d];
    }
    out.values.push_back(data.values[src]);
  }
  return out;
}

} // namespace

llvm::Expected<bool> foldNode(NodeContext &ctx) {
  const onnx::NodeProto &node = ctx.node();
  if (!node.domain().empty() && node.domain() != "ai.onnx")
    return false;
  llvm::StringRef op = node.op_type();

  // Shape and Size need only the (static) input type.
  if (op == "Shape" || op == "Size") {
    auto type = ctx.inputType(0);
    HostTensor out;
    out.onnxType = TP::INT64;
    if (op == "Size") {
      out.values.push_back((long double)type.getNumElements());
    } else {
      int64_t rank = type.getRank();
      int64_t start = ctx.attrInt("start", 0), end = ctx.attrInt("end", rank);
      start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
      end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
      for (int64_t i = start; i < end; ++i)
        out.values.push_back(type.getShape()[i]);
      out.shape = {(int64_t)out.values.size()};
    }
    ctx.setConstantOutput(0, std::move(out));
    return true;
  }

  static const llvm::StringSet<> foldable({
      "Identity", "Cast", "Add", "Sub", "Mul", "Div", "Neg", "Abs", "Equal", "Less", "Greater",
      "LessOrEqual", "GreaterOrEqual", "Not", "And", "Or", "Where", "Min", "Max", "Floor", "Ceil",
      "Sqrt", "Gather", "Concat", "Unsqueeze", "Squeeze", "Reshape", "Flatten", "Slice", "Range",
      "ConstantOfShape", "Mod"});
  if (!foldable.contains(op))
    return false;
  llvm::SmallVector<const HostTensor *, 4> in;
  for (size_t i = 0; i < ctx.numInputs(); ++i) {
    if (!ctx.hasInput(i)) {
      in.push_back(nullptr);
      continue;
    }
    const HostTensor *t = ctx.constantInput(i);
    if (!t || !isFoldableType(t->onnxType))
      return false;
    in.push_back(t);
  }
  if (in.empty() || !in[0])
    return false;
  const HostTensor &x = *in[0];
  auto define = [&](llvm::Expected<HostTensor> result) -> llvm::Expected<bool> {
    if (!result) {
      // Too large to fold on the host: leave the node to its op handler.
      llvm::Error err = llvm::handleErrors(result.takeError(), [](const NotFolded &) {});
      if (err)
        return std::move(err);
      return false;
    }
    ctx.setConstantOutput(0, std::move(*result));
    return true;
  };
  auto ints = [&](size_t i) { return in.size() > i && in[i] ? in[i]->asInts() : std::vector<int64_t>{}; };
  bool isFloat = isFloatType(x.onnxType);
  auto binary = [&](std::function<long double(long double, long double)> f, int32_t outType) {
    return elementwise(ctx, in, outType,
                       [&](llvm::ArrayRef<long double> a) { return f(a[0], a[1]); });
  };
  auto unary = [&](std::function<long double(long double)> f) {
    return elementwise(ctx, {in[0]}, x.onnxType, [&](llvm::ArrayRef<long double> a) { return f(a[0]); });
  };

  if (op == "Identity")
    return define(x);
  if (op == "Cast") {
    int32_t to = (int32_t)ctx.attrInt("to", 0);
    if (!isFoldableType(to))
      return false;
    HostTensor out = x;
    out.onnxType = to;
    for (long double &v : out.values)
      v = isFloatType(to) ? storeAs(v, to) : storeAs(std::trunc(v), to);
    return define(std::move(out));
  }
  if (op == "Add") return define(binary([](auto a, auto b) { return a + b; }, x.onnxType));
  if (op == "Sub") return define(binary([](auto a, auto b) { return a - b; }, x.onnxType));
  if (op == "Mul") return define(binary([](auto a, auto b) { return a * b; }, x.onnxType));
  if (op == "Div") {
    if (!isFloat)
      for (long double v : in[1]->values)
        if (v == 0)
          return ctx.error("integer division by zero in a constant subgraph");
    return define(binary([&](auto a, auto b) { return isFloat ? a / b : std::trunc(a / b); },
                         x.onnxType));
  }
  if (op == "Mod") {
    bool fmod = ctx.attrInt("fmod", 0) != 0;
    if (!isFloat)
      for (long double v : in[1]->values)
        if (v == 0)
          return ctx.error("integer modulo by zero in a constant subgraph");
    return define(binary([&](long double a, long double b) {
      long double r = std::fmod(a, b);
      // Without fmod the remainder takes the divisor's sign (Python's %).
      if (!fmod && r != 0 && ((r < 0) != (b < 0)))
        r += b;
      return r;
    }, x.onnxType));
  }
  if (op == "Equal") return define(binary([](auto a, auto b) { return a == b; }, TP::BOOL));
  if (op == "Less") return define(binary([](auto a, auto b) { return a < b; }, TP::BOOL));
  if (op == "Greater") return define(binary([](auto a, auto b) { return a > b; }, TP::BOOL));
  if (op == "LessOrEqual") return define(binary([](auto a, auto b) { return a <= b; }, TP::BOOL));
  if (op == "GreaterOrEqual") return define(binary([](auto a, auto b) { return a >= b; }, TP::BOOL));
  if (op == "And") return define(binary([](auto a, auto b) { return a != 0 && b != 0; }, TP::BOOL));
  if (op == "Or") return define(binary([](auto a, auto b) { return a != 0 || b != 0; }, TP::BOOL));
  if (op == "Neg") return define(unary([](auto a) { return -a; }));
  if (op == "Abs") return define(unary([](auto a) { return std::fabs(a); }));
  if (op == "Not") return define(unary([](auto a) { return a == 0; }));
  if (op == "Floor") return define(unary([](auto a) { return std::floor(a); }));
  if (op == "Ceil") return define(unary([](auto a) { return std::ceil(a); }));
  if (op == "Sqrt") return define(unary([](auto a) { return std::sqrt(a); }));
  if (op == "Where") {
    if (in.size() != 3 || in[1]->onnxType != in[2]->onnxType)
      return false;
    return define(elementwise(ctx, in, in[1]->onnxType, [](llvm::ArrayRef<long double> a) {
      return a[0] != 0 ? a[1] : a[2];
    }));
  }
  if (op == "Min" || op == "Max") {
    bool isMax = op == "Max";
    return define(elementwise(ctx, in, x.onnxType, [&](llvm::ArrayRef<long double> a) {
      long double r = a[0];
      for (long double v : a)
        r = isMax ? std::max(r, v) : std::min(r, v);
      return r;
    }));
  }
  if (op == "Gather")
    return define(gather(ctx, x, *in[1], ctx.attrInt("axis", 0)));
  if (op == "Concat")
    return define(concat(ctx, in, ctx.attrInt("axis", 0)));
  if (op == "Unsqueeze" || op == "Squeeze") {
    std::vector<int64_t> axes = ctx.opset() >= 13 ? ints(1) : ctx.attrInts("axes");
    auto shape = op == "Squeeze" ? squeezeShape(x.shape, axes) : unsqueezeShape(x.shape, axes);
    if (!shape)
      return ctx.error(llvm::toString(shape.takeError()));
    return define(reshaped(x, *shape));
  }
  if (op == "Reshape") {
    if (!in[1])
      return false;
    auto shape = resolveReshape(x.shape, ints(1), ctx.attrInt("allowzero", 0) != 0);
    if (!shape)
      return ctx.error(llvm::toString(shape.takeError()));
    return define(reshaped(x, *shape));
  }
  if (op == "Flatten") {
    auto shape = flattenShape(x.shape, ctx.attrInt("axis", 1));
    if (!shape)
      return ctx.error(llvm::toString(shape.takeError()));
    return define(reshaped(x, *shape));
  }
  if (op == "Slice") {
    if (ctx.opset() < 10)
      return false;
    std::vector<int64_t> starts = ints(1), ends = ints(2), axes = ints(3), steps = ints(4);
    if (axes.empty())
      for (size_t i = 0; i < starts.size(); ++i)
        axes.push_back(i);
    if (steps.empty())
      steps.assign(starts.size(), 1);
    return define(slice(ctx, x, starts, ends, axes, steps));
  }
  if (op == "Range") {
    auto count = rangeCount((double)x.values.at(0), (double)in[1]->values.at(0),
                            (double)in[2]->values.at(0));
    if (!count)
      return ctx.error(llvm::toString(count.takeError()));
    if (*count > ctx.foldElementLimit())
      return false;
    HostTensor out;
    out.onnxType = x.onnxType;
    out.shape = {*count};
    for (int64_t i = 0; i < *count; ++i)
      out.values.push_back(storeAs(x.values[0] + i * in[2]->values[0], x.onnxType));
    return define(std::move(out));
  }
  if (op == "ConstantOfShape")
    return false; // handled by its op handler, which knows the value attribute
  return false;
}

} // namespace kiln::frontend
