//===- AttentionStepTest.cpp - fused attention against a double reference ---===//
//
// Plans with attention steps (cuDNN frontend SDPA) run on the GPU, through engine load (tuning),
// an execution context and its CUDA graph, and are compared with attention computed on the
// host in double from the same f16/bf16 inputs (and mask). The arena is poisoned with NaN
// first, so an output element the step does not write fails the comparison.
//
// Tolerance, per output element o[b,h,i,e], relative to the magnitude of the terms summed,
// scale = sum_j P[i,j] |V[j,e]| (>= |o|):
//   flash attention computes P~ = exp(S - running max) in fp32 and rounds it to the element
//   type before P~V (the row sum stays fp32): each term is off by at most one rounding,
//   u*P~|V| (u = 2^-9 for bf16, 2^-11 for f16), in all at most u*scale; the output's own
//   rounding adds u*|o| <= u*scale. QK^T and the softmax in fp32 add ~1e-6 relative.
//   Bound: 2u*scale, 3.9e-3 (bf16) and 9.8e-4 (f16); the tests allow twice that, 8e-3 and
//   2e-3: tight enough that a wrong mask entry, a dropped key, a wrong scale or a transposed
//   stride shows up as an error of order 1e-1.
//
// Run on the GPU box: build-gpu/tests/GpuRuntimeTest --gtest_filter='*AttentionGpu*'.
//
//===----------------------------------------------------------------------===//

#include "runtime/TensorData.h"
#include "tests/gpu/GpuTestSupport.h"

#include <array>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <unistd.h>

namespace kiln::gpu_test {
namespace {

using plan::DType;

double tolerance(DType type) { return type == DType::F16 ? 2e-3 : 8e-3; }

uint16_t encode(float f, DType type) {
  return type == DType::F16 ? runtime::floatToHalf(f) : runtime::floatToBFloat16(f);
}
float decode(uint16_t v, DType type) {
  return type == DType::F16 ? runtime::halfToFloat(v) : runtime::bfloat16ToFloat(v);
}

/// A logical 4-d tensor, row-major, its values already rounded to the element type.
struct Tensor4 {
  std::array<int64_t, 4> dims{};
  std::vector<float> values;
  size_t index(int64_t i0, int64_t i1, int64_t i2, int64_t i3) const {
    return static_cast<size_t>(((i0 * dims[1] + i1) * dims[2] + i2) * dims[3] + i3);
  }
  float at(int64_t i0, int64_t i1, int64_t i2, int64_t i3) const { return values[index(i0, i1, i2, i3)]; }
};

Tensor4 randomTensor(std::array<int64_t, 4> dims, uint32_t seed, float lo, float hi, DType type) {
  Tensor4 t{dims, randomVector(static_cast<size_t>(dims[0] * dims[1] * dims[2] * dims[3]), seed, lo, hi)};
  for (float &v : t.values)
    v = decode(encode(v, type), type);
  return t;
}

/// Where a logical [n0, n1, n2, n3] tensor lives in its buffer (elements).
struct View {
  int64_t offset = 0;
  std::vector<int64_t> strides;
  int64_t at(int64_t i0, int64_t i1, int64_t i2, int64_t i3) const {
    return offset + i0 * strides[0] + i1 * strides[1] + i2 * strides[2] + i3 * strides[3];
  }
};

View denseView(const std::array<int64_t, 4> &d) { return {0, {d[1] * d[2] * d[3], d[2] * d[3], d[3], 1}}; }

/// Writes `t` into `storage` through `view`.
void scatter(const Tensor4 &t, const View &view, std::vector<uint16_t> &storage, DType type) {
  for (int64_t a = 0; a < t.dims[0]; ++a)
    for (int64_t b = 0; b < t.dims[1]; ++b)
      for (int64_t c = 0; c < t.dims[2]; ++c)
        for (int64_t d = 0; d < t.dims[3]; ++d)
          storage[static_cast<size_t>(view.at(a, b, c, d))] = encode(t.at(a, b, c, d), type);
}

/// Reads a logical tensor of `dims` out of `storage` through `view`.
Tensor4 gather(const std::vector<uint16_t> &storage, const View &view, std::array<int64_t, 4> dims, DType type) {
  Tensor4 t{dims, std::vector<float>(static_cast<size_t>(dims[0] * dims[1] * dims[2] * dims[3]))};
  for (int64_t a = 0; a < dims[0]; ++a)
    for (int64_t b = 0; b < dims[1]; ++b)
      for (int64_t c = 0; c < dims[2]; ++c)
        for (int64_t d = 0; d < dims[3]; ++d)
          t.values[t.index(a, b, c, d)] = decode(storage[static_cast<size_t>(view.at(a, b, c, d))], type);
  return t;
}

/// Attention in double: o[b,h,i,:] and, per element, the magnitude of its terms.
struct Reference {
  std::vector<double> o, scale; // row-major [b, h, sq, dv]
};

/// `mask` is [mb, mh, sq, skv] with mb in {1, b} and mh in {1, h} (broadcast), or empty.
Reference attentionReference(const Tensor4 &q, const Tensor4 &k, const Tensor4 &v, const Tensor4 *mask, float scale,
                             bool causal) {
  int64_t B = q.dims[0], H = q.dims[1], SQ = q.dims[2], D = q.dims[3], SKV = k.dims[2], DV = v.dims[3];
  Reference r;
  r.o.assign(static_cast<size_t>(B * H * SQ * DV), 0.0);
  r.scale.assign(r.o.size(), 0.0);
  std::vector<double> s(static_cast<size_t>(SKV));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < SQ; ++i) {
        double max = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < SKV; ++j) {
          double dot = 0;
          for (int64_t e = 0; e < D; ++e)
            dot += static_cast<double>(q.at(b, h, i, e)) * k.at(b, h, j, e);
          double x = static_cast<double>(scale) * dot;
          if (mask)
            x += mask->at(mask->dims[0] == 1 ? 0 : b, mask->dims[1] == 1 ? 0 : h, i, j);
          if (causal && j > i)
            x = -std::numeric_limits<double>::infinity();
          s[static_cast<size_t>(j)] = x;
          max = std::max(max, x);
        }
        double sum = 0;
        for (double &x : s) {
          x = std::exp(x - max);
          sum += x;
        }
        for (int64_t e = 0; e < DV; ++e) {
          double acc = 0, mag = 0;
          for (int64_t j = 0; j < SKV; ++j) {
            double p = s[static_cast<size_t>(j)] / sum;
            acc += p * v.at(b, h, j, e);
            mag += p * std::fabs(v.at(b, h, j, e));
          }
          size_t at = static_cast<size_t>(((b * H + h) * SQ + i) * DV + e);
          r.o[at] = acc;
          r.scale[at] = mag;
        }
      }
  return r;
}

enum class Layout {
  BHSD,      // each of q, k, v, o dense [b, h, s, d]
  BSHD,      // each [b, s, h, d], as ONNX exporters leave them after the head split
  PackedQKV, // q, k, v slices of one [b, s, 3, h, d] projection; o [b, s, h, d]
};
enum class MaskKind {
  None,
  Full,           // [b, h, sq, skv]
  BroadcastHeads, // [b, 1, sq, skv]: one mask per batch element, for every head
  BroadcastBoth,  // [1, 1, sq, skv]
};

struct Case {
  const char *name;
  DType type;
  int64_t b, h, sq, skv, d;
  Layout layout;
  MaskKind mask;
  bool causal;
};
/// How gtest (and ctest's test names) show a case.
void PrintTo(const Case &c, std::ostream *os) { *os << c.name; }

/// A built plan for one case, with its input bytes and how to read its output.
struct AttentionPlan {
  plan::Plan plan;
  std::vector<std::pair<std::string, std::vector<uint16_t>>> inputs;
  View oView;
  std::array<int64_t, 4> oDims{};
  Reference want;
};

/// The additive mask: small values, and about one key in five masked out with -30000 (finite
/// in f16 and bf16, what exporters use for padding), never key 0, so no row is empty.
Tensor4 makeMask(std::array<int64_t, 4> dims, DType type) {
  Tensor4 m = randomTensor(dims, 11, -2.0f, 0.0f, type);
  std::vector<float> pick = randomVector(m.values.size(), 12, 0.0f, 1.0f);
  for (size_t i = 0; i < m.values.size(); ++i)
    if (pick[i] < 0.2f && i % static_cast<size_t>(dims[3]) != 0)
      m.values[i] = decode(encode(-30000.0f, type), type);
  return m;
}

AttentionPlan buildCase(PlanBuilder b, const Case &c) {
  const DType t = c.type;
  const int64_t B = c.b, H = c.h, SQ = c.sq, SKV = c.skv, D = c.d;
  Tensor4 q = randomTensor({B, H, SQ, D}, 1, -2.0f, 2.0f, t);
  Tensor4 k = randomTensor({B, H, SKV, D}, 2, -2.0f, 2.0f, t);
  Tensor4 v = randomTensor({B, H, SKV, D}, 3, -1.0f, 1.0f, t);

  AttentionPlan out;
  plan::AttentionStep a;
  a.batch = B, a.heads = H, a.seqQ = SQ, a.seqKv = SKV, a.headDim = D, a.headDimV = D;
  a.scale = 1.0f / std::sqrt(static_cast<float>(D));
  a.causal = c.causal;
  out.oDims = {B, H, SQ, D};

  auto input = [&](const std::string &name, std::vector<int64_t> shape,
                   const std::vector<std::pair<const Tensor4 *, View>> &parts) {
    int64_t elements = 1;
    for (int64_t dim : shape)
      elements *= dim;
    std::vector<uint16_t> storage(static_cast<size_t>(elements));
    for (const auto &[tensor, view] : parts)
      scatter(*tensor, view, storage, t);
    out.inputs.push_back({name, std::move(storage)});
    return b.input(name, std::move(shape), t);
  };
  auto bshd = [&](int64_t s) { return View{0, {s * H * D, D, H * D, 1}}; };
  View qv, kv, vv;
  switch (c.layout) {
  case Layout::BHSD:
    qv = denseView(q.dims), kv = denseView(k.dims), vv = denseView(v.dims);
    a.q = input("q", {B, H, SQ, D}, {{&q, qv}});
    a.k = input("k", {B, H, SKV, D}, {{&k, kv}});
    a.v = input("v", {B, H, SKV, D}, {{&v, vv}});
    out.oView = denseView(out.oDims);
    a.o = b.output("o", {B, H, SQ, D}, t);
    break;
  case Layout::BSHD:
    qv = bshd(SQ), kv = bshd(SKV), vv = bshd(SKV);
    a.q = input("q", {B, SQ, H, D}, {{&q, qv}});
    a.k = input("k", {B, SKV, H, D}, {{&k, kv}});
    a.v = input("v", {B, SKV, H, D}, {{&v, vv}});
    out.oView = bshd(SQ);
    a.o = b.output("o", {B, SQ, H, D}, t);
    break;
  case Layout::PackedQKV: {
    std::vector<int64_t> strides = {SQ * 3 * H * D, D, 3 * H * D, 1};
    qv = {0, strides}, kv = {H * D, strides}, vv = {2 * H * D, strides};
    a.q = a.k = a.v = input("qkv", {B, SQ, 3, H, D}, {{&q, qv}, {&k, kv}, {&v, vv}});
    out.oView = bshd(SQ);
    a.o = b.output("o", {B, SQ, H, D}, t);
    break;
  }
  }
  a.qOffset = qv.offset, a.kOffset = kv.offset, a.vOffset = vv.offset, a.oOffset = out.oView.offset;
  a.qStrides = qv.strides, a.kStrides = kv.strides, a.vStrides = vv.strides, a.oStrides = out.oView.strides;

  std::optional<Tensor4> mask;
  if (c.mask != MaskKind::None) {
    int64_t mb = c.mask == MaskKind::BroadcastBoth ? 1 : B, mh = c.mask == MaskKind::Full ? H : 1;
    mask = makeMask({mb, mh, SQ, SKV}, t);
    std::vector<uint16_t> bits(mask->values.size());
    for (size_t i = 0; i < bits.size(); ++i)
      bits[i] = encode(mask->values[i], t);
    a.mask = b.weightsRaw("mask", t, {mb, mh, SQ, SKV}, bits.data());
    a.maskStrides = {mb == 1 ? 0 : mh * SQ * SKV, mh == 1 ? 0 : SQ * SKV, SKV, 1};
  }
  b.step(std::string("attention_") + c.name, "kiln.attention", a);
  out.plan = b.build();
  out.want = attentionReference(q, k, v, mask ? &*mask : nullptr, a.scale, c.causal);
  return out;
}

/// Poisons the arena with NaN, sets the inputs, runs, returns output `name`'s raw elements.
std::vector<uint16_t> runRaw(ExecutionContext &ctx, const Engine &engine, const AttentionPlan &p,
                             const std::string &name = "o") {
  EXPECT_TRUE(ctx.poison(0xFF).isOk()); // 0xFFFF is a NaN in f16 and bf16
  for (const auto &[input, bits] : p.inputs) {
    Status s = ctx.setInput(input, bits.data(), bits.size() * 2);
    EXPECT_TRUE(s.isOk()) << s.toString();
  }
  Status s = ctx.run();
  EXPECT_TRUE(s.isOk()) << s.toString();
  for (const TensorDesc &out : engine.outputs())
    if (out.name == name) {
      std::vector<uint16_t> bits(out.bytes / 2);
      Status g = ctx.getOutput(out.name, bits.data(), out.bytes);
      EXPECT_TRUE(g.isOk()) << g.toString();
      return bits;
    }
  ADD_FAILURE() << "no output '" << name << "'";
  return {};
}

void expectMatches(const AttentionPlan &p, const std::vector<uint16_t> &bits, DType type, const std::string &what) {
  Tensor4 got = gather(bits, p.oView, p.oDims, type);
  expectClose(got.values, p.want.o, p.want.scale, tolerance(type), what);
}

class AttentionGpuTest : public GpuTest, public ::testing::WithParamInterface<Case> {};

TEST_P(AttentionGpuTest, MatchesDoubleReference) {
  const Case &c = GetParam();
  AttentionPlan p = buildCase(builder("attention"), c);
  auto engine = load(p.plan);
  ASSERT_NE(engine, nullptr);
  EXPECT_EQ(engine->tuningStats().tuned, 1u);
  EXPECT_TRUE(progressContains("tuning attention 1/1")) << "attention problems are tuned like gemm and conv";
  auto ctx = context(*engine); // with its CUDA graph
  ASSERT_NE(ctx, nullptr);
  ASSERT_TRUE(ctx->usesCudaGraph());
  expectMatches(p, runRaw(*ctx, *engine, p), c.type, c.name);
}

const Case kCases[] = {
    {"b2h3s37d64_bf16", DType::BF16, 2, 3, 37, 37, 64, Layout::BHSD, MaskKind::None, false},
    {"b2h3s37d64_f16", DType::F16, 2, 3, 37, 37, 64, Layout::BHSD, MaskKind::None, false},
    {"bert_b1h12s128d64_bshd_bf16", DType::BF16, 1, 12, 128, 128, 64, Layout::BSHD, MaskKind::None, false},
    {"bert_b1h12s128d64_bshd_f16", DType::F16, 1, 12, 128, 128, 64, Layout::BSHD, MaskKind::None, false},
    {"packed_qkv_b2h3s37_bf16", DType::BF16, 2, 3, 37, 37, 64, Layout::PackedQKV, MaskKind::None, false},
    {"packed_qkv_b2h3s37_f16", DType::F16, 2, 3, 37, 37, 64, Layout::PackedQKV, MaskKind::None, false},
    // Mask rows of 37 elements are not 16-byte aligned; rows of 64 are (if only the former
    // fail, validatePlan must require maskStrides[2] to be a multiple of 8 elements).
    {"mask_over_heads_bf16", DType::BF16, 2, 3, 37, 37, 64, Layout::BHSD, MaskKind::BroadcastHeads, false},
    {"mask_over_heads_f16", DType::F16, 2, 3, 37, 37, 64, Layout::BHSD, MaskKind::BroadcastHeads, false},
    {"mask_over_heads_aligned_rows_bf16", DType::BF16, 2, 3, 64, 64, 64, Layout::BHSD, MaskKind::BroadcastHeads, false},
    {"mask_full_aligned_rows_f16", DType::F16, 2, 3, 64, 64, 64, Layout::BHSD, MaskKind::Full, false},
    {"mask_over_batch_and_heads_packed_bf16", DType::BF16, 2, 3, 37, 37, 64, Layout::PackedQKV, MaskKind::BroadcastBoth,
     false},
    {"causal_b2h3s37_bf16", DType::BF16, 2, 3, 37, 37, 64, Layout::BHSD, MaskKind::None, true},
    {"causal_b2h3s37_f16", DType::F16, 2, 3, 37, 37, 64, Layout::BHSD, MaskKind::None, true},
    {"causal_full_mask_bshd_bf16", DType::BF16, 2, 3, 37, 37, 64, Layout::BSHD, MaskKind::Full, true},
    {"cross_sq17_skv45_bshd_f16", DType::F16, 2, 3, 17, 45, 64, Layout::BSHD, MaskKind::BroadcastHeads, false},
    {"d128_b1h2s33_bf16", DType::BF16, 1, 2, 33, 33, 128, Layout::BHSD, MaskKind::None, false},
};

INSTANTIATE_TEST_SUITE_P(Cases, AttentionGpuTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case> &info) { return std::string(info.param.name); });

using AttentionGpuMiscTest = GpuTest;

TEST_F(AttentionGpuMiscTest, EagerRunMatchesTheGraphBitForBit) {
  Case c{"eager", DType::BF16, 2, 3, 37, 37, 64, Layout::BSHD, MaskKind::BroadcastHeads, true};
  AttentionPlan p = buildCase(builder("attention"), c);
  auto engine = load(p.plan);
  ASSERT_NE(engine, nullptr);
  auto graphed = context(*engine, true), eager = context(*engine, false);
  ASSERT_NE(graphed, nullptr);
  ASSERT_NE(eager, nullptr);
  EXPECT_FALSE(eager->usesCudaGraph());
  std::vector<uint16_t> a = runRaw(*graphed, *engine, p), b = runRaw(*eager, *engine, p);
  expectMatches(p, b, c.type, "eager");
  EXPECT_EQ(a, b) << "one engine config, one result: the captured graph and the eager run must agree exactly";
  // A second run of the graph sees new inputs (nothing of the first run is baked in).
  std::vector<uint16_t> again = runRaw(*graphed, *engine, p);
  EXPECT_EQ(again, a);
}

TEST_F(AttentionGpuMiscTest, StepsWithOneProblemShareAGraphAndBothAreRight) {
  // Two layers of one shape: o1 = attn(q, k, v), o2 = attn(o1, k, v). The context builds one
  // cuDNN graph for both (AttentionGraphCache); each must still read and write its own views.
  const DType t = DType::F16;
  const int64_t B = 2, H = 3, S = 37, D = 64;
  PlanBuilder b = builder("two_layers");
  Tensor4 q = randomTensor({B, H, S, D}, 1, -2.0f, 2.0f, t), k = randomTensor({B, H, S, D}, 2, -2.0f, 2.0f, t),
          v = randomTensor({B, H, S, D}, 3, -1.0f, 1.0f, t);
  View dense = denseView(q.dims);
  AttentionPlan p;
  auto input = [&](const std::string &name, const Tensor4 &tensor) {
    std::vector<uint16_t> bits(tensor.values.size());
    scatter(tensor, dense, bits, t);
    p.inputs.push_back({name, std::move(bits)});
    return b.input(name, {B, H, S, D}, t);
  };
  plan::AttentionStep a;
  a.batch = B, a.heads = H, a.seqQ = S, a.seqKv = S, a.headDim = D, a.headDimV = D;
  a.scale = 0.125f;
  a.qStrides = a.kStrides = a.vStrides = a.oStrides = dense.strides;
  a.q = input("q", q), a.k = input("k", k), a.v = input("v", v);
  a.o = b.output("o1", {B, H, S, D}, t);
  b.step("layer1", "kiln.attention", a);
  plan::AttentionStep second = a;
  second.q = a.o;
  second.o = b.output("o2", {B, H, S, D}, t);
  b.step("layer2", "kiln.attention", second);
  p.plan = b.build();
  p.oView = dense;
  p.oDims = {B, H, S, D};

  auto engine = load(p.plan);
  ASSERT_NE(engine, nullptr);
  EXPECT_EQ(engine->tuningStats().tuned, 1u) << "the two steps are one problem";
  auto ctx = context(*engine);
  ASSERT_NE(ctx, nullptr);
  std::vector<uint16_t> o1Bits = runRaw(*ctx, *engine, p, "o1");
  std::vector<uint16_t> o2Bits(o1Bits.size());
  ASSERT_TRUE(ctx->getOutput("o2", o2Bits.data(), o2Bits.size() * 2).isOk());
  p.want = attentionReference(q, k, v, nullptr, a.scale, false);
  expectMatches(p, o1Bits, t, "layer1");
  // Layer 2 against the reference from the device's own o1 (what it actually read).
  Tensor4 o1 = gather(o1Bits, dense, p.oDims, t);
  p.want = attentionReference(o1, k, v, nullptr, a.scale, false);
  expectMatches(p, o2Bits, t, "layer2");
}

TEST_F(AttentionGpuMiscTest, SecondLoadTakesTheEngineFromTheTimingCache) {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("kiln-gpu-attention-cache-" + std::to_string(::getpid()) + ".txt");
  std::filesystem::remove(path);
  Case c{"cached", DType::BF16, 1, 12, 128, 128, 64, Layout::BSHD, MaskKind::BroadcastHeads, false};
  std::vector<uint16_t> first;
  {
    auto rt = makeRuntime(path.string());
    ASSERT_NE(rt, nullptr);
    AttentionPlan p = buildCase(PlanBuilder(rt->target(), "attention"), c);
    auto engine = load(p.plan, rt.get());
    ASSERT_NE(engine, nullptr);
    EXPECT_EQ(engine->tuningStats().tuned, 1u);
    auto ctx = context(*engine);
    ASSERT_NE(ctx, nullptr);
    first = runRaw(*ctx, *engine, p);
    expectMatches(p, first, c.type, "tuned");
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("\tgraph engine="), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("sdpa fe=1.32 type=bf16 mask=bf16 b=1 h=12 sq=128 skv=128"), std::string::npos)
      << text.str();
  {
    auto rt = makeRuntime(path.string());
    ASSERT_NE(rt, nullptr);
    AttentionPlan p = buildCase(PlanBuilder(rt->target(), "attention"), c);
    auto engine = load(p.plan, rt.get());
    ASSERT_NE(engine, nullptr);
    EXPECT_EQ(engine->tuningStats().tuned, 0u);
    EXPECT_EQ(engine->tuningStats().fromCache, 1u);
    auto ctx = context(*engine);
    ASSERT_NE(ctx, nullptr);
    EXPECT_EQ(runRaw(*ctx, *engine, p), first) << "the cached engine is the tuned one";
  }
  std::filesystem::remove(path);
}

TEST_F(AttentionGpuMiscTest, TwoContextsEachBuildTheirOwnGraph) {
  Case c{"contexts", DType::F16, 2, 3, 37, 37, 64, Layout::PackedQKV, MaskKind::BroadcastHeads, true};
  AttentionPlan p = buildCase(builder("attention"), c);
  auto engine = load(p.plan);
  ASSERT_NE(engine, nullptr);
  auto one = context(*engine), two = context(*engine);
  ASSERT_NE(one, nullptr);
  ASSERT_NE(two, nullptr);
  std::vector<uint16_t> a = runRaw(*one, *engine, p);
  two.reset(); // the other context's graph and handle go away; this one's must be unaffected
  std::vector<uint16_t> b = runRaw(*one, *engine, p);
  expectMatches(p, a, c.type, "context one");
  EXPECT_EQ(a, b);
}

TEST_F(AttentionGpuMiscTest, Fp32PlanIsRefusedAtLoad) {
  PlanBuilder b = builder("attention_f32");
  plan::AttentionStep a;
  a.batch = 1, a.heads = 1, a.seqQ = 8, a.seqKv = 8, a.headDim = 64, a.headDimV = 64;
  a.qStrides = a.kStrides = a.vStrides = a.oStrides = {512, 512, 64, 1};
  a.q = b.input("q", {1, 1, 8, 64}), a.k = b.input("k", {1, 1, 8, 64}), a.v = b.input("v", {1, 1, 8, 64});
  a.o = b.output("o", {1, 1, 8, 64});
  b.step("attention", "kiln.attention", a);
  auto engine = runtime_->loadEngine(b.build());
  ASSERT_FALSE(engine.isOk());
  EXPECT_EQ(engine.status().code(), StatusCode::kInvalidPlan);
  EXPECT_NE(engine.status().message().find("codegen must keep the unfused path for fp32/tf32"), std::string::npos)
      << engine.status().toString();
}

} // namespace
} // namespace kiln::gpu_test
