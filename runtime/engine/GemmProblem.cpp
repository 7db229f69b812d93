//===- GemmProblem.cpp - a plan GemmStep as a cuBLASLt matmul --------------===//

#include "runtime/engine/GemmProblem.h"

#include "runtime/engine/CandidateTiming.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace kiln::runtime {
namespace {

static_assert(sizeof(cublasLtMatmulAlgo_t) == sizeof(TunedAlgorithm::gemmAlgo),
              "the timing cache stores cublasLtMatmulAlgo_t byte for byte");

/// Largest power of two (<= kBufferAlignment) dividing every value; the device bases are
/// cudaMalloc'd, hence kBufferAlignment-aligned, so this is the alignment of every pointer
/// the matmul touches.
uint32_t alignmentOf(std::initializer_list<uint64_t> values) {
  uint64_t align = plan::kBufferAlignment;
  for (uint64_t v : values)
    while (align > 1 && v % align != 0)
      align /= 2;
  return static_cast<uint32_t>(align);
}

const char *epilogueName(cublasLtEpilogue_t e) {
  switch (e) {
  case CUBLASLT_EPILOGUE_DEFAULT: return "none";
  case CUBLASLT_EPILOGUE_RELU: return "relu";
  case CUBLASLT_EPILOGUE_GELU: return "gelu";
  case CUBLASLT_EPILOGUE_BIAS: return "bias";
  case CUBLASLT_EPILOGUE_RELU_BIAS: return "bias+relu";
  case CUBLASLT_EPILOGUE_GELU_BIAS: return "bias+gelu";
  default: return "?";
  }
}

cublasLtEpilogue_t epilogueOf(const plan::GemmStep &s) {
  bool bias = s.bias.has_value();
  switch (s.activation) {
  case plan::Activation::None: return bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
  case plan::Activation::Relu: return bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
  case plan::Activation::Gelu: return bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
  case plan::Activation::Clip:
  case plan::Activation::Sigmoid:
  case plan::Activation::HardSigmoid:
  case plan::Activation::HardSwish: break; // convolution epilogues only: validatePlan refuses them on a gemm
  }
  return CUBLASLT_EPILOGUE_DEFAULT;
}

/// cuBLASLt's name for a plan element type; nullopt for the types no cuBLASLt step takes.
std::optional<cudaDataType_t> cudaTypeOf(plan::DType type) {
  switch (type) {
  case plan::DType::F32: return CUDA_R_32F;
  case plan::DType::F16: return CUDA_R_16F;
  case plan::DType::BF16: return CUDA_R_16BF;
  case plan::DType::F8E4M3FN: return CUDA_R_8F_E4M3;
  default: return std::nullopt;
  }
}

/// "A=bf16 B=bf16 C=- D=f32 bias=f32": every operand's type, read from its buffer. Part of the
/// timing-cache key: the best algorithm depends on each of them.
std::string operandTypes(const plan::Plan &plan, const plan::GemmStep &s) {
  return "A=" + operandTypeName(plan, s.a) + " B=" + operandTypeName(plan, s.b) + " C=" + operandTypeName(plan, s.c) +
         " D=" + operandTypeName(plan, s.d) + " bias=" + operandTypeName(plan, s.bias);
}

template <typename T>
Status setDesc(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, const T &value, const std::string &what) {
  return cublasStatus(cublasLtMatmulDescSetAttribute(desc, attr, &value, sizeof(value)), what);
}

/// A column-major rows x cols matrix, ld = rows, `batch` of them `stride` elements apart.
StatusOr<MatrixLayout> makeLayout(cudaDataType_t type, int64_t rows, int64_t cols, int64_t batch, int64_t stride,
                                  const std::string &what) {
  cublasLtMatrixLayout_t layout = nullptr;
  Status status = cublasStatus(cublasLtMatrixLayoutCreate(&layout, type, rows, cols, rows), what);
  if (!status.isOk())
    return status;
  MatrixLayout owned(layout);
  if (batch > 1) {
    int32_t count = static_cast<int32_t>(batch);
    KILN_RETURN_IF_ERROR(cublasStatus(
        cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)), what));
    KILN_RETURN_IF_ERROR(cublasStatus(
        cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)),
        what));
  }
  return owned;
}

} // namespace

StatusOr<std::unique_ptr<GemmProblem>> GemmProblem::create(const plan::Plan &plan, const plan::GemmStep &s,
                                                           std::string label) {
  auto bad = [&](const std::string &msg) { return Status(StatusCode::kInvalidPlan, label + ": " + msg); };
  if (s.batch < 1 || s.m < 1 || s.n < 1 || s.k < 1 || s.batch > INT32_MAX)
    return bad("gemm sizes batch=" + std::to_string(s.batch) + " m=" + std::to_string(s.m) + " n=" +
               std::to_string(s.n) + " k=" + std::to_string(s.k) + " must be positive");
  if (s.strideA < 0 || s.strideB < 0 || s.strideC < 0 || s.strideD < 0)
    return bad("gemm batch strides must not be negative");
  if (s.batch > 1 && s.strideD == 0)
    return bad("gemm with batch " + std::to_string(s.batch) + " writes every batch to one D matrix (strideD = 0)");
  if (s.beta != 0.0f && !s.c)
    return bad("gemm has beta = " + std::to_string(s.beta) + " but no C buffer");
  std::vector<uint32_t> used = {s.a, s.b, s.d};
  if (s.c)
    used.push_back(*s.c);
  if (s.bias)
    used.push_back(*s.bias);
  if (s.scaleD)
    used.push_back(*s.scaleD);
  for (uint32_t idx : used)
    if (idx >= plan.buffers.size())
      return bad("gemm names buffer " + std::to_string(idx) + " but the plan has " + std::to_string(plan.buffers.size()));
  if (plan.buffers[s.d].space != plan::MemorySpace::Arena)
    return bad("gemm output '" + plan.buffers[s.d].name + "' is in the read-only weights");
  // validatePlan's type rules, re-checked here because the types decide how many bytes cuBLASLt
  // touches: A and B share one type, D has A's or f32, C and bias have D's.
  plan::DType ab = plan.buffers[s.a].dtype, cd = plan.buffers[s.d].dtype;
  bool fp8 = ab == plan::DType::F8E4M3FN, fp8Out = cd == plan::DType::F8E4M3FN;
  // C and bias: D's type, or (FP8 D, scaled by scaleD) a 16-bit type of their own.
  plan::DType cb = fp8Out ? (s.c ? plan.buffers[*s.c].dtype : s.bias ? plan.buffers[*s.bias].dtype : plan::DType::BF16)
                          : cd;
  std::optional<cudaDataType_t> abType = cudaTypeOf(ab), cdType = cudaTypeOf(cd), cType = cudaTypeOf(cb);
  auto hasType = [&](const std::optional<uint32_t> &idx, plan::DType type) {
    return !idx || plan.buffers[*idx].dtype == type;
  };
  bool fp8OutFits = fp8 && s.scaleD && plan.buffers[*s.scaleD].dtype == plan::DType::F32 &&
                    plan.buffers[*s.scaleD].bytes >= 4 && (cb == plan::DType::BF16 || cb == plan::DType::F16);
  if (!abType || !cdType || !cType || !hasType(s.b, ab) || (!fp8 && cd != ab && cd != plan::DType::F32) ||
      (fp8Out && !fp8OutFits) || (s.scaleD && !fp8Out) || !hasType(s.c, cb) || !hasType(s.bias, cb))
    return bad("gemm operand types " + operandTypes(plan, s) +
               " are not supported by the runtime (A and B one of f32, f16, bf16, f8e4m3fn; D A's type or f32, or "
               "for FP8 f32, f16, bf16, or f8e4m3fn with an f32 scaleD and 16-bit C and bias; C and bias D's type "
               "otherwise); recompile with another precision");
  // An FP8 kernel writing f32 reads its bias as bf16 (cublasLt.h, BIAS_DATA_TYPE): not a plan's
  // f32 bias.
  if (fp8 && cd == plan::DType::F32 && s.bias)
    return bad("an FP8 gemm writing f32 takes no bias (cuBLASLt reads it as bf16); recompile");
  // cuBLASLt runs FP8 only as TN (its A transposed: the plan's B stored [n, k]) with 16-byte rows.
  if (fp8 && (s.transA || !s.transB || s.k % 16 != 0 || s.n % 16 != 0))
    return bad("an FP8 gemm needs A [m, k] and B stored [n, k] (transA 0, transB 1) with k and n multiples of 16; "
               "recompile");
  // The buffers must hold what cuBLASLt will touch (validatePlan checks this as well; the
  // runtime re-checks what protects device memory).
  size_t abElem = plan::dtypeBytes(ab), cdElem = plan::dtypeBytes(cd), cbElem = plan::dtypeBytes(cb);
  auto need = [&](int64_t rows, int64_t cols, int64_t stride, size_t elem) {
    return static_cast<uint64_t>(((s.batch - 1) * stride + rows * cols) * static_cast<int64_t>(elem));
  };
  auto checkSize = [&](uint32_t idx, uint64_t bytes, const char *role) -> Status {
    if (plan.buffers[idx].bytes < bytes)
      return bad(std::string("gemm ") + role + " buffer '" + plan.buffers[idx].name + "' has " +
                 std::to_string(plan.buffers[idx].bytes) + " bytes, the matmul needs " + std::to_string(bytes));
    return Status::ok();
  };
  KILN_RETURN_IF_ERROR(checkSize(s.a, need(s.m, s.k, s.strideA, abElem), "A"));
  KILN_RETURN_IF_ERROR(checkSize(s.b, need(s.k, s.n, s.strideB, abElem), "B"));
  KILN_RETURN_IF_ERROR(checkSize(s.d, need(s.m, s.n, s.strideD, cdElem), "D"));
  if (s.c)
    KILN_RETURN_IF_ERROR(checkSize(*s.c, need(s.m, s.n, s.strideC, cbElem), "C"));
  if (s.bias)
    KILN_RETURN_IF_ERROR(checkSize(*s.bias, static_cast<uint64_t>(s.n) * cbElem, "bias"));

  auto problem = std::unique_ptr<GemmProblem>(new GemmProblem());
  problem->plan_ = &plan;
  problem->step_ = s;
  problem->label_ = std::move(label);
  problem->typeAB_ = *abType;
  problem->typeCD_ = *cdType;
  problem->typeC_ = *cType;
  const std::string &what = problem->label_;

  // fp32 accumulation always; TF32 tensor cores only where f32 operands allow them (half
  // operands run on tensor cores under CUBLAS_COMPUTE_32F anyway).
  cublasComputeType_t compute =
      (ab == plan::DType::F32 && s.math == plan::MathMode::TF32) ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  problem->compute_ = compute;
  cublasLtMatmulDesc_t desc = nullptr;
  KILN_RETURN_IF_ERROR(cublasStatus(cublasLtMatmulDescCreate(&desc, compute, CUDA_R_32F), what + ": cublasLtMatmulDescCreate"));
  problem->desc_ = MatmulDesc(desc);
  // cuBLASLt's A is the plan's B: row-major k x n (n x k when transB) is column-major n x k
  // (k x n), which is op(B)^T as is (needs a transpose).
  cublasOperation_t opA = s.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opB = s.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  KILN_RETURN_IF_ERROR(setDesc(desc, CUBLASLT_MATMUL_DESC_TRANSA, opA, what + ": setting TRANSA"));
  KILN_RETURN_IF_ERROR(setDesc(desc, CUBLASLT_MATMUL_DESC_TRANSB, opB, what + ": setting TRANSB"));
  if (fp8) {
    // Hopper's FP8 kernels may keep partial sums in lower precision between promotions to
    // fp32 (the inference setting; the 8-bit inputs dominate the error), except where D is
    // f32: only an imported QDQ layer writes f32 (its exact f32 scales, onnxruntime's f32
    // semantics), and its next E4M3 quantization flips at relative errors near 1e-4 (an E4M3
    // step is up to 32 of the output's; the QDQ MLP came 46 output steps from onnxruntime on
    // the H100 with FAST_ACCUM).
    int8_t fastAccum = problem->fullFp8Accumulation() ? 0 : 1;
    KILN_RETURN_IF_ERROR(setDesc(desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, fastAccum, what + ": setting FAST_ACCUM"));
    if (fp8Out) // the bias is C's 16-bit type, not D's
      KILN_RETURN_IF_ERROR(setDesc(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, static_cast<int32_t>(*cType),
                                   what + ": setting the bias type"));
  }
  cublasLtEpilogue_t epilogue = epilogueOf(s);
  KILN_RETURN_IF_ERROR(setDesc(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue, what + ": setting the epilogue"));

  auto layout = [&](cudaDataType_t type, int64_t rows, int64_t cols, int64_t stride, MatrixLayout &out) -> Status {
    auto l = makeLayout(type, rows, cols, s.batch, stride, what + ": cublasLtMatrixLayoutCreate");
    if (!l.isOk())
      return l.status();
    out = std::move(l).value();
    return Status::ok();
  };
  KILN_RETURN_IF_ERROR(s.transB ? layout(*abType, s.k, s.n, s.strideB, problem->layoutA_)
                                : layout(*abType, s.n, s.k, s.strideB, problem->layoutA_));
  KILN_RETURN_IF_ERROR(s.transA ? layout(*abType, s.m, s.k, s.strideA, problem->layoutB_)
                                : layout(*abType, s.k, s.m, s.strideA, problem->layoutB_));
  KILN_RETURN_IF_ERROR(layout(*cType, s.n, s.m, s.c ? s.strideC : s.strideD, problem->layoutC_));
  KILN_RETURN_IF_ERROR(layout(*cdType, s.n, s.m, s.strideD, problem->layoutD_));

  auto offset = [&](uint32_t idx) { return plan.buffers[idx].offset; };
  auto strideBytes = [&](int64_t stride, size_t elem) {
    return s.batch > 1 ? static_cast<uint64_t>(stride) * elem : 0;
  };
  problem->alignA_ = alignmentOf({offset(s.b), strideBytes(s.strideB, abElem)});
  problem->alignB_ = alignmentOf({offset(s.a), strideBytes(s.strideA, abElem)});
  // Without C, its pointer is D's, or cuBLASLt's A where C's type differs from D's (setPointers).
  problem->alignC_ = s.c                  ? alignmentOf({offset(*s.c), strideBytes(s.strideC, cbElem)})
                     : *cType != *cdType ? problem->alignA_
                                         : alignmentOf({offset(s.d), strideBytes(s.strideD, cdElem)});
  problem->alignD_ = alignmentOf({offset(s.d), strideBytes(s.strideD, cdElem)});
  return problem;
}

std::string GemmProblem::key(uint64_t workspaceLimit) const {
  const plan::GemmStep &s = step_;
  std::string k = "gemm " + operandTypes(*plan_, s) +
                  (compute_ == CUBLAS_COMPUTE_32F_FAST_TF32 ? " compute=tf32" : " compute=f32");
  k += " b=" + std::to_string(s.batch) + " m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) +
       " k=" + std::to_string(s.k);
  k += std::string(" ta=") + (s.transA ? "1" : "0") + " tb=" + (s.transB ? "1" : "0");
  k += " sa=" + std::to_string(s.strideA) + " sb=" + std::to_string(s.strideB) +
       " sc=" + std::to_string(s.c ? s.strideC : s.strideD) + " sd=" + std::to_string(s.strideD);
  k += std::string(" beta=") + (s.beta != 0.0f ? "1" : "0") + " epi=" + epilogueName(epilogueOf(s));
  k += " align=" + std::to_string(alignA_) + "/" + std::to_string(alignB_) + "/" + std::to_string(alignC_) + "/" +
       std::to_string(alignD_);
  k += " wslimit=" + std::to_string(workspaceLimit);
  // Algorithms tuned with FAST_ACCUM (timing caches from before 2026-12-08 hold them for FP8
  // matmuls writing f32) are not reused for the full accumulation.
  if (fullFp8Accumulation())
    k += " accum=full";
  return k;
}

Status GemmProblem::setPointers(const DeviceResources &res) {
  const plan::GemmStep &s = step_;
  a_ = bufferAddress(*plan_, s.b, res); // cuBLASLt's A is the plan's B
  b_ = bufferAddress(*plan_, s.a, res);
  d_ = bufferAddress(*plan_, s.d, res);
  // C is not read when beta == 0, but cuBLASLt refuses C aliasing a D of another type (an
  // FP8 D beside its 16-bit C layout): point it at cuBLASLt's A instead, never written.
  c_ = s.c ? bufferAddress(*plan_, *s.c, res) : typeC_ != typeCD_ ? a_ : d_;
  if (s.bias) {
    bias_ = bufferAddress(*plan_, *s.bias, res);
    KILN_RETURN_IF_ERROR(setDesc(desc_.get(), CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias_, label_ + ": setting the bias pointer"));
  }
  if (s.scaleD) {
    const void *scale = bufferAddress(*plan_, *s.scaleD, res);
    KILN_RETURN_IF_ERROR(setDesc(desc_.get(), CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, scale, label_ + ": setting the D scale"));
  }
  return Status::ok();
}

Status GemmProblem::matmul(const DeviceResources &res, const cublasLtMatmulAlgo_t &algo, uint64_t workspaceBytes) {
  // Host scalars: cuBLASLt reads them while enqueuing, so a captured graph keeps the values.
  float alpha = step_.alpha, beta = step_.beta;
  return cublasStatus(cublasLtMatmul(res.cublasLt, desc_.get(), &alpha, a_, layoutA_.get(), b_, layoutB_.get(), &beta,
                                     c_, layoutC_.get(), d_, layoutD_.get(), &algo, res.workspace, workspaceBytes,
                                     res.stream),
                      label_ + ": cublasLtMatmul");
}

StatusOr<TunedAlgorithm> GemmProblem::tune(const DeviceResources &res, uint64_t workspaceLimit, int candidates) {
  KILN_RETURN_IF_ERROR(setPointers(res));
  cublasLtMatmulPreference_t pref = nullptr;
  KILN_RETURN_IF_ERROR(cublasStatus(cublasLtMatmulPreferenceCreate(&pref), label_ + ": cublasLtMatmulPreferenceCreate"));
  MatmulPreference owned(pref);
  uint64_t limit = std::min<uint64_t>(workspaceLimit, res.workspaceBytes);
  auto setPref = [&](cublasLtMatmulPreferenceAttributes_t attr, auto value) {
    return cublasStatus(cublasLtMatmulPreferenceSetAttribute(pref, attr, &value, sizeof(value)),
                        label_ + ": setting a matmul preference");
  };
  KILN_RETURN_IF_ERROR(setPref(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, static_cast<uint64_t>(limit)));
  KILN_RETURN_IF_ERROR(setPref(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignA_));
  KILN_RETURN_IF_ERROR(setPref(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignB_));
  KILN_RETURN_IF_ERROR(setPref(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, alignC_));
  KILN_RETURN_IF_ERROR(setPref(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, alignD_));

  std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<size_t>(candidates));
  int returned = 0;
  KILN_RETURN_IF_ERROR(cublasStatus(cublasLtMatmulAlgoGetHeuristic(res.cublasLt, desc_.get(), layoutA_.get(),
                                                                   layoutB_.get(), layoutC_.get(), layoutD_.get(), pref,
                                                                   candidates, results.data(), &returned),
                                    label_ + ": cublasLtMatmulAlgoGetHeuristic"));

  auto timerOr = CandidateTimer::create(label_);
  if (!timerOr.isOk())
    return timerOr.status();
  CandidateTimer &timer = timerOr.value();

  int best = -1;
  float bestMs = 0;
  std::string lastError;
  for (int i = 0; i < returned; ++i) {
    const cublasLtMatmulHeuristicResult_t &r = results[static_cast<size_t>(i)];
    if (r.state != CUBLAS_STATUS_SUCCESS || r.workspaceSize > limit)
      continue;
    auto timed = timer.median(
        res, [&] { return matmul(res, r.algo, r.workspaceSize); }, label_ + ": timing a matmul candidate");
    if (!timed.isOk()) {
      // A candidate that cannot run is skipped; a sticky device error surfaces below.
      lastError = timed.status().message();
      KILN_RETURN_IF_ERROR(cudaStatus(cudaStreamSynchronize(res.stream), label_ + ": after a failed matmul candidate"));
      continue;
    }
    float median = timed.value();
    if (best < 0 || median < bestMs) { // strict '<': ties keep the earlier heuristic rank
      best = i;
      bestMs = median;
    }
  }
  if (best < 0)
    return Status(StatusCode::kDeviceError,
                  label_ + ": cuBLASLt offers no algorithm that runs within the workspace limit of " +
                      std::to_string(limit) + " bytes (" + std::to_string(returned) + " candidates" +
                      (lastError.empty() ? "" : "; last error: " + lastError) +
                      "); raise RuntimeOptions::workspaceLimitBytes or check the step's shapes");
  TunedAlgorithm algo;
  algo.kind = TunedAlgorithm::Kind::Gemm;
  std::memcpy(algo.gemmAlgo.data(), &results[static_cast<size_t>(best)].algo, sizeof(cublasLtMatmulAlgo_t));
  algo.workspaceBytes = results[static_cast<size_t>(best)].workspaceSize;
  return algo;
}

StatusOr<uint64_t> GemmProblem::check(const DeviceResources &res, const TunedAlgorithm &tuned) {
  if (tuned.kind != TunedAlgorithm::Kind::Gemm)
    return Status(StatusCode::kInvalidArgument, label_ + ": the cached algorithm is not a matmul algorithm");
  KILN_RETURN_IF_ERROR(setPointers(res));
  cublasLtMatmulAlgo_t algo;
  std::memcpy(&algo, tuned.gemmAlgo.data(), sizeof(algo));
  // Bytes from a file may be anything: make sure the algorithm id is one cuBLASLt offers for
  // these types before handing the struct to it.
  int id = -1;
  size_t written = 0;
  KILN_RETURN_IF_ERROR(cublasStatus(cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof(id), &written),
                                    label_ + ": reading the cached algorithm's id"));
  std::vector<int> ids(256);
  int count = 0;
  KILN_RETURN_IF_ERROR(cublasStatus(cublasLtMatmulAlgoGetIds(res.cublasLt, compute_, CUDA_R_32F, typeAB_, typeAB_, typeC_, typeCD_,
                                                             static_cast<int>(ids.size()), ids.data(), &count),
                                    label_ + ": cublasLtMatmulAlgoGetIds"));
  if (std::find(ids.begin(), ids.begin() + std::max(count, 0), id) == ids.begin() + std::max(count, 0))
    return Status(StatusCode::kInvalidArgument,
                  label_ + ": the cached algorithm id " + std::to_string(id) + " is not a cuBLASLt algorithm for this problem");
  cublasLtMatmulHeuristicResult_t result{};
  KILN_RETURN_IF_ERROR(cublasStatus(cublasLtMatmulAlgoCheck(res.cublasLt, desc_.get(), layoutA_.get(), layoutB_.get(),
                                                            layoutC_.get(), layoutD_.get(), &algo, &result),
                                    label_ + ": cublasLtMatmulAlgoCheck of the cached algorithm"));
  KILN_RETURN_IF_ERROR(cublasStatus(result.state, label_ + ": cublasLtMatmulAlgoCheck of the cached algorithm"));
  return static_cast<uint64_t>(result.workspaceSize);
}

Status GemmProblem::enqueue(const DeviceResources &res, const TunedAlgorithm &tuned) {
  KILN_RETURN_IF_ERROR(setPointers(res));
  cublasLtMatmulAlgo_t algo;
  std::memcpy(&algo, tuned.gemmAlgo.data(), sizeof(algo));
  if (tuned.workspaceBytes > res.workspaceBytes)
    return Status(StatusCode::kInternal, label_ + ": the chosen matmul algorithm needs " +
                                             std::to_string(tuned.workspaceBytes) + " bytes of workspace, the context has " +
                                             std::to_string(res.workspaceBytes));
  return matmul(res, algo, tuned.workspaceBytes);
}

} // namespace kiln::runtime
