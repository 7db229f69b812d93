//===- PlanSections.cpp - encoding of the plan file's sections -------------===//
//
// Encoders and decoders are written side by side, field by field in the same order, so that a
// change to one is hard to make without the other. Enums are written as their declared values
// (the numbers in Plan.h) and range-checked later by validatePlan, which has to check them for
// in-memory plans anyway.
//
//===----------------------------------------------------------------------===//

#include "runtime/plan/PlanSections.h"

#include "runtime/plan/ByteStream.h"

namespace kiln::plan::detail {
namespace {
using format::SectionKind;
using format::StepTag;

// Smallest encodings of one vector element: count() refuses lengths that cannot fit.
constexpr size_t kMinStringBytes = 8;
constexpr size_t kMinBindingBytes = kMinStringBytes + 1 + 8 + 4;
constexpr size_t kMinBufferBytes = kMinStringBytes + 1 + 8 + 8;
constexpr size_t kMinStepBytes = 2 * kMinStringBytes + 1;
constexpr size_t kMinImageBytes = kMinStringBytes + 4 + 8 + 8;

//===-- metadata ----------------------------------------------------------===//

void encodeMetadata(ByteWriter &w, const Metadata &m) {
  w.str(m.compilerVersion);
  w.u32(m.computeCapability);
  w.u32(m.cudaVersion);
  w.u32(m.cudnnVersion);
  w.u32(m.cublasLtVersion);
  w.str(m.precision);
  w.str(m.model);
  w.u64(m.arenaBytes);
  w.u64(m.arenaLowerBound);
}

void decodeMetadata(ByteReader &r, Metadata &m) {
  m.compilerVersion = r.str("compiler version");
  m.computeCapability = r.u32("compute capability");
  m.cudaVersion = r.u32("CUDA version");
  m.cudnnVersion = r.u32("cuDNN version");
  m.cublasLtVersion = r.u32("cuBLASLt version");
  m.precision = r.str("precision");
  m.model = r.str("model name");
  m.arenaBytes = r.u64("arena bytes");
  m.arenaLowerBound = r.u64("arena lower bound");
}

//===-- tensors (inputs, outputs) -----------------------------------------===//

void encodeBindings(ByteWriter &w, const std::vector<TensorBinding> &bindings) {
  w.u64(bindings.size());
  for (const TensorBinding &b : bindings) {
    w.str(b.name);
    w.u8(static_cast<uint8_t>(b.dtype));
    w.i64s(b.shape);
    w.u32(b.buffer);
  }
}

std::vector<TensorBinding> decodeBindings(ByteReader &r, const char *what, std::string &where) {
  uint64_t n = r.count(what, kMinBindingBytes);
  std::vector<TensorBinding> bindings;
  for (uint64_t i = 0; i < n && !r.failed(); ++i) {
    where = std::string(what) + " " + std::to_string(i);
    TensorBinding b;
    b.name = r.str("name");
    b.dtype = static_cast<DType>(r.u8("dtype"));
    b.shape = r.i64s("shape");
    b.buffer = r.u32("buffer index");
    bindings.push_back(std::move(b));
  }
  return bindings;
}

//===-- buffers -----------------------------------------------------------===//

void encodeBuffers(ByteWriter &w, const std::vector<Buffer> &buffers) {
  w.u64(buffers.size());
  for (const Buffer &b : buffers) {
    w.str(b.name);
    w.u8(static_cast<uint8_t>(b.space));
    w.u64(b.offset);
    w.u64(b.bytes);
  }
}

void decodeBuffers(ByteReader &r, std::vector<Buffer> &buffers, std::string &where) {
  uint64_t n = r.count("buffer count", kMinBufferBytes);
  for (uint64_t i = 0; i < n && !r.failed(); ++i) {
    where = "buffer " + std::to_string(i);
    Buffer b;
    b.name = r.str("name");
    b.space = static_cast<MemorySpace>(r.u8("memory space"));
    b.offset = r.u64("offset");
    b.bytes = r.u64("bytes");
    buffers.push_back(std::move(b));
  }
}

//===-- steps -------------------------------------------------------------===//

void encodeStep(ByteWriter &w, const Step &step) {
  w.str(step.name);
  w.str(step.op);
  if (const auto *k = std::get_if<KernelStep>(&step.params)) {
    w.u8(static_cast<uint8_t>(StepTag::Kernel));
    w.u32(k->image);
    w.str(k->function);
    for (uint32_t v : k->grid)
      w.u32(v);
    for (uint32_t v : k->block)
      w.u32(v);
    w.u32(k->sharedBytes);
    w.u32s(k->args);
  } else if (const auto *g = std::get_if<GemmStep>(&step.params)) {
    w.u8(static_cast<uint8_t>(StepTag::Gemm));
    w.u8(static_cast<uint8_t>(g->dtype));
    w.u8(static_cast<uint8_t>(g->math));
    w.i64(g->batch);
    w.i64(g->m);
    w.i64(g->n);
    w.i64(g->k);
    w.boolean(g->transA);
    w.boolean(g->transB);
    w.i64(g->strideA);
    w.i64(g->strideB);
    w.i64(g->strideC);
    w.i64(g->strideD);
    w.f32(g->alpha);
    w.f32(g->beta);
    w.u8(static_cast<uint8_t>(g->activation));
    w.u32(g->a);
    w.u32(g->b);
    w.u32(g->d);
    w.optionalU32(g->c);
    w.optionalU32(g->bias);
  } else if (const auto *c = std::get_if<ConvStep>(&step.params)) {
    w.u8(static_cast<uint8_t>(StepTag::Conv));
    w.u8(static_cast<uint8_t>(c->dtype));
    w.u8(static_cast<uint8_t>(c->math));
    w.boolean(c->transpose);
    w.i64s(c->xShape);
    w.i64s(c->wShape);
    w.i64s(c->yShape);
    w.i64s(c->pads);
    w.i64s(c->strides);
    w.i64s(c->dilations);
    w.i64(c->groups);
    w.u8(static_cast<uint8_t>(c->activation));
    w.u32(c->x);
    w.u32(c->w);
    w.u32(c->y);
    w.optionalU32(c->bias);
  } else {
    const auto &copy = std::get<CopyStep>(step.params);
    w.u8(static_cast<uint8_t>(StepTag::Copy));
    w.u32(copy.src);
    w.u32(copy.dst);
    w.u64(copy.bytes);
  }
}

KernelStep decodeKernel(ByteReader &r) {
  KernelStep k;
  k.image = r.u32("image index");
  k.function = r.str("function name");
  for (uint32_t &v : k.grid)
    v = r.u32("grid");
  for (uint32_t &v : k.block)
    v = r.u32("block");
  k.sharedBytes = r.u32("shared bytes");
  k.args = r.u32s("arguments");
  return k;
}

GemmStep decodeGemm(ByteReader &r) {
  GemmStep g;
  g.dtype = static_cast<DType>(r.u8("dtype"));
  g.math = static_cast<MathMode>(r.u8("math mode"));
  g.batch = r.i64("batch");
  g.m = r.i64("m");
  g.n = r.i64("n");
  g.k = r.i64("k");
  g.transA = r.boolean("transA");
  g.transB = r.boolean("transB");
  g.strideA = r.i64("strideA");
  g.strideB = r.i64("strideB");
  g.strideC = r.i64("strideC");
  g.strideD = r.i64("strideD");
  g.alpha = r.f32("alpha");
  g.beta = r.f32("beta");
  g.activation = static_cast<Activation>(r.u8("activation"));
  g.a = r.u32("a");
  g.b = r.u32("b");
  g.d = r.u32("d");
  g.c = r.optionalU32("c");
  g.bias = r.optionalU32("bias");
  return g;
}

ConvStep decodeConv(ByteReader &r) {
  ConvStep c;
  c.dtype = static_cast<DType>(r.u8("dtype"));
  c.math = static_cast<MathMode>(r.u8("math mode"));
  c.transpose = r.boolean("transpose");
  c.xShape = r.i64s("x shape");
  c.wShape = r.i64s("w shape");
  c.yShape = r.i64s("y shape");
  c.pads = r.i64s("pads");
  c.strides = r.i64s("strides");
  c.dilations = r.i64s("dilations");
  c.groups = r.i64("groups");
  c.activation = static_cast<Activation>(r.u8("activation"));
  c.x = r.u32("x");
  c.w = r.u32("w");
  c.y = r.u32("y");
  c.bias = r.optionalU32("bias");
  return c;
}

CopyStep decodeCopy(ByteReader &r) {
  CopyStep c;
  c.src = r.u32("src");
  c.dst = r.u32("dst");
  c.bytes = r.u64("bytes");
  return c;
}

void decodeSteps(ByteReader &r, std::vector<Step> &steps, std::string &where) {
  uint64_t n = r.count("step count", kMinStepBytes);
  for (uint64_t i = 0; i < n && !r.failed(); ++i) {
    where = "step " + std::to_string(i);
    Step step;
    step.name = r.str("name");
    step.op = r.str("op");
    where += " '" + step.name + "'";
    uint8_t tag = r.u8("step kind");
    switch (static_cast<StepTag>(tag)) {
    case StepTag::Kernel: step.params = decodeKernel(r); break;
    case StepTag::Gemm: step.params = decodeGemm(r); break;
    case StepTag::Conv: step.params = decodeConv(r); break;
    case StepTag::Copy: step.params = decodeCopy(r); break;
    default:
      if (!r.failed())
        r.fail("unknown step kind " + std::to_string(tag) + " (this kiln knows 1=kernel, 2=gemm, 3=conv, 4=copy)");
    }
    steps.push_back(std::move(step));
  }
}

//===-- images ------------------------------------------------------------===//

void encodeImages(ByteWriter &w, const std::vector<KernelImage> &images) {
  w.u64(images.size());
  for (const KernelImage &image : images) {
    w.str(image.name);
    w.u32(image.smVersion);
    w.bytes(image.cubin);
    w.str(image.ptx);
  }
}

void decodeImages(ByteReader &r, std::vector<KernelImage> &images, std::string &where) {
  uint64_t n = r.count("image count", kMinImageBytes);
  for (uint64_t i = 0; i < n && !r.failed(); ++i) {
    where = "image " + std::to_string(i);
    KernelImage image;
    image.name = r.str("name");
    image.smVersion = r.u32("sm version");
    image.cubin = r.bytes("cubin");
    image.ptx = r.str("ptx");
    images.push_back(std::move(image));
  }
}

} // namespace

std::vector<uint8_t> encodeSection(SectionKind kind, const Plan &plan) {
  ByteWriter w;
  switch (kind) {
  case SectionKind::Metadata: encodeMetadata(w, plan.metadata); break;
  case SectionKind::Tensors:
    encodeBindings(w, plan.inputs);
    encodeBindings(w, plan.outputs);
    break;
  case SectionKind::Buffers: encodeBuffers(w, plan.buffers); break;
  case SectionKind::Steps:
    w.u64(plan.steps.size());
    for (const Step &step : plan.steps)
      encodeStep(w, step);
    break;
  case SectionKind::Images: encodeImages(w, plan.images); break;
  case SectionKind::Weights: break; // the container writes the blob itself, unframed
  }
  return w.take();
}

Status decodeSection(SectionKind kind, std::span<const uint8_t> bytes, Plan &plan) {
  ByteReader r(bytes);
  std::string where; // the element being decoded, for the message
  switch (kind) {
  case SectionKind::Metadata: decodeMetadata(r, plan.metadata); break;
  case SectionKind::Tensors:
    plan.inputs = decodeBindings(r, "input", where);
    if (!r.failed())
      plan.outputs = decodeBindings(r, "output", where);
    break;
  case SectionKind::Buffers: decodeBuffers(r, plan.buffers, where); break;
  case SectionKind::Steps: decodeSteps(r, plan.steps, where); break;
  case SectionKind::Images: decodeImages(r, plan.images, where); break;
  case SectionKind::Weights:
    return Status(runtime::StatusCode::kInternal, "the weights section has no encoding to decode");
  }
  if (!r.failed() && r.remaining() != 0) {
    where.clear();
    r.fail(std::to_string(r.remaining()) + " bytes are left over after the last element");
  }
  if (!r.failed())
    return Status::ok();
  std::string message = "section '" + std::string(format::sectionName(kind)) + "' is malformed ";
  if (!where.empty())
    message += "(in " + where + ") ";
  return Status(runtime::StatusCode::kInvalidPlan, message + r.error());
}

} // namespace kiln::plan::detail
