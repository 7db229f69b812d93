//===- Pipelines.cpp - the optimization pipeline, built in one place -------===//

#include "passes/Pipelines.h"

#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringSwitch.h"

namespace kiln {

llvm::StringRef precisionName(Precision precision) {
  switch (precision) {
  case Precision::FP32: return "fp32";
  case Precision::TF32: return "tf32";
  case Precision::BF16: return "bf16";
  case Precision::FP16: return "fp16";
  }
  return "";
}

std::optional<Precision> parsePrecision(llvm::StringRef text) {
  return llvm::StringSwitch<std::optional<Precision>>(text)
      .Case("fp32", Precision::FP32)
      .Case("tf32", Precision::TF32)
      .Case("bf16", Precision::BF16)
      .Case("fp16", Precision::FP16)
      .Default(std::nullopt);
}

llvm::StringRef layoutName(Layout layout) {
  switch (layout) {
  case Layout::Auto: return "auto";
  case Layout::NCHW: return "nchw";
  case Layout::NHWC: return "nhwc";
  }
  return "";
}

std::optional<Layout> parseLayout(llvm::StringRef text) {
  return llvm::StringSwitch<std::optional<Layout>>(text)
      .Case("auto", Layout::Auto)
      .Case("nchw", Layout::NCHW)
      .Case("nhwc", Layout::NHWC)
      .Default(std::nullopt);
}

llvm::Expected<PrecisionOverride> parsePrecisionOverride(llvm::StringRef text) {
  auto [target, value] = text.rsplit('=');
  std::optional<Precision> precision = parsePrecision(value);
  if (target.empty() || value.empty() || target == text || !precision)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "'" + text + "' is not NAME=PRECISION with PRECISION one of fp32, tf32, bf16, fp16 "
                                       "(NAME: an ONNX node name, ONNX op type or kiln op name)");
  return PrecisionOverride{target.str(), *precision};
}

std::string planPrecisionName(const PipelineOptions &options) {
  return options.quantization ? options.quantization->type : precisionName(options.precision).str();
}

void buildOptimizationPipeline(mlir::OpPassManager &pm, const PipelineOptions &options) {
  mlir::OpPassManager &func = pm.nest<mlir::func::FuncOp>();
  // BatchNorms fold into their convs on the fp32 weights, before the precision policy rounds
  // them (with constant folding: `--no-fold` keeps both).
  if (options.foldConstants) {
    func.addPass(createFoldConstants());
    func.addPass(createFoldBatchNorm());
  }
  MixedPrecisionOptions precision;
  precision.precision = precisionName(options.precision).str();
  precision.keepFp32.assign(options.keepFp32.begin(), options.keepFp32.end());
  for (const PrecisionOverride &o : options.forcePrecision)
    precision.forcePrecision.push_back(o.target + "=" + precisionName(o.precision).str());
  func.addPass(createMixedPrecision(precision));
  // Casts of weights become constants, cast chains cancel (kiln.cast's folder), duplicate
  // constants and casts merge.
  func.addPass(mlir::createCanonicalizerPass());
  func.addPass(mlir::createCSEPass());
  // What CSE leaves because each copy is named after its own ONNX value (an exporter's
  // per-layer attention mask).
  func.addPass(createMergeEquivalentOps());
  // On the settled types (auto picks the half-precision convs), before anything groups ops:
  // then canonicalize turns the transposes that move only unit axes into reshapes (views).
  if (options.layout != Layout::NCHW) {
    ConvertLayoutOptions layout;
    layout.layout = layoutName(options.layout).str();
    func.addPass(createConvertLayout(layout));
    func.addPass(mlir::createCanonicalizerPass());
    func.addPass(mlir::createCSEPass());
    func.addPass(createSpaceToDepthConvs());
  }
  // Before grouping, so the mask and scale ops attention absorbs are not grouped first.
  bool half = options.precision == Precision::BF16 || options.precision == Precision::FP16;
  if (options.fuseAttention && half) {
    func.addPass(createFuseAttention());
    if (options.fuse)
      func.addPass(createPackAttentionProjections());
  }
  // Last: groups are formed on the types and casts the passes above settled.
  if (options.fuse) {
    func.addPass(createNormalizeLinearLayers());
    if (options.fuseAttention && half)
      func.addPass(createFoldTransposesIntoAttention());
  }
  // On the linear layers as the passes above left them (Gemms as matmuls, Q/K/V packed), before
  // their groups form and take the dequantizations in.
  if (options.quantization) {
    InsertQuantizationOptions insert;
    insert.calibration = options.quantization->calibrationFile;
    insert.type = options.quantization->type;
    insert.method = options.quantization->method;
    insert.keep.assign(options.quantization->keep.begin(), options.quantization->keep.end());
    // What codegen runs in 8 bits. Convolutions in both: cuDNN's INT8 and FP8 convolutions
    // scale per output channel in their epilogue. FP8 also linear layers, whose weights get
    // one scale (cuBLASLt's FP8 GEMMs take one per operand); INT8 GEMMs are not implemented.
    bool fp8 = options.quantization->type == "fp8";
    insert.quantizeOps.push_back("kiln.conv");
    if (fp8) {
      insert.quantizeOps.push_back("kiln.matmul");
      insert.perTensorWeightOps.push_back("kiln.matmul");
    }
    // The first layer sees the raw data: quantizing ViT-B/16's patch embedding (the image) to
    // E4M3 moved its output from cosine 0.9952 to 0.9947 against fp32 (H100, batch 64). INT8
    // keeps 7 bits of the image where E4M3 keeps 3 of each value: int8 plans quantize a first
    // conv that cuDNN's INT8 kernels run well (ResNet-50's 16-channel stem is not one:
    // whyNoQuantizedConv keeps it bf16).
    insert.keepFirst = options.quantization->keepFirst.value_or(fp8);
    insert.keepLast = options.quantization->keepLast.value_or(false);
    // 8-bit residuals: a ResNet block's conv3 graph reads the 8-bit block input (scaled in the
    // graph) and writes only 8 bits, where a bf16 residual made it read 2 bytes a value and
    // write both the bf16 value and its quantization for the next block.
    insert.residuals = true;
    func.addPass(createInsertQuantization(insert));
    FoldQuantizationOptions fold;
    fold.dropUnfoldable = true;
    func.addPass(createFoldQuantization(fold));
  } else {
    // An imported QDQ model's convs that kept int8 weights become INT8 convolutions (a module
    // without Q/DQ ops is left as it is).
    func.addPass(createFoldQuantization());
    // What an imported 8-bit weight left for run time once its op settled on a float kernel (a
    // precision override on a QDQ conv: the weight's dequantization, cast and layout
    // transpose) folds into the float weight it is.
    if (options.foldConstants)
      func.addPass(createFoldConstants());
  }
  if (options.fuse) {
    FormFusionGroupsOptions groups;
    groups.approximateGelu = options.precision == Precision::BF16 && !options.exactGelu;
    func.addPass(createFormFusionGroups(groups));
  }
}

namespace {

/// PipelineOptions as MLIR pass-pipeline options, for `kiln-opt --kiln-pipeline=...`.
struct KilnPipelineOptions : mlir::PassPipelineOptions<KilnPipelineOptions> {
  Option<std::string> precision{*this, "precision", llvm::cl::desc("fp32, tf32, bf16 or fp16"),
                                llvm::cl::init("fp32")};
  ListOption<std::string> keepFp32{*this, "keep-fp32",
                                   llvm::cl::desc("ONNX node names, ONNX op types or kiln op names kept in fp32")};
  ListOption<std::string> forcePrecision{*this, "force-precision",
                                         llvm::cl::desc("NAME=PRECISION overrides of the precision policy")};
  Option<bool> fold{*this, "fold", llvm::cl::desc("Fold ops whose operands are all constants, and BatchNorms"),
                    llvm::cl::init(true)};
  Option<bool> fuse{*this, "fuse", llvm::cl::desc("Group elementwise chains into kiln.fusion_group regions"),
                    llvm::cl::init(true)};
  Option<bool> fuseAttention{*this, "fuse-attention",
                             llvm::cl::desc("Replace scaled dot-product attention with kiln.attention (bf16/fp16)"),
                             llvm::cl::init(true)};
  Option<bool> exactGelu{*this, "exact-gelu",
                         llvm::cl::desc("Keep erf GELUs exact in bf16 (no tanh GELU epilogue)"),
                         llvm::cl::init(false)};
  Option<std::string> layout{*this, "layout",
                             llvm::cl::desc("Channels-last convs: auto (bf16/fp16 convs), nchw (none) or nhwc (all 2-d)"),
                             llvm::cl::init("auto")};
};

/// The options' text as PipelineOptions; an error naming a bad value.
llvm::Expected<PipelineOptions> toPipelineOptions(const KilnPipelineOptions &o) {
  PipelineOptions options;
  std::optional<Precision> precision = parsePrecision(o.precision);
  if (!precision)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "kiln-pipeline: precision '" + o.precision + "' is not one of fp32, tf32, bf16, fp16");
  options.precision = *precision;
  options.keepFp32.assign(o.keepFp32.begin(), o.keepFp32.end());
  for (const std::string &text : o.forcePrecision) {
    auto parsed = parsePrecisionOverride(text);
    if (!parsed)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "kiln-pipeline: force-precision " + llvm::toString(parsed.takeError()));
    options.forcePrecision.push_back(*parsed);
  }
  options.foldConstants = o.fold;
  options.fuse = o.fuse;
  options.fuseAttention = o.fuseAttention;
  options.exactGelu = o.exactGelu;
  std::optional<Layout> layout = parseLayout(o.layout);
  if (!layout)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "kiln-pipeline: layout '" + o.layout + "' is not one of auto, nchw, nhwc");
  options.layout = *layout;
  return options;
}

} // namespace

void registerKilnPipelines() {
  mlir::registerPassPipeline(
      "kiln-pipeline", "The whole kiln optimization pipeline, as `kiln compile` runs it",
      [](mlir::OpPassManager &pm, llvm::StringRef text,
         llvm::function_ref<mlir::LogicalResult(const llvm::Twine &)> errorHandler) -> mlir::LogicalResult {
        KilnPipelineOptions parsed;
        if (mlir::failed(parsed.parseFromString(text)))
          return mlir::failure();
        auto options = toPipelineOptions(parsed);
        if (!options)
          return errorHandler(llvm::toString(options.takeError()));
        buildOptimizationPipeline(pm, *options);
        return mlir::success();
      },
      [](llvm::function_ref<void(const mlir::detail::PassOptions &)> optHandler) {
        optHandler(KilnPipelineOptions());
      });
}

} // namespace kiln
