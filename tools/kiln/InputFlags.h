//===- InputFlags.h - the inputs of one run of a model ---------*- C++ -*-===//
//
// `kiln eval`, `kiln run` and `kiln bench` take a model's inputs the same way: .npy files by
// input name, random values with a fixed seed for the others (the same values in all three,
// so their outputs compare).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TOOLS_KILN_INPUTFLAGS_H
#define KILN_TOOLS_KILN_INPUTFLAGS_H

#include "CommandLine.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <string>

namespace kiln::cli {

class InputFlags {
public:
  InputFlags(llvm::cl::SubCommand &sub, Categories &categories);

  /// Input name -> .npy file; an error (a usage error) for a value that is not name=file.npy.
  llvm::Expected<std::map<std::string, std::string>> inputFiles() const;
  uint64_t seed() const { return randomSeed; }

private:
  llvm::cl::list<std::string> inputs;
  llvm::cl::opt<uint64_t> randomSeed;
};

} // namespace kiln::cli

#endif // KILN_TOOLS_KILN_INPUTFLAGS_H
