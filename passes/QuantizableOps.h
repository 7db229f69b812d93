//===- QuantizableOps.h - which ops 8-bit quantization covers --*- C++ -*-===//
//
// The ops whose inputs 8-bit quantization converts (conv, conv_transpose, matmul, gemm) and
// the axis of their weight (operand 1) along which output channels lie, for per-channel
// weight scales: `kiln calibrate` measures along it and kiln-insert-quantization scales
// along it.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_QUANTIZABLEOPS_H
#define KILN_PASSES_QUANTIZABLEOPS_H

#include "ir/KilnOps.h"

#include "mlir/IR/Operation.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

/// Whether `op` is a conv, conv_transpose, matmul or gemm.
bool isQuantizableOp(mlir::Operation *op);

/// The output-channel axis of operand 1 of a quantizable op: 0 for a conv's O x I/g x kH x kW
/// weight, 1 for a conv_transpose's I x O/g x kH x kW (each entry covers that channel of every
/// group), the last axis of a matmul's [..., K, N] right operand, 0 or 1 for a gemm's B as
/// trans_b says. std::nullopt for other ops.
std::optional<int64_t> weightChannelAxis(mlir::Operation *op);

/// The largest |w| of each index of `axis` of a float constant (a weight's output channels).
llvm::Expected<std::vector<double>> channelAbsMax(ConstantOp weight, int64_t axis);

/// A matmul in the form kiln-fold-quantization leaves an FP8 linear layer in, ready for a
/// `gemm` group to take both dequantizations:
///   matmul(dequantize(x8), transpose(dequantize(w8 [N, K]), [1, 0]))
/// with each dequantize (and the transpose) used by this matmul alone. std::nullopt otherwise.
struct QuantizedLinearLayer {
  DequantizeOp input;
  DequantizeOp weight;
  TransposeOp weightTranspose;
};
std::optional<QuantizedLinearLayer> matchQuantizedLinearLayer(MatMulOp matmul);

/// Whether a dequantized weight is a constant, or (before the weights fold) a constant's
/// quantization.
bool isConstantWeight(DequantizeOp weight);

/// The channel counts cuDNN's 8-bit (INT8, FP8 E4M3) NHWC convolutions take: output channels a
/// multiple of 16, input channels a multiple of 32 (Hopper's 8-bit MMA steps over 32; with 16
/// only a slow fallback engine runs).
inline constexpr int64_t kQuantizedConvOutputChannelMultiple = 16;
inline constexpr int64_t kQuantizedConvInputChannelMultiple = 32;

/// Whether `element` is what a quantized convolution reads: int8 (cuDNN's INT8 kernels, int32
/// sums) or float8e4m3fn (its FP8 kernels, f32 sums).
bool isConvQuantizedElement(mlir::Type element);

/// Why `conv` of dequantized `input` and `weight` is no 8-bit convolution cuDNN runs; nullopt
/// when it is one: int8 on both sides or E4M3 on both sides (isConvQuantizedElement), zero
/// points 0, the input per tensor, the weight a constant per tensor or per output channel, a
/// channels-last 2-d convolution of one group, C a multiple of 32 and K of 16 (what cuDNN's
/// 8-bit NHWC kernels take).
std::optional<std::string> whyNoQuantizedConv(ConvOp conv, DequantizeOp input, DequantizeOp weight);

/// whyNoQuantizedConv but for the layout: what keeps `conv` from an 8-bit kernel even once it runs
/// channels last (channels read from the layout it has now). An imported QDQ model's convs are
/// judged by it before kiln-convert-layout has run.
std::optional<std::string> whyNoQuantizedConvOnceChannelsLast(ConvOp conv, DequantizeOp input, DequantizeOp weight);

/// Whether `weight` dequantizes a constant (an imported QDQ model's int8 or E4M3 weight) that only
/// convolutions read, as their weight, each with a dequantized input and fit for an 8-bit kernel
/// once channels last (whyNoQuantizedConvOnceChannelsLast). kiln-fold-constants keeps such a
/// dequantization, so the weight stays 8-bit with the model's scales; a weight any other op reads
/// folds into float values as before.
bool isImportedQuantizedConvWeight(DequantizeOp weight);

/// Whether `weight` dequantizes a 2-d E4M3 constant (an imported QDQ model's FP8 linear-layer
/// weight, one scale, zero point 0) that only gemms (trans_a false, alpha and beta 1) and matmuls
/// read, as operand 1, each with an E4M3 input dequantized the same way, K and N multiples of 16:
/// what Hopper's FP8 GEMMs run. kiln-fold-constants keeps such a dequantization.
bool isImportedFp8GemmWeight(DequantizeOp weight);

/// Whether `op` is a conv, gemm or matmul of an imported QDQ model that keeps its 8-bit weight
/// for an 8-bit kernel: a dequantized input, and a weight whose dequantization
/// kiln-fold-constants kept (isImportedQuantizedConvWeight, isImportedFp8GemmWeight).
bool isImportedQuantizedOp(mlir::Operation *op);

/// A conv in the form kiln-fold-quantization leaves an 8-bit convolution in, ready for a `conv`
/// group to take both dequantizations: conv(dequantize(x8), dequantize(w8)), channels last,
/// each dequantize used by this conv alone, whyNoQuantizedConv finding nothing. std::nullopt
/// otherwise.
struct QuantizedConv {
  DequantizeOp input;
  DequantizeOp weight;
};
std::optional<QuantizedConv> matchQuantizedConv(ConvOp conv);

/// Whether `value` is a kiln.constant whose every element is 0 (a symmetric zero point).
bool isZeroConstant(mlir::Value value);

/// Whether `op` is a kiln.quantize or kiln.dequantize with one scale and zero point 0: what the
/// libraries' scaled 8-bit inputs and outputs compute.
bool isSymmetricPerTensorQuantization(mlir::Operation *op);

/// Whether `op` is a kiln.pad adding zeros (constant mode, value 0).
bool isZeroPadding(mlir::Operation *op);

/// A `type` tensor of zeros (0.0 or 0 as its element type is float or integer): a zero point,
/// a padding value.
mlir::DenseElementsAttr zeros(mlir::RankedTensorType type);

} // namespace kiln

#endif // KILN_PASSES_QUANTIZABLEOPS_H
