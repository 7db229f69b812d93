//===- ReductionEval.cpp - reductions, arg reductions, scans and top-k -----===//
//
// Reductions accumulate in double for float inputs (then round once to the result type) and in
// wrapping int64 for integer inputs, so integer sums and products stay exact; the result type is
// always the op's own result type.
//
//===----------------------------------------------------------------------===//

#include "ir/Interpreter/Interpreter.h"
#include "ir/KilnOps.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <type_traits>

using namespace mlir;

namespace kiln::interp {
namespace {

RankedTensorType resultType(Operation *op, unsigned i = 0) {
  return llvm::cast<RankedTensorType>(op->getResult(i).getType());
}

/// A boolean attribute, or its default when the op does not spell it out.
bool boolAttr(Operation *op, llvm::StringRef name, bool byDefault) {
  auto attr = op->getAttrOfType<BoolAttr>(name);
  return attr ? attr.getValue() : byDefault;
}

/// Copies element `from` of `in` to element `to` of `out` (one element type).
void copyElement(const Tensor &in, int64_t from, Tensor &out, int64_t to) {
  if (in.isFloat())
    out.f[to] = in.f[from];
  else
    out.i[to] = in.i[from];
}

/// Element k of `t` as T: double for floats, int64 for integers (unsigned zero-extended).
template <typename T> T valueAs(const Tensor &t, int64_t k) {
  if constexpr (std::is_floating_point_v<T>)
    return t.getDouble(k);
  else
    return t.i[k];
}

/// Whether value a ranks strictly before b when picking the largest (or smallest). NaN ranks
/// first either way, as numpy's argmax/argmin pick it. Unsigned 64-bit values compare unsigned.
bool ranksBefore(const Tensor &t, int64_t a, int64_t b, bool largest) {
  if (t.isFloat()) {
    double x = t.f[a], y = t.f[b];
    if (std::isnan(x) || std::isnan(y))
      return std::isnan(x) && !std::isnan(y);
    return largest ? x > y : x < y;
  }
  if (t.element.isUnsignedInteger()) {
    uint64_t x = uint64_t(t.i[a]), y = uint64_t(t.i[b]);
    return largest ? x > y : x < y;
  }
  return largest ? t.i[a] > t.i[b] : t.i[a] < t.i[b];
}

/// A tensor seen as [outer, axis, inner] around one axis.
struct AxisView {
  int64_t outer = 1, size = 1, inner = 1;
  AxisView(llvm::ArrayRef<int64_t> shape, int64_t axis) {
    for (int64_t d = 0; d < (int64_t)shape.size(); ++d)
      (d < axis ? outer : d == axis ? size : inner) *= shape[d];
  }
  int64_t offset(int64_t o, int64_t j, int64_t in) const { return (o * size + j) * inner + in; }
};

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

enum class Reduce { Sum, Mean, Max, Min, Prod, L1, L2, SumSquare, LogSum, LogSumExp };

/// For each input element, the offset of the output element it reduces into: reduced axes do
/// not move the output (a kept size-1 axis and a dropped axis address the same elements).
std::vector<int64_t> outputOffsets(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> axes) {
  Shape reducedShape(shape.begin(), shape.end());
  for (int64_t a : axes)
    reducedShape[a] = 1;
  Shape outStrides = stridesOf(reducedShape);
  for (int64_t a : axes)
    outStrides[a] = 0;
  int64_t total = 1;
  for (int64_t dim : shape)
    total *= dim;
  std::vector<int64_t> offsets(total);
  Shape index(shape.size(), 0);
  int64_t at = 0;
  for (int64_t k = 0; k < total; ++k) {
    offsets[k] = at;
    for (int d = (int)shape.size() - 1; d >= 0; --d) {
      if (++index[d] < shape[d]) {
        at += outStrides[d];
        break;
      }
      at -= outStrides[d] * (shape[d] - 1);
      index[d] = 0;
    }
  }
  return offsets;
}

template <typename T> T wrapAdd(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    return a + b;
  else
    return T(uint64_t(a) + uint64_t(b));
}
template <typename T> T wrapMul(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    return a * b;
  else
    return T(uint64_t(a) * uint64_t(b));
}

/// Reduces `in` over `axes` into `out` with accumulator type T (double or int64_t).
template <typename T>
void reduceInto(Reduce kind, const Tensor &in, llvm::ArrayRef<int64_t> axes, Tensor &out) {
  std::vector<int64_t> to = outputOffsets(in.shape, axes);
  int64_t outSize = out.size();
  int64_t count = outSize == 0 ? 0 : in.size() / outSize; // elements per output
  constexpr bool isFloat = std::is_floating_point_v<T>;
  constexpr T lowest =
      isFloat ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::min();
  constexpr T highest =
      isFloat ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
  bool isUnsigned = in.element.isUnsignedInteger();

  // log_sum_exp shifts by the maximum so exp cannot overflow: log(sum(exp(x - m))) + m.
  std::vector<double> shift;
  if (kind == Reduce::LogSumExp) {
    Tensor max =
        Tensor::zeros(RankedTensorType::get(out.shape, Float64Type::get(in.element.getContext())));
    reduceInto<double>(Reduce::Max, in, axes, max);
    shift = std::move(max.f);
    for (double &m : shift)
      if (!std::isfinite(m))
        m = 0;
  }

  T init = kind == Reduce::Max    ? lowest
           : kind == Reduce::Min  ? highest
           : kind == Reduce::Prod ? T(1)
                                  : T(0);
  if constexpr (!isFloat) {
    if (isUnsigned && kind == Reduce::Max)
      init = 0;
    if (isUnsigned && kind == Reduce::Min)
      init = T(-1); // all bits set: the largest unsigned value
  }
  std::vector<T> acc(outSize, init);
  for (int64_t k = 0; k < in.size(); ++k) {
    T x = valueAs<T>(in, k);
    T &a = acc[to[k]];
    switch (kind) {
    case Reduce::Sum:
    case Reduce::Mean:
    case Reduce::LogSum:
      a = wrapAdd(a, x);
      break;
    case Reduce::Max:
    case Reduce::Min: {
      bool takeX;
      if constexpr (isFloat)
        takeX = std::isnan(x) || (kind == Reduce::Max ? x > a : x < a); // NaN propagates
      else if (isUnsigned)
        takeX = kind == Reduce::Max ? uint64_t(x) > uint64_t(a) : uint64_t(x) < uint64_t(a);
      else
        takeX = kind == Reduce::Max ? x > a : x < a;
      if (takeX && !(isFloat && std::isnan((double)a)))
        a = x;
      break;
    }
    case Reduce::Prod:
      a = wrapMul(a, x);
      break;
    case Reduce::L1:
      a = wrapAdd(a, (!isUnsigned && x < 0) ? wrapMul(x, T(-1)) : x);
      break;
    case Reduce::L2:
    case Reduce::SumSquare:
      a = wrapAdd(a, wrapMul(x, x));
      break;
    case Reduce::LogSumExp:
      if constexpr (isFloat)
        a += std::exp(x - shift[to[k]]);
      break;
    }
  }

  for (int64_t o = 0; o < outSize; ++o) {
    T a = acc[o];
    switch (kind) {
    case Reduce::Mean:
      if constexpr (isFloat)
        storeDouble(out, o, a / (double)count); // empty: 0 / 0 = NaN
      else
        storeDouble(out, o, count == 0 ? 0.0 : (double)(a / count)); // truncates, as int division
      break;
    case Reduce::L2:
      storeDouble(out, o, std::sqrt(isUnsigned ? (double)uint64_t(a) : (double)a));
      break;
    case Reduce::LogSum:
      storeDouble(out, o, std::log(isUnsigned ? (double)uint64_t(a) : (double)a));
      break;
    case Reduce::LogSumExp:
      storeDouble(out, o, std::log((double)a) + shift[o]);
      break;
    case Reduce::Max:
    case Reduce::Min:
      if (count == 0) { // ONNX: -inf / +inf, or the integer type's lowest / highest value
        storeDouble(out, o,
                    (kind == Reduce::Max ? -1 : 1) * std::numeric_limits<double>::infinity());
        break;
      }
      [[fallthrough]];
    default:
      if constexpr (isFloat)
        storeDouble(out, o, a);
      else if (out.isFloat()) // not reached: reductions keep the element type
        storeDouble(out, o, (double)a);
      else
        out.i[o] = wrapToInteger(a, llvm::cast<IntegerType>(out.element));
      break;
    }
  }
}

template <Reduce Kind>
llvm::Expected<Results> evalReduce(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  const Tensor &in = *operands[0];
  std::optional<llvm::ArrayRef<int64_t>> axesValues;
  if (operands.size() > 1) {
    if (operands[1]->shape.size() != 1)
      return opError(op, "axes must be 1-d");
    axesValues = llvm::ArrayRef<int64_t>(operands[1]->i);
  }
  bool noop = boolAttr(op, "noop_with_empty_axes", false);
  bool keepdims = boolAttr(op, "keepdims", true);
  auto axes = normalizeReduceAxes((int64_t)in.shape.size(), axesValues, noop);
  if (!axes)
    return opError(op, llvm::toString(axes.takeError()));
  Tensor out = Tensor::zeros(resultType(op));
  auto shape = reduceShape(in.shape, *axes, keepdims);
  if (!shape)
    return opError(op, llvm::toString(shape.takeError()));
  if (*shape != out.shape)
    return opError(op, "axes reduce " + formatShape(in.shape) + " to " + formatShape(*shape) +
                           ", the result type has " + formatShape(out.shape));
  if (axes->empty() && noop) {
    // noop_with_empty_axes: the input unchanged (the ONNX spec's "equivalent to the input").
    for (int64_t k = 0; k < in.size(); ++k)
      copyElement(in, k, out, k);
    return oneResult(std::move(out));
  }
  // Logs, roots and means of integers go through double; the rest stay exact in int64.
  if (in.isFloat() || Kind == Reduce::LogSumExp)
    reduceInto<double>(Kind, in, *axes, out);
  else
    reduceInto<int64_t>(Kind, in, *axes, out);
  return oneResult(std::move(out));
}

//===----------------------------------------------------------------------===//
// Arg reductions, cumsum, top-k
//===----------------------------------------------------------------------===//

template <bool Largest>
llvm::Expected<Results> evalArg(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  const Tensor &in = *operands[0];
  int64_t axis = (int64_t)op->getAttrOfType<IntegerAttr>("axis").getInt();
  bool last = boolAttr(op, "select_last_index", false);
  if (axis < 0 || axis >= (int64_t)in.shape.size())
    return opError(op, "axis " + std::to_string(axis) + " is out of range");
  if (in.shape[axis] == 0)
    return opError(op, "cannot take the arg of an empty axis");
  Tensor out = Tensor::zeros(resultType(op));
  AxisView view(in.shape, axis);
  for (int64_t o = 0; o < view.outer; ++o)
    for (int64_t n = 0; n < view.inner; ++n) {
      int64_t best = 0;
      for (int64_t j = 1; j < view.size; ++j) {
        int64_t cand = view.offset(o, j, n), cur = view.offset(o, best, n);
        // Later elements win strict improvements, and ties too with select_last_index.
        if (ranksBefore(in, cand, cur, Largest) || (last && !ranksBefore(in, cur, cand, Largest)))
          best = j;
      }
      out.i[o * view.inner + n] = best;
    }
  return oneResult(std::move(out));
}

llvm::Expected<Results> evalCumSum(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  auto cumsum = llvm::cast<CumSumOp>(op);
  const Tensor &in = *operands[0], &axisValue = *operands[1];
  if (axisValue.size() != 1)
    return opError(op, "axis must hold one value");
  auto axis = normalizeAxis(axisValue.i[0], (int64_t)in.shape.size(), "cumsum axis");
  if (!axis)
    return opError(op, llvm::toString(axis.takeError()));
  bool exclusive = cumsum.getExclusive(), reverse = cumsum.getReverse();
  Tensor out = Tensor::zeros(resultType(op));
  AxisView view(in.shape, *axis);
  for (int64_t o = 0; o < view.outer; ++o)
    for (int64_t n = 0; n < view.inner; ++n) {
      double sumF = 0;
      int64_t sumI = 0;
      for (int64_t step = 0; step < view.size; ++step) {
        int64_t j = reverse ? view.size - 1 - step : step;
        int64_t k = view.offset(o, j, n);
        if (in.isFloat()) {
          if (!exclusive)
            sumF += in.f[k];
          storeDouble(out, k, sumF); // running sum in double, each output rounded once
          if (exclusive)
            sumF += in.f[k];
        } else {
          if (!exclusive)
            sumI = int64_t(uint64_t(sumI) + uint64_t(in.i[k]));
          out.i[k] = wrapToInteger(sumI, llvm::cast<IntegerType>(out.element));
          if (exclusive)
            sumI = int64_t(uint64_t(sumI) + uint64_t(in.i[k]));
        }
      }
    }
  return oneResult(std::move(out));
}

llvm::Expected<Results> evalTopK(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  auto topk = llvm::cast<TopKOp>(op);
  const Tensor &in = *operands[0];
  int64_t axis = (int64_t)topk.getAxis();
  bool largest = topk.getLargest();
  if (axis < 0 || axis >= (int64_t)in.shape.size())
    return opError(op, "axis " + std::to_string(axis) + " is out of range");
  Tensor values = Tensor::zeros(resultType(op, 0));
  Tensor indices = Tensor::zeros(resultType(op, 1));
  int64_t k = values.shape[axis];
  if (k > in.shape[axis])
    return opError(op, "k = " + std::to_string(k) + " exceeds the axis size " +
                           std::to_string(in.shape[axis]));
  AxisView view(in.shape, axis), outView(values.shape, axis);
  std::vector<int64_t> order(view.size);
  for (int64_t o = 0; o < view.outer; ++o)
    for (int64_t n = 0; n < view.inner; ++n) {
      std::iota(order.begin(), order.end(), 0);
      // Ties keep the lower index first (ONNX); `sorted = false` leaves the order to us, and
      // sorted output is one valid choice.
      std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t a, int64_t b) {
        int64_t x = view.offset(o, a, n), y = view.offset(o, b, n);
        if (ranksBefore(in, x, y, largest))
          return true;
        if (ranksBefore(in, y, x, largest))
          return false;
        return a < b;
      });
      for (int64_t j = 0; j < k; ++j) {
        copyElement(in, view.offset(o, order[j], n), values, outView.offset(o, j, n));
        indices.i[outView.offset(o, j, n)] = order[j];
      }
    }
  Results results;
  results.push_back(std::move(values));
  results.push_back(std::move(indices));
  return results;
}

} // namespace

void registerReductionEvaluators(EvaluatorTable &table) {
  table.add("kiln.reduce_mean", evalReduce<Reduce::Mean>);
  table.add("kiln.reduce_sum", evalReduce<Reduce::Sum>);
  table.add("kiln.reduce_max", evalReduce<Reduce::Max>);
  table.add("kiln.reduce_min", evalReduce<Reduce::Min>);
  table.add("kiln.reduce_prod", evalReduce<Reduce::Prod>);
  table.add("kiln.reduce_l1", evalReduce<Reduce::L1>);
  table.add("kiln.reduce_l2", evalReduce<Reduce::L2>);
  table.add("kiln.reduce_sum_square", evalReduce<Reduce::SumSquare>);
  table.add("kiln.reduce_log_sum", evalReduce<Reduce::LogSum>);
  table.add("kiln.reduce_log_sum_exp", evalReduce<Reduce::LogSumExp>);
  table.add("kiln.argmax", evalArg<true>);
  table.add("kiln.argmin", evalArg<false>);
  table.add("kiln.cumsum", evalCumSum);
  table.add("kiln.topk", evalTopK);
}

} // namespace kiln::interp
