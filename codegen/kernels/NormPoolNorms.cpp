//===- NormPoolNorms.cpp - batch/instance/layer/group normalization kernels ===//
//
// kiln.batch_norm (inference) is elementwise: one thread per element, per-channel statistics
// read from the operands. instance_norm, layer_norm and group_norm all normalize contiguous
// rows -- an (n, c) plane, the trailing axes from `axis`, an (n, group) block of channels -- so
// they share one kernel: mean, then mean squared deviation (two passes, as the interpreter
// computes them), then (x - mean) * (1 / sqrt(var + epsilon)) * scale + bias: one division a
// row, not one an element (an IEEE division is about ten instructions, and a warp's row of 768
// divided 24 times a lane; the product is within an ulp of the quotient). Rows up to 1024
// elements get one warp each (BERT/ViT rows of 768: 24 values a lane, kept in registers);
// longer rows one block each, values kept in registers up to 16 a thread and re-read from
// global memory beyond that. Statistics accumulate in float (double for f64) with
// deterministic shuffle/shared-memory reductions.
//
//===----------------------------------------------------------------------===//

#include "codegen/kernels/NormPoolKernels.h"

#include "codegen/kernels/ElementwiseSource.h"
#include "codegen/kernels/FusionBodySource.h"

#include <optional>

namespace kiln::codegen::normpool {
namespace {

/// ODS default of every norm's epsilon (F32Attr "1e-5f"), as the f32 value it is.
const double kDefaultEpsilon = static_cast<double>(1e-5f);

constexpr std::string_view kBatchNormKernel = R"CUDA(
extern "C" __global__ void @FN@(const @T@ *__restrict__ x, const @ST@ *__restrict__ scale,
                               const @BT@ *__restrict__ bias, const @MT@ *__restrict__ mean,
                               const @VT@ *__restrict__ var, @T@ *__restrict__ y) {
  for (kiln_i64 i = blockIdx.x * (kiln_i64)blockDim.x + threadIdx.x; i < @TOTAL@;
       i += (kiln_i64)gridDim.x * blockDim.x) {
    const kiln_i64 c = (i / @INNER@) % @C@;
    const @CT@ stdDev = sqrt((@CT@)kiln_ld(var, c) + @EPS@);
    kiln_st(y, i, ((@CT@)kiln_ld(x, i) - (@CT@)kiln_ld(mean, c)) / stdDev * (@CT@)kiln_ld(scale, c) +
                      (@CT@)kiln_ld(bias, c));
  }
}
)CUDA";

/// Checks a per-channel operand: floating point of shape [C].
Status requireChannelVector(const OpDesc &op, const TensorDesc &tensor, int64_t channels, const std::string &role) {
  KILN_NP_TRY(requireFloat(op, tensor, role));
  if (tensor.shape != std::vector<int64_t>{channels})
    return op.error("the " + role + " must have shape [" + std::to_string(channels) + "] (one value per channel), got " +
                    formatShape(tensor.shape));
  return Status::ok();
}

} // namespace

StatusOr<EmittedKernels> emitBatchNorm(const OpDesc &op, const EmitContext &context) {
  KILN_NP_TRY(checkArity(op, 5, 1));
  const char *roles[] = {"input", "scale", "bias", "mean", "variance"};
  const TensorDesc *t[5];
  for (size_t k = 0; k < 5; ++k) {
    auto operand = requireOperand(op, k, roles[k]);
    if (!operand.isOk())
      return operand.status();
    t[k] = operand.value();
  }
  const TensorDesc &x = *t[0];
  KILN_NP_TRY(requireFloat(op, x, "input"));
  if (x.shape.size() < 2)
    return op.error("the input must be [N, C, ...], got shape " + formatShape(x.shape));
  int64_t channels = x.shape[1];
  for (size_t k = 1; k < 5; ++k)
    KILN_NP_TRY(requireChannelVector(op, *t[k], channels, roles[k]));
  KILN_NP_TRY(requireResult(op, x.dtype, x.shape));

  EmittedKernels out;
  int64_t total = x.numElements();
  if (total == 0)
    return out;
  std::string fn = context.symbol + "batch_norm";
  out.source = fill(kBatchNormKernel,
                    {{"FN", fn},
                     {"T", storageType(x.dtype)},
                     {"ST", storageType(t[1]->dtype)},
                     {"BT", storageType(t[2]->dtype)},
                     {"MT", storageType(t[3]->dtype)},
                     {"VT", storageType(t[4]->dtype)},
                     {"CT", computeType(x.dtype)},
                     {"TOTAL", literalInt(total)},
                     {"INNER", literalInt(product(std::vector<int64_t>(x.shape.begin() + 2, x.shape.end())))},
                     {"C", literalInt(channels)},
                     {"EPS", literal(x.dtype, op.attrFloat("epsilon", kDefaultEpsilon))}});
  out.launches.push_back(gridStrideLaunch(fn, total,
                                          {KernelArg::operand(0), KernelArg::operand(1), KernelArg::operand(2),
                                           KernelArg::operand(3), KernelArg::operand(4), KernelArg::result(0)}));
  return out;
}

namespace {

//===-- Row normalization (instance, layer, group) ----------------------===//

/// A normalization over `rows` contiguous rows of `size` elements; scale is operand 1 and bias
/// operand 2 (absent for a layer_norm without bias) of the norm op.
struct RowNorm {
  std::string function;
  int64_t rows = 0, size = 0;
  /// C expressions (of `row` and `col`) of the scale and bias elements for an element.
  std::string scaleIndex, biasIndex;
  bool hasBias = true;
};

/// Where the kernel's values come from and go: the plain op reads x and writes y; a norm
/// fusion group computes its input per element (the prologue) and stores what it yields from
/// the normalized value (the epilogue).
struct RowNormSource {
  std::string params;        // the kernel's parameter list
  std::string scale, bias;   // the parameters holding the scale and the bias
  std::string scaleType, biasType; // their storage types
  /// Statements defining `const @CT@ xv`, the input element at `idx` (= row * size + col); `load`
  /// also stores the prologue values the group yields, `reload` (later passes over a row that
  /// does not fit in registers) does not.
  std::string load, reload;
  std::string store;         // statements storing what the element `nv` (normalized) gives
  std::vector<KernelArg> args;

  /// The same statements for rows moved in chunks: lane l takes chunks c·32 + l of V adjacent
  /// elements, each read and written by one 8- to 32-byte access per operand and result of the
  /// row's full shape, where the element-by-element kernel issues V 1- to 4-byte accesses (the
  /// 2-byte loads kept BERT-base's layer-norm groups at 28% of DRAM bandwidth on an H100). The
  /// statements read `kiln_ld(<param>_c.v, e)` and write `<result>_c.v[e]` instead of memory at
  /// `idx`. Absent where the kernel has no such form.
  struct Chunks {
    using Array = std::pair<std::string, std::string>; // the parameter, its storage type
    std::vector<Array> loads;                          // read per chunk before its elements
    std::vector<Array> loadPassStores, normPassStores; // written per chunk after its elements
    std::string load, store;
    /// Read per chunk in the normalizing pass at the chunk's column (not the row's offset): the
    /// scale and bias, when they have the row's shape.
    std::vector<Array> parameterLoads;
    /// A row gather's table, read per chunk as `<table>_g` from the row its index names.
    struct Gathered {
      std::string table, tableType, indices;
      int64_t rows = 0;
    };
    std::vector<Gathered> gatheredLoads;
  };
  std::optional<Chunks> chunks;
};

/// Cached: each thread keeps its @ITEMS@ values in registers between the passes.
constexpr std::string_view kRowNormCached = R"CUDA(
extern "C" __global__ void __launch_bounds__(@BLOCK@) @FN@(@PARAMS@) {
  constexpr kiln_i64 kSize = @SIZE@;
  constexpr int kItems = @ITEMS@;
@SETUP@
@CHUNKED@
  @ROW_LOOP@ {
    const kiln_i64 base = row * kSize;
    @CT@ v[kItems];
    @CT@ acc = 0;
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const kiln_i64 col = @FIRST@ + (kiln_i64)@STEP@ * k;
      v[k] = (@CT@)0;
      if (col < kSize) {
        const kiln_i64 idx = base + col;
        @LOAD@
        v[k] = xv;
      }
      acc += v[k];
    }
    const @CT@ mean = @REDUCE@ / (@CT@)kSize;
    acc = 0;
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const kiln_i64 col = @FIRST@ + (kiln_i64)@STEP@ * k;
      const @CT@ d = v[k] - mean;
      acc += col < kSize ? d * d : (@CT@)0;
    }
    const @CT@ rstd = (@CT@)1 / sqrt(@REDUCE@ / (@CT@)kSize + @EPS@);
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const kiln_i64 col = @FIRST@ + (kiln_i64)@STEP@ * k;
      if (col < kSize) {
        const kiln_i64 idx = base + col;
        const @CT@ nv = (v[k] - mean) * rstd * (@CT@)kiln_ld(@SCALE@, @SCALE_INDEX@)@BIAS_TERM@;
        @STORE@
      }
    }
  }
}
)CUDA";

/// Warp per row in chunks (RowNormSource::Chunks), when every chunked pointer is aligned to its
/// access (the arena's buffers are; a view at an odd offset takes the element-by-element rows).
constexpr std::string_view kRowNormChunked = R"CUDA(
  if (@ALIGNED@) {
    constexpr int kV = @V@, kChunks = kItems / kV;
    @ROW_LOOP@ {
      const kiln_i64 base = row * kSize;
      @CT@ v[kItems];
      @CT@ acc = 0;
#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        const kiln_i64 col0 = ((kiln_i64)c * 32 + lane) * kV;
@LOAD_CHUNKS@
#pragma unroll
        for (int e = 0; e < kV; ++e) {
          const kiln_i64 col = col0 + e;
          const kiln_i64 idx = base + col;
          @LOAD@
          v[c * kV + e] = xv;
          acc += xv;
        }
@LOAD_PASS_STORES@
      }
      const @CT@ mean = kiln_np_warp_sum(acc) / (@CT@)kSize;
      acc = 0;
#pragma unroll
      for (int k = 0; k < kItems; ++k) {
        const @CT@ d = v[k] - mean;
        acc += d * d;
      }
      const @CT@ rstd = (@CT@)1 / sqrt(kiln_np_warp_sum(acc) / (@CT@)kSize + @EPS@);
#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        const kiln_i64 col0 = ((kiln_i64)c * 32 + lane) * kV;
@NORM_PASS_DECLS@@PARAMETER_CHUNKS@
#pragma unroll
        for (int e = 0; e < kV; ++e) {
          const kiln_i64 col = col0 + e;
          const kiln_i64 idx = base + col;
          const @CT@ nv = (v[c * kV + e] - mean) * rstd * @CHUNK_SCALE@@CHUNK_BIAS_TERM@;
          @STORE@
        }
@NORM_PASS_STORES@
      }
    }
    return;
  }
)CUDA";

/// The chunk length (elements per access) for rows of `size` elements taken by a warp: the most
/// of 8, 4, 2 that splits the row into whole chunks for all 32 lanes; 0 for none.
int64_t chunkLength(int64_t size) {
  for (int64_t v : {8, 4, 2})
    if (size % (32 * v) == 0)
      return v;
  return 0;
}

/// The CUDA text of RowNormSource::Chunks: the alignment test, the chunk reads and writes.
std::vector<std::pair<std::string, std::string>> chunkValues(const RowNormSource::Chunks &chunks, int64_t length) {
  std::string v = std::to_string(length);
  auto vec = [&](const std::string &type) { return "kiln_np_vec<" + type + ", " + v + ">"; };
  std::string aligned, loads, loadPassDecls, loadPassStores, normPassDecls, normPassStores;
  auto alignedToo = [&](const RowNormSource::Chunks::Array &a) {
    aligned += std::string(aligned.empty() ? "" : " && ") + "(size_t)" + a.first + " % sizeof(" + vec(a.second) +
               ") == 0";
  };
  for (const auto &a : chunks.loads) {
    alignedToo(a);
    loads += "        const " + vec(a.second) + " " + a.first + "_c = *reinterpret_cast<const " + vec(a.second) +
             " *>(" + a.first + " + base + col0);\n";
  }
  auto stores = [&](const std::vector<RowNormSource::Chunks::Array> &arrays, std::string &decls, std::string &writes) {
    for (const auto &a : arrays) {
      alignedToo(a);
      decls += "        " + vec(a.second) + " " + a.first + "_c;\n";
      writes += "        *reinterpret_cast<" + vec(a.second) + " *>(" + a.first + " + base + col0) = " + a.first +
                "_c;\n";
    }
  };
  stores(chunks.loadPassStores, loadPassDecls, loadPassStores);
  stores(chunks.normPassStores, normPassDecls, normPassStores);
  for (const auto &g : chunks.gatheredLoads) {
    alignedToo({g.table, g.tableType});
    loads += "        const kiln_i64 " + g.table + "_gi = kiln_np_gather_row((kiln_i64)" + g.indices + "[row], " +
             literalInt(g.rows) + ");\n        const " + vec(g.tableType) + " " + g.table + "_g = " + g.table +
             "_gi < 0 ? " + vec(g.tableType) + "{} : *reinterpret_cast<const " + vec(g.tableType) + " *>(" + g.table +
             " + " + g.table + "_gi * kSize + col0);\n";
  }
  std::string parameterLoads;
  for (const auto &a : chunks.parameterLoads) {
    alignedToo(a);
    parameterLoads += "        const " + vec(a.second) + " " + a.first + "_c = *reinterpret_cast<const " + vec(a.second) +
                      " *>(" + a.first + " + col0);\n";
  }
  return {{"ALIGNED", aligned.empty() ? "true" : aligned},
          {"V", v},
          {"LOAD_CHUNKS", loads + loadPassDecls},
          {"LOAD_PASS_STORES", loadPassStores},
          {"NORM_PASS_DECLS", normPassDecls},
          {"PARAMETER_CHUNKS", parameterLoads},
          {"NORM_PASS_STORES", normPassStores},
          {"LOAD", chunks.load},
          {"STORE", chunks.store}};
}

/// Streaming: rows too long for registers are read three times (the later reads mostly hit L2).
constexpr std::string_view kRowNormStreaming = R"CUDA(
extern "C" __global__ void __launch_bounds__(@BLOCK@) @FN@(@PARAMS@) {
  constexpr kiln_i64 kSize = @SIZE@;
@SETUP@
  @ROW_LOOP@ {
    const kiln_i64 base = row * kSize;
    @CT@ acc = 0;
    for (kiln_i64 col = @FIRST@; col < kSize; col += @STEP@) {
      const kiln_i64 idx = base + col;
      @LOAD@
      acc += xv;
    }
    const @CT@ mean = @REDUCE@ / (@CT@)kSize;
    acc = 0;
    for (kiln_i64 col = @FIRST@; col < kSize; col += @STEP@) {
      const kiln_i64 idx = base + col;
      @RELOAD@
      const @CT@ d = xv - mean;
      acc += d * d;
    }
    const @CT@ rstd = (@CT@)1 / sqrt(@REDUCE@ / (@CT@)kSize + @EPS@);
    for (kiln_i64 col = @FIRST@; col < kSize; col += @STEP@) {
      const kiln_i64 idx = base + col;
      @RELOAD@
      const @CT@ nv = (xv - mean) * rstd * (@CT@)kiln_ld(@SCALE@, @SCALE_INDEX@)@BIAS_TERM@;
      @STORE@
    }
  }
}
)CUDA";

constexpr int64_t kWarpRowLimit = 1024;
constexpr int64_t kMaxCachedItems = 16;

/// The kernel of `norm` (whose operand 0 is the normalized input, scale operand 1, bias
/// operand 2) with its values read and written as `source` says.
StatusOr<EmittedKernels> emitRowNorm(const OpDesc &op, const RowNorm &norm, RowNormSource source) {
  const TensorDesc &x = *op.operands[0];
  EmittedKernels out;
  if (norm.rows == 0 || norm.size == 0)
    return out;
  std::string ct = computeType(x.dtype);
  bool perWarp = norm.size <= kWarpRowLimit;
  int64_t threads = perWarp ? 32 : norm.size <= 4096 ? 256 : norm.size <= 8192 ? 512 : 1024;
  int64_t items = (norm.size + threads - 1) / threads;
  bool cached = perWarp || items <= kMaxCachedItems;
  std::vector<std::pair<std::string, std::string>> values = {
      {"FN", norm.function},
      {"PARAMS", source.params},
      {"CT", ct},
      {"SIZE", literalInt(norm.size)},
      {"ITEMS", std::to_string(items)},
      // Blocks of up to 1024 threads launch only if the compiler keeps registers within bounds.
      {"BLOCK", perWarp ? "256" : std::to_string(threads)},
      {"EPS", literal(x.dtype, op.attrFloat("epsilon", kDefaultEpsilon))},
      {"SCALE", source.scale},
      {"SCALE_INDEX", norm.scaleIndex},
      {"BIAS_TERM", norm.hasBias ? " + (" + ct + ")kiln_ld(" + source.bias + ", " + norm.biasIndex + ")" : ""},
      {"LOAD", source.load},
      {"RELOAD", source.reload},
      {"STORE", source.store},
  };
  if (perWarp) {
    values.push_back({"SETUP", "  const int lane = threadIdx.x & 31;\n  const kiln_i64 warps = blockDim.x >> 5;"});
    values.push_back({"ROW_LOOP", "for (kiln_i64 row = blockIdx.x * warps + (threadIdx.x >> 5); row < " +
                                      literalInt(norm.rows) + "; row += (kiln_i64)gridDim.x * warps)"});
    values.push_back({"FIRST", "lane"});
    values.push_back({"STEP", "32"});
    values.push_back({"REDUCE", "kiln_np_warp_sum(acc)"});
  } else {
    values.push_back({"SETUP", "  __shared__ " + ct + " shared[32];"});
    values.push_back({"ROW_LOOP", "for (kiln_i64 row = blockIdx.x; row < " + literalInt(norm.rows) +
                                      "; row += gridDim.x)"});
    values.push_back({"FIRST", "(kiln_i64)threadIdx.x"});
    values.push_back({"STEP", std::to_string(threads)});
    values.push_back({"REDUCE", "kiln_np_block_sum(acc, shared)"});
  }
  // The chunked rows first, for rows a warp takes in whole chunks; the element-by-element rows
  // after them serve misaligned pointers.
  int64_t length = chunkLength(norm.size);
  std::string chunked;
  if (perWarp && source.chunks && length > 0) {
    // A scale and bias of the row's shape (layer_norm over its trailing axes) are read in chunks
    // too: one 8- to 32-byte access where the element-by-element form issues V.
    RowNormSource::Chunks &chunks = *source.chunks;
    bool scaleChunked = norm.scaleIndex == "col" && !source.scaleType.empty();
    bool biasChunked = norm.hasBias && norm.biasIndex == "col" && !source.biasType.empty();
    std::string chunkScale = "(" + ct + ")kiln_ld(" + source.scale + ", " + norm.scaleIndex + ")";
    std::string chunkBias = norm.hasBias ? " + (" + ct + ")kiln_ld(" + source.bias + ", " + norm.biasIndex + ")" : "";
    if (scaleChunked) {
      chunks.parameterLoads.push_back({source.scale, source.scaleType});
      chunkScale = "(" + ct + ")kiln_ld(" + source.scale + "_c.v, e)";
    }
    if (biasChunked) {
      chunks.parameterLoads.push_back({source.bias, source.biasType});
      chunkBias = " + (" + ct + ")kiln_ld(" + source.bias + "_c.v, e)";
    }
    std::vector<std::pair<std::string, std::string>> chunkedValues = chunkValues(chunks, length);
    chunkedValues.push_back({"CHUNK_SCALE", chunkScale});
    chunkedValues.push_back({"CHUNK_BIAS_TERM", chunkBias});
    for (const auto &kv : values)
      if (kv.first != "LOAD" && kv.first != "STORE")
        chunkedValues.push_back(kv);
    chunked = fill(kRowNormChunked, chunkedValues);
  }
  values.push_back({"CHUNKED", chunked});
  out.source = fill(cached ? kRowNormCached : kRowNormStreaming, values);
  out.launches.push_back(perWarp ? warpPerRowLaunch(norm.function, norm.rows, std::move(source.args))
                                 : blockPerRowLaunch(norm.function, norm.rows, static_cast<uint32_t>(threads),
                                                     std::move(source.args)));
  return out;
}

/// The plain op's source: x, scale, [bias] in, y out.
StatusOr<EmittedKernels> emitRowNorm(const OpDesc &op, const RowNorm &norm) {
  const std::string ct = computeType(op.operands[0]->dtype);
  RowNormSource source;
  source.params = "const " + storageType(op.operands[0]->dtype) + " *__restrict__ x, const " +
                  storageType(op.operands[1]->dtype) + " *__restrict__ scale, ";
  if (norm.hasBias)
    source.params += "const " + storageType(op.operands[2]->dtype) + " *__restrict__ bias, ";
  source.params += storageType(op.results[0].dtype) + " *__restrict__ y";
  source.scale = "scale";
  source.bias = "bias";
  source.scaleType = storageType(op.operands[1]->dtype);
  if (norm.hasBias)
    source.biasType = storageType(op.operands[2]->dtype);
  source.load = source.reload = "const " + ct + " xv = (" + ct + ")kiln_ld(x, idx);";
  source.store = "kiln_st(y, idx, nv);";
  source.chunks = RowNormSource::Chunks{{{"x", storageType(op.operands[0]->dtype)}},
                                        {},
                                        {{"y", storageType(op.results[0].dtype)}},
                                        "const " + ct + " xv = (" + ct + ")kiln_ld(x_c.v, e);",
                                        "kiln_st(y_c.v, e, nv);"};
  source.args = {KernelArg::operand(0), KernelArg::operand(1)};
  if (norm.hasBias)
    source.args.push_back(KernelArg::operand(2));
  source.args.push_back(KernelArg::result(0));
  return emitRowNorm(op, norm, std::move(source));
}

/// Operands input, scale and bias (bias optional only where `biasOptional`), all floating point.
Status checkNormOperands(const OpDesc &op, bool biasOptional) {
  KILN_NP_TRY(checkArity(op, 3, 1));
  for (size_t k = 0; k < 3; ++k) {
    const char *role = k == 0 ? "input" : k == 1 ? "scale" : "bias";
    if (k == 2 && biasOptional && !op.operands[2])
      continue;
    auto operand = requireOperand(op, k, role);
    if (!operand.isOk())
      return operand.status();
    KILN_NP_TRY(requireFloat(op, *operand.value(), role));
  }
  const TensorDesc &x = *op.operands[0];
  return requireResult(op, x.dtype, x.shape);
}

} // namespace

StatusOr<EmittedKernels> emitInstanceNorm(const OpDesc &op, const EmitContext &context) {
  KILN_NP_TRY(checkNormOperands(op, /*biasOptional=*/false));
  const TensorDesc &x = *op.operands[0];
  if (x.shape.size() < 2)
    return op.error("the input must be [N, C, ...], got shape " + formatShape(x.shape));
  int64_t channels = x.shape[1];
  KILN_NP_TRY(requireChannelVector(op, *op.operands[1], channels, "scale"));
  KILN_NP_TRY(requireChannelVector(op, *op.operands[2], channels, "bias"));
  RowNorm norm;
  norm.function = context.symbol + "instance_norm";
  norm.rows = x.shape[0] * channels;
  norm.size = product(std::vector<int64_t>(x.shape.begin() + 2, x.shape.end()));
  norm.scaleIndex = norm.biasIndex = "(row % " + literalInt(std::max<int64_t>(channels, 1)) + ")";
  return emitRowNorm(op, norm);
}

StatusOr<EmittedKernels> emitGroupNorm(const OpDesc &op, const EmitContext &context) {
  KILN_NP_TRY(checkNormOperands(op, /*biasOptional=*/false));
  const TensorDesc &x = *op.operands[0];
  if (x.shape.size() < 2)
    return op.error("the input must be [N, C, ...], got shape " + formatShape(x.shape));
  if (!op.hasAttr("num_groups"))
    return op.error("missing attribute 'num_groups'; the importer always sets it");
  int64_t channels = x.shape[1], groups = op.attrInt("num_groups", 0);
  if (groups < 1 || channels % groups != 0)
    return op.error("num_groups (" + std::to_string(groups) + ") must be positive and divide the " +
                    std::to_string(channels) + " channels");
  KILN_NP_TRY(requireChannelVector(op, *op.operands[1], channels, "scale"));
  KILN_NP_TRY(requireChannelVector(op, *op.operands[2], channels, "bias"));
  int64_t inner = product(std::vector<int64_t>(x.shape.begin() + 2, x.shape.end()));
  RowNorm norm;
  norm.function = context.symbol + "group_norm";
  norm.rows = x.shape[0] * groups;
  norm.size = channels / groups * inner;
  // Channel of element `col` of group row: the group's first channel plus col / inner.
  norm.scaleIndex = norm.biasIndex = "((row % " + literalInt(groups) + ") * " + literalInt(channels / groups) +
                                     " + col / " + literalInt(std::max<int64_t>(inner, 1)) + ")";
  return emitRowNorm(op, norm);
}

namespace {

/// The rows a kiln.layer_norm normalizes, its operands checked.
StatusOr<RowNorm> layerNormRows(const OpDesc &op, std::string function) {
  KILN_NP_TRY(checkNormOperands(op, /*biasOptional=*/true));
  const TensorDesc &x = *op.operands[0];
  if (!op.hasAttr("axis"))
    return op.error("missing attribute 'axis'; the importer always sets it");
  int64_t rank = static_cast<int64_t>(x.shape.size()), axis = op.attrInt("axis", 0);
  if (axis < 0 || axis >= rank)
    return op.error("axis " + std::to_string(axis) + " is out of range for input shape " + formatShape(x.shape) +
                    " (the importer normalizes it to [0, rank))");
  std::vector<int64_t> normalized(x.shape.begin() + axis, x.shape.end());
  // scale and bias broadcast (numpy, right-aligned) to the normalized axes.
  auto indexOf = [&](const TensorDesc &t, const std::string &role) -> StatusOr<std::string> {
    if (!broadcastsTo(t.shape, normalized))
      return op.error("the " + role + " shape " + formatShape(t.shape) + " does not broadcast to the normalized axes " +
                      formatShape(normalized));
    return broadcastOffset(t.shape, normalized, "col");
  };
  RowNorm norm;
  norm.function = std::move(function);
  norm.size = product(normalized);
  norm.rows = norm.size == 0 ? 0 : x.numElements() / norm.size;
  auto scaleIndex = indexOf(*op.operands[1], "scale");
  if (!scaleIndex.isOk())
    return scaleIndex.status();
  norm.scaleIndex = scaleIndex.value();
  norm.hasBias = op.operands[2].has_value();
  if (norm.hasBias) {
    auto biasIndex = indexOf(*op.operands[2], "bias");
    if (!biasIndex.isOk())
      return biasIndex.status();
    norm.biasIndex = biasIndex.value();
  }
  return norm;
}

} // namespace

StatusOr<EmittedKernels> emitLayerNorm(const OpDesc &op, const EmitContext &context) {
  auto norm = layerNormRows(op, context.symbol + "layer_norm");
  if (!norm.isOk())
    return norm.status();
  return emitRowNorm(op, norm.value());
}

StatusOr<EmittedKernels> emitNormGroup(const OpDesc &group, const EmitContext &context) {
  size_t at = group.body.size();
  for (size_t j = 0; j < group.body.size(); ++j)
    if (group.body[j].op.op == "kiln.layer_norm") {
      if (at != group.body.size())
        return group.body[j].op.error("is the second layer_norm of a norm fusion group; a group has one");
      at = j;
    }
  if (at == group.body.size())
    return group.error("internal: a norm fusion group holds one kiln.layer_norm");
  const BodyOp &ln = group.body[at];
  auto norm = layerNormRows(ln.op, context.symbol + "norm_group");
  if (!norm.isOk())
    return norm.status();
  const TensorDesc &x = *ln.op.operands[0];
  const std::string ct = computeType(x.dtype);
  for (size_t slot = 1; slot < 3; ++slot)
    if (ln.op.operands[slot] && !ln.args[slot].isInput)
      return ln.op.error("internal: a norm fusion group's layer_norm reads its scale and bias from group inputs");
  for (size_t r = 0; r < group.yields.size(); ++r) {
    const BodyRef &ref = group.yields[r];
    if (ref.isInput || group.body[ref.index].op.results[0].shape != x.shape ||
        group.body[ref.index].op.results[0].dtype != group.results[r].dtype)
      return group.error("internal: norm fusion group result " + std::to_string(r) +
                         " is not a body value of the normalized shape " + formatShape(x.shape));
  }
  for (size_t j = at + 1; j < group.body.size(); ++j)
    for (const BodyRef &ref : group.body[j].args)
      if (!ref.isInput && ref.index < at)
        return group.body[j].op.error("internal: a norm fusion group's epilogue reads a value of its prologue");

  // Row gathers in the prologue (an embedding lookup, isRowGather): element (row, col) of one
  // is element col of the table row its index at `row` names, read here where a gather step
  // wrote it out for this kernel to read back.
  struct RowGather {
    size_t body;
    uint32_t table, indices;
  };
  std::vector<RowGather> gathers;
  for (size_t j = 0; j < at; ++j) {
    const BodyOp &g = group.body[j];
    if (g.op.op != "kiln.gather")
      continue;
    if (g.args.size() != 2 || !g.args[0].isInput || !g.args[1].isInput)
      return g.op.error("internal: a norm group's gather reads its table and indices from group inputs");
    const TensorDesc &table = *group.operands[g.args[0].index], &indices = *group.operands[g.args[1].index];
    if (table.shape.size() != 2 || table.shape[1] != norm.value().size || g.op.attrInt("axis", 0) != 0 ||
        g.op.results[0].shape != x.shape || g.op.results[0].dtype != table.dtype || indices.numElements() != norm.value().rows)
      return g.op.error("internal: a norm group's gather takes whole rows of a 2-d table of the normalized length " +
                        std::to_string(norm.value().size) + ", one per normalized row");
    gathers.push_back({j, g.args[0].index, g.args[1].index});
  }
  auto gatherAt = [&](size_t j) -> const RowGather * {
    for (const RowGather &g : gathers)
      if (g.body == j)
        return &g;
    return nullptr;
  };

  // Group operands read from memory are parameters p<k>; single-element constants are baked.
  std::vector<bool> read(group.operands.size(), false);
  Status inputError = Status::ok();
  // Chunked statements (RowNormSource::Chunks) read inputs of the normalized shape from chunks.
  bool chunked = false;
  std::vector<bool> chunkRead(group.operands.size(), false);
  GroupInputSource inputOf = [&](uint32_t index, const std::string &) {
    const TensorDesc &input = *group.operands[index];
    if (!broadcastsTo(input.shape, x.shape) && inputError.isOk())
      inputError = group.error("group input " + std::to_string(index) + " of shape " + formatShape(input.shape) +
                               " does not broadcast to the normalized shape " + formatShape(x.shape));
    read[index] = true;
    std::string param = "p" + std::to_string(index);
    if (chunked && input.shape == x.shape) {
      chunkRead[index] = true;
      return "kiln_ld(" + param + "_c.v, e)";
    }
    return "kiln_ld(" + param + ", " + broadcastOffset(input.shape, x.shape, "idx") + ")";
  };
  auto statements = [&](size_t from, size_t to) -> StatusOr<std::string> {
    std::string text;
    for (size_t j = from; j < to; ++j) {
      if (const RowGather *g = gatherAt(j)) {
        read[g->table] = read[g->indices] = true;
        std::string table = "p" + std::to_string(g->table), v = "v" + std::to_string(j);
        std::string storage = storageType(group.body[j].op.results[0].dtype);
        text += storage + " " + v + "[1];\n        ";
        if (chunked) {
          text += v + "[0] = " + table + "_g.v[e];\n        ";
          continue;
        }
        text += "{\n          const kiln_i64 gi = kiln_np_gather_row((kiln_i64)p" + std::to_string(g->indices) +
                "[idx / kSize], " + literalInt(group.operands[g->table]->shape[0]) + ");\n          " + v +
                "[0] = gi < 0 ? (" + storage + ")0.0f : " + table + "[gi * kSize + idx % kSize];\n        }\n        ";
        continue;
      }
      auto op = bodyOpStatements(group, j, inputOf);
      if (!op.isOk())
        return op.status();
      text += op.value() + "\n        ";
    }
    return text;
  };
  auto stores = [&](size_t from, size_t to, std::vector<RowNormSource::Chunks::Array> *arrays = nullptr) {
    std::string text;
    for (size_t r = 0; r < group.yields.size(); ++r)
      if (group.yields[r].index >= from && group.yields[r].index < to) {
        std::string result = "y" + std::to_string(r);
        text += result + (arrays ? "_c.v[e]" : "[idx]") + " = v" + std::to_string(group.yields[r].index) +
                "[0];\n        ";
        if (arrays)
          arrays->push_back({result, storageType(group.results[r].dtype)});
      }
    return text;
  };
  auto prologue = statements(0, at);
  if (!prologue.isOk())
    return prologue.status();
  const BodyRef &input = ln.args[0];
  if (input.isInput && group.operands[input.index]->shape != x.shape)
    return group.error("internal: the layer_norm's input is a group input of another shape");
  auto inputValue = [&] {
    std::string xv = input.isInput ? inputOf(input.index, ct) : "kiln_ld(v" + std::to_string(input.index) + ", 0)";
    return "const " + ct + " xv = (" + ct + ")" + xv + ";";
  };
  std::string xv = inputValue();
  // The layer_norm's value: what the standalone op stores, in the body's type.
  const std::string lnStorage = storageType(ln.op.results[0].dtype), lnValue = "v" + std::to_string(at);
  std::string epilogueText = lnStorage + " " + lnValue + "[1];\n        {\n          " + lnStorage + " *po = " +
                             lnValue + ";\n          const kiln_i64 oo = 0;\n          " +
                             elementwise::storeValue(ln.op.results[0].dtype, "nv") + "\n        }\n        ";
  auto epilogue = statements(at + 1, group.body.size());
  if (!epilogue.isOk())
    return epilogue.status();
  if (!inputError.isOk())
    return inputError;
  read[ln.args[1].index] = true;
  if (norm.value().hasBias)
    read[ln.args[2].index] = true;

  RowNormSource source;
  for (size_t k = 0; k < group.operands.size(); ++k)
    if (read[k]) {
      source.params += "const " + storageType(group.operands[k]->dtype) + " *__restrict__ p" + std::to_string(k) + ", ";
      source.args.push_back(KernelArg::operand(static_cast<uint32_t>(k)));
    }
  for (size_t r = 0; r < group.results.size(); ++r) {
    source.params += std::string(r ? ", " : "") + storageType(group.results[r].dtype) + " *__restrict__ y" +
                     std::to_string(r);
    source.args.push_back(KernelArg::result(static_cast<uint32_t>(r)));
  }
  source.scale = "p" + std::to_string(ln.args[1].index);
  source.bias = norm.value().hasBias ? "p" + std::to_string(ln.args[2].index) : "";
  source.scaleType = storageType(group.operands[ln.args[1].index]->dtype);
  if (norm.value().hasBias)
    source.biasType = storageType(group.operands[ln.args[2].index]->dtype);
  source.load = prologue.value() + stores(0, at) + xv;
  source.reload = prologue.value() + xv;
  source.store = epilogueText + epilogue.value() + stores(at, group.body.size());

  // The same statements on chunks.
  chunked = true;
  RowNormSource::Chunks chunks;
  auto chunkedPrologue = statements(0, at);
  auto chunkedEpilogue = statements(at + 1, group.body.size());
  if (!chunkedPrologue.isOk() || !chunkedEpilogue.isOk())
    return group.error("internal: a norm group's statements could be written once but not in chunks");
  chunks.load = chunkedPrologue.value() + stores(0, at, &chunks.loadPassStores) + inputValue();
  chunks.store = epilogueText + chunkedEpilogue.value() + stores(at, group.body.size(), &chunks.normPassStores);
  for (size_t k = 0; k < group.operands.size(); ++k)
    if (chunkRead[k])
      chunks.loads.push_back({"p" + std::to_string(k), storageType(group.operands[k]->dtype)});
  for (const RowGather &g : gathers)
    chunks.gatheredLoads.push_back({"p" + std::to_string(g.table), storageType(group.operands[g.table]->dtype),
                                    "p" + std::to_string(g.indices), group.operands[g.table]->shape[0]});
  source.chunks = std::move(chunks);
  return emitRowNorm(ln.op, norm.value(), std::move(source));
}

} // namespace kiln::codegen::normpool
