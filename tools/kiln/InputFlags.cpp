//===- InputFlags.cpp - the inputs of one run of a model ------------------===//

#include "InputFlags.h"

namespace kiln::cli {

namespace cl = llvm::cl;

InputFlags::InputFlags(cl::SubCommand &sub, Categories &categories)
    : inputs("input", cl::value_desc("name=file.npy"),
             cl::desc("Value of an input (repeatable); inputs not given are random with a fixed\n"
                      "seed (floats uniform in [-1, 1), integers in [0, 10), bools fair coins),\n"
                      "the same values in kiln eval, run and bench"),
             cl::sub(sub), cl::cat(categories.input)),
      randomSeed("seed", cl::value_desc("n"), cl::init(0), cl::desc("Seed of the random inputs (default 0)"),
                 cl::sub(sub), cl::cat(categories.input)) {}

llvm::Expected<std::map<std::string, std::string>> InputFlags::inputFiles() const {
  std::map<std::string, std::string> files;
  for (llvm::StringRef value : inputs) {
    auto [name, file] = value.split('=');
    if (name.empty() || file.empty())
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "--input '" + value + "' is not name=file.npy");
    files[name.str()] = file.str();
  }
  return files;
}

} // namespace kiln::cli
