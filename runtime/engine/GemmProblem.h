//===- GemmProblem.h - a plan GemmStep as a cuBLASLt matmul ----*- C++ -*-===//
//
// cuBLASLt is column-major; the plan's matrices are row-major. A row-major m x n matrix is
// the same bytes as a column-major n x m matrix (its transpose), so the step
//   D = op(A) x op(B)        (row-major)
// is computed as
//   D^T = op(B)^T x op(A)^T  (column-major)
// i.e. cuBLASLt's "A" is the plan's B and its "B" is the plan's A, with m and n swapped. The
// bias (n elements, one per row-major column) is then one per column-major row, which is what
// CUBLASLT_EPILOGUE_BIAS broadcasts. Batch strides map one to one; 0 broadcasts a matrix.
//
// The same object serves the tuner (heuristic candidates timed on the device) and the
// executor of each context (the chosen algorithm, re-checked with cublasLtMatmulAlgoCheck).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_ENGINE_GEMMPROBLEM_H
#define KILN_RUNTIME_ENGINE_GEMMPROBLEM_H

#include "runtime/engine/CudaHandles.h"
#include "runtime/engine/StepExecutor.h"

namespace kiln::runtime {

using MatmulDesc = Owned<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy>;
using MatrixLayout = Owned<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy>;
using MatmulPreference = Owned<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy>;

class GemmProblem {
public:
  /// Checks the step (operand types, sizes, C present when beta != 0) and builds the
  /// descriptors. Each operand's element type is its buffer's.
  /// `label` names the step in messages.
  static StatusOr<std::unique_ptr<GemmProblem>> create(const plan::Plan &plan, const plan::GemmStep &step,
                                                       std::string label);

  /// Everything the choice of algorithm depends on besides the device: shapes, transposes,
  /// strides, types, epilogue, pointer alignments and the workspace limit.
  std::string key(uint64_t workspaceLimit) const;

  /// Times up to `candidates` heuristic algorithms that fit `workspaceLimit` on res (whose
  /// workspace must be at least that big) and returns the fastest; ties go to the earlier
  /// heuristic rank, so equal timings give the same choice every time.
  StatusOr<TunedAlgorithm> tune(const DeviceResources &res, uint64_t workspaceLimit, int candidates = 8);
  /// Whether a cached algorithm is valid for this problem on this device; returns its
  /// workspace size.
  StatusOr<uint64_t> check(const DeviceResources &res, const TunedAlgorithm &algo);
  /// One matmul with `algo` on res.stream.
  Status enqueue(const DeviceResources &res, const TunedAlgorithm &algo);

private:
  GemmProblem() = default;
  Status setPointers(const DeviceResources &res);
  Status matmul(const DeviceResources &res, const cublasLtMatmulAlgo_t &algo, uint64_t workspaceBytes);
  /// An FP8 matmul writing f32 (an imported QDQ layer): run without FAST_ACCUM.
  bool fullFp8Accumulation() const { return typeAB_ == CUDA_R_8F_E4M3 && typeCD_ == CUDA_R_32F; }

  cublasComputeType_t compute_ = CUBLAS_COMPUTE_32F;
  cudaDataType_t typeAB_ = CUDA_R_32F, typeCD_ = CUDA_R_32F; // plan A and B; C, D and bias
  cudaDataType_t typeC_ = CUDA_R_32F; // C and bias: D's type, or 16-bit beside an FP8 D
  const plan::Plan *plan_ = nullptr;
  plan::GemmStep step_;
  std::string label_;
  MatmulDesc desc_;
  MatrixLayout layoutA_, layoutB_, layoutC_, layoutD_; // cuBLASLt's A (plan B), B (plan A), C, D
  uint32_t alignA_ = 256, alignB_ = 256, alignC_ = 256, alignD_ = 256; // bytes, cuBLASLt's A/B/C/D
  const void *a_ = nullptr, *b_ = nullptr, *c_ = nullptr;
  void *d_ = nullptr;
  const void *bias_ = nullptr;
};

} // namespace kiln::runtime

#endif // KILN_RUNTIME_ENGINE_GEMMPROBLEM_H
