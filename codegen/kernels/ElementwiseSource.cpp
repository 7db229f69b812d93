//===- ElementwiseSource.cpp - the elementwise kernel builder --------------===//

#include "codegen/kernels/ElementwiseSource.h"

#include <algorithm>
#include <sstream>

namespace kiln::codegen::elementwise {

//===-- Types -------------------------------------------------------------===//

bool isSignedInt(DType type) {
  return type == DType::I8 || type == DType::I16 || type == DType::I32 || type == DType::I64;
}

bool isUnsignedInt(DType type) {
  return type == DType::U8 || type == DType::U16 || type == DType::U32 || type == DType::U64;
}

bool inClass(DType type, TypeClass cls) {
  switch (cls) {
  case TypeClass::Float: return plan::isFloat(type);
  case TypeClass::Integer: return isSignedInt(type) || isUnsignedInt(type);
  case TypeClass::Numeric: return type != DType::Bool;
  case TypeClass::Bool: return type == DType::Bool;
  case TypeClass::Any: return true;
  case TypeClass::Quant:
    return type == DType::I8 || type == DType::U8 || type == DType::I32 || type == DType::F8E4M3FN;
  }
  return false;
}

std::string className(TypeClass cls) {
  switch (cls) {
  case TypeClass::Float: return "a float type (f64, f32, f16, bf16, f8E4M3FN)";
  case TypeClass::Integer: return "an integer type";
  case TypeClass::Numeric: return "a numeric type (float or integer, not bool)";
  case TypeClass::Bool: return "bool (i1)";
  case TypeClass::Any: return "any element type";
  case TypeClass::Quant: return "i8, u8, i32 or f8E4M3FN";
  }
  return "";
}

Status checkOperands(const OpDesc &op, size_t count) {
  if (op.operands.size() != count)
    return op.error("expected " + std::to_string(count) + " operands, got " + std::to_string(op.operands.size()));
  for (size_t i = 0; i < count; ++i)
    if (!op.operands[i])
      return op.error("operand " + std::to_string(i) + " is missing; every operand of this op is required");
  if (op.results.size() != 1)
    return op.error("expected one result, got " + std::to_string(op.results.size()));
  return Status::ok();
}

Status checkType(const OpDesc &op, const std::string &what, DType type, TypeClass cls) {
  if (inClass(type, cls))
    return Status::ok();
  return op.error(what + " has element type " + std::string(plan::dtypeName(type)) + ", which the op does not take; "
                  "it must be " + className(cls));
}

//===-- Literals and stores -----------------------------------------------===//

std::string literalAs(const std::string &valueType, double value) {
  if (valueType == "double")
    return literal(DType::F64, value);
  if (valueType == "float")
    return literal(DType::F32, value);
  if (valueType == "bool")
    return value != 0 ? "true" : "false";
  return literalAsInt(valueType, static_cast<int64_t>(value));
}

std::string literalAsInt(const std::string &valueType, int64_t value) {
  if (valueType == "bool")
    return value != 0 ? "true" : "false";
  if (valueType == "double" || valueType == "float")
    return literalAs(valueType, static_cast<double>(value));
  // Unsigned values arrive as their 64-bit pattern; the cast gives them back.
  return "((" + valueType + ")" + literalInt(value) + ")";
}

std::string storeValue(DType result, const std::string &value) {
  switch (result) {
  case DType::F8E4M3FN: return "po[oo].__x = __nv_cvt_float_to_fp8(" + value + ", __NV_NOSAT, __NV_E4M3);";
  case DType::Bool: return "kiln_st(po, oo, (bool)(" + value + "));";
  default: return "kiln_st(po, oo, " + value + ");";
  }
}

std::string storeDouble(DType result, const std::string &value, bool saturateF8) {
  const std::string v = "(double)(" + value + ")";
  switch (result) {
  case DType::F64: return "po[oo] = " + v + ";";
  case DType::F32: return "po[oo] = (float)" + v + ";"; // cvt.rn: overflow gives inf
  case DType::F16: return "po[oo] = __double2half(" + v + ");";
  case DType::BF16: return "po[oo] = __double2bfloat16(" + v + ");";
  case DType::F8E4M3FN:
    return "po[oo].__x = __nv_cvt_double_to_fp8(" + v + ", " + (saturateF8 ? "__NV_SATFINITE" : "__NV_NOSAT") +
           ", __NV_E4M3);";
  case DType::Bool: return "po[oo] = (unsigned char)(" + v + " != 0.0);";
  case DType::I8: return "po[oo] = (signed char)kiln_ew_f2s(" + v + ", -128.0, 127.0);";
  case DType::I16: return "po[oo] = (short)kiln_ew_f2s(" + v + ", -32768.0, 32767.0);";
  case DType::I32: return "po[oo] = (int)kiln_ew_f2s(" + v + ", -2147483648.0, 2147483647.0);";
  case DType::I64: return "po[oo] = kiln_ew_f2s64(" + v + ");";
  case DType::U8: return "po[oo] = (unsigned char)kiln_ew_f2u(" + v + ", 255.0);";
  case DType::U16: return "po[oo] = (unsigned short)kiln_ew_f2u(" + v + ", 65535.0);";
  case DType::U32: return "po[oo] = (unsigned int)kiln_ew_f2u(" + v + ", 4294967295.0);";
  case DType::U64: return "po[oo] = kiln_ew_f2u64(" + v + ");";
  }
  return "";
}

//===-- Inputs ------------------------------------------------------------===//

Input operandInput(const OpDesc &op, uint32_t index, std::string valueType) {
  const TensorDesc &t = *op.operands[index];
  Input in;
  in.operand = index;
  in.dtype = t.dtype;
  in.shape = t.shape;
  in.valueType = std::move(valueType);
  if (t.numElements() == 1) {
    if (t.floats && !t.floats->empty())
      in.constant = literalAs(in.valueType, t.floats->front());
    else if (t.ints && !t.ints->empty())
      in.constant = literalAsInt(in.valueType, t.ints->front());
  }
  return in;
}

//===-- Layout ------------------------------------------------------------===//

namespace {

struct Layout {
  std::vector<int64_t> result;
  std::vector<std::vector<int64_t>> inputs; // each of the result's rank
};

/// Drops size-1 result axes and merges neighbouring axes along which every input behaves the
/// same (spans both or broadcasts along both). Linear indices of the result and offsets into
/// the inputs are unchanged by this, so it only removes divisions from the offset arithmetic.
/// Inputs must already be checked to broadcast to `result`.
Layout coalesce(const std::vector<int64_t> &result, const std::vector<std::vector<int64_t>> &inputs) {
  Layout layout;
  layout.inputs.resize(inputs.size());
  if (product(result) == 0)
    return layout; // no elements: nothing is read
  std::vector<bool> previous;
  for (size_t d = 0; d < result.size(); ++d) {
    if (result[d] == 1)
      continue;
    std::vector<bool> spans(inputs.size());
    for (size_t j = 0; j < inputs.size(); ++j) {
      size_t lead = result.size() - inputs[j].size();
      spans[j] = d >= lead && inputs[j][d - lead] != 1;
    }
    if (!layout.result.empty() && spans == previous) {
      layout.result.back() *= result[d];
      for (size_t j = 0; j < inputs.size(); ++j)
        if (spans[j])
          layout.inputs[j].back() *= result[d];
      continue;
    }
    layout.result.push_back(result[d]);
    for (size_t j = 0; j < inputs.size(); ++j)
      layout.inputs[j].push_back(spans[j] ? result[d] : 1);
    previous = spans;
  }
  return layout;
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

Status checkBroadcast(const OpDesc &op, const Input &in, const std::vector<int64_t> &result) {
  if (broadcastsTo(in.shape, result))
    return Status::ok();
  return op.error("operand " + std::to_string(in.operand) + " of shape " + shapeText(in.shape) +
                  " does not broadcast to the result shape " + shapeText(result));
}

} // namespace

//===-- The kernel --------------------------------------------------------===//

StatusOr<EmittedKernels> emitKernel(const OpDesc &op, const EmitContext &context, const Kernel &kernel) {
  for (const Input &in : kernel.inputs)
    if (Status s = checkBroadcast(op, in, kernel.shape); !s.isOk())
      return s;

  const std::string fn = context.symbol + kernel.name;
  const std::string outType = storageType(kernel.result);
  const int64_t count = product(kernel.shape);

  // Inputs read from memory (baked constants are not parameters).
  std::vector<size_t> read;
  std::vector<std::vector<int64_t>> readShapes;
  for (size_t k = 0; k < kernel.inputs.size(); ++k)
    if (!kernel.inputs[k].constant) {
      read.push_back(k);
      readShapes.push_back(kernel.inputs[k].shape);
    }
  Layout layout = coalesce(kernel.shape, readShapes);

  std::ostringstream src;
  // The element function: one result element from the inputs' elements.
  src << "__device__ __forceinline__ void " << fn << "_e(";
  for (size_t r = 0; r < read.size(); ++r) {
    const Input &in = kernel.inputs[read[r]];
    src << "const " << storageType(in.dtype) << " *p" << read[r] << ", kiln_i64 o" << read[r] << ", ";
  }
  src << outType << " *po, kiln_i64 oo) {\n";
  for (size_t k = 0; k < kernel.inputs.size(); ++k) {
    const Input &in = kernel.inputs[k];
    if (in.constant)
      src << "  const " << in.valueType << " x" << k << " = " << *in.constant << ";\n";
    else
      src << "  const " << in.valueType << " x" << k << " = kiln_ld(p" << k << ", o" << k << ");\n";
  }
  src << "  " << kernel.body << "\n}\n";

  // Vectorize over chunks of `lanes` consecutive result elements (16-byte accesses of the widest
  // tensor). An input read is either a single element, the result's shape, or -- when the
  // innermost coalesced axis is a multiple of `lanes`, so no chunk crosses a row -- broadcast
  // along outer axes: a chunk then reads `lanes` consecutive elements of it at the chunk's
  // offset (a bias row), or one element for the whole chunk when the input broadcasts along the
  // innermost axis too (a per-channel scale over H*W). Offsets of chunk starts are multiples of
  // `lanes`, so the vector loads stay aligned.
  enum class Access { Scalar, Full, Row, Splat };
  size_t widest = plan::dtypeBytes(kernel.result);
  for (size_t r = 0; r < read.size(); ++r)
    widest = std::max(widest, plan::dtypeBytes(kernel.inputs[read[r]].dtype));
  const int64_t lanes = 16 / static_cast<int64_t>(widest);
  const bool rowsAligned = !layout.result.empty() && layout.result.back() % lanes == 0;
  bool vectorize = count >= 2 * lanes;
  std::vector<Access> access(read.size(), Access::Full);
  for (size_t r = 0; r < read.size(); ++r) {
    if (product(layout.inputs[r]) == 1 && count != 1)
      access[r] = Access::Scalar;
    else if (layout.inputs[r] == layout.result)
      access[r] = Access::Full;
    else if (rowsAligned)
      access[r] = layout.inputs[r].back() == layout.result.back() ? Access::Row : Access::Splat;
    else
      vectorize = false;
  }

  src << "extern \"C\" __global__ void " << fn << "(";
  for (size_t r = 0; r < read.size(); ++r)
    src << "const " << storageType(kernel.inputs[read[r]].dtype) << " *a" << read[r] << ", ";
  src << outType << " *out) {\n"
      << "  const kiln_i64 start = (kiln_i64)blockIdx.x * blockDim.x + threadIdx.x;\n"
      << "  const kiln_i64 step = (kiln_i64)gridDim.x * blockDim.x;\n";
  auto call = [&](const std::vector<std::string> &args, const std::string &outArgs) {
    std::string text = fn + "_e(";
    for (const std::string &a : args)
      text += a + ", ";
    return text + outArgs + ");";
  };
  std::vector<std::string> scalarArgs;
  for (size_t r = 0; r < read.size(); ++r)
    scalarArgs.push_back("a" + std::to_string(read[r]) + ", (kiln_i64)" +
                         broadcastOffset(layout.inputs[r], layout.result, "u"));
  std::string tailStart = "start";
  if (vectorize) {
    // 16-byte accesses of the widest tensor; the others move `lanes` elements as well.
    const std::string l = std::to_string(lanes);
    const std::string chunks = literalInt(count / lanes);
    src << "  for (kiln_i64 c = start; c < " << chunks << "; c += step) {\n"
        << "    const kiln_u64 u = (kiln_u64)c * " << l << ";\n";
    std::vector<std::string> vecArgs;
    for (size_t r = 0; r < read.size(); ++r) {
      const std::string k = std::to_string(read[r]);
      const std::string offset = "(kiln_i64)" + broadcastOffset(layout.inputs[r], layout.result, "u");
      const std::string vt = "kiln_ew_vec<" + storageType(kernel.inputs[read[r]].dtype) + ", " + l + ">";
      switch (access[r]) {
      case Access::Scalar: vecArgs.push_back("a" + k + ", 0"); break;
      case Access::Splat: vecArgs.push_back("a" + k + ", " + offset); break;
      case Access::Full:
        src << "    const " << vt << " v" << k << " = reinterpret_cast<const " << vt << " *>(a" << k << ")[c];\n";
        vecArgs.push_back("v" + k + ".v, j");
        break;
      case Access::Row:
        src << "    const " << vt << " v" << k << " = *reinterpret_cast<const " << vt << " *>(a" << k << " + " << offset
            << ");\n";
        vecArgs.push_back("v" + k + ".v, j");
        break;
      }
    }
    const std::string ot = "kiln_ew_vec<" + outType + ", " + l + ">";
    src << "    " << ot << " vo;\n"
        << "#pragma unroll\n"
        << "    for (int j = 0; j < " << l << "; ++j)\n"
        << "      " << call(vecArgs, "vo.v, j") << "\n"
        << "    reinterpret_cast<" << ot << " *>(out)[c] = vo;\n"
        << "  }\n";
    tailStart = literalInt(count / lanes * lanes) + " + start";
  }
  if (!vectorize || count % lanes != 0) {
    src << "  for (kiln_i64 i = " << tailStart << "; i < " << literalInt(count) << "; i += step) {\n"
        << "    const kiln_u64 u = (kiln_u64)i;\n"
        << "    " << call(scalarArgs, "out, i") << "\n"
        << "  }\n";
  }
  src << "}\n";

  std::vector<KernelArg> args;
  for (size_t k : read)
    args.push_back(KernelArg::operand(kernel.inputs[k].operand));
  args.push_back(KernelArg::result(0));
  EmittedKernels emitted;
  emitted.source = src.str();
  emitted.launches.push_back(gridStrideLaunch(fn, vectorize ? count / lanes : count, std::move(args)));
  return emitted;
}

} // namespace kiln::codegen::elementwise
