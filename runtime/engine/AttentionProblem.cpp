//===- AttentionProblem.cpp - a plan AttentionStep as a cuDNN SDPA graph ---===//
//
// The attention graph's spec (see AttentionProblem.h); its lifecycle is CudnnGraphRunner's.
//
//===----------------------------------------------------------------------===//

#include "runtime/engine/AttentionProblem.h"

#include "runtime/engine/CudnnFrontend.h"
#include "runtime/plan/AttentionChecks.h"

#include <charconv>
#include <vector>

namespace kiln::runtime {
namespace {

#if KILN_HAVE_CUDNN_FRONTEND

std::string list(const std::vector<int64_t> &values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i)
      s += ',';
    s += std::to_string(values[i]);
  }
  return s + "]";
}

/// Shortest decimal that reads back as the same float.
std::string floatString(float value) {
  char buffer[32];
  return std::string(buffer, std::to_chars(buffer, buffer + sizeof(buffer), value).ptr);
}

/// The mask as cuDNN takes a bias: a broadcast dimension (stride 0 in the plan) has extent 1,
/// and its stride is what a packed layout would give it (cuDNN ignores it, but wants it sane).
void maskLayout(const plan::AttentionStep &s, std::vector<int64_t> &dims, std::vector<int64_t> &strides) {
  dims = {s.batch, s.heads, s.seqQ, s.seqKv};
  strides = s.maskStrides;
  for (int i = 2; i >= 0; --i)
    if (strides[i] == 0) {
      dims[i] = 1;
      strides[i] = strides[i + 1] * dims[i + 1];
    }
}

// Tensor uids in the graph; pointers() maps them to the step's device pointers.
enum Uid : int64_t { kQ = 1, kK = 2, kV = 3, kO = 4, kMask = 5 };

class AttentionGraph final : public CudnnGraphSpec {
public:
  AttentionGraph(const plan::Plan &plan, const plan::AttentionStep &step, std::string label)
      : plan_(plan), step_(step), label_(std::move(label)) {}

  const char *kind() const override { return "sdpa"; }
  const char *what() const override { return "attention"; }

  std::string problemKey() const override {
    const plan::AttentionStep &s = step_;
    std::string k = "type=" + operandTypeName(plan_, s.q) + " mask=" + operandTypeName(plan_, s.mask);
    k += " b=" + std::to_string(s.batch) + " h=" + std::to_string(s.heads) + " sq=" + std::to_string(s.seqQ) +
         " skv=" + std::to_string(s.seqKv) + " d=" + std::to_string(s.headDim) + " dv=" + std::to_string(s.headDimV);
    k += std::string(" causal=") + (s.causal ? "1" : "0");
    k += " q=" + list(s.qStrides) + " k=" + list(s.kStrides) + " v=" + list(s.vStrides) + " o=" + list(s.oStrides);
    if (s.mask)
      k += " m=" + list(s.maskStrides);
    return k;
  }

  // The scale is a constant inside the graph.
  std::string graphKey() const override { return problemKey() + " scale=" + floatString(step_.scale); }

  Status define(fe::graph::Graph &g) const override {
    const plan::AttentionStep &s = step_;
    fe::DataType_t io =
        plan_.buffers[s.q].dtype == plan::DType::BF16 ? fe::DataType_t::BFLOAT16 : fe::DataType_t::HALF;
    // fp32 for S = QK^T, the softmax and both matmuls' accumulation; P is rounded to the I/O
    // type before P·V, inside cuDNN.
    g.set_io_data_type(io)
        .set_intermediate_data_type(fe::DataType_t::FLOAT)
        .set_compute_data_type(fe::DataType_t::FLOAT);
    auto tensor = [&](const char *name, Uid uid, std::vector<int64_t> dims, std::vector<int64_t> strides) {
      return g.tensor(fe::graph::Tensor_attributes()
                          .set_name(name)
                          .set_uid(uid)
                          .set_dim(std::move(dims))
                          .set_stride(std::move(strides))
                          .set_data_type(io));
    };
    auto q = tensor("Q", kQ, {s.batch, s.heads, s.seqQ, s.headDim}, s.qStrides);
    auto k = tensor("K", kK, {s.batch, s.heads, s.seqKv, s.headDim}, s.kStrides);
    auto v = tensor("V", kV, {s.batch, s.heads, s.seqKv, s.headDimV}, s.vStrides);
    auto options = fe::graph::SDPA_attributes()
                       .set_name("attention")
                       .set_generate_stats(false) // inference: no softmax statistics for a backward pass
                       .set_attn_scale(s.scale)
                       .set_implementation(fe::AttentionImplementation_t::COMPOSITE);
    if (s.causal)
      options.set_causal_mask(true); // top-left: key j visible to query i when j <= i
    if (s.mask) {
      std::vector<int64_t> dims, strides;
      maskLayout(s, dims, strides);
      options.set_bias(tensor("mask", kMask, std::move(dims), std::move(strides)));
    }
    auto outputs = g.sdpa(q, k, v, options);
    outputs[0]
        ->set_output(true)
        .set_uid(kO)
        .set_dim({s.batch, s.heads, s.seqQ, s.headDimV})
        .set_stride(s.oStrides)
        .set_data_type(io);
    return Status::ok();
  }

  /// Each view's buffer address plus its element offset.
  std::unordered_map<int64_t, void *> pointers(const DeviceResources &res) const override {
    const plan::AttentionStep &s = step_;
    size_t elem = plan::dtypeBytes(plan_.buffers[s.q].dtype);
    auto at = [&](uint32_t buffer, int64_t offset) {
      return static_cast<void *>(static_cast<uint8_t *>(bufferAddress(plan_, buffer, res)) + offset * elem);
    };
    std::unordered_map<int64_t, void *> pack = {
        {kQ, at(s.q, s.qOffset)}, {kK, at(s.k, s.kOffset)}, {kV, at(s.v, s.vOffset)}, {kO, at(s.o, s.oOffset)}};
    if (s.mask)
      pack[kMask] = at(*s.mask, s.maskOffset);
    return pack;
  }

  std::string remedy() const override { return "compile the model without fused attention"; }

private:
  const plan::Plan &plan_;
  plan::AttentionStep step_;
  std::string label_;
};

#endif // KILN_HAVE_CUDNN_FRONTEND

} // namespace

StatusOr<std::unique_ptr<CudnnGraphRunner>> AttentionProblem::create(const plan::Plan &plan,
                                                                     const plan::AttentionStep &s, std::string label) {
#if !KILN_HAVE_CUDNN_FRONTEND
  (void)plan;
  (void)s;
  return Status(StatusCode::kIncompatible,
                label + ": this runtime was built without the cuDNN frontend, which attention steps need; install its "
                        "headers with scripts/install-cudnn-frontend.sh (scripts/setup-deps.sh does) and rebuild the "
                        "runtime, or compile the model without fused attention");
#else
  std::vector<uint32_t> used = {s.q, s.k, s.v, s.o};
  if (s.mask)
    used.push_back(*s.mask);
  for (uint32_t idx : used)
    if (idx >= plan.buffers.size())
      return Status(StatusCode::kInvalidPlan, label + ": attention names buffer " + std::to_string(idx) +
                                                  " but the plan has " + std::to_string(plan.buffers.size()));
  // validatePlan's rules once more: they decide which bytes cuDNN reads and writes.
  if (std::optional<std::string> error = plan::detail::checkAttentionStep(plan, label, s))
    return Status(StatusCode::kInvalidPlan, *error);
  return std::make_unique<CudnnGraphRunner>(std::make_unique<AttentionGraph>(plan, s, label), label);
#endif
}

} // namespace kiln::runtime
