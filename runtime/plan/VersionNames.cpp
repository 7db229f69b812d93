//===- VersionNames.cpp - CUDA and library version numbers as text ---------===//

#include "runtime/plan/VersionNames.h"

namespace kiln::plan::detail {

std::string cudaVersionName(uint32_t version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

uint32_t libraryMajor(uint32_t version) { return version < 10000 ? version / 1000 : version / 10000; }

std::string libraryVersionName(uint32_t version) {
  uint32_t rest = version < 10000 ? version % 1000 : version % 10000;
  return std::to_string(libraryMajor(version)) + "." + std::to_string(rest / 100) + "." + std::to_string(rest % 100);
}

} // namespace kiln::plan::detail
