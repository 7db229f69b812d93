//===- CompareCommand.cpp - `kiln compare` ---------------------------------===//
//
// Two evaluations of one model, value by value: for every ONNX value both computed, the error
// of B against A (max abs, max relative to max |A|, cosine), and where the error grows most
// between a node's inputs and its output (the culprits).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "CompareReport.h"
#include "ValueDump.h"

#include "runtime/Npy.h"
#include "runtime/TensorData.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <tuple>

namespace kiln::cli {

namespace {

namespace cl = llvm::cl;

const char *const kCompareOverview =
    R"(Compares two evaluations of one model on the same inputs, value by value. A and B are value
dumps: directories `kiln eval --dump DIR` writes (the interpreter at any precision and with any
pass options). B is judged against A: for every ONNX value both computed, in A's order, the
max absolute error, the max error relative to max |A| and the cosine similarity; then the
culprits, the values whose relative error exceeds the largest of their inputs' by the most
(where the error grows, not where it arrives). Channels-last values are compared in the other
side's layout. Values only one side computed (folded, or kept inside a fused step) are listed,
and so is every difference in how the two were computed (compiler, precision and pass options
for the interpreter; compiler, library versions, arena and weights for a plan).

Exit status: 0 on success, 1 when a dump cannot be read, 2 on a usage error.
)";

/// A dumped value as doubles in C order.
llvm::Expected<std::vector<double>> loadValues(const Dump &dump, const DumpedValue &value) {
  llvm::SmallString<256> path(dump.dir);
  llvm::sys::path::append(path, value.file);
  auto array = runtime::readNpy(std::string(path));
  if (!array.isOk())
    return llvm::createStringError(llvm::inconvertibleErrorCode(), array.status().message());
  const runtime::NpyArray &a = array.value();
  std::optional<plan::DType> dtype = runtime::dtypeOfNpy(a.dtype);
  if (!dtype)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   std::string(path) + ": dtype " + a.dtype + " cannot be compared");
  size_t count = a.data.size() / plan::dtypeBytes(*dtype);
  std::vector<double> out(count);
  const uint8_t *data = reinterpret_cast<const uint8_t *>(a.data.data());
  for (size_t k = 0; k < count; ++k)
    out[k] = runtime::elementAsDouble(data, *dtype, static_cast<int64_t>(k));
  return out;
}

/// `values` of an NHWC tensor of `shape` ([N,H,W,C]) in NCHW order, or the reverse (toLast).
std::vector<double> permuted(const std::vector<double> &values, const std::vector<int64_t> &shape, bool toLast) {
  std::vector<double> out(values.size());
  int64_t n = shape[0], d1 = shape[1], d2 = shape[2], d3 = shape[3];
  // Source [n][d1][d2][d3] -> destination: toLast (NCHW->NHWC) [n][d2][d3][d1], else [n][d3][d1][d2].
  for (int64_t a = 0; a < n; ++a)
    for (int64_t i = 0; i < d1; ++i)
      for (int64_t j = 0; j < d2; ++j)
        for (int64_t k = 0; k < d3; ++k) {
          int64_t src = ((a * d1 + i) * d2 + j) * d3 + k;
          int64_t dst = toLast ? ((a * d2 + j) * d3 + k) * d1 + i : ((a * d3 + k) * d1 + i) * d2 + j;
          out[dst] = values[src];
        }
  return out;
}

std::vector<int64_t> permuteShape(const std::vector<int64_t> &s, bool toLast) {
  return toLast ? std::vector<int64_t>{s[0], s[2], s[3], s[1]} : std::vector<int64_t>{s[0], s[3], s[1], s[2]};
}

/// (key, A's value, B's value) for every metadata key whose values differ ("" where a side
/// has none): the compiler, options and library versions behind each dump.
std::vector<std::tuple<std::string, std::string, std::string>> metadataDifferences(const Dump &a, const Dump &b) {
  std::map<std::string, std::pair<std::string, std::string>> both;
  for (const auto &[key, value] : a.metadata)
    both[key].first = value;
  for (const auto &[key, value] : b.metadata)
    both[key].second = value;
  std::vector<std::tuple<std::string, std::string, std::string>> out;
  for (const auto &[key, values] : both)
    if (values.first != values.second)
      out.emplace_back(key, values.first, values.second);
  return out;
}

struct Row {
  const DumpedValue *a = nullptr, *b = nullptr;
  std::string layout = "same"; // or "b channels last", "a channels last"
  std::string problem;          // why it could not be compared
  double maxAbs = 0, maxRel = 0, cosine = 1;
  double inputRel = 0; // the largest relative error among its compared inputs
  double growth = 0;
};

void measure(Row &row, const std::vector<double> &a, const std::vector<double> &b) {
  double aMax = 0, dot = 0, aa = 0, bb = 0;
  for (size_t k = 0; k < a.size(); ++k) {
    row.maxAbs = std::max(row.maxAbs, std::fabs(b[k] - a[k]));
    aMax = std::max(aMax, std::fabs(a[k]));
    dot += a[k] * b[k];
    aa += a[k] * a[k];
    bb += b[k] * b[k];
  }
  // Any NaN on one side is an error of its own: make it show as one.
  for (size_t k = 0; k < a.size(); ++k)
    if (std::isnan(a[k]) != std::isnan(b[k]))
      row.maxAbs = INFINITY;
  row.maxRel = aMax > 0 ? row.maxAbs / aMax : row.maxAbs;
  row.cosine = aa > 0 && bb > 0 ? dot / std::sqrt(aa * bb) : (aa == bb ? 1.0 : 0.0);
}

class CompareCommand : public Command {
public:
  explicit CompareCommand(Categories &categories)
      : Command("compare", "Compare two evaluations of a model value by value: error per ONNX value, culprits",
                kCompareOverview),
        sides(cl::Positional, cl::desc("<A dump dir> <B dump dir>"), cl::OneOrMore, cl::sub(sub)),
        json("json", cl::desc("Print one JSON object: both sides, every value, the culprits"), cl::sub(sub),
             cl::cat(categories.output)),
        top("top", cl::value_desc("n"), cl::init(10), cl::desc("Culprits listed (default 10; 0: all)"),
            cl::sub(sub), cl::cat(categories.output)),
        html("html", cl::value_desc("file"),
             cl::desc("Also write the comparison as one self-contained HTML page: the error along the\n"
                      "graph with the culprits marked, B's precision per value, a sortable table"),
             cl::sub(sub), cl::cat(categories.output)) {}

  int run() override;

private:
  cl::list<std::string> sides;
  cl::opt<bool> json;
  cl::opt<int64_t> top;
  cl::opt<std::string> html;
};

int CompareCommand::run() {
  if (sides.size() != 2)
    return usageError("needs two value dumps, A and B (got " + std::to_string(sides.size()) + ")");
  if (top < 0)
    return usageError("--top needs a count >= 0");
  auto a = readDump(sides[0]);
  if (!a)
    return failure(llvm::toString(a.takeError()));
  auto b = readDump(sides[1]);
  if (!b)
    return failure(llvm::toString(b.takeError()));
  llvm::StringMap<const DumpedValue *> inB, inA;
  for (const DumpedValue &v : b->values)
    inB[v.name] = &v;
  for (const DumpedValue &v : a->values)
    inA[v.name] = &v;

  std::vector<Row> rows;
  llvm::StringMap<size_t> rowOf;
  std::vector<std::string> onlyA, onlyB;
  for (const DumpedValue &va : a->values) {
    auto it = inB.find(va.name);
    if (it == inB.end()) {
      onlyA.push_back(va.name);
      continue;
    }
    Row row;
    row.a = &va;
    row.b = it->second;
    auto av = loadValues(*a, va);
    if (!av)
      return failure(llvm::toString(av.takeError()));
    auto bv = loadValues(*b, *row.b);
    if (!bv)
      return failure(llvm::toString(bv.takeError()));
    std::vector<double> bAligned = std::move(*bv);
    if (row.b->shape != va.shape) {
      if (va.shape.size() == 4 && row.b->shape == permuteShape(va.shape, true)) {
        bAligned = permuted(bAligned, row.b->shape, /*toLast=*/false);
        row.layout = "b channels last";
      } else if (va.shape.size() == 4 && va.shape == permuteShape(row.b->shape, true)) {
        bAligned = permuted(bAligned, row.b->shape, /*toLast=*/true);
        row.layout = "a channels last";
      } else {
        row.problem = "shapes differ";
      }
    }
    if (row.problem.empty() && bAligned.size() != av->size())
      row.problem = "sizes differ";
    if (row.problem.empty())
      measure(row, *av, bAligned);
    rowOf[va.name] = rows.size();
    rows.push_back(std::move(row));
  }
  for (const DumpedValue &vb : b->values)
    if (!inA.count(vb.name))
      onlyB.push_back(vb.name);
  // The error a value's inputs bring: a compared input's own; an input only A computed (B fused
  // or folded it) brings what its inputs bring, back to compared values or graph inputs (0).
  llvm::StringMap<double> carried;
  std::function<double(const std::string &, int)> errorOf = [&](const std::string &name, int depth) -> double {
    if (auto it = rowOf.find(name); it != rowOf.end())
      return rows[it->second].problem.empty() ? rows[it->second].maxRel : 0.0;
    if (auto it = carried.find(name); it != carried.end())
      return it->second;
    double worst = 0;
    if (auto it = inA.find(name); it != inA.end() && depth < 64)
      for (const std::string &input : it->second->inputs)
        worst = std::max(worst, errorOf(input, depth + 1));
    carried[name] = worst;
    return worst;
  };
  for (Row &row : rows) {
    for (const std::string &input : row.a->inputs)
      row.inputRel = std::max(row.inputRel, errorOf(input, 0));
    row.growth = row.problem.empty() ? row.maxRel - row.inputRel : 0;
  }
  std::vector<const Row *> culprits;
  for (const Row &row : rows)
    if (row.problem.empty() && row.growth > 0)
      culprits.push_back(&row);
  std::stable_sort(culprits.begin(), culprits.end(), [](const Row *x, const Row *y) { return x->growth > y->growth; });
  if (top > 0 && culprits.size() > static_cast<size_t>(top))
    culprits.resize(top);

  auto join = [](const std::vector<std::string> &items) {
    std::string out;
    for (const std::string &item : items)
      out += (out.empty() ? "" : ",") + item;
    return out;
  };
  {
    auto side = [](const Dump &d) {
      return llvm::json::Object{{"dir", d.dir}, {"source", d.source}, {"model", d.model}, {"precision", d.precision}};
    };
    auto strings = [](const std::vector<std::string> &items) {
      llvm::json::Array out;
      for (const std::string &item : items)
        out.push_back(item);
      return out;
    };
    llvm::json::Array values, culpritNames;
    for (const Row &row : rows) {
      llvm::json::Object o{{"name", row.a->name},   {"nodes", strings(row.b->nodes)}, {"op_a", row.a->op},
                           {"op_b", row.b->op},     {"dtype_a", row.a->dtype},        {"dtype_b", row.b->dtype},
                           {"layout", row.layout},  {"inputs", strings(row.a->inputs)}};
      if (!row.problem.empty()) {
        o["problem"] = row.problem;
      } else {
        o["max_abs"] = row.maxAbs;
        o["max_rel"] = row.maxRel;
        o["cosine"] = row.cosine;
        o["input_max_rel"] = row.inputRel;
        o["growth"] = row.growth;
      }
      values.push_back(std::move(o));
    }
    for (const Row *row : culprits)
      culpritNames.push_back(row->a->name);
    llvm::json::Array metadataDiff;
    for (const auto &[key, va, vb] : metadataDifferences(*a, *b))
      metadataDiff.push_back(llvm::json::Object{{"key", key}, {"a", va}, {"b", vb}});
    llvm::json::Value result(llvm::json::Object{{"a", side(*a)},
                                                {"metadata_diff", std::move(metadataDiff)},
                                                {"b", side(*b)},
                                                {"values", std::move(values)},
                                                {"only_a", strings(onlyA)},
                                                {"only_b", strings(onlyB)},
                                                {"culprits", std::move(culpritNames)}});
    if (!html.empty())
      if (llvm::Error err = writeCompareReport(html, result))
        return failure(llvm::toString(std::move(err)));
    if (json) {
      llvm::outs() << result << "\n";
      return kExitOk;
    }
  }
  llvm::raw_ostream &os = llvm::outs();
  os << "compare A " << a->dir << " (" << a->source << ", " << a->precision << ") with B " << b->dir << " ("
     << b->source << ", " << b->precision << ")" << (a->model != b->model ? ": different models!" : "") << "\n";
  for (const auto &[key, va, vb] : metadataDifferences(*a, *b))
    os << "  " << key << ": " << (va.empty() ? "-" : va) << " -> " << (vb.empty() ? "-" : vb) << "\n";
  os << "  " << rows.size() << " values in both";
  if (!onlyA.empty())
    os << "; only in A (folded or fused in B): " << join(onlyA);
  if (!onlyB.empty())
    os << "; only in B: " << join(onlyB);
  os << "\n\n";
  os << llvm::format("  %-28s %-10s %-10s %10s %10s %9s %10s  %s\n", "value", "type A", "type B", "max abs",
                     "max rel", "cosine", "growth", "nodes (B)");
  for (const Row &row : rows) {
    os << llvm::format("  %-28s %-10s %-10s ", row.a->name.c_str(), row.a->dtype.c_str(), row.b->dtype.c_str());
    if (!row.problem.empty())
      os << row.problem;
    else
      os << llvm::format("%10.3g %10.3g %9.6f %+10.2g", row.maxAbs, row.maxRel, row.cosine, row.growth);
    os << "  " << join(row.b->nodes) << (row.layout == "same" ? "" : " [" + row.layout + "]") << "\n";
  }
  os << "\n  culprits (relative error gained from the node's inputs to its output):\n";
  bool edges = std::any_of(a->values.begin(), a->values.end(), [](const DumpedValue &v) { return !v.inputs.empty(); });
  if (!edges && !rows.empty())
    os << "    (A lists no value's inputs, as a plan's dump does not: ranked by error alone; put the\n"
          "    interpreter's dump, `kiln eval --dump`, first to rank by growth)\n";
  if (culprits.empty())
    os << "    none: no value has more error than its inputs\n";
  for (auto [i, row] : llvm::enumerate(culprits))
    os << llvm::format("    %2zu. %-28s %.3g from %.3g (+%.3g)  ", i + 1, row->a->name.c_str(), row->maxRel,
                       row->inputRel, row->growth)
       << join(row->b->nodes) << " (" << row->b->op << ")\n";
  return kExitOk;
}

} // namespace

std::unique_ptr<Command> makeCompareCommand(Categories &categories) {
  return std::make_unique<CompareCommand>(categories);
}

} // namespace kiln::cli
