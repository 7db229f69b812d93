//===- ExternalData.h - Safe loading of ONNX external tensor data ---------===//
//
// ONNX models larger than 2 GiB keep their initializers outside the protobuf: a TensorProto with
// data_location == EXTERNAL carries key/value pairs ("location", "offset", "length", "checksum")
// naming a file relative to the model's directory. Those strings come from an untrusted model, so
// everything here is checked before a single byte of the data buffer is allocated:
//
//   * the location must be a non-empty relative path with no NUL bytes or backslashes whose
//     lexically normalised form stays beneath the model directory;
//   * no component between the model directory and the file may be a symbolic link, and the file
//     must be a regular file with exactly one hard link -- the walk uses openat(O_NOFOLLOW) one
//     component at a time, so a concurrent rename cannot redirect it;
//   * offset and length must be plain non-negative decimal integers, the range must lie inside
//     the file, and the length must equal the byte size implied by the tensor's dims and type.
//
// The model directory itself is trusted (it is what the user pointed Kiln at) and may be reached
// through symbolic links. The optional "checksum" key is accepted but not verified.
//
// Every failure is an llvm::Error whose message names the tensor and the location and says what
// to do; the process is never aborted on bad input.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_FRONTEND_EXTERNALDATA_H
#define KILN_FRONTEND_EXTERNALDATA_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace onnx {
class TensorProto;
} // namespace onnx

namespace kiln::frontend {

/// Size in bytes of one element of ONNX data type `dataType` (a TensorProto::DataType value), or 0
/// if the type has no fixed byte size (STRING, UNDEFINED, the 4-bit types, unknown values).
size_t onnxElementByteSize(int32_t dataType);

/// Name of an ONNX data type for messages ("FLOAT", "FLOAT8E4M3FN", "unknown").
const char *onnxTypeName(int32_t dataType);

/// Number of bytes a tensor with `dims` and element type `dataType` must hold: the product of the
/// dims times the element size. Fails -- never overflows silently -- on a negative dim, a product
/// that overflows int64 / size_t, or an element type without a fixed size. The error text names
/// `tensorName`. A zero dim makes the result 0 even if the other dims are huge.
llvm::Expected<uint64_t> expectedTensorBytes(llvm::StringRef tensorName,
                                             llvm::ArrayRef<int64_t> dims, int32_t dataType);

/// Reads the external data of `tensor` (data_location == EXTERNAL) whose model file lives in
/// directory `modelDir` (an empty `modelDir` means the current directory). On success returns
/// exactly expectedTensorBytes(tensor.dims(), tensor.data_type()) bytes.
llvm::Expected<std::vector<char>> readExternalData(llvm::StringRef modelDir,
                                                   const onnx::TensorProto &tensor);

} // namespace kiln::frontend

#endif // KILN_FRONTEND_EXTERNALDATA_H
