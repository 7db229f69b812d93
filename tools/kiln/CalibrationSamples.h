//===- CalibrationSamples.h - a directory of calibration inputs -*- C++ -*-===//
//
// `kiln compile --precision auto --calibration DIR` and `kiln calibrate --calibration DIR` read
// their inputs the same way: .npy files named after the model's inputs, in DIR itself (one
// sample) or in one subdirectory per sample.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TOOLS_KILN_CALIBRATIONSAMPLES_H
#define KILN_TOOLS_KILN_CALIBRATIONSAMPLES_H

#include "llvm/Support/Error.h"

#include <map>
#include <string>
#include <vector>

namespace kiln::cli {

/// One calibration input: model input name -> .npy file.
struct CalibrationSample {
  std::string name;
  std::map<std::string, std::string> files;
};

/// The samples of a calibration directory: its .npy files (one sample), or one sample per
/// subdirectory holding .npy files, in name order. A file is named as `kiln run --output-dir`
/// names tensors (runtime::npyFileName of the input name). Every sample must give every input
/// in `inputNames`; the error names the sample and the input.
llvm::Expected<std::vector<CalibrationSample>> readCalibrationSamples(const std::string &dir,
                                                                      const std::vector<std::string> &inputNames);

} // namespace kiln::cli

#endif // KILN_TOOLS_KILN_CALIBRATIONSAMPLES_H
