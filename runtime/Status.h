//===- Status.h - errors as values for the runtime -------------*- C++ -*-===//
//
// The runtime never includes LLVM, so it cannot use llvm::Error. Every runtime call that can
// fail returns a Status (or a StatusOr<T>) with a code and a message that says what to do;
// nothing in the runtime aborts the process on bad input.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_STATUS_H
#define KILN_RUNTIME_STATUS_H

#include <optional>
#include <string>
#include <utility>

namespace kiln::runtime {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,   // the caller passed something malformed
  kInvalidPlan,       // a plan file failed validation (magic, version, checksum, ...)
  kIncompatible,      // valid, but built for another GPU or library version: rebuild it
  kNotFound,
  kResourceExhausted, // out of device or host memory
  kDeviceError,       // CUDA / cuDNN / cuBLASLt reported an error
  kInternal,
};

/// Stable name of a code, for messages and the C API.
const char *statusCodeName(StatusCode code);

class [[nodiscard]] Status {
public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {
    if (code_ == StatusCode::kOk)
      message_.clear();
  }
  static Status ok() { return Status(); }

  bool isOk() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string &message() const { return message_; }
  /// "INVALID_PLAN: <message>", or "OK".
  std::string toString() const;

private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

/// A value or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] StatusOr {
public:
  StatusOr(T value) : value_(std::move(value)) {}
  StatusOr(Status status) : status_(std::move(status)) {
    if (status_.isOk())
      status_ = Status(StatusCode::kInternal, "StatusOr constructed from an OK status without a value");
  }
  bool isOk() const { return value_.has_value(); }
  const Status &status() const { return status_; }
  T &value() & { return *value_; }
  const T &value() const & { return *value_; }
  T &&value() && { return std::move(*value_); }

private:
  Status status_;
  std::optional<T> value_;
};

} // namespace kiln::runtime

#endif // KILN_RUNTIME_STATUS_H
