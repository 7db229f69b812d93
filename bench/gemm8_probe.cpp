// Which 8-bit cuBLASLt GEMMs run for BERT-base's linear layers (4096 tokens: batch 32 x 128),
// and how fast against bf16 and FP8: for planning issue 13's INT8 GEMMs, not a test. Each form
// is TN (cuBLASLt's 8-bit kernels take A transposed): D[n, m] column-major = row-major
// [tokens, features], the weight [features, K] row-major as the transposed operand. Per-channel
// weight scales are per-row alpha vectors of D (ALPHA_DEVICE_VECTOR_BETA_ZERO). Prints the best
// of the heuristic's first 8 algorithms (min of 10 runs each) or why none runs.
//   nvcc -std=c++17 -O2 -arch=sm_90 bench/gemm8_probe.cpp -lcublasLt -o gemm8_probe
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

struct Form {
  const char *name;
  cudaDataType_t ab, d;
  cublasComputeType_t compute;
  cudaDataType_t scale;
  bool alphaVector; // per-output-feature alpha (per-channel weight scales)
  cublasLtEpilogue_t epilogue;
};

int main() {
  cublasLtHandle_t lt;
  cublasLtCreate(&lt);
  const int64_t tokens = 4096;
  struct Shape { const char *name; int64_t features, k; };
  std::vector<Shape> shapes = {{"qkv 768->2304", 2304, 768}, {"out 768->768", 768, 768},
                               {"ffn1 768->3072", 3072, 768}, {"ffn2 3072->768", 768, 3072}};
  std::vector<Form> forms = {
      {"bf16 -> bf16 +bias", CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F, false, CUBLASLT_EPILOGUE_BIAS},
      {"bf16 -> bf16 +bias+gelu", CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F, false,
       CUBLASLT_EPILOGUE_GELU_BIAS},
      {"fp8 -> bf16 +bias", CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F, false, CUBLASLT_EPILOGUE_BIAS},
      {"fp8 -> bf16 +bias+gelu", CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F, false,
       CUBLASLT_EPILOGUE_GELU_BIAS},
      {"fp8 -> fp8", CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, CUBLAS_COMPUTE_32F, CUDA_R_32F, false, CUBLASLT_EPILOGUE_DEFAULT},
      {"fp8 -> fp8 +bias+gelu", CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, CUBLAS_COMPUTE_32F, CUDA_R_32F, false,
       CUBLASLT_EPILOGUE_GELU_BIAS},
      {"int8 -> int32", CUDA_R_8I, CUDA_R_32I, CUBLAS_COMPUTE_32I, CUDA_R_32I, false, CUBLASLT_EPILOGUE_DEFAULT},
      {"int8 -> int8 (scalar alpha)", CUDA_R_8I, CUDA_R_8I, CUBLAS_COMPUTE_32I, CUDA_R_32F, false,
       CUBLASLT_EPILOGUE_DEFAULT},
      {"int8 -> int8 (alpha per feature)", CUDA_R_8I, CUDA_R_8I, CUBLAS_COMPUTE_32I, CUDA_R_32F, true,
       CUBLASLT_EPILOGUE_DEFAULT},
      {"int8 -> fp32 (alpha per feature)", CUDA_R_8I, CUDA_R_32F, CUBLAS_COMPUTE_32I, CUDA_R_32F, true,
       CUBLASLT_EPILOGUE_DEFAULT},
      {"int8 -> bf16 (alpha per feature)", CUDA_R_8I, CUDA_R_16BF, CUBLAS_COMPUTE_32I, CUDA_R_32F, true,
       CUBLASLT_EPILOGUE_DEFAULT},
      {"int8 -> bf16 +bias (alpha/feature)", CUDA_R_8I, CUDA_R_16BF, CUBLAS_COMPUTE_32I, CUDA_R_32F, true,
       CUBLASLT_EPILOGUE_BIAS},
  };
  char *base = nullptr;
  const size_t chunk = size_t(256) << 20;
  cudaMalloc(&base, chunk * 7);
  cudaMemset(base, 0, chunk * 7);
  void *a = base, *b = base + chunk, *d = base + 2 * chunk, *bias = base + 3 * chunk, *alphas = base + 4 * chunk,
       *workspace = base + 5 * chunk, *c = base + 6 * chunk;
  std::vector<float> ones(4096, 1.0f);
  cudaMemcpy(alphas, ones.data(), ones.size() * 4, cudaMemcpyHostToDevice);
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  for (const Shape &s : shapes)
    for (const Form &f : forms) {
      // D (features x tokens, column-major) = W (K x features, column-major: [features, K]
      // row-major) transposed x X (K x tokens, column-major: [tokens, K] row-major).
      int64_t m = s.features, n = tokens, k = s.k;
      cublasLtMatmulDesc_t desc;
      cublasLtMatmulDescCreate(&desc, f.compute, f.scale);
      cublasOperation_t t = CUBLAS_OP_T, nt = CUBLAS_OP_N;
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof(t));
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &nt, sizeof(nt));
      if (f.alphaVector) {
        cublasLtPointerMode_t mode = CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_ZERO;
        cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, &mode, sizeof(mode));
      }
      if (f.ab == CUDA_R_8F_E4M3) { // as Kiln's FP8 GEMMs run
        int8_t fastAccum = 1;
        cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fastAccum, sizeof(fastAccum));
      }
      if (f.epilogue != CUBLASLT_EPILOGUE_DEFAULT) {
        cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &f.epilogue, sizeof(f.epilogue));
        // The bias type: bf16 unless D is f32 (an FP8 D takes a bf16 bias).
        cudaDataType_t biasType = f.d == CUDA_R_32F ? CUDA_R_32F : CUDA_R_16BF;
        cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &biasType, sizeof(biasType));
        cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias));
      }
      cublasLtMatrixLayout_t la, lb, lc, ld;
      cublasLtMatrixLayoutCreate(&la, f.ab, k, m, k);
      cublasLtMatrixLayoutCreate(&lb, f.ab, k, n, k);
      // An E4M3 D takes a bf16 C of its own (cuBLASLt runs in place only with one layout).
      cudaDataType_t cType = f.d == CUDA_R_8F_E4M3 ? CUDA_R_16BF : f.d;
      void *cPtr = f.d == CUDA_R_8F_E4M3 ? c : d;
      cublasLtMatrixLayoutCreate(&lc, cType, m, n, m);
      cublasLtMatrixLayoutCreate(&ld, f.d, m, n, m);
      cublasLtMatmulPreference_t pref;
      cublasLtMatmulPreferenceCreate(&pref);
      size_t wsBytes = chunk;
      cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsBytes, sizeof(wsBytes));
      cublasLtMatmulHeuristicResult_t results[8];
      int found = 0;
      cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, ld, pref, 8, results, &found);
      float best = -1;
      int ran = 0;
      float alpha = 1.0f, beta = 0.0f;
      int32_t alphaI = 1, betaI = 0;
      const void *alphaPtr = f.alphaVector ? alphas : f.scale == CUDA_R_32I ? (const void *)&alphaI : (const void *)&alpha;
      const void *betaPtr = f.scale == CUDA_R_32I ? (const void *)&betaI : (const void *)&beta;
      for (int i = 0; st == CUBLAS_STATUS_SUCCESS && i < found; ++i) {
        if (cublasLtMatmul(lt, desc, alphaPtr, a, la, b, lb, betaPtr, cPtr, lc, d, ld, &results[i].algo, workspace,
                           wsBytes, nullptr) != CUBLAS_STATUS_SUCCESS)
          continue;
        cudaDeviceSynchronize();
        float tbest = 1e9;
        for (int it = 0; it < 10; ++it) {
          cudaEventRecord(start);
          cublasLtMatmul(lt, desc, alphaPtr, a, la, b, lb, betaPtr, cPtr, lc, d, ld, &results[i].algo, workspace,
                         wsBytes, nullptr);
          cudaEventRecord(stop);
          cudaEventSynchronize(stop);
          float ms = 0;
          cudaEventElapsedTime(&ms, start, stop);
          tbest = std::min(tbest, ms);
        }
        ++ran;
        best = best < 0 ? tbest : std::min(best, tbest);
      }
      double tflops = 2.0 * m * n * k / (best * 1e-3) / 1e12;
      if (best >= 0)
        std::printf("%-16s %-34s %7.1f us %6.0f TFLOP/s (%d algorithms, %d ran)\n", s.name, f.name, best * 1000, tflops,
                    found, ran);
      else
        std::printf("%-16s %-34s   none: heuristic status %d, %d algorithms, CUDA %s\n", s.name, f.name, (int)st, found,
                    cudaGetErrorString(cudaGetLastError()));
      std::fflush(stdout);
      cublasLtMatmulPreferenceDestroy(pref);
      cublasLtMatrixLayoutDestroy(la);
      cublasLtMatrixLayoutDestroy(lb);
      cublasLtMatrixLayoutDestroy(lc);
      cublasLtMatrixLayoutDestroy(ld);
      cublasLtMatmulDescDestroy(desc);
    }
  return 0;
}
