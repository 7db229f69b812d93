//===- CudnnPlanStore.cpp - built cuDNN execution plans, kept across loads ===//

#include "runtime/engine/CudnnPlanStore.h"

#include "runtime/plan/AtomicFile.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>

namespace kiln::runtime {
namespace {

uint64_t fnv1a64(const std::string &text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

} // namespace

CudnnPlanStore::CudnnPlanStore(std::string directory, std::string keySuffix, Warn warn)
    : directory_(std::move(directory)), keySuffix_(std::move(keySuffix)), warn_(std::move(warn)) {}

std::string CudnnPlanStore::directoryFor(const std::string &timingCachePath) {
  if (timingCachePath.empty())
    return "";
  std::filesystem::path path(timingCachePath);
  return (path.parent_path() / (path.stem().string() + ".cudnn-plans")).string();
}

std::string CudnnPlanStore::pathFor(const std::string &fullKey) const {
  char name[32];
  std::snprintf(name, sizeof name, "%016llx.plan", static_cast<unsigned long long>(fnv1a64(fullKey)));
  return (std::filesystem::path(directory_) / name).string();
}

std::shared_ptr<const CudnnPlanStore::Bytes> CudnnPlanStore::find(const std::string &key) {
  std::string fullKey = key + keySuffix_;
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = plans_.find(fullKey); it != plans_.end())
    return it->second;
  if (directory_.empty())
    return nullptr;
  std::ifstream in(pathFor(fullKey), std::ios::binary);
  if (!in)
    return nullptr; // never stored (or unreadable: then it is built and rewritten)
  Bytes file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string expected = std::string(kHeader) + fullKey + "\n";
  if (file.size() <= expected.size() || !std::equal(expected.begin(), expected.end(), file.begin()))
    return nullptr; // another key with the same hash, or another version's file
  auto bytes = std::make_shared<const Bytes>(file.begin() + static_cast<std::ptrdiff_t>(expected.size()), file.end());
  plans_[fullKey] = bytes;
  return bytes;
}

void CudnnPlanStore::insert(const std::string &key, Bytes bytes) {
  std::string fullKey = key + keySuffix_;
  std::string path;
  Bytes file;
  if (!directory_.empty() && fullKey.find('\n') == std::string::npos) {
    path = pathFor(fullKey);
    std::string header = std::string(kHeader) + fullKey + "\n";
    file.reserve(header.size() + bytes.size());
    file.insert(file.end(), header.begin(), header.end());
    file.insert(file.end(), bytes.begin(), bytes.end());
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    plans_[fullKey] = std::make_shared<const Bytes>(std::move(bytes));
  }
  ++stored_;
  if (path.empty())
    return;
  std::error_code ec;
  std::filesystem::create_directories(directory_, ec);
  if (ec) {
    warn("cuDNN plan store: cannot create '" + directory_ + "': " + ec.message() +
         "; built cuDNN plans are kept in memory only, later processes build them again");
    return;
  }
  if (Status s = plan::writeFileAtomically(path, file, "serialized cuDNN plan"); !s.isOk())
    warn("cuDNN plan store: " + s.message() + "; later processes build this plan again");
}

void CudnnPlanStore::erase(const std::string &key) {
  std::lock_guard<std::mutex> lock(mutex_);
  plans_.erase(key + keySuffix_);
}

} // namespace kiln::runtime
