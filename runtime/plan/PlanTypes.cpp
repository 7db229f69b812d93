//===- PlanTypes.cpp - element types, enum names and small plan helpers ----===//

#include "runtime/plan/EnumNames.h"

#include <algorithm>
#include <array>

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

constexpr auto kDTypeNames = [] {
  std::array<detail::EnumName, std::size(kDTypes)> names{};
  for (size_t i = 0; i < names.size(); ++i)
    names[i] = {static_cast<uint8_t>(kDTypes[i].type), kDTypes[i].name};
  return names;
}();
constexpr detail::EnumName kSpaceNames[] = {{1, "arena"}, {2, "weights"}};
constexpr detail::EnumName kMathNames[] = {{0, "strict-f32"}, {1, "tf32"}};
constexpr detail::EnumName kActivationNames[] = {{0, "none"},    {1, "relu"},         {2, "gelu"},
                                                 {3, "clip"},    {4, "sigmoid"},      {5, "hard-sigmoid"},
                                                 {6, "hard-swish"}};
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

bool isQuantizedConvType(DType type) { return type == DType::I8 || type == DType::F8E4M3FN; }

std::optional<uint64_t> denseBytes(std::span<const int64_t> shape, DType dtype) {
  uint64_t total = dtypeBytes(dtype);
  if (total == 0)
    return std::nullopt;
  for (int64_t dim : shape)
    if (dim < 0 || __builtin_mul_overflow(total, static_cast<uint64_t>(dim), &total))
      return std::nullopt;
  return total;
}

std::string_view stepRunner(const Step &step) {
  if (std::holds_alternative<KernelStep>(step.params))
    return "kernel";
  if (std::holds_alternative<GemmStep>(step.params))
    return "cublaslt";
  if (std::holds_alternative<ConvStep>(step.params) || std::holds_alternative<AttentionStep>(step.params))
    return "cudnn";
  return "copy";
}

void Plan::setWeights(std::vector<uint8_t> bytes) {
  auto owned = std::make_shared<std::vector<uint8_t>>(std::move(bytes));
  weights = std::span<const uint8_t>(owned->data(), owned->size());
  weightsStorage = owned;
}

bool Plan::operator==(const Plan &other) const {
  return metadata == other.metadata && inputs == other.inputs && outputs == other.outputs &&
         buffers == other.buffers && steps == other.steps && images == other.images &&
         std::ranges::equal(weights, other.weights);
}

namespace detail {

EnumInfo enumInfo(DType) { return {"dtype", kDTypeNames}; }
EnumInfo enumInfo(MemorySpace) { return {"memory space", kSpaceNames}; }
EnumInfo enumInfo(MathMode) { return {"math mode", kMathNames}; }
EnumInfo enumInfo(Activation) { return {"activation", kActivationNames}; }

std::string knownValues(const EnumInfo &info) {
  std::string s;
  for (const EnumName &entry : info.names)
    s += (s.empty() ? "" : ", ") + std::to_string(entry.value) + "=" + std::string(entry.name);
  return s;
}

} // namespace detail
} // namespace kiln::plan
