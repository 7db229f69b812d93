//===- KernelCopyStepTest.cpp - kernel and copy steps, I/O, load checks ----===//

#include "runtime/kiln_runtime.h"
#include "tests/gpu/GpuTestSupport.h"
#include "tests/gpu/TestKernels.h"

#include <filesystem>

namespace kiln::gpu_test {
namespace {

const std::vector<float> kW = {0.5f, -2.0f, 3.0f, 0.25f};

/// x -> affine(x, w) -> t -> copy -> y
plan::Plan affineThenCopy(PlanBuilder b) {
  uint32_t image = addTestKernels(b, b.plan().metadata.computeCapability);
  uint32_t x = b.input("x", {kKernelElements});
  uint32_t w = b.weights("w", kW);
  uint32_t t = b.arena("t", {kKernelElements});
  uint32_t y = b.output("y", {kKernelElements});
  b.step("affine", "kiln.elementwise", kernelStep(image, "affine", {x, w, t}));
  b.step("copy", "kiln.copy", plan::CopyStep{t, y, kKernelElements * sizeof(float)});
  return b.build();
}

std::vector<float> affineReference(const std::vector<float> &x) {
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    y[i] = x[i] * kW[i % 4] + 1.0f;
  return y;
}

/// NVRTC may contract x * w + 1 into one fma: allow that rounding difference, nothing more.
void expectAffine(const std::vector<float> &got, const std::vector<float> &x, const std::string &what) {
  std::vector<float> ref = affineReference(x);
  ASSERT_EQ(got.size(), ref.size()) << what;
  for (size_t i = 0; i < ref.size(); ++i)
    ASSERT_NEAR(got[i], ref[i], 1e-6f * std::max(1.0f, std::fabs(ref[i]))) << what << ": element " << i;
}

using KernelCopyStepTest = GpuTest;

TEST_F(KernelCopyStepTest, KernelReadsWeightsAndCopyMovesTheResult) {
  auto engine = load(affineThenCopy(builder()));
  ASSERT_NE(engine, nullptr);
  ASSERT_EQ(engine->inputs().size(), 1u);
  EXPECT_EQ(engine->inputs()[0].bytes, kKernelElements * sizeof(float));
  EXPECT_EQ(engine->tuningStats().tuned, 0u); // no gemm/conv
  for (bool graph : {true, false}) {
    auto ctx = context(*engine, graph);
    ASSERT_NE(ctx, nullptr);
    EXPECT_EQ(ctx->usesCudaGraph(), graph);
    std::vector<float> x = randomVector(kKernelElements, 1);
    auto out = runOnce(*ctx, *engine, {x});
    expectAffine(out[0], x, graph ? "graph" : "no graph");
  }
}

TEST_F(KernelCopyStepTest, RepeatedRunsSeeNewInputs) {
  auto engine = load(affineThenCopy(builder()));
  ASSERT_NE(engine, nullptr);
  auto ctx = context(*engine);
  ASSERT_NE(ctx, nullptr);
  for (uint32_t seed = 0; seed < 5; ++seed) {
    std::vector<float> x = randomVector(kKernelElements, seed);
    expectAffine(runOnce(*ctx, *engine, {x})[0], x, "run " + std::to_string(seed));
  }
}

TEST_F(KernelCopyStepTest, DeviceBoundInputsAndOutputs) {
  auto engine = load(affineThenCopy(builder()));
  ASSERT_NE(engine, nullptr);
  auto ctx = context(*engine);
  ASSERT_NE(ctx, nullptr);
  size_t bytes = kKernelElements * sizeof(float);
  void *dx = nullptr, *dy = nullptr;
  ASSERT_EQ(cudaMalloc(&dx, bytes), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dy, bytes), cudaSuccess);
  std::vector<float> x = randomVector(kKernelElements, 7), y(kKernelElements);
  ASSERT_EQ(cudaMemcpy(dx, x.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_TRUE(ctx->bindInput("x", dx).isOk());
  ASSERT_TRUE(ctx->bindOutput("y", dy).isOk());
  Status s = ctx->run();
  ASSERT_TRUE(s.isOk()) << s.toString();
  ASSERT_EQ(cudaMemcpy(y.data(), dy, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  expectAffine(y, x, "bound");
  // A bound output is not staged: reading it from the host is an error that says so.
  Status g = ctx->getOutput("y", y.data(), bytes);
  EXPECT_EQ(g.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(g.message().find("bound to device memory"), std::string::npos) << g.message();
  // Unbinding goes back to staging.
  ASSERT_TRUE(ctx->bindOutput("y", nullptr).isOk());
  ASSERT_TRUE(ctx->run().isOk());
  std::vector<float> staged(kKernelElements);
  ASSERT_TRUE(ctx->getOutput("y", staged.data(), bytes).isOk());
  expectAffine(staged, x, "staged");
  cudaFree(dx);
  cudaFree(dy);
}

TEST_F(KernelCopyStepTest, EnqueueSynchronizeAndTimedRun) {
  auto engine = load(affineThenCopy(builder()));
  ASSERT_NE(engine, nullptr);
  auto ctx = context(*engine);
  ASSERT_NE(ctx, nullptr);
  std::vector<float> x = randomVector(kKernelElements, 3), y(kKernelElements);
  ASSERT_TRUE(ctx->setInput("x", x.data(), x.size() * sizeof(float)).isOk());
  ASSERT_TRUE(ctx->enqueue().isOk());
  ASSERT_TRUE(ctx->synchronize().isOk());
  ASSERT_TRUE(ctx->getOutput("y", y.data(), y.size() * sizeof(float)).isOk());
  expectAffine(y, x, "bound");
  // getOutput after enqueue() waits for the run by itself.
  std::vector<float> x2 = randomVector(kKernelElements, 4);
  ASSERT_TRUE(ctx->setInput("x", x2.data(), x2.size() * sizeof(float)).isOk());
  ASSERT_TRUE(ctx->enqueue().isOk());
  ASSERT_TRUE(ctx->getOutput("y", y.data(), y.size() * sizeof(float)).isOk());
  expectAffine(y, x2, "after enqueue");

  auto timing = ctx->runTimed();
  ASSERT_TRUE(timing.isOk()) << timing.status().toString();
  EXPECT_GE(timing.value().hostToDeviceMs, 0.0f);
  EXPECT_GT(timing.value().computeMs, 0.0f);
  EXPECT_GE(timing.value().deviceToHostMs, 0.0f);
}

TEST_F(KernelCopyStepTest, IoErrorsNameTheTensor) {
  auto engine = load(affineThenCopy(builder()));
  ASSERT_NE(engine, nullptr);
  auto ctx = context(*engine);
  ASSERT_NE(ctx, nullptr);
  std::vector<float> x(kKernelElements);
  Status missing = ctx->run();
  EXPECT_EQ(missing.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(missing.message().find("'x'"), std::string::npos) << missing.message();
  Status wrongSize = ctx->setInput("x", x.data(), 12);
  EXPECT_EQ(wrongSize.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(wrongSize.message().find("4000 bytes"), std::string::npos) << wrongSize.message();
  Status unknown = ctx->setInput("nope", x.data(), 4000);
  EXPECT_EQ(unknown.code(), StatusCode::kNotFound);
  EXPECT_NE(unknown.message().find("'x'"), std::string::npos) << unknown.message(); // lists the real inputs
  Status noRun = ctx->getOutput("y", x.data(), 4000);
  EXPECT_EQ(noRun.code(), StatusCode::kInvalidArgument);
}

TEST_F(KernelCopyStepTest, PoisonShowsUnwrittenOutputElements) {
  PlanBuilder b = builder();
  uint32_t image = addTestKernels(b, b.plan().metadata.computeCapability);
  uint32_t x = b.input("x", {kKernelElements});
  uint32_t y = b.output("y", {kKernelElements});
  b.step("half", "kiln.elementwise", kernelStep(image, "firstHalf", {x, y}));
  auto engine = load(b.build());
  ASSERT_NE(engine, nullptr);
  auto ctx = context(*engine);
  ASSERT_NE(ctx, nullptr);
  ASSERT_TRUE(ctx->poison(0xFF).isOk());
  std::vector<float> in = randomVector(kKernelElements, 5);
  std::vector<float> out = runOnce(*ctx, *engine, {in})[0];
  for (int64_t i = 0; i < kKernelElements; ++i) {
    if (i < 500) {
      EXPECT_EQ(out[i], in[i]) << i;
    } else {
      uint32_t bits;
      std::memcpy(&bits, &out[i], 4);
      ASSERT_EQ(bits, 0xFFFFFFFFu) << "element " << i << " was written although no step writes it";
    }
  }
}

TEST_F(KernelCopyStepTest, OlderArchitecturePlanRunsThroughPtx) {
  // A plan built for sm_80: on a newer GPU its sm_80 cubin cannot run (another major), so the
  // loader JIT-compiles the image's PTX.
  PlanBuilder b = builder();
  b.plan().metadata.computeCapability = 80;
  uint32_t image = addTestKernels(b, 80);
  uint32_t x = b.input("x", {kKernelElements});
  uint32_t w = b.weights("w", kW);
  uint32_t y = b.output("y", {kKernelElements});
  b.step("affine", "kiln.elementwise", kernelStep(image, "affine", {x, w, y}));
  auto engine = load(b.build());
  ASSERT_NE(engine, nullptr);
  auto ctx = context(*engine);
  ASSERT_NE(ctx, nullptr);
  std::vector<float> in = randomVector(kKernelElements, 12);
  expectAffine(runOnce(*ctx, *engine, {in})[0], in, "sm_80 plan");
}

TEST_F(KernelCopyStepTest, PlanForANewerGpuIsIncompatible) {
  PlanBuilder b = builder();
  uint32_t x = b.input("x", {16});
  uint32_t y = b.output("y", {16});
  b.step("copy", "kiln.copy", plan::CopyStep{x, y, 64});
  plan::Plan plan = b.build();
  plan.metadata.computeCapability = runtime_->target().computeCapability + 10;
  auto engine = runtime_->loadEngine(std::move(plan));
  ASSERT_FALSE(engine.isOk());
  EXPECT_EQ(engine.status().code(), StatusCode::kIncompatible) << engine.status().toString();
  EXPECT_NE(engine.status().message().find("sm_"), std::string::npos) << engine.status().message();
}

TEST_F(KernelCopyStepTest, PlanWithAnotherCuBLASLtMajorIsIncompatible) {
  PlanBuilder b = builder();
  uint32_t a = b.input("a", {1, 1});
  uint32_t w = b.weights("w", {2.0f});
  uint32_t d = b.output("d", {1, 1});
  plan::GemmStep g;
  g.m = g.n = g.k = 1;
  g.a = a;
  g.b = w;
  g.d = d;
  b.step("mm", "kiln.matmul", g);
  plan::Plan plan = b.build();
  plan.metadata.cublasLtVersion += 10000 * 7; // seven majors ahead
  auto engine = runtime_->loadEngine(std::move(plan));
  ASSERT_FALSE(engine.isOk());
  EXPECT_EQ(engine.status().code(), StatusCode::kIncompatible) << engine.status().toString();
}

TEST_F(KernelCopyStepTest, PlanFileThroughTheCApi) {
  std::filesystem::path path = std::filesystem::temp_directory_path() / "kiln-gpu-test-affine.kiln";
  ASSERT_TRUE(plan::writePlanFile(affineThenCopy(builder()), path.string()).isOk());
  kiln_runtime_t *rt = nullptr;
  kiln_engine_t *engine = nullptr;
  kiln_context_t *ctx = nullptr;
  ASSERT_EQ(kiln_runtime_create(0, nullptr, &rt), KILN_STATUS_OK) << kiln_last_error();
  ASSERT_EQ(kiln_engine_load(rt, path.string().c_str(), &engine), KILN_STATUS_OK) << kiln_last_error();
  size_t inputs = 0, outputs = 0, bytes = 0;
  const char *name = nullptr;
  ASSERT_EQ(kiln_engine_num_inputs(engine, &inputs), KILN_STATUS_OK);
  ASSERT_EQ(kiln_engine_num_outputs(engine, &outputs), KILN_STATUS_OK);
  EXPECT_EQ(inputs, 1u);
  EXPECT_EQ(outputs, 1u);
  ASSERT_EQ(kiln_engine_input_name(engine, 0, &name), KILN_STATUS_OK);
  EXPECT_STREQ(name, "x");
  EXPECT_EQ(kiln_engine_output_name(engine, 1, &name), KILN_STATUS_INVALID_ARGUMENT);
  ASSERT_EQ(kiln_engine_output_bytes(engine, "y", &bytes), KILN_STATUS_OK);
  EXPECT_EQ(bytes, kKernelElements * sizeof(float));
  ASSERT_EQ(kiln_context_create(engine, 1, &ctx), KILN_STATUS_OK) << kiln_last_error();
  std::vector<float> x = randomVector(kKernelElements, 11), y(kKernelElements);
  ASSERT_EQ(kiln_context_set_input(ctx, "x", x.data(), bytes), KILN_STATUS_OK) << kiln_last_error();
  ASSERT_EQ(kiln_context_run(ctx), KILN_STATUS_OK) << kiln_last_error();
  ASSERT_EQ(kiln_context_get_output(ctx, "y", y.data(), bytes), KILN_STATUS_OK) << kiln_last_error();
  expectAffine(y, x, "bound");
  EXPECT_EQ(kiln_context_get_output(ctx, "z", y.data(), bytes), KILN_STATUS_NOT_FOUND);
  EXPECT_NE(std::string(kiln_last_error()).find("'z'"), std::string::npos) << kiln_last_error();
  // The context outlives its engine handle: it keeps the device state alive.
  kiln_engine_destroy(engine);
  ASSERT_EQ(kiln_context_run(ctx), KILN_STATUS_OK) << kiln_last_error();
  kiln_context_destroy(ctx);
  kiln_runtime_destroy(rt);
  std::filesystem::remove(path);

  kiln_runtime_t *rt2 = nullptr;
  ASSERT_EQ(kiln_runtime_create(0, nullptr, &rt2), KILN_STATUS_OK);
  kiln_engine_t *none = nullptr;
  EXPECT_NE(kiln_engine_load(rt2, "/nonexistent/model.kiln", &none), KILN_STATUS_OK);
  EXPECT_NE(std::string(kiln_last_error()).find("/nonexistent/model.kiln"), std::string::npos) << kiln_last_error();
  kiln_runtime_destroy(rt2);
}

} // namespace
} // namespace kiln::gpu_test
