//===- OnnxImporter.cpp - ONNX ModelProto to the kiln dialect --------------===//

#include "frontend/OnnxImporter.h"
#include "frontend/GraphImporter.h"

#include "ir/KilnDialect.h"

#include "onnx/onnx.pb.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <google/protobuf/io/coded_stream.h>

namespace kiln::frontend {

void registerImportDialects(mlir::MLIRContext &context) {
  context.loadDialect<KilnDialect, mlir::func::FuncDialect>();
}

llvm::Error parseShapeOption(llvm::StringRef text, ImportOptions &options) {
  auto [name, dims] = text.rsplit('=');
  auto bad = [&](const llvm::Twine &why) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "--shape '" + text + "': " + why +
                                       " (expected name=DxDx..., e.g. input=1x3x224x224)");
  };
  if (name.empty() || dims.empty() || !text.contains('='))
    return bad("missing name or dims");
  std::vector<int64_t> shape;
  llvm::SmallVector<llvm::StringRef> parts;
  dims.split(parts, 'x');
  for (llvm::StringRef p : parts) {
    int64_t d;
    if (p.getAsInteger(10, d) || d < 0)
      return bad("'" + p + "' is not a non-negative integer");
    shape.push_back(d);
  }
  if (options.inputShapes.count(name.str()))
    return bad("input given twice");
  options.inputShapes[name.str()] = std::move(shape);
  return llvm::Error::success();
}

llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
importOnnxBytes(mlir::MLIRContext &context, llvm::StringRef bytes, llvm::StringRef modelDir,
                llvm::StringRef modelName, const ImportOptions &options) {
  registerImportDialects(context);
  onnx::ModelProto model;
  google::protobuf::io::CodedInputStream stream(reinterpret_cast<const uint8_t *>(bytes.data()),
                                                static_cast<int>(bytes.size()));
  stream.SetTotalBytesLimit(INT32_MAX);
  if (bytes.size() > (size_t)INT32_MAX || !model.ParseFromCodedStream(&stream) ||
      !stream.ConsumedEntireMessage())
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "'" + modelName + "' is not a valid ONNX model: the protobuf does not parse (the file is "
        "truncated, corrupted or not an ONNX ModelProto)");
  if (!model.has_graph())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "'" + modelName + "' has no graph; is it an ONNX model?");
  GraphImporter importer(context, model, modelDir, modelName, options);
  return importer.run();
}

llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
importOnnxFile(mlir::MLIRContext &context, llvm::StringRef path, const ImportOptions &options) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer)
    return llvm::createStringError(buffer.getError(),
                                   "cannot read '" + path + "': " + buffer.getError().message());
  llvm::StringRef dir = llvm::sys::path::parent_path(path);
  return importOnnxBytes(context, (*buffer)->getBuffer(), dir.empty() ? "." : dir,
                         llvm::sys::path::filename(path), options);
}

} // namespace kiln::frontend
