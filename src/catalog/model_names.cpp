// Model names as deployment files write them, and where a local Hugging Face cache keeps them.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "attnsel/catalog.hpp"

namespace attnsel {
namespace {

// Suffixes a released variant adds to its base model's name (compared case-insensitively).
constexpr std::string_view kVariantSuffixes[] = {
    "-fp8-dynamic", "-fp8", "-fp4", "-nvfp4", "-mxfp4", "-int4", "-int8", "-w4a16", "-w8a8", "-w4a8", "-awq",
    "-gptq-int4", "-gptq-int8", "-gptq", "-gguf", "-bf16", "-fp16", "-instruct", "-chat", "-base", "-it",
    "-hf",  "-quantized.w4a16", "-quantized.w8a8",
};

bool iends_with(std::string_view s, std::string_view suffix) {
  if (s.size() < suffix.size()) return false;
  for (std::size_t i = 0; i < suffix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[s.size() - suffix.size() + i])) != suffix[i]) return false;
  }
  return true;
}

// "-0528", "-2507", "-20250514", "-v1.5" is kept (a version, not a date).
std::size_t date_suffix(std::string_view s) {
  const std::size_t dash = s.rfind('-');
  if (dash == std::string_view::npos) return 0;
  const std::string_view tail = s.substr(dash + 1);
  const bool digits = !tail.empty() && std::all_of(tail.begin(), tail.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
  });
  return digits && (tail.size() == 4 || tail.size() == 6 || tail.size() == 8) ? s.size() - dash : 0;
}

void add(std::vector<std::string>& out, std::string_view s) {
  if (!s.empty() && std::find(out.begin(), out.end(), s) == out.end()) out.emplace_back(s);
}

}  // namespace

std::vector<std::string> model_id_candidates(std::string_view name) {
  std::vector<std::string> out;
  while (!name.empty() && name.back() == '/') name.remove_suffix(1);
  add(out, name);
  // A local path names the model by its last component (/models/DeepSeek-R1-0528).
  std::string_view id = name;
  const bool path = !name.empty() && (name.front() == '/' || name.front() == '.' || name.front() == '~' ||
                                      std::count(name.begin(), name.end(), '/') > 1);
  if (path) {
    id = name.substr(name.rfind('/') + 1);
    add(out, id);
  }
  // Strip variants one at a time, in any order they were stacked: Qwen3-32B-Instruct-FP8-0528.
  std::string current(id);
  for (int round = 0; round < 6; ++round) {
    bool stripped = false;
    if (const std::size_t n = date_suffix(current)) {
      current.resize(current.size() - n);
      stripped = true;
    } else {
      for (std::string_view suffix : kVariantSuffixes) {
        if (iends_with(current, suffix) && current.size() > suffix.size()) {
          current.resize(current.size() - suffix.size());
          stripped = true;
          break;
        }
      }
    }
    if (!stripped) break;
    add(out, current);
  }
  // The name alone, without its organisation, as a last resort for catalogs keyed by name.
  const std::size_t slash = current.find('/');
  if (slash != std::string::npos) add(out, std::string_view(current).substr(slash + 1));
  return out;
}

std::optional<std::string> hf_cache_config_path(std::string_view model_id) {
  namespace fs = std::filesystem;
  const std::size_t slash = model_id.find('/');
  if (slash == std::string_view::npos || model_id.find('/', slash + 1) != std::string_view::npos) return std::nullopt;
  fs::path hub;
  if (const char* c = std::getenv("HF_HUB_CACHE"); c && *c) {
    hub = c;
  } else if (const char* h = std::getenv("HF_HOME"); h && *h) {
    hub = fs::path(h) / "hub";
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    hub = fs::path(home) / ".cache" / "huggingface" / "hub";
  } else {
    return std::nullopt;
  }
  std::string dir = "models--";
  dir.append(model_id.substr(0, slash)).append("--").append(model_id.substr(slash + 1));
  std::error_code ec;
  const fs::path snapshots = hub / dir / "snapshots";
  std::vector<std::string> found;
  for (fs::directory_iterator it(snapshots, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path config = it->path() / "config.json";
    if (fs::is_regular_file(config, ec)) found.push_back(config.string());
    if (found.size() > 256) break;
  }
  if (found.empty()) return std::nullopt;
  std::sort(found.begin(), found.end());
  return found.back();
}

}  // namespace attnsel
