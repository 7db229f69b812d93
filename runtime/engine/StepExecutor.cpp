//===- StepExecutor.cpp - the executors of the five step kinds -------------===//

#include "runtime/engine/StepExecutor.h"

#include "runtime/engine/AttentionProblem.h"
#include "runtime/engine/ConvGraph.h"
#include "runtime/engine/ConvProblem.h"
#include "runtime/engine/CudaCheck.h"
#include "runtime/engine/GemmProblem.h"

#include <vector>

namespace kiln::runtime {

std::string stepLabel(const plan::Step &step, size_t index) {
  return "step " + std::to_string(index) + " '" + step.name + "' (" + step.op + ")";
}

std::string operandTypeName(const plan::Plan &plan, std::optional<uint32_t> buffer) {
  return buffer ? std::string(plan::dtypeName(plan.buffers[*buffer].dtype)) : std::string("-");
}

void *bufferAddress(const plan::Plan &plan, uint32_t buffer, const DeviceResources &res) {
  const plan::Buffer &b = plan.buffers[buffer];
  const uint8_t *base = b.space == plan::MemorySpace::Weights ? res.weights : res.arena;
  // Weights are read-only by contract; cuDNN/cuBLASLt/kernels take them through void* anyway.
  return const_cast<uint8_t *>(base) + b.offset;
}

namespace {

/// A generated kernel: every parameter is a device pointer, in the order of step.args.
class KernelExecutor final : public StepExecutor {
public:
  KernelExecutor(const plan::KernelStep &step, cudaKernel_t kernel, std::string label, std::vector<void *> pointers)
      : step_(step), kernel_(kernel), label_(std::move(label)), pointers_(std::move(pointers)) {
    for (void *&p : pointers_)
      params_.push_back(&p);
  }
  Status enqueue(const DeviceResources &res) override {
    dim3 grid(step_.grid[0], step_.grid[1], step_.grid[2]);
    dim3 block(step_.block[0], step_.block[1], step_.block[2]);
    // cudaKernel_t is accepted by cudaLaunchKernel in place of a function symbol.
    return cudaStatus(cudaLaunchKernel(reinterpret_cast<const void *>(kernel_), grid, block, params_.data(),
                                       step_.sharedBytes, res.stream),
                      label_ + ": launching kernel '" + step_.function + "'");
  }

private:
  plan::KernelStep step_;
  cudaKernel_t kernel_;
  std::string label_;
  std::vector<void *> pointers_;
  std::vector<void *> params_; // &pointers_[i], what cudaLaunchKernel reads
};

class CopyExecutor final : public StepExecutor {
public:
  CopyExecutor(const void *src, void *dst, uint64_t bytes, std::string label)
      : src_(src), dst_(dst), bytes_(bytes), label_(std::move(label)) {}
  Status enqueue(const DeviceResources &res) override {
    return cudaStatus(cudaMemcpyAsync(dst_, src_, bytes_, cudaMemcpyDeviceToDevice, res.stream),
                      label_ + ": cudaMemcpyAsync device to device");
  }

private:
  const void *src_;
  void *dst_;
  uint64_t bytes_;
  std::string label_;
};

class GemmExecutor final : public StepExecutor {
public:
  GemmExecutor(std::unique_ptr<GemmProblem> problem, TunedAlgorithm algo)
      : problem_(std::move(problem)), algo_(algo) {}
  Status enqueue(const DeviceResources &res) override { return problem_->enqueue(res, algo_); }

private:
  std::unique_ptr<GemmProblem> problem_;
  TunedAlgorithm algo_;
};

class ConvExecutor final : public StepExecutor {
public:
  ConvExecutor(std::unique_ptr<ConvProblem> problem, TunedAlgorithm algo)
      : problem_(std::move(problem)), algo_(algo) {}
  Status enqueue(const DeviceResources &res) override { return problem_->enqueue(res, algo_); }

private:
  std::unique_ptr<ConvProblem> problem_;
  TunedAlgorithm algo_;
};

class CudnnGraphExecutor final : public StepExecutor {
public:
  explicit CudnnGraphExecutor(std::unique_ptr<CudnnGraphRunner> runner) : runner_(std::move(runner)) {}
  Status enqueue(const DeviceResources &res) override { return runner_->enqueue(res); }

private:
  std::unique_ptr<CudnnGraphRunner> runner_; // prepared: holds its built graph
};

/// The executor of a step that runs as a cuDNN frontend graph, its graph built on res.cudnn.
StatusOr<std::unique_ptr<StepExecutor>> graphExecutor(StatusOr<std::unique_ptr<CudnnGraphRunner>> runner,
                                                      const TunedAlgorithm &algorithm, const DeviceResources &res) {
  if (!runner.isOk())
    return runner.status();
  KILN_RETURN_IF_ERROR(runner.value()->prepare(res, algorithm));
  return std::unique_ptr<StepExecutor>(new CudnnGraphExecutor(std::move(runner).value()));
}

Status checkBuffer(const plan::Plan &plan, uint32_t idx, const std::string &label, const char *role) {
  if (idx >= plan.buffers.size())
    return Status(StatusCode::kInvalidPlan, label + ": " + role + " names buffer " + std::to_string(idx) +
                                                " but the plan has " + std::to_string(plan.buffers.size()));
  return Status::ok();
}

} // namespace

StatusOr<std::unique_ptr<StepExecutor>> makeStepExecutor(const plan::Plan &plan, size_t index, cudaKernel_t kernel,
                                                         const std::optional<TunedAlgorithm> &algorithm,
                                                         const DeviceResources &res) {
  const plan::Step &step = plan.steps[index];
  std::string label = stepLabel(step, index);
  if (const auto *k = std::get_if<plan::KernelStep>(&step.params)) {
    if (!kernel)
      return Status(StatusCode::kInternal, label + ": kernel '" + k->function + "' was not loaded");
    std::vector<void *> pointers;
    for (uint32_t arg : k->args) {
      KILN_RETURN_IF_ERROR(checkBuffer(plan, arg, label, "a kernel argument"));
      pointers.push_back(bufferAddress(plan, arg, res));
    }
    return std::unique_ptr<StepExecutor>(new KernelExecutor(*k, kernel, label, std::move(pointers)));
  }
  if (const auto *c = std::get_if<plan::CopyStep>(&step.params)) {
    KILN_RETURN_IF_ERROR(checkBuffer(plan, c->src, label, "the copy source"));
    KILN_RETURN_IF_ERROR(checkBuffer(plan, c->dst, label, "the copy destination"));
    const plan::Buffer &src = plan.buffers[c->src], &dst = plan.buffers[c->dst];
    if (dst.space != plan::MemorySpace::Arena)
      return Status(StatusCode::kInvalidPlan, label + ": copy destination '" + dst.name + "' is in the read-only weights");
    if (c->bytes > src.bytes || c->bytes > dst.bytes)
      return Status(StatusCode::kInvalidPlan, label + ": copies " + std::to_string(c->bytes) + " bytes from '" +
                                                  src.name + "' (" + std::to_string(src.bytes) + ") to '" + dst.name +
                                                  "' (" + std::to_string(dst.bytes) + ")");
    return std::unique_ptr<StepExecutor>(
        new CopyExecutor(bufferAddress(plan, c->src, res), bufferAddress(plan, c->dst, res), c->bytes, label));
  }
  if (!algorithm)
    return Status(StatusCode::kInternal, label + ": no tuned algorithm was recorded at engine load");
  if (const auto *g = std::get_if<plan::GemmStep>(&step.params)) {
    auto problem = GemmProblem::create(plan, *g, label);
    if (!problem.isOk())
      return problem.status();
    return std::unique_ptr<StepExecutor>(new GemmExecutor(std::move(problem).value(), *algorithm));
  }
  if (const auto *a = std::get_if<plan::AttentionStep>(&step.params))
    return graphExecutor(AttentionProblem::create(plan, *a, label), *algorithm, res);
  const auto &conv = std::get<plan::ConvStep>(step.params);
  if (conv.channelsLast)
    return graphExecutor(ConvGraph::create(plan, conv, label), *algorithm, res);
  auto problem = ConvProblem::create(plan, conv, label);
  if (!problem.isOk())
    return problem.status();
  return std::unique_ptr<StepExecutor>(new ConvExecutor(std::move(problem).value(), *algorithm));
}

} // namespace kiln::runtime
