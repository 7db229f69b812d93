//===- KernelLoader.cpp - plan kernel images into loaded kernels -----------===//
//
// cudaLibraryLoadData gives context-independent kernels through the runtime API (no -lcuda).
// A cubin runs on its own architecture (and later minors of the same major); on any other
// device the PTX is JIT-compiled by the driver, which works for a newer architecture only.
//
//===----------------------------------------------------------------------===//

#include "runtime/engine/EngineState.h"
#include "runtime/engine/StepExecutor.h"

namespace kiln::runtime {

Status loadKernels(Engine::State &engine, uint32_t deviceCC) {
  const plan::Plan &plan = engine.plan;
  engine.libraries.clear();
  for (size_t i = 0; i < plan.images.size(); ++i) {
    const plan::KernelImage &image = plan.images[i];
    std::string what = "kernel image " + std::to_string(i) + " '" + image.name + "'";
    const void *code = nullptr;
    // Exact cubin first; then PTX (JIT) for a newer device; then a cubin of the same major
    // architecture, which CUDA's binary compatibility runs on later minor versions.
    bool sameMajorOlder = image.smVersion / 10 == deviceCC / 10 && image.smVersion <= deviceCC;
    if (image.smVersion == deviceCC && !image.cubin.empty()) {
      code = image.cubin.data();
    } else if (image.smVersion <= deviceCC && !image.ptx.empty()) {
      code = image.ptx.c_str(); // NUL-terminated, as the loader wants PTX
    } else if (sameMajorOlder && !image.cubin.empty()) {
      code = image.cubin.data();
    } else {
      return Status(StatusCode::kIncompatible,
                    what + " targets sm_" + std::to_string(image.smVersion) + (image.ptx.empty() ? " without PTX" : "") +
                        " and cannot run on this sm_" + std::to_string(deviceCC) +
                        " device; recompile the model with --sm " + std::to_string(deviceCC));
    }
    cudaLibrary_t library = nullptr;
    Status status = cudaStatus(cudaLibraryLoadData(&library, code, nullptr, nullptr, 0, nullptr, nullptr, 0),
                               "loading " + what + (code == image.cubin.data() ? " (cubin)" : " (PTX, JIT)"));
    if (!status.isOk()) {
      if (code == image.cubin.data())
        return status;
      // JIT failures mean the PTX is too new for this driver (or broken): rebuilding fixes it.
      return Status(StatusCode::kIncompatible, status.message() + "; recompile the model for sm_" +
                                                   std::to_string(deviceCC) + " or upgrade the driver");
    }
    engine.libraries.emplace_back(library);
  }

  engine.kernels.assign(plan.steps.size(), nullptr);
  int device = engine.device;
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const auto *k = std::get_if<plan::KernelStep>(&plan.steps[s].params);
    if (!k)
      continue;
    std::string label = stepLabel(plan.steps[s], s);
    if (k->image >= engine.libraries.size())
      return Status(StatusCode::kInvalidPlan, label + ": names kernel image " + std::to_string(k->image) +
                                                  " but the plan has " + std::to_string(engine.libraries.size()));
    cudaKernel_t kernel = nullptr;
    KILN_RETURN_IF_ERROR(cudaStatus(cudaLibraryGetKernel(&kernel, engine.libraries[k->image].get(), k->function.c_str()),
                                    label + ": finding kernel '" + k->function + "' in image '" +
                                        plan.images[k->image].name + "'"));
    // More than 48 KiB of dynamic shared memory has to be opted into per kernel.
    if (k->sharedBytes > 48 * 1024)
      KILN_RETURN_IF_ERROR(cudaStatus(cudaKernelSetAttributeForDevice(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                                      static_cast<int>(k->sharedBytes), device),
                                      label + ": allowing " + std::to_string(k->sharedBytes) +
                                          " bytes of dynamic shared memory for '" + k->function + "'"));
    engine.kernels[s] = kernel;
  }
  return Status::ok();
}

} // namespace kiln::runtime
