// Which 8-bit convolution graphs cuDNN (frontend graph API) runs for ResNet-50's convs, and how
// fast against bf16: for planning issue 13's INT8/FP8 convolutions, not a test. For each conv
// shape (batch 256, NHWC) and graph form, builds every plan heuristics A and fallback offer,
// times each (min of 10 runs after a warm-up) and prints the best, or why none runs.
//   nvcc -std=c++17 -O2 -arch=sm_90 -Ithird_party/cudnn-frontend/include bench/conv8_probe.cpp -lcudnn -lnvrtc -o conv8_probe
#include <cudnn_frontend.h>

#include <algorithm>
#include <cstdio>
#include <cuda_runtime.h>
#include <memory>
#include <string>
#include <vector>

namespace fe = cudnn_frontend;
using T = std::shared_ptr<fe::graph::Tensor_attributes>;

struct Shape {
  const char *name;
  int64_t n, c, h, w, k, r, stride, pad;
};

enum class Form { Bf16, Int8Out8, Int8Out8Residual8, Int8OutBf16, Int8Dual, Fp8Out8, Fp8OutBf16, Fp8Residual8 };
const char *formName(Form f) {
  switch (f) {
  case Form::Bf16: return "bf16 +bias+relu ->bf16";
  case Form::Int8Out8: return "int8 *s[k]+bias+relu ->int8";
  case Form::Int8Out8Residual8: return "int8 *s[k]+bias+res(int8)+relu ->int8";
  case Form::Int8OutBf16: return "int8 *s[k]+bias+relu ->bf16";
  case Form::Int8Dual: return "int8 *s[k]+bias+relu ->int8 and bf16";
  case Form::Fp8Out8: return "fp8 *s+bias+relu ->fp8";
  case Form::Fp8OutBf16: return "fp8 *s+bias+relu ->bf16";
  case Form::Fp8Residual8: return "fp8 *s+bias+res(fp8)+relu ->fp8";
  }
  return "?";
}

std::vector<int64_t> nhwc(int64_t n, int64_t c, int64_t h, int64_t w) { return {h * w * c, 1, w * c, c}; }

int main(int argc, char **argv) {
  cudnnHandle_t handle;
  cudnnCreate(&handle);
  std::vector<Shape> shapes = {{"l1 1x1 64->256 @56", 256, 64, 56, 56, 256, 1, 1, 0},
                               {"l1 3x3 64->64 @56", 256, 64, 56, 56, 64, 3, 1, 1},
                               {"l1 1x1 256->64 @56", 256, 256, 56, 56, 64, 1, 1, 0},
                               {"l2 1x1 128->512 @28", 256, 128, 28, 28, 512, 1, 1, 0},
                               {"l3 3x3 256->256 @14", 256, 256, 14, 14, 256, 3, 1, 1},
                               {"l4 3x3 512->512 @7", 256, 512, 7, 7, 512, 3, 1, 1},
                               {"stem s2d 5x5 16->64 @112", 256, 16, 112, 112, 64, 5, 1, 2},
                               // The stem as plans run it since b716735: 4x4 taps over the padded
                               // blocks (115 = 112 + 2 + 1), 16 channels; 32 is what INT8 needs.
                               {"stem s2d 4x4 16->64 @115", 256, 16, 115, 115, 64, 4, 1, 0},
                               {"stem s2d 4x4 32->64 @115", 256, 32, 115, 115, 64, 4, 1, 0}};
  // A first argument keeps the shapes whose name contains it ("stem s2d 4x4"), a second the
  // forms whose name does ("int8 *s[k]+bias+relu ->int8").
  if (argc > 1)
    shapes.erase(std::remove_if(shapes.begin(), shapes.end(),
                                [&](const Shape &s) { return std::string(s.name).find(argv[1]) == std::string::npos; }),
                 shapes.end());
  void *buffer = nullptr;
  size_t bufferBytes = size_t(1) << 31;
  cudaMalloc(&buffer, bufferBytes * 4);
  cudaMemset(buffer, 0, bufferBytes * 4);
  char *base = static_cast<char *>(buffer);
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  for (const Shape &s : shapes) {
    int64_t oh = (s.h + 2 * s.pad - s.r) / s.stride + 1, ow = (s.w + 2 * s.pad - s.r) / s.stride + 1;
    for (Form form : {Form::Bf16, Form::Int8Out8, Form::Int8Out8Residual8, Form::Int8OutBf16, Form::Int8Dual,
                      Form::Fp8Out8, Form::Fp8OutBf16, Form::Fp8Residual8}) {
      if (argc > 2 && std::string(formName(form)).find(argv[2]) == std::string::npos)
        continue;
      bool int8 = form == Form::Int8Out8 || form == Form::Int8Out8Residual8 || form == Form::Int8OutBf16 ||
                  form == Form::Int8Dual;
      bool fp8 = form == Form::Fp8Out8 || form == Form::Fp8OutBf16 || form == Form::Fp8Residual8;
      fe::DataType_t in = int8 ? fe::DataType_t::INT8 : fp8 ? fe::DataType_t::FP8_E4M3 : fe::DataType_t::BFLOAT16;
      fe::graph::Graph g;
      g.set_io_data_type(fe::DataType_t::BFLOAT16)
          .set_intermediate_data_type(fe::DataType_t::FLOAT)
          .set_compute_data_type(fe::DataType_t::FLOAT);
      int64_t uid = 1;
      auto tensor = [&](const char *name, std::vector<int64_t> dims, std::vector<int64_t> strides, fe::DataType_t t) {
        return g.tensor(fe::graph::Tensor_attributes().set_name(name).set_uid(uid++).set_dim(dims).set_stride(strides).set_data_type(t));
      };
      T x = tensor("x", {s.n, s.c, s.h, s.w}, nhwc(s.n, s.c, s.h, s.w), in);
      T w = tensor("w", {s.k, s.c, s.r, s.r}, nhwc(s.k, s.c, s.r, s.r), in);
      T y = g.conv_fprop(x, w, fe::graph::Conv_fprop_attributes()
                                   .set_padding({s.pad, s.pad})
                                   .set_stride({s.stride, s.stride})
                                   .set_dilation({1, 1})
                                   .set_compute_data_type(int8 ? fe::DataType_t::INT32 : fe::DataType_t::FLOAT));
      if (int8)
        y->set_data_type(fe::DataType_t::INT32);
      auto pw = [&](T a, fe::PointwiseMode_t mode, T b = nullptr) {
        auto o = fe::graph::Pointwise_attributes().set_mode(mode).set_compute_data_type(fe::DataType_t::FLOAT);
        return b ? g.pointwise(a, b, o) : g.pointwise(a, o);
      };
      std::vector<T> outs;
      if (int8 || fp8) {
        T scale = int8 ? tensor("scale", {1, s.k, 1, 1}, {s.k, 1, s.k, s.k}, fe::DataType_t::FLOAT)
                       : tensor("scale", {1, 1, 1, 1}, {1, 1, 1, 1}, fe::DataType_t::FLOAT);
        y = pw(y, fe::PointwiseMode_t::MUL, scale);
      }
      y = pw(y, fe::PointwiseMode_t::ADD, tensor("bias", {1, s.k, 1, 1}, {s.k, 1, s.k, s.k}, fe::DataType_t::FLOAT));
      if (form == Form::Int8Out8Residual8 || form == Form::Fp8Residual8) {
        T res = tensor("res", {s.n, s.k, oh, ow}, nhwc(s.n, s.k, oh, ow), in);
        T rs = tensor("rscale", {1, 1, 1, 1}, {1, 1, 1, 1}, fe::DataType_t::FLOAT);
        y = pw(y, fe::PointwiseMode_t::ADD, pw(res, fe::PointwiseMode_t::MUL, rs));
      }
      y = pw(y, fe::PointwiseMode_t::RELU_FWD);
      if (form == Form::Int8OutBf16 || form == Form::Fp8OutBf16 || form == Form::Bf16 || form == Form::Int8Dual) {
        T out = form == Form::Int8Dual ? pw(y, fe::PointwiseMode_t::IDENTITY) : y;
        out->set_output(true).set_dim({s.n, s.k, oh, ow}).set_stride(nhwc(s.n, s.k, oh, ow)).set_data_type(fe::DataType_t::BFLOAT16);
        outs.push_back(out);
      }
      if (form != Form::Int8OutBf16 && form != Form::Fp8OutBf16 && form != Form::Bf16) {
        T q = pw(y, fe::PointwiseMode_t::MUL, tensor("yscale", {1, 1, 1, 1}, {1, 1, 1, 1}, fe::DataType_t::FLOAT));
        q->set_output(true).set_dim({s.n, s.k, oh, ow}).set_stride(nhwc(s.n, s.k, oh, ow)).set_data_type(in);
        outs.push_back(q);
      }
      std::string why;
      auto ok = [&](fe::error_t e, const char *what) {
        if (e.is_good())
          return true;
        why = std::string(what) + ": " + e.get_message();
        return false;
      };
      float best = -1;
      int64_t count = 0, ran = 0;
      if (ok(g.validate(), "validate") && ok(g.build_operation_graph(handle), "operation graph") &&
          ok(g.create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK}), "plans") &&
          ok(g.check_support(handle), "support") && ok(g.build_plans(handle, fe::BuildPlanPolicy_t::ALL), "build")) {
        count = g.get_execution_plan_count();
        std::unordered_map<int64_t, void *> pack;
        for (int64_t u = 1; u < uid; ++u)
          pack[u] = base + (u - 1) * (bufferBytes / 2);
        for (size_t o = 0; o < outs.size(); ++o)
          pack[outs[o]->get_uid()] = base + bufferBytes * (2 + o);
        for (int64_t i = 0; i < count; ++i) {
          int64_t ws = 0;
          if (g.get_workspace_size_plan_at_index(i, ws).is_bad() || ws > (int64_t)(bufferBytes / 2))
            continue;
          void *workspace = base + bufferBytes * 3 + bufferBytes / 2;
          if (g.execute_plan_at_index(handle, pack, workspace, i).is_bad())
            continue;
          cudaDeviceSynchronize();
          float t = 1e9;
          for (int it = 0; it < 10; ++it) {
            cudaEventRecord(start);
            (void)g.execute_plan_at_index(handle, pack, workspace, i);
            cudaEventRecord(stop);
            cudaEventSynchronize(stop);
            float ms = 0;
            cudaEventElapsedTime(&ms, start, stop);
            t = std::min(t, ms);
          }
          ++ran;
          if (best < 0 || t < best)
            best = t;
        }
        if (cudaGetLastError() != cudaSuccess)
          why = "a CUDA error";
      }
      if (best >= 0)
        std::printf("%-26s %-42s %8.1f us  (%lld plans, %lld ran)\n", s.name, formName(form), best * 1000,
                    (long long)count, (long long)ran);
      else
        std::printf("%-26s %-42s   none: %s\n", s.name, formName(form), why.substr(0, 160).c_str());
      std::fflush(stdout);
    }
  }
  return 0;
}
