//===- ImagePatches.h - a channels-last image as rows of its patches -*- C++ -*-===//
//
// Two passes read an image as its non-overlapping kh x kw patches: a ViT's patch embedding as a
// matmul (NormalizeLinearLayers) and a strided stem convolution over few channels as a stride-1
// convolution over many (SpaceToDepthConvs).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_IMAGEPATCHES_H
#define KILN_PASSES_IMAGEPATCHES_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace kiln {

/// The channels-last image `image` [N, H, W, C] (H, W multiples of kh, kw) as [N, H/kh, W/kw,
/// kh·kw·C]: element (n, i, j, (a·kw + b)·C + c) is image[n, i·kh + a, j·kw + b, c]. A view,
/// a transpose and a view; when `image` is the layout pass's transpose of a channels-first
/// image and has no other user, the patches are gathered from that image (one transpose
/// instead of two): the caller erases the layout transpose once nothing reads it.
mlir::Value gatherPatches(mlir::OpBuilder &builder, mlir::Location loc, mlir::Value image, int64_t kh, int64_t kw);

/// Erases `op` if it is a transpose nothing reads any more (the layout transpose gatherPatches
/// went around).
void eraseIfUnusedTranspose(mlir::Operation *op);

} // namespace kiln

#endif // KILN_PASSES_IMAGEPATCHES_H
