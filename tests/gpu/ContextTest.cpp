//===- ContextTest.cpp - CUDA graph replay, threads, the one-thread rule ---===//

#include "tests/gpu/GpuTestSupport.h"
#include "tests/gpu/TestKernels.h"

#include <atomic>
#include <chrono>
#include <thread>

namespace kiln::gpu_test {
namespace {

/// x[1000] -> affine kernel -> t (read as 8 x 125) -> gemm with weights 125 x 16 (bias,
/// relu) -> u (read as 1 x 2 x 8 x 8) -> conv 4 x 2 x 3 x 3, pad 1 -> y[1, 4, 8, 8].
plan::Plan mixedPlan(PlanBuilder b) {
  uint32_t image = addTestKernels(b, b.plan().metadata.computeCapability);
  uint32_t x = b.input("x", {kKernelElements});
  uint32_t w = b.weights("w", {0.5f, -1.0f, 2.0f, 0.75f});
  uint32_t t = b.arena("t", {8, 125});
  uint32_t mw = b.weights("mw", randomVector(125 * 16, 21, -0.2f, 0.2f), {125, 16});
  uint32_t mb = b.weights("mb", randomVector(16, 22));
  uint32_t u = b.arena("u", {8, 16});
  uint32_t cw = b.weights("cw", randomVector(4 * 2 * 9, 23), {4, 2, 3, 3});
  uint32_t y = b.output("y", {1, 4, 8, 8});
  b.step("affine", "kiln.elementwise", kernelStep(image, "affine", {x, w, t}));
  plan::GemmStep g;
  g.m = 8;
  g.n = 16;
  g.k = 125;
  g.a = t;
  g.b = mw;
  g.d = u;
  g.bias = mb;
  g.activation = plan::Activation::Relu;
  b.step("fc", "kiln.matmul", g);
  plan::ConvStep c;
  c.xShape = {1, 2, 8, 8};
  c.wShape = {4, 2, 3, 3};
  c.yShape = {1, 4, 8, 8};
  c.pads = {1, 1};
  c.strides = {1, 1};
  c.dilations = {1, 1};
  c.x = u;
  c.w = cw;
  c.y = y;
  b.step("conv", "kiln.conv", c);
  return b.build();
}

using ContextTest = GpuTest;

TEST_F(ContextTest, GraphReplayMatchesStepByStep) {
  auto engine = load(mixedPlan(builder()));
  ASSERT_NE(engine, nullptr);
  EXPECT_EQ(engine->tuningStats().tuned, 2u);
  auto graphCtx = context(*engine, true);
  auto plainCtx = context(*engine, false);
  ASSERT_TRUE(graphCtx && plainCtx);
  EXPECT_TRUE(graphCtx->usesCudaGraph());
  EXPECT_FALSE(plainCtx->usesCudaGraph());
  for (uint32_t seed = 0; seed < 3; ++seed) {
    std::vector<float> x = randomVector(kKernelElements, 100 + seed);
    ASSERT_TRUE(graphCtx->poison(0xFF).isOk());
    std::vector<float> viaGraph = runOnce(*graphCtx, *engine, {x})[0];
    std::vector<float> stepByStep = runOnce(*plainCtx, *engine, {x})[0];
    EXPECT_EQ(viaGraph, stepByStep) << "seed " << seed; // same algorithms, same bits
    for (float v : viaGraph)
      ASSERT_TRUE(std::isfinite(v));
  }
}

TEST_F(ContextTest, TwoContextsOnTwoThreads) {
  auto engine = load(mixedPlan(builder()));
  ASSERT_NE(engine, nullptr);
  // Expected outputs from one context, sequentially.
  auto refCtx = context(*engine, false);
  ASSERT_NE(refCtx, nullptr);
  std::vector<std::vector<float>> xs, ys;
  for (uint32_t seed = 0; seed < 8; ++seed) {
    xs.push_back(randomVector(kKernelElements, 200 + seed));
    ys.push_back(runOnce(*refCtx, *engine, {xs.back()})[0]);
  }
  std::atomic<int> failures{0};
  auto worker = [&](int id) {
    // Contexts are created concurrently too: Engine::createContext is thread-safe.
    auto ctx = engine->createContext({});
    if (!ctx.isOk()) {
      ++failures;
      ADD_FAILURE() << "thread " << id << ": " << ctx.status().toString();
      return;
    }
    ExecutionContext &c = *ctx.value();
    std::vector<float> y(ys[0].size());
    for (int iter = 0; iter < 50; ++iter) {
      size_t which = static_cast<size_t>((iter + id * 3) % 8);
      Status s = c.setInput("x", xs[which].data(), xs[which].size() * sizeof(float));
      if (s.isOk())
        s = c.run();
      if (s.isOk())
        s = c.getOutput("y", y.data(), y.size() * sizeof(float));
      if (!s.isOk() || y != ys[which]) {
        ++failures;
        ADD_FAILURE() << "thread " << id << " iteration " << iter << ": " << s.toString();
        return;
      }
    }
  };
  std::thread a(worker, 0), b(worker, 1);
  a.join();
  b.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST_F(ContextTest, ConcurrentUseOfOneContextIsAnError) {
  PlanBuilder b = builder();
  uint32_t image = addTestKernels(b, b.plan().metadata.computeCapability);
  uint32_t x = b.input("x", {kKernelElements});
  uint32_t y = b.output("y", {kKernelElements});
  b.step("slow", "kiln.elementwise", kernelStep(image, "slowCopy", {x, y}));
  auto engine = load(b.build());
  ASSERT_NE(engine, nullptr);
  auto ctx = context(*engine);
  ASSERT_NE(ctx, nullptr);
  std::vector<float> in = randomVector(kKernelElements, 9);
  ASSERT_TRUE(ctx->setInput("x", in.data(), in.size() * sizeof(float)).isOk());

  Status first;
  std::thread runner([&] { first = ctx->run(); });
  // Wait until the runner's work is on the device (it holds the context until it is done).
  auto stream = static_cast<cudaStream_t>(ctx->stream());
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (cudaStreamQuery(stream) != cudaErrorNotReady && std::chrono::steady_clock::now() < deadline)
    std::this_thread::yield();
  Status second = ctx->run();
  runner.join();
  EXPECT_TRUE(first.isOk()) << first.toString();
  EXPECT_EQ(second.code(), StatusCode::kInvalidArgument) << second.toString();
  EXPECT_NE(second.message().find("in use by another thread"), std::string::npos) << second.message();
  // Once the first run is over the context works again, with intact results.
  std::vector<float> out(kKernelElements);
  ASSERT_TRUE(ctx->getOutput("y", out.data(), out.size() * sizeof(float)).isOk());
  EXPECT_EQ(out, in);
}

TEST_F(ContextTest, ContextOutlivesEngineAndRuntime) {
  auto engine = load(mixedPlan(builder()));
  ASSERT_NE(engine, nullptr);
  auto ctx = context(*engine);
  ASSERT_NE(ctx, nullptr);
  std::vector<float> x = randomVector(kKernelElements, 5);
  std::vector<float> before = runOnce(*ctx, *engine, {x})[0];
  std::vector<TensorDesc> outputs = engine->outputs();
  engine.reset();
  runtime_.reset();
  ASSERT_TRUE(ctx->setInput("x", x.data(), x.size() * sizeof(float)).isOk());
  ASSERT_TRUE(ctx->run().isOk());
  std::vector<float> after(before.size());
  ASSERT_TRUE(ctx->getOutput("y", after.data(), outputs[0].bytes).isOk());
  EXPECT_EQ(after, before);
}

} // namespace
} // namespace kiln::gpu_test
