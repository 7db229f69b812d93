//===- AtomicFile.cpp - write a whole file or nothing ----------------------===//

#include "runtime/plan/AtomicFile.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kiln::plan {
namespace {

/// 0, or the errno of the failed write.
int writeAll(int fd, std::span<const uint8_t> bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return n < 0 ? errno : EIO;
    bytes = bytes.subspan(static_cast<size_t>(n));
  }
  return 0;
}

} // namespace

runtime::Status ioError(const std::string &what, const std::string &path, int error) {
  using runtime::StatusCode;
  StatusCode code = error == ENOENT ? StatusCode::kNotFound
                    : (error == ENOSPC || error == EDQUOT) ? StatusCode::kResourceExhausted
                                                           : StatusCode::kInvalidArgument;
  return runtime::Status(code, what + " '" + path + "': " + std::strerror(error));
}

runtime::Status writeFileAtomically(const std::string &path, std::span<const uint8_t> bytes, const std::string &what) {
  // A destination that exists and is not a regular file (/dev/null, a pipe, a terminal) is
  // written as it is: renaming a file over it would replace the device or the pipe.
  struct stat existing{};
  if (::stat(path.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode)) {
    if (S_ISDIR(existing.st_mode))
      return ioError("cannot write " + what + " to", path, EISDIR);
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0)
      return ioError("cannot open for the " + what, path, errno);
    int error = writeAll(fd, bytes);
    if (::close(fd) != 0 && error == 0)
      error = errno;
    return error == 0 ? runtime::Status::ok() : ioError("cannot write " + what, path, error);
  }
  static std::atomic<uint64_t> counter{0};
  std::string temp;
  int fd = -1;
  for (int attempt = 0; fd < 0; ++attempt) {
    temp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && (errno != EEXIST || attempt > 100))
      return ioError("cannot create a temporary file for " + what, path, errno);
  }
  // fsync before rename, so a crash cannot leave a renamed but empty file behind.
  int error = writeAll(fd, bytes);
  if (error == 0 && ::fsync(fd) != 0)
    error = errno;
  if (::close(fd) != 0 && error == 0)
    error = errno;
  if (error != 0) {
    ::unlink(temp.c_str());
    return ioError("cannot write " + what, path, error);
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    error = errno;
    ::unlink(temp.c_str());
    return ioError("cannot move the written " + what + " into place as", path, error);
  }
  return runtime::Status::ok();
}

} // namespace kiln::plan
