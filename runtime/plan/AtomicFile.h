//===- AtomicFile.h - write a whole file or nothing ------------*- C++ -*-===//
//
// Plans, the timing cache and serialized cuDNN plans are read by other processes while one
// writes them. Each is written next to its destination and renamed into place, so a reader sees
// the old file or the new one, never half of one, and a failed write leaves the old file alone.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_PLAN_ATOMICFILE_H
#define KILN_RUNTIME_PLAN_ATOMICFILE_H

#include "runtime/Status.h"

#include <cstdint>
#include <span>
#include <string>

namespace kiln::plan {

/// Writes `bytes` to `path` through a temporary file in the same directory (O_EXCL, a
/// per-process counter: concurrent writers never share one), fsync and rename. A `path` that
/// exists and is not a regular file (/dev/null, a pipe) is written directly instead; a
/// directory is an error. `what` names the file in messages ("plan", "timing cache").
runtime::Status writeFileAtomically(const std::string &path, std::span<const uint8_t> bytes, const std::string &what);

/// A message for errno `error` from doing `what` to `path`; the code says whether the file is
/// missing (kNotFound), the disk full (kResourceExhausted) or anything else (kInvalidArgument).
runtime::Status ioError(const std::string &what, const std::string &path, int error);

} // namespace kiln::plan

#endif // KILN_RUNTIME_PLAN_ATOMICFILE_H
