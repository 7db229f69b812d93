//===- PrecisionSearch.cpp - precision chosen under an error budget --------===//

#include "PrecisionSearch.h"

#include "CalibrationRun.h"
#include "InterpreterRun.h"
#include "ModelLoading.h"
#include "TensorNpy.h"
#include "ValueDump.h"
#include "ValueError.h"

#include "ir/Interpreter/Interpreter.h"
#include "ir/KilnOps.h"
#include "ir/Provenance.h"
#include "runtime/Npy.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <optional>
#include <set>
#include <thread>

namespace kiln::cli {

namespace {

using interp::Tensor;

llvm::Error searchError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

std::string formatError(double error) { return llvm::formatv("{0:e2}", error).str(); }

bool isHalf(mlir::Type type) {
  auto tensor = llvm::dyn_cast<mlir::RankedTensorType>(type);
  return tensor && (tensor.getElementType().isBF16() || tensor.getElementType().isF16());
}

/// Whether `op` computes or stores anything in half precision (a value it yields, or one it
/// reads): keeping its nodes in fp32 changes something.
bool touchesHalf(mlir::Operation *op) {
  return llvm::any_of(op->getResultTypes(), isHalf) || llvm::any_of(op->getOperandTypes(), isHalf);
}

/// A value the reference computed, in its layout.
struct ReferenceValue {
  std::vector<int64_t> shape;
  std::vector<double> values;
};

/// A value a candidate computed, for the ranking: its error against the reference and what it
/// gains over its inputs.
struct CandidateValue {
  std::string name;
  std::vector<std::string> nodes; // the ONNX nodes of the op that computes it
  bool half = false;
  bool output = false; // a graph output (through the casts back to its declared type)
  ErrorEdge edge;
  double growth = 0;
};

/// What a ranking run saw: its values in evaluation order, and the node names the precision
/// pass can match in its module (an op's first node).
struct Ranking {
  std::vector<CandidateValue> values;
  llvm::StringSet<> primaryNodes;
};

class Search {
public:
  Search(mlir::ModuleOp imported, const std::vector<CalibrationSample> &samples, const PrecisionSearchOptions &options)
      : imported_(imported), samples_(samples), options_(options),
        target_(options.maxError * (1 - options.headroom)) {}

  llvm::Expected<PrecisionChoice> run();

private:
  /// Loads every sample's inputs as the module's argument tensors.
  llvm::Error loadInputs();
  /// A candidate's module and the function to evaluate in it.
  struct Optimized {
    mlir::OwningOpRef<mlir::ModuleOp> module;
    mlir::func::FuncOp main;
  };
  /// Runs the pipeline for `options` on a copy of the imported module. Remarks and warnings of
  /// the candidates stay quiet (the compile that follows prints those of the chosen one).
  llvm::Expected<Optimized> optimize(const PipelineOptions &options);
  /// Evaluates the strict fp32 reference on every sample: its outputs, and every value of the
  /// first sample (what ranking runs compare against).
  llvm::Error evaluateReference(const PipelineOptions &options);
  /// A ranking run: a pure half-precision candidate's output error, and what it saw.
  struct RankingRun {
    double error = 0;
    Ranking ranking;
  };
  /// Evaluates every candidate of `candidates` on every sample at once; each also ranks the
  /// values of the first sample against the reference's.
  llvm::Expected<std::vector<RankingRun>> rankingRuns(const std::vector<PipelineOptions> &candidates);
  /// Evaluates every function of `mains` on every sample on a pool of threads: the outputs,
  /// function-major. `observers[m]`, where given, sees function m on the first sample (each
  /// writes its own state; the interpreter itself only reads the modules).
  llvm::Expected<std::vector<llvm::SmallVector<Tensor>>>
  evaluateAll(llvm::ArrayRef<mlir::func::FuncOp> mains, llvm::ArrayRef<interp::ResultObserver> observers = {});
  /// The largest error of one sample's outputs against the reference's (integer outputs, an
  /// argmax say, carry no rounding error to budget).
  double outputError(size_t sample, llvm::ArrayRef<Tensor> outputs) const;
  /// Makes candidate c's observer of the first sample from its optimized function.
  using ObserverFactory = std::function<interp::ResultObserver(size_t c, mlir::func::FuncOp main)>;
  /// The largest output error of each candidate on every sample: the pipelines run one after
  /// another, then every evaluation at once (evaluateAll), each observed where `observerFor`
  /// makes an observer.
  llvm::Expected<std::vector<double>> outputErrors(const std::vector<PipelineOptions> &candidates,
                                                   const ObserverFactory &observerFor = {});
  PipelineOptions withFp32Nodes(Precision precision, const std::vector<std::string> &nodes) const;
  /// Step 5: the 8-bit candidate to choose over pure half precision, if any.
  llvm::Expected<std::optional<std::pair<PipelineOptions::Quantization, double>>> searchEightBit();
  void say(const std::string &line) const {
    if (options_.progress)
      options_.progress(line);
  }

  mlir::ModuleOp imported_;
  const std::vector<CalibrationSample> &samples_;
  const PrecisionSearchOptions &options_;
  double target_; // the error every candidate is held to: maxError less the headroom
  std::vector<llvm::SmallVector<Tensor>> arguments_;         // per sample
  std::vector<llvm::SmallVector<Tensor>> referenceOutputs_;  // per sample
  llvm::StringMap<ReferenceValue> referenceValues_;          // the first sample's
  PrecisionChoice choice_;
};

llvm::Error Search::loadInputs() {
  auto main = mainFunction(imported_);
  if (!main)
    return main.takeError();
  for (const CalibrationSample &sample : samples_) {
    auto arguments = interpreterArguments(*main, sample.files, std::nullopt);
    if (!arguments)
      return searchError("calibration input '" + sample.name + "': " + llvm::toString(arguments.takeError()));
    arguments_.push_back(std::move(*arguments));
  }
  return llvm::Error::success();
}

llvm::Expected<Search::Optimized> Search::optimize(const PipelineOptions &options) {
  mlir::OwningOpRef<mlir::ModuleOp> module(imported_.clone());
  mlir::MLIRContext *context = module->getContext();
  std::string errors;
  mlir::ScopedDiagnosticHandler quiet(context, [&](mlir::Diagnostic &diagnostic) {
    if (diagnostic.getSeverity() == mlir::DiagnosticSeverity::Error)
      errors += (errors.empty() ? "" : "; ") + diagnostic.str();
    return mlir::success();
  });
  mlir::PassManager pm(context, mlir::ModuleOp::getOperationName());
  buildOptimizationPipeline(pm, options);
  if (mlir::failed(pm.run(*module)))
    return searchError("the optimization pipeline failed for precision " + precisionName(options.precision) +
                       (errors.empty() ? std::string() : ": " + errors));
  auto main = mainFunction(*module);
  if (!main)
    return main.takeError();
  return Optimized{std::move(module), *main};
}

llvm::Error Search::evaluateReference(const PipelineOptions &options) {
  auto optimized = optimize(options);
  if (!optimized)
    return optimized.takeError();
  interp::ResultObserver observe = [&](mlir::Operation *op, llvm::ArrayRef<Tensor> results) -> llvm::Error {
    for (auto [i, name] : llvm::enumerate(onnxValueNames(op)))
      if (!name.empty() && results[i].isFloat())
        referenceValues_.try_emplace(
            name, ReferenceValue{std::vector<int64_t>(results[i].shape.begin(), results[i].shape.end()), results[i].f});
    return llvm::Error::success();
  };
  auto outputs = evaluateAll({optimized->main}, {observe});
  if (!outputs)
    return outputs.takeError();
  referenceOutputs_ = std::move(*outputs);
  return llvm::Error::success();
}

llvm::Expected<std::vector<Search::RankingRun>> Search::rankingRuns(const std::vector<PipelineOptions> &candidates) {
  std::vector<RankingRun> runs(candidates.size());
  std::vector<std::set<std::string>> outputNames(candidates.size());
  auto errors = outputErrors(candidates, [&](size_t c, mlir::func::FuncOp main) -> interp::ResultObserver {
    Ranking &ranking = runs[c].ranking;
    for (const std::string &name : inputValueNames(main.getBody().front().getTerminator()))
      outputNames[c].insert(name);
    main.walk([&](mlir::Operation *op) {
      if (std::optional<OnnxNode> node = onnxNodeOf(op->getLoc()))
        ranking.primaryNodes.insert(node->name);
    });
    // Each observer writes its own ranking and only reads the reference: they run at once.
    return [this, &ranking, &outputs = outputNames[c]](mlir::Operation *op,
                                                       llvm::ArrayRef<Tensor> results) -> llvm::Error {
      for (auto [i, name] : llvm::enumerate(onnxValueNames(op))) {
        if (name.empty() || !results[i].isFloat())
          continue;
        if (llvm::any_of(ranking.values, [&](const CandidateValue &c) { return c.name == name; }))
          continue;
        const Tensor &t = results[i];
        std::vector<int64_t> shape(t.shape.begin(), t.shape.end());
        CandidateValue value{name, nodeNames(op->getLoc()), touchesHalf(op), outputs.count(name) > 0,
                             {inputValueNames(op), std::nullopt}};
        if (auto it = referenceValues_.find(name); it != referenceValues_.end()) {
          std::vector<double> aligned = t.f;
          if (alignToA(aligned, it->second.shape, shape) != Alignment::Mismatch &&
              aligned.size() == it->second.values.size())
            value.edge.maxRel = measureError(it->second.values, aligned).maxRel;
        }
        ranking.values.push_back(std::move(value));
      }
      return llvm::Error::success();
    };
  });
  if (!errors)
    return errors.takeError();
  for (auto [run, error] : llvm::zip(runs, *errors)) {
    run.error = error;
    llvm::StringMap<const ErrorEdge *> edges;
    for (const CandidateValue &c : run.ranking.values)
      edges[c.name] = &c.edge;
    auto lookup = [&](const std::string &name) -> const ErrorEdge * {
      auto it = edges.find(name);
      return it == edges.end() ? nullptr : it->second;
    };
    for (CandidateValue &c : run.ranking.values)
      if (c.edge.maxRel)
        c.growth = *c.edge.maxRel - errorBroughtByInputs(c.edge.inputs, lookup);
  }
  return runs;
}

llvm::Expected<std::vector<llvm::SmallVector<Tensor>>>
Search::evaluateAll(llvm::ArrayRef<mlir::func::FuncOp> mains, llvm::ArrayRef<interp::ResultObserver> observers) {
  size_t samples = arguments_.size(), jobs = mains.size() * samples;
  std::vector<std::optional<llvm::Expected<llvm::SmallVector<Tensor>>>> results(jobs);
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  size_t workers = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, std::max<size_t>(jobs, 1));
  for (size_t w = 0; w < workers; ++w)
    pool.emplace_back([&] {
      for (size_t j = next++; j < jobs; j = next++)
        results[j].emplace(interp::evaluateFunction(
            mains[j / samples], arguments_[j % samples],
            j % samples == 0 && j / samples < observers.size() ? observers[j / samples] : interp::ResultObserver()));
    });
  for (std::thread &t : pool)
    t.join();
  std::vector<llvm::SmallVector<Tensor>> outputs;
  llvm::Error failed = llvm::Error::success();
  for (size_t j = 0; j < jobs; ++j) {
    llvm::Expected<llvm::SmallVector<Tensor>> &result = *results[j];
    if (!result) {
      failed = llvm::joinErrors(std::move(failed), searchError("calibration input '" + samples_[j % samples].name +
                                                               "': " + llvm::toString(result.takeError())));
      continue;
    }
    outputs.push_back(std::move(*result));
  }
  if (failed)
    return std::move(failed);
  return outputs;
}

double Search::outputError(size_t sample, llvm::ArrayRef<Tensor> outputs) const {
  double worst = 0;
  for (auto [k, out] : llvm::enumerate(outputs)) {
    const Tensor &ref = referenceOutputs_[sample][k];
    if (out.isFloat() && out.f.size() == ref.f.size())
      worst = std::max(worst, measureError(ref.f, out.f).maxRel);
  }
  return worst;
}

llvm::Expected<std::vector<double>> Search::outputErrors(const std::vector<PipelineOptions> &candidates,
                                                        const ObserverFactory &observerFor) {
  std::vector<Optimized> optimized;
  std::vector<mlir::func::FuncOp> mains;
  std::vector<interp::ResultObserver> observers;
  for (const PipelineOptions &options : candidates) {
    auto one = optimize(options);
    if (!one)
      return one.takeError();
    mains.push_back(one->main);
    if (observerFor)
      observers.push_back(observerFor(optimized.size(), one->main));
    optimized.push_back(std::move(*one));
  }
  auto outputs = evaluateAll(mains, observers);
  if (!outputs)
    return outputs.takeError();
  size_t samples = arguments_.size();
  std::vector<double> errors(candidates.size(), 0.0);
  for (size_t j = 0; j < outputs->size(); ++j)
    errors[j / samples] = std::max(errors[j / samples], outputError(j % samples, (*outputs)[j]));
  return errors;
}

PipelineOptions Search::withFp32Nodes(Precision precision, const std::vector<std::string> &nodes) const {
  PipelineOptions o = options_.base;
  o.precision = precision;
  for (const std::string &node : nodes)
    o.forcePrecision.push_back({node, Precision::FP32});
  return o;
}

llvm::Expected<PrecisionChoice> Search::run() {
  auto start = std::chrono::steady_clock::now();
  choice_.maxError = options_.maxError;
  choice_.target = target_;
  choice_.samples = samples_.size();
  if (llvm::Error err = loadInputs())
    return std::move(err);

  say("precision search: budget " + formatError(options_.maxError) + ", held to " + formatError(target_) +
      " on the interpreter, on " + std::to_string(samples_.size()) + " calibration input(s)");
  {
    auto t0 = std::chrono::steady_clock::now();
    PipelineOptions reference = options_.base;
    reference.precision = Precision::FP32;
    reference.strictFp32 = true;
    reference.keepFp32.clear();
    reference.forcePrecision.clear();
    if (llvm::Error err = evaluateReference(reference))
      return std::move(err);
    PrecisionTrial t{"reference fp32", 0, 0, 0,
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), true};
    choice_.trials.push_back(t);
    say(llvm::formatv("  {0,-36} ({1:f1} s)", t.what, t.seconds).str());
  }

  // Pure bf16 and fp16, at once; each ranks its values, the start keeps its ranking.
  Precision startPrecision = Precision::BF16;
  Ranking ranking; // the start's
  double startError = INFINITY;
  {
    auto t0 = std::chrono::steady_clock::now();
    const Precision halves[] = {Precision::BF16, Precision::FP16};
    auto runs = rankingRuns({withFp32Nodes(halves[0], {}), withFp32Nodes(halves[1], {})});
    if (!runs)
      return runs.takeError();
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (auto [p, r] : llvm::zip(halves, *runs)) {
      PrecisionTrial t{precisionName(p).str(), 0, 0, r.error, seconds, r.error <= target_};
      choice_.trials.push_back(t);
      say(llvm::formatv("  {0,-36} error {1} {2} ({3:f1} s, both at once)", t.what, formatError(t.error),
                        t.withinBudget ? "within" : "over", seconds)
              .str());
      if (r.error < startError) {
        startError = r.error;
        startPrecision = p;
        ranking = std::move(r.ranking);
      }
    }
  }
  auto finish = [&](Precision precision, std::vector<std::string> nodes, double error) {
    choice_.precision = precision;
    choice_.fp32Nodes = std::move(nodes);
    choice_.error = error;
    choice_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return std::move(choice_);
  };
  if (startError <= target_) {
    if (!options_.eightBitCalibration.empty()) {
      auto eightBit = searchEightBit();
      if (!eightBit)
        return eightBit.takeError();
      if (*eightBit) {
        choice_.quantization = (*eightBit)->first;
        return finish(Precision::BF16, {}, (*eightBit)->second);
      }
    }
    return finish(startPrecision, {}, startError);
  }

  // The values that add error, most first, then the other half-precision values by their own
  // error (rounding spread over many values adds up even where no single one grows it); each
  // brings the nodes of its op that the precision pass can match (values of ops already all
  // fp32 have nothing to give).
  // Before them all, a graph output that alone breaks the budget: one whose own growth is over
  // it, or any output when the budget is below the rounding of its largest value to the half
  // type (2^-11 of it in fp16, 2^-8 in bf16), whatever runs before it.
  auto adds = [](const CandidateValue &c) { return c.edge.maxRel && c.growth > 0; };
  double outputRounding = startPrecision == Precision::FP16 ? std::ldexp(1.0, -11) : std::ldexp(1.0, -8);
  auto breaks = [&](const CandidateValue &c) {
    return c.output && (outputRounding > target_ || (adds(c) && c.growth > target_));
  };
  std::stable_sort(ranking.values.begin(), ranking.values.end(), [&](const CandidateValue &x, const CandidateValue &y) {
    if (breaks(x) != breaks(y))
      return breaks(x);
    if (adds(x) != adds(y))
      return adds(x);
    if (adds(x))
      return x.growth > y.growth;
    return x.edge.maxRel.value_or(0) > y.edge.maxRel.value_or(0);
  });
  size_t growing = llvm::count_if(ranking.values, [&](const CandidateValue &c) { return c.half && adds(c); });
  std::vector<std::vector<std::string>> nodesOf; // per ranked value: the nodes it adds
  llvm::StringSet<> taken;
  for (const CandidateValue &c : ranking.values) {
    if (!c.half)
      continue;
    std::vector<std::string> nodes;
    for (const std::string &node : c.nodes)
      if (ranking.primaryNodes.contains(node) && taken.insert(node).second)
        nodes.push_back(node);
    if (!nodes.empty())
      nodesOf.push_back(std::move(nodes));
  }
  auto topNodes = [&](size_t k) {
    std::vector<std::string> nodes;
    for (size_t i = 0; i < k; ++i)
      nodes.insert(nodes.end(), nodesOf[i].begin(), nodesOf[i].end());
    return nodes;
  };
  // Evaluates keeping the top k values fp32 for every k in `ks` at once; records each trial.
  auto tryTops = [&](const std::vector<size_t> &ks) -> llvm::Expected<std::vector<PrecisionTrial>> {
    auto start = std::chrono::steady_clock::now();
    std::vector<PipelineOptions> candidates;
    for (size_t k : ks)
      candidates.push_back(withFp32Nodes(startPrecision, topNodes(k)));
    auto errors = outputErrors(candidates);
    if (!errors)
      return errors.takeError();
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::vector<PrecisionTrial> out;
    for (size_t i = 0; i < ks.size(); ++i) {
      PrecisionTrial t;
      t.keptValues = ks[i];
      t.keptNodes = topNodes(ks[i]).size();
      t.what = llvm::formatv("{0} + top {1} values in fp32 ({2} nodes)", precisionName(startPrecision), ks[i],
                             t.keptNodes)
                   .str();
      t.error = (*errors)[i];
      t.withinBudget = t.error <= target_;
      t.seconds = seconds;
      choice_.trials.push_back(t);
      say(llvm::formatv("  {0,-36} error {1} {2} ({3:f1} s{4})", t.what, formatError(t.error),
                        t.withinBudget ? "within" : "over", seconds,
                        ks.size() > 1 ? llvm::formatv(", {0} candidates at once", ks.size()).str() : "")
              .str());
      out.push_back(t);
    }
    return out;
  };
  // Candidates per round: as many as the threads can evaluate on every sample at once.
  size_t width = std::max<size_t>(1, std::thread::hardware_concurrency() / std::max<size_t>(1, arguments_.size()));
  say(llvm::formatv("  {0} values in {1}, {2} of them add error; searching how many, most first, stay fp32 "
                    "({3} candidate(s) a round)",
                    nodesOf.size(), precisionName(startPrecision), growing, width)
          .str());
  // Keeping every value in fp32 is assumed to meet the budget (it is the reference but for
  // casts) and measured only if the search ends there: a round spent on it first is usually
  // wasted.
  size_t lo = 0, hi = nodesOf.size();
  double hiError = INFINITY;
  bool hiMeasured = false;
  // A (width+1)-ary search: the smallest k within the budget among evenly spread points, and
  // the largest k below it that is over, bound the next round.
  while (hi - lo > 1) {
    std::vector<size_t> ks;
    for (size_t i = 1; i <= width; ++i)
      if (size_t k = lo + (hi - lo) * i / (width + 1); k > lo && k < hi && (ks.empty() || k > ks.back()))
        ks.push_back(k);
    if (ks.empty())
      ks.push_back(lo + (hi - lo) / 2);
    auto round = tryTops(ks);
    if (!round)
      return round.takeError();
    size_t newHi = hi;
    for (const PrecisionTrial &t : *round)
      if (t.withinBudget && t.keptValues < newHi) {
        newHi = t.keptValues;
        hiError = t.error;
        hiMeasured = true;
      }
    for (const PrecisionTrial &t : *round)
      if (!t.withinBudget && t.keptValues < newHi && t.keptValues > lo)
        lo = t.keptValues;
    hi = newHi;
  }
  if (hi > 0 && !hiMeasured) {
    auto all = tryTops({hi});
    if (!all)
      return all.takeError();
    if (all->front().withinBudget)
      hiError = all->front().error;
    else
      hi = 0;
  }
  if (hi == 0) {
    // Nothing half-precision meets the budget: strict fp32 is the reference itself.
    say("  no half-precision candidate meets the budget: the plan runs in strict fp32");
    return finish(Precision::FP32, {}, 0.0);
  }
  return finish(startPrecision, topNodes(hi), hiError);
}

} // namespace

/// The multiply-adds of the convolutions and matmuls of `module` that read an 8-bit operand
/// (a dequantization, as kiln-fold-quantization leaves the ones codegen runs in 8 bits), and of
/// all of them.
std::pair<double, double> eightBitMultiplyAdds(mlir::ModuleOp module) {
  double eight = 0, all = 0;
  module.walk([&](mlir::Operation *op) {
    if (!llvm::isa<ConvOp, MatMulOp>(op))
      return;
    auto result = llvm::cast<mlir::RankedTensorType>(op->getResult(0).getType());
    auto lhs = llvm::cast<mlir::RankedTensorType>(op->getOperand(0).getType());
    auto weight = llvm::cast<mlir::RankedTensorType>(op->getOperand(1).getType());
    if (!result.hasStaticShape() || !lhs.hasStaticShape() || !weight.hasStaticShape())
      return;
    // conv: each output element sums over one filter (the weight's elements per output channel);
    // matmul: over the contracted axis.
    double perOutput = llvm::isa<ConvOp>(op) ? double(weight.getNumElements()) / double(weight.getShape().front())
                                             : double(lhs.getShape().back());
    double macs = double(result.getNumElements()) * perOutput;
    all += macs;
    if (op->getOperand(0).getDefiningOp<DequantizeOp>())
      eight += macs;
  });
  return {eight, all};
}

llvm::Expected<std::optional<std::pair<PipelineOptions::Quantization, double>>> Search::searchEightBit() {
  auto t0 = std::chrono::steady_clock::now();
  CalibrationRunOptions calibration;
  calibration.model = options_.model;
  // The search judges every candidate in the interpreter; its ranges come from there too, so
  // the choice is the same on any machine.
  calibration.device = CalibrationDevice::Cpu;
  auto table = measureCalibration(imported_, samples_, calibration);
  if (!table)
    return table.takeError();
  if (llvm::Error err = writeCalibrationTable(*table, options_.eightBitCalibration))
    return std::move(err);
  say(llvm::formatv("  {0,-36} ({1:f1} s) -> {2}", "calibration ranges",
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                    options_.eightBitCalibration)
          .str());
  // Both at once; each candidate's share is read off its optimized module.
  const char *types[] = {"int8", "fp8"};
  std::vector<PipelineOptions> candidates;
  for (const char *type : types) {
    candidates.push_back(withFp32Nodes(Precision::BF16, {}));
    candidates.back().quantization = PipelineOptions::Quantization{type, options_.eightBitCalibration, "", {}};
  }
  std::vector<std::pair<double, double>> macs(candidates.size());
  auto t1 = std::chrono::steady_clock::now();
  auto errors = outputErrors(candidates, [&](size_t c, mlir::func::FuncOp main) {
    macs[c] = eightBitMultiplyAdds(main->getParentOfType<mlir::ModuleOp>());
    return interp::ResultObserver();
  });
  if (!errors)
    return errors.takeError();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  std::optional<std::pair<PipelineOptions::Quantization, double>> best;
  double bestShare = 0;
  for (size_t c = 0; c < candidates.size(); ++c) {
    auto [eight, all] = macs[c];
    double share = all > 0 ? eight / all : 0, error = (*errors)[c];
    PrecisionTrial t{llvm::formatv("{0} ({1:f0}% of multiply-adds in 8 bits)", types[c], 100 * share).str(), 0, 0,
                     error, seconds, error <= target_ && eight > 0};
    choice_.trials.push_back(t);
    say(llvm::formatv("  {0,-36} error {1} {2} ({3:f1} s, both at once)", t.what, formatError(error),
                      eight == 0 ? "nothing in 8 bits" : t.withinBudget ? "within" : "over", seconds)
            .str());
    if (t.withinBudget && share > bestShare) {
      bestShare = share;
      best = std::make_pair(*candidates[c].quantization, error);
    }
  }
  return best;
}

PipelineOptions PrecisionChoice::apply(PipelineOptions base) const {
  base.precision = precision;
  base.quantization = quantization;
  if (precision == Precision::FP32)
    base.strictFp32 = true;
  for (const std::string &node : fp32Nodes)
    base.forcePrecision.push_back({node, Precision::FP32});
  return base;
}

std::string PrecisionChoice::summary() const {
  std::string out = "auto: " + (quantization ? quantization->type : precisionName(precision).str());
  if (!fp32Nodes.empty())
    out += " with " + std::to_string(fp32Nodes.size()) + " nodes in strict fp32";
  out += ", error " + formatError(error) + " <= " + formatError(target) + " (budget " + formatError(maxError) +
         " less headroom) on " + std::to_string(samples) + " calibration input(s)";
  return out;
}

llvm::json::Value PrecisionChoice::toJSON() const {
  llvm::json::Array nodes, trialList;
  for (const std::string &node : fp32Nodes)
    nodes.push_back(node);
  for (const PrecisionTrial &t : trials)
    trialList.push_back(llvm::json::Object{{"what", t.what},
                                           {"kept_values", static_cast<int64_t>(t.keptValues)},
                                           {"kept_nodes", static_cast<int64_t>(t.keptNodes)},
                                           {"error", t.error},
                                           {"within_budget", t.withinBudget},
                                           {"seconds", t.seconds}});
  return llvm::json::Object{{"precision", quantization ? quantization->type : precisionName(precision).str()},
                            {"fp32_nodes", std::move(nodes)},
                            {"error", error},
                            {"max_error", maxError},
                            {"search_target", target},
                            {"calibration_inputs", static_cast<int64_t>(samples)},
                            {"seconds", seconds},
                            {"trials", std::move(trialList)}};
}

llvm::Expected<PrecisionChoice> searchPrecision(mlir::ModuleOp imported, const std::vector<CalibrationSample> &samples,
                                               const PrecisionSearchOptions &options) {
  return Search(imported, samples, options).run();
}

} // namespace kiln::cli
