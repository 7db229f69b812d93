//===- PlanTypes.cpp - element types and small plan helpers ---------------===//

#include "runtime/plan/Plan.h"

namespace kiln::plan {
namespace {
struct DTypeInfo {
  DType type;
  std::string_view name;
  size_t bytes;
};
constexpr DTypeInfo kDTypes[] = {
    {DType::F32, "f32", 4},  {DType::F16, "f16", 2},  {DType::BF16, "bf16", 2}, {DType::F64, "f64", 8},
    {DType::F8E4M3FN, "f8e4m3fn", 1}, {DType::I8, "i8", 1}, {DType::I16, "i16", 2}, {DType::I32, "i32", 4},
    {DType::I64, "i64", 8},  {DType::U8, "u8", 1},    {DType::U16, "u16", 2},   {DType::U32, "u32", 4},
    {DType::U64, "u64", 8},  {DType::Bool, "bool", 1},
};
const DTypeInfo *find(DType type) {
  for (const DTypeInfo &info : kDTypes)
    if (info.type == type)
      return &info;
  return nullptr;
}
} // namespace

size_t dtypeBytes(DType type) {
  const DTypeInfo *info = find(type);
  return info ? info->bytes : 0;
}

std::string_view dtypeName(DType type) {
  const DTypeInfo *info = find(type);
  return info ? info->name : std::string_view("?");
}

std::optional<DType> parseDType(std::string_view name) {
  for (const DTypeInfo &info : kDTypes)
    if (info.name == name)
      return info.type;
  return std::nullopt;
}

bool isFloat(DType type) {
  return type == DType::F32 || type == DType::F16 || type == DType::BF16 || type == DType::F64 ||
         type == DType::F8E4M3FN;
}

std::string_view stepRunner(const Step &step) {
  if (std::holds_alternative<KernelStep>(step.params))
    return "kernel";
  if (std::holds_alternative<GemmStep>(step.params))
    return "cublaslt";
  if (std::holds_alternative<ConvStep>(step.params))
    return "cudnn";
  return "copy";
}

void Plan::setWeights(std::vector<uint8_t> bytes) {
  auto owned = std::make_shared<std::vector<uint8_t>>(std::move(bytes));
  weights = std::span<const uint8_t>(owned->data(), owned->size());
  weightsStorage = owned;
}

} // namespace kiln::plan
