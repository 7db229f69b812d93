//===- CandidateTiming.h - timing one tuning candidate ---------*- C++ -*-===//
//
// cuBLASLt algorithms and cuDNN frontend engines are chosen by timing the candidates the
// heuristics offer on the device (the first in heuristic order is often not the fastest). Both
// tuners time a candidate the same way, here.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_ENGINE_CANDIDATETIMING_H
#define KILN_RUNTIME_ENGINE_CANDIDATETIMING_H

#include "runtime/engine/StepExecutor.h"

#include <functional>
#include <string>

namespace kiln::runtime {

/// Runs `run` on res.stream twice untimed, then five times between the events `start` and
/// `stop`; the median time in ms, or the first failure (of `run` or of CUDA). `what` names the
/// candidate in messages, e.g. "gemm 'fc1': timing a matmul candidate".
StatusOr<float> medianCandidateTime(const DeviceResources &res, cudaEvent_t start, cudaEvent_t stop,
                                    const std::function<Status()> &run, const std::string &what);

} // namespace kiln::runtime

#endif // KILN_RUNTIME_ENGINE_CANDIDATETIMING_H
