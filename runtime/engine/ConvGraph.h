//===- ConvGraph.h - a channels-last ConvStep as a cuDNN graph -*- C++ -*-===//
//
// A channels-last 2-d convolution and its epilogue as one cuDNN frontend graph:
//   y = act(conv(x, w) + bias + residual)
// x, w, y and the residual NHWC (w KRSC), fp32 accumulation and fp32 intermediates, one rounding
// to y's type. The activation is one pointwise node (ReLU, clip as ReLU with bounds, sigmoid)
// or a short chain of them (hard sigmoid, hard swish, which cuDNN has no mode for). Run
// through CudnnGraphRunner (CudnnGraph.h). Channels-first convolutions stay on cuDNN's legacy
// API (ConvProblem.h).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_ENGINE_CONVGRAPH_H
#define KILN_RUNTIME_ENGINE_CONVGRAPH_H

#include "runtime/engine/CudnnGraph.h"

namespace kiln::runtime {

struct ConvGraph {
  /// Checks the step (a channels-last 2-d forward convolution with operands of one type) and
  /// gives its runner. Fails with kIncompatible when this runtime has no cuDNN frontend.
  static StatusOr<std::unique_ptr<CudnnGraphRunner>> create(const plan::Plan &plan, const plan::ConvStep &step,
                                                            std::string label);
};

} // namespace kiln::runtime

#endif // KILN_RUNTIME_ENGINE_CONVGRAPH_H
