//===- Nvrtc.cpp - compile generated CUDA with NVRTC ----------------------===//

#include "codegen/kernels/Nvrtc.h"

#include <nvrtc.h>

#include <cstdlib>
#include <memory>
#include <sstream>

namespace kiln::codegen {
namespace {

using runtime::Status;
using runtime::StatusCode;

/// Where cuda_fp16.h and friends are: $KILN_CUDA_INCLUDE, else the toolkit Kiln was built with.
std::string cudaIncludeDir() {
  if (const char *dir = std::getenv("KILN_CUDA_INCLUDE"); dir && *dir)
    return dir;
  std::string dirs = KILN_CUDA_INCLUDE_DIR;
  return dirs.substr(0, dirs.find(';'));
}

struct ProgramDeleter {
  void operator()(nvrtcProgram program) const { nvrtcDestroyProgram(&program); }
};
using ProgramPtr = std::unique_ptr<_nvrtcProgram, ProgramDeleter>;

std::string firstLines(const std::string &text, int lines) {
  std::istringstream in(text);
  std::string line, out;
  for (int i = 0; i < lines && std::getline(in, line); ++i)
    out += line + "\n";
  return out;
}

/// One NVRTC run for `arch` ("sm_90" gives a cubin, "compute_90" PTX).
runtime::StatusOr<std::vector<char>> compileFor(const std::string &source, const std::string &name,
                                                const std::string &arch, bool wantCubin) {
  nvrtcProgram raw = nullptr;
  if (nvrtcResult r = nvrtcCreateProgram(&raw, source.c_str(), name.c_str(), 0, nullptr, nullptr);
      r != NVRTC_SUCCESS)
    return Status(StatusCode::kInternal, "NVRTC could not create program '" + name + "': " + nvrtcGetErrorString(r));
  ProgramPtr program(raw);
  std::string archOption = "--gpu-architecture=" + arch;
  std::string includeOption = "--include-path=" + cudaIncludeDir();
  // No fast math: kernels must round like the reference interpreter (FMA contraction stays on).
  const char *options[] = {archOption.c_str(), includeOption.c_str(), "--std=c++17",
                           "--device-as-default-execution-space"};
  nvrtcResult result = nvrtcCompileProgram(raw, sizeof(options) / sizeof(options[0]), options);
  if (result != NVRTC_SUCCESS) {
    size_t logSize = 0;
    nvrtcGetProgramLogSize(raw, &logSize);
    std::string log(logSize, '\0');
    if (logSize)
      nvrtcGetProgramLog(raw, log.data());
    return Status(StatusCode::kInternal, "NVRTC failed to compile '" + name + "' for " + arch + " (" +
                                             nvrtcGetErrorString(result) + "; CUDA headers from " +
                                             cudaIncludeDir() + ", override with KILN_CUDA_INCLUDE):\n" +
                                             firstLines(log, 40));
  }
  size_t size = 0;
  std::vector<char> out;
  if (wantCubin) {
    nvrtcGetCUBINSize(raw, &size);
    out.resize(size);
    if (size)
      nvrtcGetCUBIN(raw, out.data());
  } else {
    nvrtcGetPTXSize(raw, &size);
    out.resize(size);
    if (size)
      nvrtcGetPTX(raw, out.data());
  }
  if (out.empty())
    return Status(StatusCode::kInternal, "NVRTC produced no " + std::string(wantCubin ? "cubin" : "PTX") +
                                             " for '" + name + "'");
  return out;
}

} // namespace

runtime::StatusOr<CompiledProgram> compileWithNvrtc(const std::string &source, const std::string &name,
                                                    const NvrtcOptions &options) {
  CompiledProgram program;
  auto cubin = compileFor(source, name, "sm_" + std::to_string(options.smVersion), /*wantCubin=*/true);
  if (!cubin.isOk())
    return cubin.status();
  program.cubin.assign(cubin.value().begin(), cubin.value().end());
  if (options.emitPtx) {
    auto ptx = compileFor(source, name, "compute_" + std::to_string(options.smVersion), /*wantCubin=*/false);
    if (!ptx.isOk())
      return ptx.status();
    program.ptx.assign(ptx.value().begin(), ptx.value().end());
    while (!program.ptx.empty() && program.ptx.back() == '\0')
      program.ptx.pop_back();
  }
  return program;
}

uint32_t nvrtcToolkitVersion() {
  int major = 0, minor = 0;
  ::nvrtcVersion(&major, &minor);
  return static_cast<uint32_t>(major * 1000 + minor * 10);
}

} // namespace kiln::codegen
