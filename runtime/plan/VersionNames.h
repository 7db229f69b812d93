//===- VersionNames.h - CUDA and library version numbers as text -*- C++ -*-===//
//
// The plan records versions as the libraries report them (integers); messages and `kiln
// inspect` show them the way their release notes do.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_PLAN_VERSIONNAMES_H
#define KILN_RUNTIME_PLAN_VERSIONNAMES_H

#include <cstdint>
#include <string>

namespace kiln::plan::detail {

/// CUDA numbers versions major*1000 + minor*10: 13000 is "13.0".
std::string cudaVersionName(uint32_t version);
/// cuDNN 9 and cuBLASLt number versions major*10000 + minor*100 + patch (91900 is "9.19.0");
/// cuDNN 8 and older used major*1000 + minor*100 + patch (8907 is "8.9.7").
std::string libraryVersionName(uint32_t version);
uint32_t libraryMajor(uint32_t version);

} // namespace kiln::plan::detail

#endif // KILN_RUNTIME_PLAN_VERSIONNAMES_H
