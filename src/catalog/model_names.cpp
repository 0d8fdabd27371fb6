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

// A path part that names no model: a commit hash (a cache snapshot), the cache's own folders.
bool anonymous_part(std::string_view part) {
  if (part == "snapshots" || part == "blobs" || part == "refs" || part == "." || part == "..") return true;
  const bool hex = part.size() >= 12 && std::all_of(part.begin(), part.end(), [](char c) {
    return std::isxdigit(static_cast<unsigned char>(c)) != 0;
  });
  return hex;
}

// "models--openai--gpt-oss-20b" (a Hugging Face cache directory) -> "openai/gpt-oss-20b".
std::string cache_directory_id(std::string_view part) {
  constexpr std::string_view prefix = "models--";
  if (part.substr(0, prefix.size()) != prefix) return {};
  const std::string_view rest = part.substr(prefix.size());
  const std::size_t sep = rest.find("--");
  if (sep == std::string_view::npos || sep == 0 || sep + 2 >= rest.size()) return {};
  return std::string(rest.substr(0, sep)) + "/" + std::string(rest.substr(sep + 2));
}

// The name and its variants with quantisation, tuning and date suffixes removed, one at a time,
// in any order they were stacked: Qwen3-32B-Instruct-FP8-0528.
void add_with_variants(std::vector<std::string>& out, std::string_view id) {
  add(out, id);
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
}

}  // namespace

std::vector<std::string> model_id_candidates(std::string_view name) {
  std::vector<std::string> out;
  if (name.size() > 4096) return out;
  while (!name.empty() && name.back() == '/') name.remove_suffix(1);
  add(out, name);
  const bool path = !name.empty() && (name.front() == '/' || name.front() == '.' || name.front() == '~' ||
                                      std::count(name.begin(), name.end(), '/') > 1);
  if (!path) {
    const std::string cached = cache_directory_id(name);
    add_with_variants(out, cached.empty() ? name : std::string_view(cached));
    return out;
  }
  // A local path: its parts, last first, each before the ORG/NAME pair it ends. The last part that
  // names something is the model's directory (/models/DeepSeek-R1-0528); a pair of parts is a hub
  // id as a download tool lays it out (/data/openai/gpt-oss-20b/<snapshot>/); a cache directory
  // carries its id.
  std::vector<std::string_view> parts;
  for (std::size_t start = 0; start <= name.size() && parts.size() < 64;) {
    std::size_t slash = name.find('/', start);
    if (slash == std::string_view::npos) slash = name.size();
    const std::string_view part = name.substr(start, slash - start);
    if (!part.empty() && !anonymous_part(part)) parts.push_back(part);
    start = slash + 1;
  }
  for (std::size_t k = parts.size(); k-- > 0;) {
    const std::string cached = cache_directory_id(parts[k]);
    if (!cached.empty()) {
      add_with_variants(out, cached);
      continue;
    }
    add_with_variants(out, parts[k]);
    if (k > 0 && cache_directory_id(parts[k - 1]).empty() && parts[k - 1].find('.') == std::string_view::npos &&
        parts[k - 1] != "~")
      add(out, std::string(parts[k - 1]) + "/" + std::string(parts[k]));
  }
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
