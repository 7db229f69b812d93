//===- FieldChecks.h - what every plan field of its kind must satisfy -*- C++ -*-===//
//
// validatePlan's generic half: from a record's visitFields list, every enum field must hold a
// known value, every buffer or image index must be in its table, every tensor type must have a
// known element type and no negative dimension. What fields mean together stays in
// PlanValidate.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_PLAN_FIELDCHECKS_H
#define KILN_RUNTIME_PLAN_FIELDCHECKS_H

#include "runtime/plan/EnumNames.h"

#include <optional>
#include <span>
#include <string>
#include <variant>

namespace kiln::plan::detail {

/// "[1,3,224,224]".
inline std::string shapeString(std::span<const int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

/// Visits a record's fields and keeps the first problem, prefixed with `where`.
class FieldKindChecker {
public:
  FieldKindChecker(const Plan &plan, const std::string &where) : plan_(plan), where_(where) {}

  template <class T> void operator()(const char *key, T &&field) {
    using F = std::remove_cvref_t<T>;
    if (error_)
      return;
    if constexpr (std::is_enum_v<F>) {
      knownEnum(key, field);
    } else if constexpr (kIsBufferRef<F>) {
      indices(key, field.value, plan_.buffers.size(), "buffer");
    } else if constexpr (kIsImageRef<F>) {
      indices(key, field.value, plan_.images.size(), "image");
    } else if constexpr (kIsTensorType<F>) {
      knownEnum("dtype", field.dtype);
      nonNegative(field.shape);
    } else if constexpr (std::is_same_v<F, StepParams>) {
      std::visit([&](const auto &params) { std::decay_t<decltype(params)>::visitFields(params, *this); }, field);
    }
    // Any other value is well-formed by itself.
  }
  const std::optional<std::string> &error() const { return error_; }

private:
  void fail(const std::string &message) {
    if (!error_)
      error_ = where_ + ": " + message;
  }
  template <class E> void knownEnum(const char *key, E value) {
    if (enumName(value))
      return;
    EnumInfo info = enumInfo(value);
    fail(std::string(key) + " has the unknown " + std::string(info.noun) + " value " +
         std::to_string(static_cast<int>(value)) + " (this kiln knows " + knownValues(info) + ")");
  }
  void nonNegative(const std::vector<int64_t> &shape) {
    for (int64_t dim : shape)
      if (dim < 0)
        return fail("shape " + shapeString(shape) + " has a negative dimension");
  }
  void index(const std::string &key, uint32_t value, size_t count, const std::string &table) {
    if (value >= count)
      fail(key + " = " + std::to_string(value) + " is not " + (table == "image" ? "an " : "a ") + table +
           " index (the plan has " + std::to_string(count) + " " + table + "s)");
  }
  void indices(const char *key, uint32_t value, size_t count, const char *table) { index(key, value, count, table); }
  void indices(const char *key, const std::optional<uint32_t> &value, size_t count, const char *table) {
    if (value)
      index(key, *value, count, table);
  }
  void indices(const char *key, const std::vector<uint32_t> &values, size_t count, const char *table) {
    for (size_t i = 0; i < values.size(); ++i)
      index(std::string(key) + "[" + std::to_string(i) + "]", values[i], count, table);
  }

  const Plan &plan_;
  const std::string &where_;
  std::optional<std::string> error_;
};

/// The first field of `record` that breaks the rule of its kind, as "where: message".
template <PlanRecord T>
std::optional<std::string> checkFieldKinds(const Plan &plan, const std::string &where, const T &record) {
  FieldKindChecker checker(plan, where);
  T::visitFields(record, checker);
  return checker.error();
}

} // namespace kiln::plan::detail

#endif // KILN_RUNTIME_PLAN_FIELDCHECKS_H
