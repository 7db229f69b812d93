//===- GpuTestSupport.h - fixtures and plan building for GPU tests -*- C++ -*-===//
//
// GPU tests build small plans in memory (buffers, steps, weights), load them into a real
// Runtime and compare against CPU references. Without a CUDA device every test reports
// SKIPPED with the reason (GTEST_SKIP in the fixture).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TESTS_GPU_GPUTESTSUPPORT_H
#define KILN_TESTS_GPU_GPUTESTSUPPORT_H

#include "runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <vector>

namespace kiln::gpu_test {

/// Why GPU tests cannot run here, or "" when a device is usable.
inline std::string noDeviceReason() {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess)
    return std::string("no CUDA device (") + cudaGetErrorName(err) + "): GPU tests need an NVIDIA GPU; run `ctest -L gpu` "
                                                                       "on the GPU box";
  if (count == 0)
    return "no CUDA device: GPU tests need an NVIDIA GPU; run `ctest -L gpu` on the GPU box";
  return "";
}

/// Builds a Plan: arena/weights buffers at aligned offsets, I/O bindings, steps.
class PlanBuilder {
public:
  /// Metadata as a compiler on this machine would write it (the device's CC and libraries).
  explicit PlanBuilder(const plan::TargetInfo &target, const std::string &model = "test") : target_(target) {
    plan::Metadata &m = plan_.metadata;
    m.compilerVersion = "0.1.0";
    m.computeCapability = target.computeCapability;
    m.cudaVersion = CUDART_VERSION;
    m.cudnnVersion = 0;
    m.cublasLtVersion = 0;
    m.precision = "fp32";
    m.model = model;
  }

  /// An arena tensor (every buffer records its element type and shape).
  uint32_t arena(const std::string &name, std::vector<int64_t> shape, plan::DType dtype = plan::DType::F32) {
    uint64_t offset = arenaTop_;
    uint64_t bytes = tensorBytes(dtype, shape);
    arenaTop_ = align(offset + bytes);
    plan_.buffers.push_back({name, plan::MemorySpace::Arena, offset, bytes, dtype, std::move(shape)});
    return static_cast<uint32_t>(plan_.buffers.size() - 1);
  }
  /// An f32 weights tensor holding `values`; shape {values.size()} unless given.
  uint32_t weights(const std::string &name, const std::vector<float> &values, std::vector<int64_t> shape = {}) {
    if (shape.empty())
      shape = {static_cast<int64_t>(values.size())};
    return weightsRaw(name, plan::DType::F32, std::move(shape), values.data());
  }
  /// A weights tensor of any element type, its bytes read from `data`.
  uint32_t weightsRaw(const std::string &name, plan::DType dtype, std::vector<int64_t> shape, const void *data) {
    uint64_t offset = weights_.size();
    uint64_t bytes = tensorBytes(dtype, shape);
    weights_.resize(align(offset + bytes), 0);
    std::memcpy(weights_.data() + offset, data, bytes);
    plan_.buffers.push_back({name, plan::MemorySpace::Weights, offset, bytes, dtype, std::move(shape)});
    return static_cast<uint32_t>(plan_.buffers.size() - 1);
  }
  /// A model input/output with its own arena buffer; returns the buffer index.
  uint32_t input(const std::string &name, std::vector<int64_t> shape, plan::DType dtype = plan::DType::F32) {
    return io(plan_.inputs, name, shape, dtype);
  }
  uint32_t output(const std::string &name, std::vector<int64_t> shape, plan::DType dtype = plan::DType::F32) {
    return io(plan_.outputs, name, shape, dtype);
  }
  void step(const std::string &name, const std::string &op, plan::StepParams params) {
    if (std::holds_alternative<plan::GemmStep>(params))
      plan_.metadata.cublasLtVersion = target_.cublasLtVersion;
    if (std::holds_alternative<plan::ConvStep>(params) || std::holds_alternative<plan::AttentionStep>(params))
      plan_.metadata.cudnnVersion = target_.cudnnVersion;
    plan_.steps.push_back({name, op, {}, std::move(params)});
  }
  uint32_t image(const std::string &name, std::vector<uint8_t> cubin, std::string ptx) {
    plan_.images.push_back({name, plan_.metadata.computeCapability, std::move(cubin), std::move(ptx)});
    return static_cast<uint32_t>(plan_.images.size() - 1);
  }
  plan::Plan &plan() { return plan_; }
  plan::Plan build() {
    plan_.metadata.arenaBytes = arenaTop_;
    plan_.metadata.arenaLowerBound = arenaTop_;
    plan_.setWeights(weights_);
    return plan_;
  }

private:
  static uint64_t align(uint64_t v) { return (v + plan::kBufferAlignment - 1) / plan::kBufferAlignment * plan::kBufferAlignment; }
  static uint64_t tensorBytes(plan::DType dtype, const std::vector<int64_t> &shape) {
    return plan::denseBytes(shape, dtype).value();
  }
  uint32_t io(std::vector<plan::TensorBinding> &list, const std::string &name, const std::vector<int64_t> &shape,
             plan::DType dtype) {
    uint32_t buffer = arena(name, shape, dtype);
    list.push_back({name, dtype, shape, buffer});
    return buffer;
  }

  plan::TargetInfo target_;
  plan::Plan plan_;
  uint64_t arenaTop_ = 0;
  std::vector<uint8_t> weights_;
};

/// A Runtime on device 0 with progress messages collected (tests check warnings).
class GpuTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string reason = noDeviceReason();
    if (!reason.empty())
      GTEST_SKIP() << reason;
    runtime_ = makeRuntime("");
    ASSERT_NE(runtime_, nullptr);
  }

  std::unique_ptr<Runtime> makeRuntime(const std::string &cachePath) {
    RuntimeOptions options;
    options.timingCachePath = cachePath;
    options.workspaceLimitBytes = 64ull << 20;
    options.progress = [this](const std::string &m) {
      std::lock_guard<std::mutex> lock(progressMutex_);
      progress_.push_back(m);
    };
    auto rt = Runtime::create(options);
    EXPECT_TRUE(rt.isOk()) << rt.status().toString();
    return rt.isOk() ? std::move(rt).value() : nullptr;
  }

  std::unique_ptr<Engine> load(plan::Plan plan, Runtime *rt = nullptr) {
    auto engine = (rt ? rt : runtime_.get())->loadEngine(std::move(plan));
    EXPECT_TRUE(engine.isOk()) << engine.status().toString();
    return engine.isOk() ? std::move(engine).value() : nullptr;
  }

  std::unique_ptr<ExecutionContext> context(const Engine &engine, bool graph = true) {
    auto ctx = engine.createContext({graph});
    EXPECT_TRUE(ctx.isOk()) << ctx.status().toString();
    return ctx.isOk() ? std::move(ctx).value() : nullptr;
  }

  PlanBuilder builder(const std::string &model = "test") { return PlanBuilder(runtime_->target(), model); }

  bool progressContains(const std::string &needle) {
    std::lock_guard<std::mutex> lock(progressMutex_);
    for (const std::string &m : progress_)
      if (m.find(needle) != std::string::npos)
        return true;
    return false;
  }

  std::unique_ptr<Runtime> runtime_;
  std::mutex progressMutex_;
  std::vector<std::string> progress_;
};

inline std::vector<float> randomVector(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

/// Sets every input from `inputs` (by position), runs, reads output 0..n.
inline std::vector<std::vector<float>> runOnce(ExecutionContext &ctx, const Engine &engine,
                                               const std::vector<std::vector<float>> &inputs) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    Status s = ctx.setInput(engine.inputs()[i].name, inputs[i].data(), inputs[i].size() * sizeof(float));
    EXPECT_TRUE(s.isOk()) << s.toString();
  }
  Status s = ctx.run();
  EXPECT_TRUE(s.isOk()) << s.toString();
  std::vector<std::vector<float>> outputs;
  for (const TensorDesc &out : engine.outputs()) {
    std::vector<float> v(out.bytes / sizeof(float));
    Status g = ctx.getOutput(out.name, v.data(), out.bytes);
    EXPECT_TRUE(g.isOk()) << g.toString();
    outputs.push_back(std::move(v));
  }
  return outputs;
}

/// |got - want| <= tol * scale[i] for every element (scale: the magnitude of the terms summed).
inline void expectClose(const std::vector<float> &got, const std::vector<double> &want,
                        const std::vector<double> &scale, double tol, const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    double err = std::fabs(static_cast<double>(got[i]) - want[i]);
    if (!(err <= tol * std::max(scale[i], 1e-3))) {
      if (++bad <= 5)
        ADD_FAILURE() << what << ": element " << i << " is " << got[i] << ", expected " << want[i] << " (error " << err
                      << ", allowed " << tol * std::max(scale[i], 1e-3) << ")";
    }
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << got.size() << " elements differ";
}

} // namespace kiln::gpu_test

#endif // KILN_TESTS_GPU_GPUTESTSUPPORT_H
