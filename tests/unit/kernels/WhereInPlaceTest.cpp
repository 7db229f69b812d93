//===- WhereInPlaceTest.cpp - kiln.where over its own operand's bytes ---------===//
//
// Which wheres the row-fill kernel takes (one flag per row of 32 or more elements, the other
// side a one-element constant) and that its source compiles with NVRTC; that it computes what
// the interpreter does is tests/gpu/check_generated_kernels.py's (where_in_place cases).
//
//===----------------------------------------------------------------------===//

#include "codegen/kernels/Nvrtc.h"
#include "codegen/kernels/WhereInPlace.h"
#include "KernelTestSupport.h"

#include <gtest/gtest.h>

namespace kiln::codegen {
namespace {

using namespace kiln::codegen::kerneltest;

/// BERT's where(row fully masked, 0, attention) at [2, 128, 768], bf16: condition [2, 128, 1].
OpDesc maskedRows(std::vector<int64_t> condition = {2, 128, 1}, bool constantFirst = true) {
  OpDesc where;
  where.op = "kiln.where";
  where.name = "masked";
  TensorDesc values = tensor(DType::BF16, {2, 128, 768});
  TensorDesc zero = floatConstant(DType::BF16, {}, {0.0});
  where.operands = {tensor(DType::Bool, condition), constantFirst ? zero : values, constantFirst ? values : zero};
  where.results = {values};
  return where;
}

TEST(WhereInPlace, FillsTheFlaggedRowsOnly) {
  std::string source;
  std::vector<std::string> functions;
  struct Form {
    OpDesc where;
    size_t kept;
    const char *fillWhen, *rows, *inner;
  };
  std::vector<Form> forms = {
      {maskedRows(), 2, "!= true", "< 256LL", "< 768LL"},
      // where(c, x, 0): the rows whose flag is false change.
      {maskedRows({2, 128, 1}, false), 1, "!= false", "< 256LL", "< 768LL"},
      // A flag per batch (rank-1 condition right-aligned: [2, 1, 1]): two rows of 128 * 768.
      {maskedRows({2, 1, 1}), 2, "!= true", "< 2LL", "< 98304LL"},
  };
  for (size_t i = 0; i < forms.size(); ++i) {
    std::optional<EmittedKernels> emitted =
        emitWhereInPlace(forms[i].where, forms[i].kept, EmitContext{"k" + std::to_string(i) + "_"});
    ASSERT_TRUE(emitted.has_value()) << i;
    ASSERT_EQ(emitted->launches.size(), 1u);
    const KernelLaunch &launch = emitted->launches[0];
    ASSERT_EQ(launch.args.size(), 2u) << "the condition and the result: the kept operand is not read";
    EXPECT_EQ(launch.args[0].kind, KernelArg::Kind::Operand);
    EXPECT_EQ(launch.args[0].index, 0u);
    EXPECT_EQ(launch.args[1].kind, KernelArg::Kind::Result);
    for (const char *text : {forms[i].fillWhen, forms[i].rows, forms[i].inner})
      EXPECT_NE(emitted->source.find(text), std::string::npos) << text << "\n" << emitted->source;
    source += emitted->source;
    functions.push_back(launch.function);
  }
  auto program = compileWithNvrtc(programPrelude() + source, "where_in_place.cu");
  ASSERT_TRUE(program.isOk()) << program.status().toString();
  for (const std::string &fn : functions)
    EXPECT_NE(program.value().ptx.find(".entry " + fn + "("), std::string::npos) << fn;
}

TEST(WhereInPlace, LeavesOtherFormsToTheGenericKernel) {
  // Not over the kept operand's bytes: the other side is no constant.
  EXPECT_FALSE(emitWhereInPlace(maskedRows(), 1, EmitContext{"k0_"}).has_value());
  // A flag per element, and one broadcast along a leading axis: no rows.
  EXPECT_FALSE(emitWhereInPlace(maskedRows({2, 128, 768}), 2, EmitContext{"k0_"}).has_value());
  EXPECT_FALSE(emitWhereInPlace(maskedRows({1, 128, 1}), 2, EmitContext{"k0_"}).has_value());
  // A constant of more than one element.
  OpDesc wide = maskedRows();
  wide.operands[1] = tensor(DType::BF16, {768});
  EXPECT_FALSE(emitWhereInPlace(wide, 2, EmitContext{"k0_"}).has_value());
}

} // namespace
} // namespace kiln::codegen
