// Settings files (include/attnsel/settings.hpp), read with toml++ (header-only here: no runtime
// dependency). Every error names the file, line and column the parser gives.
#include "attnsel/settings.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#define TOML_EXCEPTIONS 0
#define TOML_HEADER_ONLY 1
#include <toml++/toml.h>

#include "attnsel/matrix.hpp"
#include "attnsel/suggest.hpp"
#include "attnsel/types.hpp"
#include "core/read_file.hpp"

namespace attnsel {

namespace fs = std::filesystem;

const std::vector<std::string>& settings_keys() {
  static const std::vector<std::string> keys = {
      "gpus",   "cuda",   "engine-version", "sglang-version", "vllm-version", "strict",  "unknown-model",
      "model-kind", "select", "ignore", "per-file-ignores", "exclude", "include", "gitignore",
      "report-unused-suppressions"};
  return keys;
}

namespace {

constexpr std::size_t kMaxSettingsBytes = 1u << 20;

std::string place(const std::string& file, const toml::source_region& r) {
  if (r.begin.line == 0) return file;
  return fmt::format("{}:{}:{}", file, r.begin.line, r.begin.column);
}

std::string type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a number";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::array: return "an array";
    case toml::node_type::table: return "a table";
    default: return "a date or time";
  }
}

bool is_pyproject(const std::string& file) { return fs::path(file).filename() == "pyproject.toml"; }

}  // namespace

Result<Settings> parse_settings(std::string_view text, const std::string& file, bool pyproject) {
  toml::parse_result parsed = toml::parse(text, file);
  if (!parsed) {
    const toml::parse_error& e = parsed.error();
    return Error{ErrorCode::parse_error, fmt::format("not valid TOML: {}", e.description()), place(file, e.source()), {}, {}};
  }
  const toml::table* table = &parsed.table();
  if (pyproject) {
    table = parsed.table()["tool"]["attnsel"].as_table();
    if (table == nullptr)
      return Error{ErrorCode::invalid_argument, "has no [tool.attnsel] table: attnsel's settings go there", file, {}, {}};
  }
  Settings s;
  s.file = file;
  {
    std::error_code ec;
    fs::path dir = fs::path(file).parent_path();
    fs::path abs = fs::absolute(dir.empty() ? fs::path(".") : dir, ec);
    s.rules.base = (ec ? dir : abs).lexically_normal().string();
  }
  auto bad = [&](const toml::node& n, std::string message) {
    return Error{ErrorCode::invalid_argument, std::move(message), place(file, n.source()), {}, {}};
  };
  auto string_of = [&](const toml::node& n, std::string_view key) -> Result<std::string> {
    if (auto v = n.value<std::string>()) return *v;
    return bad(n, fmt::format("{} must be a string, not {}", key, type_name(n)));
  };
  auto strings_of = [&](const toml::node& n, std::string_view key) -> Result<std::vector<std::pair<std::string, std::string>>> {
    std::vector<std::pair<std::string, std::string>> out;  // value, where
    if (auto v = n.value<std::string>()) {
      out.emplace_back(*v, place(file, n.source()));
      return out;
    }
    const toml::array* a = n.as_array();
    if (a == nullptr) return bad(n, fmt::format("{} must be a list of strings, not {}", key, type_name(n)));
    for (const toml::node& item : *a) {
      auto v = item.value<std::string>();
      if (!v) return bad(item, fmt::format("{} must be a list of strings; this element is {}", key, type_name(item)));
      out.emplace_back(*v, place(file, item.source()));
    }
    return out;
  };
  auto choice_of = [&](const toml::node& n, std::string_view key, const std::vector<std::string>& choices) -> Result<std::string> {
    auto v = string_of(n, key);
    if (!v) return v;
    if (std::find(choices.begin(), choices.end(), *v) != choices.end()) return v;
    Error e = bad(n, fmt::format("{} = '{}': choose one of {}", key, *v, fmt::join(choices, ", ")));
    e.code = ErrorCode::unknown_name;
    e.choices = choices;
    e.suggestion = closest_name(*v, choices);
    return e;
  };
  auto release_of = [&](const toml::node& n, std::string_view key) -> Result<std::string> {
    auto v = string_of(n, key);
    if (v && !parse_release(*v)) return bad(n, fmt::format("{} = '{}': expected a release like 0.5.3", key, *v));
    return v;
  };
  auto rules_of = [&](const toml::node& n, std::string_view key) -> Result<std::vector<RulePattern>> {
    auto list = strings_of(n, key);
    if (!list) return list.error();
    std::vector<RulePattern> out;
    for (auto& [pattern, where] : *list) {
      if (auto e = check_rule_pattern(pattern, where)) return *e;
      out.push_back({std::move(pattern), std::move(where)});
    }
    return out;
  };

  for (auto&& [key, node] : *table) {
    const std::string k(key.str());
    const std::string where = place(file, key.source());
    const std::vector<std::string>& keys = settings_keys();
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) {
      Error e{ErrorCode::unknown_name,
              fmt::format("unknown key '{}' (valid keys: {})", k, fmt::join(keys, ", ")), where, keys, closest_name(k, keys)};
      return e;
    }
    s.where[k] = where;
    if (k == "gpus") {
      auto list = strings_of(node, k);
      if (!list) return list.error();
      std::string joined;
      for (const auto& [gpu, at] : *list) joined += (joined.empty() ? "" : ",") + gpu;
      if (joined.empty()) return bad(node, "gpus is empty: name the target GPUs, e.g. \"sm90,H100\"");
      s.gpus = joined;
    } else if (k == "cuda") {
      auto v = string_of(node, k);
      if (!v) return v.error();
      s.cuda = *v;
    } else if (k == "engine-version" || k == "sglang-version" || k == "vllm-version") {
      auto v = release_of(node, k);
      if (!v) return v.error();
      (k == "engine-version" ? s.engine_version : k == "sglang-version" ? s.sglang_version : s.vllm_version) = *v;
    } else if (k == "unknown-model") {
      auto v = choice_of(node, k, {"note", "error"});
      if (!v) return v.error();
      s.unknown_model = *v;
    } else if (k == "model-kind") {
      auto v = choice_of(node, k, {"mha", "mla", "gdn", "dsa"});
      if (!v) return v.error();
      s.model_kind = *v;
    } else if (k == "strict" || k == "gitignore" || k == "report-unused-suppressions") {
      auto v = node.value<bool>();
      if (!v || !node.is_boolean()) return bad(node, fmt::format("{} must be true or false, not {}", k, type_name(node)));
      (k == "strict" ? s.strict : k == "gitignore" ? s.gitignore : s.report_unused_suppressions) = *v;
    } else if (k == "select" || k == "ignore") {
      auto v = rules_of(node, k);
      if (!v) return v.error();
      (k == "select" ? s.rules.select : s.rules.ignore) = std::move(*v);
    } else if (k == "exclude" || k == "include") {
      auto v = strings_of(node, k);
      if (!v) return v.error();
      for (auto& [glob, at] : *v) (k == "exclude" ? s.exclude : s.include).push_back(std::move(glob));
    } else if (k == "per-file-ignores") {
      const toml::table* globs = node.as_table();
      if (globs == nullptr)
        return bad(node, fmt::format("per-file-ignores must be a table of GLOB = [rule patterns], not {}", type_name(node)));
      for (auto&& [glob, rules] : *globs) {
        auto v = rules_of(rules, fmt::format("per-file-ignores.\"{}\"", glob.str()));
        if (!v) return v.error();
        s.rules.per_path.push_back({std::string(glob.str()), place(file, glob.source()), std::move(*v)});
      }
    }
  }
  return s;
}

Result<Settings> read_settings(const std::string& file) {
  auto text = detail::read_file_bounded(file, kMaxSettingsBytes);
  if (!text) return text.error();
  return parse_settings(*text, file, is_pyproject(file));
}

Result<std::optional<std::string>> find_settings_file(const std::string& path) {
  std::error_code ec;
  const fs::path cwd = fs::current_path(ec);
  fs::path start = path.empty() || path == "-" ? cwd : fs::path(path);
  if (start.is_relative()) start = cwd / start;
  start = start.lexically_normal();
  struct stat st {};
  if (::stat(start.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) start = start.parent_path();
  // As shown: relative to the current directory when under it.
  auto shown = [&](const fs::path& p) {
    const fs::path rel = p.lexically_relative(cwd);
    const std::string r = rel.generic_string();
    return r.empty() || r.rfind("..", 0) == 0 ? p.string() : r;
  };
  auto regular = [](const fs::path& p) {
    struct stat s {};
    return ::stat(p.c_str(), &s) == 0 && S_ISREG(s.st_mode);
  };
  fs::path dir = start;
  for (int depth = 0; depth < 256 && !dir.empty(); ++depth) {
    if (const fs::path own = dir / ".attnsel.toml"; regular(own)) return std::optional<std::string>(shown(own));
    if (const fs::path py = dir / "pyproject.toml"; regular(py)) {
      auto text = detail::read_file_bounded(py.string(), kMaxSettingsBytes);
      if (!text) return text.error();
      if (text->find("attnsel") != std::string::npos) {
        toml::parse_result parsed = toml::parse(*text, py.string());
        if (!parsed)
          return Error{ErrorCode::parse_error, fmt::format("not valid TOML: {}", parsed.error().description()),
                       place(shown(py), parsed.error().source()), {}, {}};
        if (parsed.table()["tool"]["attnsel"].as_table() != nullptr) return std::optional<std::string>(shown(py));
      }
    }
    struct stat git {};
    if (::stat((dir / ".git").c_str(), &git) == 0) break;  // the repository's root: nothing above it is the project's
    if (dir == dir.root_path()) break;
    dir = dir.parent_path();
  }
  return std::optional<std::string>();
}

}  // namespace attnsel
