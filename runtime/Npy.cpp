//===- Npy.cpp - NumPy .npy files ------------------------------------------===//

#include "runtime/Npy.h"

#include <cctype>
#include <cstring>
#include <fstream>
#include <sstream>

namespace kiln::runtime {
namespace {

Status npyError(const std::string &name, const std::string &message) {
  return Status(StatusCode::kInvalidArgument, "'" + name + "': " + message);
}

/// Finds `'key': value` in the header dict and returns the value text up to the next ',' at
/// depth 0 (or '}').
bool headerValue(const std::string &header, const std::string &key, std::string &value) {
  size_t pos = header.find("'" + key + "'");
  if (pos == std::string::npos)
    return false;
  pos = header.find(':', pos);
  if (pos == std::string::npos)
    return false;
  int depth = 0;
  size_t start = pos + 1, end = start;
  for (; end < header.size(); ++end) {
    char c = header[end];
    if (c == '(')
      ++depth;
    else if (c == ')')
      --depth;
    else if ((c == ',' || c == '}') && depth == 0)
      break;
  }
  value = header.substr(start, end - start);
  size_t b = value.find_first_not_of(" \t'"), e = value.find_last_not_of(" \t'");
  value = b == std::string::npos ? "" : value.substr(b, e - b + 1);
  return true;
}

} // namespace

size_t NpyArray::elementSize(const std::string &dtype) {
  if (dtype.size() < 3 || (dtype[0] != '<' && dtype[0] != '|' && dtype[0] != '='))
    return 0;
  char kind = dtype[1];
  if (kind != 'f' && kind != 'i' && kind != 'u' && kind != 'b')
    return 0;
  int size = std::atoi(dtype.c_str() + 2);
  if (size != 1 && size != 2 && size != 4 && size != 8)
    return 0;
  if (kind == 'f' && size == 1)
    return 0;
  return size;
}

StatusOr<NpyArray> parseNpy(const std::string &bytes, const std::string &name) {
  static const char magic[] = "\x93NUMPY";
  if (bytes.size() < 10 || std::memcmp(bytes.data(), magic, 6) != 0)
    return npyError(name, "not a .npy file (bad magic)");
  unsigned major = (unsigned char)bytes[6];
  size_t headerLen, offset;
  if (major == 1) {
    headerLen = (unsigned char)bytes[8] | ((unsigned char)bytes[9] << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return npyError(name, "truncated header");
    headerLen = 0;
    for (int b = 0; b < 4; ++b)
      headerLen |= (size_t)(unsigned char)bytes[8 + b] << (8 * b);
    offset = 12;
  } else {
    return npyError(name, "unsupported .npy version " + std::to_string(major));
  }
  if (bytes.size() < offset + headerLen)
    return npyError(name, "truncated header");
  std::string header = bytes.substr(offset, headerLen);
  NpyArray array;
  std::string fortran, shapeText;
  if (!headerValue(header, "descr", array.dtype) || !headerValue(header, "fortran_order", fortran) ||
      !headerValue(header, "shape", shapeText))
    return npyError(name, "header lacks descr, fortran_order or shape");
  if (fortran != "False")
    return npyError(name, "Fortran-order arrays are not supported; save with np.ascontiguousarray");
  size_t elemSize = NpyArray::elementSize(array.dtype);
  if (elemSize == 0 || array.dtype[0] == '>')
    return npyError(name, "dtype " + array.dtype + " is not supported (little-endian bool, int, uint "
                    "or float of 1-8 bytes)");
  std::string dims = shapeText;
  for (char &c : dims)
    if (c == '(' || c == ')' || c == ',')
      c = ' ';
  std::istringstream in(dims);
  int64_t count = 1;
  for (std::string tok; in >> tok;) {
    char *end = nullptr;
    long long d = std::strtoll(tok.c_str(), &end, 10);
    if (*end != '\0' || d < 0)
      return npyError(name, "bad shape " + shapeText);
    if (d != 0 && count > INT64_MAX / d)
      return npyError(name, "shape " + shapeText + " overflows");
    array.shape.push_back(d);
    count *= d;
  }
  size_t dataStart = offset + headerLen;
  if ((uint64_t)count > (bytes.size() - dataStart) / elemSize)
    return npyError(name, "data is truncated: shape " + shapeText + " needs " +
                              std::to_string(count * elemSize) + " bytes, the file has " +
                              std::to_string(bytes.size() - dataStart));
  array.data.assign(bytes.begin() + dataStart, bytes.begin() + dataStart + count * elemSize);
  return array;
}

StatusOr<NpyArray> readNpy(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    return Status(StatusCode::kNotFound, "cannot open '" + path + "'");
  std::ostringstream contents;
  contents << file.rdbuf();
  return parseNpy(contents.str(), path);
}

Status writeNpy(const std::string &path, const NpyArray &array) {
  std::string shape = "(";
  for (size_t i = 0; i < array.shape.size(); ++i)
    shape += std::to_string(array.shape[i]) + (array.shape.size() == 1 ? "," : i + 1 < array.shape.size() ? ", " : "");
  shape += ")";
  std::string header = "{'descr': '" + array.dtype + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad so that the data starts at a multiple of 64 bytes; the header ends with '\n'.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream file(path, std::ios::binary);
  if (!file)
    return Status(StatusCode::kNotFound, "cannot write '" + path + "'");
  file.write("\x93NUMPY\x01\x00", 8);
  char len[2] = {char(header.size() & 0xff), char(header.size() >> 8)};
  file.write(len, 2);
  file.write(header.data(), header.size());
  file.write(array.data.data(), array.data.size());
  if (!file)
    return Status(StatusCode::kInternal, "writing '" + path + "' failed");
  return Status::ok();
}

std::string npyFileName(const std::string &tensorName) {
  std::string file = tensorName;
  for (char &c : file)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.')
      c = '_';
  return file + ".npy";
}

} // namespace kiln::runtime
