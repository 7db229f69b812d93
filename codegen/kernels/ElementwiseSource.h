//===- ElementwiseSource.h - one kernel shape for every elementwise op -*- C++ -*-===//
//
// Every op of the elementwise family is "result[i] = f(inputs at i)" over the result's
// elements with numpy broadcasting. The op emitters (ElementwiseKernels.cpp,
// ElementwiseConvert.cpp) only describe f: the C type each input is read as and the statements
// that store the result element. This builder writes the rest:
//  * a __device__ element function `<symbol><name>_e` computing one result element;
//  * the kernel `<symbol><name>`: a grid-stride loop calling it, with broadcast offsets computed
//    on coalesced axes (size-1 result axes dropped, neighbouring axes that every input either
//    spans or broadcasts along merged, so a bias add needs one division, not four);
//  * a vectorized loop that moves 16 bytes per access of the widest tensor (buffers are 256-byte
//    aligned), plus a scalar tail, when every input has the result's shape or one element, or
//    the innermost coalesced axis is a multiple of the vector width (a bias row or a
//    per-channel value then needs one offset per chunk, not per element).
// Single-element constant operands are baked into the source and are not kernel parameters.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_KERNELS_ELEMENTWISESOURCE_H
#define KILN_CODEGEN_KERNELS_ELEMENTWISESOURCE_H

#include "codegen/kernels/KernelSource.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln::codegen::elementwise {

/// One input of an elementwise kernel.
struct Input {
  uint32_t operand = 0;        // index into OpDesc::operands, and KernelArg::operand
  DType dtype = DType::F32;
  std::vector<int64_t> shape;  // broadcasts (numpy) to the result; may be a virtual shape,
                               // e.g. [1, C, 1, 1] for a per-axis quantization scale
  std::string valueType;       // C type of the element function's variable x<k>
  std::optional<std::string> constant; // a literal of valueType when the value is baked
};

/// An elementwise kernel. `body` is the element function's statements: the inputs' values are
/// x0, x1, ... (declared by the builder); the result element is `po[oo]` (see store*).
struct Kernel {
  std::string name; // the kernel is `<symbol><name>`
  std::vector<Input> inputs;
  DType result = DType::F32;
  std::vector<int64_t> shape; // of the result
  std::string body;
};

/// Source and launch of `kernel`; an error naming the op when an input does not broadcast to
/// the result shape.
StatusOr<EmittedKernels> emitKernel(const OpDesc &op, const EmitContext &context, const Kernel &kernel);

/// Operand `index` of `op` as an input read as `valueType`; a single-element constant is baked.
/// The caller has checked that the operand is present.
Input operandInput(const OpDesc &op, uint32_t index, std::string valueType);

/// Statement storing `value` (of `computeType(result)`, i.e. float for f16/bf16/f8) in the
/// result element, rounded to nearest even. f8E4M3FN overflow becomes NaN, as the interpreter
/// rounds computed values (only Cast and Quantize saturate, through storeDouble).
std::string storeValue(DType result, const std::string &value);

/// Statement storing a double `value` the way the interpreter's storeDouble does: one rounding
/// to nearest even for floats (f8E4M3FN: saturating to +-448 with `saturateF8`, else NaN on
/// overflow); for integers truncation toward zero, saturation to the type's range and NaN -> 0;
/// bool is value != 0.
std::string storeDouble(DType result, const std::string &value, bool saturateF8 = false);

/// A C literal of `value` in the C type `valueType` ("float", "double", "bool", or an integer
/// storage type).
std::string literalAs(const std::string &valueType, double value);
std::string literalAsInt(const std::string &valueType, int64_t value);

bool isSignedInt(DType type);
bool isUnsignedInt(DType type);

/// The element types an op's ODS constraint allows, for checks and messages.
enum class TypeClass { Float, Integer, Numeric, Bool, Any, Quant };
bool inClass(DType type, TypeClass cls);
std::string className(TypeClass cls);

/// Checks that `op` has `count` operands, all present, and one result.
Status checkOperands(const OpDesc &op, size_t count);
/// Checks that `type` (of the operand or result called `what`) is in `cls`.
Status checkType(const OpDesc &op, const std::string &what, DType type, TypeClass cls);

// The conversion ops (ElementwiseConvert.cpp); ElementwiseKernels.cpp registers them.
StatusOr<Kernel> castElement(const OpDesc &op);
StatusOr<Kernel> quantizeElement(const OpDesc &op);
StatusOr<Kernel> dequantizeElement(const OpDesc &op);

/// The element function of an op of the elementwise family (inputs, body and result of its
/// kernel, before the loop around it is built): what a standalone kernel computes per result
/// element and what a fused group composes. An error naming the op when it is not in the family
/// or cannot be emitted.
StatusOr<Kernel> describeElement(const OpDesc &op);

} // namespace kiln::codegen::elementwise

#endif // KILN_CODEGEN_KERNELS_ELEMENTWISESOURCE_H
