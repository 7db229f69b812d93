//===- DataMovementSource.cpp - shared pieces of the data-movement family --===//

#include "codegen/kernels/DataMovementSource.h"

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <sstream>

namespace kiln::codegen::datamovement {

std::string rawType(int64_t bytes) {
  switch (bytes) {
  case 1:
    return "unsigned char";
  case 2:
    return "unsigned short";
  case 4:
    return "unsigned int";
  case 8:
    return "unsigned long long";
  case 16:
    return "uint4"; // 16-byte aligned built-in vector: one ld/st.global.v4
  }
  return "void";
}

std::string rawType(DType type) { return rawType(elementBytes(type)); }

int64_t elementBytes(DType type) { return static_cast<int64_t>(plan::dtypeBytes(type)); }

int64_t accessBytes(int64_t elementBytes, const std::vector<int64_t> &rowElements) {
  for (int64_t width : {16, 8, 4, 2}) {
    if (width <= elementBytes)
      break;
    bool divides = true;
    for (int64_t n : rowElements)
      divides = divides && (n * elementBytes) % width == 0;
    if (divides)
      return width;
  }
  return elementBytes;
}

std::string formatShape(const std::vector<int64_t> &shape) {
  if (shape.empty())
    return "scalar";
  std::string text;
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? "x" : "") + std::to_string(shape[i]);
  return text;
}

std::string udiv(const std::string &expr, int64_t divisor) {
  return "((kiln_i64)((kiln_u64)(" + expr + ") / " + std::to_string(divisor) + "ULL))";
}

std::string umod(const std::string &expr, int64_t divisor) {
  return "((kiln_i64)((kiln_u64)(" + expr + ") % " + std::to_string(divisor) + "ULL))";
}

std::string decodeCoords(const std::vector<int64_t> &shape, const std::string &linear, const std::string &prefix) {
  std::ostringstream os;
  int64_t rank = static_cast<int64_t>(shape.size());
  // The axes that need a division: all but size-1 ones; the outermost such axis takes the rest.
  int64_t outermost = -1;
  for (int64_t d = 0; d < rank && outermost < 0; ++d)
    if (shape[d] != 1)
      outermost = d;
  // Unsigned: the index is never negative, and unsigned division by a constant is a shorter
  // multiply-shift sequence than the signed one. 32 bits where every index of the shape fits
  // (indexFitsIn32Bits): a chain of 64-bit decodes made index math, not memory, the cost of
  // data movement kernels.
  bool narrow = indexFitsIn32Bits(shape);
  const char *type = narrow ? "unsigned" : "kiln_u64", *suffix = narrow ? "U" : "ULL";
  if (outermost >= 0)
    os << type << " " << prefix << "rem = (" << type << ")(" << linear << ");\n";
  for (int64_t d = rank - 1; d >= 0; --d) {
    // Maps skip axes whose coordinate cannot matter; the attribute keeps NVRTC's log quiet.
    os << "[[maybe_unused]] const kiln_i64 " << prefix << d << " = ";
    if (shape[d] == 1)
      os << "0;\n";
    else if (d == outermost)
      os << "(kiln_i64)" << prefix << "rem;\n";
    else
      os << "(kiln_i64)(" << prefix << "rem % " << shape[d] << suffix << "); " << prefix << "rem /= " << shape[d]
         << suffix << ";\n";
  }
  return os.str();
}

void addLoopKernel(EmittedKernels &out, const LoopKernel &kernel) {
  std::ostringstream os;
  os << "extern \"C\" __global__ void __launch_bounds__(256) " << kernel.function << "(";
  std::vector<KernelArg> args;
  for (size_t i = 0; i < kernel.params.size(); ++i) {
    os << (i ? ", " : "") << kernel.params[i].decl;
    args.push_back(kernel.params[i].arg);
  }
  os << ") {\n";
  if (kernel.count > 0) {
    os << kernel.prologue;
    os << "for (kiln_i64 j = (kiln_i64)blockIdx.x * blockDim.x + threadIdx.x; j < " << literalInt(kernel.count)
       << "; j += (kiln_i64)gridDim.x * blockDim.x) {\n"
       << kernel.body << "}\n";
  } else {
    os << "// The result is empty: nothing to write.\n";
  }
  os << "}\n";
  out.source += os.str();
  out.launches.push_back(gridStrideLaunch(kernel.function, kernel.count, std::move(args)));
}

Status expectArity(const OpDesc &op, size_t operands, size_t results) {
  if (op.operands.size() != operands || op.results.size() != results)
    return op.error("expected " + std::to_string(operands) + " operands and " + std::to_string(results) +
                    " results, got " + std::to_string(op.operands.size()) + " and " +
                    std::to_string(op.results.size()) + "; the op description does not match kiln's ODS");
  for (size_t i = 0; i < operands; ++i)
    if (!op.operands[i])
      return op.error("operand " + std::to_string(i) + " is missing; it is required");
  return Status::ok();
}

Status expectDType(const OpDesc &op, const TensorDesc &tensor, DType type, const std::string &what) {
  if (tensor.dtype != type)
    return op.error(what + " has element type " + std::string(plan::dtypeName(tensor.dtype)) + ", expected " +
                    std::string(plan::dtypeName(type)));
  return Status::ok();
}

Status expectResultShape(const OpDesc &op, const std::vector<int64_t> &expected, size_t result) {
  if (op.results[result].shape != expected)
    return op.error("result " + std::to_string(result) + " has shape " + formatShape(op.results[result].shape) +
                    ", the operands give " + formatShape(expected));
  return Status::ok();
}

std::string rawLiteral(DType type, int64_t intValue, double floatValue) {
  char buf[64];
  switch (type) {
  case DType::F32: {
    float f = static_cast<float>(floatValue);
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    std::snprintf(buf, sizeof buf, "0x%08xu", bits);
    return buf;
  }
  case DType::F64: {
    uint64_t bits;
    std::memcpy(&bits, &floatValue, sizeof bits);
    std::snprintf(buf, sizeof buf, "0x%016llxull", static_cast<unsigned long long>(bits));
    return buf;
  }
  // The value is exact in the type, so converting it on the device only picks the bits.
  case DType::F16:
    return "__half_as_ushort(__double2half(" + literal(DType::F64, floatValue) + "))";
  case DType::BF16:
    return "__bfloat16_as_ushort(__double2bfloat16(" + literal(DType::F64, floatValue) + "))";
  case DType::F8E4M3FN:
    return "((unsigned char)__nv_cvt_double_to_fp8(" + literal(DType::F64, floatValue) + ", __NV_NOSAT, __NV_E4M3))";
  case DType::Bool:
    return intValue != 0 ? "((unsigned char)1)" : "((unsigned char)0)";
  default:
    return "((" + rawType(type) + ")" + literalInt(intValue) + ")";
  }
}

IntOperand::IntOperand(const TensorDesc &tensor, uint32_t operandIndex, std::string name,
                       std::optional<std::vector<int64_t>> baked)
    : dtype_(tensor.dtype), operand_(operandIndex), name_(std::move(name)), count_(tensor.numElements()) {
  if (baked)
    values_ = std::move(baked);
  else if (tensor.ints)
    values_ = tensor.ints;
  else if (tensor.floats) {
    values_.emplace();
    for (double v : *tensor.floats)
      values_->push_back(static_cast<int64_t>(v));
  }
}

std::string IntOperand::globals(const std::string &symbol) const {
  if (!values_ || values_->size() <= 1)
    return "";
  std::ostringstream os;
  // A table in global memory, read through the read-only cache: __constant__ memory would
  // serialize the reads of a warp whose threads look at different entries.
  os << "__device__ const long long " << symbol << name_ << "[" << values_->size() << "] = {";
  for (size_t i = 0; i < values_->size(); ++i)
    os << (i ? ", " : "") << literalInt((*values_)[i]);
  os << "};\n";
  return os.str();
}

std::string IntOperand::at(const std::string &symbol, const std::string &index) const {
  if (!values_)
    return "((kiln_i64)" + name_ + "[" + index + "])";
  int64_t constantIndex = 0;
  auto [end, ec] = std::from_chars(index.data(), index.data() + index.size(), constantIndex);
  bool isConstantIndex = ec == std::errc() && end == index.data() + index.size();
  if (values_->size() == 1)
    return literalInt(values_->front());
  if (isConstantIndex && constantIndex >= 0 && constantIndex < static_cast<int64_t>(values_->size()))
    return literalInt((*values_)[constantIndex]);
  return "((kiln_i64)" + symbol + name_ + "[" + index + "])";
}

std::optional<KernelParam> IntOperand::param() const {
  if (values_)
    return std::nullopt;
  return KernelParam{"const " + storageType(dtype_) + " *__restrict__ " + name_, KernelArg::operand(operand_)};
}

void addParam(LoopKernel &kernel, const std::optional<KernelParam> &param) {
  if (param)
    kernel.params.push_back(*param);
}

} // namespace kiln::codegen::datamovement
