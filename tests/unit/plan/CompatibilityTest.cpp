//===- CompatibilityTest.cpp - checkCompatibility --------------------------===//

#include "PlanFixtures.h"

#include <gtest/gtest.h>

namespace kiln::plan {
namespace {
using namespace kiln::plan::testing;
using runtime::StatusCode;

/// An H200 with the libraries the sample plan was built against.
TargetInfo h200() { return TargetInfo{90, 13000, 91900, 130100}; }

void expectIncompatible(const Status &s, const std::string &message) {
  EXPECT_EQ(s.code(), StatusCode::kIncompatible) << s.toString();
  EXPECT_EQ(s.message(), message);
}

TEST(Compatibility, SameGpuAndLibraries) {
  Plan plan = makeSamplePlan();
  EXPECT_TRUE(checkCompatibility(plan.metadata, h200()).isOk());
  EXPECT_TRUE(checkCompatibility(plan, h200()).isOk());
}

TEST(Compatibility, NewerLibrariesOfTheSameMajorAreFine) {
  Plan plan = makeSamplePlan();
  TargetInfo target{90, 13020, 92000, 130400}; // newer driver, cuDNN 9.20, cuBLASLt 13.4
  EXPECT_TRUE(checkCompatibility(plan, target).isOk()) << checkCompatibility(plan, target).toString();
  target.cudnnVersion = 90100; // an older 9.x: same major, same API
  EXPECT_TRUE(checkCompatibility(plan, target).isOk());
}

TEST(Compatibility, OlderGpuNeedsARecompile) {
  Plan plan = makeSamplePlan();
  TargetInfo a100 = h200();
  a100.computeCapability = 80;
  expectIncompatible(checkCompatibility(plan, a100),
                     "the plan is built for sm_90, this GPU is sm_80: recompile the model with `kiln compile --target "
                     "sm_80`");
  expectIncompatible(checkCompatibility(plan.metadata, a100),
                     "the plan is built for sm_90, this GPU is sm_80: recompile the model with `kiln compile --target "
                     "sm_80`");
}

TEST(Compatibility, NewerMinorOfTheSameMajorRunsTheCubin) {
  // CUDA binary compatibility: an sm_86 cubin runs on sm_89, even without PTX.
  Plan plan = makeSamplePlan();
  plan.metadata.computeCapability = 86;
  for (KernelImage &image : plan.images)
    image.ptx.clear(), image.smVersion = 86;
  plan.images[1].cubin = {1, 2, 3};
  TargetInfo ada = h200();
  ada.computeCapability = 89;
  EXPECT_TRUE(checkCompatibility(plan, ada).isOk()) << checkCompatibility(plan, ada).toString();
}

TEST(Compatibility, NewerArchitectureNeedsPtx) {
  Plan plan = makeSamplePlan();
  TargetInfo blackwell = h200();
  blackwell.computeCapability = 100;
  EXPECT_TRUE(checkCompatibility(plan, blackwell).isOk()); // both images carry PTX

  plan.images[0].ptx.clear();
  expectIncompatible(checkCompatibility(plan, blackwell),
                     "the plan is built for sm_90, this GPU is sm_100 and the plan's kernels carry no PTX to "
                     "JIT-compile: recompile the model with `kiln compile --target sm_100`");
  // Metadata alone cannot see the images (documented in Plan.h).
  EXPECT_TRUE(checkCompatibility(plan.metadata, blackwell).isOk());

  plan.images.clear(); // no generated kernels at all: nothing to JIT
  plan.steps.erase(plan.steps.begin() + 6);
  plan.steps.erase(plan.steps.begin() + 1);
  EXPECT_TRUE(checkCompatibility(plan, blackwell).isOk());
}

TEST(Compatibility, OldDriverMustBeUpgraded) {
  Plan plan = makeSamplePlan();
  TargetInfo target = h200();
  target.cudaDriverVersion = 12080;
  expectIncompatible(checkCompatibility(plan, target),
                     "the plan is built with CUDA 13.0 but the driver supports only CUDA 12.8: upgrade the NVIDIA "
                     "driver (or recompile with an older CUDA)");
  target.cudaDriverVersion = 0; // what cudaDriverGetVersion reports without a driver
  expectIncompatible(checkCompatibility(plan.metadata, target),
                     "no CUDA driver is installed; the plan needs one that supports CUDA 13.0 or newer");
}

TEST(Compatibility, OtherCudnnMajorVersion) {
  Plan plan = makeSamplePlan();
  TargetInfo target = h200();
  target.cudnnVersion = 8907; // cuDNN 8 numbered major*1000
  expectIncompatible(checkCompatibility(plan, target),
                     "the plan was built against cuDNN 9.19.0 but this machine has cuDNN 8.9.7, another major "
                     "version: recompile the model with a `kiln compile` built against cuDNN 8.x, or install cuDNN "
                     "9.x");
  target.cudnnVersion = 0;
  expectIncompatible(checkCompatibility(plan, target),
                     "the plan needs cuDNN 9.x (built with 9.19.0) but no cuDNN was found: install it (or put it on "
                     "the library path)");
}

TEST(Compatibility, OtherCublasLtMajorVersion) {
  Plan plan = makeSamplePlan();
  TargetInfo target = h200();
  target.cublasLtVersion = 120902;
  expectIncompatible(checkCompatibility(plan.metadata, target),
                     "the plan was built against cuBLASLt 13.1.0 but this machine has cuBLASLt 12.9.2, another major "
                     "version: recompile the model with a `kiln compile` built against cuBLASLt 12.x, or install "
                     "cuBLASLt 13.x");
}

TEST(Compatibility, OnlyLibrariesThePlanCallsAreChecked) {
  // A plan of generated kernels and copies runs without cuDNN and cuBLASLt, even though the
  // compiler recorded the versions it had.
  Plan plan = makeSamplePlan();
  plan.steps = {plan.steps[1], plan.steps[3], plan.steps[6]};
  TargetInfo bare{90, 13000, 0, 0};
  EXPECT_TRUE(checkCompatibility(plan, bare).isOk()) << checkCompatibility(plan, bare).toString();
  // From the metadata alone a recorded version means "needed".
  EXPECT_EQ(checkCompatibility(plan.metadata, bare).code(), StatusCode::kIncompatible);
  plan.metadata.cudnnVersion = plan.metadata.cublasLtVersion = 0;
  EXPECT_TRUE(checkCompatibility(plan.metadata, bare).isOk());
}

TEST(Compatibility, UnknownDeviceIsACallerError) {
  Status s = checkCompatibility(makeSamplePlan(), TargetInfo{});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("compute capability is 0"), std::string::npos) << s.message();
}

} // namespace
} // namespace kiln::plan
