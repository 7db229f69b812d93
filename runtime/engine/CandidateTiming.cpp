//===- CandidateTiming.cpp - timing one tuning candidate -------------------===//

#include "runtime/engine/CandidateTiming.h"

#include "runtime/engine/CudaCheck.h"

#include <algorithm>
#include <vector>

namespace kiln::runtime {

StatusOr<CandidateTimer> CandidateTimer::create(const std::string &label) {
  auto start = createEvent(label + " tuning");
  if (!start.isOk())
    return start.status();
  auto stop = createEvent(label + " tuning");
  if (!stop.isOk())
    return stop.status();
  return CandidateTimer(std::move(start.value()), std::move(stop.value()));
}

StatusOr<float> CandidateTimer::median(const DeviceResources &res, const std::function<Status()> &run,
                                       const std::string &what) {
  constexpr int kWarmup = 2, kRepeats = 5;
  cudaEvent_t start = start_.get(), stop = stop_.get();
  for (int w = 0; w < kWarmup; ++w)
    KILN_RETURN_IF_ERROR(run());
  std::vector<float> times;
  for (int rep = 0; rep < kRepeats; ++rep) {
    KILN_RETURN_IF_ERROR(cudaStatus(cudaEventRecord(start, res.stream), what + ": cudaEventRecord"));
    KILN_RETURN_IF_ERROR(run());
    KILN_RETURN_IF_ERROR(cudaStatus(cudaEventRecord(stop, res.stream), what + ": cudaEventRecord"));
    KILN_RETURN_IF_ERROR(cudaStatus(cudaEventSynchronize(stop), what));
    float ms = 0;
    KILN_RETURN_IF_ERROR(cudaStatus(cudaEventElapsedTime(&ms, start, stop), what + ": cudaEventElapsedTime"));
    times.push_back(ms);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

} // namespace kiln::runtime
