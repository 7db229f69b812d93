//===- TimingCacheTest.cpp - the timing cache file format ------------------===//

#include "runtime/engine/TimingCache.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using kiln::runtime::TimingCache;
using kiln::runtime::TunedAlgorithm;

namespace {

TunedAlgorithm gemmAlgo(uint8_t seed, uint64_t ws) {
  TunedAlgorithm a;
  a.kind = TunedAlgorithm::Kind::Gemm;
  for (size_t i = 0; i < a.gemmAlgo.size(); ++i)
    a.gemmAlgo[i] = static_cast<uint8_t>(seed + i * 37);
  a.workspaceBytes = ws;
  return a;
}

TunedAlgorithm convAlgo(int algo, int math, uint64_t ws) {
  TunedAlgorithm a;
  a.kind = TunedAlgorithm::Kind::Conv;
  a.convAlgo = algo;
  a.convMath = math;
  a.workspaceBytes = ws;
  return a;
}

/// Collects warnings.
struct Warnings {
  std::vector<std::string> messages;
  TimingCache::Warn fn() {
    return [this](const std::string &m) { messages.push_back(m); };
  }
};

std::filesystem::path tempPath(const std::string &name) {
  return std::filesystem::temp_directory_path() /
         ("kiln-timing-cache-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" + name);
}

} // namespace

TEST(TunedAlgorithmFormat, GemmRoundTripsEveryByte) {
  TunedAlgorithm a = gemmAlgo(3, 1 << 20);
  std::string text = kiln::runtime::formatTunedAlgorithm(a);
  EXPECT_EQ(text.rfind("gemm algo=", 0), 0u) << text;
  EXPECT_NE(text.find(" ws=1048576"), std::string::npos) << text;
  auto parsed = kiln::runtime::parseTunedAlgorithm(text);
  ASSERT_TRUE(parsed.has_value()) << text;
  EXPECT_EQ(*parsed, a);
}

TEST(TunedAlgorithmFormat, ConvRoundTrips) {
  TunedAlgorithm a = convAlgo(6, 3, 4096);
  std::string text = kiln::runtime::formatTunedAlgorithm(a);
  EXPECT_EQ(text, "conv algo=6 math=3 ws=4096");
  auto parsed = kiln::runtime::parseTunedAlgorithm(text);
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(*parsed, a);
}

TEST(TunedAlgorithmFormat, AttentionRoundTripsWithAndWithoutKnobs) {
  TunedAlgorithm a;
  a.kind = TunedAlgorithm::Kind::CudnnGraph;
  a.graphEngine = 8;
  a.graphKnobs = {{2, 3}, {7, -1}, {1002, 4}};
  a.workspaceBytes = 512;
  std::string text = kiln::runtime::formatTunedAlgorithm(a);
  EXPECT_EQ(text, "graph engine=8 knobs=2:3,7:-1,1002:4 ws=512");
  auto parsed = kiln::runtime::parseTunedAlgorithm(text);
  ASSERT_TRUE(parsed.has_value()) << text;
  EXPECT_EQ(*parsed, a);

  a.graphKnobs.clear();
  text = kiln::runtime::formatTunedAlgorithm(a);
  EXPECT_EQ(text, "graph engine=8 knobs=- ws=512");
  parsed = kiln::runtime::parseTunedAlgorithm(text);
  ASSERT_TRUE(parsed.has_value()) << text;
  EXPECT_EQ(*parsed, a);
}

TEST(TunedAlgorithmFormat, RejectsMalformedAttentionValues) {
  for (const std::string &bad : std::vector<std::string>{
           "graph engine=8 ws=0", "graph engine=-1 knobs=- ws=0", "graph engine=x knobs=- ws=0",
           "graph engine=8 knobs= ws=0", "graph engine=8 knobs=2 ws=0", "graph engine=8 knobs=2:3, ws=0",
           "graph engine=8 knobs=2:3,,4:5 ws=0", "graph engine=8 knobs=4:5,2:3 ws=0", "graph engine=8 knobs=2:3,2:4 ws=0",
           "graph engine=8 knobs=2:x ws=0", "graph knobs=- engine=8 ws=0", "graph engine=8 knobs=- ws=0 extra=1"})
    EXPECT_FALSE(kiln::runtime::parseTunedAlgorithm(bad).has_value()) << bad;
}

TEST(TunedAlgorithmFormat, RejectsMalformedValues) {
  std::string hex128(128, 'a');
  for (const std::string &bad : std::vector<std::string>{
           "", "gemm", "gemm algo=" + hex128, "gemm algo=" + std::string(126, 'a') + " ws=0",
           "gemm algo=" + std::string(127, 'a') + "g ws=0", "gemm algo=" + hex128 + " ws=-1",
           "gemm algo=" + hex128 + " ws=12x", "gemm algo=" + hex128 + " ws=1 extra=2", "conv algo=1 math=3",
           "conv algo=x math=3 ws=0", "conv algo=-1 math=3 ws=0", "conv algo=1 math=99 ws=0",
           "conv algo=1 ws=0 math=3", "fft algo=1 ws=0", "conv algo=1 math=3 ws=18446744073709551616"})
    EXPECT_FALSE(kiln::runtime::parseTunedAlgorithm(bad).has_value()) << bad;
}

TEST(TimingCache, SerializeIsSortedAndParsesBack) {
  TimingCache cache;
  cache.insert("gemm f32 fp32 b=1 m=7 n=3 k=5|gpu=NVIDIA H200|cc=90", gemmAlgo(1, 0));
  cache.insert("conv f32 tf32 x=1x3x8x8|gpu=NVIDIA H200|cc=90", convAlgo(1, 1, 256));
  cache.insert("convT f16 fp32 x=1x3x8x8|gpu=NVIDIA H200|cc=90", convAlgo(0, 3, 0));
  std::string text = cache.serialize();
  EXPECT_EQ(text.front(), '#');
  size_t conv = text.find("\nconv f32"), convT = text.find("\nconvT"), gemm = text.find("\ngemm");
  ASSERT_NE(conv, std::string::npos);
  EXPECT_LT(conv, convT);
  EXPECT_LT(convT, gemm);

  TimingCache copy;
  Warnings w;
  EXPECT_EQ(copy.parse(text, "test", w.fn()), 3u);
  EXPECT_TRUE(w.messages.empty());
  EXPECT_EQ(copy.serialize(), text); // byte-identical: deterministic files
  auto found = copy.find("conv f32 tf32 x=1x3x8x8|gpu=NVIDIA H200|cc=90");
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(*found, convAlgo(1, 1, 256));
  EXPECT_FALSE(copy.find("conv f32 tf32 x=1x3x8x9|gpu=NVIDIA H200|cc=90").has_value());
}

TEST(TimingCache, BadLinesAreSkippedWithTheirLineNumber) {
  std::string good = "conv f32 fp32 x=1|gpu=G|cc=90\tconv algo=1 math=3 ws=0";
  std::string text = "# header\n" + good + "\r\n" + // CRLF is fine
                     "no tab here\n" +               // line 3
                     "\tconv algo=1 math=3 ws=0\n" + // line 4: empty key
                     "key\tgemm algo=zz ws=0\n" +    // line 5
                     "\n" + std::string("key2\tconv algo=1 math=3 ws=0\0junk", 32) + "\n" + // line 7: NUL
                     "last\tconv algo=2 math=1 ws=8"; // no final newline
  TimingCache cache;
  Warnings w;
  EXPECT_EQ(cache.parse(text, "cache.txt", w.fn()), 2u);
  ASSERT_EQ(w.messages.size(), 4u);
  EXPECT_NE(w.messages[0].find("cache.txt:3"), std::string::npos) << w.messages[0];
  EXPECT_NE(w.messages[1].find("cache.txt:4"), std::string::npos) << w.messages[1];
  EXPECT_NE(w.messages[2].find("cache.txt:5"), std::string::npos) << w.messages[2];
  EXPECT_NE(w.messages[3].find("cache.txt:7"), std::string::npos) << w.messages[3];
  EXPECT_TRUE(cache.find("conv f32 fp32 x=1|gpu=G|cc=90").has_value());
  EXPECT_TRUE(cache.find("last").has_value());
  EXPECT_EQ(cache.size(), 2u);
}

TEST(TimingCache, ForeignFileWarnsBoundedly) {
  // A binary-ish file of many lines: a few named warnings and one summary, no crash.
  std::string text;
  for (int i = 0; i < 500; ++i)
    text += std::string("\x7f" "ELF\x01\x02\x00\xff garbage ", 16) + std::to_string(i) + "\n";
  TimingCache cache;
  Warnings w;
  EXPECT_EQ(cache.parse(text, "foreign", w.fn()), 0u);
  ASSERT_EQ(w.messages.size(), 11u);
  EXPECT_NE(w.messages.back().find("490 more malformed lines"), std::string::npos) << w.messages.back();
  EXPECT_EQ(cache.size(), 0u);
}

TEST(TimingCache, LaterLinesOverrideEarlierOnes) {
  TimingCache cache;
  Warnings w;
  cache.parse("k\tconv algo=1 math=3 ws=0\nk\tconv algo=5 math=3 ws=64\n", "t", w.fn());
  ASSERT_TRUE(cache.find("k").has_value());
  EXPECT_EQ(cache.find("k")->convAlgo, 5);
  EXPECT_EQ(cache.size(), 1u);
}

TEST(TimingCache, SaveAndLoadAFile) {
  std::filesystem::path path = tempPath("roundtrip.txt");
  TimingCache cache;
  cache.insert("gemm key|gpu=X", gemmAlgo(9, 512));
  cache.insert("conv key|gpu=X", convAlgo(2, 1, 0));
  ASSERT_TRUE(cache.save(path.string()).isOk());

  TimingCache loaded;
  Warnings w;
  loaded.load(path.string(), w.fn());
  EXPECT_TRUE(w.messages.empty());
  EXPECT_EQ(loaded.serialize(), cache.serialize());
  std::filesystem::remove(path);
}

TEST(TimingCache, MissingFileIsAnEmptyCache) {
  TimingCache cache;
  Warnings w;
  cache.load(tempPath("does-not-exist.txt").string(), w.fn());
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_TRUE(w.messages.empty());
}

TEST(TimingCache, UnwritableLocationIsAnError) {
  TimingCache cache;
  cache.insert("k", convAlgo(1, 3, 0));
  kiln::runtime::Status status = cache.save("/nonexistent-kiln-dir/sub/cache.txt");
  EXPECT_FALSE(status.isOk());
  EXPECT_NE(status.message().find("/nonexistent-kiln-dir/sub/cache.txt"), std::string::npos) << status.message();
}

TEST(TimingCache, TruncatedFileKeepsTheCompleteLines) {
  TimingCache full;
  full.insert("a", convAlgo(1, 3, 0));
  full.insert("b", gemmAlgo(4, 32));
  std::string text = full.serialize();
  std::string truncated = text.substr(0, text.size() - 20); // cuts into b's hex
  TimingCache cache;
  Warnings w;
  EXPECT_EQ(cache.parse(truncated, "t", w.fn()), 1u);
  EXPECT_EQ(w.messages.size(), 1u);
  EXPECT_TRUE(cache.find("a").has_value());
  EXPECT_FALSE(cache.find("b").has_value());
}

TEST(TimingCache, KeysWithoutSeparators) {
  EXPECT_TRUE(TimingCache::isValidKey("gemm f32 b=1|gpu=NVIDIA H200"));
  EXPECT_FALSE(TimingCache::isValidKey(""));
  EXPECT_FALSE(TimingCache::isValidKey("a\tb"));
  EXPECT_FALSE(TimingCache::isValidKey("a\nb"));
}

TEST(TimingCache, InsertRefusesKeysThatBreakTheLineFormat) {
  TimingCache cache;
  EXPECT_FALSE(cache.insert("gpu=bad\tname", convAlgo(1, 3, 0)));
  EXPECT_FALSE(cache.insert("", convAlgo(1, 3, 0)));
  EXPECT_TRUE(cache.insert("fine", convAlgo(1, 3, 0)));
  EXPECT_EQ(cache.size(), 1u);
}
