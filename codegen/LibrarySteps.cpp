//===- LibrarySteps.cpp - conv on cuDNN, matmul and gemm on cuBLASLt ------===//
//
// These ops become library steps; the cases a library call cannot express directly get a
// generated kernel around it: asymmetric conv padding (an explicit pad), ConvTranspose with
// asymmetric pads or output_padding (a full-size result, then a slice), matmul batch
// broadcasting that one stride cannot express and gemm C operands that are neither a bias row
// nor a full matrix (an expand).
//
//===----------------------------------------------------------------------===//

#include "codegen/OpDescription.h"
#include "codegen/PlanBuilderImpl.h"
#include "codegen/kernels/PointwiseConvInt8.h"
#include "ir/KilnOps.h"
#include "ir/ShapeRules.h"

namespace kiln::codegen {
namespace {

TensorDesc tensor(DType dtype, std::vector<int64_t> shape) {
  TensorDesc t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  return t;
}

TensorDesc constantInts(std::vector<int64_t> values) {
  TensorDesc t = tensor(DType::I64, {static_cast<int64_t>(values.size())});
  t.ints = std::move(values);
  return t;
}

/// Types the library steps run; others stay in the interpreter for now.
bool isLibraryFloat(DType type) { return type == DType::F32 || type == DType::F16 || type == DType::BF16; }

} // namespace

/// The operand types a cuBLASLt step takes (Plan.h's GemmStep): A and B one library float, the
/// result A's type or f32, a C operand the result's. nullopt when they fit, else why not.
std::optional<std::string> gemmTypeProblem(DType a, DType b, DType result, std::optional<DType> c) {
  auto name = [](DType t) { return std::string(plan::dtypeName(t)); };
  bool fp8 = a == DType::F8E4M3FN && b == a;
  if (!fp8 && (!isLibraryFloat(a) || b != a))
    return "GPU matrix products take f32, f16, bf16 or f8e4m3fn operands of one type (cuBLASLt), not " + name(a) +
           " and " + name(b);
  if (fp8 && !isLibraryFloat(result) && result != DType::F8E4M3FN)
    return "an FP8 matrix product gives f32, f16, bf16 or f8e4m3fn, not " + name(result);
  if (fp8 && result == DType::F8E4M3FN)
    return std::nullopt; // C and bias are checked beside the epilogue that scales D
  if (!fp8 && result != a && result != DType::F32)
    return "a GPU matrix product of " + name(a) + " operands gives " + name(a) + " or f32, not " + name(result);
  if (c && *c != result)
    return "the C operand (" + name(*c) + ") must have the result's type (" + name(result) + ")";
  return std::nullopt;
}

//===-- Convolution -------------------------------------------------------===//

llvm::Expected<PlanBuilderImpl::ConvLowering>
PlanBuilderImpl::beginConvStep(mlir::Operation *operation, const ConvOperands &operands,
                               llvm::ArrayRef<int64_t> strides, llvm::ArrayRef<int64_t> dilations, int64_t group,
                               bool channelsLast) {
  ConvLowering conv;
  auto describe = [&](mlir::Value value) -> llvm::Expected<TensorDesc> {
    auto desc = describeValue(value);
    if (!desc)
      return opError(operation, llvm::toString(desc.takeError()));
    return *desc;
  };
  auto x = describe(operands.input);
  if (!x)
    return x.takeError();
  auto w = describe(operands.weight);
  if (!w)
    return w.takeError();
  auto y = describe(operands.result);
  if (!y)
    return y.takeError();
  conv.x = *x;
  conv.w = *w;
  conv.y = *y;
  // A channels-last float convolution may write 8 bits (its group ends in a quantize: yScale).
  bool eightBitY = plan::isQuantizedConvType(y->dtype) && channelsLast;
  bool oneType = w->dtype == x->dtype && (y->dtype == x->dtype || eightBitY), floatOthers = true;
  for (mlir::Value other : {operands.bias, operands.residual})
    if (other) {
      auto desc = describe(other);
      if (!desc)
        return desc.takeError();
      // A dequantized residual is 8-bit (channels last, its scale in the step's residualScale).
      if (other == operands.residual && operands.residualScale) {
        if (!plan::isQuantizedConvType(desc->dtype) || !channelsLast)
          return opError(operation, "internal: a dequantized residual is int8 or E4M3, of a channels-last "
                                    "convolution");
        continue;
      }
      oneType &= desc->dtype == x->dtype;
      floatOthers &= isLibraryFloat(desc->dtype);
    }
  if (operands.quantized) {
    if (!plan::isQuantizedConvType(x->dtype) || w->dtype != x->dtype ||
        !(plan::isQuantizedConvType(y->dtype) || isLibraryFloat(y->dtype)) || !floatOthers || !channelsLast)
      return opError(operation, "internal: an 8-bit convolution reads int8 or E4M3 x and w of one type channels "
                                "last, writes 8 bits or a float type and adds float bias and residual");
  } else if (!isLibraryFloat(x->dtype) || !oneType) {
    return opError(operation, "GPU convolution (cuDNN) takes f32, f16 or bf16 tensors, all of one type; this one "
                              "runs in the interpreter only (`kiln eval`)");
  }
  conv.rank = x->shape.size() - 2;
  conv.name = nodeName(operation);
  conv.channelsLast = channelsLast;
  auto buffer = [&](mlir::Value value, uint32_t &out) -> llvm::Error {
    auto index = bufferFor(value);
    if (!index)
      return index.takeError();
    out = *index;
    return llvm::Error::success();
  };
  if (auto err = buffer(operands.input, conv.step.x))
    return std::move(err);
  if (auto err = buffer(operands.weight, conv.step.w))
    return std::move(err);
  for (auto [value, slot] : {std::pair{operands.bias, &conv.step.bias}, {operands.residual, &conv.step.residual}})
    if (value) {
      uint32_t index = 0;
      if (auto err = buffer(value, index))
        return std::move(err);
      *slot = index;
    }
  // The step's shapes are channels-first whatever the storage (Plan.h).
  auto order = [&](const std::vector<int64_t> &shape) {
    if (!channelsLast)
      return shape;
    Shape first = toChannelsFirst(shape);
    return std::vector<int64_t>(first.begin(), first.end());
  };
  conv.step.channelsLast = channelsLast;
  conv.step.math = mathFor(operation);
  conv.step.xShape = order(x->shape);
  conv.step.wShape = order(w->shape);
  conv.step.yShape = order(y->shape);
  conv.step.strides.assign(strides.begin(), strides.end());
  conv.step.dilations.assign(dilations.begin(), dilations.end());
  conv.step.groups = group;
  return conv;
}

llvm::Error PlanBuilderImpl::finishConvStep(mlir::Operation *operation, ConvLowering &conv,
                                            llvm::ArrayRef<int64_t> pads, mlir::Value result) {
  const std::string &name = conv.name;
  size_t rank = conv.rank;
  plan::ConvStep &step = conv.step;
  if (pads.size() != 2 * rank)
    return opError(operation, "expected " + std::to_string(2 * rank) + " pads");
  bool symmetric = true;
  for (size_t d = 0; d < rank; ++d)
    symmetric &= pads[d] == pads[d + rank];
  if (symmetric) {
    step.pads.assign(pads.begin(), pads.begin() + rank);
  } else {
    // cuDNN pads symmetrically: pad explicitly first, in the storage order of x.
    const TensorDesc &x = conv.x;
    size_t firstSpatial = conv.channelsLast ? 1 : 2;
    std::vector<int64_t> padded = x.shape, padAmounts(2 * x.shape.size(), 0);
    for (size_t d = 0; d < rank; ++d) {
      padded[d + firstSpatial] += pads[d] + pads[d + rank];
      padAmounts[d + firstSpatial] = pads[d];
      padAmounts[d + firstSpatial + x.shape.size()] = pads[d + rank];
    }
    OpDesc pad;
    pad.op = "kiln.pad";
    pad.name = name + "/pad";
    TensorDesc zero = tensor(x.dtype, {});
    zero.floats = std::vector<double>{0.0};
    pad.operands = {x, constantInts(padAmounts), zero};
    pad.results = {tensor(x.dtype, padded)};
    pad.attrs["mode"] = std::string("constant");
    uint32_t paddedBuffer = newArenaBuffer(name + "/padded", pad.results[0]);
    // The pad amounts and value are baked into the kernel; they need no buffers.
    if (auto err = emitKernelOp(operation, pad, {step.x, std::nullopt, std::nullopt}, {paddedBuffer}, name + "/pad"))
      return err;
    step.x = paddedBuffer;
    step.xShape = padded;
    if (conv.channelsLast) {
      Shape first = toChannelsFirst(padded);
      step.xShape.assign(first.begin(), first.end());
    }
    step.pads.assign(rank, 0);
  }
  step.y = defineResult(result, name, conv.y);
  std::string op = operation->getName().getStringRef().str();
  if (options_.pointwiseConvInt8Kernels) {
    PointwiseConvInt8 kernel;
    if (!whyNoPointwiseConvInt8Kernel(plan_, step, kernel)) {
      auto emitted = emitPointwiseConvInt8(kernel, EmitContext{kSymbolPlaceholder});
      if (!emitted.isOk())
        return opError(operation, emitted.status().message());
      std::vector<std::optional<uint32_t>> operands = {step.x, step.w, step.scale};
      if (step.bias)
        operands.push_back(step.bias);
      if (step.residual) {
        operands.push_back(step.residual);
        operands.push_back(step.residualScale);
      }
      operands.push_back(step.yScale);
      return addKernelSteps(operation, emitted.value(), op, op + " '" + name + "'", operands, {step.y}, name);
    }
  }
  addStep(operation, name, op, std::move(step));
  return llvm::Error::success();
}

llvm::Error PlanBuilderImpl::lowerConv(mlir::Operation *operation) {
  auto op = llvm::cast<ConvOp>(operation);
  auto conv = beginConvStep(operation, {op.getInput(), op.getWeight(), op.getBias(), {}, op.getResult()},
                            op.getStrides(), op.getDilations(), op.getGroup(), op.getChannelsLast());
  if (!conv)
    return conv.takeError();
  return finishConvStep(operation, *conv, op.getPads(), op.getResult());
}

llvm::Error PlanBuilderImpl::lowerConvTranspose(mlir::Operation *operation) {
  auto op = llvm::cast<ConvTransposeOp>(operation);
  auto conv = beginConvStep(operation, {op.getInput(), op.getWeight(), op.getBias(), {}, op.getResult()},
                            op.getStrides(), op.getDilations(), op.getGroup(), /*channelsLast=*/false);
  if (!conv)
    return conv.takeError();
  const TensorDesc &x = conv->x;
  const TensorDesc &w = conv->w;
  const TensorDesc &y = conv->y;
  const std::string &name = conv->name;
  size_t rank = conv->rank;
  plan::ConvStep &step = conv->step;
  step.transpose = true;
  std::vector<int64_t> pads(op.getPads().begin(), op.getPads().end());
  std::vector<int64_t> outputPadding(op.getOutputPadding().begin(), op.getOutputPadding().end());
  const std::vector<int64_t> &strides = step.strides, &dilations = step.dilations;
  outputPadding.resize(rank, 0);
  for (size_t d = 0; d < rank; ++d)
    if (outputPadding[d] >= strides[d])
      return opError(operation, "output_padding must be smaller than the stride on every axis");

  bool direct = true;
  for (size_t d = 0; d < rank; ++d)
    direct &= pads[d] == pads[d + rank] && outputPadding[d] == 0;
  if (direct) {
    step.pads.assign(pads.begin(), pads.begin() + rank);
    step.yShape = y.shape;
    step.y = defineResult(op.getResult(), name, y);
    addStep(operation, name, "kiln.conv_transpose", std::move(step));
    return llvm::Error::success();
  }
  // Full result without padding (plus output_padding at the end), then the window
  // [pad_begin, pad_begin + out) of every spatial axis.
  std::vector<int64_t> full = y.shape, starts, ends, axes, steps;
  for (size_t d = 0; d < rank; ++d) {
    int64_t kernelExtent = (w.shape[d + 2] - 1) * dilations[d] + 1;
    full[d + 2] = (x.shape[d + 2] - 1) * strides[d] + kernelExtent + outputPadding[d];
    starts.push_back(pads[d]);
    ends.push_back(pads[d] + y.shape[d + 2]);
    axes.push_back(static_cast<int64_t>(d + 2));
    steps.push_back(1);
  }
  step.pads.assign(rank, 0);
  step.yShape = full;
  uint32_t fullBuffer = newArenaBuffer(name + "/full", tensor(y.dtype, full));
  step.y = fullBuffer;
  addStep(operation, name, "kiln.conv_transpose", std::move(step));

  OpDesc slice;
  slice.op = "kiln.slice";
  slice.name = name + "/crop";
  slice.operands = {tensor(y.dtype, full), constantInts(starts), constantInts(ends), constantInts(axes),
                    constantInts(steps)};
  slice.results = {y};
  uint32_t result = defineResult(op.getResult(), name, y);
  return emitKernelOp(operation, slice, {fullBuffer, std::nullopt, std::nullopt, std::nullopt, std::nullopt}, {result},
                      name + "/crop");
}

//===-- Matrix products ---------------------------------------------------===//

namespace {
/// Element stride between batch matrices of an operand with batch dims `batch` (already
/// left-padded to the result's batch rank) in a result batch `outBatch`; nullopt when no
/// single stride expresses the broadcast.
std::optional<int64_t> batchStride(const std::vector<int64_t> &batch, const std::vector<int64_t> &outBatch,
                                   int64_t matrixElements) {
  int64_t count = 1;
  for (int64_t d : batch)
    count *= d;
  int64_t outCount = 1;
  for (int64_t d : outBatch)
    outCount *= d;
  if (count == outCount && batch == outBatch)
    return matrixElements;
  if (count == 1)
    return 0;
  return std::nullopt;
}
} // namespace

llvm::Error PlanBuilderImpl::lowerMatMul(mlir::Operation *operation) {
  auto op = llvm::cast<MatMulOp>(operation);
  auto desc = describeOp(operation);
  if (!desc)
    return opError(operation, llvm::toString(desc.takeError()));
  const TensorDesc &a = *desc->operands[0], &b = *desc->operands[1];
  if (auto problem = gemmTypeProblem(a.dtype, b.dtype, desc->results[0].dtype, std::nullopt))
    return opError(operation, *problem + "; this one runs in the interpreter only (`kiln eval`)");
  std::string name = nodeName(operation);
  // 1-d promotion: [K] x [..., K, N] is [1, K]; [..., M, K] x [K] is [K, 1].
  std::vector<int64_t> aShape = a.shape, bShape = b.shape;
  if (aShape.size() == 1)
    aShape.insert(aShape.begin(), 1);
  if (bShape.size() == 1)
    bShape.push_back(1);
  int64_t m = aShape[aShape.size() - 2], k = aShape.back(), n = bShape.back();
  std::vector<int64_t> aBatch(aShape.begin(), aShape.end() - 2), bBatch(bShape.begin(), bShape.end() - 2);
  size_t batchRank = std::max(aBatch.size(), bBatch.size());
  aBatch.insert(aBatch.begin(), batchRank - aBatch.size(), 1);
  bBatch.insert(bBatch.begin(), batchRank - bBatch.size(), 1);
  std::vector<int64_t> outBatch(batchRank);
  int64_t batch = 1;
  for (size_t d = 0; d < batchRank; ++d) {
    outBatch[d] = std::max(aBatch[d], bBatch[d]);
    batch *= outBatch[d];
  }

  auto aBuffer = bufferFor(op.getLhs());
  if (!aBuffer)
    return aBuffer.takeError();
  auto bBuffer = bufferFor(op.getRhs());
  if (!bBuffer)
    return bBuffer.takeError();

  // An operand whose batch dims broadcast partially is expanded to the full batch first.
  auto strideFor = [&](uint32_t &buffer, DType dtype, const std::vector<int64_t> &opBatch, int64_t rows,
                       int64_t cols, const std::string &which) -> llvm::Expected<int64_t> {
    if (auto stride = batchStride(opBatch, outBatch, rows * cols))
      return *stride;
    std::vector<int64_t> from = opBatch, to = outBatch;
    from.push_back(rows), from.push_back(cols), to.push_back(rows), to.push_back(cols);
    OpDesc expand;
    expand.op = "kiln.expand";
    expand.name = name + "/expand_" + which;
    expand.operands = {tensor(dtype, from)};
    expand.results = {tensor(dtype, to)};
    uint32_t expanded = newArenaBuffer(expand.name, expand.results[0]);
    if (auto err = emitKernelOp(operation, expand, {buffer}, {expanded}, expand.name))
      return std::move(err);
    buffer = expanded;
    return rows * cols;
  };
  uint32_t aData = *aBuffer, bData = *bBuffer;
  auto strideA = strideFor(aData, a.dtype, aBatch, m, k, "lhs");
  if (!strideA)
    return strideA.takeError();
  auto strideB = strideFor(bData, b.dtype, bBatch, k, n, "rhs");
  if (!strideB)
    return strideB.takeError();

  // One weight matrix for every batch entry (x[..., M, K] @ W[K, N], as in every linear layer):
  // the batch rows are contiguous, so it is one M*batch x K matmul instead of `batch` thin
  // ones (ViT's attention projections are 197 batches of M=1 otherwise).
  if (batch > 1 && *strideB == 0 && *strideA == m * k) {
    m *= batch;
    batch = 1;
  }

  plan::GemmStep step;
  step.math = mathFor(operation);
  step.batch = batch;
  step.m = m;
  step.n = n;
  step.k = k;
  step.strideA = batch == 1 ? 0 : *strideA;
  step.strideB = batch == 1 ? 0 : *strideB;
  step.strideD = m * n;
  step.a = aData;
  step.b = bData;
  step.d = defineResult(op.getResult(), name, desc->results[0]);
  addStep(operation, name, "kiln.matmul", std::move(step));
  return llvm::Error::success();
}

llvm::Error PlanBuilderImpl::lowerGemm(mlir::Operation *operation) {
  auto op = llvm::cast<GemmOp>(operation);
  auto desc = describeOp(operation);
  if (!desc)
    return opError(operation, llvm::toString(desc.takeError()));
  const TensorDesc &a = *desc->operands[0];
  const TensorDesc &y = desc->results[0];
  float beta = op.getBeta().convertToFloat();
  bool usesC = op.getC() && beta != 0.0f;
  std::optional<DType> cType = usesC ? std::optional<DType>(desc->operands[2]->dtype) : std::nullopt;
  if (auto problem = gemmTypeProblem(a.dtype, desc->operands[1]->dtype, y.dtype, cType))
    return opError(operation, *problem + "; this one runs in the interpreter only (`kiln eval`)");
  std::string name = nodeName(operation);
  bool transA = op.getTransA(), transB = op.getTransB();
  int64_t m = y.shape[0], n = y.shape[1];
  int64_t k = transA ? a.shape[0] : a.shape[1];

  auto aBuffer = bufferFor(op.getA());
  if (!aBuffer)
    return aBuffer.takeError();
  auto bBuffer = bufferFor(op.getB());
  if (!bBuffer)
    return bBuffer.takeError();

  plan::GemmStep step;
  step.math = mathFor(operation);
  step.m = m;
  step.n = n;
  step.k = k;
  step.transA = transA;
  step.transB = transB;
  step.alpha = op.getAlpha().convertToFloat();
  step.a = *aBuffer;
  step.b = *bBuffer;
  if (usesC) {
    const TensorDesc &c = *desc->operands[2];
    std::vector<int64_t> cShape = c.shape;
    cShape.insert(cShape.begin(), 2 - std::min<size_t>(2, cShape.size()), 1);
    auto cBuffer = bufferFor(op.getC());
    if (!cBuffer)
      return cBuffer.takeError();
    if (cShape[0] == 1 && cShape[1] == n && beta == 1.0f && n > 1) {
      step.bias = *cBuffer; // a row added to every row: cuBLASLt's bias epilogue
    } else if (cShape[0] == m && cShape[1] == n) {
      step.c = *cBuffer;
      step.beta = beta;
    } else {
      OpDesc expand;
      expand.op = "kiln.expand";
      expand.name = name + "/expand_c";
      expand.operands = {c};
      expand.operands[0]->ints.reset();
      expand.operands[0]->floats.reset();
      expand.results = {tensor(c.dtype, {m, n})};
      uint32_t expanded = newArenaBuffer(expand.name, expand.results[0]);
      if (auto err = emitKernelOp(operation, expand, {*cBuffer}, {expanded}, expand.name))
        return err;
      step.c = expanded;
      step.beta = beta;
    }
  }
  step.d = defineResult(op.getResult(), name, y);
  addStep(operation, name, "kiln.gemm", std::move(step));
  return llvm::Error::success();
}

} // namespace kiln::codegen

//===-- Attention (cuDNN flash attention through the frontend) ------------===//

namespace kiln::codegen {

/// One AttentionStep over the buffers of the op's operands and result: the op's views are the
/// step's offsets and strides, element for element (kiln-fuse-attention formed the op only
/// where AttentionChecks accepts them).
llvm::Error PlanBuilderImpl::lowerAttention(mlir::Operation *operation) {
  auto op = llvm::cast<AttentionOp>(operation);
  auto result = describeValue(op.getOutput());
  if (!result)
    return opError(operation, llvm::toString(result.takeError()));
  if (result->dtype != DType::F16 && result->dtype != DType::BF16)
    return opError(operation, "GPU attention takes f16 or bf16 (cuDNN's flash attention), not " +
                                  std::string(plan::dtypeName(result->dtype)) +
                                  "; this one runs in the interpreter only (`kiln eval`)");
  std::string name = nodeName(operation);
  llvm::ArrayRef<int64_t> dims = op.getDims();
  plan::AttentionStep step;
  step.batch = dims[0];
  step.heads = dims[1];
  step.seqQ = dims[2];
  step.seqKv = dims[3];
  step.headDim = dims[4];
  step.headDimV = dims[5];
  step.scale = op.getScale().convertToFloat();
  step.causal = op.getCausal();
  auto bind = [&](mlir::Value value, llvm::ArrayRef<int64_t> view, uint32_t &buffer, int64_t &offset,
                  std::vector<int64_t> &strides) -> llvm::Error {
    auto b = bufferFor(value);
    if (!b)
      return b.takeError();
    buffer = *b;
    offset = view[0];
    strides.assign(view.begin() + 1, view.end());
    return llvm::Error::success();
  };
  if (auto err = bind(op.getQ(), op.getQView(), step.q, step.qOffset, step.qStrides))
    return err;
  if (auto err = bind(op.getK(), op.getKView(), step.k, step.kOffset, step.kStrides))
    return err;
  if (auto err = bind(op.getV(), op.getVView(), step.v, step.vOffset, step.vStrides))
    return err;
  if (op.getMask()) {
    uint32_t mask = 0;
    if (auto err = bind(op.getMask(), *op.getMaskView(), mask, step.maskOffset, step.maskStrides))
      return err;
    step.mask = mask;
  }
  // The result gets fresh arena bytes: the step cannot run in place (AttentionChecks).
  step.o = defineResult(op.getOutput(), name, *result);
  step.oOffset = op.getOView()[0];
  step.oStrides.assign(op.getOView().begin() + 1, op.getOView().end());
  addStep(operation, name, "kiln.attention", std::move(step));
  return llvm::Error::success();
}

} // namespace kiln::codegen
