//===- KernelSource.h - helpers for writing CUDA source --------*- C++ -*-===//
//
// Small pieces every emitter family uses: C type names of element types, row-major strides,
// broadcast index expressions, launch geometry for grid-stride loops.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_KERNELS_KERNELSOURCE_H
#define KILN_CODEGEN_KERNELS_KERNELSOURCE_H

#include "codegen/kernels/KernelEmitter.h"

#include <string>
#include <vector>

namespace kiln::codegen {

/// Storage type in device code: "float", "__half", "__nv_bfloat16", "double",
/// "__nv_fp8_e4m3", "signed char", "short", "int", "long long", "unsigned char", ...;
/// bool is stored as "unsigned char" (0 or 1).
std::string storageType(DType type);
/// Type arithmetic happens in: "float" for f32/f16/bf16/f8, "double" for f64, the integer
/// type itself for integers, "bool" for bool. Use kiln_ld/kiln_st (prelude) to convert.
std::string computeType(DType type);
/// A C++ literal of `value` in `type`'s compute type ("1.5f", "-3LL", "INFINITY", "NAN", ...).
std::string literal(DType type, double value);
std::string literalInt(int64_t value); // "-3LL"

/// Row-major strides (in elements) of `shape`.
std::vector<int64_t> rowMajorStrides(const std::vector<int64_t> &shape);
int64_t product(const std::vector<int64_t> &shape);
/// Whether every row-major index of `shape` fits 32 unsigned bits (at most 2^32 - 1 elements):
/// its index math may then divide in 32 bits, where a 64-bit division by a constant is a
/// multi-word multiply GPUs emulate.
bool indexFitsIn32Bits(const std::vector<int64_t> &shape);

/// Whether `shape` numpy-broadcasts (right-aligned) to `target`.
bool broadcastsTo(const std::vector<int64_t> &shape, const std::vector<int64_t> &target);

/// C expression of the element offset in a tensor of `inShape` that numpy-broadcasts to
/// `outShape`, for the output linear index held in variable `linear` (a long long).
/// Returns "0" for a scalar and `linear` itself when the shapes are equal.
std::string broadcastOffset(const std::vector<int64_t> &inShape, const std::vector<int64_t> &outShape,
                            const std::string &linear);

/// Launch for a grid-stride loop over `count` items: 256 threads a block, at most 8192 blocks.
KernelLaunch gridStrideLaunch(std::string function, int64_t count, std::vector<KernelArg> args);

} // namespace kiln::codegen

#endif // KILN_CODEGEN_KERNELS_KERNELSOURCE_H
