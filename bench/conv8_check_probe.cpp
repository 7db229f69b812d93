// Whether every cuDNN engine computes the INT8 convolution graphs Kiln's plans run correctly:
// for each graph form and shape, runs every plan heuristics A and fallback offer on random int8
// data and compares its output with a host reference (exact int32 sums, the epilogue in double):
// int8 outputs within one step, bf16 outputs within a rounding. Prints each engine's name, how
// many outputs are off and the largest difference. The forms are the plans': int8 residuals
// scaled in the graph, bf16 biases, int8 or bf16 results. For diagnosing issue 13's INT8 residual failures, not a
// test (tests/gpu/check_8bit_convs.py is the test).
//   nvcc -std=c++17 -O2 -arch=sm_90 -Ithird_party/cudnn-frontend/include bench/conv8_check_probe.cpp -lcudnn -lnvrtc
#include <cudnn_frontend.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace fe = cudnn_frontend;
using T = std::shared_ptr<fe::graph::Tensor_attributes>;

struct Shape {
  const char *name;
  int64_t n, c, h, w, k, r, stride, pad;
};

// Residual: acc * s[k] + b[k] + res8 * rs, relu, written int8 (* ys); Bf16Bias: the same
// with a bf16 bias, as Kiln's int8 plans store it; Bf16Out: that, written bf16 (a network's last
// block); Bf16Residual: a bf16 residual, no scale, written bf16 (the pre-format-9 form);
// Plain: acc * s[k] + b[k], relu, int8 (no residual).
enum class Form { Residual, Bf16Bias, Bf16Out, Bf16Residual, Plain };
const char *formName(Form f) {
  switch (f) {
  case Form::Residual: return "acc*s+b(f32)+res8*rs, relu, *ys ->int8";
  case Form::Bf16Bias: return "acc*s+b(bf16)+res8*rs, relu, *ys ->int8";
  case Form::Bf16Out: return "acc*s+b(bf16)+res8*rs, relu ->bf16";
  case Form::Bf16Residual: return "acc*s+b(bf16)+res(bf16), relu ->bf16";
  case Form::Plain: return "acc*s+b(f32), relu, *ys ->int8";
  }
  return "?";
}

/// The bf16 nearest to `v` (round half to even), as raw bits.
uint16_t toBf16(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  bits += 0x7fff + ((bits >> 16) & 1);
  return uint16_t(bits >> 16);
}
float fromBf16(uint16_t b) {
  uint32_t bits = uint32_t(b) << 16;
  float v;
  std::memcpy(&v, &bits, 4);
  return v;
}

std::vector<int64_t> nhwc(int64_t n, int64_t c, int64_t h, int64_t w) { return {h * w * c, 1, w * c, c}; }

template <class V> void *upload(const std::vector<V> &host) {
  void *d = nullptr;
  cudaMalloc(&d, std::max<size_t>(host.size() * sizeof(V), 256));
  cudaMemcpy(d, host.data(), host.size() * sizeof(V), cudaMemcpyHostToDevice);
  return d;
}

int main() {
  cudnnHandle_t handle;
  cudnnCreate(&handle);
  std::vector<Shape> shapes = {{"n2 1x1 32->64 @12", 2, 32, 12, 12, 64, 1, 1, 0},
                               {"n2 3x3 64->64 @12", 2, 64, 12, 12, 64, 3, 1, 1},
                               {"n2 1x1 64->256 @12", 2, 64, 12, 12, 256, 1, 1, 0},
                               {"n4 1x1 64->256 @56", 4, 64, 56, 56, 256, 1, 1, 0},
                               {"n8 1x1 512->2048 @7", 8, 512, 7, 7, 2048, 1, 1, 0}};
  std::mt19937 rng(7);
  auto uniform = [&](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); };
  auto int8s = [&](size_t count, int lo, int hi) {
    std::vector<int8_t> v(count);
    for (auto &e : v)
      e = static_cast<int8_t>(std::uniform_int_distribution<int>(lo, hi)(rng));
    return v;
  };
  void *workspace = nullptr;
  size_t workspaceBytes = size_t(1) << 30;
  cudaMalloc(&workspace, workspaceBytes);
  for (const Shape &s : shapes) {
    int64_t oh = (s.h + 2 * s.pad - s.r) / s.stride + 1, ow = (s.w + 2 * s.pad - s.r) / s.stride + 1;
    // NHWC x [n,h,w,c], KRSC w [k,r,r,c], NHWC y and residual [n,oh,ow,k].
    std::vector<int8_t> x = int8s(s.n * s.h * s.w * s.c, -20, 20), w = int8s(s.k * s.r * s.r * s.c, -20, 20),
                        res = int8s(s.n * oh * ow * s.k, -100, 100);
    std::vector<int64_t> acc(s.n * oh * ow * s.k, 0);
    for (int64_t n = 0; n < s.n; ++n)
      for (int64_t p = 0; p < oh; ++p)
        for (int64_t q = 0; q < ow; ++q)
          for (int64_t k = 0; k < s.k; ++k) {
            int64_t sum = 0;
            for (int64_t i = 0; i < s.r; ++i)
              for (int64_t j = 0; j < s.r; ++j) {
                int64_t hi = p * s.stride - s.pad + i, wj = q * s.stride - s.pad + j;
                if (hi < 0 || hi >= s.h || wj < 0 || wj >= s.w)
                  continue;
                const int8_t *xr = &x[((n * s.h + hi) * s.w + wj) * s.c];
                const int8_t *wr = &w[((k * s.r + i) * s.r + j) * s.c];
                for (int64_t c = 0; c < s.c; ++c)
                  sum += int64_t(xr[c]) * wr[c];
              }
            acc[((n * oh + p) * ow + q) * s.k + k] = sum;
          }
    std::vector<double> maxAcc(s.k, 1);
    for (size_t e = 0; e < acc.size(); ++e)
      maxAcc[e % s.k] = std::max(maxAcc[e % s.k], std::fabs(double(acc[e])));
    std::vector<float> scale(s.k), bias(s.k);
    for (int64_t k = 0; k < s.k; ++k) {
      scale[k] = float(uniform(1.5, 3.0) / maxAcc[k]);
      bias[k] = float(uniform(-1, 1));
    }
    float rs = 0.02f, ys = 40.0f;
    void *dx = upload(x), *dw = upload(w), *dres = upload(res);
    void *dy = nullptr;
    cudaMalloc(&dy, acc.size());
    for (Form form : {Form::Residual, Form::Bf16Bias, Form::Bf16Out, Form::Bf16Residual, Form::Plain}) {
      bool residual = form != Form::Plain, bf16Bias = form != Form::Residual && form != Form::Plain;
      bool bf16Out = form == Form::Bf16Out || form == Form::Bf16Residual, bf16Residual = form == Form::Bf16Residual;
      // The inputs as the GPU sees them: a bf16 bias and a bf16 residual are rounded.
      std::vector<uint16_t> biasBf16(s.k), resBf16(res.size());
      for (int64_t k = 0; k < s.k; ++k)
        biasBf16[k] = toBf16(bias[k]);
      for (size_t e = 0; e < res.size(); ++e)
        resBf16[e] = toBf16(res[e] * rs);
      // The reference in double: relu(acc * s + b + residual), then int8 (* ys, rounded,
      // saturated) or the value itself.
      std::vector<double> want(acc.size());
      for (size_t e = 0; e < acc.size(); ++e) {
        int64_t k = e % s.k;
        double b = bf16Bias ? fromBf16(biasBf16[k]) : bias[k];
        double r = !residual ? 0.0 : bf16Residual ? fromBf16(resBf16[e]) : res[e] * double(rs);
        double v = std::max(double(acc[e]) * scale[k] + b + r, 0.0);
        want[e] = bf16Out ? v : std::clamp(std::nearbyint(v * ys), -128.0, 127.0);
      }
      void *dscale = upload(scale), *dbias = bf16Bias ? upload(biasBf16) : upload(bias),
           *drs = upload(std::vector<float>{rs}), *dys = upload(std::vector<float>{ys}),
           *dresBf16 = upload(resBf16);
      fe::graph::Graph g;
      g.set_io_data_type(fe::DataType_t::INT8)
          .set_intermediate_data_type(fe::DataType_t::FLOAT)
          .set_compute_data_type(fe::DataType_t::FLOAT);
      auto tensor = [&](const char *name, int64_t uid, std::vector<int64_t> dims, std::vector<int64_t> strides,
                        fe::DataType_t t) {
        return g.tensor(
            fe::graph::Tensor_attributes().set_name(name).set_uid(uid).set_dim(dims).set_stride(strides).set_data_type(t));
      };
      T tx = tensor("x", 1, {s.n, s.c, s.h, s.w}, nhwc(s.n, s.c, s.h, s.w), fe::DataType_t::INT8);
      T tw = tensor("w", 2, {s.k, s.c, s.r, s.r}, nhwc(s.k, s.c, s.r, s.r), fe::DataType_t::INT8);
      T y = g.conv_fprop(tx, tw, fe::graph::Conv_fprop_attributes()
                                     .set_padding({s.pad, s.pad})
                                     .set_stride({s.stride, s.stride})
                                     .set_dilation({1, 1})
                                     .set_compute_data_type(fe::DataType_t::INT32));
      y->set_data_type(fe::DataType_t::INT32);
      auto pw = [&](T a, fe::PointwiseMode_t mode, T b = nullptr) {
        auto o = fe::graph::Pointwise_attributes().set_mode(mode).set_compute_data_type(fe::DataType_t::FLOAT);
        return b ? g.pointwise(a, b, o) : g.pointwise(a, o);
      };
      y = pw(y, fe::PointwiseMode_t::MUL, tensor("scale", 3, {1, s.k, 1, 1}, {s.k, 1, s.k, s.k}, fe::DataType_t::FLOAT));
      y = pw(y, fe::PointwiseMode_t::ADD,
             tensor("bias", 4, {1, s.k, 1, 1}, {s.k, 1, s.k, s.k},
                    bf16Bias ? fe::DataType_t::BFLOAT16 : fe::DataType_t::FLOAT));
      if (residual) {
        T r = tensor("res", 5, {s.n, s.k, oh, ow}, nhwc(s.n, s.k, oh, ow),
                     bf16Residual ? fe::DataType_t::BFLOAT16 : fe::DataType_t::INT8);
        if (!bf16Residual)
          r = pw(r, fe::PointwiseMode_t::MUL, tensor("rscale", 6, {1, 1, 1, 1}, {1, 1, 1, 1}, fe::DataType_t::FLOAT));
        y = pw(y, fe::PointwiseMode_t::ADD, r);
      }
      y = pw(y, fe::PointwiseMode_t::RELU_FWD);
      if (!bf16Out)
        y = pw(y, fe::PointwiseMode_t::MUL, tensor("yscale", 7, {1, 1, 1, 1}, {1, 1, 1, 1}, fe::DataType_t::FLOAT));
      y->set_output(true).set_uid(8).set_dim({s.n, s.k, oh, ow}).set_stride(nhwc(s.n, s.k, oh, ow)).set_data_type(
          bf16Out ? fe::DataType_t::BFLOAT16 : fe::DataType_t::INT8);
      std::string why;
      auto ok = [&](fe::error_t e, const char *what) {
        if (e.is_good())
          return true;
        why = std::string(what) + ": " + e.get_message();
        return false;
      };
      std::printf("== %s: %s\n", s.name, formName(form));
      if (!(ok(g.validate(), "validate") && ok(g.build_operation_graph(handle), "operation graph") &&
            ok(g.create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK}), "plans") &&
            ok(g.check_support(handle), "support") && ok(g.build_plans(handle, fe::BuildPlanPolicy_t::ALL), "build"))) {
        std::printf("   none: %s\n", why.substr(0, 200).c_str());
        continue;
      }
      std::unordered_map<int64_t, void *> pack = {{1, dx}, {2, dw}, {3, dscale}, {4, dbias}, {8, dy}};
      if (residual)
        pack[5] = bf16Residual ? dresBf16 : dres;
      if (residual && !bf16Residual)
        pack[6] = drs;
      if (!bf16Out)
        pack[7] = dys;
      size_t outBytes = acc.size() * (bf16Out ? 2 : 1);
      std::vector<uint8_t> got(outBytes);
      for (int64_t i = 0; i < g.get_execution_plan_count(); ++i) {
        std::string name;
        (void)g.get_plan_name_at_index(i, name);
        int64_t ws = 0;
        if (g.get_workspace_size_plan_at_index(i, ws).is_bad() || ws > (int64_t)workspaceBytes) {
          std::printf("   %-60s not built or workspace %lld\n", name.c_str(), (long long)ws);
          continue;
        }
        cudaMemset(dy, 0x55, outBytes);
        if (g.execute_plan_at_index(handle, pack, workspace, i).is_bad()) {
          std::printf("   %-60s does not run\n", name.c_str());
          continue;
        }
        if (cudaDeviceSynchronize() != cudaSuccess) {
          std::printf("   %-60s CUDA error %s\n", name.c_str(), cudaGetErrorString(cudaGetLastError()));
          return 1;
        }
        cudaMemcpy(got.data(), dy, outBytes, cudaMemcpyDeviceToHost);
        // int8: more than one step off; bf16: more than 2^-7 of the value (one rounding plus f32
        // reassociation) and 1e-3 absolute.
        int64_t bad = 0;
        double worst = 0;
        for (size_t e = 0; e < acc.size(); ++e) {
          double value = bf16Out ? fromBf16(uint16_t(got[2 * e] | (got[2 * e + 1] << 8))) : double(int8_t(got[e]));
          double d = std::fabs(value - want[e]);
          bad += bf16Out ? d > std::fabs(want[e]) / 128 + 1e-3 : d > 1;
          worst = std::max(worst, d);
        }
        std::printf("   %-60s %s: %lld of %zu outputs off, max %g\n", name.c_str(), bad ? "WRONG" : "ok",
                    (long long)bad, acc.size(), worst);
      }
      std::fflush(stdout);
      for (void *p : {dscale, dbias, drs, dys, dresBf16})
        cudaFree(p);
    }
    for (void *p : {dx, dw, dres, dy})
      cudaFree(p);
  }
  return 0;
}
