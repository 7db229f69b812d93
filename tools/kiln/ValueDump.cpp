//===- ValueDump.cpp - intermediate values on disk, by ONNX name ----------===//

#include "ValueDump.h"

#include "TensorNpy.h"

#include "ir/Provenance.h"
#include "runtime/Npy.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>

namespace kiln::cli {

namespace {

llvm::Error dumpError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The ONNX value (or graph input) `value` is, looking back through the unnamed single-input
/// ops passes insert (casts, transposes, reshapes); "" for a constant or anything else.
std::string sourceValueName(mlir::Value value) {
  for (int hops = 0; hops < 16; ++hops) {
    if (auto arg = llvm::dyn_cast<mlir::BlockArgument>(value)) {
      auto func = llvm::dyn_cast<mlir::func::FuncOp>(arg.getOwner()->getParentOp());
      auto name = func ? func.getArgAttrOfType<mlir::StringAttr>(arg.getArgNumber(), "kiln.name") : nullptr;
      return name ? name.getValue().str() : "";
    }
    mlir::Operation *def = value.getDefiningOp();
    // onnxValueNames: a fusion group's result is named by what its body yields.
    if (std::string name = onnxValueNames(def)[llvm::cast<mlir::OpResult>(value).getResultNumber()]; !name.empty())
      return name;
    if (!def || def->getNumOperands() != 1 || def->getNumRegions() != 0)
      return "";
    value = def->getOperand(0);
  }
  return "";
}

llvm::json::Object timingToJSON(const StepTiming &step) {
  return llvm::json::Object{
      {"index", step.index}, {"runner", step.runner}, {"algorithm", step.algorithm}, {"ms", step.ms}};
}

StepTiming timingFromJSON(const llvm::json::Object &o) {
  StepTiming timing;
  timing.index = o.getInteger("index").value_or(-1);
  if (auto s = o.getString("runner"))
    timing.runner = s->str();
  if (auto s = o.getString("algorithm"))
    timing.algorithm = s->str();
  timing.ms = o.getNumber("ms").value_or(0);
  return timing;
}

} // namespace

std::vector<std::string> inputValueNames(mlir::Operation *op) {
  std::vector<std::string> inputs;
  std::set<std::string> seen;
  for (mlir::Value operand : op->getOperands())
    if (std::string input = sourceValueName(operand); !input.empty() && seen.insert(input).second)
      inputs.push_back(input);
  return inputs;
}

llvm::Expected<ValueDumpWriter> ValueDumpWriter::create(std::string dir) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return dumpError("cannot create '" + dir + "': " + ec.message());
  return ValueDumpWriter(std::move(dir));
}

llvm::Error ValueDumpWriter::observe(mlir::Operation *op, llvm::ArrayRef<interp::Tensor> results) {
  std::vector<std::string> names = onnxValueNames(op);
  for (auto [i, name] : llvm::enumerate(names)) {
    if (name.empty() || written_.count(name))
      continue;
    const interp::Tensor &t = results[i];
    auto array = tensorToNpy(t);
    if (!array)
      return array.takeError();
    std::string type;
    llvm::raw_string_ostream os(type);
    os << t.element;
    if (llvm::Error err = add(name, *array, type, op->getName().getStringRef().str(), nodeNames(op->getLoc()),
                              inputValueNames(op)))
      return err;
  }
  return llvm::Error::success();
}

llvm::Error ValueDumpWriter::add(const std::string &name, const runtime::NpyArray &array, const std::string &dtype,
                                 const std::string &op, const std::vector<std::string> &nodes,
                                 const std::vector<std::string> &inputs, const StepTiming *step) {
  if (!written_.insert(name).second)
    return llvm::Error::success();
  char prefix[16];
  std::snprintf(prefix, sizeof prefix, "%04zu_", entries_.size());
  std::string file = prefix + runtime::npyFileName(name);
  llvm::SmallString<256> path(dir_);
  llvm::sys::path::append(path, file);
  if (runtime::Status status = runtime::writeNpy(std::string(path), array); !status.isOk())
    return dumpError(status.message());
  llvm::json::Array shape, nodeList, inputList;
  for (int64_t d : array.shape)
    shape.push_back(d);
  for (const std::string &node : nodes)
    nodeList.push_back(node);
  for (const std::string &input : inputs)
    inputList.push_back(input);
  llvm::json::Object entry{{"name", name},
                           {"file", file},
                           {"dtype", dtype},
                           {"shape", std::move(shape)},
                           {"op", op},
                           {"nodes", std::move(nodeList)},
                           {"inputs", std::move(inputList)}};
  if (step)
    entry["step"] = timingToJSON(*step);
  entries_.push_back(std::move(entry));
  return llvm::Error::success();
}

llvm::Expected<size_t> ValueDumpWriter::finish(llvm::StringRef source, llvm::StringRef model,
                                               llvm::StringRef precision,
                                               const std::map<std::string, std::string> &metadata,
                                               const std::vector<StepTiming> &steps) {
  llvm::SmallString<256> path(dir_);
  llvm::sys::path::append(path, "manifest.json");
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return dumpError("cannot write '" + path + "': " + ec.message());
  size_t count = entries_.size();
  llvm::json::Object meta;
  for (const auto &[key, value] : metadata)
    meta[key] = value;
  llvm::json::Object manifest{{"source", source},
                              {"model", model},
                              {"precision", precision},
                              {"metadata", std::move(meta)},
                              {"values", std::move(entries_)}};
  if (!steps.empty()) {
    double total = 0;
    llvm::json::Array list;
    for (const StepTiming &step : steps) {
      total += step.ms;
      list.push_back(timingToJSON(step));
    }
    manifest["steps_ms"] = total;
    manifest["steps"] = std::move(list);
  }
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(manifest))) << "\n";
  entries_ = llvm::json::Array();
  return count;
}

llvm::Expected<Dump> readDump(const std::string &dir) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, "manifest.json");
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return dumpError("'" + dir + "' is no value dump: cannot read " + path + " (" + buffer.getError().message() +
                     "); write one with `kiln eval --dump`");
  auto parsed = llvm::json::parse((*buffer)->getBuffer());
  if (!parsed)
    return dumpError(path + ": " + llvm::toString(parsed.takeError()));
  const llvm::json::Object *root = parsed->getAsObject();
  const llvm::json::Array *values = root ? root->getArray("values") : nullptr;
  if (!values)
    return dumpError(path + ": no \"values\" list");
  Dump dump;
  dump.dir = dir;
  auto text = [](const llvm::json::Object &o, llvm::StringRef key) {
    auto s = o.getString(key);
    return s ? s->str() : std::string();
  };
  dump.source = text(*root, "source");
  dump.model = text(*root, "model");
  dump.precision = text(*root, "precision");
  dump.stepsMs = root->getNumber("steps_ms");
  if (const llvm::json::Array *steps = root->getArray("steps"))
    for (const llvm::json::Value &step : *steps)
      if (const llvm::json::Object *o = step.getAsObject())
        dump.steps.push_back(timingFromJSON(*o));
  if (const llvm::json::Object *meta = root->getObject("metadata"))
    for (const auto &[key, value] : *meta)
      if (auto s = value.getAsString())
        dump.metadata[key.str()] = s->str();
  for (auto [i, entry] : llvm::enumerate(*values)) {
    const llvm::json::Object *o = entry.getAsObject();
    if (!o || !o->getString("name") || !o->getString("file") || !o->getArray("shape"))
      return dumpError(path + ": value " + llvm::Twine(i) + " lacks a name, file or shape");
    DumpedValue value;
    value.name = text(*o, "name");
    value.file = text(*o, "file");
    value.dtype = text(*o, "dtype");
    value.op = text(*o, "op");
    for (const llvm::json::Value &d : *o->getArray("shape")) {
      auto dim = d.getAsInteger();
      if (!dim)
        return dumpError(path + ": value '" + value.name + "' has a shape that is not a list of integers");
      value.shape.push_back(*dim);
    }
    for (const char *key : {"nodes", "inputs"})
      if (const llvm::json::Array *list = o->getArray(key))
        for (const llvm::json::Value &item : *list)
          if (auto s = item.getAsString())
            (std::string(key) == "nodes" ? value.nodes : value.inputs).push_back(s->str());
    if (const llvm::json::Object *step = o->getObject("step"))
      value.step = timingFromJSON(*step);
    dump.values.push_back(std::move(value));
  }
  return dump;
}

} // namespace kiln::cli
