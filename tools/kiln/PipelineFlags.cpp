//===- PipelineFlags.cpp - the optimization pipeline's options ------------===//

#include "PipelineFlags.h"
#include "IRDump.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

namespace llvm::cl {

bool parser<kiln::cli::PrecisionFlag>::parse(Option &option, StringRef, StringRef arg,
                                             kiln::cli::PrecisionFlag &value) {
  if (arg == "auto") {
    value.fixed.reset();
    return false;
  }
  if (arg == "fp8" || arg == "int8") {
    value.fixed = kiln::Precision::BF16;
    value.quantization = arg.str();
    return false;
  }
  if (std::optional<kiln::Precision> precision = kiln::parsePrecision(arg)) {
    value.fixed = *precision;
    value.quantization.clear();
    return false;
  }
  return option.error("'" + arg + "' is not a precision; use fp32, tf32, bf16, fp16, fp8, int8 or (kiln compile) "
                      "auto");
}

bool parser<kiln::PrecisionOverride>::parse(Option &option, StringRef, StringRef arg, kiln::PrecisionOverride &value) {
  Expected<kiln::PrecisionOverride> parsed = kiln::parsePrecisionOverride(arg);
  if (!parsed)
    return option.error(toString(parsed.takeError()));
  value = std::move(*parsed);
  return false;
}

} // namespace llvm::cl

namespace kiln::cli {

namespace cl = llvm::cl;

bool OpTargetParser::parse(cl::Option &option, llvm::StringRef, llvm::StringRef arg, std::string &value) {
  if (arg.empty())
    return option.error("empty name; give ONNX node names, ONNX op types or kiln op names, comma-separated");
  value = arg.str();
  return false;
}

PipelineFlags::PipelineFlags(cl::SubCommand &sub, Categories &categories)
    : precision("precision", cl::value_desc("fp32|tf32|bf16|fp16|auto|fp8|int8"), cl::init(PrecisionFlag{Precision::FP32}),
                cl::desc("fp32 (default): strict IEEE fp32 for conv and matmul;\n"
                         "tf32: TF32 tensor-core math for fp32 conv and matmul;\n"
                         "bf16, fp16: conv, matmul, gemm and einsum in half precision with fp32\n"
                         "accumulation; ops whose results can outgrow their inputs stay fp32;\n"
                         "auto (kiln compile only, with --max-error and --calibration): bf16 or\n"
                         "fp16 with the fewest nodes in strict fp32 that keep the output error on\n"
                         "the calibration inputs within the budget;\n"
                         "fp8 (with --calibration calib.json): bf16, with linear\n"
                         "layers (matmul/gemm of a constant weight) as FP8 E4M3 cuBLASLt GEMMs\n"
                         "(weights per tensor) and channels-last convolutions (one group, input\n"
                         "channels a multiple of 32, output channels of 16) as FP8 cuDNN\n"
                         "convolutions (weights per output channel), activations and residuals\n"
                         "scaled per tensor from the calibration file; the first layer (reading\n"
                         "the network input), attention and depthwise convolutions stay bf16;\n"
                         "int8 (with --calibration calib.json): bf16, with those convolutions as\n"
                         "INT8 cuDNN convolutions, activations and residuals per tensor, weights\n"
                         "per output channel; linear layers, depthwise convolutions and\n"
                         "attention stay bf16. Both keep 8 bits between consecutive 8-bit\n"
                         "convolutions"),
                cl::sub(sub), cl::cat(categories.optimization)),
      strictFp32("strict-fp32",
                 cl::desc("fp32 ops that remain in a tf32, bf16 or fp16 plan use strict IEEE fp32,\n"
                          "not TF32 tensor cores"),
                 cl::sub(sub), cl::cat(categories.optimization)),
      keepFp32("keep-fp32", cl::value_desc("name|optype"), cl::CommaSeparated,
               cl::desc("Ops that stay fp32, by ONNX node name, ONNX op type (Softmax) or kiln op\n"
                        "name (kiln.softmax); comma-separated or repeated"),
               cl::sub(sub), cl::cat(categories.optimization)),
      keepUnquantized("keep-unquantized", cl::value_desc("name|optype"), cl::CommaSeparated,
                      cl::desc("--precision fp8, int8: ops that stay in bf16 instead of 8 bits, by ONNX\n"
                               "node name, ONNX op type (Conv) or kiln op name (kiln.conv);\n"
                               "comma-separated or repeated"),
                      cl::sub(sub), cl::cat(categories.optimization)),
      keepFirstLayer("keep-first-layer",
                     cl::desc("--precision fp8, int8: the first layers (convs and linear layers reading\n"
                              "the network input) stay bf16; =false quantizes them (default: on for fp8,\n"
                              "off for int8)"),
                     cl::sub(sub), cl::cat(categories.optimization)),
      keepLastLayer("keep-last-layer",
                    cl::desc("--precision fp8, int8: the last layers (whose results no other conv or\n"
                             "linear layer reads: a classifier) stay bf16 (default: off)"),
                    cl::sub(sub), cl::cat(categories.optimization)),
      forcePrecision("force-precision", cl::value_desc("name=precision"), cl::CommaSeparated,
                     cl::desc("Run ops in the given precision (fp32, tf32, bf16, fp16), named as for\n"
                              "--keep-fp32, e.g. conv1=fp32,MatMul=bf16; applied after --keep-fp32,\n"
                              "the last one for a name wins; comma-separated or repeated"),
                     cl::sub(sub), cl::cat(categories.optimization)),
      noFold("no-fold", cl::desc("Keep ops whose operands are all constants, and BatchNorms (no folding)"), cl::sub(sub),
             cl::cat(categories.optimization)),
      noFusion("no-fusion",
               cl::desc("Run every op as its own step: no kiln.fusion_group regions (otherwise a chain\n"
                        "of elementwise ops runs as one generated kernel computing in fp32, a linear\n"
                        "layer's bias, residual and ReLU as its cuBLASLt epilogue, and attention's\n"
                        "Q/K/V projections as one GEMM with transposes folded into its views)"),
               cl::sub(sub), cl::cat(categories.optimization)),
      noFusedAttention("no-fused-attention",
                       cl::desc("Keep attention as its matmuls and softmax (bf16/fp16 plans otherwise run\n"
                                "it as one fused cuDNN attention step)"),
                       cl::sub(sub), cl::cat(categories.optimization)),
      exactGelu("exact-gelu",
                cl::desc("Keep erf GELUs exact in bf16 plans (otherwise an erf GELU after a linear\n"
                         "layer runs as the tanh GELU of its cuBLASLt epilogue, at most 4.7e-4 apart;\n"
                         "fp16 and fp32 plans always keep erf)"),
                cl::sub(sub), cl::cat(categories.optimization)),
      layout("layout", cl::init(Layout::Auto),
             cl::desc("Which 2-d convs run channels last (NHWC), with their pools and the\n"
                      "elementwise ops between them; transposes remain at the boundaries"),
             cl::values(clEnumValN(Layout::Auto, "auto", "bf16 and fp16 convs (tensor cores; default)"),
                        clEnumValN(Layout::NCHW, "nchw", "none: every conv channels first"),
                        clEnumValN(Layout::NHWC, "nhwc", "every 2-d conv")),
             cl::sub(sub), cl::cat(categories.optimization)),
      calibration("calibration", cl::value_desc("dir|file"),
                  cl::desc("--precision auto (kiln compile): the calibration inputs, <input name>.npy\n"
                           "files in <dir> (one input) or in each of its subdirectories (one each);\n"
                           "--precision fp8, int8: the ranges `kiln calibrate` wrote (calib.json)"),
                  cl::sub(sub), cl::cat(categories.optimization)),
      printIRAfterAll("print-ir-after-all", cl::desc("Print the module after every pass to stderr (weights elided)"),
                      cl::sub(sub), cl::cat(categories.irPrinting)),
      dumpIRDir("dump-ir", cl::value_desc("dir"),
                cl::desc("Write the module into <dir> before the passes (00-input.mlir) and after\n"
                         "each one (01-<pass>.mlir, ...), weights elided, for diffing"),
                cl::sub(sub), cl::cat(categories.irPrinting)) {}

std::vector<std::string> precisionOverrideList(const PipelineOptions &options) {
  std::vector<std::string> out;
  for (const std::string &target : options.keepFp32)
    out.push_back("--keep-fp32 " + target);
  for (const PrecisionOverride &o : options.forcePrecision)
    out.push_back("--force-precision " + o.target + "=" + precisionName(o.precision).str());
  if (options.quantization) {
    for (const std::string &target : options.quantization->keep)
      out.push_back("--keep-unquantized " + target);
    auto flag = [&](const char *name, std::optional<bool> value) {
      if (value)
        out.push_back(std::string(name) + "=" + (*value ? "true" : "false"));
    };
    flag("--keep-first-layer", options.quantization->keepFirst);
    flag("--keep-last-layer", options.quantization->keepLast);
  }
  return out;
}

PipelineOptions PipelineFlags::pipelineOptions() const {
  PipelineOptions options;
  options.precision = precision.fixed.value_or(Precision::FP32);
  options.strictFp32 = strictFp32;
  options.keepFp32.assign(keepFp32.begin(), keepFp32.end());
  options.forcePrecision.assign(forcePrecision.begin(), forcePrecision.end());
  options.foldConstants = !noFold;
  options.fuse = !noFusion;
  options.fuseAttention = !noFusedAttention;
  options.exactGelu = exactGelu;
  options.layout = layout;
  if (!precision.quantization.empty()) {
    options.quantization = PipelineOptions::Quantization{precision.quantization, calibration, "",
                                                         {keepUnquantized.begin(), keepUnquantized.end()}};
    if (keepFirstLayer.getNumOccurrences())
      options.quantization->keepFirst = keepFirstLayer.getValue();
    if (keepLastLayer.getNumOccurrences())
      options.quantization->keepLast = keepLastLayer.getValue();
  }
  return options;
}

std::optional<std::string> PipelineFlags::calibrationUsageError() const {
  const std::string &q = precision.quantization;
  if (!q.empty() && (calibration.empty() || llvm::sys::fs::is_directory(calibration)))
    return "--precision " + q + " needs --calibration calib.json, the ranges `kiln calibrate MODEL "
                                "--calibration DIR -o calib.json` measures on calibration inputs";
  if (q.empty() && keepUnquantized.getNumOccurrences())
    return std::string("--keep-unquantized goes with --precision fp8 or int8 (it names ops that stay out of 8 bits)");
  if (q.empty() && (keepFirstLayer.getNumOccurrences() || keepLastLayer.getNumOccurrences()))
    return std::string("--keep-first-layer and --keep-last-layer go with --precision fp8 or int8");
  if (precision.fixed && q.empty() && !calibration.empty())
    return std::string("--calibration goes with --precision auto (a directory of inputs) or fp8, int8 (a calibration "
                       "file)");
  return std::nullopt;
}

bool PipelineFlags::optimizationRequested() const {
  return precision.getNumOccurrences() || strictFp32.getNumOccurrences() || keepFp32.getNumOccurrences() ||
         forcePrecision.getNumOccurrences() || keepUnquantized.getNumOccurrences() ||
         keepFirstLayer.getNumOccurrences() || keepLastLayer.getNumOccurrences() || layout.getNumOccurrences();
}

mlir::LogicalResult PipelineFlags::runPasses(mlir::ModuleOp module,
                                             llvm::function_ref<void(mlir::OpPassManager &)> addPasses) const {
  mlir::MLIRContext *context = module.getContext();
  mlir::PassManager pm(context, mlir::ModuleOp::getOperationName());
  addPasses(pm);
  // The module is printed from pass hooks, so every pass must run on this thread (as mlir-opt
  // does for its IR printing).
  if (printIRAfterAll || !dumpIRDir.empty())
    context->disableMultithreading();
  if (printIRAfterAll)
    pm.enableIRPrinting([](mlir::Pass *, mlir::Operation *) { return false; },
                        [](mlir::Pass *, mlir::Operation *) { return true; }, /*printModuleScope=*/true,
                        /*printAfterOnlyOnChange=*/false, /*printAfterOnlyOnFailure=*/false, llvm::errs(),
                        passDumpPrintingFlags());
  mlir::Location unknown = mlir::UnknownLoc::get(context);
  IRDumpInstrumentation *dump = nullptr;
  if (!dumpIRDir.empty()) {
    auto instrumentation = std::make_unique<IRDumpInstrumentation>(dumpIRDir);
    if (llvm::Error error = instrumentation->writeInput(module))
      return mlir::emitError(unknown) << llvm::toString(std::move(error));
    dump = instrumentation.get();
    pm.addInstrumentation(std::move(instrumentation));
  }

  // A pass may fail without saying why; the user must still read an error.
  bool errorReported = false;
  mlir::LogicalResult result = mlir::success();
  {
    mlir::ScopedDiagnosticHandler watch(context, [&](mlir::Diagnostic &diagnostic) {
      errorReported |= diagnostic.getSeverity() == mlir::DiagnosticSeverity::Error;
      return mlir::failure(); // on to the handler that prints it
    });
    result = pm.run(module);
  }
  if (dump)
    if (llvm::Error error = dump->takeError())
      return mlir::emitError(unknown) << llvm::toString(std::move(error));
  if (mlir::failed(result) && !errorReported)
    return mlir::emitError(unknown) << "the optimization passes failed without a diagnostic";
  return result;
}

mlir::LogicalResult PipelineFlags::runOptimizationPipeline(mlir::ModuleOp module) const {
  PipelineOptions options = pipelineOptions();
  return runPasses(module, [&](mlir::OpPassManager &pm) { buildOptimizationPipeline(pm, options); });
}

} // namespace kiln::cli
