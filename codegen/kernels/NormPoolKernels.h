//===- NormPoolKernels.h - pooling, normalization, resize (internal) -*- C++ -*-===//
//
// The pooling/normalization/resize family is split over NormPool*.cpp by op kind; this header
// is what those files share: the emitters (registered in NormPoolKernels.cpp), operand checks,
// source templating, and the host-side resize tap computation (exposed so tests can check it
// against ONNX reference values without a GPU).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_KERNELS_NORMPOOLKERNELS_H
#define KILN_CODEGEN_KERNELS_NORMPOOLKERNELS_H

#include "codegen/kernels/KernelSource.h"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::codegen::normpool {

// Emitters, one per op (NormPoolPooling.cpp, NormPoolNorms.cpp, NormPoolResize.cpp).
StatusOr<EmittedKernels> emitMaxPool(const OpDesc &op, const EmitContext &context);
StatusOr<EmittedKernels> emitAvgPool(const OpDesc &op, const EmitContext &context);
StatusOr<EmittedKernels> emitGlobalAvgPool(const OpDesc &op, const EmitContext &context);
StatusOr<EmittedKernels> emitGlobalMaxPool(const OpDesc &op, const EmitContext &context);
StatusOr<EmittedKernels> emitBatchNorm(const OpDesc &op, const EmitContext &context);
StatusOr<EmittedKernels> emitInstanceNorm(const OpDesc &op, const EmitContext &context);
StatusOr<EmittedKernels> emitLayerNorm(const OpDesc &op, const EmitContext &context);
StatusOr<EmittedKernels> emitGroupNorm(const OpDesc &op, const EmitContext &context);
/// A `norm` kiln.fusion_group: its layer_norm's kernel computing the input from the body's ops
/// before the layer_norm and storing, per element, the values the group yields.
StatusOr<EmittedKernels> emitNormGroup(const OpDesc &group, const EmitContext &context);
/// A `pool` kiln.fusion_group: a channels-last pool and the elementwise chain after it, one
/// kernel (NormPoolPoolGroup.cpp).
StatusOr<EmittedKernels> emitPoolGroup(const OpDesc &group, const EmitContext &context);
StatusOr<EmittedKernels> emitResize(const OpDesc &op, const EmitContext &context);

//===-- Shared helpers (NormPoolKernels.cpp) --------------------------------===//

/// Returns the Status of `expr` from the enclosing function when it is an error.
#define KILN_NP_TRY(expr)                                                                      \
  do {                                                                                         \
    if (::kiln::runtime::Status kilnNpStatus = (expr); !kilnNpStatus.isOk())                   \
      return kilnNpStatus;                                                                     \
  } while (false)

/// `text` with every "@KEY@" replaced by its value. Templates keep kernel source readable.
std::string fill(std::string_view text, const std::vector<std::pair<std::string, std::string>> &values);

/// Checks that the op has `operands` operand slots and `results` results (the ODS counts).
Status checkArity(const OpDesc &op, size_t operands, size_t results);
/// The operand in slot `index`, or an error naming `role` when the slot is empty.
StatusOr<const TensorDesc *> requireOperand(const OpDesc &op, size_t index, const std::string &role);
/// An error unless `tensor` has a floating-point element type (f64/f32/f16/bf16/f8E4M3FN).
Status requireFloat(const OpDesc &op, const TensorDesc &tensor, const std::string &role);
/// An error unless the result has the input's element type and shape `shape`.
Status requireResult(const OpDesc &op, DType dtype, const std::vector<int64_t> &shape);
/// "[2, 3, 4]" for messages.
std::string formatShape(const std::vector<int64_t> &shape);

/// Launch over `rows` independent rows with one warp per row, 8 warps a block.
KernelLaunch warpPerRowLaunch(std::string function, int64_t rows, std::vector<KernelArg> args);
/// Launch over `rows` independent rows with one block of `threads` threads per row.
KernelLaunch blockPerRowLaunch(std::string function, int64_t rows, uint32_t threads, std::vector<KernelArg> args);

//===-- Pooling (NormPoolPooling.cpp, NormPoolPoolingChannelsLast.cpp) -------===//

/// Window geometry with 3 spatial axes (leading unit axes for 1-d and 2-d pools).
struct PoolGeometry {
  int64_t image[3], positions[3], kernel[3], stride[3], dilation[3], padBegin[3], padEnd[3];
};

/// What a max/avg pool kernel does per window, as source snippets. Each lane of a channel
/// vector has its accumulator `name@L@` (L is "" with one lane, "[j]" for lane j), starting at
/// `identity`; `init` is per-window state before the taps, `tap` runs once per tap inside the
/// image, `lane` once per element of the tap (it reads `@CT@ v`), and `result` is the value of
/// a lane after the taps.
struct PoolBody {
  std::string name, identity, init, tap, lane, result;
  bool includePad = false; // `result` reads `padded`, the taps inside the padded image
};

/// The pool's source values shared by both layouts (FN, T, CT, the geometry's P/I/K/S/D/PB/PE).
std::vector<std::pair<std::string, std::string>> poolValues(const std::string &fn, DType dtype,
                                                            const PoolGeometry &g);

/// Elements of a 16-byte (or narrower) access along the channel axis: the widest power of two
/// that divides `channels`, 1 when none does (buffers are 256-byte aligned, so a channel vector
/// that starts at a multiple of its width is aligned).
int64_t channelVectorWidth(DType dtype, int64_t channels);

/// What a `pool` fusion group computes from each pooled element: `statements` read the pool's
/// value from the local `v0[1]` (the pool's storage type, rounded as the op stores it) and
/// leave the group's value in `value`, of storage type `result`.
struct PoolEpilogue {
  DType result;
  std::string statements, value;
};

/// kiln.max_pool / kiln.avg_pool with `channels_last`: [N, D1..Dk, C] -> [N, P1..Pk, C]. The
/// op has been validated and `g` is its geometry; `total` output elements (> 0). With an
/// `epilogue`, the kernel writes the epilogue's value of each pooled element instead.
StatusOr<EmittedKernels> emitChannelsLastPool(const OpDesc &op, const EmitContext &context, bool isMax,
                                              const PoolGeometry &g, const PoolBody &body,
                                              const PoolEpilogue *epilogue = nullptr);
/// kiln.max_pool / kiln.avg_pool (either layout), validated; with an `epilogue`, which only
/// the channels-last kernel takes, the pool of a `pool` fusion group.
StatusOr<EmittedKernels> emitPool(const OpDesc &op, const EmitContext &context, bool isMax,
                                  const PoolEpilogue *epilogue = nullptr);
/// kiln.global_avg_pool / kiln.global_max_pool with `channels_last`: [N, D1..Dk, C] -> [N, 1..1, C].
/// The op has been validated (float input).
StatusOr<EmittedKernels> emitChannelsLastGlobalPool(const OpDesc &op, const EmitContext &context, bool isMax);

//===-- Resize taps (NormPoolResize.cpp) -------------------------------------===//

struct ResizeAxisParams {
  std::string mode = "nearest";             // nearest | linear | cubic
  std::string transform = "half_pixel";     // coordinate_transformation_mode
  std::string nearestMode = "round_prefer_floor";
  double cubicA = -0.75;
  bool excludeOutside = false;
  /// Element type of the roi operand: the reference does roi arithmetic in it.
  std::optional<DType> roiType;
};

/// One output position along one axis: the input positions (clamped to the axis) and their
/// weights, or `extrapolated` when tf_crop_and_resize maps it outside the input.
struct ResizeAxisTap {
  bool extrapolated = false;
  std::vector<int64_t> index;
  std::vector<double> weight;
};

/// The taps of every output position of one axis, computed in double exactly as the reference
/// interpreter does (ir/Interpreter/DataMovementEval.cpp, resizeTaps).
std::vector<ResizeAxisTap> resizeAxisTaps(const ResizeAxisParams &params, int64_t inSize, int64_t outSize,
                                          double scale, double roiBegin, double roiEnd);

/// `value` rounded to the nearest value of float type `type` (ties to even); beyond the largest
/// finite value: infinity, or NaN for f8E4M3FN (which has no infinity), as the interpreter does.
double roundToDType(double value, DType type);

//===-- Resize with runtime scales/roi (NormPoolResizeRuntime.cpp) ----------===//

/// kiln.resize whose scales or roi is a runtime tensor: the kernel reads them from device memory
/// and computes the taps per output element. `op` has been validated by emitResize.
StatusOr<EmittedKernels> emitRuntimeResize(const OpDesc &op, const EmitContext &context,
                                           const ResizeAxisParams &params, double extrapolationValue);

/// One output position as the runtime-resize kernel sees it: the device tap code compiled for
/// the host (the very same source text), so tests can compare it with resizeAxisTaps.
struct DeviceResizeTap {
  /// Identity: the interpreter skips the axis (tap = the position itself, weight 1). Invalid: a
  /// scale that is not positive and finite or a non-finite source coordinate (output NaN).
  enum Kind { Taps, Identity, Extrapolated, Invalid };
  Kind kind = Taps;
  ResizeAxisTap tap;
};
DeviceResizeTap deviceResizeTap(const ResizeAxisParams &params, int64_t inSize, int64_t outSize, double scale,
                                bool hasRoi, double roiBegin, double roiEnd, int64_t position);
/// The device's rounding of roi arithmetic to `roiType` (compiled for the host).
double deviceRoundRoi(double value, DType roiType);

} // namespace kiln::codegen::normpool

#endif // KILN_CODEGEN_KERNELS_NORMPOOLKERNELS_H
