//===- NormPoolKernelsTest.cpp - pooling/normalization/resize emitters -----===//
//
// Emits every op of the family for representative shapes and every element type the ODS
// allows, compiles each group as one NVRTC program (the program prelude included) and checks
// that every launch's function is in the PTX and that launches name the right operands and
// results. Bad input must give an error naming the op and node. The host-side resize taps are
// checked against values worked out from the ONNX reference (onnx/reference/ops/op_resize.py), and
// the device tap code of resize with runtime scales/roi -- compiled for the host from the same
// text -- against those host taps, bit for bit, over every mode/transform and many sizes.
//
//===----------------------------------------------------------------------===//

#include "codegen/kernels/NormPoolKernels.h"
#include "codegen/kernels/Nvrtc.h"
#include "KernelTestSupport.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <tuple>

namespace kiln::codegen {
namespace {

using namespace kiln::codegen::kerneltest;


const std::vector<DType> kFloatTypes = {DType::F32, DType::F16, DType::BF16, DType::F64, DType::F8E4M3FN};



OpDesc makeOp(std::string op, std::vector<std::optional<TensorDesc>> operands, TensorDesc result,
              std::map<std::string, AttrValue> attrs = {}) {
  OpDesc desc;
  desc.op = std::move(op);
  desc.name = "node_" + desc.op.substr(desc.op.find('.') + 1);
  desc.operands = std::move(operands);
  desc.results = {std::move(result)};
  desc.attrs = std::move(attrs);
  return desc;
}

/// Emits many ops into one program, then compiles it once.
class Program {
public:
  /// Emits `op` and checks the launch functions; returns the kernels for more checks.
  EmittedKernels add(const OpDesc &op, bool scratchAllowed = false) {
    std::string symbol = "k" + std::to_string(next_++) + "_";
    auto emitted = emitKernels(op, EmitContext{symbol});
    EXPECT_TRUE(emitted.isOk()) << emitted.status().toString();
    if (!emitted.isOk())
      return {};
    const EmittedKernels &k = emitted.value();
    EXPECT_FALSE(k.launches.empty()) << op.op;
    if (!scratchAllowed)
      EXPECT_TRUE(k.scratchBytes.empty()) << op.op;
    for (const KernelLaunch &launch : k.launches) {
      EXPECT_EQ(launch.function.rfind(symbol, 0), 0u) << launch.function;
      EXPECT_NE(k.source.find(" " + launch.function + "("), std::string::npos) << launch.function;
      EXPECT_GE(launch.grid[0], 1u);
      EXPECT_EQ(launch.block[0] % 32, 0u) << "reductions assume whole warps";
      EXPECT_LE(launch.block[0], 1024u);
      functions_.push_back(launch.function);
    }
    source_ += k.source;
    return k;
  }

  void compile(const std::string &name) {
    auto program = compileWithNvrtc(programPrelude() + source_, name);
    ASSERT_TRUE(program.isOk()) << program.status().toString();
    for (const std::string &fn : functions_)
      EXPECT_NE(program.value().ptx.find(".entry " + fn + "("), std::string::npos) << fn;
  }

private:
  int next_ = 0;
  std::string source_;
  std::vector<std::string> functions_;
};

std::vector<KernelArg> args(std::initializer_list<std::pair<KernelArg::Kind, uint32_t>> list) {
  std::vector<KernelArg> out;
  for (auto [kind, index] : list)
    out.push_back({kind, index});
  return out;
}

void expectArgs(const KernelLaunch &launch, const std::vector<KernelArg> &expected) {
  ASSERT_EQ(launch.args.size(), expected.size()) << launch.function;
  for (size_t k = 0; k < expected.size(); ++k) {
    EXPECT_EQ(launch.args[k].kind, expected[k].kind) << launch.function << " arg " << k;
    EXPECT_EQ(launch.args[k].index, expected[k].index) << launch.function << " arg " << k;
  }
}

constexpr auto kOperand = KernelArg::Kind::Operand;
constexpr auto kResult = KernelArg::Kind::Result;
constexpr auto kScratch = KernelArg::Kind::Scratch;

/// A fusion group's error, which may name a body op rather than the group.
void expectGroupError(const OpDesc &group, const std::string &fragment) {
  auto emitted = emitKernels(group, EmitContext{"k0_"});
  ASSERT_FALSE(emitted.isOk()) << "expected an error mentioning '" << fragment << "'";
  EXPECT_NE(emitted.status().message().find(fragment), std::string::npos) << emitted.status().message();
}

void expectError(const OpDesc &op, const std::string &fragment) {
  auto emitted = emitKernels(op, EmitContext{"k0_"});
  ASSERT_FALSE(emitted.isOk()) << op.op << ": expected an error mentioning '" << fragment << "'";
  const std::string &message = emitted.status().message();
  EXPECT_NE(message.find(op.op), std::string::npos) << message;
  EXPECT_NE(message.find(op.name), std::string::npos) << message;
  EXPECT_NE(message.find(fragment), std::string::npos) << message;
}

//===-- Pooling -----------------------------------------------------------===//

struct PoolCase {
  std::vector<int64_t> input, kernel, strides, dilations, pads;
  bool ceil = false;
};

/// ONNX output size, with ceil_mode's rule that a window starting in the end padding is dropped.
std::vector<int64_t> poolShape(const PoolCase &c) {
  std::vector<int64_t> out = {c.input[0], c.input[1]};
  size_t spatial = c.kernel.size();
  for (size_t a = 0; a < spatial; ++a) {
    int64_t in = c.input[a + 2], span = (c.kernel[a] - 1) * c.dilations[a] + 1;
    int64_t numer = in + c.pads[a] + c.pads[a + spatial] - span;
    int64_t size = (c.ceil ? (numer + c.strides[a] - 1) / c.strides[a] : numer / c.strides[a]) + 1;
    if (c.ceil && (size - 1) * c.strides[a] >= in + c.pads[a])
      --size;
    out.push_back(size);
  }
  return out;
}

OpDesc poolOp(const std::string &op, DType dtype, const PoolCase &c, std::map<std::string, AttrValue> extra = {}) {
  std::map<std::string, AttrValue> attrs = {{"kernel_shape", c.kernel},
                                            {"strides", c.strides},
                                            {"dilations", c.dilations},
                                            {"pads", c.pads},
                                            {"ceil_mode", int64_t(c.ceil)}};
  attrs.insert(extra.begin(), extra.end());
  return makeOp(op, {tensor(dtype, c.input)}, tensor(dtype, poolShape(c)), attrs);
}

const std::vector<PoolCase> kPoolCases = {
    {{1, 64, 112, 112}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}},     // ResNet stem max pool
    {{2, 3, 7}, {3}, {2}, {1}, {1, 0}, true},                       // 1-d, ceil_mode
    {{1, 1, 7, 9}, {2, 3}, {2, 2}, {2, 1}, {0, 1, 1, 1}, true},     // dilation, asymmetric pads
    {{1, 2, 5, 6, 7}, {3, 2, 2}, {1, 2, 3}, {1, 1, 2}, {1, 0, 1, 1, 1, 0}}, // 3-d
    {{1, 1, 1, 1}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}},           // a single element
    {{3, 5, 1000003}, {4}, {3}, {1}, {2, 2}, true},                 // long 1-d rows
};

TEST(NormPoolKernels, PoolsCompileForEveryTypeAndGeometry) {
  Program program;
  for (const PoolCase &c : kPoolCases) {
    for (DType dtype : kFloatTypes) {
      EmittedKernels max = program.add(poolOp("kiln.max_pool", dtype, c));
      ASSERT_EQ(max.launches.size(), 1u);
      expectArgs(max.launches[0], args({{kOperand, 0}, {kResult, 0}}));
      for (int64_t includePad : {0, 1}) {
        EmittedKernels avg = program.add(poolOp("kiln.avg_pool", dtype, c, {{"count_include_pad", includePad}}));
        ASSERT_EQ(avg.launches.size(), 1u);
        expectArgs(avg.launches[0], args({{kOperand, 0}, {kResult, 0}}));
        EXPECT_EQ(avg.source.find("padded") != std::string::npos, includePad == 1);
      }
    }
    for (DType dtype : {DType::I8, DType::U8})
      program.add(poolOp("kiln.max_pool", dtype, c));
  }
  // count_include_pad defaults to false: absent means divide by the taps inside the image.
  EmittedKernels avgDefault = program.add(poolOp("kiln.avg_pool", DType::F32, kPoolCases[0]));
  EXPECT_EQ(avgDefault.source.find("padded"), std::string::npos);
  program.compile("pools.cu");
}

TEST(NormPoolKernels, PoolsBakeTheGeometry) {
  auto emitted = emitKernels(poolOp("kiln.max_pool", DType::F16, kPoolCases[0]), EmitContext{"k9_"});
  ASSERT_TRUE(emitted.isOk()) << emitted.status().toString();
  const std::string &src = emitted.value().source;
  EXPECT_NE(src.find("k9_max_pool(const __half *__restrict__ x, __half *__restrict__ y)"), std::string::npos);
  EXPECT_NE(src.find("o0 * 1LL - 0LL"), std::string::npos) << "the unit leading axis";
  EXPECT_NE(src.find("o1 * 2LL - 1LL"), std::string::npos) << src;
  EXPECT_NE(src.find("float best = -INFINITY"), std::string::npos);
  // 1 * 64 * 56 * 56 outputs.
  EXPECT_NE(src.find("i < 200704LL"), std::string::npos);
  auto i8 = emitKernels(poolOp("kiln.max_pool", DType::I8, kPoolCases[0]), EmitContext{"k9_"});
  ASSERT_TRUE(i8.isOk());
  EXPECT_NE(i8.value().source.find("best = ((signed char)-128LL)"), std::string::npos) << i8.value().source;
}

TEST(NormPoolKernels, GlobalPoolsCompile) {
  Program program;
  const std::vector<std::vector<int64_t>> shapes = {
      {1, 2048, 7, 7}, {2, 3, 1000003}, {1, 1}, {3, 7, 1, 1, 1, 1}, {2, 5, 40, 41}, {1, 3, 5, 0}};
  for (const auto &shape : shapes)
    for (DType dtype : kFloatTypes)
      for (const char *op : {"kiln.global_avg_pool", "kiln.global_max_pool"}) {
        std::vector<int64_t> out(shape.size(), 1);
        out[0] = shape[0];
        out[1] = shape[1];
        EmittedKernels k = program.add(makeOp(op, {tensor(dtype, shape)}, tensor(dtype, out)));
        ASSERT_EQ(k.launches.size(), 1u);
        expectArgs(k.launches[0], args({{kOperand, 0}, {kResult, 0}}));
      }
  program.compile("global_pools.cu");
}

TEST(NormPoolKernels, GlobalPoolGeometry) {
  // ResNet-50's 7x7x2048: a warp per plane, 8 planes a block.
  auto small = emitKernels(makeOp("kiln.global_avg_pool", {tensor(DType::F16, {1, 2048, 7, 7})},
                                  tensor(DType::F16, {1, 2048, 1, 1})),
                           EmitContext{"k1_"});
  ASSERT_TRUE(small.isOk());
  EXPECT_EQ(small.value().launches[0].grid[0], 256u);
  EXPECT_EQ(small.value().launches[0].block[0], 256u);
  EXPECT_NE(small.value().source.find("kiln_np_warp_sum"), std::string::npos);
  // A long plane: a block per plane.
  auto large = emitKernels(makeOp("kiln.global_max_pool", {tensor(DType::F32, {2, 3, 1000003})},
                                  tensor(DType::F32, {2, 3, 1})),
                           EmitContext{"k1_"});
  ASSERT_TRUE(large.isOk());
  EXPECT_EQ(large.value().launches[0].grid[0], 6u);
  EXPECT_NE(large.value().source.find("kiln_np_block_max_nan"), std::string::npos);
  // An empty result needs no launch.
  auto empty = emitKernels(makeOp("kiln.global_max_pool", {tensor(DType::F32, {0, 3, 4})},
                                  tensor(DType::F32, {0, 3, 1})),
                           EmitContext{"k1_"});
  ASSERT_TRUE(empty.isOk());
  EXPECT_TRUE(empty.value().launches.empty());
}

//===-- Pooling, channels last ----------------------------------------------===//

/// [N, C, D...] -> [N, D..., C].
std::vector<int64_t> toLast(std::vector<int64_t> shape) {
  std::rotate(shape.begin() + 1, shape.begin() + 2, shape.end());
  return shape;
}

/// `c` with channels last and `channels` channels.
OpDesc lastPoolOp(const std::string &op, DType dtype, PoolCase c, int64_t channels,
                  std::map<std::string, AttrValue> extra = {}) {
  c.input[1] = channels;
  OpDesc desc = poolOp(op, dtype, c, std::move(extra));
  desc.attrs["channels_last"] = int64_t(1);
  desc.operands[0]->shape = toLast(desc.operands[0]->shape);
  desc.results[0].shape = toLast(desc.results[0].shape);
  return desc;
}

OpDesc lastGlobalPoolOp(const std::string &op, DType dtype, std::vector<int64_t> shape) {
  std::vector<int64_t> out(shape.size(), 1);
  out.front() = shape.front();
  out.back() = shape.back();
  OpDesc desc = makeOp(op, {tensor(dtype, shape)}, tensor(dtype, out));
  desc.attrs["channels_last"] = int64_t(1);
  return desc;
}

TEST(NormPoolKernels, ChannelVectorWidth) {
  using normpool::channelVectorWidth;
  EXPECT_EQ(channelVectorWidth(DType::BF16, 72), 8);
  EXPECT_EQ(channelVectorWidth(DType::F16, 12), 4);
  EXPECT_EQ(channelVectorWidth(DType::F32, 64), 4);
  EXPECT_EQ(channelVectorWidth(DType::F32, 6), 2);
  EXPECT_EQ(channelVectorWidth(DType::F32, 13), 1);
  EXPECT_EQ(channelVectorWidth(DType::BF16, 3), 1);
  EXPECT_EQ(channelVectorWidth(DType::F64, 64), 2);
  EXPECT_EQ(channelVectorWidth(DType::F8E4M3FN, 48), 16);
  EXPECT_EQ(channelVectorWidth(DType::I8, 24), 8);
}

TEST(NormPoolKernels, ChannelsLastPoolsCompileForEveryTypeAndGeometry) {
  Program program;
  const std::vector<PoolCase> cases = {
      {{1, 0, 112, 112}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}},  // ResNet stem max pool
      {{2, 0, 9, 11}, {3, 2}, {2, 3}, {1, 1}, {1, 0, 1, 1}, true}, // ceil_mode, asymmetric pads
      {{1, 0, 7, 9}, {2, 3}, {2, 2}, {2, 1}, {0, 1, 1, 1}, true},  // dilation
      {{2, 0, 7}, {3}, {2}, {1}, {1, 0}, true},                    // 1-d
      {{1, 0, 5, 6, 7}, {3, 2, 2}, {1, 2, 3}, {1, 1, 2}, {1, 0, 1, 1, 1, 0}}, // 3-d
  };
  // Every type at a vectorized and a scalar channel count, f32 and bf16 at the others.
  for (const PoolCase &c : cases)
    for (int64_t channels : {3, 13, 64, 72}) {
      bool everyType = channels == 13 || channels == 72;
      for (DType dtype : everyType ? kFloatTypes : std::vector<DType>{DType::F32, DType::BF16}) {
        EmittedKernels max = program.add(lastPoolOp("kiln.max_pool", dtype, c, channels));
        ASSERT_EQ(max.launches.size(), 1u);
        expectArgs(max.launches[0], args({{kOperand, 0}, {kResult, 0}}));
        for (int64_t includePad : {0, 1}) {
          EmittedKernels avg =
              program.add(lastPoolOp("kiln.avg_pool", dtype, c, channels, {{"count_include_pad", includePad}}));
          ASSERT_EQ(avg.launches.size(), 1u);
          EXPECT_EQ(avg.source.find("padded") != std::string::npos, includePad == 1);
        }
      }
      if (everyType)
        for (DType dtype : {DType::I8, DType::U8})
          program.add(lastPoolOp("kiln.max_pool", dtype, c, channels));
    }
  program.compile("pools_channels_last.cu");
}

TEST(NormPoolKernels, ChannelsLastPoolsVectorizeOverChannels) {
  const PoolCase stem = {{1, 0, 112, 112}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}};
  // 72 bf16 channels: 16-byte vectors of 8, 56 * 56 * 9 of them; the window walks as in NCHW.
  auto bf16 = emitKernels(lastPoolOp("kiln.max_pool", DType::BF16, stem, 72), EmitContext{"k9_"});
  ASSERT_TRUE(bf16.isOk()) << bf16.status().toString();
  const std::string &src = bf16.value().source;
  EXPECT_NE(src.find("kiln_np_vec<__nv_bfloat16, 8>"), std::string::npos) << src;
  EXPECT_NE(src.find("i < 28224LL"), std::string::npos) << src;
  EXPECT_NE(src.find("o1 * 2LL - 1LL"), std::string::npos) << src;
  EXPECT_NE(src.find("* 72LL)"), std::string::npos) << "a tap steps over whole pixels";
  EXPECT_EQ(bf16.value().launches[0].grid[0], (28224u + 255) / 256);
  // 13 channels: one element a thread, still channel-fastest.
  auto odd = emitKernels(lastPoolOp("kiln.avg_pool", DType::F32, stem, 13), EmitContext{"k9_"});
  ASSERT_TRUE(odd.isOk());
  EXPECT_NE(odd.value().source.find("kiln_np_vec<float, 1>"), std::string::npos);
  EXPECT_NE(odd.value().source.find("i < 40768LL"), std::string::npos) << "56 * 56 * 13";
  // The result must keep [N, ..., C].
  OpDesc bad = lastPoolOp("kiln.max_pool", DType::F32, stem, 8);
  bad.results[0].shape = {1, 8, 56, 56};
  expectError(bad, "does not keep the input's N and C");
}

/// A pool fusion group as codegen describes it: a channels-last pool of `dtype` and the
/// per-tensor quantization of its result to `quantized` (ResNet's stem max pool before the
/// first INT8 conv), each op in its own types.
OpDesc poolGroup(const std::string &poolOp, DType dtype, DType quantized, int64_t channels) {
  const PoolCase stem = {{1, 0, 112, 112}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}};
  OpDesc pool = lastPoolOp(poolOp, dtype, stem, channels);
  OpDesc group;
  group.op = "kiln.fusion_group";
  group.name = "maxpool";
  group.attrs["kind"] = std::string("pool");
  group.operands = {pool.operands[0], floatConstant(dtype, {}, {0.0625}), floatConstant(quantized, {}, {0.0})};
  TensorDesc result = pool.results[0];
  result.dtype = quantized;
  group.results = {result};
  group.body.push_back(BodyOp{pool, {{true, 0}}});
  group.body.push_back(BodyOp{makeOp("kiln.quantize", {pool.results[0], group.operands[1], group.operands[2]}, result),
                              {{false, 0}, {true, 1}, {true, 2}}});
  group.yields = {{false, 1}};
  return group;
}

TEST(NormPoolKernels, PoolGroupsQuantizeEachPooledLaneBeforeTheOneWrite) {
  Program program;
  for (DType quantized : {DType::I8, DType::F8E4M3FN})
    for (const char *op : {"kiln.max_pool", "kiln.avg_pool"})
      for (auto [dtype, channels] : std::vector<std::pair<DType, int64_t>>{{DType::BF16, 64}, {DType::F32, 13}}) {
        EmittedKernels k = program.add(poolGroup(op, dtype, quantized, channels));
        ASSERT_EQ(k.launches.size(), 1u);
        // The pooled tensor in, the 8-bit one out; the scale and zero point are baked.
        expectArgs(k.launches[0], args({{kOperand, 0}, {kResult, 0}}));
        std::string ty = dtype == DType::BF16 ? "__nv_bfloat16" : "float";
        std::string q = quantized == DType::I8 ? "signed char" : "__nv_fp8_e4m3";
        std::string lanes = std::to_string(normpool::channelVectorWidth(dtype, channels));
        for (const std::string &text : {"const " + ty + " *__restrict__ x, " + q + " *__restrict__ y",
                                        "kiln_np_vec<" + q + ", " + lanes + "> yvec",
                                        // The lane rounded to the pool's type, as the op stores it,
                                        // then quantized from that value.
                                        ty + " v0[1];\n      kiln_st(v0, 0, ", std::string("kiln_ld(v0, 0)"),
                                        std::string("out.v[j] = v1[0];")})
          EXPECT_NE(k.source.find(text), std::string::npos) << text << "\n" << k.source;
      }
  // An int8 max pool (a quantization moved above it) and the dequantization of its result for
  // a float reader: 16 int8 lanes in, 16 floats out (a 64-byte vector of the result type).
  OpDesc dequantized = poolGroup("kiln.max_pool", DType::I8, DType::I8, 64);
  dequantized.operands[1] = dequantized.body[1].op.operands[1] = floatConstant(DType::F32, {}, {0.0625});
  dequantized.results[0].dtype = DType::F32;
  dequantized.body[1].op = makeOp("kiln.dequantize", dequantized.body[1].op.operands, dequantized.results[0]);
  EmittedKernels k = program.add(dequantized);
  EXPECT_NE(k.source.find("kiln_np_vec<float, 16> yvec"), std::string::npos) << k.source;
  EXPECT_NE(k.source.find("signed char v0[1];"), std::string::npos) << k.source;
  program.compile("pool_groups.cu");
}

TEST(NormPoolKernels, PoolGroupsRefuseBodiesTheirKernelCannotCompute) {
  OpDesc first = poolGroup("kiln.max_pool", DType::BF16, DType::I8, 64);
  first.body[0].op.attrs["channels_last"] = int64_t(0);
  expectGroupError(first, "starts with a channels_last max_pool or avg_pool");
  OpDesc alone = poolGroup("kiln.max_pool", DType::BF16, DType::I8, 64);
  alone.body.pop_back();
  alone.yields = {{false, 0}};
  expectGroupError(alone, "yields the last value of the chain after its pool");
  // The quantize reading a tensor input at the element: the kernel reads only the pool's.
  OpDesc other = poolGroup("kiln.max_pool", DType::BF16, DType::I8, 64);
  other.operands[1] = other.body[1].op.operands[1] = tensor(DType::BF16, {});
  expectGroupError(other, "reads a group input other than the pool's");
}

TEST(NormPoolKernels, ChannelsLastGlobalPoolsCompile) {
  Program program;
  const std::vector<std::vector<int64_t>> shapes = {{1, 7, 7, 2048}, {1, 112, 112, 16}, {1, 28, 28, 72},
                                                    {2, 5, 3},       {3, 1, 1, 13},     {2, 40, 41, 64},
                                                    {1, 3, 0, 8},    {2, 3, 4, 5, 6}};
  for (const auto &shape : shapes)
    for (DType dtype : kFloatTypes)
      for (const char *op : {"kiln.global_avg_pool", "kiln.global_max_pool"}) {
        EmittedKernels k = program.add(lastGlobalPoolOp(op, dtype, shape), /*scratchAllowed=*/true);
        ASSERT_FALSE(k.launches.empty());
        expectArgs(k.launches[0], k.launches.size() == 1 ? args({{kOperand, 0}, {kResult, 0}})
                                                         : args({{kOperand, 0}, {kResult, 0}, {kScratch, 0}}));
      }
  program.compile("global_pools_channels_last.cu");
}

TEST(NormPoolKernels, ChannelsLastGlobalPoolGeometry) {
  // ResNet-50's [1, 7, 7, 2048] in bf16: 256 vectors of 8 channels, 8 a block (128-byte rows)
  // so that 32 blocks share the work; 49 pixels need no split.
  auto resnet = emitKernels(lastGlobalPoolOp("kiln.global_avg_pool", DType::BF16, {1, 7, 7, 2048}), EmitContext{"k1_"});
  ASSERT_TRUE(resnet.isOk()) << resnet.status().toString();
  ASSERT_EQ(resnet.value().launches.size(), 1u);
  EXPECT_EQ(resnet.value().launches[0].grid[0], 32u);
  EXPECT_EQ(resnet.value().launches[0].block[0], 256u);
  EXPECT_TRUE(resnet.value().scratchBytes.empty());
  EXPECT_NE(resnet.value().source.find("kiln_np_vec<__nv_bfloat16, 8>"), std::string::npos);
  // At batch 256 a warp's worth of vectors a block is plenty: 256 * 8 blocks.
  auto batch = emitKernels(lastGlobalPoolOp("kiln.global_avg_pool", DType::BF16, {256, 7, 7, 2048}), EmitContext{"k1_"});
  ASSERT_TRUE(batch.isOk());
  EXPECT_EQ(batch.value().launches[0].grid[0], 2048u);
  // An SE block at 112 x 112 with 16 channels: two vectors, so the 12544 pixels are split over
  // blocks, partials in scratch (f32), folded by a second kernel in a fixed order.
  auto se = emitKernels(lastGlobalPoolOp("kiln.global_avg_pool", DType::BF16, {1, 112, 112, 16}), EmitContext{"k1_"});
  ASSERT_TRUE(se.isOk());
  const EmittedKernels &k = se.value();
  ASSERT_EQ(k.launches.size(), 2u);
  EXPECT_GE(k.launches[0].grid[0], 8u) << "the spatial range must not stay on one SM";
  ASSERT_EQ(k.scratchBytes.size(), 1u);
  EXPECT_EQ(k.scratchBytes[0], uint64_t(k.launches[0].grid[0]) * 16 * 4);
  expectArgs(k.launches[1], args({{kScratch, 0}, {kResult, 0}}));
  EXPECT_EQ(k.launches[1].function, "k1_global_avg_pool_fold");
  EXPECT_NE(k.source.find("/ (float)12544LL"), std::string::npos);
  // Nothing to compute: no launch.
  auto empty = emitKernels(lastGlobalPoolOp("kiln.global_max_pool", DType::F32, {0, 3, 3, 8}), EmitContext{"k1_"});
  ASSERT_TRUE(empty.isOk());
  EXPECT_TRUE(empty.value().launches.empty());
  // The result must be [N, 1, 1, C].
  OpDesc bad = lastGlobalPoolOp("kiln.global_max_pool", DType::F32, {1, 4, 4, 8});
  bad.results[0].shape = {1, 8, 1, 1};
  expectError(bad, "should be [1, 1, 1, 8]");
}

//===-- Normalization -----------------------------------------------------===//

TEST(NormPoolKernels, BatchNormCompiles) {
  Program program;
  const std::vector<std::vector<int64_t>> shapes = {{2, 3}, {1, 64, 56, 56}, {2, 7, 1000003}, {1, 3, 2, 3, 4},
                                                    {1, 1, 1, 1, 1}};
  for (const auto &shape : shapes)
    for (DType dtype : kFloatTypes) {
      std::vector<int64_t> c = {shape[1]};
      // Statistics may have another float type than the input (f32 statistics for f16 data).
      DType stats = dtype == DType::F64 ? DType::F64 : DType::F32;
      EmittedKernels k = program.add(makeOp("kiln.batch_norm",
                                            {tensor(dtype, shape), tensor(stats, c), tensor(dtype, c),
                                             tensor(stats, c), tensor(stats, c)},
                                            tensor(dtype, shape), {{"epsilon", 1e-3}}));
      ASSERT_EQ(k.launches.size(), 1u);
      expectArgs(k.launches[0], args({{kOperand, 0}, {kOperand, 1}, {kOperand, 2}, {kOperand, 3}, {kOperand, 4},
                                      {kResult, 0}}));
    }
  program.compile("batch_norm.cu");
}

TEST(NormPoolKernels, RowNormsCompileForEveryTypeAndRowLength) {
  Program program;
  for (DType dtype : kFloatTypes) {
    // layer_norm: BERT rows of 768 (a warp a row), short rows, long rows in registers, very long
    // rows streamed; scale/bias broadcast to the normalized axes; bias optional.
    struct LayerCase {
      std::vector<int64_t> input;
      int64_t axis;
      std::vector<int64_t> scale;
      bool bias;
    };
    std::vector<LayerCase> layerCases = {
        {{4, 128, 768}, 2, {768}, true},   {{7}, 0, {7}, true},          {{3, 5, 7}, 1, {5, 7}, false},
        {{3, 5, 7}, 1, {1, 7}, true},      {{2, 4096}, 1, {4096}, true}, {{1, 3, 16000}, 2, {16000}, true},
        {{2, 1000003}, 1, {1000003}, false}, {{3, 5, 7}, 1, {5, 1}, true}, {{2, 3, 4, 5, 6}, 0, {}, true},
        {{1, 1025}, 1, {1025}, true},
    };
    // Every shape in f32; the other types on the four code paths (a warp a row, a warp a short
    // row, a block with registers, a streamed block) to keep NVRTC time down.
    if (dtype != DType::F32)
      layerCases = {layerCases[0], layerCases[2], layerCases[4], layerCases[6]};
    for (const LayerCase &c : layerCases) {
      std::optional<TensorDesc> bias;
      if (c.bias)
        bias = tensor(DType::F32, c.scale);
      EmittedKernels k = program.add(makeOp("kiln.layer_norm", {tensor(dtype, c.input), tensor(dtype, c.scale), bias},
                                            tensor(dtype, c.input), {{"axis", c.axis}, {"epsilon", 1e-12}}));
      ASSERT_EQ(k.launches.size(), 1u);
      if (c.bias)
        expectArgs(k.launches[0], args({{kOperand, 0}, {kOperand, 1}, {kOperand, 2}, {kResult, 0}}));
      else
        expectArgs(k.launches[0], args({{kOperand, 0}, {kOperand, 1}, {kResult, 0}}));
    }
    for (const std::vector<int64_t> &shape :
         std::vector<std::vector<int64_t>>{{2, 3, 5, 7}, {1, 64, 256, 256}, {2, 3}, {1, 2, 3, 4, 5}, {2, 3, 1000003}}) {
      std::vector<int64_t> c = {shape[1]};
      EmittedKernels k = program.add(makeOp("kiln.instance_norm",
                                            {tensor(dtype, shape), tensor(dtype, c), tensor(DType::F32, c)},
                                            tensor(dtype, shape)));
      ASSERT_EQ(k.launches.size(), 1u);
      expectArgs(k.launches[0], args({{kOperand, 0}, {kOperand, 1}, {kOperand, 2}, {kResult, 0}}));
    }
    for (auto [shape, groups] : std::vector<std::pair<std::vector<int64_t>, int64_t>>{
             {{2, 6, 5, 7}, 3}, {{1, 32, 64, 64}, 8}, {{3, 4}, 2}, {{2, 6, 3, 3, 3}, 6}, {{1, 4, 1000003}, 1}}) {
      std::vector<int64_t> c = {shape[1]};
      EmittedKernels k = program.add(makeOp("kiln.group_norm",
                                            {tensor(dtype, shape), tensor(dtype, c), tensor(dtype, c)},
                                            tensor(dtype, shape), {{"num_groups", groups}}));
      ASSERT_EQ(k.launches.size(), 1u);
      expectArgs(k.launches[0], args({{kOperand, 0}, {kOperand, 1}, {kOperand, 2}, {kResult, 0}}));
    }
  }
  program.compile("row_norms.cu");
}

/// A norm fusion group as codegen describes it: the residual sum (prologue), the layer_norm,
/// its bf16 cast and E4M3 quantize (epilogue); results: the normalized value, the cast, the
/// quantization. Inputs of `dtype`, widened in the body as kiln-form-fusion-groups does.
OpDesc normGroup(DType dtype, int64_t rows, int64_t size) {
  const std::vector<int64_t> shape = {rows, size};
  OpDesc group;
  group.op = "kiln.fusion_group";
  group.name = "ln";
  group.attrs["kind"] = std::string("norm");
  group.operands = {tensor(dtype, shape), tensor(dtype, shape), tensor(DType::F32, {size}),
                    tensor(DType::F32, {size}), floatConstant(DType::F32, {}, {0.0078125}),
                    floatConstant(DType::F8E4M3FN, {}, {0.0})};
  group.results = {tensor(DType::F32, shape), tensor(DType::BF16, shape), tensor(DType::F8E4M3FN, shape)};
  auto body = [&](OpDesc op, std::vector<BodyRef> refs) {
    group.body.push_back(BodyOp{std::move(op), std::move(refs)});
  };
  auto wide = tensor(DType::F32, shape);
  body(makeOp("kiln.cast", {tensor(dtype, shape)}, wide), {{true, 0}});
  body(makeOp("kiln.cast", {tensor(dtype, shape)}, wide), {{true, 1}});
  body(makeOp("kiln.add", {wide, wide}, wide), {{false, 0}, {false, 1}});
  body(makeOp("kiln.layer_norm", {wide, group.operands[2], group.operands[3]}, wide, {{"axis", int64_t(1)}}),
       {{false, 2}, {true, 2}, {true, 3}});
  body(makeOp("kiln.cast", {wide}, group.results[1]), {{false, 3}});
  body(makeOp("kiln.quantize", {wide, group.operands[4], group.operands[5]}, group.results[2]),
       {{false, 3}, {true, 4}, {true, 5}});
  group.yields = {{false, 3}, {false, 4}, {false, 5}};
  return group;
}

TEST(NormPoolKernels, NormGroupsComputeTheirBodyAroundTheRowKernel) {
  Program program;
  // A warp a row (BERT's 768 in chunks of 8 per lane, 384 in chunks of 4, 100 element by
  // element), a block with registers, a streamed block; f32 and bf16 inputs.
  for (auto [dtype, rows, size] : std::vector<std::tuple<DType, int64_t, int64_t>>{{DType::F32, 33, 768},
                                                                                   {DType::BF16, 33, 768},
                                                                                   {DType::BF16, 5, 384},
                                                                                   {DType::F32, 7, 100},
                                                                                   {DType::F32, 3, 5000},
                                                                                   {DType::BF16, 2, 20000}}) {
    EmittedKernels k = program.add(normGroup(dtype, rows, size));
    ASSERT_EQ(k.launches.size(), 1u);
    // The four tensors are read; the scale and zero point are baked; three results.
    expectArgs(k.launches[0], args({{kOperand, 0}, {kOperand, 1}, {kOperand, 2}, {kOperand, 3}, {kResult, 0},
                                    {kResult, 1}, {kResult, 2}}));
    for (const char *store : {"y0[idx] = v3[0];", "y1[idx] = v4[0];", "y2[idx] = v5[0];"})
      EXPECT_NE(k.source.find(store), std::string::npos) << store << "\n" << k.source;
    // The prologue reads both inputs at the element; the layer_norm reads the sum.
    EXPECT_NE(k.source.find("kiln_ld(p0, idx)"), std::string::npos) << k.source;
    EXPECT_NE(k.source.find("xv = (float)kiln_ld(v2, 0)"), std::string::npos) << k.source;
    EXPECT_EQ(k.source.find("kItems") == std::string::npos, size == 20000) << "streamed only past registers";
    // Rows a warp takes in whole chunks also have the chunked form, used when every chunked
    // pointer is aligned: each input and result of the row's shape moved a chunk at a time.
    int64_t chunk = size % 256 == 0 ? 8 : size % 128 == 0 ? 4 : 0;
    std::string ty = dtype == DType::F32 ? "float" : "__nv_bfloat16", vec = "kiln_np_vec<" + ty + ", " +
                                                                          std::to_string(chunk) + ">";
    EXPECT_EQ(k.source.find("kV = ") != std::string::npos, chunk > 0) << k.source;
    if (chunk > 0) {
      for (const std::string &text :
           {"const " + vec + " p0_c = *reinterpret_cast<const " + vec + " *>(p0 + base + col0);",
            std::string("kiln_ld(p1_c.v, e)"), "(size_t)p0 % sizeof(" + vec + ") == 0", std::string("y0_c.v[e] = v3[0];"),
            std::string("y2_c.v[e] = v5[0];"), std::string("= y1_c;")})
        EXPECT_NE(k.source.find(text), std::string::npos) << text << "\n" << k.source;
      // The f32 scale and bias (p2, p3) of the row's shape too, at the chunk's column.
      std::string fvec = "kiln_np_vec<float, " + std::to_string(chunk) + ">";
      for (const std::string &text : {"const " + fvec + " p2_c = *reinterpret_cast<const " + fvec + " *>(p2 + col0);",
                                      "const " + fvec + " p3_c = *reinterpret_cast<const " + fvec + " *>(p3 + col0);",
                                      std::string("(float)kiln_ld(p2_c.v, e) + (float)kiln_ld(p3_c.v, e)"),
                                      "(size_t)p2 % sizeof(" + fvec + ") == 0"})
        EXPECT_NE(k.source.find(text), std::string::npos) << text << "\n" << k.source;
    }
  }
  program.compile("norm_groups.cu");
}

/// BERT's embedding norm group: the word-embedding lookup (a row gather of `table` [vocab,
/// size] at ids [rows]) plus the position rows, normalized, cast to bf16.
OpDesc embeddingNormGroup(int64_t rows, int64_t size, int64_t vocab = 50) {
  const std::vector<int64_t> shape = {rows, size};
  OpDesc group;
  group.op = "kiln.fusion_group";
  group.name = "embeddings";
  group.attrs["kind"] = std::string("norm");
  group.operands = {tensor(DType::F32, {vocab, size}), tensor(DType::I64, {rows}), tensor(DType::F32, shape),
                    tensor(DType::F32, {size}), tensor(DType::F32, {size})};
  group.results = {tensor(DType::BF16, shape)};
  auto wide = tensor(DType::F32, shape);
  group.body.push_back(BodyOp{makeOp("kiln.gather", {group.operands[0], group.operands[1]}, wide, {{"axis", int64_t(0)}}),
                              {{true, 0}, {true, 1}}});
  group.body.push_back(BodyOp{makeOp("kiln.add", {wide, wide}, wide), {{false, 0}, {true, 2}}});
  group.body.push_back(BodyOp{makeOp("kiln.layer_norm", {wide, group.operands[3], group.operands[4]}, wide,
                                     {{"axis", int64_t(1)}}),
                              {{false, 1}, {true, 3}, {true, 4}}});
  group.body.push_back(BodyOp{makeOp("kiln.cast", {wide}, group.results[0]), {{false, 2}}});
  group.yields = {{false, 3}};
  return group;
}

TEST(NormPoolKernels, NormGroupsReadAnEmbeddingLookupFromTheTable) {
  Program program;
  // 768 in chunks of 8 a lane, and 100 element by element.
  for (int64_t size : {768, 100}) {
    EmittedKernels k = program.add(embeddingNormGroup(9, size));
    ASSERT_EQ(k.launches.size(), 1u);
    expectArgs(k.launches[0],
               args({{kOperand, 0}, {kOperand, 1}, {kOperand, 2}, {kOperand, 3}, {kOperand, 4}, {kResult, 0}}));
    // Element by element: the table row the element's row index names (wrapped once; out of
    // range reads zeros), at the element's column.
    for (const char *text : {"kiln_np_gather_row((kiln_i64)p1[idx / kSize], 50LL)",
                             "v0[0] = gi < 0 ? (float)0.0f : p0[gi * kSize + idx % kSize];"})
      EXPECT_NE(k.source.find(text), std::string::npos) << text << "\n" << k.source;
    EXPECT_EQ(k.source.find("kiln_ld(p0, "), std::string::npos) << "the table is no broadcast operand\n" << k.source;
    if (size == 768) {
      // In chunks: one 32-byte read of the named row per chunk, the pointer's alignment checked.
      const std::string vec = "kiln_np_vec<float, 8>";
      for (const std::string &text :
           {std::string("const kiln_i64 p0_gi = kiln_np_gather_row((kiln_i64)p1[row], 50LL);"),
            "const " + vec + " p0_g = p0_gi < 0 ? " + vec + "{} : *reinterpret_cast<const " + vec +
                " *>(p0 + p0_gi * kSize + col0);",
            std::string("v0[0] = p0_g.v[e];"), "(size_t)p0 % sizeof(" + vec + ") == 0"})
        EXPECT_NE(k.source.find(text), std::string::npos) << text << "\n" << k.source;
    }
  }
  program.compile("embedding_norm_groups.cu");
}

TEST(NormPoolKernels, NormGroupsRefuseBodiesTheirKernelCannotCompute) {
  // A gather whose table rows are not the normalized rows.
  OpDesc wide = embeddingNormGroup(4, 64);
  wide.operands[0] = tensor(DType::F32, {50, 32});
  expectGroupError(wide, "takes whole rows of a 2-d table of the normalized length 64");
  // The epilogue reading the prologue's sum: the kernel no longer holds it when it normalizes.
  OpDesc late = normGroup(DType::F32, 4, 64);
  late.body[4].args = {{false, 2}};
  expectGroupError(late, "epilogue reads a value of its prologue");
  // A result that is not a value of the normalized shape.
  OpDesc input = normGroup(DType::F32, 4, 64);
  input.yields[0] = {true, 0};
  expectGroupError(input, "not a body value of the normalized shape");
  // No layer_norm at all.
  OpDesc none = normGroup(DType::F32, 4, 64);
  none.body[3].op.op = "kiln.relu";
  expectGroupError(none, "holds one kiln.layer_norm");
  // A scale computed in the body instead of read from a group input.
  OpDesc scale = normGroup(DType::F32, 4, 64);
  scale.body[3].args[1] = {false, 0};
  expectGroupError(scale, "reads its scale and bias from group inputs");
}

TEST(NormPoolKernels, RowNormGeometry) {
  auto emit = [](std::vector<int64_t> shape, int64_t axis) {
    std::vector<int64_t> scale(shape.begin() + axis, shape.end());
    return emitKernels(makeOp("kiln.layer_norm", {tensor(DType::F32, shape), tensor(DType::F32, scale), std::nullopt},
                              tensor(DType::F32, shape), {{"axis", axis}}),
                       EmitContext{"k2_"});
  };
  // BERT: 512 rows of 768, a warp each, 24 values a lane in registers.
  auto bert = emit({1, 512, 768}, 2);
  ASSERT_TRUE(bert.isOk());
  EXPECT_EQ(bert.value().launches[0].grid[0], 64u);
  EXPECT_EQ(bert.value().launches[0].block[0], 256u);
  EXPECT_NE(bert.value().source.find("kItems = 24"), std::string::npos);
  EXPECT_NE(bert.value().source.find("kiln_np_warp_sum"), std::string::npos);
  // The default epsilon is the f32 value of 1e-5.
  EXPECT_NE(bert.value().source.find("9.9999997473787516e-06"), std::string::npos) << bert.value().source;
  // 4096: one block of 256 a row, 16 values a thread.
  auto wide = emit({3, 4096}, 1);
  ASSERT_TRUE(wide.isOk());
  EXPECT_EQ(wide.value().launches[0].grid[0], 3u);
  EXPECT_EQ(wide.value().launches[0].block[0], 256u);
  EXPECT_NE(wide.value().source.find("kItems = 16"), std::string::npos);
  EXPECT_NE(wide.value().source.find("kiln_np_block_sum"), std::string::npos);
  // Beyond registers: streamed.
  auto huge = emit({2, 1000003}, 1);
  ASSERT_TRUE(huge.isOk());
  EXPECT_EQ(huge.value().launches[0].block[0], 1024u);
  EXPECT_EQ(huge.value().source.find("kItems"), std::string::npos);
  // 1024-thread blocks launch only with registers bounded for them.
  EXPECT_NE(huge.value().source.find("__launch_bounds__(1024) k2_layer_norm("), std::string::npos);
  // group_norm indexes scale/bias by channel: group start + col / spatial size.
  auto group = emitKernels(makeOp("kiln.group_norm",
                                  {tensor(DType::F32, {2, 6, 5, 7}), tensor(DType::F32, {6}), tensor(DType::F32, {6})},
                                  tensor(DType::F32, {2, 6, 5, 7}), {{"num_groups", int64_t(3)}}),
                           EmitContext{"k3_"});
  ASSERT_TRUE(group.isOk());
  EXPECT_NE(group.value().source.find("((row % 3LL) * 2LL + col / 35LL)"), std::string::npos)
      << group.value().source;
}

//===-- Resize ------------------------------------------------------------===//

OpDesc resizeOp(DType dtype, std::vector<int64_t> in, std::vector<int64_t> out, std::map<std::string, AttrValue> attrs,
                std::optional<TensorDesc> scales = std::nullopt, std::optional<TensorDesc> roi = std::nullopt) {
  return makeOp("kiln.resize", {tensor(dtype, std::move(in)), std::move(scales), std::move(roi)},
                tensor(dtype, std::move(out)), std::move(attrs));
}

TEST(NormPoolKernels, ResizeCompilesForEveryModeAndTransform) {
  Program program;
  const std::vector<std::string> transforms = {"half_pixel",   "half_pixel_symmetric", "pytorch_half_pixel",
                                               "align_corners", "asymmetric",           "tf_half_pixel_for_nn"};
  const std::vector<std::string> nearestModes = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  for (const std::string &transform : transforms) {
    for (const std::string &nearest : nearestModes)
      program.add(resizeOp(DType::F32, {1, 3, 4, 5}, {1, 3, 8, 3},
                           {{"mode", std::string("nearest")},
                            {"coordinate_transformation_mode", transform},
                            {"nearest_mode", nearest}}));
    for (const std::string &mode : {"linear", "cubic"})
      for (int64_t exclude : {0, 1})
        program.add(resizeOp(DType::F16, {1, 3, 4, 5}, {1, 3, 7, 9},
                             {{"mode", mode}, {"coordinate_transformation_mode", transform},
                              {"exclude_outside", exclude}, {"cubic_coeff_a", -0.5}}));
  }
  // Scales given (the output size is floor(in * scale)), every element type, rank 1 to 5,
  // only some axes resized, downsampling, a single element.
  for (DType dtype : kFloatTypes) {
    program.add(resizeOp(dtype, {1, 2, 4, 4}, {1, 2, 8, 8}, {{"mode", std::string("linear")}},
                         floatConstant(DType::F32, {4}, {1, 1, 2, 2})));
    program.add(resizeOp(dtype, {1, 2, 5, 5}, {1, 2, 3, 3}, {{"mode", std::string("cubic")}},
                         floatConstant(DType::F32, {4}, {1, 1, 0.6, 0.6})));
    program.add(resizeOp(dtype, {7}, {15}, {{"mode", std::string("linear")}}));
    program.add(resizeOp(dtype, {2, 3, 4}, {2, 6, 4}, {{"mode", std::string("nearest")}}));
    program.add(resizeOp(dtype, {1, 2, 3, 4, 5}, {2, 2, 5, 4, 1}, {{"mode", std::string("linear")}}));
    program.add(resizeOp(dtype, {1, 1}, {1000, 1003}, {{"mode", std::string("nearest")}}));
    program.add(resizeOp(dtype, {1, 3, 1000003}, {1, 3, 1000003}, {{"mode", std::string("linear")}})); // copy
    program.add(resizeOp(dtype, {}, {}, {{"mode", std::string("cubic")}}));                            // rank 0
  }
  // tf_crop_and_resize with extrapolation (roi of another float type), and in nearest mode.
  for (const std::string &mode : {"nearest", "linear", "cubic"}) {
    program.add(resizeOp(DType::F32, {1, 1, 4, 4}, {1, 1, 3, 3},
                         {{"mode", mode}, {"coordinate_transformation_mode", std::string("tf_crop_and_resize")},
                          {"extrapolation_value", 10.0}},
                         std::nullopt,
                         floatConstant(DType::F32, {8}, {0, 0, 0.4, 0.6, 1, 1, 1.2, 1.7})));
    program.add(resizeOp(DType::BF16, {1, 1, 4, 4}, {1, 1, 3, 3},
                         {{"mode", mode}, {"coordinate_transformation_mode", std::string("tf_crop_and_resize")}},
                         floatConstant(DType::F32, {4}, {1, 1, 0.8, 0.8}),
                         floatConstant(DType::F16, {8}, {0, 0, 0.4, 0.6, 1, 1, 0.6, 0.8})));
  }
  program.compile("resize.cu");
}

TEST(NormPoolKernels, ResizeLaunchAndTables) {
  // Nearest 2x upsampling (YOLO/UNet): a gather through one offset table per resized axis.
  auto nearest = emitKernels(resizeOp(DType::F16, {1, 3, 4, 5}, {1, 3, 8, 10},
                                      {{"mode", std::string("nearest")},
                                       {"coordinate_transformation_mode", std::string("asymmetric")},
                                       {"nearest_mode", std::string("floor")}}),
                             EmitContext{"k4_"});
  ASSERT_TRUE(nearest.isOk()) << nearest.status().toString();
  const EmittedKernels &n = nearest.value();
  ASSERT_EQ(n.launches.size(), 1u);
  expectArgs(n.launches[0], args({{kOperand, 0}, {kResult, 0}}));
  EXPECT_EQ(n.launches[0].function, "k4_resize");
  // Rows: input row y / 2 (stride 5); columns x / 2.
  EXPECT_NE(n.source.find("k4_resize_o1[8] = {\n  0LL, 0LL, 5LL, 5LL, 10LL, 10LL, 15LL, 15LL,"), std::string::npos)
      << n.source;
  EXPECT_NE(n.source.find("k4_resize_o2[10] = {\n  0LL, 0LL, 1LL, 1LL, 2LL, 2LL, 3LL, 3LL, 4LL, 4LL,"),
            std::string::npos);
  EXPECT_EQ(n.source.find("_w1"), std::string::npos) << "no weights for a gather";
  // Bilinear: index and weight tables; half_pixel 2x gives weights 0.25/0.75.
  auto linear = emitKernels(resizeOp(DType::F32, {1, 1, 2, 2}, {1, 1, 4, 4}, {{"mode", std::string("linear")}}),
                            EmitContext{"k5_"});
  ASSERT_TRUE(linear.isOk());
  EXPECT_NE(linear.value().source.find("k5_resize_w1[8] = {\n  0.25, 0.75, 0.75, 0.25, 0.25, 0.75, 0.75, 0.25,"),
            std::string::npos)
      << linear.value().source;
  EXPECT_NE(linear.value().source.find("k5_resize_i2[8] = {\n  0LL, 0LL, 0LL, 1LL, 0LL, 1LL, 1LL, 1LL,"),
            std::string::npos);
  EXPECT_NE(linear.value().source.find("kiln_np_st(y, i, v2)"), std::string::npos);
}

TEST(NormPoolKernels, ResizeTapsMatchTheOnnxReference) {
  using normpool::resizeAxisTaps;
  normpool::ResizeAxisParams linear;
  linear.mode = "linear";
  auto taps = resizeAxisTaps(linear, 2, 4, 2.0, 0, 1);
  ASSERT_EQ(taps.size(), 4u);
  // half_pixel: x_ori = (y + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75, 1.25 (edges clamp).
  EXPECT_EQ(taps[0].index, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(taps[0].weight, (std::vector<double>{0.25, 0.75}));
  EXPECT_EQ(taps[1].index, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(taps[1].weight, (std::vector<double>{0.75, 0.25}));
  EXPECT_EQ(taps[3].index, (std::vector<int64_t>{1, 1}));

  normpool::ResizeAxisParams cubic;
  cubic.mode = "cubic";
  cubic.transform = "asymmetric";
  taps = resizeAxisTaps(cubic, 4, 8, 2.0, 0, 1);
  // x_ori = 0.5 at y = 1: neighbours -1..2 (clamped to 0), weights of a = -0.75 at ratio 0.5.
  EXPECT_EQ(taps[1].index, (std::vector<int64_t>{0, 0, 1, 2}));
  EXPECT_EQ(taps[1].weight, (std::vector<double>{-0.09375, 0.59375, 0.59375, -0.09375}));
  // A whole x_ori (y = 2: x_ori = 1) is ratio 1: all weight on that pixel, the third tap.
  EXPECT_EQ(taps[2].index, (std::vector<int64_t>{0, 0, 1, 2}));
  EXPECT_EQ(taps[2].weight, (std::vector<double>{0, 0, 1, 0}));
  // exclude_outside renormalizes the weights inside the image.
  cubic.excludeOutside = true;
  taps = resizeAxisTaps(cubic, 4, 8, 2.0, 0, 1);
  EXPECT_EQ(taps[1].weight[0], 0.0);
  EXPECT_DOUBLE_EQ(taps[1].weight[1], 0.59375 / 1.09375);

  normpool::ResizeAxisParams nearest;
  nearest.transform = "align_corners";
  nearest.nearestMode = "round_prefer_ceil";
  taps = resizeAxisTaps(nearest, 3, 5, 5.0 / 3.0, 0, 1);
  // x_ori = y * 2 / 4 = 0, 0.5, 1, 1.5, 2: ties go up.
  std::vector<int64_t> picked;
  for (const auto &t : taps)
    for (size_t m = 0; m < t.weight.size(); ++m)
      if (t.weight[m] == 1.0)
        picked.push_back(t.index[m]);
  EXPECT_EQ(picked, (std::vector<int64_t>{0, 1, 1, 2, 2}));

  normpool::ResizeAxisParams crop;
  crop.mode = "linear";
  crop.transform = "tf_crop_and_resize";
  crop.roiType = DType::F32;
  taps = resizeAxisTaps(crop, 4, 3, 0.75, 0.4, 1.2);
  // x_ori = 0.4 * 3 + y * 0.8 * 3 / 2 = 1.2, 2.4, 3.6: the last one is outside.
  EXPECT_FALSE(taps[0].extrapolated);
  EXPECT_FALSE(taps[1].extrapolated);
  EXPECT_TRUE(taps[2].extrapolated);
}

TEST(NormPoolKernels, RoundToDType) {
  using normpool::roundToDType;
  EXPECT_EQ(roundToDType(1.0 + std::ldexp(1.0, -11), DType::F16), 1.0); // tie to even
  EXPECT_EQ(roundToDType(1.0 + 3 * std::ldexp(1.0, -11), DType::F16), 1.0 + std::ldexp(1.0, -9));
  EXPECT_TRUE(std::isinf(roundToDType(65520.0, DType::F16)));
  EXPECT_EQ(roundToDType(65519.0, DType::F16), 65504.0);
  EXPECT_EQ(roundToDType(std::ldexp(1.0, -25), DType::F16), 0.0); // half the smallest subnormal: even
  EXPECT_EQ(roundToDType(std::ldexp(3.0, -26), DType::F16), std::ldexp(1.0, -24));
  EXPECT_EQ(roundToDType(0.1, DType::F32), (double)0.1f);
  EXPECT_EQ(roundToDType(1.00390625, DType::BF16), 1.0);
  EXPECT_EQ(roundToDType(464.0, DType::F8E4M3FN), 448.0);
  EXPECT_TRUE(std::isnan(roundToDType(470.0, DType::F8E4M3FN)));
  EXPECT_EQ(roundToDType(0.3, DType::F64), 0.3);
}

//===-- Resize with runtime scales/roi -------------------------------------===//

const std::vector<std::string> kResizeTransforms = {"half_pixel",    "half_pixel_symmetric", "pytorch_half_pixel",
                                                    "align_corners", "asymmetric",           "tf_crop_and_resize",
                                                    "tf_half_pixel_for_nn"};
const std::vector<std::string> kNearestModes = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};

/// The arguments a runtime resize kernel takes: the input, each runtime scales/roi, the result.
std::vector<KernelArg> runtimeResizeArgs(const OpDesc &op) {
  std::vector<KernelArg> expected = {KernelArg::operand(0)};
  for (uint32_t k : {1u, 2u})
    if (op.operands[k] && !op.operands[k]->isConstant())
      expected.push_back(KernelArg::operand(k));
  expected.push_back(KernelArg::result(0));
  return expected;
}

TEST(NormPoolKernels, ResizeRuntimeScalesCompileForEveryModeAndTransform) {
  Program program;
  std::vector<OpDesc> ops;
  // Every mode x transform, scales (and roi) read at run time; nearest_mode and exclude_outside
  // cycle over the transforms so each value appears (one NVRTC compile per kernel is costly).
  for (size_t k = 0; k < kResizeTransforms.size(); ++k) {
    const std::string &transform = kResizeTransforms[k];
    std::optional<TensorDesc> roi;
    if (transform == "tf_crop_and_resize")
      roi = tensor(DType::F32, {4});
    for (const std::string &mode : {"nearest", "linear", "cubic"})
      ops.push_back(resizeOp(k % 2 ? DType::F16 : DType::F32, {4, 5}, {8, 3},
                             {{"mode", mode}, {"coordinate_transformation_mode", transform},
                              {"nearest_mode", kNearestModes[k % kNearestModes.size()]},
                              {"exclude_outside", int64_t(k % 2)}, {"cubic_coeff_a", -0.5},
                              {"extrapolation_value", 2.5}},
                             tensor(DType::F32, {2}), roi));
  }
  // Every element type; rank 0 to 6, a 1000003-element copy-like resize, a big upsampling.
  for (DType dtype : kFloatTypes) {
    ops.push_back(resizeOp(dtype, {}, {}, {{"mode", std::string("cubic")}}, tensor(DType::F32, {0})));
    ops.push_back(resizeOp(dtype, {7}, {15}, {{"mode", std::string("linear")}}, tensor(DType::F32, {1})));
    ops.push_back(resizeOp(dtype, {1, 1}, {1000, 1003}, {{"mode", std::string("nearest")}}, tensor(DType::F32, {2})));
  }
  ops.push_back(resizeOp(DType::F32, {2, 3, 4}, {2, 6, 4}, {{"mode", std::string("cubic")}}, tensor(DType::F32, {3})));
  ops.push_back(resizeOp(DType::F32, {1, 2, 5, 5}, {1, 2, 3, 3}, {{"mode", std::string("cubic")}},
                         tensor(DType::F32, {4})));
  ops.push_back(resizeOp(DType::BF16, {1, 2, 3, 4, 5}, {2, 2, 5, 4, 1}, {{"mode", std::string("linear")}},
                         tensor(DType::F32, {5})));
  ops.push_back(resizeOp(DType::F32, {1, 3, 1000003}, {1, 3, 1000003}, {{"mode", std::string("linear")}},
                         tensor(DType::F32, {3})));
  ops.push_back(resizeOp(DType::F32, {2, 1, 2, 1, 2, 3}, {2, 2, 2, 1, 3, 3}, {{"mode", std::string("cubic")}},
                         tensor(DType::F32, {6})));
  // Only one of scales/roi at run time, and roi of every float type (its arithmetic rounds to it).
  const std::map<std::string, AttrValue> crop = {{"mode", std::string("linear")},
                                                 {"coordinate_transformation_mode", std::string("tf_crop_and_resize")},
                                                 {"extrapolation_value", -1.0}};
  ops.push_back(resizeOp(DType::F32, {1, 1, 4, 4}, {1, 1, 3, 3}, crop, floatConstant(DType::F32, {4}, {1, 1, 0.8, 0.8}),
                         tensor(DType::F16, {8})));
  ops.push_back(resizeOp(DType::BF16, {1, 1, 4, 4}, {1, 1, 3, 3}, crop, tensor(DType::F32, {4}),
                         floatConstant(DType::BF16, {8}, {0, 0, 0.4, 0.6, 1, 1, 1.2, 1.7})));
  for (DType roiType : kFloatTypes)
    ops.push_back(resizeOp(DType::F32, {1, 1, 4, 4}, {1, 1, 3, 3}, crop, std::nullopt, tensor(roiType, {8})));
  // A roi that only decides which axes are identities (not tf_crop_and_resize).
  ops.push_back(resizeOp(DType::F32, {2, 3, 4}, {2, 3, 8}, {{"mode", std::string("nearest")}}, std::nullopt,
                         tensor(DType::F32, {6})));

  for (const OpDesc &op : ops) {
    EmittedKernels k = program.add(op);
    ASSERT_EQ(k.launches.size(), 1u) << normpool::formatShape(op.results[0].shape);
    expectArgs(k.launches[0], runtimeResizeArgs(op));
    // No baked sampling tables: the taps come from the device.
    EXPECT_EQ(k.source.find("_w1["), std::string::npos);
    EXPECT_EQ(k.source.find("_o1["), std::string::npos);
  }
  program.compile("resize_runtime.cu");
}

TEST(NormPoolKernels, ResizeRuntimeReadsScalesAndRoiFromTheDevice) {
  OpDesc op = resizeOp(DType::F32, {1, 1, 2, 2}, {1, 1, 4, 4},
                       {{"mode", std::string("linear")},
                        {"coordinate_transformation_mode", std::string("tf_crop_and_resize")}},
                       tensor(DType::F32, {4}), tensor(DType::F16, {8}));
  auto emitted = emitKernels(op, EmitContext{"k6_"});
  ASSERT_TRUE(emitted.isOk()) << emitted.status().toString();
  const EmittedKernels &k = emitted.value();
  ASSERT_EQ(k.launches.size(), 1u);
  EXPECT_EQ(k.launches[0].function, "k6_resize");
  expectArgs(k.launches[0], args({{kOperand, 0}, {kOperand, 1}, {kOperand, 2}, {kResult, 0}}));
  EXPECT_NE(k.source.find("const __half *__restrict__ roi"), std::string::npos) << k.source;
  EXPECT_NE(k.source.find("const double s3 = (double)scales[3];"), std::string::npos);
  EXPECT_NE(k.source.find("const double re3 = (double)kiln_ld(roi, 7LL);"), std::string::npos);
  // Shared helpers are per-op (prefixed), and the coordinate math avoids contracted FMAs.
  EXPECT_NE(k.source.find("struct k6_resize_math {"), std::string::npos);
  EXPECT_NE(k.source.find("__dmul_rn"), std::string::npos);
  EXPECT_EQ(k.source.find("KILN_RZ_FN"), std::string::npos);

  // Constant scales with a runtime roi: the scales are baked, only the roi is an argument.
  op = resizeOp(DType::F32, {1, 1, 2, 2}, {1, 1, 4, 4}, {{"mode", std::string("cubic")}},
                floatConstant(DType::F32, {4}, {1, 1, 2, 2.25}), tensor(DType::F64, {8}));
  emitted = emitKernels(op, EmitContext{"k7_"});
  ASSERT_TRUE(emitted.isOk()) << emitted.status().toString();
  expectArgs(emitted.value().launches[0], args({{kOperand, 0}, {kOperand, 2}, {kResult, 0}}));
  EXPECT_NE(emitted.value().source.find("const double s3 = 2.25;"), std::string::npos) << emitted.value().source;

  // Constant scales and roi keep the table kernel.
  op = resizeOp(DType::F32, {1, 1, 2, 2}, {1, 1, 4, 4}, {{"mode", std::string("linear")}},
                floatConstant(DType::F32, {4}, {1, 1, 2, 2}));
  emitted = emitKernels(op, EmitContext{"k8_"});
  ASSERT_TRUE(emitted.isOk());
  EXPECT_NE(emitted.value().source.find("k8_resize_w1["), std::string::npos);
  expectArgs(emitted.value().launches[0], args({{kOperand, 0}, {kResult, 0}}));
}

/// Python's math.isclose, as the interpreter decides that an axis is an identity.
bool isCloseForTest(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b)); }

TEST(NormPoolKernels, ResizeDeviceTapsMatchTheHostTables) {
  struct Sizes {
    int64_t in, out;
  };
  const std::vector<Sizes> sizes = {{1, 1}, {1, 5}, {2, 4}, {4, 2}, {3, 5}, {5, 3}, {4, 4}, {7, 15}, {10, 3}, {6, 1}, {9, 23}};
  struct Roi {
    bool present;
    double begin, end;
  };
  const std::vector<Roi> rois = {{false, 0, 1}, {true, 0, 1}, {true, 0.4, 1.2}, {true, 0.1, 0.8},
                                 {true, -0.3, 0.7}, {true, 0, 1 + 1e-12}, {true, 0.25, 0.25}};
  using normpool::DeviceResizeTap;
  std::map<DeviceResizeTap::Kind, int64_t> seen;
  int64_t compared = 0;
  for (const std::string &mode : {"nearest", "linear", "cubic"})
    for (const std::string &transform : kResizeTransforms)
      for (const std::string &nearest : kNearestModes)
        for (int exclude : {0, 1})
          for (double cubicA : {-0.75, -0.5}) {
            if (mode != "nearest" && nearest != "round_prefer_floor")
              continue; // nearest_mode only matters to nearest
            if (mode != "cubic" && cubicA != -0.75)
              continue;
            for (const Sizes &size : sizes) {
              double natural = double(size.out) / double(size.in);
              for (double scale : {natural, double(float(natural)), 1.0, 1.0 + 1e-10, 0.6, 2.5, double(1.0f / 3.0f)})
                for (const Roi &roi : rois)
                  for (DType roiType : {DType::F32, DType::F16, DType::F64, DType::BF16, DType::F8E4M3FN}) {
                    if (!roi.present && roiType != DType::F32)
                      continue;
                    if (transform == "tf_crop_and_resize" && !roi.present)
                      continue;
                    normpool::ResizeAxisParams p;
                    p.mode = mode;
                    p.transform = transform;
                    p.nearestMode = nearest;
                    p.cubicA = cubicA;
                    p.excludeOutside = exclude;
                    if (roi.present)
                      p.roiType = roiType;
                    // The roi values as the device reads them: already of the roi's element type.
                    double begin = roi.present ? normpool::roundToDType(roi.begin, roiType) : 0.0;
                    double end = roi.present ? normpool::roundToDType(roi.end, roiType) : 1.0;
                    bool identity = isCloseForTest(scale, 1.0) && size.out == size.in &&
                                    (!roi.present || (begin == 0.0 && isCloseForTest(end, 1.0)));
                    std::vector<normpool::ResizeAxisTap> table;
                    if (!identity)
                      table = normpool::resizeAxisTaps(p, size.in, size.out, scale, begin, end);
                    for (int64_t y = 0; y < size.out; ++y) {
                      DeviceResizeTap d = normpool::deviceResizeTap(p, size.in, size.out, scale, roi.present, begin,
                                                                    end, y);
                      ++seen[d.kind];
                      ++compared;
                      std::string where = mode + "/" + transform + "/" + nearest + " exclude " +
                                          std::to_string(exclude) + " a " + std::to_string(cubicA) + " " +
                                          std::to_string(size.in) + "->" + std::to_string(size.out) + " scale " +
                                          std::to_string(scale) + " roi " + std::to_string(begin) + ".." +
                                          std::to_string(end) + " y " + std::to_string(y);
                      if (identity) {
                        ASSERT_EQ(d.kind, DeviceResizeTap::Identity) << where;
                        EXPECT_EQ(d.tap.index, (std::vector<int64_t>{y})) << where;
                        EXPECT_EQ(d.tap.weight, (std::vector<double>{1.0})) << where;
                        continue;
                      }
                      if (table[y].extrapolated) {
                        ASSERT_EQ(d.kind, DeviceResizeTap::Extrapolated) << where;
                        continue;
                      }
                      ASSERT_EQ(d.kind, DeviceResizeTap::Taps) << where;
                      EXPECT_EQ(d.tap.index, table[y].index) << where;
                      ASSERT_EQ(d.tap.weight.size(), table[y].weight.size()) << where;
                      for (size_t m = 0; m < d.tap.weight.size(); ++m) // bit for bit
                        EXPECT_EQ(std::memcmp(&d.tap.weight[m], &table[y].weight[m], sizeof(double)), 0)
                            << where << " tap " << m << ": " << d.tap.weight[m] << " vs " << table[y].weight[m];
                    }
                  }
            }
          }
  EXPECT_GT(compared, 100000);
  EXPECT_GT(seen[DeviceResizeTap::Taps], 0);
  EXPECT_GT(seen[DeviceResizeTap::Identity], 0);
  EXPECT_GT(seen[DeviceResizeTap::Extrapolated], 0);
  EXPECT_EQ(seen[DeviceResizeTap::Invalid], 0);
}

TEST(NormPoolKernels, ResizeDeviceTapsRejectInvalidScales) {
  using normpool::DeviceResizeTap;
  normpool::ResizeAxisParams p;
  p.mode = "linear";
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  for (double scale : {0.0, -0.0, -2.0, inf, -inf, nan})
    EXPECT_EQ(normpool::deviceResizeTap(p, 4, 8, scale, false, 0, 1, 3).kind, DeviceResizeTap::Invalid) << scale;
  // A scale so small the source coordinate overflows to infinity.
  EXPECT_EQ(normpool::deviceResizeTap(p, 4, 8, 1e-320, false, 0, 1, 7).kind, DeviceResizeTap::Invalid);
  // tf_crop_and_resize: a NaN roi is no coordinate at all; an infinite one is outside the input.
  p.transform = "tf_crop_and_resize";
  p.roiType = DType::F32;
  EXPECT_EQ(normpool::deviceResizeTap(p, 4, 8, 2.0, true, nan, 1, 3).kind, DeviceResizeTap::Invalid);
  EXPECT_EQ(normpool::deviceResizeTap(p, 4, 8, 2.0, true, inf, inf, 3).kind, DeviceResizeTap::Invalid);
  EXPECT_EQ(normpool::deviceResizeTap(p, 4, 8, 2.0, true, 0, inf, 3).kind, DeviceResizeTap::Extrapolated);
}

TEST(NormPoolKernels, ResizeDeviceRoiRoundingMatchesRoundToDType) {
  std::vector<double> values = {0.0,  -0.0,  1.0,   0.1,    -0.3,   65504.0, 65519.0, 65520.0, 464.0,     470.0,
                                448.0, 1e-8, 1e-40, 1e-310, 3e300, -3e300,  0x1.fep127, 0x1.ffp127,
                                std::ldexp(1.0, -25), std::ldexp(3.0, -26), 1.0 + std::ldexp(1.0, -11),
                                std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()};
  // Deterministic pseudo-random values over many binades (ties included via short mantissas).
  uint64_t state = 0x9e3779b97f4a7c15ull;
  for (int k = 0; k < 20000; ++k) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    double mantissa = double(state >> 11) / double(uint64_t(1) << 53);
    if (k % 3 == 0)
      mantissa = std::round(mantissa * 4096) / 4096; // short mantissas: exact ties in small types
    int exponent = int((state >> 3) % 300) - 150;
    values.push_back((k % 2 ? -1 : 1) * std::ldexp(1 + mantissa, exponent));
  }
  for (DType type : kFloatTypes)
    for (double v : values) {
      double host = normpool::roundToDType(v, type), device = normpool::deviceRoundRoi(v, type);
      if (std::isnan(host))
        EXPECT_TRUE(std::isnan(device)) << v << " to " << plan::dtypeName(type);
      else
        EXPECT_EQ(std::memcmp(&host, &device, sizeof(double)), 0)
            << v << " to " << plan::dtypeName(type) << ": " << host << " vs " << device;
    }
  EXPECT_TRUE(std::isnan(normpool::deviceRoundRoi(std::numeric_limits<double>::quiet_NaN(), DType::F16)));
}

//===-- Errors ------------------------------------------------------------===//

TEST(NormPoolKernels, BadInputGivesErrorsNamingTheOp) {
  // Runtime scales/roi go to the device-tap kernel, but their shapes and types are still checked.
  expectError(resizeOp(DType::F32, {1, 1, 2, 2}, {1, 1, 4, 4}, {{"mode", std::string("linear")}},
                       tensor(DType::F32, {3})),
              "scales must be a 1-d f32 tensor of shape [4]");
  expectError(resizeOp(DType::F32, {1, 1, 2, 2}, {1, 1, 4, 4}, {{"mode", std::string("linear")}},
                       tensor(DType::F16, {4})),
              "scales must be a 1-d f32 tensor");
  expectError(resizeOp(DType::F32, {1, 1, 2, 2}, {1, 1, 4, 4},
                       {{"coordinate_transformation_mode", std::string("tf_crop_and_resize")}}, std::nullopt,
                       tensor(DType::I64, {8})),
              "roi must be a 1-d float tensor of shape [8]");
  expectError(resizeOp(DType::F32, {1, 0, 2}, {1, 3, 4}, {}, tensor(DType::F32, {3})), "empty axis 1");
  expectError(resizeOp(DType::F32, {2, 2}, {4, 4}, {{"mode", std::string("area")}}, tensor(DType::F32, {2})),
              "unsupported mode 'area'");
  expectError(resizeOp(DType::F32, {1, 1, 2, 2}, {1, 1, 4, 4}, {{"mode", std::string("area")}}),
              "unsupported mode 'area'");
  expectError(resizeOp(DType::F32, {2, 2}, {4, 4}, {{"nearest_mode", std::string("round")}}),
              "unsupported nearest_mode");
  expectError(resizeOp(DType::F32, {2, 2}, {4, 4}, {{"coordinate_transformation_mode", std::string("tf_crop_and_resize")}}),
              "needs a roi");
  expectError(resizeOp(DType::F32, {2, 2}, {4, 4}, {}, floatConstant(DType::F32, {2}, {2, 0})),
              "positive and finite");
  expectError(resizeOp(DType::F32, {0, 2}, {4, 4}, {}), "empty axis 0");
  expectError(resizeOp(DType::F32, {3, 1000000}, {3, 2000000}, {{"mode", std::string("linear")}}),
              "beyond the GPU resize kernel's compile-time tables");
  expectError(resizeOp(DType::I32, {2, 2}, {4, 4}, {}), "floating-point");

  PoolCase c = kPoolCases[0];
  expectError(poolOp("kiln.max_pool", DType::I32, c), "floating-point");
  expectError(poolOp("kiln.avg_pool", DType::I8, c), "floating-point");
  OpDesc fourD = makeOp("kiln.max_pool", {tensor(DType::F32, {1, 1, 2, 2, 2, 2})}, tensor(DType::F32, {1, 1, 2, 2, 2, 2}),
                        {{"kernel_shape", std::vector<int64_t>{1, 1, 1, 1}},
                         {"strides", std::vector<int64_t>{1, 1, 1, 1}},
                         {"dilations", std::vector<int64_t>{1, 1, 1, 1}},
                         {"pads", std::vector<int64_t>(8, 0)}});
  expectError(fourD, "1 to 3 spatial axes");
  OpDesc noPads = poolOp("kiln.avg_pool", DType::F32, c);
  noPads.attrs.erase("pads");
  expectError(noPads, "missing attribute 'pads'");
  OpDesc zeroStride = poolOp("kiln.max_pool", DType::F32, c);
  zeroStride.attrs["strides"] = std::vector<int64_t>{0, 2};
  expectError(zeroStride, "must be positive");
  OpDesc shortKernel = poolOp("kiln.max_pool", DType::F32, c);
  shortKernel.attrs["kernel_shape"] = std::vector<int64_t>{3};
  expectError(shortKernel, "kernel_shape, strides and dilations need 2 values");

  expectError(makeOp("kiln.global_avg_pool", {tensor(DType::F32, {2, 3, 4})}, tensor(DType::F32, {2, 3})),
              "result shape");
  expectError(makeOp("kiln.global_max_pool", {tensor(DType::U8, {2, 3, 4})}, tensor(DType::U8, {2, 3, 1})),
              "floating-point");

  std::vector<int64_t> x = {2, 6, 5};
  expectError(makeOp("kiln.group_norm", {tensor(DType::F32, x), tensor(DType::F32, {6}), tensor(DType::F32, {6})},
                     tensor(DType::F32, x), {{"num_groups", int64_t(4)}}),
              "must be positive and divide the 6 channels");
  expectError(makeOp("kiln.group_norm", {tensor(DType::F32, x), tensor(DType::F32, {3}), tensor(DType::F32, {3})},
                     tensor(DType::F32, x), {{"num_groups", int64_t(3)}}),
              "scale must have shape [6]");
  expectError(makeOp("kiln.layer_norm", {tensor(DType::F32, x), tensor(DType::F32, {5}), std::nullopt},
                     tensor(DType::F32, x), {{"axis", int64_t(3)}}),
              "axis 3 is out of range");
  expectError(makeOp("kiln.layer_norm", {tensor(DType::F32, x), tensor(DType::F32, {6, 4}), std::nullopt},
                     tensor(DType::F32, x), {{"axis", int64_t(1)}}),
              "does not broadcast to the normalized axes [6, 5]");
  expectError(makeOp("kiln.layer_norm", {tensor(DType::F32, x), tensor(DType::F32, {5})}, tensor(DType::F32, x),
                     {{"axis", int64_t(2)}}),
              "operand slot");
  expectError(makeOp("kiln.instance_norm", {tensor(DType::F32, x), tensor(DType::F32, {6}), std::nullopt},
                     tensor(DType::F32, x)),
              "bias operand (#2) is missing");
  expectError(makeOp("kiln.batch_norm",
                     {tensor(DType::F32, x), tensor(DType::F32, {6}), tensor(DType::F32, {6}), tensor(DType::F32, {6}),
                      tensor(DType::F32, {5})},
                     tensor(DType::F32, x)),
              "variance must have shape [6]");
  expectError(makeOp("kiln.batch_norm",
                     {tensor(DType::F16, x), tensor(DType::F32, {6}), tensor(DType::F32, {6}), tensor(DType::F32, {6}),
                      tensor(DType::F32, {6})},
                     tensor(DType::F32, x)),
              "result element type");
}

TEST(NormPoolKernels, FillReplacesPlaceholders) {
  EXPECT_EQ(normpool::fill("a @X@ b @Y@@X@ c@", {{"X", "1"}, {"Y", "22"}}), "a 1 b 221 c@");
  EXPECT_EQ(normpool::fill("x @notakey y", {{"X", "1"}}), "x @notakey y");
}

} // namespace
} // namespace kiln::codegen
