//===- EnumNames.h - names and known values of the plan's enums -*- C++ -*-===//
//
// One table per enum (PlanTypes.cpp) gives the views their names, the validator the values it
// accepts, and messages the list of those values. An enum value of a plan read from a file may
// be anything; only the values in the table are known.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_PLAN_ENUMNAMES_H
#define KILN_RUNTIME_PLAN_ENUMNAMES_H

#include "runtime/plan/Plan.h"

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace kiln::plan::detail {

struct EnumName {
  uint8_t value;
  std::string_view name;
};
struct EnumInfo {
  std::string_view noun; // what a value is, for messages: "memory space"
  std::span<const EnumName> names;
};

EnumInfo enumInfo(DType);
EnumInfo enumInfo(MemorySpace);
EnumInfo enumInfo(MathMode);
EnumInfo enumInfo(Activation);

/// The name of a known value; nullopt for any other.
template <class E> std::optional<std::string_view> enumName(E value) {
  static_assert(sizeof(E) == 1, "plan enums are one byte in the file");
  for (const EnumName &entry : enumInfo(value).names)
    if (entry.value == static_cast<uint8_t>(value))
      return entry.name;
  return std::nullopt;
}

/// "1=arena, 2=weights": the known values, for messages.
std::string knownValues(const EnumInfo &info);

} // namespace kiln::plan::detail

#endif // KILN_RUNTIME_PLAN_ENUMNAMES_H
