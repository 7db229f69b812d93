//===- ShapeRulesTest.cpp - hand-checked shape rules -----------------------===//

#include "ir/ShapeRules.h"

#include <gtest/gtest.h>

using namespace kiln;

namespace {

Shape ok(ShapeOrError s) {
  if (!s) {
    ADD_FAILURE() << llvm::toString(s.takeError());
    return {};
  }
  return *s;
}

std::string fails(ShapeOrError s) {
  if (s)
    return "<no error>";
  return llvm::toString(s.takeError());
}

TEST(ShapeRules, Broadcast) {
  EXPECT_EQ(ok(broadcastShapes({2, 1, 4}, {3, 1})), (Shape{2, 3, 4}));
  EXPECT_EQ(ok(broadcastShapes({}, {5})), (Shape{5}));
  EXPECT_NE(fails(broadcastShapes({2, 3}, {4})).find("do not broadcast"), std::string::npos);
}

TEST(ShapeRules, ConvResNetStem) {
  // 224x224, 7x7 stride 2 pad 3 -> 112x112.
  EXPECT_EQ(ok(convShape({1, 3, 224, 224}, {64, 3, 7, 7}, {2, 2}, {1, 1}, {3, 3, 3, 3}, 1)),
            (Shape{1, 64, 112, 112}));
  // Depthwise: group = channels.
  EXPECT_EQ(ok(convShape({1, 32, 10, 10}, {32, 1, 3, 3}, {1, 1}, {2, 2}, {2, 2, 2, 2}, 32)),
            (Shape{1, 32, 10, 10}));
  EXPECT_NE(fails(convShape({1, 3, 8, 8}, {4, 2, 3, 3}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1))
                .find("input channels"),
            std::string::npos);
}

TEST(ShapeRules, ConvTranspose) {
  // 3x3 stride 2 pad 1 output_padding 1 doubles 4 -> 8.
  EXPECT_EQ(ok(convTransposeShape({1, 8, 4, 4}, {8, 2, 3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1)),
            (Shape{1, 2, 8, 8}));
}

TEST(ShapeRules, PoolCeilMode) {
  // 32 with kernel 3 stride 2: floor -> 15, ceil -> 16.
  EXPECT_EQ(ok(poolShape({1, 1, 32, 32}, {3, 3}, {2, 2}, {1, 1}, {0, 0, 0, 0}, false)),
            (Shape{1, 1, 15, 15}));
  EXPECT_EQ(ok(poolShape({1, 1, 32, 32}, {3, 3}, {2, 2}, {1, 1}, {0, 0, 0, 0}, true)),
            (Shape{1, 1, 16, 16}));
  // ceil_mode never starts a window in the end padding: 5, k2 s2 p(0,1) -> 3 not 4.
  EXPECT_EQ(ok(poolShape({1, 1, 5}, {2}, {2}, {1}, {0, 1}, true)), (Shape{1, 1, 3}));
}

TEST(ShapeRules, MatMul) {
  EXPECT_EQ(ok(matmulShape({2, 1, 3, 4}, {5, 4, 6})), (Shape{2, 5, 3, 6}));
  EXPECT_EQ(ok(matmulShape({4}, {4, 6})), (Shape{6}));
  EXPECT_EQ(ok(matmulShape({3, 4}, {4})), (Shape{3}));
  EXPECT_NE(fails(matmulShape({3, 4}, {5, 6})).find("contraction"), std::string::npos);
}

TEST(ShapeRules, SliceClamping) {
  // x[1:1000] on 10 -> 9; x[-3:] -> 3; x[::-1] -> all; x[5:2:-2] -> 5,3 -> 2.
  EXPECT_EQ(ok(sliceShape({10}, {1}, {1000}, {0}, {1})), (Shape{9}));
  EXPECT_EQ(ok(sliceShape({10}, {-3}, {INT64_MAX}, {0}, {1})), (Shape{3}));
  EXPECT_EQ(ok(sliceShape({10}, {-1}, {INT64_MIN}, {0}, {-1})), (Shape{10}));
  EXPECT_EQ(ok(sliceShape({10}, {5}, {2}, {0}, {-2})), (Shape{2}));
  EXPECT_EQ(ok(sliceShape({10, 4}, {0}, {2}, {-1}, {1})), (Shape{10, 2}));
  EXPECT_NE(fails(sliceShape({10}, {0}, {2}, {0}, {0})).find("step"), std::string::npos);
  EXPECT_NE(fails(sliceShape({10}, {0, 1}, {2}, {0}, {1})).find("one length"), std::string::npos);
}

TEST(ShapeRules, Reduce) {
  auto axes = normalizeReduceAxes(3, llvm::ArrayRef<int64_t>{-1, 0}, false);
  ASSERT_TRUE(!!axes);
  EXPECT_EQ(*axes, (llvm::SmallVector<int64_t, 6>{0, 2}));
  EXPECT_EQ(ok(reduceShape({2, 3, 4}, *axes, true)), (Shape{1, 3, 1}));
  EXPECT_EQ(ok(reduceShape({2, 3, 4}, *axes, false)), (Shape{3}));
  auto none = normalizeReduceAxes(3, std::nullopt, true);
  ASSERT_TRUE(!!none);
  EXPECT_TRUE(none->empty());
}

TEST(ShapeRules, Einsum) {
  llvm::SmallVector<llvm::ArrayRef<int64_t>> in;
  Shape a = {2, 3, 4}, b = {2, 4, 5};
  in = {a, b};
  EXPECT_EQ(ok(einsumShape("bij,bjk->bik", in)), (Shape{2, 3, 5}));
  Shape c = {3, 4};
  in = {c};
  EXPECT_EQ(ok(einsumShape("ij", in)), (Shape{3, 4}));    // implicit: sorted labels
  EXPECT_EQ(ok(einsumShape("ji", in)), (Shape{4, 3}));
  EXPECT_EQ(ok(einsumShape("ii->i", {Shape{3, 3}})), (Shape{3}));
  Shape d = {7, 2, 3, 4};
  in = {d};
  EXPECT_EQ(ok(einsumShape("...ij->...ji", in)), (Shape{7, 2, 4, 3}));
}

TEST(ShapeRules, ElementCountOverflow) {
  auto count = checkedElementCount({1LL << 32, 1LL << 32});
  ASSERT_FALSE(!!count);
  EXPECT_NE(llvm::toString(count.takeError()).find("overflows int64"), std::string::npos);
  auto fine = checkedElementCount({0, 1LL << 62});
  ASSERT_TRUE(!!fine);
  EXPECT_EQ(*fine, 0);
}

TEST(ShapeRules, Range) {
  auto n = rangeCount(0, 10, 3);
  ASSERT_TRUE(!!n);
  EXPECT_EQ(*n, 4);
  auto neg = rangeCount(10, 4, -3);
  ASSERT_TRUE(!!neg);
  EXPECT_EQ(*neg, 2);
  auto empty = rangeCount(5, 1, 1);
  ASSERT_TRUE(!!empty);
  EXPECT_EQ(*empty, 0);
  auto zero = rangeCount(0, 1, 0);
  ASSERT_FALSE(!!zero);
  EXPECT_NE(llvm::toString(zero.takeError()).find("delta"), std::string::npos);
}

} // namespace
