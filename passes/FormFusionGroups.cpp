//===- FormFusionGroups.cpp - elementwise chains into kiln.fusion_group ----===//
//
// Channels-last convolutions take the epilogue a cuDNN graph runs with them (bias, residual,
// one activation) into a `conv` group; an 8-bit one (INT8 or FP8) also its dequantizations and
// its result's quantization (the group's only result, or a second one beside the value). Linear layers first: each kiln.matmul of a 2-d weight takes the epilogue a cuBLASLt matmul
// can run (bias row, residual, ReLU or tanh GELU) into a `gemm` group. With `approximate-gelu`
// (bf16 plans), an erf GELU after a bf16 linear layer, as the exporters decompose it
// (x * 0.5 * (1 + erf(x / sqrt 2)), in any association), becomes a tanh GELU so the epilogue
// computes it: cuBLASLt has no erf GELU, the two differ by at most 4.7e-4 (at x = -2.7), which
// is within bf16's rounding of the result (2^-9 relative), and a separate kernel would read and
// write the layer's whole output once more. fp16 rounds 8x finer, so fp16 plans keep erf. A chain
// of index maps ending in a constant pad, with the elementwise ops before it that read only it and
// constants, becomes a `gather` group (an image's cast, space-to-depth transpose and pad: one
// kernel, each op in its own types). A channels-last pool and the elementwise chain after it
// (a quantize) become a `pool` group, also in their own types. Then the function is
// walked from its last op to its first: each elementwise op not yet in a group
// becomes the root of a candidate group, which absorbs producers that are elementwise too and
// whose every use is already inside the group (so no value a group computes is needed
// outside it: a group has one result and one kernel computes it). A candidate of one op stays
// as it is.
//
// The body is rewritten so its types state the group's rounding promise: f16/bf16 inputs are
// widened by `kiln.cast` to f32, every op that computed in f16/bf16 computes in f32, and the
// result is rounded once by a `kiln.cast` back to its type before `kiln.yield`. Explicit casts
// the group absorbs keep their target type, so they still round.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "passes/ConstantValues.h"
#include "passes/LinearLayer.h"
#include "passes/QuantizableOps.h"

#include "ir/KilnOps.h"
#include "ir/Provenance.h"
#include "ir/ShapeRules.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#include <cmath>
#include <functional>
#include <map>

namespace kiln {

#define GEN_PASS_DEF_FORMFUSIONGROUPS
#include "passes/Passes.h.inc"

namespace {

using mlir::Operation;
using mlir::RankedTensorType;
using mlir::Type;
using mlir::Value;

bool isNarrowFloat(Type element) { return element.isF16() || element.isBF16(); }

Type elementOf(Value value) { return llvm::cast<mlir::ShapedType>(value.getType()).getElementType(); }

/// `value`'s type with element type f32 when it is f16/bf16, else its own type.
Type computeTypeOf(Value value) {
  auto type = llvm::cast<RankedTensorType>(value.getType());
  return isNarrowFloat(type.getElementType()) ? type.clone(mlir::Float32Type::get(value.getContext())) : type;
}


/// An op a group may hold: elementwise (per-tensor quantization too), one statically shaped
/// result.
bool isFusible(Operation *op) {
  if (!isGroupElementwise(op) || op->getNumResults() != 1)
    return false;
  auto type = llvm::dyn_cast<RankedTensorType>(op->getResult(0).getType());
  return type && type.hasStaticShape();
}

struct FormFusionGroupsPass : impl::FormFusionGroupsBase<FormFusionGroupsPass> {
  using FormFusionGroupsBase::FormFusionGroupsBase;

  void runOnOperation() override {
    mlir::Block &body = getOperation().getBody().front();
    // Linear layers first: a matmul takes its epilogue before elementwise groups could. (The
    // epilogue may replace an erf GELU chain by one op, so the list of ops is taken after.)
    llvm::SmallVector<MatMulOp> matmuls(body.getOps<MatMulOp>());
    for (MatMulOp matmul : matmuls) {
      std::optional<QuantizedLinearLayer> quantized = matchQuantizedLinearLayer(matmul);
      llvm::SetVector<Operation *> members = collectEpilogue(matmul, quantized.has_value());
      if (members.empty())
        continue;
      Operation *root = members.back();
      // An FP8 linear layer (kiln-fold-quantization's form) takes its operands'
      // dequantizations: the 8-bit tensors become the GEMM's operands.
      if (quantized) {
        for (Operation *op : {quantized->input.getOperation(), quantized->weight.getOperation(),
                              quantized->weightTranspose.getOperation()})
          members.insert(op);
        // Its result's quantization for the next FP8 layer, when nothing else reads the
        // result: cuBLASLt scales D and writes E4M3 (half the bytes, no quantize kernel). Only
        // beside a 16-bit bias and C (cuBLASLt's FP8 D takes no f32 C: an imported QDQ model's
        // f32 layer writes f32 and its quantize runs as a kernel).
        Type layerType = elementOf(matmul.getResult());
        Operation *quantize = consumerQuantizationOf(root->getResult(0), isFp8Element);
        if (quantize && (layerType.isBF16() || layerType.isF16())) {
          members.insert(quantize);
          root = quantize;
        }
      }
      if (members.size() < 2)
        continue;
      formGroup(root, members, "gemm", matmul);
    }
    reportApproximatedGelus();
    reportEpiloguesLeftOut();
    // Channels-last convolutions, like linear layers, take their epilogue before elementwise
    // groups could.
    llvm::SmallVector<ConvOp> convs(body.getOps<ConvOp>());
    for (ConvOp conv : convs) {
      if (isDepthwiseChannelsLast(conv))
        splitBias(conv);
      llvm::SetVector<Operation *> members = collectConvEpilogue(conv);
      if (members.empty())
        continue;
      Operation *root = members.back();
      // An 8-bit residual is read 8-bit only by a graph that writes 8-bit alone: the graphs that
      // scaled an int8 residual and wrote bf16 (a network's last block) computed wrong values
      // on the H100 at small sizes (tests/gpu/check_8bit_convs.py, 2026-12-07) while every
      // engine of the int8-result form was right (bench/conv8_check_probe.cpp). Such a conv
      // reads its residual's dequantization, a kernel of its own, as before plan format 9.
      if (consumerQuantizationOf(root->getResult(0), isConvQuantizedElement))
        takeResidualDequantization(members);
      // An 8-bit convolution (kiln-fold-quantization's form: INT8 or FP8) takes its operands'
      // dequantizations.
      if (std::optional<QuantizedConv> quantized = matchQuantizedConv(conv)) {
        members.insert(quantized->input);
        members.insert(quantized->weight);
      }
      // Any convolution, 8-bit or float (a first layer kept in bf16), takes its result's
      // quantization for the next 8-bit convolution when nothing else reads the result: cuDNN
      // scales the result and writes int8 or E4M3.
      if (Operation *quantize = consumerQuantizationOf(root->getResult(0), isConvQuantizedElement)) {
        members.insert(quantize);
        root = quantize;
      } else if (Operation *quantize = sideQuantizationOf(root->getResult(0))) {
        // Read by other steps too (a ResNet block's output: the next residual): the graph
        // writes the value and its 8-bit quantization, where a quantize kernel would read it
        // again.
        members.insert(quantize);
        llvm::SmallVector<Value> results;
        if (Operation *before = placeResults(members, results); before && results.size() == 2) {
          buildGroup(results, members, "conv", conv, before);
          continue;
        }
        members.remove(quantize);
      }
      if (members.size() >= 2)
        formGroup(root, members, "conv", conv);
    }
    // Layer norms take the elementwise ops that compute their input and the conversions of
    // their result (a bf16 cast, an FP8 quantize) before elementwise groups could.
    llvm::SmallVector<LayerNormOp> norms(body.getOps<LayerNormOp>());
    for (LayerNormOp norm : norms)
      formNormGroup(norm);
    formGatherGroups(body);
    formPoolGroups(body);
    llvm::DenseSet<Operation *> taken;
    llvm::SmallVector<Operation *> order;
    for (Operation &op : body)
      order.push_back(&op);
    for (Operation *root : llvm::reverse(order)) {
      if (taken.contains(root) || !isFusible(root))
        continue;
      llvm::SetVector<Operation *> members = collectMembers(root, taken);
      if (members.size() < 2)
        continue;
      for (Operation *member : members)
        taken.insert(member);
      formGroup(root, members, "elementwise", nullptr);
    }
  }

  /// A `norm` group around `norm`: its prologue (the elementwise op computing its input, when
  /// the layer_norm is that value's only reader, with the producers it absorbs) and its
  /// epilogue (normEpilogue). Its results are the values read outside it: the normalized
  /// value, the conversions. One kernel then reads the input's operands once and writes what
  /// its readers need (post-LN BERT: the residual sum in, the f32 value for the next residual
  /// and the E4M3 or bf16 input of the next linear layer out), where separate kernels read
  /// and wrote each of those tensors again.
  void formNormGroup(LayerNormOp norm) {
    auto type = llvm::cast<RankedTensorType>(norm.getResult().getType());
    if (!type.hasStaticShape())
      return;
    llvm::SetVector<Operation *> members;
    Operation *producer = norm.getInput().getDefiningOp();
    if (producer && isFusible(producer) && producer->getResult(0).hasOneUse() &&
        producer->getResult(0).getType() == norm.getInput().getType())
      members = collectMembers(producer, {});
    if (GatherOp rows = rowGatherFeeding(members, norm))
      members.insert(rows);
    members.insert(norm);
    llvm::SetVector<Operation *> epilogue = normEpilogue(norm);
    members.insert(epilogue.begin(), epilogue.end());
    if (members.size() < 2)
      return;
    llvm::SmallVector<Value> results;
    Operation *firstUse = placeResults(members, results);
    if (!firstUse)
      return;
    // A bf16/f16 layer_norm computes in f32 in the body like every narrow op, so its scale and
    // bias come in as f32: the cast folds for constants (weights), else it is a step before.
    llvm::DenseMap<Value, Value> wideInputs;
    mlir::OpBuilder builder(firstUse);
    for (Value parameter : {norm.getScale(), norm.getBias()})
      if (parameter && isNarrowFloat(elementOf(parameter)) && !wideInputs.count(parameter))
        wideInputs[parameter] = builder.createOrFold<CastOp>(parameter.getLoc(), computeTypeOf(parameter), parameter);
    buildGroup(results, members, "norm", norm, firstUse, wideInputs);
    for (auto [narrow, wide] : wideInputs) // a weight whose f32 copy replaced it
      if (auto constant = narrow.getDefiningOp<ConstantOp>(); constant && constant->use_empty())
        constant->erase();
  }

  /// The gather of whole rows (a 2-d table along axis 0: an embedding lookup) that a norm
  /// group's prologue `members` (or `norm` itself) read, when only they read it and its result
  /// has the normalized shape with rows of the table's: the group's kernel then reads the table
  /// rows itself (verifyNormBody, emitNormGroup), where a gather step wrote them out (BERT's word
  /// embeddings, 12.6 MB of f32 at b32) for the group to read back. Null when there is none.
  static GatherOp rowGatherFeeding(const llvm::SetVector<Operation *> &members, LayerNormOp norm) {
    auto shape = llvm::cast<RankedTensorType>(norm.getInput().getType()).getShape();
    llvm::SmallVector<Operation *> readers(members.begin(), members.end());
    readers.push_back(norm);
    for (Operation *reader : readers)
      for (Value operand : reader->getOperands()) {
        auto gather = operand.getDefiningOp<GatherOp>();
        if (!gather || !isRowGather(gather, norm) ||
            llvm::cast<RankedTensorType>(gather.getType()).getShape() != shape ||
            !llvm::all_of(gather->getUsers(), [&](Operation *user) { return user == norm || members.contains(user); }))
          continue;
        return gather;
      }
    return nullptr;
  }

  /// Where a group of `members` giving every value read outside it (`results`, in block order)
  /// goes: right before the first op reading a result, when every value a member reads outside
  /// the group is defined before that or is a constant (moved up). Null when there is no such
  /// place or no result.
  static Operation *placeResults(const llvm::SetVector<Operation *> &members, llvm::SmallVector<Value> &results) {
    llvm::SmallVector<Operation *> ordered = inBlockOrder(members);
    Operation *firstUse = nullptr;
    for (Operation *member : ordered)
      for (Operation *user : member->getUsers())
        if (!members.contains(user)) {
          if (results.empty() || results.back() != member->getResult(0))
            results.push_back(member->getResult(0));
          if (!firstUse || user->isBeforeInBlock(firstUse))
            firstUse = user;
        }
    if (results.empty())
      return nullptr;
    llvm::SetVector<Value> inputs = groupInputs(ordered, members);
    for (Value input : inputs)
      if (Operation *def = input.getDefiningOp(); def && !def->isBeforeInBlock(firstUse) && !llvm::isa<ConstantOp>(def))
        return nullptr;
    for (Value input : inputs)
      if (Operation *def = input.getDefiningOp(); def && !def->isBeforeInBlock(firstUse))
        def->moveBefore(firstUse);
    return firstUse;
  }

  /// The ops after `norm` its kernel can compute per element of the result: elementwise ops of
  /// the result's shape reading only the normalized value, each other and constants, taken when
  /// every reader is taken too, or when it is a conversion (cast, per-tensor quantize) whose
  /// elementwise readers are all taken (a linear layer's input: writing it beats writing the f32
  /// value for a kernel of its own to convert).
  llvm::SetVector<Operation *> normEpilogue(LayerNormOp norm) {
    llvm::ArrayRef<int64_t> shape = llvm::cast<RankedTensorType>(norm.getResult().getType()).getShape();
    // Ops reachable from the normalized value through elementwise ops of its shape.
    llvm::SetVector<Operation *> reachable;
    llvm::SmallVector<Value> work{norm.getResult()};
    while (!work.empty())
      for (Operation *user : work.pop_back_val().getUsers())
        if (isFusible(user) && llvm::cast<RankedTensorType>(user->getResult(0).getType()).getShape() == shape &&
            reachable.insert(user))
          work.push_back(user->getResult(0));
    // Those reading only the norm, each other and constants; then those whose readers allow it.
    auto readsInside = [&](Operation *op, const llvm::SetVector<Operation *> &set) {
      return llvm::all_of(op->getOperands(), [&](Value v) {
        Operation *def = v.getDefiningOp();
        return def && (def == norm.getOperation() || set.contains(def) || llvm::isa<ConstantOp>(def));
      });
    };
    llvm::DenseMap<Operation *, bool> taken;
    std::function<bool(Operation *)> takes = [&](Operation *op) -> bool {
      if (auto known = taken.find(op); known != taken.end())
        return known->second;
      taken[op] = false;
      bool ok = reachable.contains(op) && readsInside(op, reachable);
      if (ok) {
        bool conversion = llvm::isa<CastOp>(op) || (llvm::isa<QuantizeOp>(op) && isPerTensorQuantization(op));
        bool allTaken = !op->use_empty() && llvm::all_of(op->getUsers(), takes);
        // A conversion read by other steps too (the bf16 residual of the next linear layer
        // beside its E4M3 input, quantized from that bf16 value) is taken when its elementwise
        // readers are: the group then writes both.
        ok = allTaken ||
             (conversion && llvm::all_of(op->getUsers(), [&](Operation *user) { return !isFusible(user) || takes(user); }));
      }
      return taken[op] = ok;
    };
    llvm::SetVector<Operation *> epilogue;
    for (Operation *op : reachable)
      if (takes(op))
        epilogue.insert(op);
    // An op reading a value the group does not compute would make that value an input computed
    // from the group's own result: drop such ops (and what reads them) to a fixed point.
    for (bool changed = true; changed;) {
      changed = false;
      for (Operation *op : llvm::to_vector(epilogue))
        if (!readsInside(op, epilogue)) {
          epilogue.remove(op);
          changed = true;
        }
    }
    return epilogue;
  }

  /// The dequantization of an 8-bit residual (int8 or E4M3) an epilogue add reads (per tensor,
  /// zero point 0): the graph reads the 8-bit value and scales it (ConvStep.residualScale). A dequantization
  /// other ops read too is cloned, one of the add's own.
  static void takeResidualDequantization(llvm::SetVector<Operation *> &members) {
    for (Operation *member : llvm::to_vector(members)) {
      auto add = llvm::dyn_cast<AddOp>(member);
      if (!add)
        continue;
      for (mlir::OpOperand &operand : add->getOpOperands()) {
        auto dq = operand.get().getDefiningOp<DequantizeOp>();
        if (!dq || members.contains(dq) || operand.get().getType() != add.getType() ||
            !isSymmetricPerTensorQuantization(dq) || !isConvQuantizedElement(elementOf(dq.getInput())))
          continue;
        if (!dq->hasOneUse()) {
          mlir::OpBuilder builder(add);
          dq = llvm::cast<DequantizeOp>(builder.clone(*dq));
          operand.set(dq.getResult());
        }
        members.insert(dq);
      }
    }
  }

  static bool isFp8Element(Type element) { return llvm::isa<mlir::Float8E4M3FNType>(element); }

  /// Whether `op` is a per-tensor, symmetric quantization of `value` to an element type
  /// `accepts` (what a library epilogue's output scale computes: cuBLASLt's scaled E4M3 D,
  /// cuDNN's scaled int8 or E4M3 y).
  static bool isScaledOutput(Operation *op, Value value, bool (*accepts)(Type)) {
    auto quantize = llvm::dyn_cast<QuantizeOp>(op);
    return quantize && quantize.getInput() == value && isSymmetricPerTensorQuantization(quantize) &&
           accepts(elementOf(quantize.getResult()));
  }

  /// One per-tensor, symmetric quantization to int8 or E4M3 (what a cuDNN convolution graph
  /// writes) among several users of `value`; null otherwise.
  static Operation *sideQuantizationOf(Value value) {
    if (value.hasOneUse())
      return nullptr;
    Operation *found = nullptr;
    for (Operation *user : value.getUsers())
      if (isScaledOutput(user, value, isConvQuantizedElement)) {
        if (found)
          return nullptr; // two quantizations: leave them to their own kernels
        found = user;
      }
    return found;
  }

  /// The single user of `value` when it is its scaled output (isScaledOutput); null otherwise.
  static Operation *consumerQuantizationOf(Value value, bool (*accepts)(Type)) {
    if (!value.hasOneUse())
      return nullptr;
    Operation *user = *value.getUsers().begin();
    return isScaledOutput(user, value, accepts) ? user : nullptr;
  }

  /// The matmul and the ops a cuBLASLt epilogue can take over from it, in order:
  /// act(matmul + bias + residual), each add optional and in either order, one ReLU or tanh
  /// GELU. Each link has one use (its value is not needed outside), operands of the matmul's
  /// element type (cuBLASLt's bias and C have the output's type); the right operand is a 2-d
  /// weight, so the product is one (batch x M) x K x N matmul. `fp8`: an FP8 linear layer
  /// (matchQuantizedLinearLayer), which takes no f32 bias.
  llvm::SetVector<Operation *> collectEpilogue(MatMulOp matmul, bool fp8) {
    llvm::SetVector<Operation *> members;
    auto lhs = llvm::cast<RankedTensorType>(matmul.getLhs().getType());
    auto rhs = llvm::cast<RankedTensorType>(matmul.getRhs().getType());
    auto result = llvm::cast<RankedTensorType>(matmul.getResult().getType());
    mlir::Type element = result.getElementType();
    if (rhs.getRank() != 2 || lhs.getRank() < 2 || !result.hasStaticShape() ||
        !(element.isF32() || isNarrowFloat(element)))
      return members;
    members.insert(matmul);
    int64_t n = result.getShape().back();
    bool bias = false, residual = false;
    // cuBLASLt's FP8 kernels writing f32 (an imported QDQ layer's exact f32 scales) read their
    // bias as bf16: the f32 bias add stays an elementwise op (checked on the H100: an f32 bias
    // there gave a QDQ MLP 921 output steps off).
    bool biasFits = !(element.isF32() && fp8);
    Value current = matmul.getResult();
    while (current.hasOneUse()) {
      Operation *user = *current.getUsers().begin();
      if (auto add = llvm::dyn_cast<AddOp>(user)) {
        bool wasBias = bias;
        if (!joinsAsBiasOrResidual(add, current, result, n, bias, residual))
          break;
        if (bias && !wasBias && !biasFits) {
          leftOut_["an FP8 layer writing f32 (an imported QDQ model's exact scales) keeps its f32 bias add "
                   "out: cuBLASLt's FP8 kernels writing f32 read a bias as bf16"]
              .push_back(nodeName(matmul));
          return members;
        }
        members.insert(add);
        current = add.getResult();
        continue;
      }
      auto gelu = llvm::dyn_cast<GeluOp>(user);
      if (gelu && gelu.getApproximate() != "tanh" && approximateGelu && element.isBF16()) {
        gelu.setApproximate("tanh"); // ONNX Gelu (opset 20), exact: the same rule as the chain
        approximated_.push_back(nodeName(gelu));
      }
      if (llvm::isa<ReluOp>(user) || (gelu && gelu.getApproximate() == "tanh"))
        members.insert(user);
      break;
    }
    if (approximateGelu && element.isBF16() && members.back()->getNumResults() == 1 &&
        members.back()->getResult(0) == current)
      if (Operation *gelu = replaceErfGelu(current))
        members.insert(gelu);
    if (!llvm::isa<ReluOp, GeluOp>(members.back()))
      noteEpilogueLeftOut(matmul, current, element);
    return members;
  }

  /// Whether `add` of `current` (the epilogue's value so far) joins a library epilogue: as its
  /// bias (a row of `columns`, when it has none yet) or its residual (`result`'s type, once).
  /// Sets the flag it takes.
  static bool joinsAsBiasOrResidual(AddOp add, Value current, RankedTensorType result, int64_t columns, bool &bias,
                                    bool &residual) {
    Value other = add.getLhs() == current ? add.getRhs() : add.getLhs();
    auto type = llvm::cast<RankedTensorType>(other.getType());
    if (other == current || type.getElementType() != result.getElementType() || add.getResult().getType() != result)
      return false;
    if (!bias && isBiasRow(type, columns) && type.getRank() <= result.getRank())
      return bias = true;
    if (type == result && !residual)
      return residual = true;
    return false;
  }

  /// A channels-last convolution with one group per input channel.
  static bool isDepthwiseChannelsLast(ConvOp conv) {
    auto input = llvm::cast<RankedTensorType>(conv.getInput().getType());
    return conv.getChannelsLast() && conv.getGroup() > 1 && conv.getGroup() == input.getShape().back();
  }

  /// conv(x, w, b) → conv(x, w) + b, so the bias joins the elementwise group after the conv
  /// (b broadcasts along the last, channel, axis) and cuDNN runs the plain convolution. The add
  /// computes the ONNX node's output now: the biasless product is no ONNX value, and a value
  /// dump that named it so would show the bias as a large error (kiln compare's culprits).
  static void splitBias(ConvOp conv) {
    Value bias = conv.getBias();
    if (!bias)
      return;
    mlir::OpBuilder builder(conv->getContext());
    builder.setInsertionPointAfter(conv);
    conv.getBiasMutable().clear();
    auto add = AddOp::create(builder, conv.getLoc(), conv.getResult().getType(), conv.getResult(), bias);
    conv.getResult().replaceAllUsesExcept(add.getResult(), add);
    setOnnxValueName(add.getResult(), onnxValueName(conv.getResult()));
    clearOnnxValueNames(conv);
  }

  /// A channels-last 2-d convolution and the epilogue one cuDNN graph runs with it, in order:
  /// act(conv + bias + residual), the bias (a row of its channels, when the conv has no bias
  /// operand) and the residual (its type and shape) each optional and in either order, then one
  /// of ReLU, clip with constant bounds, sigmoid, hard sigmoid, hard swish. Each link has one
  /// use. Depthwise convolutions take none, not even their bias (splitBias): with an epilogue
  /// cuDNN offers one engine for them, 12x slower than the plain convolution (measured on the
  /// H200, cuDNN 9.14), so their epilogue is an elementwise group.
  llvm::SetVector<Operation *> collectConvEpilogue(ConvOp conv) {
    llvm::SetVector<Operation *> members;
    auto result = llvm::cast<RankedTensorType>(conv.getResult().getType());
    mlir::Type element = result.getElementType();
    if (!conv.getChannelsLast() || result.getRank() != 4 || !result.hasStaticShape() ||
        !(element.isF32() || isNarrowFloat(element)) || isDepthwiseChannelsLast(conv))
      return members;
    int64_t channels = result.getShape().back();
    members.insert(conv);
    bool bias = static_cast<bool>(conv.getBias()), residual = false;
    Value current = conv.getResult();
    while (current.hasOneUse()) {
      Operation *user = *current.getUsers().begin();
      if (auto add = llvm::dyn_cast<AddOp>(user)) {
        if (!joinsAsBiasOrResidual(add, current, result, channels, bias, residual))
          break;
        members.insert(add);
        current = add.getResult();
        continue;
      }
      bool constantClip = false;
      if (auto clip = llvm::dyn_cast<ClipOp>(user))
        constantClip = scalarConstant(clip.getMin()) && scalarConstant(clip.getMax());
      if (constantClip || llvm::isa<ReluOp, SigmoidOp, HardSigmoidOp, HardSwishOp>(user))
        members.insert(user);
      break;
    }
    return members;
  }

  /// Why the op after a linear layer's epilogue, one an epilogue could hold (an add, ReLU or
  /// GELU), stays a step of its own; one remark per reason (reportEpiloguesLeftOut).
  void noteEpilogueLeftOut(MatMulOp matmul, Value current, mlir::Type element) {
    auto users = llvm::to_vector(current.getUsers());
    auto couldJoin = [](Operation *op) { return llvm::isa<AddOp, ReluOp, GeluOp>(op); };
    std::string reason;
    auto exactGelu = users.size() == 1 ? llvm::dyn_cast<GeluOp>(users[0]) : GeluOp();
    if (!matchErfGelu(current).empty() || (exactGelu && exactGelu.getApproximate() != "tanh"))
      reason = element.isBF16() ? "its erf GELU stays exact (--exact-gelu): cuBLASLt's epilogue has only the tanh "
                                  "GELU"
                                : "its erf GELU: cuBLASLt's epilogue has only the tanh GELU, which only bf16 plans "
                                  "use (within bf16's rounding)";
    else if (current == matmul.getResult() && users.size() > 1 && llvm::any_of(users, couldJoin))
      reason = "the product is also read elsewhere, so no epilogue can take it over";
    else if (users.size() == 1 && couldJoin(users[0]))
      reason = "the add after it is neither a bias row nor a residual of the product's type and shape, or "
               "the epilogue has one already";
    else
      return;
    leftOut_[reason].push_back(nodeName(matmul));
  }

  /// Lists up to three names, then how many more.
  static std::string someNames(llvm::ArrayRef<std::string> names) {
    std::string text;
    for (auto [i, name] : llvm::enumerate(names)) {
      if (i == 3)
        return text + ", ... (" + std::to_string(names.size()) + " in all)";
      text += (i ? ", " : "") + name;
    }
    return text;
  }

  void reportEpiloguesLeftOut() {
    for (auto &[reason, names] : leftOut_)
      getOperation().emitRemark() << names.size() << " linear layers keep the op after their cuBLASLt epilogue as "
                                  << "a separate step: " << reason << ": " << someNames(names);
  }

  std::map<std::string, std::vector<std::string>> leftOut_;

  /// The ops computing x * 0.5 * (1 + erf(x / sqrt 2)) from `x` (x / c or x * (1/c) for the
  /// erf's argument; the product of x, 0.5 and 1 + erf in any association and operand order),
  /// each used once except x, which only the chain uses; in chain order, the GELU's value last.
  llvm::SmallVector<Operation *> matchErfGelu(Value x) {
    llvm::SmallVector<Operation *> none;
    auto type = x.getType();
    auto users = llvm::to_vector(x.getUsers());
    if (users.size() != 2)
      return none;
    auto sameType = [&](Operation *op) { return op->getNumResults() == 1 && op->getResult(0).getType() == type; };
    auto singleUser = [&](Operation *op) -> Operation * {
      return op->getResult(0).hasOneUse() ? *op->getResult(0).getUsers().begin() : nullptr;
    };
    for (Operation *scale : users) {
      bool divides = llvm::isa<DivOp>(scale) && scale->getOperand(0) == x &&
                     isScalarConstantNear(scale->getOperand(1), std::sqrt(2.0), 2e-3);
      bool multiplies = llvm::isa<MulOp>(scale) &&
                        isScalarConstantNear(scale->getOperand(scale->getOperand(0) == x ? 1 : 0), std::sqrt(0.5), 2e-3);
      if (!(divides || multiplies) || !sameType(scale))
        continue;
      Operation *erf = singleUser(scale);
      if (!erf || !llvm::isa<ErfOp>(erf) || !sameType(erf))
        continue;
      Operation *plusOne = singleUser(erf);
      if (!plusOne || !llvm::isa<AddOp>(plusOne) || !sameType(plusOne) ||
          !isScalarConstantNear(plusOne->getOperand(plusOne->getOperand(0) == erf->getResult(0) ? 1 : 0), 1.0, 0.0))
        continue;
      // Up the single-use muls from 1 + erf: the first whose factors are {x, 1 + erf, 0.5}.
      Value p = plusOne->getResult(0);
      for (Operation *top = singleUser(plusOne); top && llvm::isa<MulOp>(top) && sameType(top);
           top = singleUser(top)) {
        llvm::SmallVector<Operation *> muls;
        llvm::SmallVector<Value> factors;
        std::function<void(Value)> flatten = [&](Value v) {
          Operation *def = v.getDefiningOp();
          if (v != x && v != p && def && llvm::isa<MulOp>(def) && sameType(def) &&
              (def == top || v.hasOneUse())) {
            muls.push_back(def);
            flatten(def->getOperand(0));
            flatten(def->getOperand(1));
          } else {
            factors.push_back(v);
          }
        };
        flatten(top->getResult(0));
        if (factors.size() != 3 || llvm::count(factors, x) != 1 || llvm::count(factors, p) != 1)
          continue;
        Value half = *llvm::find_if(factors, [&](Value f) { return f != x && f != p; });
        if (!isScalarConstantNear(half, 0.5, 0.0))
          continue;
        Operation *other = scale == users[0] ? users[1] : users[0];
        if (!llvm::is_contained(muls, other))
          continue;
        llvm::SmallVector<Operation *> chain{scale, erf, plusOne};
        llvm::sort(muls, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
        chain.append(muls.begin(), muls.end());
        return chain;
      }
    }
    return none;
  }

  /// Replaces the erf GELU of `x` (matchErfGelu) by one tanh kiln.gelu carrying the chain's
  /// locations; nullptr when `x` has none.
  Operation *replaceErfGelu(Value x) {
    llvm::SmallVector<Operation *> chain = matchErfGelu(x);
    if (chain.empty())
      return nullptr;
    Operation *last = chain.back();
    llvm::SmallVector<mlir::Location> locations;
    for (Operation *op : chain)
      locations.push_back(op->getLoc());
    mlir::OpBuilder builder(last);
    auto gelu = GeluOp::create(builder, mlir::FusedLoc::get(x.getContext(), locations), last->getResult(0).getType(),
                               x, builder.getStringAttr("tanh"));
    last->getResult(0).replaceAllUsesWith(gelu.getResult());
    approximated_.push_back(nodeName(last));
    for (Operation *op : llvm::reverse(chain))
      op->erase();
    return gelu;
  }

  /// One remark for the erf GELUs that became tanh GELUs, so a user knows and can say
  /// --exact-gelu.
  void reportApproximatedGelus() {
    if (approximated_.empty())
      return;
    std::string names = someNames(approximated_);
    getOperation().emitRemark() << approximated_.size()
                                << " erf GELUs after bf16 linear layers run as the tanh approximation in the "
                                   "cuBLASLt epilogue (at most 4.7e-4 apart, within bf16's rounding of the result): "
                                << names << "; --exact-gelu keeps erf, as a separate kernel";
  }

  std::vector<std::string> approximated_;

  /// A constant-mode pad by constant non-negative amounts with a constant value.
  static bool isConstantPad(Operation *op) {
    auto pad = llvm::dyn_cast<PadOp>(op);
    if (!pad || pad.getMode() != "constant" || !isOneElementConstant(pad.getValue()))
      return false;
    auto amounts = pad.getPads().getDefiningOp<ConstantOp>();
    auto values = amounts ? llvm::dyn_cast<mlir::DenseIntElementsAttr>(amounts.getValue()) : nullptr;
    return values && llvm::none_of(values.getValues<int64_t>(), [](int64_t amount) { return amount < 0; });
  }

  static bool isOneElementConstant(Value value) {
    return value.getDefiningOp<ConstantOp>() && llvm::cast<RankedTensorType>(value.getType()).getNumElements() == 1;
  }

  /// An elementwise op converting its first operand, a gather or pool group's chain: of the
  /// chain's shape, reading one-element constants besides.
  static bool convertsChain(Operation *op) {
    return isFusible(op) &&
           llvm::cast<RankedTensorType>(op->getOperand(0).getType()).getShape() ==
               llvm::cast<RankedTensorType>(op->getResult(0).getType()).getShape() &&
           llvm::all_of(op->getOperands().drop_front(), isOneElementConstant);
  }

  /// The chain a gather group computes, ending in `root` (a constant pad), in block order:
  /// producers that only the chain reads, index maps (reshape, transpose, constant pad) and
  /// before them elementwise ops of one-element constants besides the chain; empty when it
  /// would not save a kernel (fewer than two ops that are not reshapes, which are views). Only
  /// a pad ends one: the gather kernel reads each element where its index map points, and a
  /// chain ending in a transpose keeps the transpose's own kernel, whose tiles read and write
  /// whole rows (a cast and a channels-last transpose of many channels).
  static llvm::SmallVector<Operation *> gatherChain(Operation *root) {
    auto indexMap = [](Operation *op) {
      auto type = llvm::cast<RankedTensorType>(op->getResult(0).getType());
      return type.hasStaticShape() && (llvm::isa<ReshapeOp, TransposeOp>(op) || isConstantPad(op));
    };

    if (!llvm::isa<PadOp>(root) || !indexMap(root))
      return {};
    llvm::SmallVector<Operation *> chain{root};
    bool prefix = false; // past the index maps, into the elementwise ops before them
    for (Operation *current = root;;) {
      Value input = current->getOperand(0);
      Operation *producer = input.getDefiningOp();
      if (!producer || !input.hasOneUse() || producer->getNumResults() != 1)
        break;
      if (convertsChain(producer))
        prefix = true;
      else if (prefix || !indexMap(producer))
        break;
      chain.push_back(producer);
      current = producer;
    }
    if (llvm::count_if(chain, [](Operation *op) { return !llvm::isa<ReshapeOp>(op); }) < 2)
      return {};
    std::reverse(chain.begin(), chain.end());
    return chain;
  }

  /// Gather groups, before elementwise groups could take the chains' elementwise ops: an
  /// image's cast, space-to-depth transpose and channel pad (kiln-space-to-depth-convs) become
  /// one kernel that reads each element once, where three kernels read and wrote the image.
  /// Each op keeps its own types: a gather group computes what its ops compute alone.
  void formGatherGroups(mlir::Block &body) {
    llvm::SmallVector<Operation *> order;
    for (Operation &op : body)
      order.push_back(&op);
    llvm::DenseSet<Operation *> gathered;
    for (Operation *root : llvm::reverse(order)) {
      if (gathered.contains(root))
        continue;
      llvm::SmallVector<Operation *> chain = gatherChain(root);
      if (chain.empty())
        continue;
      gathered.insert(chain.begin(), chain.end());
      buildGroup({root->getResult(0)}, llvm::SetVector<Operation *>(chain.begin(), chain.end()), "gather", root, root,
                 {}, /*widen=*/false);
    }
  }

  /// Pool groups, before elementwise groups could take the chains: a channels-last max or
  /// average pool and the elementwise ops after it, each the only reader of the value before
  /// it, keeping the pool's shape and reading one-element constants besides (a per-tensor
  /// quantize, a cast). One kernel pools and writes the chain's value: ResNet's bf16 max pool
  /// and the quantization of its result for the first 8-bit conv, where a quantize kernel
  /// re-read the pooled tensor. Each op keeps its own types, as in a gather group, so the
  /// group computes what its ops compute alone.
  void formPoolGroups(mlir::Block &body) {
    llvm::SmallVector<Operation *> pools;
    for (Operation &op : body)
      if (llvm::isa<MaxPoolOp, AvgPoolOp>(op))
        pools.push_back(&op);
    for (Operation *pool : pools) {
      auto channelsLast = pool->getAttrOfType<mlir::BoolAttr>("channels_last");
      auto type = llvm::cast<RankedTensorType>(pool->getResult(0).getType());
      if (!channelsLast || !channelsLast.getValue() || !type.hasStaticShape())
        continue;
      llvm::SetVector<Operation *> chain;
      chain.insert(pool);
      for (Value current = pool->getResult(0); current.hasOneUse();) {
        Operation *user = *current.getUsers().begin();
        if (user->getOperand(0) != current || !convertsChain(user))
          break;
        chain.insert(user);
        current = user->getResult(0);
      }
      if (chain.size() < 2)
        continue;
      Operation *root = chain.back();
      buildGroup({root->getResult(0)}, chain, "pool", pool, root, {}, /*widen=*/false);
    }
  }

  /// The root and the producers it can absorb, to a fixed point: a producer joins once all its
  /// users are members, which may take another member joining first.
  llvm::SetVector<Operation *> collectMembers(Operation *root, const llvm::DenseSet<Operation *> &taken) {
    auto rootShape = llvm::cast<RankedTensorType>(root->getResult(0).getType()).getShape();
    llvm::SetVector<Operation *> members;
    members.insert(root);
    for (bool grew = true; grew;) {
      grew = false;
      for (size_t i = 0; i < members.size(); ++i) {
        for (Value operand : members[i]->getOperands()) {
          Operation *producer = operand.getDefiningOp();
          if (!producer || members.contains(producer) || taken.contains(producer) || !isFusible(producer))
            continue;
          auto shape = llvm::cast<RankedTensorType>(producer->getResult(0).getType()).getShape();
          if (!broadcastsTo(shape, rootShape))
            continue;
          bool usedOnlyInside = llvm::all_of(producer->getUsers(), [&](Operation *user) {
            return members.contains(user);
          });
          if (usedOnlyInside) {
            members.insert(producer);
            grew = true;
          }
        }
      }
    }
    return members;
  }

  /// Replaces `members` (ending in `root`, whose result the group gives) by one group of
  /// `kind`, named after `named` (or, when null, the op computing the root's value).
  void formGroup(Operation *root, const llvm::SetVector<Operation *> &members, llvm::StringRef kind,
                 Operation *named) {
    // The group takes its name (the first ONNX node of its location) from the op that computes
    // its result: the root, or the op before the root when the root is a cast that rounds it.
    if (!named) {
      named = root;
      if (auto cast = llvm::dyn_cast<CastOp>(root))
        if (Operation *input = cast.getInput().getDefiningOp(); input && members.contains(input))
          named = input;
    }
    buildGroup({root->getResult(0)}, members, kind, named, root);
  }

  /// The group's inputs: the values its members read that no member computes, in order of first
  /// use (members in block order).
  static llvm::SetVector<Value> groupInputs(llvm::ArrayRef<Operation *> ordered,
                                            const llvm::SetVector<Operation *> &members,
                                            const llvm::DenseMap<Value, Value> &wideInputs = {}) {
    llvm::SetVector<Value> inputs;
    for (Operation *member : ordered)
      for (Value operand : member->getOperands())
        if (!members.contains(operand.getDefiningOp()))
          inputs.insert(wideInputs.lookup(operand) ? wideInputs.lookup(operand) : operand);
    return inputs;
  }

  static llvm::SmallVector<Operation *> inBlockOrder(const llvm::SetVector<Operation *> &members) {
    llvm::SmallVector<Operation *> ordered(members.begin(), members.end());
    llvm::sort(ordered, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
    return ordered;
  }

  /// Replaces `members` by one group of `kind` giving `results` (values members compute),
  /// named after `named`, inserted before `insertBefore` (where every input is defined).
  /// `wideInputs` maps narrow values the members read to their f32 conversions, which the
  /// group takes instead (the body would widen them to those values anyway).
  /// `widen` false keeps every member's own types (gather groups); otherwise the body computes
  /// in f32 and rounds once (kiln.fusion_group's rounding promise).
  void buildGroup(llvm::ArrayRef<Value> results, const llvm::SetVector<Operation *> &members, llvm::StringRef kind,
                  Operation *named, Operation *insertBefore, const llvm::DenseMap<Value, Value> &wideInputs = {},
                  bool widen = true) {
    // Members in block order (producers first); inputs in order of first use.
    llvm::SmallVector<Operation *> ordered = inBlockOrder(members);
    llvm::SetVector<Value> inputs = groupInputs(ordered, members, wideInputs);
    mlir::MLIRContext *context = insertBefore->getContext();
    llvm::SmallVector<mlir::Location> locations{named->getLoc()};
    for (Operation *member : ordered)
      if (member != named)
        locations.push_back(member->getLoc());
    mlir::Location loc = mlir::FusedLoc::get(context, locations, mlir::StringAttr::get(context, "kiln.fusion_group"));

    mlir::OpBuilder builder(insertBefore);
    llvm::SmallVector<Type> resultTypes;
    for (Value result : results)
      resultTypes.push_back(result.getType());
    auto group = FusionGroupOp::create(builder, loc, resultTypes, builder.getStringAttr(kind), inputs.getArrayRef());
    mlir::Block *block = builder.createBlock(&group.getBody());
    // Each value of the body in the type the group computes it in; narrow values also in their
    // own type when a cast reads them as they are.
    mlir::IRMapping computed, declared;
    for (Value input : inputs) {
      Value argument = block->addArgument(input.getType(), input.getLoc());
      declared.map(input, argument);
    }
    for (auto [narrow, wide] : wideInputs)
      computed.map(narrow, declared.lookup(wide));
    auto valueFor = [&](Value original, bool widen) -> Value {
      if (Value value = computed.lookupOrNull(original))
        return value;
      Value value = declared.lookup(original);
      if (!widen || !isNarrowFloat(elementOf(value)))
        return value;
      Value wide = CastOp::create(builder, loc, computeTypeOf(value), value).getResult();
      computed.map(original, wide);
      return wide;
    };
    for (Operation *member : ordered) {
      bool isCast = llvm::isa<CastOp>(member);
      Value result = member->getResult(0);
      // A cast back to f32 of a value the body already computes in f32 is that value.
      if (isCast && valueFor(member->getOperand(0), /*widen=*/false).getType() == result.getType()) {
        declared.map(result, valueFor(member->getOperand(0), /*widen=*/false));
        continue;
      }
      mlir::OperationState state(member->getLoc(), member->getName());
      for (Value operand : member->getOperands())
        state.addOperands(valueFor(operand, /*widen=*/widen && !isCast));
      state.addTypes(isCast || !widen ? result.getType() : computeTypeOf(result));
      state.addAttributes(member->getAttrs());
      Operation *clone = builder.create(state);
      (isCast ? declared : computed).map(result, clone->getResult(0));
    }
    llvm::SmallVector<Value> yielded;
    for (Value result : results) {
      Value value = valueFor(result, /*widen=*/false);
      if (value.getType() != result.getType())
        value = CastOp::create(builder, loc, result.getType(), value).getResult();
      yielded.push_back(value);
    }
    YieldOp::create(builder, loc, yielded);

    for (auto [i, result] : llvm::enumerate(results))
      Value(result).replaceAllUsesWith(group.getResult(i));
    for (Operation *member : llvm::reverse(ordered))
      member->erase();
  }
};

} // namespace

} // namespace kiln
