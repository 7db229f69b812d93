//===- PlanText.cpp - text and JSON views of a plan ------------------------===//
//
// `kiln inspect` and lit tests read these, so both are stable: fixed field order, one line per
// input, output, buffer, step and image, no addresses, floats in their shortest exact form.
// Both print every field of every record from the visitFields lists (Plan.h), under its field
// name: the text as `key=value` (the record's name comes first, quoted, without a key), JSON as
// one object per record. Blobs (cubin, PTX) show as their sizes (`cubinBytes`), buffer
// operands as the buffer's name and tensor type (`a=conv1:bf16[1,64,56,56]`; JSON adds the
// index), a list of strings (a step's ONNX nodes) as its quoted strings (`nodes=["a","b"]`).
// Both views work on any Plan, valid or not (unknown enum values print as "?N", out-of-range
// indices as "?N" too), so they can show what is wrong with one that fails validation.
//
//===----------------------------------------------------------------------===//

#include "runtime/plan/EnumNames.h"
#include "runtime/plan/VersionNames.h"

#include <cctype>
#include <charconv>
#include <cmath>

namespace kiln::plan {
namespace {

template <class T> inline constexpr bool kUnhandled = false;

//===-- scalar formatting shared by both views ----------------------------===//

template <class E> std::string enumString(E value) {
  std::optional<std::string_view> name = detail::enumName(value);
  return name ? std::string(*name) : "?" + std::to_string(static_cast<int>(value));
}

/// Shortest decimal that reads back as the same float.
std::string floatString(float value) {
  char buffer[32];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, result.ptr);
}

template <class T> std::string versionString(const VersionRef<T> &version) {
  if (version.value == 0)
    return "none";
  return version.kind == VersionKind::Cuda ? detail::cudaVersionName(version.value)
                                           : detail::libraryVersionName(version.value);
}

template <class Range> std::string listString(const Range &values) {
  std::string s = "[";
  for (const auto &v : values)
    s += (s.size() > 1 ? "," : "") + std::to_string(v);
  return s + "]";
}

/// Length of the valid UTF-8 sequence at s[i], or 0 when the bytes there are not one
/// (overlong forms, surrogates and code points past U+10FFFF are invalid).
size_t utf8Length(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size())
    return 0;
  uint32_t cp = n == 1 ? c : n == 2 ? c & 0x1F : n == 3 ? c & 0x0F : c & 0x07;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80)
      return 0;
    cp = cp << 6 | (byte(i + k) & 0x3F);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return n;
}

/// A quoted string. Quotes, backslashes and control characters are escaped in both views;
/// bytes that are not UTF-8 become \xNN in text and U+FFFD in JSON (which must be UTF-8).
std::string quote(std::string_view s, bool json) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = utf8Length(s, i);
    if (n == 0) {
      out += json ? std::string("\\ufffd") : std::string("\\x") + kHex[c >> 4] + kHex[c & 15];
      ++i;
      continue;
    }
    if (n > 1) {
      out.append(s.substr(i, n));
      i += n;
      continue;
    }
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\r': out += "\\r"; break;
    case '\t': out += "\\t"; break;
    default:
      if (c < 0x20 || c == 0x7F)
        out += json ? std::string("\\u00") + kHex[c >> 4] + kHex[c & 15]
                    : std::string("\\x") + kHex[c >> 4] + kHex[c & 15];
      else
        out += static_cast<char>(c);
    }
    ++i;
  }
  return out + "\"";
}

/// `["a","b"]`: each string quoted as quote() does.
std::string stringListString(const std::vector<std::string> &values, bool json) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i)
    s += (i ? "," : "") + quote(values[i], json);
  return s + "]";
}

/// The buffer table entry an operand index names, or null when it is out of range.
const Buffer *operandBuffer(const Plan &plan, uint32_t index) {
  return index < plan.buffers.size() ? &plan.buffers[index] : nullptr;
}

//===-- text --------------------------------------------------------------===//

/// Names made of these print bare in operands (`a=conv1/Relu:f32[...]`); others are quoted.
bool isBareName(std::string_view name) {
  if (name.empty())
    return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && std::string_view("_./#+-").find(c) == std::string_view::npos)
      return false;
  return true;
}

/// Appends ` key=value` for every field of a record (its name: ` "name"`).
class TextFields {
public:
  TextFields(const Plan &plan, std::string &out) : plan_(plan), out_(out) {}

  template <class T> void operator()(const char *key, T &&field) {
    using F = std::remove_cvref_t<T>;
    if constexpr (std::is_same_v<F, std::string>) {
      if (std::string_view(key) == "name") {
        out_ += " " + quote(field, false);
        return;
      }
    }
    if constexpr (std::is_same_v<F, StepParams>) {
      std::visit(
          [&](const auto &params) {
            out_ += std::string(" ") + params.kKind;
            std::decay_t<decltype(params)>::visitFields(params, *this);
          },
          field);
    } else if constexpr (kIsBlob<F>) {
      out_ += " " + std::string(key) + "Bytes=" + std::to_string(field.value.size());
    } else {
      out_ += " " + std::string(key) + "=" + value(field);
    }
  }

private:
  template <class F> std::string value(const F &field) {
    if constexpr (std::is_enum_v<F>)
      return enumString(field);
    else if constexpr (std::is_same_v<F, bool>)
      return field ? "1" : "0";
    else if constexpr (std::is_integral_v<F>)
      return std::to_string(field);
    else if constexpr (std::is_same_v<F, float>)
      return floatString(field);
    else if constexpr (std::is_same_v<F, std::string>)
      return quote(field, false);
    else if constexpr (std::is_same_v<F, std::vector<std::string>>)
      return stringListString(field, false);
    else if constexpr (std::is_same_v<F, std::vector<int64_t>> || std::is_same_v<F, std::array<uint32_t, 3>> ||
                       std::is_same_v<F, std::vector<uint32_t>>)
      return listString(field);
    else if constexpr (kIsVersion<F>)
      return versionString(field);
    else if constexpr (kIsImageRef<F>)
      return std::to_string(field.value);
    else if constexpr (kIsTensorType<F>)
      return enumString(field.dtype) + listString(field.shape);
    else if constexpr (kIsBufferRef<F>)
      return operands(field.value);
    else
      static_assert(kUnhandled<F>, "a plan field type the text view does not know");
  }

  /// `name:dtype[shape]`, or `?N` for an index out of range.
  std::string operand(uint32_t index) {
    const Buffer *b = operandBuffer(plan_, index);
    if (!b)
      return "?" + std::to_string(index);
    return (isBareName(b->name) ? b->name : quote(b->name, false)) + ":" + enumString(b->dtype) +
           listString(b->shape);
  }
  std::string operands(uint32_t index) { return operand(index); }
  std::string operands(const std::optional<uint32_t> &index) { return index ? operand(*index) : "-"; }
  std::string operands(const std::vector<uint32_t> &indices) {
    std::string s = "[";
    for (size_t i = 0; i < indices.size(); ++i)
      s += (i ? "," : "") + operand(indices[i]);
    return s + "]";
  }

  const Plan &plan_;
  std::string &out_;
};

/// `label index "name" key=value...` (the metadata: `metadata key=value...`), one line.
template <PlanRecord T> std::string textLine(const Plan &plan, const std::string &label, const T &record) {
  std::string line = label;
  T::visitFields(record, TextFields(plan, line));
  return line + "\n";
}

template <PlanRecord T>
std::string textLines(const Plan &plan, const std::string &label, const std::vector<T> &records) {
  std::string lines;
  for (size_t i = 0; i < records.size(); ++i)
    lines += textLine(plan, label + " " + std::to_string(i), records[i]);
  return lines;
}

//===-- JSON --------------------------------------------------------------===//

/// One JSON object on one line, fields in the order they are added.
class JsonObject {
public:
  JsonObject &raw(std::string_view key, const std::string &json) {
    body_ += (body_.empty() ? "" : ", ") + quote(key, true) + ": " + json;
    return *this;
  }
  std::string take() const { return "{" + body_ + "}"; }

private:
  std::string body_;
};

/// Adds `"key": value` for every field of a record.
class JsonFields {
public:
  JsonFields(const Plan &plan, JsonObject &out) : plan_(plan), out_(out) {}

  template <class T> void operator()(const char *key, T &&field) {
    using F = std::remove_cvref_t<T>;
    if constexpr (std::is_same_v<F, StepParams>) {
      std::visit(
          [&](const auto &params) {
            out_.raw("kind", quote(params.kKind, true));
            std::decay_t<decltype(params)>::visitFields(params, *this);
          },
          field);
    } else if constexpr (kIsBlob<F>) {
      out_.raw(std::string(key) + "Bytes", std::to_string(field.value.size()));
    } else if constexpr (kIsTensorType<F>) {
      out_.raw("dtype", quote(enumString(field.dtype), true)).raw("shape", listString(field.shape));
    } else {
      out_.raw(key, value(field));
    }
  }

private:
  template <class F> std::string value(const F &field) {
    if constexpr (std::is_enum_v<F>)
      return quote(enumString(field), true);
    else if constexpr (std::is_same_v<F, bool>)
      return field ? "true" : "false";
    else if constexpr (std::is_integral_v<F>)
      return std::to_string(field);
    else if constexpr (std::is_same_v<F, float>)
      // JSON has no NaN or infinity: those become the strings "NaN", "Infinity", "-Infinity".
      return std::isfinite(field) ? floatString(field)
                                  : quote(std::isnan(field) ? "NaN" : field > 0 ? "Infinity" : "-Infinity", true);
    else if constexpr (std::is_same_v<F, std::string>)
      return quote(field, true);
    else if constexpr (std::is_same_v<F, std::vector<std::string>>)
      return stringListString(field, true);
    else if constexpr (std::is_same_v<F, std::vector<int64_t>> || std::is_same_v<F, std::array<uint32_t, 3>> ||
                       std::is_same_v<F, std::vector<uint32_t>>)
      return listString(field);
    else if constexpr (kIsVersion<F> || kIsImageRef<F>)
      return std::to_string(field.value);
    else if constexpr (kIsBufferRef<F>)
      return operands(field.value);
    else
      static_assert(kUnhandled<F>, "a plan field type the JSON view does not know");
  }

  /// {"index": 4, "name": ..., "dtype": ..., "shape": [...]}, or {"index": N} out of range.
  std::string operand(uint32_t index) {
    JsonObject o;
    o.raw("index", std::to_string(index));
    if (const Buffer *b = operandBuffer(plan_, index))
      o.raw("name", quote(b->name, true))
          .raw("dtype", quote(enumString(b->dtype), true))
          .raw("shape", listString(b->shape));
    return o.take();
  }
  std::string operands(uint32_t index) { return operand(index); }
  std::string operands(const std::optional<uint32_t> &index) { return index ? operand(*index) : "null"; }
  std::string operands(const std::vector<uint32_t> &indices) {
    std::string s = "[";
    for (size_t i = 0; i < indices.size(); ++i)
      s += (i ? ", " : "") + operand(indices[i]);
    return s + "]";
  }

  const Plan &plan_;
  JsonObject &out_;
};

template <PlanRecord T> std::string jsonObject(const Plan &plan, const T &record) {
  JsonObject o;
  T::visitFields(record, JsonFields(plan, o));
  return o.take();
}

/// `"key": [` one object per line `]`, or `"key": []`.
template <PlanRecord T>
std::string jsonList(const Plan &plan, std::string_view key, const std::vector<T> &records, bool last) {
  std::string s = "  " + quote(key, true) + ": [";
  for (size_t i = 0; i < records.size(); ++i)
    s += "\n    " + jsonObject(plan, records[i]) + (i + 1 < records.size() ? "," : "\n  ");
  return s + (last ? "]\n" : "],\n");
}

} // namespace

std::string planToText(const Plan &plan) {
  std::string s = "kiln-plan format=" + std::to_string(kFormatVersion) +
                  " weightsBytes=" + std::to_string(plan.weights.size()) + "\n";
  s += textLine(plan, "metadata", plan.metadata);
  s += textLines(plan, "input", plan.inputs) + textLines(plan, "output", plan.outputs);
  s += textLines(plan, "buffer", plan.buffers) + textLines(plan, "step", plan.steps);
  return s + textLines(plan, "image", plan.images);
}

std::string planToJson(const Plan &plan) {
  std::string s = "{\n  \"format\": " + std::to_string(kFormatVersion) + ",\n";
  s += "  \"metadata\": " + jsonObject(plan, plan.metadata) + ",\n";
  s += "  \"weightsBytes\": " + std::to_string(plan.weights.size()) + ",\n";
  s += jsonList(plan, "inputs", plan.inputs, false) + jsonList(plan, "outputs", plan.outputs, false);
  s += jsonList(plan, "buffers", plan.buffers, false) + jsonList(plan, "steps", plan.steps, false);
  return s + jsonList(plan, "images", plan.images, true) + "}\n";
}

} // namespace kiln::plan
