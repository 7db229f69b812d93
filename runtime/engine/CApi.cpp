//===- CApi.cpp - kiln_runtime.h over the C++ runtime ----------------------===//
//
// Each handle owns its C++ object. No C++ exception crosses the C boundary: the runtime
// reports errors as Status values, and allocation failures are caught at the edge.
//
//===----------------------------------------------------------------------===//

#include "runtime/kiln_runtime.h"

#include "runtime/Runtime.h"

#include <new>
#include <string>

struct kiln_runtime {
  std::unique_ptr<kiln::Runtime> runtime;
};
struct kiln_engine {
  std::unique_ptr<kiln::Engine> engine;
};
struct kiln_context {
  std::unique_ptr<kiln::ExecutionContext> context;
};

namespace {

thread_local std::string lastError;

static_assert(static_cast<int>(kiln::StatusCode::kInternal) == KILN_STATUS_INTERNAL &&
                  static_cast<int>(kiln::StatusCode::kDeviceError) == KILN_STATUS_DEVICE_ERROR &&
                  static_cast<int>(kiln::StatusCode::kInvalidArgument) == KILN_STATUS_INVALID_ARGUMENT,
              "kiln_status_t mirrors kiln::runtime::StatusCode");

kiln_status_t fail(kiln_status_t code, std::string message) {
  lastError = std::move(message);
  return code;
}

kiln_status_t report(const kiln::Status &status, const char *function) {
  if (status.isOk())
    return KILN_STATUS_OK;
  return fail(static_cast<kiln_status_t>(status.code()), std::string(function) + ": " + status.message());
}

kiln_status_t nullArgument(const char *function, const char *argument) {
  return fail(KILN_STATUS_INVALID_ARGUMENT, std::string(function) + ": argument '" + argument + "' must not be NULL");
}

/// Runs `body` and turns an escaping std::bad_alloc (or any other exception) into a status.
template <typename Body>
kiln_status_t guarded(const char *function, Body &&body) {
  try {
    return body();
  } catch (const std::bad_alloc &) {
    return fail(KILN_STATUS_RESOURCE_EXHAUSTED, std::string(function) + ": out of host memory");
  } catch (const std::exception &e) {
    return fail(KILN_STATUS_INTERNAL, std::string(function) + ": " + e.what());
  }
}

const kiln::TensorDesc *findTensor(const std::vector<kiln::TensorDesc> &list, const char *name) {
  for (const kiln::TensorDesc &t : list)
    if (t.name == name)
      return &t;
  return nullptr;
}

} // namespace

extern "C" {

const char *kiln_last_error(void) { return lastError.c_str(); }

const char *kiln_status_name(kiln_status_t status) {
  if (status < KILN_STATUS_OK || status > KILN_STATUS_INTERNAL)
    return "UNKNOWN";
  return kiln::runtime::statusCodeName(static_cast<kiln::StatusCode>(status));
}

kiln_status_t kiln_runtime_create(int device_ordinal, const char *timing_cache_path, kiln_runtime_t **out) {
  static const char *fn = "kiln_runtime_create";
  if (!out)
    return nullArgument(fn, "out");
  *out = nullptr;
  if (device_ordinal < 0)
    return fail(KILN_STATUS_INVALID_ARGUMENT,
                std::string(fn) + ": device_ordinal " + std::to_string(device_ordinal) + " must be >= 0");
  return guarded(fn, [&] {
    kiln::RuntimeOptions options;
    options.deviceOrdinal = device_ordinal;
    if (timing_cache_path)
      options.timingCachePath = timing_cache_path;
    auto runtime = kiln::Runtime::create(options);
    if (!runtime.isOk())
      return report(runtime.status(), fn);
    *out = new kiln_runtime{std::move(runtime).value()};
    return KILN_STATUS_OK;
  });
}

void kiln_runtime_destroy(kiln_runtime_t *runtime) { delete runtime; }

kiln_status_t kiln_engine_load(kiln_runtime_t *runtime, const char *plan_path, kiln_engine_t **out) {
  static const char *fn = "kiln_engine_load";
  if (!out)
    return nullArgument(fn, "out");
  *out = nullptr;
  if (!runtime)
    return nullArgument(fn, "runtime");
  if (!plan_path)
    return nullArgument(fn, "plan_path");
  return guarded(fn, [&] {
    auto engine = runtime->runtime->loadEngine(std::string(plan_path));
    if (!engine.isOk())
      return report(engine.status(), fn);
    *out = new kiln_engine{std::move(engine).value()};
    return KILN_STATUS_OK;
  });
}

void kiln_engine_destroy(kiln_engine_t *engine) { delete engine; }

static kiln_status_t count(const kiln_engine_t *engine, size_t *out, bool inputs, const char *fn) {
  if (!engine)
    return nullArgument(fn, "engine");
  if (!out)
    return nullArgument(fn, "out");
  *out = inputs ? engine->engine->inputs().size() : engine->engine->outputs().size();
  return KILN_STATUS_OK;
}

kiln_status_t kiln_engine_num_inputs(const kiln_engine_t *engine, size_t *out) {
  return count(engine, out, true, "kiln_engine_num_inputs");
}
kiln_status_t kiln_engine_num_outputs(const kiln_engine_t *engine, size_t *out) {
  return count(engine, out, false, "kiln_engine_num_outputs");
}

static kiln_status_t nameAt(const kiln_engine_t *engine, size_t index, const char **out, bool inputs, const char *fn) {
  if (!engine)
    return nullArgument(fn, "engine");
  if (!out)
    return nullArgument(fn, "out");
  const auto &list = inputs ? engine->engine->inputs() : engine->engine->outputs();
  if (index >= list.size())
    return fail(KILN_STATUS_INVALID_ARGUMENT, std::string(fn) + ": index " + std::to_string(index) +
                                                  " is out of range; the engine has " + std::to_string(list.size()) +
                                                  (inputs ? " inputs" : " outputs"));
  *out = list[index].name.c_str();
  return KILN_STATUS_OK;
}

kiln_status_t kiln_engine_input_name(const kiln_engine_t *engine, size_t index, const char **out) {
  return nameAt(engine, index, out, true, "kiln_engine_input_name");
}
kiln_status_t kiln_engine_output_name(const kiln_engine_t *engine, size_t index, const char **out) {
  return nameAt(engine, index, out, false, "kiln_engine_output_name");
}

static kiln_status_t bytesOf(const kiln_engine_t *engine, const char *name, size_t *out, bool inputs, const char *fn) {
  if (!engine)
    return nullArgument(fn, "engine");
  if (!name)
    return nullArgument(fn, "name");
  if (!out)
    return nullArgument(fn, "out");
  const kiln::TensorDesc *t = findTensor(inputs ? engine->engine->inputs() : engine->engine->outputs(), name);
  if (!t)
    return fail(KILN_STATUS_NOT_FOUND, std::string(fn) + ": the model has no " + (inputs ? "input" : "output") + " '" +
                                           name + "'");
  *out = static_cast<size_t>(t->bytes);
  return KILN_STATUS_OK;
}

kiln_status_t kiln_engine_input_bytes(const kiln_engine_t *engine, const char *name, size_t *out) {
  return bytesOf(engine, name, out, true, "kiln_engine_input_bytes");
}
kiln_status_t kiln_engine_output_bytes(const kiln_engine_t *engine, const char *name, size_t *out) {
  return bytesOf(engine, name, out, false, "kiln_engine_output_bytes");
}

kiln_status_t kiln_context_create(const kiln_engine_t *engine, int use_cuda_graph, kiln_context_t **out) {
  static const char *fn = "kiln_context_create";
  if (!out)
    return nullArgument(fn, "out");
  *out = nullptr;
  if (!engine)
    return nullArgument(fn, "engine");
  return guarded(fn, [&] {
    kiln::ContextOptions options;
    options.useCudaGraph = use_cuda_graph != 0;
    auto context = engine->engine->createContext(options);
    if (!context.isOk())
      return report(context.status(), fn);
    *out = new kiln_context{std::move(context).value()};
    return KILN_STATUS_OK;
  });
}

void kiln_context_destroy(kiln_context_t *context) { delete context; }

kiln_status_t kiln_context_set_input(kiln_context_t *context, const char *name, const void *host, size_t bytes) {
  static const char *fn = "kiln_context_set_input";
  if (!context)
    return nullArgument(fn, "context");
  if (!name)
    return nullArgument(fn, "name");
  if (!host)
    return nullArgument(fn, "host");
  return guarded(fn, [&] { return report(context->context->setInput(name, host, bytes), fn); });
}

kiln_status_t kiln_context_get_output(kiln_context_t *context, const char *name, void *host, size_t bytes) {
  static const char *fn = "kiln_context_get_output";
  if (!context)
    return nullArgument(fn, "context");
  if (!name)
    return nullArgument(fn, "name");
  if (!host)
    return nullArgument(fn, "host");
  return guarded(fn, [&] { return report(context->context->getOutput(name, host, bytes), fn); });
}

kiln_status_t kiln_context_run(kiln_context_t *context) {
  static const char *fn = "kiln_context_run";
  if (!context)
    return nullArgument(fn, "context");
  return guarded(fn, [&] { return report(context->context->run(), fn); });
}

} // extern "C"
