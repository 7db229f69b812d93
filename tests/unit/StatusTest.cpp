//===- StatusTest.cpp - runtime Status and StatusOr ------------------------===//

#include "runtime/Status.h"

#include <gtest/gtest.h>

using namespace kiln::runtime;

TEST(Status, OkHasNoMessage) {
  Status s(StatusCode::kOk, "ignored");
  EXPECT_TRUE(s.isOk());
  EXPECT_EQ(s.message(), "");
  EXPECT_EQ(s.toString(), "OK");
}

TEST(Status, ErrorCarriesCodeAndMessage) {
  Status s(StatusCode::kIncompatible, "plan targets sm_80; rebuild with kiln compile on this GPU");
  EXPECT_FALSE(s.isOk());
  EXPECT_EQ(s.code(), StatusCode::kIncompatible);
  EXPECT_EQ(s.toString(), "INCOMPATIBLE: plan targets sm_80; rebuild with kiln compile on this GPU");
}

TEST(StatusOr, ValueOrStatus) {
  StatusOr<int> v(42);
  ASSERT_TRUE(v.isOk());
  EXPECT_EQ(v.value(), 42);
  StatusOr<int> e(Status(StatusCode::kNotFound, "no input named 'x'"));
  EXPECT_FALSE(e.isOk());
  EXPECT_EQ(e.status().code(), StatusCode::kNotFound);
  // An OK status without a value is a programming error reported as INTERNAL, not a crash.
  StatusOr<int> bad{Status::ok()};
  EXPECT_FALSE(bad.isOk());
  EXPECT_EQ(bad.status().code(), StatusCode::kInternal);
}
