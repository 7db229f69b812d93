//===- StepKinds.h - iterate over the step kinds of StepParams -*- C++ -*-===//
//
// The schema visitors handle Step::params generically: decoding finds the alternative whose
// kTag was read, messages list every kind. Both walk the alternatives of StepParams here, so a
// new step kind needs nothing but its struct and its place in the variant.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_PLAN_STEPKINDS_H
#define KILN_RUNTIME_PLAN_STEPKINDS_H

#include "runtime/plan/Plan.h"

#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace kiln::plan::detail {

/// Calls f(std::type_identity<T>{}) for every alternative T of StepParams, in variant order.
template <class F> void forEachStepKind(F &&f) {
  [&]<size_t... I>(std::index_sequence<I...>) {
    (f(std::type_identity<std::variant_alternative_t<I, StepParams>>{}), ...);
  }(std::make_index_sequence<std::variant_size_v<StepParams>>{});
}

/// "1=kernel, 2=gemm, 3=conv, 4=copy".
inline std::string knownStepKinds() {
  std::string s;
  forEachStepKind([&]<class T>(std::type_identity<T>) {
    s += (s.empty() ? "" : ", ") + std::to_string(T::kTag) + "=" + T::kKind;
  });
  return s;
}

} // namespace kiln::plan::detail

#endif // KILN_RUNTIME_PLAN_STEPKINDS_H
