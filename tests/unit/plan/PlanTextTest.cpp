//===- PlanTextTest.cpp - planToText and planToJson ------------------------===//

#include "PlanFixtures.h"

#include <gtest/gtest.h>

#include <limits>

namespace kiln::plan {
namespace {
using namespace kiln::plan::testing;

/// A strict RFC 8259 recognizer: true when `text` is exactly one JSON value (plus whitespace),
/// with valid escapes, no raw control characters and only valid UTF-8 in strings.
class JsonChecker {
public:
  explicit JsonChecker(std::string_view text) : s_(text) {}
  bool valid() {
    skipSpace();
    if (!value())
      return false;
    skipSpace();
    return i_ == s_.size();
  }
  size_t position() const { return i_; }

private:
  bool value() {
    if (i_ >= s_.size())
      return false;
    switch (s_[i_]) {
    case '{': return container('}', true);
    case '[': return container(']', false);
    case '"': return string();
    case 't': return literal("true");
    case 'f': return literal("false");
    case 'n': return literal("null");
    default: return number();
    }
  }
  bool container(char close, bool object) {
    ++i_;
    skipSpace();
    if (peek(close))
      return ++i_, true;
    for (;;) {
      skipSpace();
      if (object) {
        if (!string())
          return false;
        skipSpace();
        if (!peek(':'))
          return false;
        ++i_;
        skipSpace();
      }
      if (!value())
        return false;
      skipSpace();
      if (peek(close))
        return ++i_, true;
      if (!peek(','))
        return false;
      ++i_;
    }
  }
  bool string() {
    if (!peek('"'))
      return false;
    for (++i_; i_ < s_.size();) {
      unsigned char c = s_[i_];
      if (c == '"')
        return ++i_, true;
      if (c < 0x20)
        return false;
      if (c == '\\') {
        if (++i_ >= s_.size())
          return false;
        char e = s_[i_++];
        if (e == 'u') {
          for (int k = 0; k < 4; ++k, ++i_)
            if (i_ >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[i_])))
              return false;
        } else if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) {
          return false;
        }
        continue;
      }
      size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
      if (n == 0 || i_ + n > s_.size())
        return false;
      for (size_t k = 1; k < n; ++k)
        if ((static_cast<unsigned char>(s_[i_ + k]) & 0xC0) != 0x80)
          return false;
      i_ += n;
    }
    return false;
  }
  bool number() {
    size_t start = i_;
    if (peek('-'))
      ++i_;
    if (peek('0'))
      ++i_;
    else if (!digits())
      return false;
    if (peek('.') && (++i_, !digits()))
      return false;
    if ((peek('e') || peek('E')) && (++i_, (peek('+') || peek('-')) ? ++i_ : 0, !digits()))
      return false;
    return i_ > start;
  }
  bool digits() {
    size_t start = i_;
    while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_])))
      ++i_;
    return i_ > start;
  }
  bool literal(std::string_view word) {
    if (s_.substr(i_, word.size()) != word)
      return false;
    i_ += word.size();
    return true;
  }
  bool peek(char c) const { return i_ < s_.size() && s_[i_] == c; }
  void skipSpace() {
    while (i_ < s_.size() && std::string_view(" \t\r\n").find(s_[i_]) != std::string_view::npos)
      ++i_;
  }

  std::string_view s_;
  size_t i_ = 0;
};

TEST(PlanText, JsonCheckerRejectsInvalidJson) {
  // The checker must be able to fail for the JSON tests below to mean anything.
  for (std::string_view bad : {"{", "{\"a\" 1}", "[1,]", "\"a\x01\"", "\"\\x41\"", "01", "NaN", "{\"a\":1}x",
                               "\"\xff\"", "[1 2]", "{1:2}", "-", "1.", "1e"})
    EXPECT_FALSE(JsonChecker(bad).valid()) << bad;
  for (std::string_view good : {"{}", "[]", "{\"a\": [1, -2.5e3, true, null, \"\\u00e9\xc3\xa9\"]}", "0", "\"\""})
    EXPECT_TRUE(JsonChecker(good).valid()) << good;
}

TEST(PlanText, TextOfTheSamplePlan) {
  Plan plan = makeSamplePlan();
  std::string expected =
      "kiln-plan format=9 weightsBytes=3904\n"
      "metadata compilerVersion=\"0.1.0\" computeCapability=90 cudaVersion=13.0 cudnnVersion=9.19.0 "
      "cublasLtVersion=13.1.0 precision=\"tf32\" precisionOverrides=[] precisionChoice=\"\" model=\"tiny.onnx\" arenaBytes=5376 arenaLowerBound=4000\n"
      "input 0 \"x\" type=f32[1,3,8,8] buffer=x:f32[1,3,8,8]\n"
      "output 0 \"y\" type=f32[4,10] buffer=y:f32[4,10]\n"
      "output 1 \"up\" type=f32[1,2,16,16] buffer=up.y:f32[1,2,16,16]\n"
      "buffer 0 \"x\" space=arena offset=0 bytes=768 type=f32[1,3,8,8]\n"
      "buffer 1 \"conv.w\" space=weights offset=0 bytes=432 type=f32[4,3,3,3]\n"
      "buffer 2 \"conv.b\" space=weights offset=512 bytes=16 type=f32[4]\n"
      "buffer 3 \"conv.y\" space=arena offset=768 bytes=1024 type=f32[1,4,8,8]\n"
      "buffer 4 \"relu.y\" space=arena offset=1792 bytes=1024 type=f32[1,4,8,8]\n"
      "buffer 5 \"fc.w\" space=weights offset=768 bytes=2560 type=f32[64,10]\n"
      "buffer 6 \"fc.b\" space=weights offset=3328 bytes=40 type=f32[10]\n"
      "buffer 7 \"fc.y\" space=arena offset=2816 bytes=160 type=f32[4,10]\n"
      "buffer 8 \"y\" space=arena offset=3072 bytes=160 type=f32[4,10]\n"
      "buffer 9 \"up.w\" space=weights offset=3584 bytes=128 type=f32[4,2,2,2]\n"
      "buffer 10 \"up.y\" space=arena offset=3328 bytes=2048 type=f32[1,2,16,16]\n"
      "buffer 11 \"bmm.b\" space=weights offset=3840 bytes=64 type=f32[4,4]\n"
      "step 0 \"/conv1/Conv\" op=\"kiln.conv\" nodes=[\"/conv1/Conv\"] conv math=tf32 transpose=0 "
      "xShape=[1,3,8,8] wShape=[4,3,3,3] yShape=[1,4,8,8] pads=[1,1] strides=[1,1] dilations=[1,1] groups=1 "
      "channelsLast=0 activation=relu activationAlpha=0 activationBeta=0 x=x:f32[1,3,8,8] w=conv.w:f32[4,3,3,3] "
      "y=conv.y:f32[1,4,8,8] bias=conv.b:f32[4] residual=- scale=- yScale=- yQuantized=- residualScale=- values=[] valueBuffers=[]\n"
      "step 1 \"/relu1/Relu\" op=\"kiln.relu\" nodes=[\"/relu1/Relu\"] kernel image=0 function=\"relu_f32_256\" "
      "grid=[1,1,1] block=[256,1,1] sharedBytes=0 args=[conv.y:f32[1,4,8,8],relu.y:f32[1,4,8,8]] "
      "values=[\"/relu1/Relu_output_0\"] valueBuffers=[relu.y:f32[1,4,8,8]]\n"
      "step 2 \"/fc/Gemm\" op=\"kiln.gemm\" nodes=[\"/fc/Gemm\"] gemm math=tf32 batch=1 m=4 n=10 k=64 transA=0 "
      "transB=0 strideA=0 strideB=0 strideC=0 strideD=0 alpha=1 beta=0 activation=none a=relu.y:f32[1,4,8,8] "
      "b=fc.w:f32[64,10] d=fc.y:f32[4,10] c=- bias=fc.b:f32[10] scaleD=- values=[\"logits\"] valueBuffers=[fc.y:f32[4,10]]\n"
      "step 3 \"/Reshape\" op=\"kiln.reshape\" nodes=[] copy src=fc.y:f32[4,10] dst=y:f32[4,10] bytes=160 values=[] valueBuffers=[]\n"
      "step 4 \"/up/ConvTranspose\" op=\"kiln.conv_transpose\" nodes=[\"/up/ConvTranspose\"] conv math=strict-f32 "
      "transpose=1 xShape=[1,4,8,8] wShape=[4,2,2,2] yShape=[1,2,16,16] pads=[0,0] strides=[2,2] dilations=[1,1] "
      "groups=1 channelsLast=0 activation=none activationAlpha=0 activationBeta=0 x=conv.y:f32[1,4,8,8] "
      "w=up.w:f32[4,2,2,2] y=up.y:f32[1,2,16,16] bias=- residual=- scale=- yScale=- yQuantized=- residualScale=- values=[] valueBuffers=[]\n"
      "step 5 \"/bmm/MatMul\" op=\"kiln.matmul\" nodes=[\"/bmm/MatMul\",\"/bmm/Mul\",\"/bmm/Add\"] gemm "
      "math=strict-f32 batch=2 m=4 n=4 k=4 transA=1 transB=1 strideA=16 strideB=0 strideC=16 strideD=16 "
      "alpha=0.25 beta=0.5 activation=gelu a=relu.y:f32[1,4,8,8] b=bmm.b:f32[4,4] d=up.y:f32[1,2,16,16] "
      "c=up.y:f32[1,2,16,16] bias=- scaleD=- values=[] valueBuffers=[]\n"
      "step 6 \"/tail/Mul\" op=\"kiln.mul\" nodes=[\"/tail/Mul\"] kernel image=1 function=\"scale\" grid=[2,3,4] "
      "block=[8,8,4] sharedBytes=128 args=[] values=[] valueBuffers=[]\n"
      "image 0 \"kernels0\" smVersion=90 cubinBytes=64 ptxBytes=" + std::to_string(plan.images[0].ptx.size()) + "\n"
      "image 1 \"kernels1\" smVersion=90 cubinBytes=0 ptxBytes=" + std::to_string(plan.images[1].ptx.size()) + "\n";
  EXPECT_EQ(planToText(plan), expected);
  // Stable: a plan read back from its bytes prints the same.
  EXPECT_EQ(planToText(parsePlan(serializePlan(plan)).value()), expected);
}

TEST(PlanText, OperandsShowTheirOwnTypes) {
  // A bf16 x bf16 -> f32 matmul: each operand shows its buffer's type, not one for the step.
  // Names that are not plain identifiers are quoted.
  Plan plan = makeSamplePlan();
  plan.buffers[4].name = "onnx::MatMul 7";
  plan.buffers[4].dtype = DType::BF16;
  plan.buffers[4].shape = {4, 64, 2};
  plan.buffers[5].dtype = DType::BF16;
  plan.buffers[5].shape = {64, 20};
  std::string text = planToText(plan);
  EXPECT_NE(text.find("a=\"onnx::MatMul 7\":bf16[4,64,2] b=fc.w:bf16[64,20] d=fc.y:f32[4,10] c=- "
                      "bias=fc.b:f32[10] scaleD=- values=[\"logits\"]"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("buffer 4 \"onnx::MatMul 7\" space=arena offset=1792 bytes=1024 type=bf16[4,64,2]\n"),
            std::string::npos)
      << text;
  std::string json = planToJson(plan);
  EXPECT_TRUE(JsonChecker(json).valid()) << json;
  EXPECT_NE(json.find("\"a\": {\"index\": 4, \"name\": \"onnx::MatMul 7\", \"dtype\": \"bf16\", \"shape\": [4,64,2]}, "
                      "\"b\": {\"index\": 5, \"name\": \"fc.w\", \"dtype\": \"bf16\", \"shape\": [64,20]}, "
                      "\"d\": {\"index\": 7, \"name\": \"fc.y\", \"dtype\": \"f32\", \"shape\": [4,10]}"),
            std::string::npos)
      << json;
}

TEST(PlanText, JsonOfTheSamplePlan) {
  Plan plan = makeSamplePlan();
  std::string json = planToJson(plan);
  JsonChecker checker(json);
  EXPECT_TRUE(checker.valid()) << "invalid JSON near byte " << checker.position() << ":\n" << json;
  for (const std::string &line : {
           std::string("{\n  \"format\": 9,\n"),
           std::string("  \"metadata\": {\"compilerVersion\": \"0.1.0\", \"computeCapability\": 90, \"cudaVersion\": "
                       "13000, \"cudnnVersion\": 91900, \"cublasLtVersion\": 130100, \"precision\": \"tf32\", "
                       "\"precisionOverrides\": [], \"precisionChoice\": \"\", \"model\": \"tiny.onnx\", \"arenaBytes\": 5376, \"arenaLowerBound\": 4000},\n"),
           std::string("  \"weightsBytes\": 3904,\n"),
           std::string("  \"inputs\": [\n    {\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [1,3,8,8], \"buffer\": "
                       "{\"index\": 0, \"name\": \"x\", \"dtype\": \"f32\", \"shape\": [1,3,8,8]}}\n  ],\n"),
           std::string("    {\"name\": \"up\", \"dtype\": \"f32\", \"shape\": [1,2,16,16], \"buffer\": {\"index\": 10, "
                       "\"name\": \"up.y\", \"dtype\": \"f32\", \"shape\": [1,2,16,16]}}\n"),
           std::string("    {\"name\": \"bmm.b\", \"space\": \"weights\", \"offset\": 3840, \"bytes\": 64, \"dtype\": "
                       "\"f32\", \"shape\": [4,4]}\n  ],\n"),
           std::string("    {\"name\": \"/conv1/Conv\", \"op\": \"kiln.conv\", \"nodes\": [\"/conv1/Conv\"], \"kind\": "
                       "\"conv\", \"math\": \"tf32\", \"transpose\": false, \"xShape\": [1,3,8,8], \"wShape\": "
                       "[4,3,3,3], \"yShape\": [1,4,8,8], \"pads\": [1,1], \"strides\": [1,1], \"dilations\": [1,1], "
                       "\"groups\": 1, \"channelsLast\": false, \"activation\": \"relu\", \"activationAlpha\": 0, "
                       "\"activationBeta\": 0, \"x\": {\"index\": 0, \"name\": \"x\", \"dtype\": "
                       "\"f32\", \"shape\": [1,3,8,8]}, \"w\": {\"index\": 1, \"name\": \"conv.w\", \"dtype\": "
                       "\"f32\", \"shape\": [4,3,3,3]}, \"y\": {\"index\": 3, \"name\": \"conv.y\", \"dtype\": "
                       "\"f32\", \"shape\": [1,4,8,8]}, \"bias\": {\"index\": 2, \"name\": \"conv.b\", \"dtype\": "
                       "\"f32\", \"shape\": [4]}, \"residual\": null, \"scale\": null, \"yScale\": null, \"yQuantized\": null, \"residualScale\": null, \"values\": [], \"valueBuffers\": []},\n"),
           std::string("    {\"name\": \"/relu1/Relu\", \"op\": \"kiln.relu\", \"nodes\": [\"/relu1/Relu\"], \"kind\": "
                       "\"kernel\", \"image\": 0, \"function\": \"relu_f32_256\", \"grid\": [1,1,1], \"block\": "
                       "[256,1,1], \"sharedBytes\": 0, \"args\": [{\"index\": 3, \"name\": \"conv.y\", \"dtype\": "
                       "\"f32\", \"shape\": [1,4,8,8]}, {\"index\": 4, \"name\": \"relu.y\", \"dtype\": \"f32\", "
                       "\"shape\": [1,4,8,8]}], \"values\": [\"/relu1/Relu_output_0\"], \"valueBuffers\": [{\"index\": 4, "
                       "\"name\": \"relu.y\", \"dtype\": \"f32\", \"shape\": [1,4,8,8]}]},\n"),
           std::string("    {\"name\": \"/fc/Gemm\", \"op\": \"kiln.gemm\", \"nodes\": [\"/fc/Gemm\"], \"kind\": "
                       "\"gemm\", \"math\": \"tf32\", \"batch\": 1, \"m\": 4, \"n\": 10, \"k\": 64, \"transA\": false, "
                       "\"transB\": false, \"strideA\": 0, \"strideB\": 0, \"strideC\": 0, \"strideD\": 0, \"alpha\": "
                       "1, \"beta\": 0, \"activation\": \"none\", \"a\": {\"index\": 4, \"name\": \"relu.y\", "
                       "\"dtype\": \"f32\", \"shape\": [1,4,8,8]}, \"b\": {\"index\": 5, \"name\": \"fc.w\", "
                       "\"dtype\": \"f32\", \"shape\": [64,10]}, \"d\": {\"index\": 7, \"name\": \"fc.y\", \"dtype\": "
                       "\"f32\", \"shape\": [4,10]}, \"c\": null, \"bias\": {\"index\": 6, \"name\": \"fc.b\", "
                       "\"dtype\": \"f32\", \"shape\": [10]}, \"scaleD\": null, \"values\": [\"logits\"], \"valueBuffers\": [{\"index\": 7, "
                       "\"name\": \"fc.y\", \"dtype\": \"f32\", \"shape\": [4,10]}]},\n"),
           std::string("    {\"name\": \"/Reshape\", \"op\": \"kiln.reshape\", \"nodes\": [], \"kind\": \"copy\", "
                       "\"src\": {\"index\": 7, \"name\": \"fc.y\", \"dtype\": \"f32\", \"shape\": [4,10]}, \"dst\": "
                       "{\"index\": 8, \"name\": \"y\", \"dtype\": \"f32\", \"shape\": [4,10]}, \"bytes\": 160, \"values\": [], "
                       "\"valueBuffers\": []},\n"),
           std::string("{\"name\": \"/bmm/MatMul\", \"op\": \"kiln.matmul\", \"nodes\": "
                       "[\"/bmm/MatMul\",\"/bmm/Mul\",\"/bmm/Add\"], \"kind\": \"gemm\", "),
           std::string("\"alpha\": 0.25, \"beta\": 0.5, \"activation\": \"gelu\", \"a\": {\"index\": 4, "),
           std::string("\"c\": {\"index\": 10, \"name\": \"up.y\", \"dtype\": \"f32\", \"shape\": [1,2,16,16]}, "
                       "\"bias\": null, \"scaleD\": null, \"values\": [], \"valueBuffers\": []},\n"),
           std::string("    {\"name\": \"kernels1\", \"smVersion\": 90, \"cubinBytes\": 0, \"ptxBytes\": " +
                       std::to_string(plan.images[1].ptx.size()) + "}\n  ]\n}\n"),
       })
    EXPECT_NE(json.find(line), std::string::npos) << "missing:\n" << line << "in:\n" << json;
}

TEST(PlanText, StringsAreEscaped) {
  Plan plan = makeSamplePlan();
  plan.buffers[0].name = std::string("a\"b\\c\nd\x01" "e\xff" "f\xc3\xa9g\xed\xa0\x80"); // \xed\xa0\x80: a surrogate
  plan.steps[1].name = "tab\there";
  plan.steps[1].nodes = {"tab\there", "q\"uote", "", "\xff"};
  std::string text = planToText(plan);
  EXPECT_NE(text.find("buffer 0 \"a\\\"b\\\\c\\nd\\x01e\\xfff\xc3\xa9g\\xed\\xa0\\x80\" space=arena"),
            std::string::npos)
      << text;
  // The same name as an operand: quoted the same way.
  EXPECT_NE(text.find(" x=\"a\\\"b\\\\c\\nd\\x01e\\xfff\xc3\xa9g\\xed\\xa0\\x80\":f32[1,3,8,8] "), std::string::npos)
      << text;
  EXPECT_NE(text.find("step 1 \"tab\\there\" op=\"kiln.relu\" nodes=[\"tab\\there\",\"q\\\"uote\",\"\",\"\\xff\"] "
                      "kernel "),
            std::string::npos)
      << text;
  std::string json = planToJson(plan);
  EXPECT_TRUE(JsonChecker(json).valid()) << json;
  EXPECT_NE(json.find("{\"name\": \"a\\\"b\\\\c\\nd\\u0001e\\ufffdf\xc3\xa9g\\ufffd\\ufffd\\ufffd\", \"space\""),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"nodes\": [\"tab\\there\",\"q\\\"uote\",\"\",\"\\ufffd\"], "), std::string::npos) << json;
}

TEST(PlanText, ViewsOfAnInvalidPlanStillWork) {
  // inspect shows what is in a plan that fails validation; nothing in the views may assume it
  // is valid.
  Plan plan = makeSamplePlan();
  plan.inputs[0].dtype = static_cast<DType>(77);
  plan.buffers[1].space = static_cast<MemorySpace>(9);
  auto &g = std::get<GemmStep>(plan.steps[2].params);
  g.math = static_cast<MathMode>(3);
  g.activation = static_cast<Activation>(8);
  g.alpha = std::numeric_limits<float>::quiet_NaN();
  g.beta = -std::numeric_limits<float>::infinity();
  g.b = 40;
  std::get<KernelStep>(plan.steps[1].params).args[0] = 12;
  plan.metadata.cudnnVersion = 0;
  std::string text = planToText(plan);
  EXPECT_NE(text.find("input 0 \"x\" type=?77[1,3,8,8] buffer=x:f32[1,3,8,8]\n"), std::string::npos) << text;
  EXPECT_NE(text.find("buffer 1 \"conv.w\" space=?9 offset=0"), std::string::npos) << text;
  EXPECT_NE(text.find("gemm math=?3 batch=1"), std::string::npos) << text;
  EXPECT_NE(text.find("alpha=nan beta=-inf activation=?8 a=relu.y:f32[1,4,8,8] b=?40 "), std::string::npos) << text;
  EXPECT_NE(text.find("args=[?12,relu.y:f32[1,4,8,8]]"), std::string::npos) << text;
  EXPECT_NE(text.find("cudnnVersion=none"), std::string::npos) << text;
  std::string json = planToJson(plan);
  EXPECT_TRUE(JsonChecker(json).valid()) << json;
  EXPECT_NE(json.find("\"alpha\": \"NaN\", \"beta\": \"-Infinity\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"b\": {\"index\": 40}, "), std::string::npos) << json;
}

TEST(PlanText, EmptyPlan) {
  Plan plan;
  EXPECT_EQ(planToText(plan), "kiln-plan format=9 weightsBytes=0\n"
                              "metadata compilerVersion=\"\" computeCapability=90 cudaVersion=none cudnnVersion=none "
                              "cublasLtVersion=none precision=\"\" precisionOverrides=[] precisionChoice=\"\" model=\"\" arenaBytes=0 arenaLowerBound=0\n");
  std::string json = planToJson(plan);
  EXPECT_TRUE(JsonChecker(json).valid()) << json;
  EXPECT_NE(json.find("  \"steps\": [],\n  \"images\": []\n}\n"), std::string::npos) << json;
}

} // namespace
} // namespace kiln::plan
