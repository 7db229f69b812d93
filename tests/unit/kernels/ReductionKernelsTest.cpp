//===- ReductionKernelsTest.cpp - reduction/scan/top-k/softmax/einsum emitters ===//
//
// Emits every op of the family for representative shapes (odd sizes, 1, 1000003 elements,
// rank 0..5, broadcasting) and every element type the ODS allows, compiles each group as one
// NVRTC program (the program prelude included) and checks that every launch's function is in
// the PTX, that launches name the right operands, results and scratch buffers, and that the
// strategy chosen for a shape is the intended one (split reductions, cached softmax rows, ...).
// Bad input must give an error naming the op and node. Numerical checks need a GPU: the lead
// runs the ONNX node tests through these kernels on the H200.
//
//===----------------------------------------------------------------------===//

#include "codegen/kernels/KernelSource.h"
#include "KernelTestSupport.h"
#include "codegen/kernels/Nvrtc.h"

#include <gtest/gtest.h>

namespace kiln::codegen {
namespace {

using namespace kiln::codegen::kerneltest;


const std::vector<DType> kFloatTypes = {DType::F32, DType::F16, DType::BF16, DType::F64, DType::F8E4M3FN};
const std::vector<DType> kIntTypes = {DType::I8,  DType::I16, DType::I32, DType::I64,
                                      DType::U8,  DType::U16, DType::U32, DType::U64};
const std::vector<std::string> kReduceOps = {
    "kiln.reduce_mean", "kiln.reduce_sum",        "kiln.reduce_max",        "kiln.reduce_min",
    "kiln.reduce_prod", "kiln.reduce_l1",         "kiln.reduce_l2",         "kiln.reduce_sum_square",
    "kiln.reduce_log_sum", "kiln.reduce_log_sum_exp"};

std::vector<DType> numericTypes() {
  std::vector<DType> all = kFloatTypes;
  all.insert(all.end(), kIntTypes.begin(), kIntTypes.end());
  return all;
}



OpDesc makeOp(std::string op, std::vector<std::optional<TensorDesc>> operands, std::vector<TensorDesc> results,
              std::map<std::string, AttrValue> attrs = {}) {
  OpDesc desc;
  desc.op = std::move(op);
  desc.name = "node_" + desc.op.substr(desc.op.find('.') + 1);
  desc.operands = std::move(operands);
  desc.results = std::move(results);
  desc.attrs = std::move(attrs);
  return desc;
}

OpDesc reduceOp(const std::string &op, DType type, std::vector<int64_t> in, std::optional<std::vector<int64_t>> axes,
                std::vector<int64_t> out, int64_t keepdims = 1, int64_t noop = 0) {
  std::vector<std::optional<TensorDesc>> operands = {tensor(type, std::move(in))};
  if (axes)
    operands.push_back(intConstant(DType::I64, {static_cast<int64_t>(axes->size())}, *axes));
  return makeOp(op, std::move(operands), {tensor(type, std::move(out))},
                {{"keepdims", keepdims}, {"noop_with_empty_axes", noop}});
}

/// Emits many ops into one program, then compiles it once.
class Program {
public:
  /// Emits `op`, checks its launches, and returns the kernels for more checks.
  EmittedKernels add(const OpDesc &op) {
    std::string symbol = "k" + std::to_string(next_++) + "_";
    auto emitted = emitKernels(op, EmitContext{symbol});
    EXPECT_TRUE(emitted.isOk()) << op.op << ": " << emitted.status().toString();
    if (!emitted.isOk())
      return {};
    const EmittedKernels &k = emitted.value();
    EXPECT_FALSE(k.launches.empty()) << op.op;
    for (const KernelLaunch &launch : k.launches) {
      EXPECT_EQ(launch.function.rfind(symbol, 0), 0u) << launch.function;
      EXPECT_NE(k.source.find(" " + launch.function + "("), std::string::npos) << launch.function;
      EXPECT_GE(launch.grid[0], 1u);
      EXPECT_EQ(launch.block[0] % 32, 0u) << "the kernels assume whole warps";
      EXPECT_LE(launch.block[0], 1024u);
      EXPECT_LE(launch.sharedBytes, 48u * 1024);
      for (const KernelArg &arg : launch.args) {
        if (arg.kind == KernelArg::Kind::Operand) {
          EXPECT_LT(arg.index, op.operands.size()) << launch.function;
          EXPECT_TRUE(arg.index < op.operands.size() && op.operands[arg.index]) << launch.function;
        } else if (arg.kind == KernelArg::Kind::Result) {
          EXPECT_LT(arg.index, op.results.size()) << launch.function;
        } else {
          EXPECT_LT(arg.index, k.scratchBytes.size()) << launch.function;
        }
      }
      functions_.push_back(launch.function);
    }
    for (uint64_t bytes : k.scratchBytes)
      EXPECT_GT(bytes, 0u) << op.op;
    // Every global symbol the source defines carries the prefix.
    for (const char *marker : {"__global__ void __launch_bounds__(", "__device__ __forceinline__ "}) {
      for (size_t at = k.source.find(marker); at != std::string::npos; at = k.source.find(marker, at + 1)) {
        size_t nameAt = k.source.find(symbol, at);
        EXPECT_LT(nameAt, k.source.find('\n', at)) << k.source.substr(at, 120);
      }
    }
    source_ += k.source;
    return k;
  }

  void compile(const std::string &name) {
    auto program = compileWithNvrtc(programPrelude() + source_, name);
    ASSERT_TRUE(program.isOk()) << program.status().toString().substr(0, 4000);
    for (const std::string &fn : functions_)
      EXPECT_NE(program.value().ptx.find(".entry " + fn + "("), std::string::npos) << fn;
  }

private:
  int next_ = 0;
  std::string source_;
  std::vector<std::string> functions_;
};

void expectArgs(const KernelLaunch &launch, std::vector<std::pair<KernelArg::Kind, uint32_t>> expected) {
  ASSERT_EQ(launch.args.size(), expected.size()) << launch.function;
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(launch.args[i].kind, expected[i].first) << launch.function << " arg " << i;
    EXPECT_EQ(launch.args[i].index, expected[i].second) << launch.function << " arg " << i;
  }
}

void expectError(const OpDesc &op, const std::string &fragment) {
  auto emitted = emitKernels(op, EmitContext{"k0_"});
  ASSERT_FALSE(emitted.isOk()) << op.op << " should fail with: " << fragment;
  const std::string message = emitted.status().message();
  EXPECT_NE(message.find(op.op + " '" + op.name + "'"), std::string::npos) << message;
  EXPECT_NE(message.find(fragment), std::string::npos) << message;
}

constexpr auto kOperand = KernelArg::Kind::Operand;
constexpr auto kResult = KernelArg::Kind::Result;
constexpr auto kScratch = KernelArg::Kind::Scratch;

//===-- reduce_* ----------------------------------------------------------===//

// Every op with every element type, in the layouts the emitter distinguishes. To keep one NVRTC
// run per test fast, each (op, type) pair takes one layout and the layouts rotate over the
// pairs, so every op meets every layout and every type.
TEST(ReductionKernels, ReduceEveryOpAndTypeCompiles) {
  Program program;
  const std::vector<DType> types = numericTypes();
  for (size_t o = 0; o < kReduceOps.size(); ++o)
    for (size_t t = 0; t < types.size(); ++t) {
      const std::string &op = kReduceOps[o];
      const DType type = types[t];
      const bool lse = op == "kiln.reduce_log_sum_exp";
      switch ((o + t) % 4) {
      case 0: { // column layout: the innermost axis is kept
        EmittedKernels k = program.add(reduceOp(op, type, {3, 5, 7}, std::vector<int64_t>{1}, {3, 1, 7}));
        ASSERT_EQ(k.launches.size(), lse ? 2u : 1u) << op;
        expectArgs(k.launches[0], lse ? std::vector<std::pair<KernelArg::Kind, uint32_t>>{{kOperand, 0}, {kResult, 0}, {kScratch, 0}}
                                      : std::vector<std::pair<KernelArg::Kind, uint32_t>>{{kOperand, 0}, {kResult, 0}});
        break;
      }
      case 1: { // one long reduction: split across blocks, partials folded by a second kernel
        EmittedKernels k = program.add(reduceOp(op, type, {1000003}, std::nullopt, {1}));
        ASSERT_EQ(k.launches.size(), lse ? 4u : 2u) << op;
        expectArgs(k.launches[0], lse ? std::vector<std::pair<KernelArg::Kind, uint32_t>>{{kOperand, 0}, {kResult, 0}, {kScratch, 0}, {kScratch, 1}}
                                      : std::vector<std::pair<KernelArg::Kind, uint32_t>>{{kOperand, 0}, {kResult, 0}, {kScratch, 0}});
        EXPECT_EQ(k.scratchBytes.size(), lse ? 2u : 1u);
        break;
      }
      case 2: // warp per output (BERT's mean over 768)
        program.add(reduceOp(op, type, {128, 768}, std::vector<int64_t>{-1}, {128, 1}));
        break;
      default: // block per output, several outputs
        program.add(reduceOp(op, type, {7, 5000}, std::vector<int64_t>{1}, {7}, 0));
        break;
      }
    }
  program.compile("reduce_types.cu");
}

TEST(ReductionKernels, ReduceShapesCompile) {
  Program program;
  const std::vector<DType> types = {DType::F32, DType::I32, DType::F16, DType::U64};
  for (size_t o = 0; o < kReduceOps.size(); ++o) {
    const std::string &op = kReduceOps[o];
    size_t n = o;
    auto next = [&] { return types[n++ % types.size()]; };
    // Rank 0: reducing "all" axes of a scalar.
    program.add(reduceOp(op, next(), {}, std::nullopt, {}));
    // Rank 5, non-adjacent axes, negative axis, keepdims=0.
    program.add(reduceOp(op, next(), {2, 3, 4, 5, 6}, std::vector<int64_t>{0, 2, -1}, {3, 5}, 0));
    // ResNet global pooling as a reduction over H, W.
    program.add(reduceOp(op, next(), {2, 2048, 7, 7}, std::vector<int64_t>{2, 3}, {2, 2048, 1, 1}));
    // Few outputs, long non-innermost axis: column split across blocks.
    EmittedKernels split = program.add(reduceOp(op, next(), {1000003, 3}, std::vector<int64_t>{0}, {1, 3}));
    EXPECT_GE(split.launches.size(), 2u) << op;
    // Short rows, size-1 axes only, empty reductions, empty outputs.
    program.add(reduceOp(op, next(), {1000003, 3}, std::vector<int64_t>{1}, {1000003}, 0));
    program.add(reduceOp(op, next(), {7, 1, 3}, std::vector<int64_t>{1}, {7, 1, 3}));
    program.add(reduceOp(op, next(), {3, 0}, std::vector<int64_t>{1}, {3, 1}));
    program.add(reduceOp(op, next(), {0, 3}, std::vector<int64_t>{1}, {0}, 0));
    // Empty axes: all axes, or the input unchanged with noop_with_empty_axes.
    program.add(reduceOp(op, next(), {4, 5}, std::vector<int64_t>{}, {1, 1}));
    EmittedKernels noop = program.add(reduceOp(op, next(), {4, 5}, std::vector<int64_t>{}, {4, 5}, 1, 1));
    ASSERT_EQ(noop.launches.size(), 1u);
    expectArgs(noop.launches[0], {{kOperand, 0}, {kResult, 0}});
  }
  program.compile("reduce_shapes.cu");
}

TEST(ReductionKernels, ReduceAxesFromAttributeAndRuntimeOperand) {
  Program program;
  // Axes as an attribute (older opsets).
  OpDesc attr = makeOp("kiln.reduce_sum", {tensor(DType::F32, {4, 6})}, {tensor(DType::F32, {4})},
                       {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t(0)}});
  program.add(attr);
  // Runtime axes: keepdims=1 fixes them through the result shape; the tuned kernel runs, then a
  // one-block kernel checks the operand's values and fills the result with NaN when they are
  // not ones the interpreter accepts.
  OpDesc runtime = makeOp("kiln.reduce_mean", {tensor(DType::F16, {4, 6, 5}), tensor(DType::I64, {2})},
                          {tensor(DType::F16, {4, 1, 1})});
  EmittedKernels k = program.add(runtime);
  ASSERT_EQ(k.launches.size(), 2u);
  expectArgs(k.launches[0], {{kOperand, 0}, {kResult, 0}});
  expectArgs(k.launches[1], {{kOperand, 1}, {kResult, 0}});
  EXPECT_EQ(k.launches[1].grid[0], 1u);
  EXPECT_NE(k.source.find("if (axesValid) return;"), std::string::npos);
  // keepdims=0 where only one choice of axes fits.
  EmittedKernels unique = program.add(makeOp("kiln.reduce_max", {tensor(DType::F32, {4, 6, 5}), tensor(DType::I64, {1})},
                                             {tensor(DType::F32, {4, 5})}, {{"keepdims", int64_t(0)}}));
  ASSERT_EQ(unique.launches.size(), 2u);
  expectArgs(unique.launches[1], {{kOperand, 1}, {kResult, 0}});
  // An empty runtime axes operand: all axes (its values do not matter, nothing reads them).
  EmittedKernels empty = program.add(makeOp("kiln.reduce_l2", {tensor(DType::F32, {4, 6}), tensor(DType::I64, {0})},
                                            {tensor(DType::F32, {1, 1})}));
  ASSERT_EQ(empty.launches.size(), 1u);
  expectArgs(empty.launches[0], {{kOperand, 0}, {kResult, 0}});
  // ... or the input unchanged with noop_with_empty_axes.
  EmittedKernels noop = program.add(makeOp("kiln.reduce_sum", {tensor(DType::F32, {4, 6}), tensor(DType::I64, {0})},
                                           {tensor(DType::F32, {4, 6})}, {{"noop_with_empty_axes", int64_t(1)}}));
  ASSERT_EQ(noop.launches.size(), 1u);
  expectArgs(noop.launches[0], {{kOperand, 0}, {kResult, 0}});
  // keepdims=0 with two choices (axis 1 or 2 of 4x3x3 -> 4x3): the kernel reads the axes.
  EmittedKernels ambiguous = program.add(makeOp("kiln.reduce_sum", {tensor(DType::F32, {4, 3, 3}), tensor(DType::I64, {1})},
                                                {tensor(DType::F32, {4, 3})}, {{"keepdims", int64_t(0)}}));
  ASSERT_EQ(ambiguous.launches.size(), 1u);
  expectArgs(ambiguous.launches[0], {{kOperand, 0}, {kOperand, 1}, {kResult, 0}});
  program.compile("reduce_axes.cu");
}

// ONNX test_reduce_sum_do_not_keepdims_{example,random}: 3x2x2 -> 3x2 with axes a graph input.
// The result shape fits axis 1 and axis 2, so the kernel must read the axes; every reduce op
// and every element type takes this path.
TEST(ReductionKernels, ReduceRuntimeAxesNodeTestCase) {
  Program program;
  const std::vector<DType> types = numericTypes();
  // Three types per op, rotating, so every type and every op is met in one small program.
  for (size_t o = 0; o < kReduceOps.size(); ++o)
    for (size_t j = 0; j < 3; ++j) {
      const std::string &op = kReduceOps[o];
      const DType type = types[(3 * o + j) % types.size()];
      OpDesc desc = makeOp(op, {tensor(type, {3, 2, 2}), tensor(DType::I64, {1})}, {tensor(type, {3, 2})},
                           {{"keepdims", int64_t(0)}});
      EmittedKernels k = program.add(desc);
      ASSERT_EQ(k.launches.size(), 1u) << op;
      expectArgs(k.launches[0], {{kOperand, 0}, {kOperand, 1}, {kResult, 0}});
      EXPECT_TRUE(k.scratchBytes.empty()) << op;
      EXPECT_NE(k.source.find("axesValue[i]"), std::string::npos) << op;
      // Invalid axes poison the result; a trap would leave the CUDA context unusable.
      EXPECT_EQ(k.source.find("__trap()"), std::string::npos) << op;
      EXPECT_NE(k.source.find("if (!axesValid)"), std::string::npos) << op;
    }
  program.compile("reduce_runtime_axes_node.cu");
}

// Runtime axes for ranks 1-4, keepdims 0 and 1, every reduce op, f32/f16/i32/i64: keepdims=0
// shapes with equal sizes leave the axes open (device-read kernel, including size-1 axes,
// empty reductions and long axes); rank 1 and keepdims=1 shapes fix them (checked, then tuned).
TEST(ReductionKernels, ReduceRuntimeAxesCompile) {
  Program program;
  const std::vector<DType> types = {DType::F32, DType::F16, DType::I32, DType::I64};
  struct Case {
    std::vector<int64_t> in, out;
    int64_t axesCount, keepdims;
    bool readsAxes; // the device-read kernel (else: check kernel + tuned kernels)
  };
  const std::vector<Case> cases = {
      {{7}, {}, 1, 0, false},                // rank 1 -> scalar: one choice
      {{1000003}, {1}, 1, 1, false},         // rank 1, long, keepdims
      {{3, 3}, {3}, 1, 0, true},             // rank 2: axis 0 or 1
      {{1009, 1009}, {1009}, 1, 0, true},    // long reduced axis, many outputs
      {{3, 2, 2}, {3, 2}, 1, 0, true},       // the ONNX node test
      {{2, 3, 2}, {2}, 2, 0, true},          // two axes: {1, 2} or {0, 1}
      {{5, 1, 5}, {5}, 2, 0, true},          // a size-1 axis among the candidates
      {{3, 0, 3}, {3}, 2, 0, true},          // the reduction may be empty
      {{3, 4, 5}, {3, 1, 5}, 1, 1, false},   // keepdims: the shape fixes the axes
      {{2, 3, 3, 2}, {2, 3, 2}, 1, 0, true}, // rank 4: axis 1 or 2
      {{2, 3, 3, 2}, {2, 3}, 2, 0, true},    // rank 4: {2, 3} or {1, 3}
      {{2, 3, 3, 2}, {1, 3, 1, 2}, 2, 1, false},
  };
  std::vector<size_t> reads, fixed;
  for (size_t i = 0; i < cases.size(); ++i)
    (cases[i].readsAxes ? reads : fixed).push_back(i);
  ASSERT_EQ(reads.size(), 2 * types.size()) << "the rotation below covers every device-read case per op";
  // To keep one NVRTC run fast, each (op, type) pair takes two device-read cases, rotating so
  // every op meets every one of them (4 types x 2 = 8 cases), and every fourth pair one fixed case.
  size_t pair = 0;
  for (const std::string &op : kReduceOps)
    for (DType type : types) {
      std::vector<size_t> picked = {reads[(2 * pair) % reads.size()], reads[(2 * pair + 1) % reads.size()]};
      if (pair % 4 == 0)
        picked.push_back(fixed[(pair / 4) % fixed.size()]);
      ++pair;
      for (size_t i : picked) {
        const Case &c = cases[i];
        OpDesc desc = makeOp(op, {tensor(type, c.in), tensor(DType::I64, {c.axesCount})}, {tensor(type, c.out)},
                             {{"keepdims", c.keepdims}});
        EmittedKernels k = program.add(desc);
        ASSERT_FALSE(k.launches.empty()) << op;
        if (c.readsAxes) {
          ASSERT_EQ(k.launches.size(), 1u) << op;
          expectArgs(k.launches[0], {{kOperand, 0}, {kOperand, 1}, {kResult, 0}});
        } else {
          ASSERT_GE(k.launches.size(), 2u) << op;
          expectArgs(k.launches.back(), {{kOperand, 1}, {kResult, 0}});
          for (size_t l = 0; l + 1 < k.launches.size(); ++l)
            EXPECT_EQ(k.launches[l].args[0].index, 0u) << op; // the input, never the axes
        }
      }
    }
  program.compile("reduce_runtime_axes.cu");
}

TEST(ReductionKernels, ReduceRuntimeAxesErrors) {
  // The kernel reads the axes as i64 (the ODS type).
  expectError(makeOp("kiln.reduce_sum", {tensor(DType::F32, {3, 2, 2}), tensor(DType::I32, {1})},
                     {tensor(DType::F32, {3, 2})}, {{"keepdims", int64_t(0)}}),
              "must be i64");
  // A rank-0 input has no axis any value could name.
  expectError(makeOp("kiln.reduce_max", {tensor(DType::F32, {}), tensor(DType::I64, {1})}, {tensor(DType::F32, {})}),
              "rank-0");
  // No choice of axes gives the result shape, or the axes count does not fit it.
  expectError(makeOp("kiln.reduce_sum", {tensor(DType::F32, {3, 2, 2}), tensor(DType::I64, {1})},
                     {tensor(DType::F32, {3, 3})}, {{"keepdims", int64_t(0)}}),
              "is no reduction of");
  expectError(makeOp("kiln.reduce_sum", {tensor(DType::F32, {3, 2, 2}), tensor(DType::I64, {2})},
                     {tensor(DType::F32, {3, 2})}, {{"keepdims", int64_t(0)}}),
              "does not fit reducing 2 axes");
  expectError(makeOp("kiln.reduce_mean", {tensor(DType::F32, {3, 2, 2}), tensor(DType::I64, {1})},
                     {tensor(DType::F32, {3, 2})}),
              "does not match input rank");
}

TEST(ReductionKernels, ReduceErrors) {
  expectError(reduceOp("kiln.reduce_sum", DType::F32, {4, 5}, std::vector<int64_t>{2}, {4, 5}), "out of range");
  expectError(reduceOp("kiln.reduce_sum", DType::F32, {4, 5}, std::vector<int64_t>{1, -1}, {4, 1}), "repeated");
  expectError(reduceOp("kiln.reduce_sum", DType::F32, {4, 5}, std::vector<int64_t>{1}, {4}), "the result has 4");
  expectError(reduceOp("kiln.reduce_prod", DType::Bool, {4, 5}, std::vector<int64_t>{1}, {4, 1}), "bool");
  OpDesc mixed = reduceOp("kiln.reduce_mean", DType::F32, {4, 5}, std::vector<int64_t>{1}, {4, 1});
  mixed.results[0].dtype = DType::F16;
  expectError(mixed, "element type");
}

//===-- argmax / argmin ---------------------------------------------------===//

TEST(ReductionKernels, ArgEveryTypeAndLayoutCompiles) {
  Program program;
  int variant = 0;
  for (const char *op : {"kiln.argmax", "kiln.argmin"})
    for (DType type : numericTypes()) {
      auto arg = [&](std::vector<int64_t> in, int64_t axis, std::vector<int64_t> out, int64_t keepdims, int64_t last) {
        return makeOp(op, {tensor(type, std::move(in))}, {tensor(DType::I64, std::move(out))},
                      {{"axis", axis}, {"keepdims", keepdims}, {"select_last_index", last}});
      };
      EmittedKernels warp = program.add(arg({7, 1000}, 1, {7, 1}, 1, 0)); // warp per output
      ASSERT_EQ(warp.launches.size(), 1u);
      expectArgs(warp.launches[0], {{kOperand, 0}, {kResult, 0}});
      // The other layouts rotate over the types.
      switch (variant++ % 4) {
      case 0: program.add(arg({3, 5000}, 1, {3}, 0, 1)); break;            // block per output
      case 1: program.add(arg({7, 5, 3}, 1, {7, 3}, 0, 0)); break;         // thread per output, strided
      case 2: program.add(arg({1000003}, 0, {}, 0, 1)); break;             // rank 1 -> scalar
      default: program.add(arg({2, 3, 1, 4, 5}, 4, {2, 3, 1, 4, 1}, 1, 0)); break;
      }
    }
  program.compile("arg.cu");
}

TEST(ReductionKernels, ArgErrors) {
  expectError(makeOp("kiln.argmax", {tensor(DType::F32, {4, 5})}, {tensor(DType::I64, {4, 1})}, {{"axis", int64_t(2)}}),
              "out of range");
  expectError(makeOp("kiln.argmin", {tensor(DType::F32, {4, 0})}, {tensor(DType::I64, {4, 1})}, {{"axis", int64_t(1)}}),
              "empty axis");
  expectError(makeOp("kiln.argmax", {tensor(DType::F32, {4, 5})}, {tensor(DType::I32, {4, 1})}, {{"axis", int64_t(1)}}),
              "i64");
  expectError(makeOp("kiln.argmax", {tensor(DType::F32, {4, 5})}, {tensor(DType::I64, {4, 1})}), "axis");
}

//===-- cumsum ------------------------------------------------------------===//

TEST(ReductionKernels, CumSumCompiles) {
  Program program;
  auto cumsum = [](DType type, std::vector<int64_t> shape, TensorDesc axis, int64_t exclusive, int64_t reverse) {
    return makeOp("kiln.cumsum", {tensor(type, shape), std::move(axis)}, {tensor(type, shape)},
                  {{"exclusive", exclusive}, {"reverse", reverse}});
  };
  int variant = 0;
  for (DType type : numericTypes()) {
    // Long contiguous rows (block scan), short rows, strided axis.
    EmittedKernels k = program.add(cumsum(type, {3, 1000003}, intConstant(DType::I64, {}, {1}), 0, 0));
    ASSERT_EQ(k.launches.size(), 1u);
    expectArgs(k.launches[0], {{kOperand, 0}, {kResult, 0}});
    if (variant++ % 2 == 0)
      program.add(cumsum(type, {7, 10}, intConstant(DType::I32, {1}, {-1}), 1, 0)); // short rows
    else
      program.add(cumsum(type, {7, 5, 3}, intConstant(DType::I64, {}, {1}), 1, 1)); // strided axis
  }
  for (int64_t exclusive : {0, 1})
    for (int64_t reverse : {0, 1}) {
      program.add(cumsum(DType::F32, {1000}, intConstant(DType::I64, {}, {0}), exclusive, reverse));
      program.add(cumsum(DType::I64, {2, 3, 4, 5, 6}, intConstant(DType::I64, {}, {-3}), exclusive, reverse));
      // Runtime axis, read on the device.
      EmittedKernels runtime = program.add(cumsum(DType::F16, {4, 5, 6}, tensor(DType::I32, {}), exclusive, reverse));
      ASSERT_EQ(runtime.launches.size(), 1u);
      expectArgs(runtime.launches[0], {{kOperand, 0}, {kOperand, 1}, {kResult, 0}});
      program.add(cumsum(DType::U8, {1000003}, tensor(DType::I64, {1}), exclusive, reverse));
    }
  program.compile("cumsum.cu");

  expectError(cumsum(DType::F32, {4, 5}, intConstant(DType::I64, {}, {2}), 0, 0), "out of range");
  expectError(cumsum(DType::F32, {}, intConstant(DType::I64, {}, {0}), 0, 0), "rank-0");
  expectError(cumsum(DType::F32, {4, 5}, intConstant(DType::I64, {2}, {0, 1}), 0, 0), "one value");
}

//===-- topk --------------------------------------------------------------===//

OpDesc topk(DType type, std::vector<int64_t> in, int64_t axis, int64_t k, int64_t largest = 1) {
  std::vector<int64_t> out = in;
  out[axis] = k;
  return makeOp("kiln.topk", {tensor(type, in)}, {tensor(type, out), tensor(DType::I64, out)},
                {{"axis", axis}, {"largest", largest}, {"sorted", int64_t(1)}});
}

TEST(ReductionKernels, TopKCompiles) {
  Program program;
  int variant = 0;
  for (DType type : numericTypes()) {
    EmittedKernels k = program.add(topk(type, {7, 1000}, 1, 5));
    ASSERT_EQ(k.launches.size(), 1u);
    expectArgs(k.launches[0], {{kOperand, 0}, {kResult, 0}, {kResult, 1}});
    if (variant++ % 2 == 0)
      program.add(topk(type, {3, 7, 5}, 1, 7, 0)); // k == axis size, strided axis, smallest
    else
      program.add(topk(type, {100003}, 0, 3)); // too long for shared memory: selection rounds
  }
  program.add(topk(DType::F32, {1}, 0, 1));
  program.add(topk(DType::F32, {4, 9}, 1, 0)); // k = 0: empty results
  program.add(topk(DType::F64, {2, 3, 4, 5, 6}, 3, 2));
  program.compile("topk.cu");

  expectError(topk(DType::F32, {4, 5}, 1, 6), "exceeds");
  expectError(topk(DType::F32, {4, 5}, 2, 1), "out of range");
}

//===-- softmax / log_softmax ---------------------------------------------===//

TEST(ReductionKernels, SoftmaxCompiles) {
  Program program;
  int variant = 0;
  for (const char *op : {"kiln.softmax", "kiln.log_softmax"})
    for (DType type : kFloatTypes) {
      auto softmax = [&](std::vector<int64_t> shape, int64_t axis) {
        return makeOp(op, {tensor(type, shape)}, {tensor(type, shape)}, {{"axis", axis}});
      };
      // Attention rows (warp per row), long rows cached in registers, very long rows streamed,
      // a non-innermost axis, size-1 and odd rows, rank 1 and rank 5.
      EmittedKernels k = program.add(softmax({2, 12, 128, 128}, 3));
      ASSERT_EQ(k.launches.size(), 1u);
      expectArgs(k.launches[0], {{kOperand, 0}, {kResult, 0}});
      switch (variant++ % 4) {
      case 0: program.add(softmax({7, 1000}, 1)); program.add(softmax({3, 3001}, 1)); break;
      case 1: program.add(softmax({2, 1000003}, 1)); program.add(softmax({2, 7, 5}, 1)); break;
      case 2: program.add(softmax({7, 1}, 1)); program.add(softmax({1000003}, 0)); break;
      default: program.add(softmax({2, 3, 4, 5, 6}, 0)); program.add(softmax({3, 0}, 1)); break;
      }
    }
  program.compile("softmax.cu");

  expectError(makeOp("kiln.softmax", {tensor(DType::I32, {4, 5})}, {tensor(DType::I32, {4, 5})}, {{"axis", int64_t(1)}}),
              "float");
  expectError(makeOp("kiln.log_softmax", {tensor(DType::F32, {4, 5})}, {tensor(DType::F32, {4, 5})},
                     {{"axis", int64_t(2)}}),
              "out of range");
}

//===-- einsum ------------------------------------------------------------===//

OpDesc einsum(const std::string &equation, DType type, std::vector<std::vector<int64_t>> inputs,
              std::vector<int64_t> out) {
  std::vector<std::optional<TensorDesc>> operands;
  for (auto &shape : inputs)
    operands.push_back(tensor(type, shape));
  return makeOp("kiln.einsum", std::move(operands), {tensor(type, std::move(out))}, {{"equation", equation}});
}

TEST(ReductionKernels, EinsumCompiles) {
  Program program;
  for (DType type : numericTypes()) {
    EmittedKernels k = program.add(einsum("ij,jk->ik", type, {{3, 7}, {7, 5}}, {3, 5}));
    ASSERT_EQ(k.launches.size(), 1u);
    expectArgs(k.launches[0], {{kOperand, 0}, {kOperand, 1}, {kResult, 0}});
  }
  program.add(einsum("bij, bjk -> bik", DType::F32, {{2, 3, 4}, {2, 4, 5}}, {2, 3, 5}));
  program.add(einsum("ij,jk", DType::F16, {{3, 4}, {4, 5}}, {3, 5}));            // implicit output
  program.add(einsum("ba", DType::F32, {{3, 4}}, {4, 3}));                       // implicit: sorted labels
  program.add(einsum("...ij,...jk->...ik", DType::BF16, {{2, 1, 3, 4}, {5, 4, 6}}, {2, 5, 3, 6}));
  program.add(einsum("ii->", DType::F64, {{5, 5}}, {}));                         // trace
  program.add(einsum("ii->i", DType::I32, {{5, 5}}, {5}));                       // diagonal
  program.add(einsum("i,j->ij", DType::F32, {{3}, {1}}, {3, 1}));                // outer, size-1 label
  program.add(einsum("ij,kj->ik", DType::F32, {{3, 1}, {4, 6}}, {3, 4}));        // broadcast size-1 axis
  program.add(einsum("ij,jk,kl->il", DType::F8E4M3FN, {{2, 3}, {3, 4}, {4, 5}}, {2, 5}));
  program.add(einsum("bhqd,bhkd->bhqk", DType::F16, {{2, 12, 128, 64}, {2, 12, 128, 64}}, {2, 12, 128, 128}));
  program.add(einsum("i->", DType::U64, {{1000003}}, {}));
  program.add(einsum("ij->", DType::F32, {{0, 3}}, {}));                         // empty sum: 0
  program.compile("einsum.cu");

  expectError(einsum("i1,jk->ik", DType::F32, {{3, 7}, {7, 5}}, {3, 5}), "not a letter");
  expectError(einsum("ij,jk->iz", DType::F32, {{3, 7}, {7, 5}}, {3, 5}), "not an input label");
  expectError(einsum("ij,jk->ik", DType::F32, {{3, 7}, {6, 5}}, {3, 5}), "has sizes");
  expectError(einsum("ij,jk->ik", DType::F32, {{3, 7}}, {3, 5}), "operand terms");
  expectError(einsum("ij,jk->ik", DType::F32, {{3, 7}, {7, 5}}, {3, 6}), "gives shape");
  expectError(einsum("ij->ii", DType::F32, {{3, 3}}, {3, 3}), "repeated");
  expectError(einsum("ijk->i", DType::F32, {{3, 3}}, {3}), "does not match operand");
}

TEST(ReductionKernels, EveryOpIsRegistered) {
  for (const char *op : {"kiln.reduce_mean", "kiln.reduce_sum", "kiln.reduce_max", "kiln.reduce_min",
                         "kiln.reduce_prod", "kiln.reduce_l1", "kiln.reduce_l2", "kiln.reduce_sum_square",
                         "kiln.reduce_log_sum", "kiln.reduce_log_sum_exp", "kiln.argmax", "kiln.argmin",
                         "kiln.cumsum", "kiln.topk", "kiln.softmax", "kiln.log_softmax", "kiln.einsum"})
    EXPECT_NE(KernelEmitterTable::get().lookup(op), nullptr) << op;
}

} // namespace
} // namespace kiln::codegen
