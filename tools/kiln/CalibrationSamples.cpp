//===- CalibrationSamples.cpp - a directory of calibration inputs ---------===//

#include "CalibrationSamples.h"

#include "runtime/Npy.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <set>

namespace kiln::cli {

namespace {

llvm::Error sampleError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The .npy files directly in `dir`, by file name.
std::set<std::string> npyFilesIn(const std::string &dir) {
  std::set<std::string> out;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->type() != llvm::sys::fs::file_type::directory_file && llvm::StringRef(it->path()).ends_with(".npy"))
      out.insert(llvm::sys::path::filename(it->path()).str());
  return out;
}

} // namespace

llvm::Expected<std::vector<CalibrationSample>> readCalibrationSamples(const std::string &dir,
                                                                      const std::vector<std::string> &inputNames) {
  if (!llvm::sys::fs::is_directory(dir))
    return sampleError("--calibration '" + dir + "' is not a directory");
  std::vector<std::string> sampleDirs;
  if (!npyFilesIn(dir).empty()) {
    sampleDirs.push_back(dir);
  } else {
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
      if (it->type() == llvm::sys::fs::file_type::directory_file && !npyFilesIn(it->path()).empty())
        sampleDirs.push_back(it->path());
    std::sort(sampleDirs.begin(), sampleDirs.end());
  }
  if (sampleDirs.empty())
    return sampleError("--calibration '" + dir +
                       "' holds no .npy files, in itself or in subdirectories (one per calibration input)");
  std::vector<CalibrationSample> samples;
  for (const std::string &sampleDir : sampleDirs) {
    CalibrationSample sample;
    sample.name = sampleDir == dir ? dir : llvm::sys::path::filename(sampleDir).str();
    std::set<std::string> files = npyFilesIn(sampleDir);
    for (const std::string &input : inputNames) {
      std::string file = runtime::npyFileName(input);
      if (!files.count(file))
        return sampleError("calibration input '" + sampleDir + "' has no " + file + " for model input '" + input +
                           "'");
      llvm::SmallString<256> path(sampleDir);
      llvm::sys::path::append(path, file);
      sample.files[input] = std::string(path);
    }
    samples.push_back(std::move(sample));
  }
  return samples;
}

} // namespace kiln::cli
