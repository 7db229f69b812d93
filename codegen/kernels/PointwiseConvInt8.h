//===- PointwiseConvInt8.h - INT8 1x1 convolutions as a kernel of our own -*- C++ -*-===//
//
// ResNet's expanding 1x1 convolutions in INT8 plans (64 -> 256 channels at 56x56 with the
// block's int8 residual, 128 -> 512 at 28x28, 256 -> 1024 at 14x14) are memory-bound: a GEMM
// [pixels, C] x [C, K] with a short reduction. cuDNN's best INT8 graph with the residual ran
// layer1's at about 36% of DRAM bandwidth on an H100 (0.379 ms at b256, three of them: the
// largest steps of the INT8 plan after the stem). This kernel: persistent blocks of 256
// threads, each keeping a 256-channel slice of the weights in shared memory and taking 64
// pixels at a time, the next tile's input and residual in flight (cp.async) while this one's
// mma.sync m16n8k32 s8 products and epilogue run, the tile leaving with 16-byte stores.
//
// The epilogue is the ConvStep's: y = saturate(round((sum * scale[k] + bias[k] + residual *
// residualScale) -> ReLU) * yScale)), in f32, rounding half to even.
//
// `kiln compile --conv-kernels=generated` lowers the convolutions it can run with it (eligible
// below) to this kernel instead of a cuDNN graph; not the default until it has beaten cuDNN
// and matched the interpreter on a GPU.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_KERNELS_POINTWISECONVINT8_H
#define KILN_CODEGEN_KERNELS_POINTWISECONVINT8_H

#include "codegen/kernels/KernelEmitter.h"
#include "runtime/plan/Plan.h"

#include <optional>
#include <string>

namespace kiln::codegen {

/// An INT8 1x1 convolution over channels-last pixels with its epilogue.
struct PointwiseConvInt8 {
  int64_t pixels = 0;   // N * H * W
  int64_t channels = 0; // C, the input's
  int64_t outputs = 0;  // K
  std::optional<DType> bias; // its element type (f32, bf16, f16), when there is one
  bool residual = false;     // an int8 residual (y's shape) times one f32 scale
  bool relu = false;
  /// Kernel parameters, in order: x, w, scale, [bias], [residual, residualScale], yScale, y.
};

/// Why `step` (of `plan`) cannot run as the kernel; nullopt when it can, with `conv` filled in.
/// It needs: channels last; int8 x and w; a 1x1 kernel, stride 1, no padding, one group; C a
/// multiple of 32 up to 256 (the weight slice and two tiles stay in shared memory); K a
/// multiple of 256; int8 y with yScale and no second output; an int8 residual with its scale,
/// or none; ReLU or no activation.
std::optional<std::string> whyNoPointwiseConvInt8Kernel(const plan::Plan &plan, const plan::ConvStep &step,
                                                        PointwiseConvInt8 &conv);

/// The kernel's source and launch (operands numbered as the parameters above; result 0 is y).
StatusOr<EmittedKernels> emitPointwiseConvInt8(const PointwiseConvInt8 &conv, const EmitContext &context);

} // namespace kiln::codegen

#endif // KILN_CODEGEN_KERNELS_POINTWISECONVINT8_H
