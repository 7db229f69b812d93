//===- DataMovementKernelsTest.cpp - data-movement emitters compile and bind ---===//
//
// Every data-movement op is emitted for every element type its ODS constraint allows and for
// representative shapes (rank 0..5, size-1 and empty axes, odd and large sizes, broadcasting),
// with constant and computed parameters. Each test batches its kernels into one NVRTC program
// (the program prelude first, as codegen builds it) and checks that it compiles, that every
// launch's function is in the PTX and that launches bind the right operands and results.
// Invalid ops must give errors naming the op and the node.
//
//===----------------------------------------------------------------------===//

#include "codegen/kernels/DataMovementSource.h"
#include "codegen/kernels/KernelSource.h"
#include "codegen/kernels/Nvrtc.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

namespace kiln::codegen {
namespace {

using Shape = std::vector<int64_t>;

const std::vector<DType> kAllTypes = {DType::F64, DType::F32, DType::F16, DType::BF16, DType::F8E4M3FN,
                                      DType::I8,  DType::I16, DType::I32, DType::I64,  DType::U8,
                                      DType::U16, DType::U32, DType::U64, DType::Bool};
const std::vector<DType> kNumericTypes(kAllTypes.begin(), kAllTypes.end() - 1);

TensorDesc tensor(DType type, Shape shape) {
  TensorDesc t;
  t.dtype = type;
  t.shape = std::move(shape);
  return t;
}

TensorDesc ints(DType type, Shape shape, std::vector<int64_t> values) {
  TensorDesc t = tensor(type, std::move(shape));
  t.ints = std::move(values);
  return t;
}

TensorDesc floats(DType type, Shape shape, std::vector<double> values) {
  TensorDesc t = tensor(type, std::move(shape));
  t.floats = std::move(values);
  return t;
}

/// A constant of `type` holding `value`, in ints or floats as TensorDesc carries them.
TensorDesc scalarConstant(DType type, double value) {
  return plan::isFloat(type) ? floats(type, {}, {value}) : ints(type, {}, {static_cast<int64_t>(value)});
}

OpDesc makeOp(std::string name, std::vector<std::optional<TensorDesc>> operands, std::vector<TensorDesc> results,
              std::map<std::string, AttrValue> attrs = {}) {
  OpDesc op;
  op.op = "kiln." + name;
  op.name = "node_" + name;
  op.operands = std::move(operands);
  op.results = std::move(results);
  op.attrs = std::move(attrs);
  return op;
}

bool sameArgs(const std::vector<KernelArg> &a, const std::vector<KernelArg> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].kind != b[i].kind || a[i].index != b[i].index)
      return false;
  return true;
}

std::string dtypeText(DType type) { return std::string(plan::dtypeName(type)); }

/// Emits many ops with distinct symbols into one program, compiled once at the end.
class Batch {
public:
  /// Emits `op`; a failure is reported with `what`. Returns the emitted kernels (empty on failure).
  EmittedKernels add(const OpDesc &op, const std::string &what) {
    EmitContext context{"k" + std::to_string(count_++) + "_"};
    auto emitted = emitKernels(op, context);
    EXPECT_TRUE(emitted.isOk()) << what << ": " << emitted.status().toString();
    if (!emitted.isOk())
      return {};
    const EmittedKernels &kernels = emitted.value();
    EXPECT_FALSE(kernels.launches.empty()) << what;
    for (const KernelLaunch &launch : kernels.launches) {
      EXPECT_EQ(launch.function.rfind(context.symbol, 0), 0u) << what << ": " << launch.function;
      EXPECT_GE(launch.grid[0], 1u) << what;
      EXPECT_GE(launch.block[0] * launch.block[1] * launch.block[2], 32u) << what;
      EXPECT_LE(launch.block[0] * launch.block[1] * launch.block[2], 1024u) << what;
    }
    // Copies move bits, so every element type of one width gets the same text (up to the
    // symbol): compile each distinct text once, which keeps the test fast and loses nothing.
    std::string normalized = kernels.source;
    for (size_t at = normalized.find(context.symbol); at != std::string::npos;
         at = normalized.find(context.symbol, at + 1))
      normalized.replace(at, context.symbol.size(), "@_");
    if (!distinct_.insert(normalized).second)
      return kernels;
    for (const KernelLaunch &launch : kernels.launches)
      functions_.push_back(launch.function);
    source_ += "// " + what + "\n" + kernels.source;
    return kernels;
  }

  /// Compiles everything added so far and checks every launched function is in the PTX.
  void compile(const std::string &name) {
    ASSERT_FALSE(functions_.empty());
    auto program = compileWithNvrtc(programPrelude() + source_, name + ".cu");
    ASSERT_TRUE(program.isOk()) << program.status().toString();
    for (const std::string &function : functions_)
      EXPECT_NE(program.value().ptx.find(".entry " + function + "("), std::string::npos) << function;
  }

private:
  int count_ = 0;
  std::string source_;
  std::vector<std::string> functions_;
  std::set<std::string> distinct_;
};

/// The error of an op that must be rejected: it names the op and the node and says `needle`.
void expectError(const OpDesc &op, const std::string &needle) {
  auto emitted = emitKernels(op, EmitContext{"k0_"});
  ASSERT_FALSE(emitted.isOk()) << op.op << " should be rejected (" << needle << ")";
  const std::string &message = emitted.status().message();
  EXPECT_NE(message.find(op.op), std::string::npos) << message;
  EXPECT_NE(message.find(op.name), std::string::npos) << message;
  EXPECT_NE(message.find(needle), std::string::npos) << message;
}

TEST(DataMovementKernels, EveryOpIsRegistered) {
  for (const char *name : {"reshape", "transpose", "concat", "split", "slice", "gather", "gather_elements", "gather_nd",
                           "expand", "tile", "pad", "range", "trilu", "depth_to_space", "space_to_depth"})
    EXPECT_NE(KernelEmitterTable::get().lookup(std::string("kiln.") + name), nullptr) << name;
}

//===-- Reshape, transpose -------------------------------------------------===//

TEST(DataMovementKernels, ReshapeCopiesEveryTypeAndShape) {
  Batch batch;
  for (DType type : kAllTypes) {
    for (auto [from, to] : std::vector<std::pair<Shape, Shape>>{
             {{1000003}, {1000003}}, {{2, 3, 4}, {24}}, {{}, {1, 1}}, {{0, 3}, {3, 0}}, {{4, 4}, {2, 8}}}) {
      auto kernels =
          batch.add(makeOp("reshape", {tensor(type, from)}, {tensor(type, to)}), "reshape " + dtypeText(type));
      ASSERT_EQ(kernels.launches.size(), 1u);
      EXPECT_TRUE(sameArgs(kernels.launches[0].args, {KernelArg::operand(0), KernelArg::result(0)}));
    }
  }
  // 16 elements of any type divide into 16-byte accesses.
  auto wide = emitKernels(makeOp("reshape", {tensor(DType::F32, {4, 4})}, {tensor(DType::F32, {16})}), {"w_"});
  ASSERT_TRUE(wide.isOk());
  EXPECT_NE(wide.value().source.find("uint4"), std::string::npos);
  batch.compile("reshape");

  expectError(makeOp("reshape", {tensor(DType::F32, {2, 3})}, {tensor(DType::F32, {7})}), "element count");
  expectError(makeOp("reshape", {tensor(DType::F32, {2, 3})}, {tensor(DType::F16, {6})}), "element type");
  expectError(makeOp("reshape", {std::nullopt}, {tensor(DType::F16, {6})}), "missing");
}

TEST(DataMovementKernels, TransposeTiledAndIndexMapped) {
  Batch batch;
  struct Case {
    Shape in;
    std::vector<int64_t> perm;
    bool tiled;
  };
  std::vector<Case> cases = {
      {{37, 45}, {1, 0}, true},                   // innermost moves: 32x32 tiles
      {{3, 64, 65}, {0, 2, 1}, true},             // batched tiles
      {{2, 3, 5, 7, 11}, {4, 2, 0, 3, 1}, false}, // rank 5, small axes: index map
      {{2, 3, 4, 64}, {0, 2, 1, 3}, false},       // innermost stays: wide rows
      {{3, 1000003}, {1, 0}, false},              // one short axis: index map
      {{1, 7, 1}, {2, 1, 0}, false},              // only size-1 axes move: a copy
      {{}, {}, false},                            // rank 0
      {{4, 0, 5}, {2, 0, 1}, false},              // empty
      {{2, 33, 17, 40}, {0, 3, 1, 2}, true},      // NCHW -> NHWC-like, merged axes
  };
  for (DType type : kAllTypes) {
    for (const Case &c : cases) {
      Shape out;
      for (int64_t p : c.perm)
        out.push_back(c.in[p]);
      auto kernels = batch.add(makeOp("transpose", {tensor(type, c.in)}, {tensor(type, out)}, {{"perm", c.perm}}),
                               "transpose " + dtypeText(type));
      ASSERT_EQ(kernels.launches.size(), 1u);
      const KernelLaunch &launch = kernels.launches[0];
      EXPECT_TRUE(sameArgs(launch.args, {KernelArg::operand(0), KernelArg::result(0)}));
      bool tiled = launch.block[1] == 8;
      EXPECT_EQ(tiled, c.tiled) << "transpose of rank " << c.in.size() << " " << dtypeText(type);
      if (tiled)
        EXPECT_NE(kernels.source.find("__shared__"), std::string::npos);
    }
  }
  batch.compile("transpose");

  expectError(makeOp("transpose", {tensor(DType::F32, {2, 3})}, {tensor(DType::F32, {3, 2})}, {{"perm", Shape{0, 0}}}),
              "permutation");
  expectError(makeOp("transpose", {tensor(DType::F32, {2, 3})}, {tensor(DType::F32, {2, 3})}, {{"perm", Shape{1, 0}}}),
              "shape");
  expectError(makeOp("transpose", {tensor(DType::F32, {2, 3})}, {tensor(DType::F32, {3, 2})}), "perm");
}

TEST(DataMovementKernels, IndexDecodesUse32BitsWhereEveryIndexFits) {
  // A 64-bit division by a constant is an emulated multi-word multiply on the GPU: shapes of
  // at most 2^32 - 1 elements decode their linear index in 32 bits.
  std::string small = datamovement::decodeCoords({256, 115, 115, 16}, "j", "c");
  EXPECT_NE(small.find("unsigned crem = (unsigned)(j);"), std::string::npos) << small;
  EXPECT_NE(small.find("crem % 16U"), std::string::npos) << small;
  EXPECT_EQ(small.find("ULL"), std::string::npos) << small;
  std::string large = datamovement::decodeCoords({2, 65536, 32768}, "j", "c"); // 2^32 elements
  EXPECT_NE(large.find("kiln_u64 crem = (kiln_u64)(j);"), std::string::npos) << large;
  EXPECT_NE(large.find("crem % 32768ULL"), std::string::npos) << large;
}

//===-- Concat, split -----------------------------------------------------===//

TEST(DataMovementKernels, ConcatAndSplitEveryType) {
  Batch batch;
  for (DType type : kAllTypes) {
    std::string t = dtypeText(type);
    // Axis 0, a middle axis with an empty band, rank 1 with a large band, many operands.
    struct Case {
      std::vector<Shape> parts;
      int64_t axis;
    };
    std::vector<Case> cases = {{{{2, 3}, {5, 3}}, 0},
                               {{{4, 1, 5}, {4, 0, 5}, {4, 7, 5}}, 1},
                               {{{1}, {1000003}}, 0},
                               {{{2, 2, 3, 1, 4}, {2, 2, 3, 2, 4}}, 3},
                               {std::vector<Shape>(9, Shape{3, 8}), 1}};
    for (const Case &c : cases) {
      Shape joined = c.parts[0];
      joined[c.axis] = 0;
      std::vector<std::optional<TensorDesc>> operands;
      std::vector<TensorDesc> results;
      for (const Shape &p : c.parts) {
        joined[c.axis] += p[c.axis];
        operands.push_back(tensor(type, p));
        results.push_back(tensor(type, p));
      }
      auto concat = batch.add(makeOp("concat", operands, {tensor(type, joined)}, {{"axis", c.axis}}), "concat " + t);
      ASSERT_EQ(concat.launches.size(), 1u);
      std::vector<KernelArg> args;
      for (size_t k = 0; k < c.parts.size(); ++k)
        args.push_back(KernelArg::operand(k));
      args.push_back(KernelArg::result(0));
      EXPECT_TRUE(sameArgs(concat.launches[0].args, args)) << "concat " << t;

      auto split = batch.add(makeOp("split", {tensor(type, joined)}, results, {{"axis", c.axis}}), "split " + t);
      ASSERT_EQ(split.launches.size(), 1u);
      args = {KernelArg::operand(0)};
      for (size_t k = 0; k < c.parts.size(); ++k)
        args.push_back(KernelArg::result(k));
      EXPECT_TRUE(sameArgs(split.launches[0].args, args)) << "split " << t;
    }
  }
  batch.compile("concat_split");

  expectError(makeOp("concat", {tensor(DType::F32, {2, 3}), tensor(DType::F32, {2, 4})}, {tensor(DType::F32, {4, 3})},
                     {{"axis", int64_t{0}}}),
              "off axis 0");
  expectError(makeOp("concat", {tensor(DType::F32, {2, 3})}, {tensor(DType::F32, {2, 3})}, {{"axis", int64_t{2}}}),
              "axis 2");
  expectError(makeOp("split", {tensor(DType::F32, {2, 6})}, {tensor(DType::F32, {2, 2}), tensor(DType::F32, {2, 2})},
                     {{"axis", int64_t{1}}}),
              "add up to 4");
  expectError(makeOp("split", {tensor(DType::F32, {2, 6})}, {tensor(DType::F32, {2, 6})}), "axis");
}

//===-- Slice --------------------------------------------------------------===//

TEST(DataMovementKernels, SliceConstantAndComputedParameters) {
  Batch batch;
  auto i64s = [](std::vector<int64_t> v) { return ints(DType::I64, {static_cast<int64_t>(v.size())}, v); };
  for (DType type : kAllTypes) {
    std::string t = dtypeText(type);
    // Constant parameters: negative start, reversed step, out-of-range end, a unit-step innermost axis.
    auto constant = batch.add(
        makeOp("slice",
               {tensor(type, {5, 7, 16}), i64s({-4, 6, 0}), i64s({1000, -1000, 8}), i64s({0, 1, -1}), i64s({2, -2, 1})},
               {tensor(type, {2, 4, 8})}),
        "slice const " + t);
    ASSERT_EQ(constant.launches.size(), 1u);
    EXPECT_TRUE(sameArgs(constant.launches[0].args, {KernelArg::operand(0), KernelArg::result(0)}));
    // Rank 1, large, only some axes given; and an empty result.
    batch.add(makeOp("slice", {tensor(type, {1000003}), i64s({1}), i64s({1000002}), i64s({0}), i64s({1})},
                     {tensor(type, {1000001})}),
              "slice rank1 " + t);
    batch.add(
        makeOp("slice", {tensor(type, {3, 4}), i64s({3}), i64s({1}), i64s({1}), i64s({1})}, {tensor(type, {3, 0})}),
        "slice empty " + t);
    // Computed starts (i32), constant axes, computed steps; ends are not needed.
    auto computed = batch.add(makeOp("slice",
                                     {tensor(type, {2, 3, 5, 7, 4}), tensor(DType::I32, {2}), tensor(DType::I64, {2}),
                                      ints(DType::I32, {2}, {1, -2}), tensor(DType::I64, {2})},
                                     {tensor(type, {2, 2, 5, 3, 4})}),
                              "slice computed " + t);
    ASSERT_EQ(computed.launches.size(), 1u);
    EXPECT_TRUE(sameArgs(computed.launches[0].args,
                         {KernelArg::operand(0), KernelArg::operand(1), KernelArg::operand(4), KernelArg::result(0)}));
    // Everything computed; and constant starts/axes/steps with computed ends.
    batch.add(makeOp("slice",
                     {tensor(type, {6, 6}), tensor(DType::I64, {1}), tensor(DType::I64, {1}), tensor(DType::I64, {1}),
                      tensor(DType::I64, {1})},
                     {tensor(type, {6, 2})}),
              "slice all computed " + t);
    auto endsComputed =
        batch.add(makeOp("slice", {tensor(type, {6, 6}), i64s({-1}), tensor(DType::I64, {1}), i64s({0}), i64s({-1})},
                         {tensor(type, {4, 6})}),
                  "slice ends computed " + t);
    ASSERT_EQ(endsComputed.launches.size(), 1u);
    EXPECT_TRUE(sameArgs(endsComputed.launches[0].args, {KernelArg::operand(0), KernelArg::result(0)}));
  }
  batch.compile("slice");

  auto sliceOp = [&](std::vector<int64_t> starts, std::vector<int64_t> ends, std::vector<int64_t> axes,
                     std::vector<int64_t> steps, Shape out) {
    return makeOp("slice", {tensor(DType::F32, {5, 7}), i64s(starts), i64s(ends), i64s(axes), i64s(steps)},
                  {tensor(DType::F32, out)});
  };
  expectError(sliceOp({0}, {3}, {0}, {0}, {3, 7}), "step must not be 0");
  expectError(sliceOp({0}, {3}, {0}, {1}, {4, 7}), "the slice parameters give 3");
  expectError(sliceOp({0, 0}, {3, 3}, {0, 0}, {1, 1}, {3, 7}), "repeated");
  expectError(sliceOp({0}, {3}, {2}, {1}, {3, 7}), "out of range");
  expectError(makeOp("slice",
                     {tensor(DType::F32, {5, 7}), tensor(DType::I64, {1}), tensor(DType::I64, {1}), i64s({0}),
                      ints(DType::F32, {1}, {1})},
                     {tensor(DType::F32, {3, 7})}),
              "steps must be i32 or i64");
}

//===-- Gathers ------------------------------------------------------------===//

TEST(DataMovementKernels, GathersWithComputedAndConstantIndices) {
  Batch batch;
  for (DType type : kAllTypes) {
    std::string t = dtypeText(type);
    for (DType indexType : {DType::I32, DType::I64}) {
      // Embedding lookup: rows of 64 move wide.
      auto gather = batch.add(makeOp("gather", {tensor(type, {1000, 64}), tensor(indexType, {2, 7})},
                                     {tensor(type, {2, 7, 64})}, {{"axis", int64_t{0}}}),
                              "gather " + t);
      ASSERT_EQ(gather.launches.size(), 1u);
      EXPECT_TRUE(
          sameArgs(gather.launches[0].args, {KernelArg::operand(0), KernelArg::operand(1), KernelArg::result(0)}));
      // A middle axis, rank-0 indices (the axis disappears), an odd inner size.
      batch.add(makeOp("gather", {tensor(type, {3, 5, 7}), tensor(indexType, {})}, {tensor(type, {3, 7})},
                       {{"axis", int64_t{1}}}),
                "gather scalar index " + t);
      auto elements = batch.add(makeOp("gather_elements", {tensor(type, {4, 5, 6}), tensor(indexType, {4, 3, 6})},
                                       {tensor(type, {4, 3, 6})}, {{"axis", int64_t{1}}}),
                                "gather_elements " + t);
      ASSERT_EQ(elements.launches.size(), 1u);
      EXPECT_TRUE(
          sameArgs(elements.launches[0].args, {KernelArg::operand(0), KernelArg::operand(1), KernelArg::result(0)}));
    }
    // Constant (negative) indices are wrapped and baked: the kernel reads only the input.
    auto baked = batch.add(makeOp("gather", {tensor(type, {5, 3}), ints(DType::I64, {3}, {-1, 0, 2})},
                                  {tensor(type, {5, 3})}, {{"axis", int64_t{1}}}),
                           "gather constant " + t);
    ASSERT_EQ(baked.launches.size(), 1u);
    EXPECT_TRUE(sameArgs(baked.launches[0].args, {KernelArg::operand(0), KernelArg::result(0)}));
    batch.add(makeOp("gather_elements", {tensor(type, {3, 3}), ints(DType::I32, {2, 3}, {-1, 0, 2, 1, 1, -3})},
                     {tensor(type, {2, 3})}, {{"axis", int64_t{0}}}),
              "gather_elements constant " + t);
    // GatherND: full tuples, partial tuples with batch axes, constant tuples, empty tuples.
    auto nd = batch.add(makeOp("gather_nd", {tensor(type, {4, 5}), tensor(DType::I64, {3, 2})}, {tensor(type, {3})}),
                        "gather_nd " + t);
    ASSERT_EQ(nd.launches.size(), 1u);
    EXPECT_TRUE(sameArgs(nd.launches[0].args, {KernelArg::operand(0), KernelArg::operand(1), KernelArg::result(0)}));
    batch.add(makeOp("gather_nd", {tensor(type, {2, 3, 4, 8}), tensor(DType::I64, {2, 5, 1})},
                     {tensor(type, {2, 5, 4, 8})}, {{"batch_dims", int64_t{1}}}),
              "gather_nd batch " + t);
    batch.add(makeOp("gather_nd", {tensor(type, {2, 3}), ints(DType::I64, {2, 1, 2}, {-1, -1, 0, 2})},
                     {tensor(type, {2, 1})}),
              "gather_nd constant " + t);
    batch.add(makeOp("gather_nd", {tensor(type, {2, 3}), tensor(DType::I64, {2, 0})}, {tensor(type, {2, 2, 3})}),
              "gather_nd empty tuple " + t);
  }
  batch.compile("gathers");

  expectError(makeOp("gather", {tensor(DType::F32, {5, 3}), ints(DType::I64, {2}, {0, 5})},
                     {tensor(DType::F32, {2, 3})}, {{"axis", int64_t{0}}}),
              "index 5");
  expectError(makeOp("gather", {tensor(DType::F32, {5, 3}), tensor(DType::I64, {2})}, {tensor(DType::F32, {2, 3})},
                     {{"axis", int64_t{2}}}),
              "axis 2");
  expectError(makeOp("gather", {tensor(DType::F32, {5, 3}), tensor(DType::F32, {2})}, {tensor(DType::F32, {2, 3})},
                     {{"axis", int64_t{0}}}),
              "indices must be i32 or i64");
  expectError(makeOp("gather_elements", {tensor(DType::F32, {5, 3}), tensor(DType::I64, {2, 4})},
                     {tensor(DType::F32, {2, 4})}, {{"axis", int64_t{0}}}),
              "exceeds");
  expectError(makeOp("gather_elements", {tensor(DType::F32, {5, 3}), ints(DType::I64, {1, 1}, {-6})},
                     {tensor(DType::F32, {1, 1})}, {{"axis", int64_t{0}}}),
              "index -6");
  expectError(makeOp("gather_nd", {tensor(DType::F32, {4, 5}), tensor(DType::I32, {3, 2})}, {tensor(DType::F32, {3})}),
              "indices has element type i32");
  expectError(
      makeOp("gather_nd", {tensor(DType::F32, {4, 5}), ints(DType::I64, {1, 2}, {0, 5})}, {tensor(DType::F32, {1})}),
      "index 5");
  expectError(makeOp("gather_nd", {tensor(DType::F32, {4, 5}), tensor(DType::I64, {3, 2})}, {tensor(DType::F32, {3})},
                     {{"batch_dims", int64_t{2}}}),
              "batch_dims");
}

//===-- Expand, tile, depth/space -----------------------------------------===//

TEST(DataMovementKernels, ExpandTileAndRearrangements) {
  Batch batch;
  for (DType type : kAllTypes) {
    std::string t = dtypeText(type);
    for (auto [from, to] : std::vector<std::pair<Shape, Shape>>{{{3, 1}, {2, 3, 4}},
                                                                {{}, {5}},
                                                                {{1}, {1000003}},
                                                                {{4, 1, 1, 16}, {4, 12, 16, 16}},
                                                                {{2, 1, 3, 1, 5}, {2, 4, 3, 6, 5}},
                                                                {{1, 3}, {0, 3}}}) {
      auto kernels = batch.add(makeOp("expand", {tensor(type, from)}, {tensor(type, to)}), "expand " + t);
      ASSERT_EQ(kernels.launches.size(), 1u);
      EXPECT_TRUE(sameArgs(kernels.launches[0].args, {KernelArg::operand(0), KernelArg::result(0)}));
    }
    for (auto [from, to] : std::vector<std::pair<Shape, Shape>>{
             {{2, 3}, {4, 9}}, {{7}, {7}}, {{}, {}}, {{1, 2, 1, 3, 8}, {2, 2, 3, 6, 8}}, {{2, 0}, {4, 0}}}) {
      auto kernels = batch.add(makeOp("tile", {tensor(type, from)}, {tensor(type, to)}), "tile " + t);
      ASSERT_EQ(kernels.launches.size(), 1u);
      EXPECT_TRUE(sameArgs(kernels.launches[0].args, {KernelArg::operand(0), KernelArg::result(0)}));
    }
    for (const char *mode : {"DCR", "CRD"})
      batch.add(makeOp("depth_to_space", {tensor(type, {2, 8, 3, 5})}, {tensor(type, {2, 2, 6, 10})},
                       {{"blocksize", int64_t{2}}, {"mode", std::string(mode)}}),
                std::string("depth_to_space ") + mode + " " + t);
    batch.add(makeOp("depth_to_space", {tensor(type, {1, 9, 1, 1})}, {tensor(type, {1, 1, 3, 3})},
                     {{"blocksize", int64_t{3}}}),
              "depth_to_space default mode " + t);
    auto s2d = batch.add(makeOp("space_to_depth", {tensor(type, {2, 3, 6, 4})}, {tensor(type, {2, 12, 3, 2})},
                                {{"blocksize", int64_t{2}}}),
                         "space_to_depth " + t);
    ASSERT_EQ(s2d.launches.size(), 1u);
    EXPECT_TRUE(sameArgs(s2d.launches[0].args, {KernelArg::operand(0), KernelArg::result(0)}));
  }
  batch.compile("expand_tile_rearrange");

  expectError(makeOp("expand", {tensor(DType::F32, {3})}, {tensor(DType::F32, {2, 4})}), "does not broadcast");
  expectError(makeOp("tile", {tensor(DType::F32, {3})}, {tensor(DType::F32, {7})}), "whole multiple");
  expectError(makeOp("depth_to_space", {tensor(DType::F32, {1, 8, 2, 2})}, {tensor(DType::F32, {1, 2, 4, 4})},
                     {{"blocksize", int64_t{2}}, {"mode", std::string("RDC")}}),
              "mode 'RDC'");
  expectError(makeOp("depth_to_space", {tensor(DType::F32, {1, 6, 2, 2})}, {tensor(DType::F32, {1, 1, 4, 4})},
                     {{"blocksize", int64_t{2}}}),
              "multiple of blocksize");
  expectError(makeOp("space_to_depth", {tensor(DType::F32, {1, 1, 5, 4})}, {tensor(DType::F32, {1, 4, 2, 2})},
                     {{"blocksize", int64_t{2}}}),
              "multiples of blocksize");
  expectError(makeOp("space_to_depth", {tensor(DType::F32, {1, 1, 4})}, {tensor(DType::F32, {1, 4, 2})},
                     {{"blocksize", int64_t{2}}}),
              "4-d");
}

//===-- Pad ----------------------------------------------------------------===//

TEST(DataMovementKernels, PadEveryModeWithConstantAndComputedPads) {
  Batch batch;
  for (DType type : kAllTypes) {
    std::string t = dtypeText(type);
    for (const char *mode : {"constant", "reflect", "edge", "wrap"}) {
      std::map<std::string, AttrValue> attrs = {{"mode", std::string(mode)}};
      // Constant pads (one crops), constant value.
      auto constant = batch.add(
          makeOp("pad", {tensor(type, {2, 3, 5}), ints(DType::I64, {6}, {0, 2, -1, 1, 4, 3}), scalarConstant(type, 1)},
                 {tensor(type, {3, 9, 7})}, attrs),
          "pad constant " + std::string(mode) + " " + t);
      ASSERT_EQ(constant.launches.size(), 1u);
      EXPECT_TRUE(sameArgs(constant.launches[0].args, {KernelArg::operand(0), KernelArg::result(0)}));
      // Computed pads and value: the kernel reads both (the value in constant mode only).
      auto computed = batch.add(makeOp("pad", {tensor(type, {4, 1, 6}), tensor(DType::I64, {6}), tensor(type, {})},
                                       {tensor(type, {6, 3, 10})}, attrs),
                                "pad computed " + std::string(mode) + " " + t);
      ASSERT_EQ(computed.launches.size(), 1u);
      std::vector<KernelArg> args = {KernelArg::operand(0), KernelArg::operand(1)};
      if (std::string(mode) == "constant")
        args.push_back(KernelArg::operand(2));
      args.push_back(KernelArg::result(0));
      EXPECT_TRUE(sameArgs(computed.launches[0].args, args)) << mode << " " << t;
    }
    // Rank 0 (nothing to pad) and a NaN / extreme fill value.
    batch.add(makeOp("pad", {tensor(type, {}), ints(DType::I64, {0}, {}), scalarConstant(type, 0)}, {tensor(type, {})}),
              "pad rank0 " + t);
    double extreme = plan::isFloat(type) ? NAN : -1;
    batch.add(makeOp("pad", {tensor(type, {7}), ints(DType::I64, {2}, {1, 1}), scalarConstant(type, extreme)},
                     {tensor(type, {9})}),
              "pad extreme fill " + t);
  }
  batch.compile("pad");

  TensorDesc value = floats(DType::F32, {}, {0});
  expectError(makeOp("pad", {tensor(DType::F32, {3}), ints(DType::I64, {2}, {1, 1}), value}, {tensor(DType::F32, {5})},
                     {{"mode", std::string("mirror")}}),
              "mode 'mirror'");
  expectError(makeOp("pad", {tensor(DType::F32, {3}), ints(DType::I64, {2}, {1, 1}), value}, {tensor(DType::F32, {6})}),
              "shape");
  expectError(makeOp("pad", {tensor(DType::F32, {3}), ints(DType::I64, {2}, {-3, 2}), value}, {tensor(DType::F32, {2})},
                     {{"mode", std::string("reflect")}}),
              "empty axis 0");
  expectError(makeOp("pad", {tensor(DType::F32, {3}), ints(DType::I64, {1}, {1}), value}, {tensor(DType::F32, {4})}),
              "pads must have shape [2]");
  expectError(makeOp("pad", {tensor(DType::F32, {3}), ints(DType::I64, {2}, {1, 1}), floats(DType::F16, {}, {0})},
                     {tensor(DType::F32, {5})}),
              "padding value");
}

//===-- Range, trilu -------------------------------------------------------===//

TEST(DataMovementKernels, RangeEveryNumericType) {
  Batch batch;
  for (DType type : kNumericTypes) {
    std::string t = dtypeText(type);
    bool isFloat = plan::isFloat(type);
    // Constant operands: 1.5 .. 7 step 0.5 (floats) or 3 .. 20 step 3 (integers).
    double start = isFloat ? 1.5 : 3, limit = isFloat ? 7 : 20, delta = isFloat ? 0.5 : 3;
    int64_t count = static_cast<int64_t>(std::ceil((limit - start) / delta));
    auto constant = batch.add(
        makeOp("range", {scalarConstant(type, start), scalarConstant(type, limit), scalarConstant(type, delta)},
               {tensor(type, {count})}),
        "range constant " + t);
    ASSERT_EQ(constant.launches.size(), 1u);
    EXPECT_TRUE(sameArgs(constant.launches[0].args, {KernelArg::result(0)}));
    // Computed start and delta: the static size is the count; limit is not read.
    auto computed =
        batch.add(makeOp("range", {tensor(type, {}), tensor(type, {}), tensor(type, {})}, {tensor(type, {1000003})}),
                  "range computed " + t);
    ASSERT_EQ(computed.launches.size(), 1u);
    EXPECT_TRUE(
        sameArgs(computed.launches[0].args, {KernelArg::operand(0), KernelArg::operand(2), KernelArg::result(0)}));
    // An empty range (limit below start).
    batch.add(makeOp("range", {scalarConstant(type, 5), scalarConstant(type, 1), scalarConstant(type, 1)},
                     {tensor(type, {0})}),
              "range empty " + t);
  }
  batch.compile("range");

  auto f32 = [](double v) { return scalarConstant(DType::F32, v); };
  expectError(makeOp("range", {f32(0), f32(5), f32(1)}, {tensor(DType::F32, {4})}), "give a different count");
  expectError(makeOp("range", {f32(0), f32(5), f32(0)}, {tensor(DType::F32, {4})}), "delta must not be 0");
  expectError(makeOp("range", {f32(0), f32(5), scalarConstant(DType::F16, 1)}, {tensor(DType::F32, {5})}), "delta");
  expectError(makeOp("range", {tensor(DType::Bool, {}), tensor(DType::Bool, {}), tensor(DType::Bool, {})},
                     {tensor(DType::Bool, {1})}),
              "bool");
}

TEST(DataMovementKernels, TriluUpperLowerEveryType) {
  Batch batch;
  for (DType type : kAllTypes) {
    std::string t = dtypeText(type);
    for (int64_t upper : {0, 1}) {
      for (Shape shape : std::vector<Shape>{{3, 4}, {2, 1, 7, 5}, {2, 1, 3, 1, 9}, {0, 3}, {1000003, 1}}) {
        std::map<std::string, AttrValue> attrs = {{"upper", upper}};
        auto constant =
            batch.add(makeOp("trilu", {tensor(type, shape), ints(DType::I64, {}, {-1})}, {tensor(type, shape)}, attrs),
                      "trilu constant k " + t);
        ASSERT_EQ(constant.launches.size(), 1u);
        EXPECT_TRUE(sameArgs(constant.launches[0].args, {KernelArg::operand(0), KernelArg::result(0)}));
      }
      auto computed = batch.add(
          makeOp("trilu", {tensor(type, {4, 6}), tensor(DType::I64, {})}, {tensor(type, {4, 6})}, {{"upper", upper}}),
          "trilu computed k " + t);
      ASSERT_EQ(computed.launches.size(), 1u);
      EXPECT_TRUE(
          sameArgs(computed.launches[0].args, {KernelArg::operand(0), KernelArg::operand(1), KernelArg::result(0)}));
    }
    // `upper` absent: the ODS default (true).
    batch.add(makeOp("trilu", {tensor(type, {5, 5}), ints(DType::I64, {}, {2})}, {tensor(type, {5, 5})}),
              "trilu default " + t);
  }
  batch.compile("trilu");

  expectError(makeOp("trilu", {tensor(DType::F32, {5}), ints(DType::I64, {}, {0})}, {tensor(DType::F32, {5})}),
              "rank >= 2");
  expectError(makeOp("trilu", {tensor(DType::F32, {5, 5}), ints(DType::I32, {}, {0})}, {tensor(DType::F32, {5, 5})}),
              "k has element type i32");
}

//===-- Gather groups ------------------------------------------------------===//

/// A gather group over `input`: body ops, each reading the previous op's result (the group's
/// operand 0 first) as operand 0 and group operands `extra` (index into the group's operands)
/// as the rest.
OpDesc gatherGroup(std::vector<std::optional<TensorDesc>> operands, std::vector<OpDesc> ops,
                   std::vector<std::vector<uint32_t>> extra) {
  OpDesc group = makeOp("fusion_group", std::move(operands), {ops.back().results[0]},
                        {{"kind", std::string("gather")}});
  for (size_t j = 0; j < ops.size(); ++j) {
    BodyOp node{ops[j], {BodyRef{j == 0, static_cast<uint32_t>(j == 0 ? 0 : j - 1)}}};
    for (uint32_t input : extra[j])
      node.args.push_back(BodyRef{true, input});
    group.body.push_back(std::move(node));
  }
  group.yields = {BodyRef{false, static_cast<uint32_t>(ops.size() - 1)}};
  return group;
}

TEST(DataMovementKernels, GatherGroupsOfCastsTransposesAndPads) {
  Batch batch;
  // ResNet-50's stem input: the image's cast to bf16, its 2x2 blocks gathered to channels, the
  // pad to 16 channels and the borders.
  TensorDesc image = tensor(DType::F32, {2, 3, 8, 6}), pads = ints(DType::I64, {8}, {0, 2, 2, 0, 0, 1, 1, 4});
  TensorDesc zero = floats(DType::BF16, {}, {0});
  std::vector<OpDesc> stem = {
      makeOp("cast", {image}, {tensor(DType::BF16, {2, 3, 8, 6})}),
      makeOp("reshape", {tensor(DType::BF16, {2, 3, 8, 6})}, {tensor(DType::BF16, {2, 3, 4, 2, 3, 2})}),
      makeOp("transpose", {tensor(DType::BF16, {2, 3, 4, 2, 3, 2})}, {tensor(DType::BF16, {2, 4, 3, 2, 2, 3})},
             {{"perm", std::vector<int64_t>{0, 2, 4, 3, 5, 1}}}),
      makeOp("reshape", {tensor(DType::BF16, {2, 4, 3, 2, 2, 3})}, {tensor(DType::BF16, {2, 4, 3, 12})}),
      makeOp("pad", {tensor(DType::BF16, {2, 4, 3, 12}), pads, zero}, {tensor(DType::BF16, {2, 7, 6, 16})})};
  auto kernels = batch.add(gatherGroup({image, pads, zero}, stem, {{}, {}, {}, {}, {1, 2}}), "gather stem");
  ASSERT_EQ(kernels.launches.size(), 1u);
  EXPECT_TRUE(sameArgs(kernels.launches[0].args, {KernelArg::operand(0), KernelArg::result(0)}));
  // A thread writes 8 adjacent bf16 channels (16 bytes): 2 * 7 * 6 * 16 / 8 of them.
  for (const char *text : {"struct alignas(16) kiln_gather_vec { unsigned short v[8]; };", "j < 168LL",
                           "const kiln_i64 o = j * 8 + e;", "vec.v[e] = fill;",
                           "reinterpret_cast<kiln_gather_vec *>(out)[j] = vec;"})
    EXPECT_NE(kernels.source.find(text), std::string::npos) << text << "\n" << kernels.source;
  // f32 moved as bits: a transpose and a pad by a non-zero value, no elementwise op.
  TensorDesc x = tensor(DType::F32, {3, 1, 1025, 7}), pads4 = ints(DType::I64, {8}, {0, 1, 0, 3, 0, 0, 0, 2});
  TensorDesc fill = floats(DType::F32, {}, {-2});
  std::vector<OpDesc> moves = {
      makeOp("transpose", {x}, {tensor(DType::F32, {3, 7, 1, 1025})}, {{"perm", std::vector<int64_t>{0, 3, 1, 2}}}),
      makeOp("pad", {tensor(DType::F32, {3, 7, 1, 1025}), pads4, fill}, {tensor(DType::F32, {3, 8, 1, 1030})})};
  // 1030 f32 a row: two adjacent elements a thread (1030 is not a multiple of 4).
  auto pairs = batch.add(gatherGroup({x, pads4, fill}, moves, {{}, {1, 2}}), "gather transpose pad");
  EXPECT_NE(pairs.source.find("struct alignas(8) kiln_gather_vec"), std::string::npos) << pairs.source;
  batch.compile("gather");

  // What codegen refuses (the verifier's rules, should a group break them): an elementwise op
  // after an index map, a pad that crops.
  std::vector<OpDesc> late = {stem[2], makeOp("relu", {stem[2].results[0]}, {stem[2].results[0]})};
  late[0].operands[0] = tensor(DType::BF16, {2, 3, 4, 2, 3, 2});
  expectError(gatherGroup({tensor(DType::BF16, {2, 3, 4, 2, 3, 2})}, late, {{}, {}}), "come before its index maps");
  TensorDesc crop = ints(DType::I64, {2}, {-1, 2});
  std::vector<OpDesc> cropping = {makeOp("pad", {tensor(DType::F32, {5}), crop, fill}, {tensor(DType::F32, {6})})};
  expectError(gatherGroup({tensor(DType::F32, {5}), crop, fill}, cropping, {{1, 2}}), "does not crop");
}

} // namespace
} // namespace kiln::codegen
