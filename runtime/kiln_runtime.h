/*===- kiln_runtime.h - the Kiln GPU runtime: C API ---------------------===*
 *
 * A C wrapper over runtime/Runtime.h for embedding from C or other languages:
 *
 *   kiln_runtime_t *rt; kiln_engine_t *engine; kiln_context_t *ctx;
 *   if (kiln_runtime_create(0, NULL, &rt) != KILN_STATUS_OK) puts(kiln_last_error());
 *   kiln_engine_load(rt, "model.kiln", &engine);
 *   kiln_context_create(engine, 1, &ctx);
 *   kiln_context_set_input(ctx, "x", x, x_bytes);
 *   kiln_context_run(ctx);
 *   kiln_context_get_output(ctx, "y", y, y_bytes);
 *   kiln_context_destroy(ctx); kiln_engine_destroy(engine); kiln_runtime_destroy(rt);
 *
 * Every function returns a kiln_status_t; on failure the message (naming the tensor, step or
 * argument) is available from kiln_last_error() on the same thread until the next failing
 * call there. Destroy functions accept NULL. Threading follows Runtime.h: engines may be
 * shared between threads, a context is used by one thread at a time.
 *
 *===----------------------------------------------------------------------===*/
#ifndef KILN_RUNTIME_KILN_RUNTIME_H
#define KILN_RUNTIME_KILN_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Same values and meanings as kiln::runtime::StatusCode. */
typedef enum kiln_status_t {
  KILN_STATUS_OK = 0,
  KILN_STATUS_INVALID_ARGUMENT = 1,
  KILN_STATUS_INVALID_PLAN = 2,
  KILN_STATUS_INCOMPATIBLE = 3,
  KILN_STATUS_NOT_FOUND = 4,
  KILN_STATUS_RESOURCE_EXHAUSTED = 5,
  KILN_STATUS_DEVICE_ERROR = 6,
  KILN_STATUS_INTERNAL = 7,
} kiln_status_t;

typedef struct kiln_runtime kiln_runtime_t;
typedef struct kiln_engine kiln_engine_t;
typedef struct kiln_context kiln_context_t;

/* The message of the last failing call on this thread ("" when none). Valid until the next
 * failing kiln_* call on this thread. */
const char *kiln_last_error(void);
/* "OK", "INVALID_ARGUMENT", ... */
const char *kiln_status_name(kiln_status_t status);

/* timing_cache_path: NULL or "" for none (see RuntimeOptions). */
kiln_status_t kiln_runtime_create(int device_ordinal, const char *timing_cache_path, kiln_runtime_t **out);
void kiln_runtime_destroy(kiln_runtime_t *runtime);

kiln_status_t kiln_engine_load(kiln_runtime_t *runtime, const char *plan_path, kiln_engine_t **out);
void kiln_engine_destroy(kiln_engine_t *engine);
kiln_status_t kiln_engine_num_inputs(const kiln_engine_t *engine, size_t *out);
kiln_status_t kiln_engine_num_outputs(const kiln_engine_t *engine, size_t *out);
/* The name stays valid as long as the engine. */
kiln_status_t kiln_engine_input_name(const kiln_engine_t *engine, size_t index, const char **out);
kiln_status_t kiln_engine_output_name(const kiln_engine_t *engine, size_t index, const char **out);
/* Size in bytes of an input/output tensor, by name. */
kiln_status_t kiln_engine_input_bytes(const kiln_engine_t *engine, const char *name, size_t *out);
kiln_status_t kiln_engine_output_bytes(const kiln_engine_t *engine, const char *name, size_t *out);

/* use_cuda_graph: nonzero to capture the steps into one CUDA graph (the default path). A
 * context keeps its engine's device state alive; it may be destroyed after the engine. */
kiln_status_t kiln_context_create(const kiln_engine_t *engine, int use_cuda_graph, kiln_context_t **out);
void kiln_context_destroy(kiln_context_t *context);
kiln_status_t kiln_context_set_input(kiln_context_t *context, const char *name, const void *host, size_t bytes);
kiln_status_t kiln_context_get_output(kiln_context_t *context, const char *name, void *host, size_t bytes);
/* Copies in, runs, copies out and waits. */
kiln_status_t kiln_context_run(kiln_context_t *context);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_RUNTIME_KILN_RUNTIME_H */
