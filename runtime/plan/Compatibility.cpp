//===- Compatibility.cpp - can this machine run this plan? -----------------===//
//
// A valid plan can still be unusable on a given machine. The rules follow CUDA's own: a cubin
// runs on its architecture and on later minor versions of the same major (binary
// compatibility); anything newer needs PTX that the driver JIT-compiles; an older GPU cannot
// run it at all. The driver must support the CUDA version NVRTC compiled for. cuDNN and
// cuBLASLt keep their APIs (and our use of them) within a major version only.
//
//===----------------------------------------------------------------------===//

#include "runtime/plan/Plan.h"
#include "runtime/plan/VersionNames.h"

namespace kiln::plan {
namespace {
using runtime::StatusCode;
using detail::cudaVersionName;
using detail::libraryMajor;
using detail::libraryVersionName;

std::string smName(uint32_t cc) { return "sm_" + std::to_string(cc); }

/// What of the machine the plan actually needs. From metadata alone: a version of 0 means the
/// plan does not call that library (validatePlan requires a version when it does).
struct Needs {
  bool ptxForNewerGpus = true;
  bool cudnn = true;
  bool cublasLt = true;
};

Status checkLibrary(const char *library, bool needed, uint32_t planVersion, uint32_t targetVersion) {
  if (!needed || planVersion == 0)
    return Status::ok();
  if (targetVersion == 0)
    return Status(StatusCode::kIncompatible, std::string("the plan needs ") + library + " " +
                                                 std::to_string(libraryMajor(planVersion)) + ".x (built with " +
                                                 libraryVersionName(planVersion) + ") but no " + library +
                                                 " was found: install it (or put it on the library path)");
  if (libraryMajor(planVersion) != libraryMajor(targetVersion))
    return Status(StatusCode::kIncompatible,
                  std::string("the plan was built against ") + library + " " + libraryVersionName(planVersion) +
                      " but this machine has " + library + " " + libraryVersionName(targetVersion) +
                      ", another major version: recompile the model with a `kiln compile` built against " + library +
                      " " + std::to_string(libraryMajor(targetVersion)) + ".x, or install " + library + " " +
                      std::to_string(libraryMajor(planVersion)) + ".x");
  return Status::ok();
}

Status check(const Metadata &metadata, const TargetInfo &target, const Needs &needs) {
  uint32_t planCc = metadata.computeCapability, deviceCc = target.computeCapability;
  if (deviceCc == 0)
    return Status(StatusCode::kInvalidArgument,
                  "the target's compute capability is 0: query the device (cudaGetDeviceProperties) first");
  if (deviceCc < planCc)
    return Status(StatusCode::kIncompatible, "the plan is built for " + smName(planCc) + ", this GPU is " +
                                                 smName(deviceCc) + ": recompile the model with `kiln compile --target " +
                                                 smName(deviceCc) + "`");
  bool cubinsRun = deviceCc / 10 == planCc / 10; // and deviceCc >= planCc, from above
  if (!cubinsRun && !needs.ptxForNewerGpus)
    return Status(StatusCode::kIncompatible, "the plan is built for " + smName(planCc) + ", this GPU is " +
                                                 smName(deviceCc) + " and the plan's kernels carry no PTX to JIT-compile: "
                                                 "recompile the model with `kiln compile --target " + smName(deviceCc) + "`");
  if (metadata.cudaVersion != 0 && target.cudaDriverVersion < metadata.cudaVersion) {
    if (target.cudaDriverVersion == 0)
      return Status(StatusCode::kIncompatible, "no CUDA driver is installed; the plan needs one that supports CUDA " +
                                                   cudaVersionName(metadata.cudaVersion) + " or newer");
    return Status(StatusCode::kIncompatible, "the plan is built with CUDA " + cudaVersionName(metadata.cudaVersion) +
                                                 " but the driver supports only CUDA " +
                                                 cudaVersionName(target.cudaDriverVersion) +
                                                 ": upgrade the NVIDIA driver (or recompile with an older CUDA)");
  }
  if (Status s = checkLibrary("cuDNN", needs.cudnn, metadata.cudnnVersion, target.cudnnVersion); !s.isOk())
    return s;
  return checkLibrary("cuBLASLt", needs.cublasLt, metadata.cublasLtVersion, target.cublasLtVersion);
}

} // namespace

Status checkCompatibility(const Metadata &metadata, const TargetInfo &target) {
  return check(metadata, target, Needs{});
}

Status checkCompatibility(const Plan &plan, const TargetInfo &target) {
  Needs needs{.ptxForNewerGpus = true, .cudnn = false, .cublasLt = false};
  for (const KernelImage &image : plan.images)
    needs.ptxForNewerGpus = needs.ptxForNewerGpus && !image.ptx.empty();
  for (const Step &step : plan.steps) {
    needs.cudnn = needs.cudnn || std::holds_alternative<ConvStep>(step.params) ||
                  std::holds_alternative<AttentionStep>(step.params);
    needs.cublasLt = needs.cublasLt || std::holds_alternative<GemmStep>(step.params);
  }
  return check(plan.metadata, target, needs);
}

} // namespace kiln::plan
