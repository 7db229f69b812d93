//===- PlanSections.cpp - encoding of the plan file's sections -------------===//
//
// One encoder and one decoder, both driven by the structs' visitFields lists (Plan.h), so the
// two cannot drift apart and a new field needs no code here. They are written side by side,
// type by type in the same order. Enums are written as their declared values (the numbers in
// Plan.h) and range-checked later by validatePlan, which has to check them for in-memory plans
// anyway.
//
//===----------------------------------------------------------------------===//

#include "runtime/plan/PlanSections.h"

#include "runtime/plan/ByteStream.h"
#include "runtime/plan/StepKinds.h"

namespace kiln::plan::detail {
namespace {
using format::SectionKind;

template <class T> inline constexpr bool kUnhandled = false;

/// Writes fields in visitFields order. With `tagsOnly`, a step's params are just their tag:
/// how smallestEncoding() measures the least a record can take.
class Encoder {
public:
  explicit Encoder(ByteWriter &w, bool tagsOnly = false) : w_(w), tagsOnly_(tagsOnly) {}

  template <class T> void operator()(const char *key, T &&field) {
    using F = std::remove_cvref_t<T>;
    if constexpr (kIsTag<F>) {
      visitUntagged(*this, key, field);
    } else if constexpr (std::is_enum_v<F>) {
      w_.u8(static_cast<uint8_t>(field));
    } else if constexpr (std::is_same_v<F, bool>) {
      w_.boolean(field);
    } else if constexpr (std::is_same_v<F, uint32_t>) {
      w_.u32(field);
    } else if constexpr (std::is_same_v<F, uint64_t>) {
      w_.u64(field);
    } else if constexpr (std::is_same_v<F, int64_t>) {
      w_.i64(field);
    } else if constexpr (std::is_same_v<F, float>) {
      w_.f32(field);
    } else if constexpr (std::is_same_v<F, std::string>) {
      w_.str(field);
    } else if constexpr (std::is_same_v<F, std::vector<uint8_t>>) {
      w_.bytes(field);
    } else if constexpr (std::is_same_v<F, std::vector<int64_t>>) {
      w_.i64s(field);
    } else if constexpr (std::is_same_v<F, std::vector<uint32_t>>) {
      w_.u32s(field);
    } else if constexpr (std::is_same_v<F, std::vector<std::string>>) {
      w_.strs(field);
    } else if constexpr (std::is_same_v<F, std::optional<uint32_t>>) {
      w_.optionalU32(field);
    } else if constexpr (std::is_same_v<F, std::array<uint32_t, 3>>) {
      for (uint32_t v : field)
        w_.u32(v);
    } else if constexpr (std::is_same_v<F, StepParams>) {
      std::visit(
          [&](const auto &params) {
            w_.u8(params.kTag);
            if (!tagsOnly_)
              std::decay_t<decltype(params)>::visitFields(params, *this);
          },
          field);
    } else if constexpr (kIsRecordVector<F>) {
      w_.u64(field.size());
      for (const auto &element : field)
        (*this)(key, element);
    } else if constexpr (PlanRecord<F>) {
      F::visitFields(field, *this);
    } else {
      static_assert(kUnhandled<F>, "a plan field type the encoder does not know");
    }
  }

private:
  ByteWriter &w_;
  bool tagsOnly_;
};

/// The fewest bytes a T takes (empty strings and vectors, no optional values, a step's tag
/// alone): decoding refuses a count of T's that cannot fit in what is left.
template <PlanRecord T> size_t smallestEncoding() {
  static const size_t bytes = [] {
    ByteWriter w;
    const T empty{};
    T::visitFields(empty, Encoder(w, /*tagsOnly=*/true));
    return w.take().size();
  }();
  return bytes;
}

/// Reads what Encoder writes. `where` names the element being read, for messages: its label
/// and index, and its name once that is read ("step 3 'conv1'").
class Decoder {
public:
  Decoder(ByteReader &r, std::string &where) : r_(r), where_(where) {}

  template <class T> void operator()(const char *key, T &&field) {
    using F = std::remove_cvref_t<T>;
    if constexpr (kIsTag<F>) {
      visitUntagged(*this, key, field);
    } else if constexpr (std::is_enum_v<F>) {
      field = static_cast<F>(r_.u8(key));
    } else if constexpr (std::is_same_v<F, bool>) {
      field = r_.boolean(key);
    } else if constexpr (std::is_same_v<F, uint32_t>) {
      field = r_.u32(key);
    } else if constexpr (std::is_same_v<F, uint64_t>) {
      field = r_.u64(key);
    } else if constexpr (std::is_same_v<F, int64_t>) {
      field = r_.i64(key);
    } else if constexpr (std::is_same_v<F, float>) {
      field = r_.f32(key);
    } else if constexpr (std::is_same_v<F, std::string>) {
      field = r_.str(key);
    } else if constexpr (std::is_same_v<F, std::vector<uint8_t>>) {
      field = r_.bytes(key);
    } else if constexpr (std::is_same_v<F, std::vector<int64_t>>) {
      field = r_.i64s(key);
    } else if constexpr (std::is_same_v<F, std::vector<uint32_t>>) {
      field = r_.u32s(key);
    } else if constexpr (std::is_same_v<F, std::vector<std::string>>) {
      field = r_.strs(key);
    } else if constexpr (std::is_same_v<F, std::optional<uint32_t>>) {
      field = r_.optionalU32(key);
    } else if constexpr (std::is_same_v<F, std::array<uint32_t, 3>>) {
      for (uint32_t &v : field)
        v = r_.u32(key);
    } else if constexpr (std::is_same_v<F, StepParams>) {
      decodeParams(field);
    } else if constexpr (kIsRecordVector<F>) {
      decodeList(key, field);
    } else if constexpr (PlanRecord<F>) {
      F::visitFields(field, *this);
    } else {
      static_assert(kUnhandled<F>, "a plan field type the decoder does not know");
    }
  }

private:
  template <class T> void decodeList(const char *label, std::vector<T> &list) {
    uint64_t n = r_.count((std::string(label) + " count").c_str(), smallestEncoding<T>());
    for (uint64_t i = 0; i < n && !r_.failed(); ++i) {
      where_ = std::string(label) + " " + std::to_string(i);
      T element;
      T::visitFields(element, *this);
      if constexpr (requires { element.name; })
        where_ += " '" + element.name + "'";
      list.push_back(std::move(element));
    }
  }

  void decodeParams(StepParams &params) {
    uint8_t tag = r_.u8("step kind");
    bool known = false;
    forEachStepKind([&]<class T>(std::type_identity<T>) {
      if (known || tag != T::kTag)
        return;
      known = true;
      T kind;
      T::visitFields(kind, *this);
      params = std::move(kind);
    });
    if (!known)
      r_.fail("unknown step kind " + std::to_string(tag) + " (this kiln knows " + knownStepKinds() + ")");
  }

  ByteReader &r_;
  std::string &where_;
};

} // namespace

std::vector<uint8_t> encodeSection(SectionKind kind, const Plan &plan) {
  ByteWriter w;
  visitSection(kind, plan, Encoder(w));
  return w.take();
}

Status decodeSection(SectionKind kind, std::span<const uint8_t> bytes, Plan &plan) {
  if (kind == SectionKind::Weights)
    return Status(runtime::StatusCode::kInternal, "the weights section has no encoding to decode");
  ByteReader r(bytes);
  std::string where; // the element being decoded, for the message
  visitSection(kind, plan, Decoder(r, where));
  if (!r.failed() && r.remaining() != 0) {
    where.clear();
    r.fail(std::to_string(r.remaining()) + " bytes are left over after the last element");
  }
  if (!r.failed())
    return Status::ok();
  std::string message = "section '" + std::string(format::sectionName(kind)) + "' is malformed ";
  if (!where.empty())
    message += "(in " + where + ") ";
  return Status(runtime::StatusCode::kInvalidPlan, message + r.error());
}

} // namespace kiln::plan::detail
