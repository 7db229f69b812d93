//===- TimingCache.cpp - tuned algorithms, kept across loads ---------------===//

#include "runtime/engine/TimingCache.h"

#include "runtime/plan/AtomicFile.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>
#include <vector>


namespace kiln::runtime {
namespace {

constexpr std::string_view kHeader = "# kiln timing cache v1: <problem|gpu|cc|cudnn|cublaslt> TAB <algorithm>\n";

std::vector<std::string_view> splitSpaces(std::string_view text) {
  std::vector<std::string_view> parts;
  size_t pos = 0;
  while (pos < text.size()) {
    while (pos < text.size() && text[pos] == ' ')
      ++pos;
    size_t end = text.find(' ', pos);
    if (end == std::string_view::npos)
      end = text.size();
    if (end > pos)
      parts.push_back(text.substr(pos, end - pos));
    pos = end;
  }
  return parts;
}

/// "name=<value>" with the expected name; returns the value.
std::optional<std::string_view> field(std::string_view part, std::string_view name) {
  if (part.size() <= name.size() || part.substr(0, name.size()) != name || part[name.size()] != '=')
    return std::nullopt;
  return part.substr(name.size() + 1);
}

template <typename T>
std::optional<T> parseInt(std::optional<std::string_view> text) {
  if (!text || text->empty())
    return std::nullopt;
  T value{};
  auto [end, err] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (err != std::errc() || end != text->data() + text->size())
    return std::nullopt;
  return value;
}

int hexDigit(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/// "<type>:<value>,..." (or "-" for none) into sorted (type, value) pairs; false if malformed.
bool parseKnobs(std::string_view text, std::vector<std::pair<int64_t, int64_t>> &knobs) {
  knobs.clear();
  if (text == "-")
    return true;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = std::min(text.find(',', pos), text.size());
    std::string_view knob = text.substr(pos, end - pos);
    size_t colon = knob.find(':');
    if (colon == std::string_view::npos)
      return false;
    std::optional<int64_t> type = parseInt<int64_t>(knob.substr(0, colon));
    std::optional<int64_t> value = parseInt<int64_t>(knob.substr(colon + 1));
    if (!type || !value || (!knobs.empty() && *type <= knobs.back().first))
      return false; // written sorted and unique, so anything else is not ours
    knobs.push_back({*type, *value});
    pos = end + 1;
  }
  return true;
}

} // namespace

std::string formatTunedAlgorithm(const TunedAlgorithm &algo) {
  std::string out;
  if (algo.kind == TunedAlgorithm::Kind::Gemm) {
    static constexpr char kHex[] = "0123456789abcdef";
    out = "gemm algo=";
    for (uint8_t byte : algo.gemmAlgo) {
      out += kHex[byte >> 4];
      out += kHex[byte & 15];
    }
  } else if (algo.kind == TunedAlgorithm::Kind::Conv) {
    out = "conv algo=" + std::to_string(algo.convAlgo) + " math=" + std::to_string(algo.convMath);
  } else {
    out = "graph engine=" + std::to_string(algo.graphEngine) + " knobs=";
    for (size_t i = 0; i < algo.graphKnobs.size(); ++i) {
      if (i)
        out += ',';
      out += std::to_string(algo.graphKnobs[i].first) + ":" + std::to_string(algo.graphKnobs[i].second);
    }
    if (algo.graphKnobs.empty())
      out += "-";
  }
  out += " ws=" + std::to_string(algo.workspaceBytes);
  return out;
}

std::optional<TunedAlgorithm> parseTunedAlgorithm(std::string_view text) {
  std::vector<std::string_view> parts = splitSpaces(text);
  if (parts.empty())
    return std::nullopt;
  TunedAlgorithm algo;
  if (parts[0] == "gemm") {
    if (parts.size() != 3)
      return std::nullopt;
    std::optional<std::string_view> hex = field(parts[1], "algo");
    if (!hex || hex->size() != 2 * algo.gemmAlgo.size())
      return std::nullopt;
    for (size_t i = 0; i < algo.gemmAlgo.size(); ++i) {
      int hi = hexDigit((*hex)[2 * i]), lo = hexDigit((*hex)[2 * i + 1]);
      if (hi < 0 || lo < 0)
        return std::nullopt;
      algo.gemmAlgo[i] = static_cast<uint8_t>(hi * 16 + lo);
    }
    algo.kind = TunedAlgorithm::Kind::Gemm;
  } else if (parts[0] == "conv") {
    if (parts.size() != 4)
      return std::nullopt;
    std::optional<int> convAlgo = parseInt<int>(field(parts[1], "algo"));
    std::optional<int> math = parseInt<int>(field(parts[2], "math"));
    // cuDNN's enums are small and non-negative; anything else is not ours.
    if (!convAlgo || !math || *convAlgo < 0 || *convAlgo > 64 || *math < 0 || *math > 16)
      return std::nullopt;
    algo.kind = TunedAlgorithm::Kind::Conv;
    algo.convAlgo = *convAlgo;
    algo.convMath = *math;
  } else if (parts[0] == "graph") {
    if (parts.size() != 4)
      return std::nullopt;
    std::optional<int64_t> engine = parseInt<int64_t>(field(parts[1], "engine"));
    std::optional<std::string_view> knobs = field(parts[2], "knobs");
    if (!engine || *engine < 0 || !knobs || !parseKnobs(*knobs, algo.graphKnobs))
      return std::nullopt;
    algo.kind = TunedAlgorithm::Kind::CudnnGraph;
    algo.graphEngine = *engine;
  } else {
    return std::nullopt;
  }
  std::optional<uint64_t> ws = parseInt<uint64_t>(field(parts.back(), "ws"));
  if (!ws)
    return std::nullopt;
  algo.workspaceBytes = *ws;
  return algo;
}

bool TimingCache::isValidKey(std::string_view key) {
  return !key.empty() && key.find_first_of("\t\n\r") == std::string_view::npos;
}

size_t TimingCache::parse(std::string_view text, const std::string &origin, const Warn &warn) {
  constexpr size_t kMaxLineWarnings = 10;
  size_t added = 0, lineNo = 0, pos = 0, badLines = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos)
      end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++lineNo;
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    if (line.empty() || line.front() == '#')
      continue;
    size_t tab = line.find('\t');
    std::optional<TunedAlgorithm> algo;
    if (tab != std::string_view::npos && tab > 0)
      algo = parseTunedAlgorithm(line.substr(tab + 1));
    if (!algo || line.find('\0') != std::string_view::npos) {
      // A foreign file can have millions of lines: name the first few, count the rest.
      ++badLines;
      if (warn && badLines <= kMaxLineWarnings)
        warn("timing cache " + origin + ":" + std::to_string(lineNo) +
             ": ignoring a malformed line (expected '<key> TAB gemm algo=<hex> ws=<n>', '<key> TAB conv algo=<n> "
             "math=<n> ws=<n>' or '<key> TAB graph engine=<n> knobs=<t>:<v>,...|- ws=<n>'); its problem will be "
             "tuned again");
      continue;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    entries_.insert_or_assign(std::string(line.substr(0, tab)), *algo);
    ++added;
  }
  if (warn && badLines > kMaxLineWarnings)
    warn("timing cache " + origin + ": " + std::to_string(badLines - kMaxLineWarnings) +
         " more malformed lines ignored (" + std::to_string(badLines) + " in all)");
  return added;
}

std::string TimingCache::serialize() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string out(kHeader);
  for (const auto &[key, algo] : entries_)
    out += key + "\t" + formatTunedAlgorithm(algo) + "\n";
  return out;
}

void TimingCache::load(const std::string &path, const Warn &warn) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    return;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (warn)
      warn("timing cache " + path + ": cannot be opened for reading; starting with an empty cache");
    return;
  }
  std::stringstream text;
  text << in.rdbuf();
  parse(text.str(), path, warn);
}

Status TimingCache::save(const std::string &path) const {
  std::string text = serialize();
  return plan::writeFileAtomically(
      path, std::span<const uint8_t>(reinterpret_cast<const uint8_t *>(text.data()), text.size()), "timing cache");
}

std::optional<TunedAlgorithm> TimingCache::find(const std::string &key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(key);
  if (it == entries_.end())
    return std::nullopt;
  return it->second;
}

bool TimingCache::insert(const std::string &key, const TunedAlgorithm &algo) {
  if (!isValidKey(key))
    return false;
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.insert_or_assign(key, algo);
  return true;
}

size_t TimingCache::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

} // namespace kiln::runtime
