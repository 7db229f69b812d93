//===- NvrtcTest.cpp - NVRTC compiles the program prelude and reports errors ===//

#include "codegen/kernels/KernelSource.h"
#include "codegen/kernels/Nvrtc.h"

#include <gtest/gtest.h>

namespace kiln::codegen {
namespace {

TEST(Nvrtc, CompilesPreludeAndKernelToCubinAndPtx) {
  std::string source = programPrelude() + R"(
extern "C" __global__ void k0_copy(const __half *in, float *out) {
  for (kiln_i64 i = blockIdx.x * (kiln_i64)blockDim.x + threadIdx.x; i < 7; i += (kiln_i64)gridDim.x * blockDim.x)
    kiln_st(out, i, kiln_ld(in, i));
}
)";
  auto program = compileWithNvrtc(source, "smoke.cu");
  ASSERT_TRUE(program.isOk()) << program.status().toString();
  const auto &cubin = program.value().cubin;
  ASSERT_GE(cubin.size(), 4u);
  EXPECT_EQ(cubin[0], 0x7f); // ELF
  EXPECT_EQ(cubin[1], 'E');
  EXPECT_NE(program.value().ptx.find(".entry k0_copy"), std::string::npos);
  EXPECT_NE(program.value().ptx.find(".target sm_90"), std::string::npos);
}

TEST(Nvrtc, SameSourceGivesSameCubin) {
  std::string source = programPrelude() + "extern \"C\" __global__ void k0_f(float *p) { p[0] = 1.0f; }\n";
  auto a = compileWithNvrtc(source, "a.cu");
  auto b = compileWithNvrtc(source, "a.cu");
  ASSERT_TRUE(a.isOk() && b.isOk());
  EXPECT_EQ(a.value().cubin, b.value().cubin);
  EXPECT_EQ(a.value().ptx, b.value().ptx);
}

TEST(Nvrtc, CompileErrorCarriesTheLog) {
  auto program = compileWithNvrtc("extern \"C\" __global__ void k0_bad(float *p) { p[0] = undefined_name; }\n",
                                  "bad.cu");
  ASSERT_FALSE(program.isOk());
  EXPECT_NE(program.status().message().find("undefined_name"), std::string::npos)
      << program.status().message();
  EXPECT_NE(program.status().message().find("bad.cu"), std::string::npos);
}

TEST(KernelSource, BroadcastOffset) {
  EXPECT_EQ(broadcastOffset({2, 3}, {2, 3}, "i"), "i");
  EXPECT_EQ(broadcastOffset({1}, {4, 5}, "i"), "0");
  // 32-bit division where every output index fits 32 bits, 64-bit beyond.
  EXPECT_EQ(broadcastOffset({3}, {2, 3}, "i"), "((((unsigned)(i)) % 3U))");
  EXPECT_EQ(broadcastOffset({2, 1}, {2, 3}, "i"), "(((unsigned)(i) / 3U))");
  EXPECT_EQ(broadcastOffset({3}, {int64_t(1) << 31, 3}, "i"), "(((i) % 3LL))");
  EXPECT_EQ(broadcastOffset({2, 1}, {2, int64_t(1) << 31}, "i"), "((i / 2147483648LL))");
}

} // namespace
} // namespace kiln::codegen
