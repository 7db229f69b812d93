//===- PlanFormatDocTest.cpp - FORMAT.md's record table matches the schema ===//
//
// FORMAT.md documents every byte of a plan file. Its table of sections and records is
// generated here from the same visitFields lists that drive the encoder, and must appear in
// FORMAT.md exactly (between the `records` markers): a schema change that leaves the document
// behind fails this test, which prints the table to paste.
//
//===----------------------------------------------------------------------===//

#include "runtime/plan/EnumNames.h"
#include "runtime/plan/PlanSections.h"
#include "runtime/plan/StepKinds.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace kiln::plan {
namespace {

template <class T> std::string recordName() {
  if constexpr (std::is_same_v<T, Metadata>)
    return "metadata";
  else if constexpr (std::is_same_v<T, TensorBinding>)
    return "binding";
  else if constexpr (std::is_same_v<T, Buffer>)
    return "buffer";
  else if constexpr (std::is_same_v<T, Step>)
    return "step";
  else if constexpr (std::is_same_v<T, KernelImage>)
    return "image";
  else
    return std::string(T::kKind) + " (kind " + std::to_string(T::kTag) + ")";
}

/// "u32 image, str function, ...": each field as FORMAT.md writes its encoding.
class FieldList {
public:
  template <class T> void operator()(const char *key, T &&field) {
    using F = std::remove_cvref_t<T>;
    if constexpr (kIsBufferRef<F>) {
      add(indexName<std::remove_cvref_t<decltype(field.value)>>("buf") + " " + key);
    } else if constexpr (kIsImageRef<F>) {
      add(indexName<std::remove_cvref_t<decltype(field.value)>>("img") + " " + key);
    } else if constexpr (kIsTag<F>) {
      visitUntagged(*this, key, field);
    } else if constexpr (std::is_same_v<F, StepParams>) {
      add("u8 kind, params");
    } else if constexpr (kIsRecordVector<F>) {
      add("vec<" + recordName<typename F::value_type>() + "> " + key + "s");
    } else if constexpr (PlanRecord<F>) {
      add(recordName<F>());
    } else {
      add(typeName<F>() + " " + key + (std::is_same_v<F, std::array<uint32_t, 3>> ? "[3]" : ""));
    }
  }
  std::string take() const { return "`" + list_ + "`"; }

private:
  /// An index field: `buf`, `opt<buf>` or `vec<buf>` (`img` for images).
  template <class F> static std::string indexName(const std::string &table) {
    if constexpr (std::is_same_v<F, std::optional<uint32_t>>)
      return "opt<" + table + ">";
    else if constexpr (std::is_same_v<F, std::vector<uint32_t>>)
      return "vec<" + table + ">";
    else
      return table;
  }
  template <class F> static std::string typeName() {
    if constexpr (std::is_enum_v<F> || std::is_same_v<F, uint8_t>)
      return "u8";
    else if constexpr (std::is_same_v<F, bool>)
      return "bool";
    else if constexpr (std::is_same_v<F, uint32_t> || std::is_same_v<F, std::array<uint32_t, 3>>)
      return "u32";
    else if constexpr (std::is_same_v<F, uint64_t>)
      return "u64";
    else if constexpr (std::is_same_v<F, int64_t>)
      return "i64";
    else if constexpr (std::is_same_v<F, float>)
      return "f32";
    else if constexpr (std::is_same_v<F, std::string>)
      return "str";
    else if constexpr (std::is_same_v<F, std::vector<uint8_t>>)
      return "bytes";
    else if constexpr (std::is_same_v<F, std::vector<int64_t>>)
      return "vec<i64>";
    else if constexpr (std::is_same_v<F, std::vector<uint32_t>>)
      return "vec<u32>";
    else if constexpr (std::is_same_v<F, std::vector<std::string>>)
      return "vec<str>";
    else if constexpr (std::is_same_v<F, std::optional<uint32_t>>)
      return "opt<u32>";
    else
      static_assert(sizeof(F) == 0, "a field type FORMAT.md has no name for");
  }
  void add(const std::string &field) { list_ += (list_.empty() ? "" : ", ") + field; }

  std::string list_;
};

template <PlanRecord T> std::string recordRow() {
  FieldList fields;
  const T empty{};
  T::visitFields(empty, fields);
  return "| " + recordName<T>() + " | " + fields.take() + " |\n";
}

template <class E> std::string enumRow(const char *field) {
  return "| enum " + std::string(field) + " | `" + detail::knownValues(detail::enumInfo(E{})) + "` |\n";
}

/// The generated part of FORMAT.md: what each section holds, every record, every enum.
std::string formatTable() {
  std::string table = "| section or record | encoding, in file order |\n|---|---|\n";
  const Plan plan;
  for (uint32_t k = 1; k < format::kSectionCount; ++k) {
    auto kind = static_cast<format::SectionKind>(k);
    FieldList fields;
    detail::visitSection(kind, plan, fields);
    table += "| section " + std::to_string(k) + " " + std::string(format::sectionName(kind)) + " | " + fields.take() +
             " |\n";
  }
  table += recordRow<Metadata>() + recordRow<TensorBinding>() + recordRow<Buffer>() + recordRow<Step>();
  detail::forEachStepKind([&]<class T>(std::type_identity<T>) { table += recordRow<T>(); });
  table += recordRow<KernelImage>();
  return table + enumRow<DType>("dtype") + enumRow<MemorySpace>("space") + enumRow<MathMode>("math") +
         enumRow<Activation>("activation");
}

std::string readFormatDoc() {
  std::filesystem::path path = std::filesystem::path(__FILE__).parent_path() / "../../../runtime/plan/FORMAT.md";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(PlanFormatDoc, RecordTableMatchesTheSchema) {
  std::string doc = readFormatDoc();
  ASSERT_FALSE(doc.empty()) << "cannot read FORMAT.md next to the sources of this test";
  const std::string begin = "<!-- records: generated by PlanFormatDocTest -->\n", end = "<!-- /records -->";
  size_t from = doc.find(begin), to = doc.find(end);
  ASSERT_TRUE(from != std::string::npos && to != std::string::npos && from < to) << "FORMAT.md lacks the markers";
  from += begin.size();
  std::string table = formatTable();
  EXPECT_EQ(doc.substr(from, to - from), table) << "FORMAT.md's record table is stale; replace it with:\n" << table;
}

TEST(PlanFormatDoc, TableNamesEveryFieldKind) {
  // The generator itself: a struct with one field of each kind, spelled as FORMAT.md does.
  std::string buffer = recordRow<Buffer>(), gemm = recordRow<GemmStep>(), kernel = recordRow<KernelStep>();
  EXPECT_EQ(buffer, "| buffer | `str name, u8 space, u64 offset, u64 bytes, u8 dtype, vec<i64> shape` |\n");
  EXPECT_NE(gemm.find("bool transA, "), std::string::npos) << gemm;
  EXPECT_NE(gemm.find("f32 alpha, "), std::string::npos) << gemm;
  EXPECT_NE(gemm.find("buf a, buf b, buf d, opt<buf> c, opt<buf> bias, opt<buf> scaleD` |"), std::string::npos) << gemm;
  EXPECT_EQ(kernel, "| kernel (kind 1) | `img image, str function, u32 grid[3], u32 block[3], u32 sharedBytes, "
                    "vec<buf> args` |\n");
  EXPECT_EQ(recordRow<Step>(),
            "| step | `str name, str op, vec<str> nodes, u8 kind, params, vec<str> values, vec<buf> valueBuffers` |\n");
}

} // namespace
} // namespace kiln::plan
