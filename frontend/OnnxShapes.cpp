//===- OnnxShapes.cpp - ONNX's own shape conventions -----------------------===//

#include "frontend/OnnxShapes.h"

#include "llvm/ADT/STLExtras.h"

namespace kiln::frontend {
namespace {
llvm::Error shapeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}
} // namespace

ShapeOrError resolveReshape(llvm::ArrayRef<int64_t> input, llvm::ArrayRef<int64_t> target,
                            bool allowZero) {
  auto total = checkedElementCount(input);
  if (!total)
    return total.takeError();
  Shape out;
  int inferAt = -1;
  int64_t known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t d = target[i];
    if (d == 0 && !allowZero) {
      if (i >= input.size())
        return shapeError("reshape target copies dim " + std::to_string(i) +
                          " (0), but the input has rank " + std::to_string(input.size()));
      d = input[i];
    }
    if (d == -1) {
      if (inferAt >= 0)
        return shapeError("reshape target has more than one -1");
      inferAt = (int)i;
      out.push_back(1);
      continue;
    }
    if (d < 0)
      return shapeError("reshape target dim " + std::to_string(d) + " is invalid");
    if (d != 0 && known > INT64_MAX / d)
      return shapeError("reshape target overflows int64");
    known *= d;
    out.push_back(d);
  }
  if (inferAt >= 0) {
    if (known == 0 || *total % known != 0)
      return shapeError("cannot infer the -1 dim: " + std::to_string(*total) +
                        " elements do not divide by " + std::to_string(known));
    out[inferAt] = *total / known;
  } else if (known != *total) {
    return shapeError("cannot reshape " + formatShape(input) + " to " + formatShape(out) +
                      ": element counts differ");
  }
  return out;
}

ShapeOrError squeezeShape(llvm::ArrayRef<int64_t> input, llvm::ArrayRef<int64_t> axes) {
  int64_t rank = input.size();
  llvm::SmallVector<int64_t> normalized;
  for (int64_t a : axes) {
    auto axis = normalizeAxis(a, rank, "squeeze axis");
    if (!axis)
      return axis.takeError();
    if (input[*axis] != 1)
      return shapeError("cannot squeeze axis " + std::to_string(*axis) + " of size " +
                        std::to_string(input[*axis]));
    normalized.push_back(*axis);
  }
  Shape out;
  for (int64_t i = 0; i < rank; ++i) {
    bool drop = axes.empty() ? input[i] == 1 : llvm::is_contained(normalized, i);
    if (!drop)
      out.push_back(input[i]);
  }
  return out;
}

ShapeOrError unsqueezeShape(llvm::ArrayRef<int64_t> input, llvm::ArrayRef<int64_t> axes) {
  int64_t rank = input.size() + axes.size();
  llvm::SmallVector<bool> inserted(rank, false);
  for (int64_t a : axes) {
    auto axis = normalizeAxis(a, rank, "unsqueeze axis");
    if (!axis)
      return axis.takeError();
    if (inserted[*axis])
      return shapeError("unsqueeze axis " + std::to_string(*axis) + " is repeated");
    inserted[*axis] = true;
  }
  Shape out;
  size_t next = 0;
  for (int64_t i = 0; i < rank; ++i)
    out.push_back(inserted[i] ? 1 : input[next++]);
  return out;
}

ShapeOrError flattenShape(llvm::ArrayRef<int64_t> input, int64_t axis) {
  int64_t rank = input.size();
  if (axis < -rank || axis > rank)
    return shapeError("flatten axis " + std::to_string(axis) + " is out of range for rank " +
                      std::to_string(rank));
  if (axis < 0)
    axis += rank;
  auto outer = checkedElementCount(input.take_front(axis));
  auto inner = checkedElementCount(input.drop_front(axis));
  if (!outer)
    return outer.takeError();
  if (!inner)
    return inner.takeError();
  return Shape{*outer, *inner};
}

} // namespace kiln::frontend
