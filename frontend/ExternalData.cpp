//===- ExternalData.cpp - Safe loading of ONNX external tensor data -------===//
//
// See ExternalData.h for the threat model. The order of work in readExternalData is:
//   1. the tensor says EXTERNAL; external_data keys are well formed (no duplicate known keys);
//   2. the location is checked lexically (empty, NUL, backslash, absolute, '..' escaping);
//   3. offset/length parse as plain non-negative int64 decimals; offset + length does not
//      overflow; length equals the byte size implied by dims x element size;
//   4. the file is reached with openat(O_NOFOLLOW) one component at a time from an fd of the
//      model directory, so no symlink and no concurrent rename can redirect the walk; the opened
//      fd must be a regular file with exactly one hard link;
//   5. the requested range must lie inside the file (size from fstat of the opened fd);
//   6. only then is the buffer allocated and filled with pread.
//
//===----------------------------------------------------------------------===//

#include "frontend/ExternalData.h"

#include "onnx/onnx.pb.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kiln::frontend {

namespace {

constexpr uint64_t kInt64Max = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());

/// Owns a file descriptor; closes it on destruction.
class UniqueFd {
public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(const UniqueFd &) = delete;
  UniqueFd &operator=(const UniqueFd &) = delete;
  UniqueFd(UniqueFd &&other) noexcept : fd_(other.release()) {}
  UniqueFd &operator=(UniqueFd &&other) noexcept {
    if (this != &other)
      reset(other.release());
    return *this;
  }
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset(int fd = -1) {
    if (fd_ >= 0)
      ::close(fd_);
    fd_ = fd;
  }

private:
  int fd_ = -1;
};

/// Quotes `s` for an error message, escaping non-printable bytes (a hostile location may carry
/// control characters or NUL bytes).
std::string quoted(llvm::StringRef s) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << '\'';
  llvm::printEscapedString(s, os);
  os << '\'';
  return out;
}

std::string tensorLabel(llvm::StringRef name) {
  return "tensor " + (name.empty() ? std::string("<unnamed>") : quoted(name));
}

llvm::Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

std::string errnoText(int err) { return std::strerror(err); }


std::string formatDims(llvm::ArrayRef<int64_t> dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i)
      out += ", ";
    out += std::to_string(dims[i]);
  }
  return out + "]";
}

/// Result of parsing an "offset"/"length" value.
enum class ParseStatus { Ok, Empty, Negative, NotDecimal, TooLarge };

/// Parses a plain decimal integer in [0, INT64_MAX]: ASCII digits only, no sign, no whitespace,
/// no exponent, no hex prefix.
ParseStatus parseNonNegativeInt64(llvm::StringRef text, uint64_t &value) {
  value = 0;
  if (text.empty())
    return ParseStatus::Empty;
  if (text.front() == '-')
    return text.size() > 1 && llvm::all_of(text.drop_front(), llvm::isDigit)
               ? ParseStatus::Negative
               : ParseStatus::NotDecimal;
  for (char c : text) {
    if (!llvm::isDigit(c))
      return ParseStatus::NotDecimal;
  }
  for (char c : text) {
    uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value > (kInt64Max - digit) / 10)
      return ParseStatus::TooLarge;
    value = value * 10 + digit;
  }
  return ParseStatus::Ok;
}

/// Checks the location lexically and splits it into normalised components (no "", ".", "..").
llvm::Error normaliseLocation(const std::string &prefix, llvm::StringRef location,
                              llvm::SmallVectorImpl<llvm::StringRef> &components) {
  constexpr const char *kFix = "; external data must be a relative path beneath the model's directory";
  if (location.contains('\0'))
    return makeError(prefix + " contains a NUL byte; a file path cannot contain NUL bytes, so "
                              "the model is malformed or hostile");
  if (location.contains('\\'))
    return makeError(prefix + " contains a backslash; write directory separators as '/' "
                              "(external data paths must be portable relative paths)");
  if (location.starts_with("/"))
    return makeError(prefix + " is an absolute path" + kFix);

  llvm::SmallVector<llvm::StringRef, 8> parts;
  location.split(parts, '/', /*MaxSplit=*/-1, /*KeepEmpty=*/true);
  for (llvm::StringRef part : parts) {
    if (part.empty() || part == ".")
      continue;
    if (part == "..") {
      if (components.empty())
        return makeError(prefix + " escapes the model directory through '..'" + kFix);
      components.pop_back();
      continue;
    }
    components.push_back(part);
  }
  if (components.empty())
    return makeError(prefix + " does not name a file (it normalises to the model directory "
                              "itself); it must name the data file relative to the model's "
                              "directory");
  return llvm::Error::success();
}

std::string joinComponents(llvm::ArrayRef<llvm::StringRef> components, size_t count) {
  std::string out;
  for (size_t i = 0; i < count; ++i) {
    if (i)
      out += '/';
    out += components[i].str();
  }
  return out;
}

constexpr const char *kSymlinkFix =
    "; Kiln refuses symbolic links in external data paths because they may point outside the "
    "model directory; copy the data into the model directory instead";

/// Explains why openat(dirFd, name, ...|O_NOFOLLOW) failed with `err`, using fstatat to tell a
/// symbolic link from other causes. `what` is e.g. "directory component 'a'".
llvm::Error explainOpenFailure(const std::string &prefix, int dirFd, const std::string &name,
                               const std::string &what, const std::string &modelDirText,
                               int err, bool wantDirectory) {
  struct stat st {};
  bool haveStat = ::fstatat(dirFd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
  if (haveStat && S_ISLNK(st.st_mode))
    return makeError(prefix + ": " + what + " is a symbolic link" + kSymlinkFix);
  if (err == ENOENT || (!haveStat && errno == ENOENT))
    return makeError(prefix + ": " + what + " does not exist beneath model directory " +
                     modelDirText + "; put the external data file next to the model or fix the "
                                    "location");
  if (wantDirectory && (err == ENOTDIR || (haveStat && !S_ISDIR(st.st_mode))))
    return makeError(prefix + ": " + what +
                     " is not a directory; fix the location so that every component before "
                     "the file name is a directory");
  return makeError(prefix + ": cannot open " + what + " beneath model directory " +
                   modelDirText + ": " + errnoText(err));
}

const char *fileKind(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISSOCK(mode))
    return "a socket";
  if (S_ISLNK(mode))
    return "a symbolic link";
  return "not a regular file";
}

llvm::Error notRegularError(const std::string &prefix, mode_t mode) {
  if (S_ISLNK(mode))
    return makeError(prefix + " is a symbolic link" + kSymlinkFix);
  return makeError(prefix + " names " + fileKind(mode) +
                   ", not a regular file; external data must be stored in a regular file");
}

} // namespace

const char *onnxTypeName(int32_t dataType) {
  switch (dataType) {
  case 0: return "UNDEFINED";
  case 1: return "FLOAT";
  case 2: return "UINT8";
  case 3: return "INT8";
  case 4: return "UINT16";
  case 5: return "INT16";
  case 6: return "INT32";
  case 7: return "INT64";
  case 8: return "STRING";
  case 9: return "BOOL";
  case 10: return "FLOAT16";
  case 11: return "DOUBLE";
  case 12: return "UINT32";
  case 13: return "UINT64";
  case 14: return "COMPLEX64";
  case 15: return "COMPLEX128";
  case 16: return "BFLOAT16";
  case 17: return "FLOAT8E4M3FN";
  case 18: return "FLOAT8E4M3FNUZ";
  case 19: return "FLOAT8E5M2";
  case 20: return "FLOAT8E5M2FNUZ";
  case 21: return "UINT4";
  case 22: return "INT4";
  case 23: return "FLOAT4E2M1";
  case 24: return "FLOAT8E8M0";
  default: return "unknown";
  }
}

size_t onnxElementByteSize(int32_t dataType) {
  switch (dataType) {
  case 1: // FLOAT
    return 4;
  case 2: // UINT8
  case 3: // INT8
  case 9: // BOOL
    return 1;
  case 4:  // UINT16
  case 5:  // INT16
  case 10: // FLOAT16
  case 16: // BFLOAT16
    return 2;
  case 6:  // INT32
  case 12: // UINT32
    return 4;
  case 7:  // INT64
  case 11: // DOUBLE
  case 13: // UINT64
  case 14: // COMPLEX64 (two float32)
    return 8;
  case 15: // COMPLEX128 (two float64)
    return 16;
  case 17: // FLOAT8E4M3FN
  case 18: // FLOAT8E4M3FNUZ
  case 19: // FLOAT8E5M2
  case 20: // FLOAT8E5M2FNUZ
  case 24: // FLOAT8E8M0
    return 1;
  default: // UNDEFINED(0), STRING(8), UINT4(21), INT4(22), FLOAT4E2M1(23), unknown
    return 0;
  }
}

llvm::Expected<uint64_t> expectedTensorBytes(llvm::StringRef tensorName,
                                             llvm::ArrayRef<int64_t> dims, int32_t dataType) {
  size_t elemSize = onnxElementByteSize(dataType);
  if (elemSize == 0)
    return makeError(tensorLabel(tensorName) + ": data type " + onnxTypeName(dataType) + " (" +
                     llvm::Twine(dataType) +
                     ") has no fixed element byte size; external/raw data is supported only "
                     "for fixed-size numeric types");
  bool anyZero = false;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0)
      return makeError(tensorLabel(tensorName) + ": dimension " + llvm::Twine(i) + " of dims " +
                       formatDims(dims) + " is negative (" + llvm::Twine(dims[i]) +
                       "); tensor dims must be non-negative");
    anyZero |= dims[i] == 0;
  }
  if (anyZero)
    return 0;

  uint64_t count = 1;
  for (int64_t dim : dims) {
    uint64_t next;
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(dim), &next) || next > kInt64Max)
      return makeError(tensorLabel(tensorName) + ": element count of dims " + formatDims(dims) +
                       " overflows a 64-bit integer; the tensor's dims are corrupt");
    count = next;
  }
  uint64_t bytes;
  if (__builtin_mul_overflow(count, static_cast<uint64_t>(elemSize), &bytes) ||
      bytes > kInt64Max || bytes > std::numeric_limits<size_t>::max())
    return makeError(tensorLabel(tensorName) + ": byte size of dims " + formatDims(dims) +
                     " with " + llvm::Twine(elemSize) + "-byte " + onnxTypeName(dataType) +
                     " elements overflows a 64-bit integer; the tensor's dims are corrupt");
  return bytes;
}

llvm::Expected<std::vector<char>> readExternalData(llvm::StringRef modelDir,
                                                   const onnx::TensorProto &tensor) {
  const std::string label = tensorLabel(tensor.name());

  // 1. The tensor must say EXTERNAL, and each known key may appear at most once.
  if (tensor.data_location() != onnx::TensorProto::EXTERNAL)
    return makeError(label + ": data_location is not EXTERNAL; its data is stored inside the "
                             "model and must not be read as external data");

  const std::string *location = nullptr, *offsetText = nullptr, *lengthText = nullptr,
                    *checksum = nullptr;
  for (const auto &entry : tensor.external_data()) {
    const std::string **slot = nullptr;
    if (entry.key() == "location")
      slot = &location;
    else if (entry.key() == "offset")
      slot = &offsetText;
    else if (entry.key() == "length")
      slot = &lengthText;
    else if (entry.key() == "checksum")
      slot = &checksum;
    if (!slot)
      continue; // Unknown keys are ignored, as the ONNX spec allows.
    if (*slot)
      return makeError(label + ": external data key " + quoted(entry.key()) +
                       " appears more than once; each of 'location', 'offset', 'length' and "
                       "'checksum' may appear at most once");
    *slot = &entry.value();
  }
  if (!location)
    return makeError(label + ": external data has no 'location' entry; an EXTERNAL tensor must "
                             "name its data file with a 'location' key in external_data");
  if (location->empty())
    return makeError(label + ": external data 'location' is empty; it must name the data file "
                             "relative to the model's directory");

  // 2. Lexical checks on the location.
  const std::string prefix = label + ": external data location " + quoted(*location);
  llvm::SmallVector<llvm::StringRef, 8> components;
  if (llvm::Error err = normaliseLocation(prefix, *location, components))
    return err;

  // 3. offset / length syntax and arithmetic; length versus the tensor's byte size.
  auto parseField = [&](const char *key, const std::string *text,
                        uint64_t &value) -> llvm::Error {
    if (!text)
      return llvm::Error::success();
    std::string head = prefix + ": " + key + " " + quoted(*text);
    switch (parseNonNegativeInt64(*text, value)) {
    case ParseStatus::Ok:
      return llvm::Error::success();
    case ParseStatus::Empty:
      return makeError(prefix + ": " + key + " is empty; it must be a non-negative decimal byte "
                                             "count");
    case ParseStatus::Negative:
      return makeError(head + " is negative; it must be a non-negative decimal byte count");
    case ParseStatus::NotDecimal:
      return makeError(head + " is not a plain decimal integer; it must consist of the digits "
                              "0-9 only (no sign, spaces, exponent or hex)");
    case ParseStatus::TooLarge:
      return makeError(head + " is too large; it must fit in a signed 64-bit integer");
    }
    llvm_unreachable("unhandled ParseStatus");
  };
  uint64_t offset = 0, length = 0;
  if (llvm::Error err = parseField("offset", offsetText, offset))
    return err;
  if (llvm::Error err = parseField("length", lengthText, length))
    return err;
  const bool haveLength = lengthText != nullptr;
  // Both are <= INT64_MAX, so the uint64 sum cannot wrap; it must still fit int64 (off_t).
  if (haveLength && offset + length > kInt64Max)
    return makeError(prefix + ": offset " + llvm::Twine(offset) + " + length " +
                     llvm::Twine(length) +
                     " overflows a signed 64-bit integer; the external data range is corrupt");

  llvm::SmallVector<int64_t, 8> dims(tensor.dims().begin(), tensor.dims().end());
  llvm::Expected<uint64_t> expectedOr = expectedTensorBytes(tensor.name(), dims,
                                                            tensor.data_type());
  if (!expectedOr)
    return expectedOr.takeError();
  const uint64_t expected = *expectedOr;
  if (haveLength && length != expected)
    return makeError(prefix + ": length " + llvm::Twine(length) + " does not match the " +
                     llvm::Twine(expected) + " bytes the tensor needs (dims " +
                     formatDims(dims) + " of " + onnxTypeName(tensor.data_type()) + ", " +
                     llvm::Twine(onnxElementByteSize(tensor.data_type())) +
                     " bytes each); fix the 'length' entry or the tensor's dims/data_type");

  // 4. Walk to the file one component at a time without following symbolic links.
  const std::string modelDirPath = modelDir.empty() ? std::string(".") : modelDir.str();
  const std::string modelDirText = quoted(modelDirPath);
  UniqueFd dirFd(::open(modelDirPath.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dirFd.valid())
    return makeError(prefix + ": cannot open model directory " + modelDirText + ": " +
                     errnoText(errno));

  for (size_t i = 0; i + 1 < components.size(); ++i) {
    std::string name = components[i].str();
    std::string what = "directory component " + quoted(joinComponents(components, i + 1));
    int fd;
    do
      fd = ::openat(dirFd.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
      return explainOpenFailure(prefix, dirFd.get(), name, what, modelDirText, errno,
                                /*wantDirectory=*/true);
    dirFd.reset(fd);
  }

  const std::string fileName = components.back().str();
  const std::string fileWhat = "file " + quoted(joinComponents(components, components.size()));
  // Pre-check with lstat semantics so that FIFOs and devices are rejected without being opened;
  // the fstat of the opened fd below is what makes the check race-free.
  {
    struct stat st {};
    if (::fstatat(dirFd.get(), fileName.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
      return explainOpenFailure(prefix, dirFd.get(), fileName, fileWhat, modelDirText, errno,
                                /*wantDirectory=*/false);
    if (!S_ISREG(st.st_mode))
      return notRegularError(prefix, st.st_mode);
  }
  int rawFd;
  do
    rawFd = ::openat(dirFd.get(), fileName.c_str(),
                     O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  while (rawFd < 0 && errno == EINTR);
  if (rawFd < 0)
    return explainOpenFailure(prefix, dirFd.get(), fileName, fileWhat, modelDirText, errno,
                              /*wantDirectory=*/false);
  UniqueFd fileFd(rawFd);
  dirFd.reset();

  struct stat st {};
  if (::fstat(fileFd.get(), &st) != 0)
    return makeError(prefix + ": cannot stat " + fileWhat + ": " + errnoText(errno));
  if (!S_ISREG(st.st_mode))
    return notRegularError(prefix, st.st_mode);
  if (st.st_nlink > 1)
    return makeError(prefix + " has " + llvm::Twine(static_cast<uint64_t>(st.st_nlink)) +
                     " hard links; Kiln refuses hard-linked external data because it may alias "
                     "a file outside the model directory; copy the file instead of linking it");

  // 5. The range must lie inside the file.
  const uint64_t fileSize = static_cast<uint64_t>(st.st_size);
  if (offset > fileSize)
    return makeError(prefix + ": range past end of file: offset " + llvm::Twine(offset) +
                     " is beyond the file size of " + llvm::Twine(fileSize) +
                     " bytes; fix the 'offset' entry or supply the complete data file");
  if (haveLength && offset + length > fileSize)
    return makeError(prefix + ": range past end of file: offset " + llvm::Twine(offset) +
                     " + length " + llvm::Twine(length) + " = " + llvm::Twine(offset + length) +
                     " exceeds the file size of " + llvm::Twine(fileSize) +
                     " bytes; the data file is truncated or the entries are wrong");
  if (!haveLength && fileSize - offset < expected)
    return makeError(prefix + ": only " + llvm::Twine(fileSize - offset) +
                     " bytes remain from offset " + llvm::Twine(offset) +
                     " to the end of the file (size " + llvm::Twine(fileSize) +
                     " bytes) but the tensor needs " + llvm::Twine(expected) +
                     " bytes; the data file is truncated or the tensor's dims are wrong");

  // 6. All checks passed: allocate exactly `expected` bytes and read them.
  std::vector<char> data(static_cast<size_t>(expected));
  uint64_t done = 0;
  while (done < expected) {
    // Linux caps a single read at about 2 GiB anyway; keep each request well below that.
    size_t chunk = static_cast<size_t>(std::min<uint64_t>(expected - done, uint64_t(1) << 30));
    ssize_t got = ::pread(fileFd.get(), data.data() + done, chunk,
                          static_cast<off_t>(offset + done));
    if (got < 0) {
      if (errno == EINTR)
        continue;
      return makeError(prefix + ": reading " + llvm::Twine(expected) + " bytes at offset " +
                       llvm::Twine(offset) + " failed after " + llvm::Twine(done) + " bytes: " +
                       errnoText(errno));
    }
    if (got == 0)
      return makeError(prefix + ": the file ended after " + llvm::Twine(done) + " of " +
                       llvm::Twine(expected) + " bytes at offset " + llvm::Twine(offset) +
                       "; it shrank while being read");
    done += static_cast<uint64_t>(got);
  }
  return data;
}

} // namespace kiln::frontend
