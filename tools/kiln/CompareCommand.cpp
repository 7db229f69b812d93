//===- CompareCommand.cpp - `kiln compare` ---------------------------------===//
//
// Two evaluations of one model, value by value: for every ONNX value both computed, the error
// of B against A (max abs, max relative to max |A|, cosine), and where the error grows most
// between a node's inputs and its output (the culprits).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "CompareReport.h"
#include "Diagnostics.h"
#include "InputFlags.h"
#include "InterpreterRun.h"
#include "ModelLoading.h"
#include "PlanDump.h"
#include "ValueError.h"
#include "ValueDump.h"

#include "runtime/Npy.h"
#include "runtime/TensorData.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <tuple>

namespace kiln::cli {

namespace {

namespace cl = llvm::cl;

const char *const kCompareOverview =
    R"(Compares two evaluations of one model on the same inputs, value by value. A and B are plans
(run here on the GPU with the --input values, or the same random ones, and dumped step by
step), or value dumps: directories `kiln eval --dump DIR` writes (the interpreter at any
precision and with any pass options) or `kiln run --dump DIR` writes (a plan on the GPU, with
every step's runner, algorithm and time). Where a side was timed, each value shows the time of
the steps after the previous value's up to the one that completed it, so the values add up to
the steps' total, printed above. B is judged against A: for every ONNX value both computed, in
A's order, the max absolute error, the max error relative to max |A| and the cosine similarity; then the
culprits, the values whose relative error exceeds the largest of their inputs' by the most
(where the error grows, not where it arrives). Channels-last values are compared in the other
side's layout. Values only one side computed (folded, or kept inside a fused step) are listed,
and so is every difference in how the two were computed (compiler, precision and pass options
for the interpreter; compiler, library versions, arena and weights for a plan).

  kiln compare fp32.kiln bf16.kiln --input x=x.npy --model model.onnx --html report.html
  kiln compare bf16.kiln --reference interpreter --model model.onnx --input x=x.npy
  kiln compare fp32_dump/ bf16_dump/

With --model, two plans' culprits are ranked over the model's value graph (its interpreter dump);
otherwise by error alone.

Exit status: 0 on success, 1 when a dump cannot be read or a plan not run, 2 on a usage error.
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

/// Whether both dumps name the same model file: the interpreter's names the path it was given,
/// a plan's the file name its plan records.
bool sameModel(const Dump &a, const Dump &b) {
  return llvm::sys::path::filename(a.model) == llvm::sys::path::filename(b.model);
}

struct Row {
  const DumpedValue *a = nullptr, *b = nullptr;
  Alignment alignment = Alignment::Same;
  std::string problem; // why it could not be compared
  ValueError error;
  double inputRel = 0; // the largest relative error among its compared inputs
  double growth = 0;
  std::optional<double> msA, msB; // attributeTimes
};

/// Each row's time on one side (GPU dumps): the steps after the one that completed the previous
/// row's value, up to the one that completed this row's, each step counted once. A step that
/// completes no compared value (an fp32 conv whose value the other side fused away) counts
/// toward the next value, so the rows add up to the steps' total. Without the dump's step list
/// (older dumps), the completing step's own time, on the first value it completed.
void attributeTimes(std::vector<Row> &rows, const Dump &dump, bool sideA) {
  std::vector<double> before(1, 0.0); // before[i]: the steps 0..i-1 summed
  for (const StepTiming &step : dump.steps)
    before.push_back(before.back() + step.ms);
  int64_t previous = -1;
  for (Row &row : rows) {
    const DumpedValue *v = sideA ? row.a : row.b;
    if (!v->step)
      continue;
    int64_t index = v->step->index;
    double ms = 0;
    if (index > previous) {
      bool listed = index < static_cast<int64_t>(dump.steps.size());
      ms = listed ? before[index + 1] - before[previous + 1] : v->step->ms;
      previous = index;
    }
    (sideA ? row.msA : row.msB) = ms;
  }
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
                      "graph with the culprits marked, A's and B's step times per value, B's precision\n"
                      "per value, a sortable table"),
             cl::sub(sub), cl::cat(categories.output)),
        inputs(sub, categories),
        reference("reference", cl::value_desc("interpreter"),
                  cl::desc("A is the reference interpreter: --model evaluated in strict fp32 on the\n"
                           "same inputs; give B alone"),
                  cl::sub(sub), cl::cat(categories.input)),
        modelPath("model", cl::value_desc("model.onnx"),
                  cl::desc("The model the plans were compiled from: the interpreter's side for\n"
                           "--reference interpreter, and where two plans get which value feeds which"),
                  cl::sub(sub), cl::cat(categories.input)),
        shapes("shape", cl::value_desc("name=dims"), cl::desc("Static shape of a --model input (as kiln compile)"),
               cl::sub(sub), cl::cat(categories.input)),
        timingCache("timing-cache", cl::value_desc("file"),
                    cl::desc("For plans: the runtime's timing cache (default ~/.cache/kiln/timing_cache.txt;\n"
                             "none: tune without one)"),
                    cl::sub(sub), cl::cat(categories.input)),
        keepDumps("keep-dumps", cl::value_desc("dir"),
                  cl::desc("Write the dumps that plans and --reference make into <dir>/a, <dir>/b\n"
                           "(and <dir>/graph) and keep them (default: a temporary directory)"),
                  cl::sub(sub), cl::cat(categories.output)),
        edges("edges", cl::value_desc("dump dir"),
              cl::desc("Take which values feed which from this dump (`kiln eval --dump` of the same\n"
                       "model) instead of A's: a plan's dump does not record them, so two plan dumps\n"
                       "rank culprits by growth only with it"),
              cl::sub(sub), cl::cat(categories.input)) {}

  int run() override;

private:
  /// A plan side's dump into `dir`: the plan run on the GPU with the given inputs, step by step.
  llvm::Error dumpPlan(const std::string &plan, const std::string &dir);
  /// The interpreter's strict-fp32 dump of --model into `dir`.
  llvm::Error dumpReference(const std::string &dir);

  cl::list<std::string> sides;
  InputFlags inputs;
  cl::opt<std::string> reference;
  cl::opt<std::string> modelPath;
  cl::list<std::string> shapes;
  cl::opt<std::string> timingCache;
  cl::opt<std::string> keepDumps;
  cl::opt<bool> json;
  cl::opt<int64_t> top;
  cl::opt<std::string> html;
  cl::opt<std::string> edges;
};

llvm::Error CompareCommand::dumpPlan(const std::string &plan, const std::string &dir) {
  auto files = inputs.inputFiles();
  if (!files)
    return files.takeError();
  SessionOptions options;
  options.plan = plan;
  options.inputFiles = *files;
  options.seed = inputs.seed();
  options.timingCache = timingCache;
  options.quiet = true;
  std::unique_ptr<Session> session = openSession(prefix(), options);
  if (!session)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "cannot run plan '" + plan + "'");
  auto count = dumpPlanValues(*session, plan, dir);
  if (!count)
    return count.takeError();
  return llvm::Error::success();
}

llvm::Error CompareCommand::dumpReference(const std::string &dir) {
  frontend::ImportOptions importOptions;
  for (const std::string &shape : shapes)
    if (llvm::Error error = frontend::parseShapeOption(shape, importOptions))
      return error;
  auto files = inputs.inputFiles();
  if (!files)
    return files.takeError();
  mlir::MLIRContext context;
  DiagnosticPrinter diagnostics(context, prefix(), /*showRemarks=*/false);
  auto module = loadModel(context, modelPath, importOptions);
  if (!module)
    return module.takeError();
  PipelineOptions options;
  options.precision = Precision::FP32;
  options.strictFp32 = true;
  mlir::PassManager pm(&context, mlir::ModuleOp::getOperationName());
  buildOptimizationPipeline(pm, options);
  if (mlir::failed(pm.run(**module)))
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "the fp32 pipeline failed on '" + modelPath + "'");
  auto main = mainFunction(**module);
  if (!main)
    return main.takeError();
  auto arguments = interpreterArguments(*main, *files, inputs.seed());
  if (!arguments)
    return arguments.takeError();
  size_t count = 0;
  auto outputs = evaluateIntoDump(*main, *arguments, modelPath, options, dir, count);
  return outputs ? llvm::Error::success() : outputs.takeError();
}

int CompareCommand::run() {
  bool interpreterReference = !reference.empty();
  if (interpreterReference && reference != "interpreter")
    return usageError("--reference takes 'interpreter' (got '" + reference + "')");
  if (interpreterReference && modelPath.empty())
    return usageError("--reference interpreter needs --model model.onnx");
  size_t wanted = interpreterReference ? 1 : 2;
  if (sides.size() != wanted)
    return usageError(interpreterReference
                          ? "with --reference interpreter give one side, B (got " + std::to_string(sides.size()) + ")"
                          : "needs two sides, A and B: value dumps or plans (got " + std::to_string(sides.size()) +
                                ")");
  if (top < 0)
    return usageError("--top needs a count >= 0");
  if (auto files = inputs.inputFiles(); !files)
    return usageError(llvm::toString(files.takeError()));

  // Each side is a dump directory, or a plan to run here and dump; --reference makes A.
  std::vector<std::string> dirs, labels; // labels: what each side is, for the report
  bool anyPlan = false;
  for (const std::string &side : sides)
    anyPlan |= !llvm::sys::fs::is_directory(side);
  std::string work = keepDumps;
  bool temporary = work.empty() && (anyPlan || interpreterReference);
  if (temporary) {
    llvm::SmallString<128> made;
    if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("kiln-compare", made))
      return failure("cannot create a temporary directory: " + ec.message());
    work = std::string(made);
  }
  auto cleanup = llvm::make_scope_exit([&] {
    if (temporary)
      llvm::sys::fs::remove_directories(work);
  });
  auto within = [&](const char *name) {
    llvm::SmallString<256> path(work);
    llvm::sys::path::append(path, name);
    return std::string(path);
  };
  if (interpreterReference) {
    if (llvm::Error err = dumpReference(within("a")))
      return failure(llvm::toString(std::move(err)));
    dirs.push_back(within("a"));
    labels.push_back(modelPath + " in the interpreter");
  }
  for (const std::string &side : sides) {
    labels.push_back(side);
    if (llvm::sys::fs::is_directory(side)) {
      dirs.push_back(side);
      continue;
    }
    if (!llvm::sys::fs::exists(side))
      return failure("'" + side + "' is neither a value dump directory nor a plan file");
    std::string dir = within(dirs.empty() ? "a" : "b");
    if (llvm::Error err = dumpPlan(side, dir))
      return failure(llvm::toString(std::move(err)));
    dirs.push_back(dir);
  }
  std::string graphDump = edges;
  if (graphDump.empty() && !modelPath.empty() && !interpreterReference) {
    graphDump = within("graph");
    if (llvm::Error err = dumpReference(graphDump))
      return failure(llvm::toString(std::move(err)));
  }

  auto a = readDump(dirs[0]);
  if (!a)
    return failure(llvm::toString(a.takeError()));
  auto b = readDump(dirs[1]);
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
    row.alignment = alignToA(bAligned, va.shape, row.b->shape);
    if (row.alignment == Alignment::Mismatch)
      row.problem = alignmentName(row.alignment);
    if (row.problem.empty() && bAligned.size() != av->size())
      row.problem = "sizes differ";
    if (row.problem.empty())
      row.error = measureError(*av, bAligned);
    rowOf[va.name] = rows.size();
    rows.push_back(std::move(row));
  }
  for (const DumpedValue &vb : b->values)
    if (!inA.count(vb.name))
      onlyB.push_back(vb.name);
  // Where error grows: over A's graph (a plan's dump lists no inputs), through values only A
  // computed (B fused or folded them) back to compared values.
  std::optional<Dump> graph;
  if (!graphDump.empty()) {
    auto read = readDump(graphDump);
    if (!read)
      return failure(llvm::toString(read.takeError()));
    graph = std::move(*read);
  }
  const std::vector<DumpedValue> &graphValues = graph ? graph->values : a->values;
  llvm::StringMap<ErrorEdge> errorEdges;
  for (const DumpedValue &v : graphValues)
    errorEdges[v.name].inputs = v.inputs;
  for (const DumpedValue &va : a->values)
    if (auto it = rowOf.find(va.name); it != rowOf.end())
      errorEdges[va.name].maxRel = rows[it->second].problem.empty() ? rows[it->second].error.maxRel : 0.0;
  auto lookup = [&](const std::string &name) -> const ErrorEdge * {
    auto it = errorEdges.find(name);
    return it == errorEdges.end() ? nullptr : &it->second;
  };
  // A value's inputs as the graph lists them (none for a value it does not know).
  auto inputsOf = [&](const std::string &name) {
    const ErrorEdge *edge = lookup(name);
    return edge ? edge->inputs : std::vector<std::string>();
  };
  for (Row &row : rows) {
    row.inputRel = errorBroughtByInputs(inputsOf(row.a->name), lookup);
    row.growth = row.problem.empty() ? row.error.maxRel - row.inputRel : 0;
  }
  attributeTimes(rows, *a, /*sideA=*/true);
  attributeTimes(rows, *b, /*sideA=*/false);
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
    // Dumps made here live in a directory that goes away: sides are named by what they are.
    auto side = [](const Dump &d, const std::string &label) {
      return llvm::json::Object{{"dir", label}, {"source", d.source}, {"model", d.model}, {"precision", d.precision}};
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
                           {"layout", alignmentName(row.alignment)},  {"inputs", strings(inputsOf(row.a->name))}};
      auto timing = [](const std::optional<StepTiming> &t) {
        return llvm::json::Object{
            {"index", t->index}, {"runner", t->runner}, {"algorithm", t->algorithm}, {"ms", t->ms}};
      };
      if (row.a->step)
        o["step_a"] = timing(row.a->step);
      if (row.b->step)
        o["step_b"] = timing(row.b->step);
      if (row.msA)
        o["ms_a"] = *row.msA;
      if (row.msB)
        o["ms_b"] = *row.msB;
      if (!row.problem.empty()) {
        o["problem"] = row.problem;
      } else {
        // JSON has no infinity: an infinite error (a non-finite value on one side) is null.
        auto number = [](double v) { return std::isfinite(v) ? llvm::json::Value(v) : llvm::json::Value(nullptr); };
        o["max_abs"] = number(row.error.maxAbs);
        o["max_rel"] = number(row.error.maxRel);
        o["cosine"] = number(row.error.cosine);
        o["input_max_rel"] = number(row.inputRel);
        o["growth"] = number(row.growth);
      }
      values.push_back(std::move(o));
    }
    for (const Row *row : culprits)
      culpritNames.push_back(row->a->name);
    llvm::json::Array metadataDiff;
    for (const auto &[key, va, vb] : metadataDifferences(*a, *b))
      metadataDiff.push_back(llvm::json::Object{{"key", key}, {"a", va}, {"b", vb}});
    llvm::json::Value result(llvm::json::Object{{"a", side(*a, labels[0])},
                                                {"metadata_diff", std::move(metadataDiff)},
                                                {"b", side(*b, labels[1])},
                                                {"values", std::move(values)},
                                                {"only_a", strings(onlyA)},
                                                {"only_b", strings(onlyB)},
                                                {"culprits", std::move(culpritNames)}});
    if (a->stepsMs || b->stepsMs) {
      llvm::json::Object total;
      if (a->stepsMs)
        total["a"] = *a->stepsMs;
      if (b->stepsMs)
        total["b"] = *b->stepsMs;
      result.getAsObject()->try_emplace("steps_ms", std::move(total));
    }
    if (!html.empty())
      if (llvm::Error err = writeCompareReport(html, result))
        return failure(llvm::toString(std::move(err)));
    if (json) {
      llvm::outs() << result << "\n";
      return kExitOk;
    }
  }
  llvm::raw_ostream &os = llvm::outs();
  os << "compare A " << labels[0] << " (" << a->source << ", " << a->precision << ") with B " << labels[1] << " ("
     << b->source << ", " << b->precision << ")" << (sameModel(*a, *b) ? "" : ": different models!") << "\n";
  for (const auto &[key, va, vb] : metadataDifferences(*a, *b))
    os << "  " << key << ": " << (va.empty() ? "-" : va) << " -> " << (vb.empty() ? "-" : vb) << "\n";
  if (a->stepsMs && b->stepsMs)
    os << llvm::format("  steps timed alone: A %.3f ms, B %.3f ms (B/A %.2fx); a value's ms are the steps after\n"
                       "  the previous value's, up to the one that completed it\n",
                       *a->stepsMs, *b->stepsMs, *b->stepsMs / std::max(*a->stepsMs, 1e-9));
  os << "  " << rows.size() << " values in both";
  if (!onlyA.empty())
    os << "; only in A (folded or fused in B): " << join(onlyA);
  if (!onlyB.empty())
    os << "; only in B: " << join(onlyB);
  os << "\n\n";
  // Step times where a side was timed (GPU dumps): attributeTimes.
  bool timed = std::any_of(rows.begin(), rows.end(), [](const Row &r) { return r.msA || r.msB; });
  auto msText = [](const std::optional<double> &ms) {
    return ms ? llvm::formatv("{0:f4}", *ms).str() : std::string("-");
  };
  os << llvm::format("  %-28s %-10s %-10s %10s %10s %9s %10s", "value", "type A", "type B", "max abs", "max rel",
                     "cosine", "growth");
  if (timed)
    os << llvm::format(" %9s %9s %-9s", "ms A", "ms B", "runner B");
  os << "  nodes (B)\n";
  for (const Row &row : rows) {
    os << llvm::format("  %-28s %-10s %-10s ", row.a->name.c_str(), row.a->dtype.c_str(), row.b->dtype.c_str());
    if (!row.problem.empty())
      os << row.problem;
    else
      os << llvm::format("%10.3g %10.3g %9.6f %+10.2g", row.error.maxAbs, row.error.maxRel, row.error.cosine,
                         row.growth);
    if (timed)
      os << llvm::format(" %9s %9s %-9s", msText(row.msA).c_str(), msText(row.msB).c_str(),
                         row.b->step ? row.b->step->runner.c_str() : "-");
    os << "  " << join(row.b->nodes)
       << (row.alignment == Alignment::Same ? "" : std::string(" [") + alignmentName(row.alignment) + "]") << "\n";
  }
  os << "\n  culprits (relative error gained from the node's inputs to its output):\n";
  bool known = std::any_of(graphValues.begin(), graphValues.end(), [](const DumpedValue &v) { return !v.inputs.empty(); });
  if (!known && !rows.empty())
    os << "    (A lists no value's inputs, as a plan's dump does not: ranked by error alone; give\n"
          "    --edges with the interpreter's dump, `kiln eval --dump`, to rank by growth)\n";
  if (culprits.empty())
    os << "    none: no value has more error than its inputs\n";
  for (auto [i, row] : llvm::enumerate(culprits))
    os << llvm::format("    %2zu. %-28s %.3g from %.3g (+%.3g)  ", i + 1, row->a->name.c_str(), row->error.maxRel,
                       row->inputRel, row->growth)
       << join(row->b->nodes) << " (" << row->b->op << ")\n";
  return kExitOk;
}

} // namespace

std::unique_ptr<Command> makeCompareCommand(Categories &categories) {
  return std::make_unique<CompareCommand>(categories);
}

} // namespace kiln::cli
