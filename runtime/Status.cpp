//===- Status.cpp - errors as values for the runtime -----------------------===//

#include "runtime/Status.h"

namespace kiln::runtime {

const char *statusCodeName(StatusCode code) {
  switch (code) {
  case StatusCode::kOk: return "OK";
  case StatusCode::kInvalidArgument: return "INVALID_ARGUMENT";
  case StatusCode::kInvalidPlan: return "INVALID_PLAN";
  case StatusCode::kIncompatible: return "INCOMPATIBLE";
  case StatusCode::kNotFound: return "NOT_FOUND";
  case StatusCode::kResourceExhausted: return "RESOURCE_EXHAUSTED";
  case StatusCode::kDeviceError: return "DEVICE_ERROR";
  case StatusCode::kInternal: return "INTERNAL";
  }
  return "UNKNOWN";
}

std::string Status::toString() const {
  if (isOk())
    return "OK";
  return std::string(statusCodeName(code_)) + ": " + message_;
}

} // namespace kiln::runtime
