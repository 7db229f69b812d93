//===- TuningCacheTest.cpp - tuning at load and the timing cache file ------===//

#include "tests/gpu/GpuTestSupport.h"

#include "runtime/engine/CudnnGraph.h"
#include "runtime/engine/CudnnPlanStore.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

namespace kiln::gpu_test {
namespace {

/// Two identical gemms (one problem), a different gemm and a conv: three distinct problems.
plan::Plan threeProblems(PlanBuilder b) {
  uint32_t a = b.input("a", {33, 65});
  uint32_t w1 = b.weights("w1", randomVector(65 * 17, 1));
  uint32_t w2 = b.weights("w2", randomVector(65 * 17, 2));
  uint32_t w3 = b.weights("w3", randomVector(17 * 9, 3));
  uint32_t d1 = b.output("d1", {33, 17});
  uint32_t d2 = b.output("d2", {33, 17});
  uint32_t d3 = b.output("d3", {33, 9});
  auto gemm = [&](uint32_t lhs, uint32_t rhs, uint32_t out, int64_t m, int64_t n, int64_t k) {
    plan::GemmStep g;
    g.m = m;
    g.n = n;
    g.k = k;
    g.a = lhs;
    g.b = rhs;
    g.d = out;
    return g;
  };
  b.step("fc1", "kiln.matmul", gemm(a, w1, d1, 33, 17, 65));
  b.step("fc2", "kiln.matmul", gemm(a, w2, d2, 33, 17, 65)); // same problem as fc1
  b.step("fc3", "kiln.matmul", gemm(d1, w3, d3, 33, 9, 17));
  plan::ConvStep c;
  c.xShape = {1, 3, 11, 11};
  c.wShape = {5, 3, 3, 3};
  c.yShape = {1, 5, 9, 9};
  c.pads = {0, 0};
  c.strides = {1, 1};
  c.dilations = {1, 1};
  c.x = b.input("img", c.xShape);
  c.w = b.weights("cw", randomVector(5 * 3 * 9, 4), {5, 3, 3, 3});
  c.y = b.output("y", c.yShape);
  b.step("conv", "kiln.conv", c);
  return b.build();
}

std::vector<std::vector<float>> inputs() { return {randomVector(33 * 65, 7), randomVector(3 * 11 * 11, 8)}; }

std::filesystem::path cachePath(const std::string &name) {
  return std::filesystem::temp_directory_path() /
         ("kiln-gpu-timing-cache-" + std::to_string(::getpid()) + "-" + name + ".txt");
}

std::string readFile(const std::filesystem::path &path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

using TuningCacheTest = GpuTest;

TEST_F(TuningCacheTest, SecondLoadTakesEverythingFromTheFile) {
  std::filesystem::path path = cachePath("second-load");
  std::filesystem::remove(path);
  std::vector<float> first;
  {
    auto rt = makeRuntime(path.string());
    ASSERT_NE(rt, nullptr);
    auto engine = load(threeProblems(builder()), rt.get());
    ASSERT_NE(engine, nullptr);
    EXPECT_EQ(engine->tuningStats().tuned, 3u); // fc1 and fc2 share one problem
    EXPECT_EQ(engine->tuningStats().fromCache, 0u);
    EXPECT_TRUE(progressContains("tuning gemm 1/2")) << "progress is reported per problem";
    EXPECT_TRUE(progressContains("tuning conv 1/1"));
    auto ctx = context(*engine);
    ASSERT_NE(ctx, nullptr);
    first = runOnce(*ctx, *engine, inputs())[3];
  }
  std::string text = readFile(path);
  EXPECT_NE(text.find("gemm algo="), std::string::npos) << text;
  EXPECT_NE(text.find("conv algo="), std::string::npos) << text;
  EXPECT_NE(text.find(runtime_->deviceName()), std::string::npos) << "keys name the GPU:\n" << text;

  auto rt2 = makeRuntime(path.string());
  ASSERT_NE(rt2, nullptr);
  auto engine2 = load(threeProblems(builder()), rt2.get());
  ASSERT_NE(engine2, nullptr);
  EXPECT_EQ(engine2->tuningStats().tuned, 0u);
  EXPECT_EQ(engine2->tuningStats().fromCache, 3u);
  auto ctx2 = context(*engine2);
  ASSERT_NE(ctx2, nullptr);
  EXPECT_EQ(runOnce(*ctx2, *engine2, inputs())[3], first); // the same algorithm, the same bits
  EXPECT_EQ(readFile(path), text) << "a load that tuned nothing leaves the file alone";
  std::filesystem::remove(path);
}

/// A channels-last conv with bias, residual and hard-swish: a cuDNN graph whose epilogue
/// runtime-fusion engines compile at build time.
plan::Plan fusedConv(PlanBuilder b) {
  plan::ConvStep c;
  c.math = plan::MathMode::TF32;
  c.channelsLast = true;
  c.xShape = {2, 8, 10, 10};
  c.wShape = {16, 8, 3, 3};
  c.yShape = {2, 16, 10, 10};
  c.pads = {1, 1};
  c.strides = {1, 1};
  c.dilations = {1, 1};
  c.activation = plan::Activation::HardSwish;
  c.x = b.input("x", {2, 10, 10, 8});
  c.residual = b.input("r", {2, 10, 10, 16});
  c.w = b.weights("w", randomVector(16 * 3 * 3 * 8, 5), {16, 3, 3, 8});
  c.bias = b.weights("b", randomVector(16, 6), {16});
  c.y = b.output("y", {2, 10, 10, 16});
  b.step("conv", "kiln.conv", c);
  return b.build();
}

TEST_F(TuningCacheTest, AWarmLoadBuildsNoCuDnnPlan) {
  if (!runtime::cudnnFrontendAvailable())
    GTEST_SKIP() << "built without the cuDNN frontend";
  std::filesystem::path path = cachePath("plan-store");
  std::filesystem::path store = runtime::CudnnPlanStore::directoryFor(path.string());
  std::filesystem::remove(path);
  std::filesystem::remove_all(store);
  std::vector<std::vector<float>> in = {randomVector(2 * 8 * 100, 7), randomVector(2 * 16 * 100, 8)};
  TuningStats cold;
  std::vector<float> first;
  {
    auto rt = makeRuntime(path.string());
    ASSERT_NE(rt, nullptr);
    auto engine = load(fusedConv(builder()), rt.get());
    ASSERT_NE(engine, nullptr);
    cold = engine->tuningStats();
    EXPECT_EQ(cold.tuned, 1u);
    std::vector<std::string> algorithms = engine->stepAlgorithms();
    ASSERT_FALSE(algorithms.empty());
    EXPECT_EQ(algorithms[0].rfind("graph engine=", 0), 0u) << "the fused conv reports its cuDNN engine";
    // The chosen engine's plan was built once more after timing: stored, or not serializable.
    EXPECT_EQ(cold.cudnnPlansStored + cold.cudnnPlansUnstorable, 1u) << "the tuner rebuilds its choice once";
    auto ctx = context(*engine);
    ASSERT_NE(ctx, nullptr);
    first = runOnce(*ctx, *engine, in)[0];
  }
  size_t files = 0;
  if (std::filesystem::exists(store))
    for (auto &entry : std::filesystem::directory_iterator(store))
      files += entry.path().extension() == ".plan";
  EXPECT_EQ(files, cold.cudnnPlansStored ? 1u : 0u);
  std::printf("cold load: %u plans stored, %u not serializable\n", cold.cudnnPlansStored, cold.cudnnPlansUnstorable);

  // Another process: the timing cache and the plan store are warm, so nothing is compiled.
  auto rt2 = makeRuntime(path.string());
  ASSERT_NE(rt2, nullptr);
  auto engine2 = load(fusedConv(builder()), rt2.get());
  ASSERT_NE(engine2, nullptr);
  TuningStats warm = engine2->tuningStats();
  EXPECT_EQ(warm.tuned, 0u);
  EXPECT_EQ(warm.cudnnPlansStored, 0u) << "a warm load compiles no cuDNN kernel";
  EXPECT_EQ(warm.cudnnPlansLoaded, files);
  auto ctx2 = context(*engine2);
  ASSERT_NE(ctx2, nullptr);
  EXPECT_EQ(runOnce(*ctx2, *engine2, in)[0], first) << "the loaded plan computes the same bits";

  // A damaged plan file is reported, rebuilt and replaced; the engine still runs.
  if (files) {
    for (auto &entry : std::filesystem::directory_iterator(store)) {
      std::string text = readFile(entry.path());
      std::ofstream(entry.path(), std::ios::binary | std::ios::trunc) << text.substr(0, text.size() / 2) << "garbage";
    }
    progress_.clear();
    auto rt3 = makeRuntime(path.string());
    ASSERT_NE(rt3, nullptr);
    auto engine3 = load(fusedConv(builder()), rt3.get());
    ASSERT_NE(engine3, nullptr);
    EXPECT_TRUE(progressContains("building the plan again"));
    EXPECT_EQ(engine3->tuningStats().cudnnPlansStored, 1u);
    auto ctx3 = context(*engine3);
    ASSERT_NE(ctx3, nullptr);
    EXPECT_EQ(runOnce(*ctx3, *engine3, in)[0], first);
  }
  std::filesystem::remove(path);
  std::filesystem::remove_all(store);
}

TEST_F(TuningCacheTest, EachLibraryStepReportsItsAlgorithm) {
  auto engine = load(threeProblems(builder()));
  ASSERT_NE(engine, nullptr);
  std::vector<std::string> algorithms = engine->stepAlgorithms();
  ASSERT_EQ(algorithms.size(), 4u);
  for (int gemm : {0, 1, 2})
    EXPECT_EQ(algorithms[gemm].rfind("gemm algo=", 0), 0u) << algorithms[gemm];
  EXPECT_EQ(algorithms[0], algorithms[1]) << "one problem, one choice";
  EXPECT_EQ(algorithms[3].rfind("conv algo=", 0), 0u) << algorithms[3];
  EXPECT_NE(algorithms[3].find(" ws="), std::string::npos) << algorithms[3];
}

TEST_F(TuningCacheTest, SameRuntimeRemembersWithoutAFile) {
  auto first = load(threeProblems(builder()));
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->tuningStats().tuned, 3u);
  auto second = load(threeProblems(builder()));
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->tuningStats().tuned, 0u);
  EXPECT_EQ(second->tuningStats().fromCache, 3u);
}

TEST_F(TuningCacheTest, CorruptedFileIsIgnoredLineByLine) {
  std::filesystem::path path = cachePath("corrupted");
  {
    auto rt = makeRuntime(path.string());
    ASSERT_NE(rt, nullptr);
    ASSERT_NE(load(threeProblems(builder()), rt.get()), nullptr);
  }
  std::string text = readFile(path);
  // Damage: garbage lines, a truncated last line, and every gemm algorithm replaced by bytes
  // cuBLASLt will reject.
  std::string damaged = "\x7f" "ELF garbage\nnot a line\n";
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    size_t at = line.find("gemm algo=");
    if (at != std::string::npos)
      line = line.substr(0, at) + "gemm algo=" + std::string(128, 'f') + " ws=0";
    damaged += line + "\n";
  }
  damaged += "conv f32 fp32 x=1x3|gpu=trunc";
  { std::ofstream(path, std::ios::trunc) << damaged; }

  progress_.clear();
  auto rt = makeRuntime(path.string());
  ASSERT_NE(rt, nullptr);
  EXPECT_TRUE(progressContains("malformed line")) << "bad lines are reported";
  auto engine = load(threeProblems(builder()), rt.get());
  ASSERT_NE(engine, nullptr);
  // The conv entry survived; both gemm entries were rejected by cublasLtMatmulAlgoCheck.
  EXPECT_EQ(engine->tuningStats().fromCache, 1u);
  EXPECT_EQ(engine->tuningStats().tuned, 2u);
  EXPECT_TRUE(progressContains("not usable here"));
  auto ctx = context(*engine);
  ASSERT_NE(ctx, nullptr);
  runOnce(*ctx, *engine, inputs());
  std::filesystem::remove(path);
}

TEST_F(TuningCacheTest, EveryOperandTypeIsPartOfTheProblem) {
  // Two bf16 gemms of one shape, one writing bf16 and one f32: different problems (cuBLASLt's
  // best algorithm depends on D's type too), each key naming every operand's type.
  PlanBuilder b = builder("types");
  std::vector<uint16_t> zeros(65 * 17, 0);
  uint32_t a = b.input("a", {33, 65}, plan::DType::BF16);
  uint32_t w = b.weightsRaw("w", plan::DType::BF16, {65, 17}, zeros.data());
  for (plan::DType out : {plan::DType::BF16, plan::DType::F32}) {
    plan::GemmStep g;
    g.m = 33, g.n = 17, g.k = 65;
    g.a = a, g.b = w;
    g.d = b.output("d_" + std::string(plan::dtypeName(out)), {33, 17}, out);
    b.step("fc", "kiln.matmul", g);
  }
  std::filesystem::path path = cachePath("types");
  std::filesystem::remove(path);
  {
    auto rt = makeRuntime(path.string());
    ASSERT_NE(rt, nullptr);
    auto engine = load(b.build(), rt.get());
    ASSERT_NE(engine, nullptr);
    EXPECT_EQ(engine->tuningStats().tuned, 2u);
  }
  std::string text = readFile(path);
  EXPECT_NE(text.find("gemm A=bf16 B=bf16 C=- D=bf16 bias=- "), std::string::npos) << text;
  EXPECT_NE(text.find("gemm A=bf16 B=bf16 C=- D=f32 bias=- "), std::string::npos) << text;
  std::filesystem::remove(path);
}

TEST_F(TuningCacheTest, ContextsAllocateTheChosenWorkspace) {
  auto engine = load(threeProblems(builder()));
  ASSERT_NE(engine, nullptr);
  auto ctx = context(*engine);
  ASSERT_NE(ctx, nullptr);
  EXPECT_EQ(ctx->workspaceBytes(), engine->workspaceBytes());
  EXPECT_LE(engine->workspaceBytes(), 64ull << 20); // the fixture's limit
  EXPECT_EQ(ctx->arenaBytes(), engine->metadata().arenaBytes);
}

} // namespace
} // namespace kiln::gpu_test
