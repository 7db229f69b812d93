//===- PlanText.cpp - text and JSON views of a plan ------------------------===//
//
// `kiln inspect` and lit tests read these, so both are stable: fixed field order, one line per
// input, output, buffer, step and image, no addresses, floats in their shortest exact form.
// Image bytes are summarized by their sizes. Both views work on any Plan, valid or not (unknown
// enum values print as "?N"), so they can show what is wrong with one that fails validation.
//
//===----------------------------------------------------------------------===//

#include "runtime/plan/Plan.h"
#include "runtime/plan/VersionNames.h"

#include <charconv>
#include <cmath>

namespace kiln::plan {
namespace {

//===-- scalar formatting shared by both views ----------------------------===//

template <typename E>
std::string unknownEnum(E value) {
  return "?" + std::to_string(static_cast<int>(value));
}

std::string dtypeString(DType t) { return dtypeBytes(t) ? std::string(dtypeName(t)) : unknownEnum(t); }

std::string spaceString(MemorySpace s) {
  switch (s) {
  case MemorySpace::Arena: return "arena";
  case MemorySpace::Weights: return "weights";
  }
  return unknownEnum(s);
}

std::string mathString(MathMode m) {
  switch (m) {
  case MathMode::StrictF32: return "strict-f32";
  case MathMode::TF32: return "tf32";
  }
  return unknownEnum(m);
}

std::string activationString(Activation a) {
  switch (a) {
  case Activation::None: return "none";
  case Activation::Relu: return "relu";
  case Activation::Gelu: return "gelu";
  }
  return unknownEnum(a);
}

/// Shortest decimal that reads back as the same float.
std::string floatString(float value) {
  char buffer[32];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, result.ptr);
}

std::string versionString(uint32_t version, bool cuda) {
  if (version == 0)
    return "none";
  return cuda ? detail::cudaVersionName(version) : detail::libraryVersionName(version);
}

template <typename T>
std::string listString(std::span<const T> values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i)
    s += (i ? "," : "") + std::to_string(values[i]);
  return s + "]";
}
std::string listString(const std::vector<int64_t> &v) { return listString(std::span<const int64_t>(v)); }
std::string listString(const std::vector<uint32_t> &v) { return listString(std::span<const uint32_t>(v)); }
std::string listString(const std::array<uint32_t, 3> &v) { return listString(std::span<const uint32_t>(v)); }

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

std::string optionalIndex(const std::optional<uint32_t> &index, const char *none) {
  return index ? std::to_string(*index) : std::string(none);
}

//===-- text --------------------------------------------------------------===//

std::string textBinding(const char *kind, size_t i, const TensorBinding &t) {
  return std::string(kind) + " " + std::to_string(i) + " " + quote(t.name, false) + " " + dtypeString(t.dtype) +
         listString(t.shape) + " buffer=" + std::to_string(t.buffer) + "\n";
}

std::string textParams(const KernelStep &k) {
  return "kernel image=" + std::to_string(k.image) + " function=" + quote(k.function, false) +
         " grid=" + listString(k.grid) + " block=" + listString(k.block) + " shared=" + std::to_string(k.sharedBytes) +
         " args=" + listString(k.args);
}

std::string textParams(const GemmStep &g) {
  return "gemm dtype=" + dtypeString(g.dtype) + " math=" + mathString(g.math) + " batch=" + std::to_string(g.batch) +
         " m=" + std::to_string(g.m) + " n=" + std::to_string(g.n) + " k=" + std::to_string(g.k) +
         " transA=" + (g.transA ? "1" : "0") + " transB=" + (g.transB ? "1" : "0") +
         " strides=" + listString(std::vector<int64_t>{g.strideA, g.strideB, g.strideC, g.strideD}) +
         " alpha=" + floatString(g.alpha) + " beta=" + floatString(g.beta) + " act=" + activationString(g.activation) +
         " a=" + std::to_string(g.a) + " b=" + std::to_string(g.b) + " c=" + optionalIndex(g.c, "-") +
         " d=" + std::to_string(g.d) + " bias=" + optionalIndex(g.bias, "-");
}

std::string textParams(const ConvStep &c) {
  return std::string(c.transpose ? "conv-transpose" : "conv") + " dtype=" + dtypeString(c.dtype) +
         " math=" + mathString(c.math) + " x=" + std::to_string(c.x) + listString(c.xShape) +
         " w=" + std::to_string(c.w) + listString(c.wShape) + " y=" + std::to_string(c.y) + listString(c.yShape) +
         " pads=" + listString(c.pads) + " strides=" + listString(c.strides) + " dilations=" + listString(c.dilations) +
         " groups=" + std::to_string(c.groups) + " act=" + activationString(c.activation) +
         " bias=" + optionalIndex(c.bias, "-");
}

std::string textParams(const CopyStep &c) {
  return "copy src=" + std::to_string(c.src) + " dst=" + std::to_string(c.dst) + " bytes=" + std::to_string(c.bytes);
}

//===-- JSON --------------------------------------------------------------===//

/// One JSON object on one line, fields in the order they are added.
class JsonObject {
public:
  JsonObject &raw(std::string_view key, const std::string &json) {
    body_ += (body_.empty() ? "" : ", ") + quote(key, true) + ": " + json;
    return *this;
  }
  JsonObject &str(std::string_view key, std::string_view value) { return raw(key, quote(value, true)); }
  template <typename T>
    requires std::is_integral_v<T>
  JsonObject &num(std::string_view key, T value) {
    return raw(key, std::to_string(value));
  }
  JsonObject &boolean(std::string_view key, bool value) { return raw(key, value ? "true" : "false"); }
  /// JSON has no NaN or infinity: those become the strings "NaN", "Infinity", "-Infinity".
  JsonObject &real(std::string_view key, float value) {
    if (std::isfinite(value))
      return raw(key, floatString(value));
    return str(key, std::isnan(value) ? "NaN" : value > 0 ? "Infinity" : "-Infinity");
  }
  JsonObject &index(std::string_view key, const std::optional<uint32_t> &value) {
    return raw(key, optionalIndex(value, "null"));
  }
  std::string take() const { return "{" + body_ + "}"; }

private:
  std::string body_;
};

std::string jsonBinding(const TensorBinding &t) {
  return JsonObject()
      .str("name", t.name)
      .str("dtype", dtypeString(t.dtype))
      .raw("shape", listString(t.shape))
      .num("buffer", t.buffer)
      .take();
}

void jsonParams(JsonObject &o, const KernelStep &k) {
  o.str("kind", "kernel").num("image", k.image).str("function", k.function).raw("grid", listString(k.grid));
  o.raw("block", listString(k.block)).num("sharedBytes", k.sharedBytes).raw("args", listString(k.args));
}

void jsonParams(JsonObject &o, const GemmStep &g) {
  o.str("kind", "gemm").str("dtype", dtypeString(g.dtype)).str("math", mathString(g.math));
  o.num("batch", g.batch).num("m", g.m).num("n", g.n).num("k", g.k).boolean("transA", g.transA);
  o.boolean("transB", g.transB).num("strideA", g.strideA).num("strideB", g.strideB).num("strideC", g.strideC);
  o.num("strideD", g.strideD).real("alpha", g.alpha).real("beta", g.beta).str("activation", activationString(g.activation));
  o.num("a", g.a).num("b", g.b).index("c", g.c).num("d", g.d).index("bias", g.bias);
}

void jsonParams(JsonObject &o, const ConvStep &c) {
  o.str("kind", "conv").str("dtype", dtypeString(c.dtype)).str("math", mathString(c.math));
  o.boolean("transpose", c.transpose).raw("xShape", listString(c.xShape)).raw("wShape", listString(c.wShape));
  o.raw("yShape", listString(c.yShape)).raw("pads", listString(c.pads)).raw("strides", listString(c.strides));
  o.raw("dilations", listString(c.dilations)).num("groups", c.groups).str("activation", activationString(c.activation));
  o.num("x", c.x).num("w", c.w).num("y", c.y).index("bias", c.bias);
}

void jsonParams(JsonObject &o, const CopyStep &c) {
  o.str("kind", "copy").num("src", c.src).num("dst", c.dst).num("bytes", c.bytes);
}

/// `"key": [` one element per line `]`, or `"key": []`.
std::string jsonList(std::string_view key, const std::vector<std::string> &elements, bool last) {
  std::string s = "  " + quote(key, true) + ": [";
  for (size_t i = 0; i < elements.size(); ++i)
    s += "\n    " + elements[i] + (i + 1 < elements.size() ? "," : "\n  ");
  return s + (last ? "]\n" : "],\n");
}

} // namespace

std::string planToText(const Plan &plan) {
  const Metadata &m = plan.metadata;
  std::string s = "kiln-plan format=" + std::to_string(kFormatVersion) + " compiler=" + quote(m.compilerVersion, false) +
                  " model=" + quote(m.model, false) + "\n";
  s += "target sm=" + std::to_string(m.computeCapability) + " cuda=" + versionString(m.cudaVersion, true) +
       " cudnn=" + versionString(m.cudnnVersion, false) + " cublaslt=" + versionString(m.cublasLtVersion, false) +
       " precision=" + quote(m.precision, false) + "\n";
  s += "arena bytes=" + std::to_string(m.arenaBytes) + " lower-bound=" + std::to_string(m.arenaLowerBound) + "\n";
  s += "weights bytes=" + std::to_string(plan.weights.size()) + "\n";
  for (size_t i = 0; i < plan.inputs.size(); ++i)
    s += textBinding("input", i, plan.inputs[i]);
  for (size_t i = 0; i < plan.outputs.size(); ++i)
    s += textBinding("output", i, plan.outputs[i]);
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const Buffer &b = plan.buffers[i];
    s += "buffer " + std::to_string(i) + " " + quote(b.name, false) + " " + spaceString(b.space) +
         " offset=" + std::to_string(b.offset) + " bytes=" + std::to_string(b.bytes) + "\n";
  }
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step &step = plan.steps[i];
    s += "step " + std::to_string(i) + " " + quote(step.name, false) + " op=" + quote(step.op, false) + " " +
         std::visit([](const auto &params) { return textParams(params); }, step.params) + "\n";
  }
  for (size_t i = 0; i < plan.images.size(); ++i) {
    const KernelImage &image = plan.images[i];
    s += "image " + std::to_string(i) + " " + quote(image.name, false) + " sm=" + std::to_string(image.smVersion) +
         " cubin-bytes=" + std::to_string(image.cubin.size()) + " ptx-bytes=" + std::to_string(image.ptx.size()) + "\n";
  }
  return s;
}

std::string planToJson(const Plan &plan) {
  const Metadata &m = plan.metadata;
  std::string metadata = JsonObject()
                             .str("compilerVersion", m.compilerVersion)
                             .num("computeCapability", m.computeCapability)
                             .num("cudaVersion", m.cudaVersion)
                             .num("cudnnVersion", m.cudnnVersion)
                             .num("cublasLtVersion", m.cublasLtVersion)
                             .str("precision", m.precision)
                             .str("model", m.model)
                             .num("arenaBytes", m.arenaBytes)
                             .num("arenaLowerBound", m.arenaLowerBound)
                             .take();
  std::vector<std::string> inputs, outputs, buffers, steps, images;
  for (const TensorBinding &t : plan.inputs)
    inputs.push_back(jsonBinding(t));
  for (const TensorBinding &t : plan.outputs)
    outputs.push_back(jsonBinding(t));
  for (const Buffer &b : plan.buffers)
    buffers.push_back(JsonObject()
                          .str("name", b.name)
                          .str("space", spaceString(b.space))
                          .num("offset", b.offset)
                          .num("bytes", b.bytes)
                          .take());
  for (const Step &step : plan.steps) {
    JsonObject o;
    o.str("name", step.name).str("op", step.op);
    std::visit([&](const auto &params) { jsonParams(o, params); }, step.params);
    steps.push_back(o.take());
  }
  for (const KernelImage &image : plan.images)
    images.push_back(JsonObject()
                         .str("name", image.name)
                         .num("smVersion", image.smVersion)
                         .num("cubinBytes", image.cubin.size())
                         .num("ptxBytes", image.ptx.size())
                         .take());
  std::string s = "{\n  \"format\": " + std::to_string(kFormatVersion) + ",\n";
  s += "  \"metadata\": " + metadata + ",\n";
  s += "  \"weightsBytes\": " + std::to_string(plan.weights.size()) + ",\n";
  s += jsonList("inputs", inputs, false) + jsonList("outputs", outputs, false) + jsonList("buffers", buffers, false);
  s += jsonList("steps", steps, false) + jsonList("images", images, true);
  return s + "}\n";
}

} // namespace kiln::plan
