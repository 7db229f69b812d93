//===- ElementwiseKernelsTest.cpp - the elementwise family emits and compiles ===//
//
// Every registered op is emitted for each element type its ODS constraint allows, over shapes
// of rank 0 to 5 (odd sizes, a 1000003-element tensor, an empty one, broadcasting), and each
// test compiles all its kernels as one NVRTC program (the prelude plus every source) and
// checks that every launch's function is in the PTX. Source checks pin the choices that decide
// results or speed (saturation modes, exact conversions, vectorization, coalesced broadcast
// offsets, baked constants); bad input must give an error naming the op and node.
//
//===----------------------------------------------------------------------===//

#include "codegen/kernels/KernelSource.h"
#include "codegen/kernels/Nvrtc.h"

#include <gtest/gtest.h>

#include <future>

namespace kiln::codegen {
namespace {

using D = DType;

const std::vector<DType> kFloats = {D::F64, D::F32, D::F16, D::BF16, D::F8E4M3FN};
const std::vector<DType> kInts = {D::I8, D::I16, D::I32, D::I64, D::U8, D::U16, D::U32, D::U64};

std::vector<DType> numericTypes() {
  std::vector<DType> types = kFloats;
  types.insert(types.end(), kInts.begin(), kInts.end());
  return types;
}
std::vector<DType> allTypes() {
  std::vector<DType> types = numericTypes();
  types.push_back(D::Bool);
  return types;
}

// Shapes for unary ops, used in rotation: rank 0 to 5, 1 and 7 elements, 1000003 elements,
// an empty tensor, a vector-width multiple.
const std::vector<std::vector<int64_t>> kShapes = {{}, {7}, {1000003}, {2, 3, 4, 5, 7}, {1}, {3, 1, 5}, {0, 4}, {4, 256}};

struct Broadcast {
  std::vector<int64_t> lhs, rhs, result;
};
const std::vector<Broadcast> kBroadcasts = {
    {{7}, {7}, {7}},
    {{2, 3, 1, 5}, {3, 4, 1}, {2, 3, 4, 5}},
    {{1000003}, {}, {1000003}},
    {{}, {}, {}},
    {{4, 1, 6}, {1, 5, 1}, {4, 5, 6}},
    {{2, 64, 7, 7}, {1, 64, 1, 1}, {2, 64, 7, 7}},
    {{1}, {3, 1, 2, 1, 5}, {3, 1, 2, 1, 5}},
    {{8, 128}, {8, 128}, {8, 128}},
};

TensorDesc tensor(DType type, std::vector<int64_t> shape) {
  TensorDesc t;
  t.dtype = type;
  t.shape = std::move(shape);
  return t;
}

TensorDesc constant(DType type, std::vector<int64_t> shape, double value) {
  TensorDesc t = tensor(type, std::move(shape));
  if (plan::isFloat(type))
    t.floats = std::vector<double>(t.numElements(), value);
  else
    t.ints = std::vector<int64_t>(t.numElements(), static_cast<int64_t>(value));
  return t;
}

OpDesc makeOp(const std::string &name, std::vector<TensorDesc> operands, TensorDesc result,
              std::map<std::string, AttrValue> attrs = {}) {
  OpDesc op;
  op.op = name;
  op.name = "node/" + name.substr(5);
  for (TensorDesc &t : operands)
    op.operands.push_back(std::move(t));
  op.results.push_back(std::move(result));
  op.attrs = std::move(attrs);
  return op;
}

/// Operands the kernel must take: all but single-element constants (those are baked).
std::vector<uint32_t> readOperands(const OpDesc &op) {
  std::vector<uint32_t> indices;
  for (uint32_t i = 0; i < op.operands.size(); ++i)
    if (!(op.operands[i]->isConstant() && op.operands[i]->numElements() == 1))
      indices.push_back(i);
  return indices;
}

/// Kernels of one test, compiled together.
class Program {
public:
  /// Emits `op` through the table and checks its launch; the emitted kernels.
  EmittedKernels add(const OpDesc &op) {
    EmitContext context{"k" + std::to_string(count_++) + "_"};
    auto emitted = emitKernels(op, context);
    EXPECT_TRUE(emitted.isOk()) << op.op << ": " << emitted.status().toString();
    if (!emitted.isOk())
      return {};
    const EmittedKernels &kernels = emitted.value();
    EXPECT_EQ(kernels.launches.size(), 1u) << op.op;
    EXPECT_TRUE(kernels.scratchBytes.empty()) << op.op;
    for (const KernelLaunch &launch : kernels.launches) {
      EXPECT_EQ(launch.function.rfind(context.symbol, 0), 0u) << launch.function;
      EXPECT_EQ(launch.block[0], 256u);
      EXPECT_GE(launch.grid[0], 1u);
      EXPECT_LE(launch.grid[0], 8192u);
      // Operands in order (baked constants left out), then the result.
      std::vector<uint32_t> expected = readOperands(op);
      EXPECT_EQ(launch.args.size(), expected.size() + 1) << op.op;
      if (launch.args.size() != expected.size() + 1)
        continue;
      for (size_t a = 0; a < expected.size(); ++a) {
        EXPECT_EQ(launch.args[a].kind, KernelArg::Kind::Operand) << op.op;
        EXPECT_EQ(launch.args[a].index, expected[a]) << op.op;
      }
      EXPECT_EQ(launch.args.back().kind, KernelArg::Kind::Result) << op.op;
      EXPECT_EQ(launch.args.back().index, 0u) << op.op;
      functions_.push_back(launch.function);
    }
    sources_.push_back(kernels.source);
    return kernels;
  }

  /// Compiles every kernel added (split into a few programs compiled in parallel) and checks
  /// that each launch's function is in the PTX.
  void compile(const std::string &name, size_t parts = 2) {
    ASSERT_FALSE(sources_.empty());
    std::vector<std::future<StatusOr<CompiledProgram>>> jobs;
    size_t per = (sources_.size() + parts - 1) / parts;
    for (size_t begin = 0; begin < sources_.size(); begin += per) {
      std::string source = programPrelude();
      for (size_t i = begin; i < std::min(sources_.size(), begin + per); ++i)
        source += sources_[i];
      jobs.push_back(std::async(std::launch::async, [source, name] { return compileWithNvrtc(source, name + ".cu"); }));
    }
    std::string ptx;
    for (auto &job : jobs) {
      auto program = job.get();
      ASSERT_TRUE(program.isOk()) << program.status().toString();
      EXPECT_FALSE(program.value().cubin.empty());
      ptx += program.value().ptx;
    }
    for (const std::string &function : functions_)
      EXPECT_NE(ptx.find(".entry " + function + "("), std::string::npos) << function << " is not in the PTX";
  }

private:
  int count_ = 0;
  std::vector<std::string> sources_;
  std::vector<std::string> functions_;
};

bool contains(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

//===-- Registration -------------------------------------------------------===//

TEST(ElementwiseKernels, RegistersAllOps) {
  for (const char *name :
       {"sqrt", "reciprocal", "exp", "log", "erf", "tanh", "sigmoid", "softplus", "hard_swish", "floor", "ceil",
        "round", "sin", "cos", "relu", "neg", "abs", "sign", "not", "is_nan", "is_inf", "leaky_relu", "elu", "selu",
        "hard_sigmoid", "gelu", "add", "sub", "mul", "div", "pow", "min", "max", "mod", "prelu", "and", "or", "xor",
        "equal", "less", "less_equal", "greater", "greater_equal", "where", "clip", "cast", "quantize",
        "dequantize"})
    EXPECT_NE(KernelEmitterTable::get().lookup(std::string("kiln.") + name), nullptr) << name;
}

//===-- Unary --------------------------------------------------------------===//

TEST(ElementwiseKernels, UnaryOpsEveryTypeAndShape) {
  const std::vector<std::string> floatOps = {"sqrt", "reciprocal", "exp", "log", "erf", "tanh", "sigmoid",
                                             "softplus", "hard_swish", "floor", "ceil", "round", "sin", "cos",
                                             "leaky_relu", "elu", "selu", "hard_sigmoid", "gelu"};
  Program program;
  size_t turn = 0;
  for (const std::string &name : floatOps)
    for (DType type : kFloats) {
      const auto &shape = kShapes[turn++ % kShapes.size()];
      program.add(makeOp("kiln." + name, {tensor(type, shape)}, tensor(type, shape)));
    }
  for (DType type : kFloats) {
    const auto &shape = kShapes[turn++ % kShapes.size()];
    program.add(makeOp("kiln.is_nan", {tensor(type, shape)}, tensor(D::Bool, shape)));
    program.add(makeOp("kiln.is_inf", {tensor(type, shape)}, tensor(D::Bool, shape)));
  }
  for (const std::string &name : {"relu", "neg", "abs", "sign"})
    for (DType type : numericTypes()) {
      const auto &shape = kShapes[turn++ % kShapes.size()];
      program.add(makeOp("kiln." + name, {tensor(type, shape)}, tensor(type, shape)));
    }
  for (const auto &shape : kShapes)
    program.add(makeOp("kiln.not", {tensor(D::Bool, shape)}, tensor(D::Bool, shape)));
  // Attribute variants.
  program.add(makeOp("kiln.gelu", {tensor(D::F32, {3, 5})}, tensor(D::F32, {3, 5}), {{"approximate", std::string("tanh")}}));
  program.add(makeOp("kiln.gelu", {tensor(D::BF16, {9})}, tensor(D::BF16, {9}), {{"approximate", std::string("none")}}));
  program.add(makeOp("kiln.leaky_relu", {tensor(D::F16, {9})}, tensor(D::F16, {9}), {{"alpha", 0.2}}));
  program.add(makeOp("kiln.selu", {tensor(D::F32, {9})}, tensor(D::F32, {9}), {{"alpha", 1.5}, {"gamma", 2.0}}));
  program.add(makeOp("kiln.hard_sigmoid", {tensor(D::F64, {9})}, tensor(D::F64, {9}), {{"alpha", 0.25}, {"beta", 0.125}}));
  for (int64_t negative : {0, 1})
    for (int64_t positive : {0, 1})
      program.add(makeOp("kiln.is_inf", {tensor(D::F32, {5})}, tensor(D::Bool, {5}),
                         {{"detect_negative", negative}, {"detect_positive", positive}}));
  program.compile("unary");
}

TEST(ElementwiseKernels, UnarySourceMatchesInterpreterDetails) {
  Program program;
  // abs keeps -0 (x < 0 ? -x : x, not fabs); round is half to even; f8 results do not saturate.
  auto abs = program.add(makeOp("kiln.abs", {tensor(D::F32, {7})}, tensor(D::F32, {7})));
  EXPECT_TRUE(contains(abs.source, "x0 < float(0) ? -x0 : x0")) << abs.source;
  auto round = program.add(makeOp("kiln.round", {tensor(D::F64, {7})}, tensor(D::F64, {7})));
  EXPECT_TRUE(contains(round.source, "rint(x0)")) << round.source;
  auto exp8 = program.add(makeOp("kiln.exp", {tensor(D::F8E4M3FN, {7})}, tensor(D::F8E4M3FN, {7})));
  EXPECT_TRUE(contains(exp8.source, "__NV_NOSAT")) << exp8.source;
  EXPECT_TRUE(contains(exp8.source, "expf(x0)")) << exp8.source;
  // Integer negation wraps through unsigned arithmetic.
  auto neg = program.add(makeOp("kiln.neg", {tensor(D::I32, {7})}, tensor(D::I32, {7})));
  EXPECT_TRUE(contains(neg.source, "0ULL - (kiln_u64)x0")) << neg.source;
  // Attributes are baked as f32 values.
  auto leaky = program.add(makeOp("kiln.leaky_relu", {tensor(D::F32, {7})}, tensor(D::F32, {7})));
  EXPECT_TRUE(contains(leaky.source, literal(D::F32, static_cast<double>(0.01f)))) << leaky.source;
  auto onlyNegative = program.add(makeOp("kiln.is_inf", {tensor(D::F16, {7})}, tensor(D::Bool, {7}),
                                         {{"detect_positive", int64_t(0)}}));
  EXPECT_TRUE(contains(onlyNegative.source, "isinf(x0) && x0 < 0")) << onlyNegative.source;
  program.compile("unary_details", 1);
}

TEST(ElementwiseKernels, VectorizesSameShapeTensors) {
  Program program;
  // f32: 16-byte float4-sized runs, a scalar tail for 1000003 % 4 = 3 elements.
  auto f32 = program.add(makeOp("kiln.relu", {tensor(D::F32, {1000003})}, tensor(D::F32, {1000003})));
  EXPECT_TRUE(contains(f32.source, "kiln_ew_vec<float, 4>")) << f32.source;
  EXPECT_TRUE(contains(f32.source, "i < 1000003LL")) << f32.source;
  EXPECT_EQ(f32.launches[0].grid[0], (1000003u / 4 + 255) / 256);
  // f16 moves 8 elements; no tail when the count divides.
  auto f16 = program.add(makeOp("kiln.add", {tensor(D::F16, {4, 256}), tensor(D::F16, {4, 256})}, tensor(D::F16, {4, 256})));
  EXPECT_TRUE(contains(f16.source, "kiln_ew_vec<__half, 8>")) << f16.source;
  EXPECT_FALSE(contains(f16.source, "kiln_i64 i =")) << f16.source;
  // A compare reads f32 and writes bool: the widest tensor sets 4 lanes.
  auto less = program.add(makeOp("kiln.less", {tensor(D::F32, {64}), tensor(D::F32, {})}, tensor(D::Bool, {64})));
  EXPECT_TRUE(contains(less.source, "kiln_ew_vec<unsigned char, 4>")) << less.source;
  EXPECT_TRUE(contains(less.source, "a1, 0")) << less.source; // the scalar is not vector-loaded
  // Broadcasting along an inner axis is not vectorized; its offsets use coalesced axes: the
  // bias [1, 64, 1, 1] over [2, 64, 7, 7] needs one division and one remainder.
  auto bias = program.add(makeOp("kiln.add", {tensor(D::F32, {2, 64, 7, 7}), tensor(D::F32, {1, 64, 1, 1})},
                                 tensor(D::F32, {2, 64, 7, 7})));
  EXPECT_FALSE(contains(bias.source, "kiln_ew_vec")) << bias.source;
  EXPECT_TRUE(contains(bias.source, "a0, (kiln_i64)u, a1, (kiln_i64)((((unsigned)(u) / 49U) % 64U))")) << bias.source;
  program.compile("vectorize", 1);
}

//===-- Binary and ternary -------------------------------------------------===//

TEST(ElementwiseKernels, BinaryOpsEveryTypeWithBroadcasting) {
  Program program;
  size_t turn = 0;
  for (const std::string &name : {"add", "sub", "mul", "div", "pow", "min", "max", "mod", "prelu"})
    for (DType type : numericTypes()) {
      const Broadcast &b = kBroadcasts[turn++ % kBroadcasts.size()];
      program.add(makeOp("kiln." + name, {tensor(type, b.lhs), tensor(type, b.rhs)}, tensor(type, b.result)));
    }
  for (DType type : numericTypes()) {
    const Broadcast &b = kBroadcasts[turn++ % kBroadcasts.size()];
    program.add(makeOp("kiln.mod", {tensor(type, b.lhs), tensor(type, b.rhs)}, tensor(type, b.result),
                       {{"fmod", int64_t(1)}}));
  }
  for (const std::string &name : {"equal", "less", "less_equal", "greater", "greater_equal"})
    for (DType type : numericTypes()) {
      const Broadcast &b = kBroadcasts[turn++ % kBroadcasts.size()];
      program.add(makeOp("kiln." + name, {tensor(type, b.lhs), tensor(type, b.rhs)}, tensor(D::Bool, b.result)));
    }
  for (const std::string &name : {"and", "or", "xor"})
    for (const Broadcast &b : kBroadcasts)
      program.add(makeOp("kiln." + name, {tensor(D::Bool, b.lhs), tensor(D::Bool, b.rhs)}, tensor(D::Bool, b.result)));
  // Pow with an exponent of another type: computed in f64, stored in the base's type.
  for (auto [base, exponent] : std::vector<std::pair<DType, DType>>{{D::F32, D::I64},
                                                                     {D::I32, D::F32},
                                                                     {D::F16, D::F64},
                                                                     {D::U8, D::I8},
                                                                     {D::I64, D::U64},
                                                                     {D::F8E4M3FN, D::I32},
                                                                     {D::BF16, D::U16}}) {
    const Broadcast &b = kBroadcasts[turn++ % kBroadcasts.size()];
    program.add(makeOp("kiln.pow", {tensor(base, b.lhs), tensor(exponent, b.rhs)}, tensor(base, b.result)));
  }
  program.compile("binary");
}

TEST(ElementwiseKernels, ConstantScalarsAreBaked) {
  Program program;
  auto add = program.add(makeOp("kiln.add", {tensor(D::F32, {7}), constant(D::F32, {}, 2.5)}, tensor(D::F32, {7})));
  EXPECT_TRUE(contains(add.source, "const float x1 = (float)2.5;")) << add.source;
  auto sub = program.add(makeOp("kiln.sub", {constant(D::U64, {1}, -1), tensor(D::U64, {3, 4})}, tensor(D::U64, {3, 4})));
  EXPECT_TRUE(contains(sub.source, "((unsigned long long)-1LL)")) << sub.source;
  // x ** 2 is x * x (exactly what pow gives); a larger constant exponent is still read.
  auto square = program.add(makeOp("kiln.pow", {tensor(D::F32, {9}), constant(D::F32, {}, 2.0)}, tensor(D::F32, {9})));
  EXPECT_TRUE(contains(square.source, "x0 * x0")) << square.source;
  auto squares = program.add(makeOp("kiln.pow", {tensor(D::F16, {2, 3}), constant(D::F16, {3}, 2.0)}, tensor(D::F16, {2, 3})));
  EXPECT_TRUE(contains(squares.source, "x0 * x0")) << squares.source;
  auto cube = program.add(makeOp("kiln.pow", {tensor(D::F32, {9}), constant(D::F32, {}, 3.0)}, tensor(D::F32, {9})));
  EXPECT_TRUE(contains(cube.source, "powf(x0, x1)")) << cube.source;
  auto clip = program.add(makeOp("kiln.clip", {tensor(D::F16, {2, 5}), constant(D::F16, {}, 0.0), constant(D::F16, {}, 6.0)},
                                 tensor(D::F16, {2, 5})));
  EXPECT_TRUE(contains(clip.source, "const float x2 = (float)6.0;")) << clip.source;
  auto where = program.add(makeOp("kiln.where", {tensor(D::Bool, {4, 1}), constant(D::F32, {}, -1e9), tensor(D::F32, {1, 6})},
                                  tensor(D::F32, {4, 6})));
  EXPECT_TRUE(contains(where.source, "const float x1 = (float)-1000000000.0;")) << where.source;
  program.compile("constants", 1);
}

TEST(ElementwiseKernels, WhereAndClipEveryType) {
  Program program;
  size_t turn = 0;
  for (DType type : allTypes()) {
    const Broadcast &b = kBroadcasts[turn++ % kBroadcasts.size()];
    program.add(makeOp("kiln.where", {tensor(D::Bool, b.lhs), tensor(type, b.rhs), tensor(type, {})},
                       tensor(type, b.result)));
  }
  program.add(makeOp("kiln.where", {tensor(D::Bool, {3, 1, 1}), tensor(D::I64, {1, 4, 1}), tensor(D::I64, {2, 1, 1, 5})},
                     tensor(D::I64, {2, 3, 4, 5})));
  for (DType type : numericTypes()) {
    const auto &shape = kShapes[turn++ % kShapes.size()];
    // Runtime bounds (read from device memory) and baked ones.
    program.add(makeOp("kiln.clip", {tensor(type, shape), tensor(type, {}), tensor(type, {})}, tensor(type, shape)));
    program.add(makeOp("kiln.clip", {tensor(type, shape), constant(type, {}, 1), constant(type, {}, 100)},
                       tensor(type, shape)));
  }
  program.compile("ternary");
}

//===-- Conversions --------------------------------------------------------===//

TEST(ElementwiseKernels, CastEveryTypePair) {
  Program program;
  size_t turn = 0;
  for (DType from : allTypes())
    for (DType to : allTypes()) {
      const auto &shape = kShapes[turn++ % kShapes.size()];
      program.add(makeOp("kiln.cast", {tensor(from, shape)}, tensor(to, shape)));
      if (to == D::F8E4M3FN)
        program.add(makeOp("kiln.cast", {tensor(from, shape)}, tensor(to, shape), {{"saturate", int64_t(0)}}));
    }
  program.compile("cast", 2);
}

TEST(ElementwiseKernels, CastRoundsOnceAndSaturatesAsTheInterpreter) {
  Program program;
  auto cast = [&](DType from, DType to, std::map<std::string, AttrValue> attrs = {}) {
    return program.add(makeOp("kiln.cast", {tensor(from, {5})}, tensor(to, {5}), std::move(attrs))).source;
  };
  EXPECT_TRUE(contains(cast(D::F32, D::F8E4M3FN), "__NV_SATFINITE"));
  EXPECT_TRUE(contains(cast(D::F32, D::F8E4M3FN, {{"saturate", int64_t(0)}}), "__NV_NOSAT"));
  EXPECT_TRUE(contains(cast(D::F64, D::F8E4M3FN), "__nv_cvt_double_to_fp8"));
  EXPECT_TRUE(contains(cast(D::F64, D::F16), "__double2half("));
  EXPECT_TRUE(contains(cast(D::F64, D::BF16), "__double2bfloat16("));
  EXPECT_TRUE(contains(cast(D::I32, D::F16), "__int2half_rn((int)x0)"));
  EXPECT_TRUE(contains(cast(D::U64, D::BF16), "__ull2bfloat16_rn(x0)"));
  EXPECT_TRUE(contains(cast(D::I64, D::F8E4M3FN), "__nv_cvt_double_to_fp8((double)x0, __NV_SATFINITE"));
  EXPECT_TRUE(contains(cast(D::F32, D::I8), "kiln_ew_f2s((double)(x0), -128.0, 127.0)"));
  EXPECT_TRUE(contains(cast(D::F16, D::U64), "kiln_ew_f2u64("));
  EXPECT_TRUE(contains(cast(D::F32, D::Bool), "!= 0.0"));
  EXPECT_TRUE(contains(cast(D::I64, D::I8), "po[oo] = (signed char)x0;"));
  EXPECT_TRUE(contains(cast(D::I16, D::Bool), "(x0 != 0)"));
  program.compile("cast_details", 1);
}

TEST(ElementwiseKernels, QuantizeAndDequantizePerTensorAndPerAxis) {
  Program program;
  const std::vector<DType> quantTypes = {D::I8, D::U8, D::I32, D::F8E4M3FN};
  size_t turn = 0;
  for (DType floatType : kFloats)
    for (DType quant : quantTypes) {
      const std::vector<int64_t> shape = turn++ % 2 ? std::vector<int64_t>{2, 3, 5} : std::vector<int64_t>{1000003};
      // Per-tensor (rank-0 and one-element parameters), per-axis (axis 1 and -1).
      program.add(makeOp("kiln.quantize", {tensor(floatType, shape), tensor(floatType, {}), tensor(quant, {})},
                         tensor(quant, shape)));
      program.add(makeOp("kiln.dequantize", {tensor(quant, shape), tensor(floatType, {1}), tensor(quant, {1})},
                         tensor(floatType, shape)));
      program.add(makeOp("kiln.quantize", {tensor(floatType, {2, 3, 5}), tensor(floatType, {3}), tensor(quant, {3})},
                         tensor(quant, {2, 3, 5}), {{"axis", int64_t(1)}}));
      program.add(makeOp("kiln.dequantize", {tensor(quant, {2, 3, 5}), tensor(floatType, {5}), tensor(quant, {5})},
                         tensor(floatType, {2, 3, 5}), {{"axis", int64_t(-1)}}));
    }
  // Constant parameters are baked; f8 with saturate = false does not saturate.
  auto baked = program.add(makeOp("kiln.quantize", {tensor(D::F32, {4, 3}), constant(D::F32, {}, 0.5), constant(D::U8, {}, 128)},
                                  tensor(D::U8, {4, 3})));
  EXPECT_TRUE(contains(baked.source, "const float x1 = (float)0.5;")) << baked.source;
  EXPECT_TRUE(contains(baked.source, "rintf(q)")) << baked.source;
  EXPECT_TRUE(contains(baked.source, "kiln_ew_f2u(")) << baked.source;
  auto f8 = program.add(makeOp("kiln.quantize", {tensor(D::F16, {4, 3}), tensor(D::F16, {}), tensor(D::F8E4M3FN, {})},
                               tensor(D::F8E4M3FN, {4, 3}), {{"saturate", int64_t(0)}}));
  EXPECT_TRUE(contains(f8.source, "__NV_NOSAT")) << f8.source;
  // The per-axis parameter index is (i / stride) % dim along the axis.
  auto perAxis = program.add(makeOp("kiln.dequantize", {tensor(D::I8, {2, 3, 5}), tensor(D::F32, {3}), tensor(D::I8, {3})},
                                    tensor(D::F32, {2, 3, 5})));
  EXPECT_TRUE(contains(perAxis.source, "((((unsigned)(u) / 5U) % 3U))")) << perAxis.source;
  EXPECT_TRUE(contains(perAxis.source, "const float x0")) << perAxis.source; // exact in float
  auto wide = program.add(makeOp("kiln.dequantize", {tensor(D::I32, {7}), tensor(D::F32, {}), tensor(D::I32, {})},
                                 tensor(D::F32, {7})));
  EXPECT_TRUE(contains(wide.source, "const double x0")) << wide.source; // i32 differences need double
  program.compile("quantize", 2);
}

//===-- Errors -------------------------------------------------------------===//

void expectError(const OpDesc &op, const std::string &part) {
  auto emitted = emitKernels(op, EmitContext{"k0_"});
  ASSERT_FALSE(emitted.isOk()) << op.op << " should fail";
  const std::string &message = emitted.status().message();
  EXPECT_TRUE(contains(message, op.op)) << message;
  EXPECT_TRUE(contains(message, op.name)) << message;
  EXPECT_TRUE(contains(message, part)) << message;
}

TEST(ElementwiseKernels, BadInputIsAnErrorNamingTheOp) {
  expectError(makeOp("kiln.sqrt", {tensor(D::I32, {4})}, tensor(D::I32, {4})), "float type");
  expectError(makeOp("kiln.not", {tensor(D::F32, {4})}, tensor(D::F32, {4})), "bool");
  expectError(makeOp("kiln.gelu", {tensor(D::F32, {4})}, tensor(D::F32, {4}), {{"approximate", std::string("erf")}}),
              "approximate = \"erf\"");
  expectError(makeOp("kiln.add", {tensor(D::F32, {4}), tensor(D::F16, {4})}, tensor(D::F32, {4})), "kiln.cast");
  expectError(makeOp("kiln.add", {tensor(D::F32, {3}), tensor(D::F32, {4})}, tensor(D::F32, {3})),
              "does not broadcast to the result shape [3]");
  expectError(makeOp("kiln.less", {tensor(D::F32, {3}), tensor(D::F32, {3})}, tensor(D::F32, {3})), "expected bool");
  expectError(makeOp("kiln.and", {tensor(D::I8, {3}), tensor(D::I8, {3})}, tensor(D::I8, {3})), "bool");
  expectError(makeOp("kiln.mul", {tensor(D::F32, {3})}, tensor(D::F32, {3})), "expected 2 operands");
  OpDesc missing = makeOp("kiln.clip", {tensor(D::F32, {3}), tensor(D::F32, {}), tensor(D::F32, {})}, tensor(D::F32, {3}));
  missing.operands[2] = std::nullopt;
  expectError(missing, "operand 2 is missing");
  expectError(makeOp("kiln.where", {tensor(D::I8, {3}), tensor(D::F32, {3}), tensor(D::F32, {3})}, tensor(D::F32, {3})),
              "condition");
  expectError(makeOp("kiln.pow", {tensor(D::I32, {3}), tensor(D::F32, {3})}, tensor(D::F32, {3})), "base's element type");
  expectError(makeOp("kiln.cast", {tensor(D::F32, {3})}, tensor(D::I8, {4})), "input's shape");
  expectError(makeOp("kiln.quantize", {tensor(D::F32, {2, 3}), tensor(D::F32, {3}), tensor(D::I8, {3})},
                     tensor(D::I8, {2, 3}), {{"axis", int64_t(0)}}),
              "per-axis scale has 3 values, axis 0 has 2");
  expectError(makeOp("kiln.quantize", {tensor(D::F32, {2, 3}), tensor(D::F32, {3}), tensor(D::I8, {3})},
                     tensor(D::I8, {2, 3}), {{"axis", int64_t(2)}}),
              "axis 2 is out of range");
  expectError(makeOp("kiln.quantize", {tensor(D::F32, {2, 3}), tensor(D::F32, {}), tensor(D::U8, {})}, tensor(D::I8, {2, 3})),
              "zero_point");
  expectError(makeOp("kiln.dequantize", {tensor(D::I16, {3}), tensor(D::F32, {}), tensor(D::I16, {})}, tensor(D::F32, {3})),
              "i8, u8, i32 or f8E4M3FN");
  expectError(makeOp("kiln.dequantize", {tensor(D::I8, {3}), tensor(D::F32, {}), tensor(D::I8, {})}, tensor(D::F16, {3})),
              "scale's element type");
}

} // namespace
} // namespace kiln::codegen
