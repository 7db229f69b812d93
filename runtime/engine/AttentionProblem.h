//===- AttentionProblem.h - a plan AttentionStep as a cuDNN SDPA graph -*- C++ -*-===//
//
// The step is one cuDNN frontend graph: sdpa(Q, K, V) with the step's scale as a fused scalar,
// the mask as an additive bias and the causal mask as cuDNN's top-left diagonal band, in the
// frontend's composite implementation (cuDNN's flash-attention fprop engines; the "unified"
// one accepts a bias and a causal band only from cuDNN 9.21, and the runtime must run on every
// cuDNN 9 from 9.14). Inference only: no softmax statistics, no dropout. Q, K, V, O and the
// mask are the plan's strided views, handed to cuDNN as they are (no copies).
//
// The graph runs through CudnnGraphRunner (CudnnGraph.h: tuning, the timing cache, one built
// graph per context and problem, shared by steps with the same graph, such as the twelve
// layers of a BERT). A runtime built without the cuDNN frontend refuses attention steps in
// create().
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_ENGINE_ATTENTIONPROBLEM_H
#define KILN_RUNTIME_ENGINE_ATTENTIONPROBLEM_H

#include "runtime/engine/CudnnGraph.h"

#include <memory>
#include <string>

namespace kiln::runtime {

struct AttentionProblem {
  /// Checks the step (validatePlan's rules, again: they decide what cuDNN touches) and gives
  /// its runner. Fails with kIncompatible when this runtime was built without the cuDNN
  /// frontend.
  static StatusOr<std::unique_ptr<CudnnGraphRunner>> create(const plan::Plan &plan, const plan::AttentionStep &step,
                                                            std::string label);
  /// Whether this runtime was built with the cuDNN frontend (else create() refuses every step).
  static bool available() { return cudnnFrontendAvailable(); }
};

} // namespace kiln::runtime

#endif // KILN_RUNTIME_ENGINE_ATTENTIONPROBLEM_H
