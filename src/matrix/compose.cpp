#include "matrix/compose.hpp"

#include <filesystem>
#include <list>
#include <optional>
#include <string_view>
#include <utility>
#include <unordered_map>

#include <fmt/format.h>

#include "core/read_file.hpp"
#include "core/suggest.hpp"
#include "matrix/embedded.hpp"

namespace attnsel::detail {
namespace {

constexpr int kMaxExtendsDepth = 8;
constexpr const char* kBuiltin = "built-in:";

// The names built-in matrices had before each engine's files moved into data/engines/<engine>/:
// overlays written then extend them by these names.
constexpr std::pair<std::string_view, std::string_view> kFormerNames[] = {
    {"sglang.json", "engines/sglang/matrix-0.5.12.json"},
    {"sglang-main.json", "engines/sglang/matrix-0.5.13.json"},
    {"sglang-0.4.6.json", "engines/sglang/matrix-0.4.6.json"},
    {"sglang-0.5.3.json", "engines/sglang/matrix-0.5.3.json"},
    {"sglang-diffusion.json", "engines/sglang-diffusion/matrix.json"},
    {"vllm.json", "engines/vllm/matrix.json"},
};

// A built-in matrix by name: beside the built-in file that names it, by its path under data/, or by
// a former name.
std::optional<std::string> builtin_name(std::string_view name, std::string_view from) {
  if (from.rfind(kBuiltin, 0) == 0) {
    const std::string_view from_path = from.substr(std::string_view(kBuiltin).size());
    const std::size_t slash = from_path.rfind('/');
    if (slash != std::string_view::npos) {
      std::string beside = std::string(from_path.substr(0, slash + 1)) + std::string(name);
      if (!embedded::find(beside).empty()) return beside;
    }
  }
  if (!embedded::find(name).empty()) return std::string(name);
  for (const auto& [former, now] : kFormerNames)
    if (name == former) return std::string(now);
  return std::nullopt;
}

// The key that identifies an entry of each keyed array.
std::string entry_key(const std::string& section, const json& entry, const std::string& ptr) {
  ObjectReader r(entry, ptr);
  if (section == "backends") {
    if (!r.has("slot") || !r.has("name")) fail(ptr, "a backend entry needs \"slot\" and \"name\"");
    return expect_string(entry["slot"], ptr + "/slot") + ":" + expect_string(entry["name"], ptr + "/name");
  }
  const char* key = section == "slots" ? "name" : "id";
  if (!r.has(key)) fail(ptr, fmt::format("an entry of \"{}\" needs \"{}\"", section, key));
  return expect_string(entry[key], ptr + "/" + key);
}

// Linear in base + overlay: each key is computed once and found through a hash map (20k overlay
// rules used to recompute every base key for every entry, 43 s).
void merge_array(json& base, const json& overlay, const std::string& section, const std::string& ptr) {
  if (!overlay.is_array()) fail(ptr, fmt::format("expected an array, got {}", type_name(overlay)));
  if (!base.is_array()) base = json::array();
  using Entries = std::list<std::pair<std::string, json>>;
  Entries entries;
  std::unordered_map<std::string, Entries::iterator> by_key;
  for (json& e : base) {
    std::string key = entry_key(section, e, "(base)");
    entries.emplace_back(key, std::move(e));
    by_key.emplace(std::move(key), std::prev(entries.end()));  // the first of equal keys, as before
  }
  auto find = [&](const std::string& k) -> std::optional<Entries::iterator> {
    auto it = by_key.find(k);
    if (it == by_key.end()) return std::nullopt;
    return it->second;
  };
  for (std::size_t i = 0; i < overlay.size(); ++i) {
    const std::string p = fmt::format("{}/{}", ptr, i);
    json entry = overlay[i];
    const std::string key = entry_key(section, entry, p);
    const auto at = find(key);
    if (entry.contains("remove")) {
      if (entry["remove"] != true || entry.size() > (section == "backends" ? 3u : 2u))
        fail(p, "a removal is {\"<key>\": ..., \"remove\": true} and nothing else");
      if (!at) fail(p, fmt::format("removes \"{}\", which the base does not have", key));
      entries.erase(*at);
      by_key.erase(key);
      continue;
    }
    std::optional<std::string> after, before;
    if (entry.contains("after")) after = expect_string(entry["after"], p + "/after");
    if (entry.contains("before")) before = expect_string(entry["before"], p + "/before");
    entry.erase("after");
    entry.erase("before");
    if (at) {
      if (after || before) fail(p, fmt::format("\"{}\" replaces an entry in place; \"after\"/\"before\" only place new ones", key));
      (*at)->second = std::move(entry);
      continue;
    }
    Entries::iterator placed;
    if (after || before) {
      const std::string anchor = after ? *after : *before;
      const auto pos = find(anchor);
      if (!pos) fail(p + (after ? "/after" : "/before"), fmt::format("no entry \"{}\" to place it next to", anchor));
      placed = entries.emplace(after ? std::next(*pos) : *pos, key, std::move(entry));
    } else {
      placed = entries.emplace(entries.end(), key, std::move(entry));
    }
    by_key.emplace(key, placed);
  }
  json merged = json::array();
  merged.get_ref<json::array_t&>().reserve(entries.size());
  for (auto& e : entries) merged.push_back(std::move(e.second));
  base = std::move(merged);
}

void merge_object(json& base, const json& overlay, const std::string& ptr) {
  if (!overlay.is_object()) fail(ptr, fmt::format("expected an object, got {}", type_name(overlay)));
  for (auto it = overlay.begin(); it != overlay.end(); ++it) {
    if (it->is_null()) base.erase(it.key());  // "feature": null removes it
    else base[it.key()] = *it;
  }
}

}  // namespace

MatrixResolver default_resolver() {
  return [](std::string_view name, std::string_view from) -> Result<SourceText> {
    const std::string from_s(from);
    if (from_s.rfind(kBuiltin, 0) != 0) {
      std::filesystem::path path = std::filesystem::path(from_s).parent_path() / std::string(name);
      std::error_code ec;
      if (std::filesystem::exists(path, ec)) {
        // The same bounded reader as --matrix: a base is no way around the 64 MiB cap.
        auto text = read_file_bounded(path.string());
        if (!text) return text.error();
        return SourceText{std::move(*text), path.string()};
      }
    }
    const std::optional<std::string> builtin = builtin_name(name, from_s);
    if (!builtin)
      return Error{ErrorCode::io_error,
                   fmt::format("\"extends\": no matrix \"{}\" next to this file or among the built-in ones", name), from_s, {}, {}};
    return SourceText{std::string(embedded::find(*builtin)), std::string(kBuiltin) + *builtin};
  };
}

Result<json> compose(json document, const std::string& origin, const MatrixResolver& resolve, int depth) {
  if (!document.is_object() || !document.contains("extends")) return document;
  if (depth >= kMaxExtendsDepth)
    return Error{ErrorCode::invalid_matrix, fmt::format("\"extends\" chains deeper than {} files (a cycle?)", kMaxExtendsDepth),
                 origin + "#/extends", {}, {}};
  if (!document["extends"].is_string())
    return Error{ErrorCode::invalid_matrix, "\"extends\" names a matrix file (a string)", origin + "#/extends", {}, {}};
  const std::string base_name = document["extends"].get<std::string>();
  auto base_text = resolve(base_name, origin);
  if (!base_text) return base_text.error();
  auto base_json = parse_json(base_text->text, base_text->origin);
  if (!base_json) return base_json.error();
  auto base = compose(std::move(*base_json), base_text->origin, resolve, depth + 1);
  if (!base) return base.error();
  json merged = std::move(*base);
  try {
    for (auto it = document.begin(); it != document.end(); ++it) {
      const std::string& key = it.key();
      const std::string ptr = "/" + escape_pointer(key);
      if (key == "extends" || key == "$schema") continue;
      if (key == "schema_version") {
        if (*it != merged["schema_version"]) fail(ptr, "an extending matrix has its base's schema_version");
      } else if (key == "matrix" || key == "features") {
        merge_object(merged[key], *it, ptr);
      } else if (key == "slots" || key == "backends" || key == "rules" || key == "selection") {
        merge_array(merged[key], *it, key, ptr);
      } else {
        static const std::vector<std::string> valid = {"extends", "schema_version", "matrix", "features",
                                                       "slots",   "backends",       "rules",  "selection"};
        const std::string hint = closest_match(key, valid);
        fail(ptr, fmt::format("unknown key \"{}\" in an extending matrix{}; valid: {}", shorten(key, 64),
                              hint.empty() ? "" : fmt::format(" (did you mean \"{}\"?)", hint), fmt::join(valid, ", ")));
      }
    }
  } catch (const ReadError& e) {
    return Error{ErrorCode::invalid_matrix, e.what(), fmt::format("{}#{}", origin, e.pointer), {}, {}};
  }
  merged["$composed_from"] = base_text->origin;
  return merged;
}

}  // namespace attnsel::detail
