//===- PlanDump.cpp - a plan's intermediate values, step by step -----------===//

#include "PlanDump.h"

#include "StepAlgorithms.h"
#include "ValueDump.h"

#include "runtime/TensorData.h"
#include "runtime/plan/Plan.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"

#include <map>
#include <vector>

namespace kiln::cli {

namespace {

llvm::Error dumpError(const std::string &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

} // namespace

llvm::Expected<size_t> dumpPlanValues(Session &session, const std::string &planPath, const std::string &dir) {
  auto writer = ValueDumpWriter::create(dir);
  if (!writer)
    return writer.takeError();
  const plan::Plan &plan = session.engine->plan();
  const std::vector<plan::Step> &steps = plan.steps;
  // Each step timed alone as `kiln profile` times it (median of kTimingPasses), so kiln compare
  // can set the time of the step that completed a value beside its error.
  constexpr int kTimingPasses = 5;
  std::vector<std::vector<double>> samples(steps.size());
  for (int p = 0; p < kTimingPasses; ++p) {
    auto ms = session.context->profileSteps();
    if (!ms.isOk())
      return dumpError(ms.status().message());
    for (size_t i = 0; i < steps.size() && i < ms.value().size(); ++i)
      samples[i].push_back(ms.value()[i]);
  }
  std::vector<std::string> algorithms = session.engine->stepAlgorithms();
  std::vector<StepTiming> timings(steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    timings[i].index = static_cast<int64_t>(i);
    timings[i].runner = std::string(plan::stepRunner(steps[i]));
    timings[i].algorithm = i < algorithms.size() ? algorithmLabel(algorithms[i]) : "";
    timings[i].ms = percentile(samples[i], 0.5);
  }
  Status status = session.context->runStepsObserved(
      [&](size_t i, std::vector<ExecutionContext::StepValue> values) -> Status {
        for (ExecutionContext::StepValue &value : values) {
          llvm::Error err = writer->add(value.name, runtime::npyFromBytes(value.bytes, value.dtype, value.shape),
                                        std::string(plan::dtypeName(value.dtype)), steps[i].op, steps[i].nodes, {},
                                        &timings[i]);
          if (err)
            return Status(runtime::StatusCode::kInvalidArgument, llvm::toString(std::move(err)));
        }
        return Status::ok();
      });
  if (!status.isOk())
    return dumpError(status.message());
  const plan::Metadata &m = plan.metadata;
  auto version = [](uint32_t v) { return std::to_string(v); };
  std::map<std::string, std::string> metadata{{"compiler", m.compilerVersion},
                                              {"precision", m.precision},
                                              {"model", m.model},
                                              {"compute_capability", version(m.computeCapability)},
                                              {"cuda", version(m.cudaVersion)},
                                              {"cudnn", version(m.cudnnVersion)},
                                              {"cublaslt", version(m.cublasLtVersion)},
                                              {"arena_bytes", std::to_string(m.arenaBytes)},
                                              {"weights_bytes", std::to_string(session.engine->weightsBytes())},
                                              {"steps", std::to_string(steps.size())}};
  if (!m.precisionOverrides.empty())
    metadata["precision_overrides"] = llvm::join(m.precisionOverrides, ",");
  if (!m.precisionChoice.empty())
    metadata["precision_choice"] = m.precisionChoice;
  metadata["plan"] = llvm::sys::path::filename(planPath).str();
  return writer->finish("gpu", m.model, m.precision, metadata, timings);
}


} // namespace kiln::cli
