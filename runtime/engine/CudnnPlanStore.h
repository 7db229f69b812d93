//===- CudnnPlanStore.h - built cuDNN execution plans, kept across loads -*- C++ -*-===//
//
// A cuDNN runtime-fusion engine (a convolution with its epilogue, attention) compiles its
// kernel with NVRTC when its plan is built: 0.2-0.5 s per graph, every time a process builds it.
// cuDNN can serialize a built plan, compiled kernel included, and load it back on the same GPU
// and library versions in milliseconds. The store keeps those serialized plans by key (the
// graph, its engine config, the frontend version and the device key of the timing cache), in
// memory for the process and, beside the timing cache, one file per plan:
//
//   "kiln cudnn plan v1\n" <key> "\n" <the cuDNN frontend's serialized plan bytes>
//
// named by a 64-bit FNV-1a hash of the key. A file whose key is not the one asked for (another
// version, a hash collision) or that cannot be read is not used; the plan is built and the file
// rewritten. Nothing here knows cuDNN: the bytes are opaque. Thread-safe.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_ENGINE_CUDNNPLANSTORE_H
#define KILN_RUNTIME_ENGINE_CUDNNPLANSTORE_H

#include "runtime/Status.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kiln::runtime {

class CudnnPlanStore {
public:
  using Bytes = std::vector<uint8_t>;
  using Warn = std::function<void(const std::string &)>;

  /// `directory` empty: memory only. `keySuffix` is appended to every key (the device key:
  /// GPU, compute capability, library versions). `warn` hears about files that could not be
  /// written; it may be empty.
  CudnnPlanStore(std::string directory, std::string keySuffix, Warn warn);

  /// The directory of plans that goes with a timing cache file: "<dir>/<stem>.cudnn-plans"
  /// ("~/.cache/kiln/timing_cache.txt" -> "~/.cache/kiln/timing_cache.cudnn-plans"); empty for
  /// an empty path.
  static std::string directoryFor(const std::string &timingCachePath);

  /// The plan stored under `key`, from memory or its file; null when there is none.
  std::shared_ptr<const Bytes> find(const std::string &key);
  /// Keeps `bytes` under `key` in memory and writes its file (creating the directory); a file
  /// that cannot be written is reported through `warn`, the plan stays in memory.
  void insert(const std::string &key, Bytes bytes);
  /// Forgets `key` (a stored plan that failed to load), so the rebuilt one replaces it.
  void erase(const std::string &key);

  /// What happened to the graphs' plans since the store was made (all engines of the runtime).
  struct Counts {
    uint32_t loaded = 0;    // loaded from the store: no kernel compiled
    uint32_t stored = 0;    // built and stored (a runtime-compiled engine)
    uint32_t unstorable = 0; // built; cuDNN does not serialize its engine (precompiled: cheap to build)
  };
  Counts counts() const { return {loaded_.load(), stored_.load(), unstorable_.load()}; }
  void noteLoaded() { ++loaded_; }
  void noteUnstorable() { ++unstorable_; }

  void warn(const std::string &message) const {
    if (warn_)
      warn_(message);
  }
  const std::string &directory() const { return directory_; }

  /// The file a key is stored in (inside directory()).
  std::string pathFor(const std::string &fullKey) const;
  /// The first bytes of a plan file, before its key.
  static constexpr const char *kHeader = "kiln cudnn plan v1\n";

private:
  std::string directory_, keySuffix_;
  Warn warn_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const Bytes>> plans_; // by full key
  std::atomic<uint32_t> loaded_{0}, stored_{0}, unstorable_{0};
};

} // namespace kiln::runtime

#endif // KILN_RUNTIME_ENGINE_CUDNNPLANSTORE_H
