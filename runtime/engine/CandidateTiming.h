//===- CandidateTiming.h - timing one tuning candidate ---------*- C++ -*-===//
//
// cuBLASLt algorithms and cuDNN frontend engines are chosen by timing the candidates the
// heuristics offer on the device (the first in heuristic order is often not the fastest). Both
// tuners time a candidate the same way, here.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_ENGINE_CANDIDATETIMING_H
#define KILN_RUNTIME_ENGINE_CANDIDATETIMING_H

#include "runtime/engine/CudaHandles.h"
#include "runtime/engine/StepExecutor.h"

#include <functional>
#include <string>

namespace kiln::runtime {

/// Times the candidates of one tuning problem on res.stream with one pair of events.
class CandidateTimer {
public:
  /// The events; `label` names the step in messages.
  static StatusOr<CandidateTimer> create(const std::string &label);

  /// Runs `run` twice untimed, then five times between the events; the median time in ms, or
  /// the first failure (of `run` or of CUDA). `what` names the candidate in messages, e.g.
  /// "gemm 'fc1': timing a matmul candidate".
  StatusOr<float> median(const DeviceResources &res, const std::function<Status()> &run, const std::string &what);

private:
  CandidateTimer(Event start, Event stop) : start_(std::move(start)), stop_(std::move(stop)) {}
  Event start_, stop_;
};

} // namespace kiln::runtime

#endif // KILN_RUNTIME_ENGINE_CANDIDATETIMING_H
