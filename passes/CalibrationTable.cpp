//===- CalibrationTable.cpp - the ranges `kiln calibrate` measured --------===//

#include "passes/CalibrationTable.h"

namespace kiln {

namespace json = llvm::json;

constexpr llvm::StringLiteral kFormat = "kiln-calibration-1";

// The JSON mappings live in namespace kiln, not an anonymous one: llvm::json finds them by
// argument-dependent lookup.

json::Value toJSON(const ActivationRange &a) {
  return json::Object{
      {"name", a.name},
      {"count", static_cast<int64_t>(a.count)},
      {"non_finite", static_cast<int64_t>(a.nonFinite)},
      {"min", a.min},
      {"max", a.max},
      {"thresholds", json::Object{{"minmax", a.minmax}, {"percentile", a.percentile}, {"entropy", a.entropy}}}};
}

json::Value toJSON(const WeightRange &w) {
  return json::Object{{"node", w.node}, {"op", w.op}, {"axis", w.axis}, {"abs_max", json::Array(w.absMax)}};
}

bool fromJSON(const json::Value &value, ActivationRange &a, json::Path path) {
  json::ObjectMapper o(value, path);
  int64_t count = 0, nonFinite = 0;
  const json::Object *thresholds = value.getAsObject() ? value.getAsObject()->getObject("thresholds") : nullptr;
  if (!(o && o.map("name", a.name) && o.map("count", count) && o.map("non_finite", nonFinite) && o.map("min", a.min) &&
        o.map("max", a.max)))
    return false;
  if (!thresholds) {
    path.field("thresholds").report("expected an object");
    return false;
  }
  json::ObjectMapper t(*value.getAsObject()->get("thresholds"), path.field("thresholds"));
  if (!(t.map("minmax", a.minmax) && t.map("percentile", a.percentile) && t.map("entropy", a.entropy)))
    return false;
  if (count < 0 || nonFinite < 0) {
    path.field("count").report("expected counts of at least 0");
    return false;
  }
  a.count = (uint64_t)count;
  a.nonFinite = (uint64_t)nonFinite;
  return true;
}

bool fromJSON(const json::Value &value, WeightRange &w, json::Path path) {
  json::ObjectMapper o(value, path);
  return o && o.map("node", w.node) && o.map("op", w.op) && o.map("axis", w.axis) && o.map("abs_max", w.absMax);
}

bool fromJSON(const json::Value &value, CalibrationTable &table, json::Path path) {
  json::ObjectMapper o(value, path);
  std::string format, method;
  int64_t samples = 0;
  if (!(o && o.map("format", format)))
    return false;
  if (format != kFormat) {
    path.field("format").report("not a Kiln calibration file (format kiln-calibration-1)");
    return false;
  }
  if (!(o.map("model", table.model) && o.map("compiler", table.compiler) && o.map("samples", samples) &&
        o.map("method", method) && o.map("percentile", table.percent) && o.map("activations", table.activations) &&
        o.map("weights", table.weights)))
    return false;
  std::optional<CalibrationMethod> parsed = parseCalibrationMethod(method);
  if (!parsed) {
    path.field("method").report("expected minmax, percentile or entropy");
    return false;
  }
  if (samples < 0) {
    path.field("samples").report("expected a count of at least 0");
    return false;
  }
  // Files from before the GPU calibration do not say: the interpreter measured them (the default).
  if (!o.mapOptional("measured_on", table.measuredOn))
    return false;
  table.method = *parsed;
  table.samples = (uint64_t)samples;
  return true;
}

llvm::StringRef calibrationMethodName(CalibrationMethod method) {
  switch (method) {
  case CalibrationMethod::MinMax:
    return "minmax";
  case CalibrationMethod::Percentile:
    return "percentile";
  case CalibrationMethod::Entropy:
    return "entropy";
  }
  return "entropy";
}

std::optional<CalibrationMethod> parseCalibrationMethod(llvm::StringRef text) {
  for (CalibrationMethod m : {CalibrationMethod::MinMax, CalibrationMethod::Percentile, CalibrationMethod::Entropy})
    if (text == calibrationMethodName(m))
      return m;
  return std::nullopt;
}

double ActivationRange::threshold(CalibrationMethod method) const {
  switch (method) {
  case CalibrationMethod::MinMax:
    return minmax;
  case CalibrationMethod::Percentile:
    return percentile;
  case CalibrationMethod::Entropy:
    return entropy;
  }
  return minmax;
}

const ActivationRange *CalibrationTable::activation(llvm::StringRef name) const {
  for (const ActivationRange &a : activations)
    if (a.name == name)
      return &a;
  return nullptr;
}

json::Value toJSON(const CalibrationTable &table) {
  json::Array activations, weights;
  for (const ActivationRange &a : table.activations)
    activations.push_back(toJSON(a));
  for (const WeightRange &w : table.weights)
    weights.push_back(toJSON(w));
  return json::Object{{"format", kFormat},
                      {"model", table.model},
                      {"compiler", table.compiler},
                      {"samples", static_cast<int64_t>(table.samples)},
                      {"measured_on", table.measuredOn},
                      {"method", calibrationMethodName(table.method)},
                      {"percentile", table.percent},
                      {"activations", std::move(activations)},
                      {"weights", std::move(weights)}};
}

llvm::Expected<CalibrationTable> parseCalibrationTable(llvm::StringRef text) {
  return json::parse<CalibrationTable>(text, "calibration file");
}

} // namespace kiln
