//===- CApiTest.cpp - C API argument checking (no GPU needed) --------------===//
//
// Every entry point must answer a NULL or out-of-range argument with
// KILN_STATUS_INVALID_ARGUMENT and a message naming the function and the argument, before it
// touches the device; NULL handles to destroy functions are no-ops.
//
//===----------------------------------------------------------------------===//

#include "runtime/kiln_runtime.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>

namespace {

void expectInvalid(kiln_status_t status, const char *function, const char *argument) {
  EXPECT_EQ(status, KILN_STATUS_INVALID_ARGUMENT);
  std::string message = kiln_last_error();
  EXPECT_NE(message.find(function), std::string::npos) << message;
  EXPECT_NE(message.find(argument), std::string::npos) << message;
}

} // namespace

TEST(CApi, StatusNamesMirrorTheCppCodes) {
  EXPECT_STREQ(kiln_status_name(KILN_STATUS_OK), "OK");
  EXPECT_STREQ(kiln_status_name(KILN_STATUS_INVALID_ARGUMENT), "INVALID_ARGUMENT");
  EXPECT_STREQ(kiln_status_name(KILN_STATUS_INCOMPATIBLE), "INCOMPATIBLE");
  EXPECT_STREQ(kiln_status_name(KILN_STATUS_INTERNAL), "INTERNAL");
  EXPECT_STREQ(kiln_status_name(static_cast<kiln_status_t>(42)), "UNKNOWN");
}

TEST(CApi, RuntimeCreateChecksArguments) {
  expectInvalid(kiln_runtime_create(0, nullptr, nullptr), "kiln_runtime_create", "out");
  kiln_runtime_t *rt = reinterpret_cast<kiln_runtime_t *>(0x1);
  expectInvalid(kiln_runtime_create(-1, nullptr, &rt), "kiln_runtime_create", "device_ordinal");
  EXPECT_EQ(rt, nullptr); // outputs are cleared on failure
}

TEST(CApi, EngineFunctionsCheckArguments) {
  kiln_engine_t *engine = reinterpret_cast<kiln_engine_t *>(0x1);
  expectInvalid(kiln_engine_load(nullptr, "model.kiln", &engine), "kiln_engine_load", "runtime");
  EXPECT_EQ(engine, nullptr);
  expectInvalid(kiln_engine_load(nullptr, "model.kiln", nullptr), "kiln_engine_load", "out");
  size_t n = 0;
  const char *name = nullptr;
  expectInvalid(kiln_engine_num_inputs(nullptr, &n), "kiln_engine_num_inputs", "engine");
  expectInvalid(kiln_engine_num_outputs(nullptr, &n), "kiln_engine_num_outputs", "engine");
  expectInvalid(kiln_engine_input_name(nullptr, 0, &name), "kiln_engine_input_name", "engine");
  expectInvalid(kiln_engine_output_name(nullptr, 0, &name), "kiln_engine_output_name", "engine");
  expectInvalid(kiln_engine_input_bytes(nullptr, "x", &n), "kiln_engine_input_bytes", "engine");
  expectInvalid(kiln_engine_output_bytes(nullptr, "y", &n), "kiln_engine_output_bytes", "engine");
}

TEST(CApi, ContextFunctionsCheckArguments) {
  kiln_context_t *ctx = reinterpret_cast<kiln_context_t *>(0x1);
  expectInvalid(kiln_context_create(nullptr, 1, &ctx), "kiln_context_create", "engine");
  EXPECT_EQ(ctx, nullptr);
  expectInvalid(kiln_context_create(nullptr, 1, nullptr), "kiln_context_create", "out");
  float data[4] = {};
  expectInvalid(kiln_context_set_input(nullptr, "x", data, sizeof(data)), "kiln_context_set_input", "context");
  expectInvalid(kiln_context_get_output(nullptr, "y", data, sizeof(data)), "kiln_context_get_output", "context");
  expectInvalid(kiln_context_run(nullptr), "kiln_context_run", "context");
}

TEST(CApi, DestroyAcceptsNull) {
  kiln_context_destroy(nullptr);
  kiln_engine_destroy(nullptr);
  kiln_runtime_destroy(nullptr);
  SUCCEED();
}

TEST(CApi, LastErrorIsPerThread) {
  expectInvalid(kiln_context_run(nullptr), "kiln_context_run", "context");
  std::string other = "unset";
  std::thread([&] { other = kiln_last_error(); }).join();
  EXPECT_EQ(other, ""); // a fresh thread has seen no error
  EXPECT_NE(std::string(kiln_last_error()).find("kiln_context_run"), std::string::npos);
}
