//===- GraphImporter.cpp - one ONNX graph into one func --------------------===//
//
// Order of work: check the model as a whole (opsets, graph structure, every op supported) so
// that one run reports every problem of a kind at once; then build types, constants and ops.
//
//===----------------------------------------------------------------------===//

#include "frontend/GraphImporter.h"
#include "frontend/ConstantFolding.h"
#include "frontend/NodeContext.h"
#include "frontend/OpTable.h"
#include "frontend/TensorConversion.h"

#include "ir/KilnDialect.h"
#include "ir/Provenance.h"

#include "onnx/onnx.pb.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <map>
#include <set>

using namespace mlir;

namespace kiln::frontend {
namespace {

llvm::Error importError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The static type of an ONNX ValueInfo, if fully known.
std::optional<RankedTensorType> staticTypeOf(MLIRContext &ctx, const onnx::ValueInfoProto &info) {
  if (!info.type().has_tensor_type())
    return std::nullopt;
  const auto &tensor = info.type().tensor_type();
  auto element = convertElementType(ctx, tensor.elem_type());
  if (!element) {
    llvm::consumeError(element.takeError());
    return std::nullopt;
  }
  if (!tensor.has_shape())
    return std::nullopt;
  SmallVector<int64_t> dims;
  for (const auto &d : tensor.shape().dim()) {
    if (!d.has_dim_value() || d.dim_value() < 0)
      return std::nullopt;
    dims.push_back(d.dim_value());
  }
  return RankedTensorType::get(dims, *element);
}

std::string typeString(Type t) {
  auto tensor = llvm::cast<RankedTensorType>(t);
  std::string s;
  llvm::raw_string_ostream os(s);
  os << formatShape(tensor.getShape()) << " " << tensor.getElementType();
  return s;
}

} // namespace

GraphImporter::GraphImporter(MLIRContext &context, const onnx::ModelProto &model,
                             llvm::StringRef modelDir, llvm::StringRef modelName,
                             const ImportOptions &options)
    : context_(context), model_(model), graph_(model.graph()), modelDir_(modelDir.str()),
      modelName_(modelName.str()), options_(options), builder_(&context) {}

const ValueEntry *GraphImporter::lookup(llvm::StringRef name) const {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

void GraphImporter::define(llvm::StringRef name, ValueEntry entry) { values_[name] = std::move(entry); }

std::optional<RankedTensorType> GraphImporter::declaredType(llvm::StringRef name) const {
  auto it = declared_.find(name);
  if (it == declared_.end())
    return std::nullopt;
  return it->second;
}

llvm::Expected<Value> GraphImporter::materialize(llvm::StringRef name) {
  auto it = values_.find(name);
  if (it == values_.end())
    return importError("internal: value '" + name + "' is not defined");
  ValueEntry &entry = it->second;
  if (entry.value)
    return entry.value;
  // A constant used by an op for the first time: emit it at the top of the function so that
  // every later use is dominated.
  OpBuilder::InsertionGuard guard(builder_);
  Block *body = builder_.getInsertionBlock();
  builder_.setInsertionPointToStart(body);
  ElementsAttr attr = entry.attr;
  if (!attr)
    attr = toDenseAttr(*entry.host, entry.type);
  OperationState state(NameLoc::get(builder_.getStringAttr(name)), "kiln.constant");
  state.addAttribute("value", attr);
  state.addTypes(entry.type);
  entry.value = builder_.create(state)->getResult(0);
  return entry.value;
}

llvm::Error GraphImporter::checkOpsets() {
  bool found = false;
  for (const onnx::OperatorSetIdProto &o : model_.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") {
      opset_ = o.version();
      found = true;
    }
  }
  if (!found)
    return importError("model has no opset_import for the default ONNX domain; re-export it with "
                       "an opset between 13 and " + std::to_string(kMaxOpset));
  if (opset_ < 1 || opset_ > kMaxOpset)
    return importError(llvm::formatv("model imports default-domain opset {0}; Kiln imports opsets "
                                     "up to {1} (convert it with onnx.version_converter)",
                                     opset_, kMaxOpset));
  return llvm::Error::success();
}

llvm::Error GraphImporter::checkGraphStructure() {
  // Every value has one producer; every node input is produced before the node.
  llvm::StringMap<std::string> producer;
  auto addProducer = [&](const std::string &name, const std::string &who) -> llvm::Error {
    if (name.empty())
      return llvm::Error::success();
    auto [it, inserted] = producer.try_emplace(name, who);
    if (!inserted)
      return importError("value '" + name + "' is produced twice (by " + it->second + " and by " +
                         who + "); ONNX values must have unique names");
    return llvm::Error::success();
  };
  llvm::StringSet<> initializers;
  for (const onnx::TensorProto &t : graph_.initializer()) {
    initializers.insert(t.name());
    if (auto err = addProducer(t.name(), "initializer '" + t.name() + "'"))
      return err;
  }
  for (const onnx::ValueInfoProto &in : graph_.input())
    if (!initializers.contains(in.name()))
      if (auto err = addProducer(in.name(), "graph input '" + in.name() + "'"))
        return err;
  llvm::StringMap<int> producedAt;
  for (int n = 0; n < graph_.node_size(); ++n) {
    const onnx::NodeProto &node = graph_.node(n);
    for (const std::string &out : node.output()) {
      if (auto err = addProducer(out, "node '" + node.name() + "' (" + node.op_type() + ")"))
        return err;
      producedAt[out] = n;
    }
  }
  llvm::StringSet<> available = initializers;
  for (const onnx::ValueInfoProto &in : graph_.input())
    available.insert(in.name());
  for (int n = 0; n < graph_.node_size(); ++n) {
    const onnx::NodeProto &node = graph_.node(n);
    for (const std::string &in : node.input()) {
      if (in.empty() || available.contains(in))
        continue;
      std::string who = "node '" + node.name() + "' (" + node.op_type() + ")";
      if (producedAt.count(in))
        return importError(who + " uses '" + in + "' before the node that produces it; the graph "
                           "is not topologically sorted or has a cycle (re-export, or sort it "
                           "with onnx.utils)");
      return importError(who + " uses '" + in + "', which is no graph input, initializer or node "
                         "output (a missing initializer?)");
    }
    for (const std::string &out : node.output())
      available.insert(out);
  }
  for (const onnx::ValueInfoProto &out : graph_.output())
    if (!available.contains(out.name()))
      return importError("graph output '" + out.name() + "' is produced by no node");
  if (graph_.output_size() == 0)
    return importError("graph has no outputs");
  return llvm::Error::success();
}

llvm::Error GraphImporter::checkSupportedOps() {
  const OpTable &table = OpTable::get();
  std::set<std::string> unsupported;
  std::map<std::string, int64_t> domainOpsets;
  for (const onnx::OperatorSetIdProto &o : model_.opset_import())
    domainOpsets[o.domain() == "ai.onnx" ? "" : o.domain()] = o.version();
  for (const onnx::NodeProto &node : graph_.node()) {
    std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
    auto it = domainOpsets.find(domain);
    int64_t opset = it == domainOpsets.end() ? -1 : it->second;
    if (opset >= 0 && table.lookup(domain, node.op_type(), opset))
      continue;
    std::string key = (domain.empty() ? "" : domain + ".") + node.op_type() + " (opset " +
                      (opset < 0 ? std::string("not imported") : std::to_string(opset)) + ")";
    std::string supported = table.supportedOpsets(domain, node.op_type());
    key += supported.empty() ? ": not supported" : ": supported in opsets " + supported;
    unsupported.insert(key);
  }
  if (unsupported.empty())
    return llvm::Error::success();
  std::string message = std::to_string(unsupported.size()) + " unsupported (op, opset) pair" +
                        (unsupported.size() == 1 ? "" : "s") + " in the model:";
  for (const std::string &u : unsupported)
    message += "\n  " + u;
  return importError(message);
}

llvm::Error GraphImporter::importInitializers() {
  for (const onnx::TensorProto &t : graph_.initializer()) {
    auto raw = decodeTensor(context_, t, modelDir_);
    if (!raw)
      return importError("initializer: " + llvm::toString(raw.takeError()));
    ValueEntry entry;
    entry.type = raw->type;
    entry.attr = toElementsAttr(*raw, t.name(), options_.inlineElementLimit);
    if (raw->type.getNumElements() <= options_.foldElementLimit)
      entry.host = toHostTensor(*raw);
    define(t.name(), std::move(entry));
  }
  return llvm::Error::success();
}

llvm::Expected<SmallVector<Type>>
GraphImporter::importInputTypes(SmallVectorImpl<std::string> &names) {
  llvm::StringSet<> initializers;
  for (const onnx::TensorProto &t : graph_.initializer())
    initializers.insert(t.name());
  llvm::StringSet<> known;
  SmallVector<Type> types;
  std::vector<std::string> problems;
  for (const onnx::ValueInfoProto &in : graph_.input()) {
    if (initializers.contains(in.name()))
      continue;
    known.insert(in.name());
    if (!in.type().has_tensor_type()) {
      problems.push_back("graph input '" + in.name() + "' is not a tensor (sequences, maps and "
                         "optionals are not supported)");
      continue;
    }
    const auto &tensor = in.type().tensor_type();
    auto element = convertElementType(context_, tensor.elem_type());
    if (!element) {
      problems.push_back("graph input '" + in.name() + "': " + llvm::toString(element.takeError()));
      continue;
    }
    SmallVector<int64_t> dims;
    std::vector<std::string> symbolic;
    for (const auto &d : tensor.shape().dim()) {
      if (d.has_dim_value() && d.dim_value() >= 0) {
        dims.push_back(d.dim_value());
      } else {
        dims.push_back(-1);
        symbolic.push_back(d.has_dim_param() && !d.dim_param().empty() ? d.dim_param() : "?");
      }
    }
    auto override_ = options_.inputShapes.find(in.name());
    if (override_ != options_.inputShapes.end()) {
      const std::vector<int64_t> &given = override_->second;
      if (tensor.has_shape() && given.size() != dims.size()) {
        problems.push_back(llvm::formatv("--shape {0}: gives rank {1}, the model declares rank {2}",
                                         in.name(), given.size(), dims.size()));
        continue;
      }
      for (size_t i = 0; i < dims.size(); ++i)
        if (dims[i] >= 0 && dims[i] != given[i])
          problems.push_back(llvm::formatv("--shape {0}: dim {1} is {2}, the model fixes it to {3}",
                                           in.name(), i, given[i], dims[i]));
      dims.assign(given.begin(), given.end());
    } else if (!tensor.has_shape()) {
      problems.push_back("graph input '" + in.name() + "' has no shape; pass --shape " + in.name() +
                         "=<dims, e.g. 1x3x224x224>");
      continue;
    } else if (!symbolic.empty()) {
      std::string dimList;
      for (const std::string &s : symbolic)
        dimList += (dimList.empty() ? "" : ", ") + s;
      std::string example;
      for (int64_t d : dims)
        example += (example.empty() ? "" : "x") + std::string(d < 0 ? "N" : std::to_string(d));
      problems.push_back("graph input '" + in.name() + "' has symbolic dims [" + dimList +
                         "]; Kiln compiles static shapes: pass --shape " + in.name() + "=" + example +
                         " with every N replaced by a size");
      continue;
    }
    auto count = checkedElementCount(dims);
    if (!count) {
      problems.push_back("graph input '" + in.name() + "': " + llvm::toString(count.takeError()));
      continue;
    }
    types.push_back(RankedTensorType::get(dims, *element));
    names.push_back(in.name());
  }
  for (const auto &[name, shape] : options_.inputShapes)
    if (!known.contains(name))
      problems.push_back("--shape names '" + name + "', which is not a graph input");
  if (!problems.empty()) {
    std::string message;
    for (const std::string &p : problems)
      message += (message.empty() ? "" : "\n") + p;
    return importError(message);
  }
  return types;
}

void GraphImporter::nameOnnxValue(llvm::StringRef name, Location nodeLoc) {
  const ValueEntry *entry = name.empty() ? nullptr : lookup(name);
  if (!entry || !entry->value)
    return; // folded to a constant at import: never computed
  auto result = llvm::dyn_cast<OpResult>(entry->value);
  // Only an op this node's handler made: an Identity (or a no-op Reshape) hands on a value
  // another node produced, which keeps that node's name.
  if (!result || result.getOwner()->getLoc() != nodeLoc)
    return;
  Operation *op = result.getOwner();
  SmallVector<Attribute> names(op->getNumResults(), builder_.getStringAttr(""));
  if (auto existing = op->getAttrOfType<ArrayAttr>(kOnnxValuesAttr))
    for (auto [i, attr] : llvm::enumerate(existing))
      if (i < names.size())
        names[i] = attr;
  if (!llvm::cast<StringAttr>(names[result.getResultNumber()]).getValue().empty())
    return;
  names[result.getResultNumber()] = builder_.getStringAttr(name);
  op->setAttr(kOnnxValuesAttr, builder_.getArrayAttr(names));
}

llvm::Error GraphImporter::importNodes() {
  const OpTable &table = OpTable::get();
  StringAttr file = builder_.getStringAttr(modelName_);
  for (int n = 0; n < graph_.node_size(); ++n) {
    const onnx::NodeProto &node = graph_.node(n);
    std::string label = node.name().empty() ? node.op_type() + "_" + std::to_string(n) : node.name();
    Location loc = onnxNodeLoc(&context_, label, node.op_type(), file.getValue(), n);
    NodeContext ctx(*this, node, opset_, loc);
    auto folded = foldNode(ctx);
    if (!folded)
      return folded.takeError();
    if (!*folded) {
      const OpHandlerEntry *entry = table.lookup(node.domain(), node.op_type(), opset_);
      if (auto err = entry->handler(ctx))
        return err;
    }
    for (int i = 0; i < node.output_size(); ++i) {
      if (!node.output(i).empty() && !lookup(node.output(i)))
        return ctx.error(llvm::formatv("output {0} ('{1}') is not supported by Kiln's import of "
                                       "this op (it may only be used in training)",
                                       i, node.output(i)));
      nameOnnxValue(node.output(i), loc);
    }
  }
  return llvm::Error::success();
}

llvm::Expected<OwningOpRef<ModuleOp>> GraphImporter::run() {
  if (auto err = checkOpsets())
    return std::move(err);
  if (auto err = checkGraphStructure())
    return std::move(err);
  if (auto err = checkSupportedOps())
    return std::move(err);
  for (const onnx::ValueInfoProto &info : graph_.value_info())
    if (auto type = staticTypeOf(context_, info))
      declared_[info.name()] = *type;
  for (const onnx::ValueInfoProto &info : graph_.output())
    if (auto type = staticTypeOf(context_, info))
      declared_[info.name()] = *type;

  SmallVector<std::string> inputNames;
  auto inputTypes = importInputTypes(inputNames);
  if (!inputTypes)
    return inputTypes.takeError();

  Location moduleLoc = FileLineColLoc::get(builder_.getStringAttr(modelName_), 0, 0);
  OwningOpRef<ModuleOp> module = ModuleOp::create(moduleLoc);
  builder_.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(builder_, moduleLoc, "main",
                                   builder_.getFunctionType(*inputTypes, {}));
  Block *body = func.addEntryBlock();
  builder_.setInsertionPointToEnd(body);
  for (auto [i, name] : llvm::enumerate(inputNames)) {
    ValueEntry entry;
    entry.value = body->getArgument(i);
    entry.type = llvm::cast<RankedTensorType>(entry.value.getType());
    define(name, std::move(entry));
    func.setArgAttr(i, "kiln.name", builder_.getStringAttr(name));
  }
  if (auto err = importInitializers())
    return std::move(err);
  if (auto err = importNodes())
    return std::move(err);

  SmallVector<Value> results;
  SmallVector<Type> resultTypes;
  for (const onnx::ValueInfoProto &out : graph_.output()) {
    auto value = materialize(out.name());
    if (!value)
      return value.takeError();
    if (auto declared = staticTypeOf(context_, out); declared && *declared != value->getType())
      return importError("graph output '" + out.name() + "' is declared " + typeString(*declared) +
                         " but the graph computes " + typeString(value->getType()) +
                         "; the model's output declaration is inconsistent");
    results.push_back(*value);
    resultTypes.push_back(value->getType());
  }
  func::ReturnOp::create(builder_, moduleLoc, results);
  func.setFunctionType(builder_.getFunctionType(*inputTypes, resultTypes));
  for (auto [i, out] : llvm::enumerate(graph_.output()))
    func.setResultAttr(i, "kiln.name", builder_.getStringAttr(out.name()));

  std::string diagnostics;
  ScopedDiagnosticHandler handler(&context_, [&](Diagnostic &diag) {
    diagnostics += (diagnostics.empty() ? "" : "; ") + diag.str();
    return success();
  });
  if (failed(mlir::verify(*module)))
    return importError("imported module failed verification: " + diagnostics);
  return module;
}

} // namespace kiln::frontend
