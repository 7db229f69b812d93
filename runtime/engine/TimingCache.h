//===- TimingCache.h - tuned algorithms, kept across loads -----*- C++ -*-===//
//
// Timing cuDNN/cuBLASLt algorithms takes seconds per model; the choice only depends on the
// problem, the GPU and the library versions, so it is kept in a text file with one line per
// problem:
//
//   <key> TAB <value>
//   key   = problem description | gpu=<name> | cc=<major*10+minor> | cudnn=<v> | cublaslt=<v>
//   value = "gemm algo=<128 hex digits: the cublasLtMatmulAlgo_t bytes> ws=<bytes>"
//         | "conv algo=<cudnn algo enum> math=<cudnnMathType_t> ws=<bytes>"
//         | "graph engine=<cuDNN global engine index> knobs=<type>:<value>,...|- ws=<bytes>"
//           (an attention step's engine config, the knob types as the cuDNN frontend numbers
//           them; the key names the frontend version)
//
// Lines starting with '#' are comments. The file is sorted by key, so the same choices always
// give the same bytes. A file written by another version, truncated or simply not a cache
// loses only its bad lines: each one is skipped with a warning, never a crash, and the
// problem it described is tuned again. Host-only: no CUDA here.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_ENGINE_TIMINGCACHE_H
#define KILN_RUNTIME_ENGINE_TIMINGCACHE_H

#include "runtime/Status.h"

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::runtime {

/// One tuned choice. Which fields matter depends on `kind`.
struct TunedAlgorithm {
  enum class Kind : uint8_t { Gemm, Conv, CudnnGraph };
  Kind kind = Kind::Gemm;
  std::array<uint8_t, 64> gemmAlgo{}; // cublasLtMatmulAlgo_t, byte for byte
  int convAlgo = 0;                   // cudnnConvolutionFwdAlgo_t / BwdDataAlgo_t
  int convMath = 0;                   // cudnnMathType_t
  int64_t graphEngine = 0;            // cuDNN's global engine index for a frontend graph (attention, NHWC conv)
  std::vector<std::pair<int64_t, int64_t>> graphKnobs; // (cudnn_frontend::KnobType_t, value), sorted
  uint64_t workspaceBytes = 0;

  bool operator==(const TunedAlgorithm &) const = default;
};

/// The value half of a cache line, and back. parse returns nullopt for anything malformed.
std::string formatTunedAlgorithm(const TunedAlgorithm &algo);
std::optional<TunedAlgorithm> parseTunedAlgorithm(std::string_view text);

/// Thread-safe map from problem key to choice, with the text format above.
class TimingCache {
public:
  using Warn = std::function<void(const std::string &)>;

  /// Adds the valid lines of `text` (existing keys are overwritten); reports each bad line
  /// (with `origin` and its line number) through `warn`. Returns how many entries were added.
  size_t parse(std::string_view text, const std::string &origin, const Warn &warn);
  /// The whole cache in the file format (a comment header, then sorted lines).
  std::string serialize() const;

  /// Reads `path` if it exists (a missing file is an empty cache, not an error). An unreadable
  /// file is reported through `warn` and ignored.
  void load(const std::string &path, const Warn &warn);
  /// Writes serialize() to `path` through a temporary file and a rename, so concurrent
  /// readers never see half a file.
  Status save(const std::string &path) const;

  std::optional<TunedAlgorithm> find(const std::string &key) const;
  /// Stores `algo` under `key`; false (nothing stored) when the key is not isValidKey, since
  /// it could not be written back as one line.
  bool insert(const std::string &key, const TunedAlgorithm &algo);
  size_t size() const;

  /// True when `key` can be stored: non-empty, no tab, newline or carriage return.
  static bool isValidKey(std::string_view key);

private:
  mutable std::mutex mutex_;
  std::map<std::string, TunedAlgorithm, std::less<>> entries_;
};

} // namespace kiln::runtime

#endif // KILN_RUNTIME_ENGINE_TIMINGCACHE_H
