#include "attnsel/backend_config.hpp"

#include <cmath>
#include <unordered_set>

#include <fmt/format.h>

#include "core/json_text.hpp"
#include "core/read_file.hpp"
#include "core/yaml_load.hpp"
#include "matrix/json_reader.hpp"

namespace attnsel {
namespace {

// Where errors point when the caller gives none: the value itself (the engine names the flag).
constexpr const char* kWhere = "backend config";

using detail::json;

ConfigValue from_json(const json& j) {
  ConfigValue v;
  v.text = j.is_string() ? j.get<std::string>() : detail::json_text(j);
  if (j.is_string()) {
    v.type = ConfigValue::Type::string;
  } else if (j.is_boolean()) {
    v.type = ConfigValue::Type::boolean;
    v.boolean = j.get<bool>();
  } else if (j.is_number_integer()) {
    v.type = ConfigValue::Type::integer;
    v.integer = j.get<long long>();
  } else if (j.is_number_float()) {
    v.type = ConfigValue::Type::number;
    v.number = j.get<double>();
  } else if (j.is_array() && std::all_of(j.begin(), j.end(), [](const json& e) { return e.is_number_integer(); })) {
    v.type = ConfigValue::Type::int_list;
    for (const auto& e : j) v.ints.push_back(e.get<long long>());
  } else {
    v.type = ConfigValue::Type::other;
  }
  return v;
}

Result<BackendConfig> from_object(const json& j, std::string origin) {
  if (!j.is_object())
    return Error{ErrorCode::invalid_argument,
                 fmt::format("--attention-backend-config: expected an object of parameters, got {}", detail::type_name(j)),
                 kWhere, {}, {}};
  BackendConfig c;
  c.origin = std::move(origin);
  for (auto it = j.begin(); it != j.end(); ++it) c.entries.emplace_back(it.key(), from_json(*it));
  return c;
}

// Splits on commas outside [] and quotes.
std::vector<std::string> split_pairs(std::string_view text) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  char quote = 0;
  for (char ch : text) {
    if (quote) {
      if (ch == quote) quote = 0;
    } else if (ch == '"' || ch == '\'') {
      quote = ch;
    } else if (ch == '[') {
      ++depth;
    } else if (ch == ']') {
      --depth;
    } else if (ch == ',' && depth == 0) {
      out.push_back(cur);
      cur.clear();
      continue;
    }
    cur += ch;
  }
  out.push_back(cur);
  return out;
}

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

#ifdef ATTNSEL_WITH_YAML
std::string yaml_where(const std::string& origin, const YAML::Node& n) {
  const YAML::Mark m = n.Mark();
  return m.is_null() ? origin : fmt::format("{}:{}:{}", origin, m.line + 1, m.column + 1);
}

// `n` passed check_yaml(): acyclic, bounded in nodes and depth, no duplicate keys.
json yaml_to_json(const YAML::Node& n, const std::string& origin) {
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      json o = json::object();
      for (const auto& kv : n) {
        if (!kv.first.IsScalar())
          throw detail::ReadError(yaml_where(origin, kv.first), "a parameter name must be a plain string, not a list or mapping");
        o[kv.first.Scalar()] = yaml_to_json(kv.second, origin);
      }
      return o;
    }
    case YAML::NodeType::Sequence: {
      json a = json::array();
      for (const auto& e : n) a.push_back(yaml_to_json(e, origin));
      return a;
    }
    case YAML::NodeType::Scalar: {
      const std::string s = n.Scalar();
      if (n.Tag() == "!") return s;  // quoted
      json parsed = json::parse(s, nullptr, false);
      if (!parsed.is_discarded() && !parsed.is_object() && !parsed.is_array()) return parsed;
      if (s == "True" || s == "yes") return true;
      if (s == "False" || s == "no") return false;
      return s;
    }
    default: return nullptr;
  }
}
#endif

}  // namespace

Result<BackendConfig> parse_backend_config(std::string_view text) {
  const std::string t = trim(std::string(text));
  if (t.size() > kMaxBackendConfigBytes) return Error{ErrorCode::invalid_argument, "larger than 1 MiB", kWhere, {}, {}};
  if (!t.empty() && t.front() == '{') {
    auto j = detail::parse_json(t, kWhere);
    if (!j) return j.error();
    return from_object(*j, "inline JSON");
  }
  BackendConfig c;
  c.origin = "key=value pairs";
  if (t.empty()) return c;
  std::unordered_set<std::string> seen;  // one lookup per pair: 100k pairs stay linear
  for (const std::string& raw : split_pairs(t)) {
    const std::string pair = trim(raw);
    const auto eq = pair.find('=');
    if (eq == std::string::npos || eq == 0)
      return Error{ErrorCode::invalid_argument,
                   fmt::format("expected key=value, got '{}' (the forms are: a JSON or YAML file, a JSON object, or "
                               "key=value pairs separated by commas)",
                               detail::shorten(pair, 80)),
                   kWhere, {}, {}};
    const std::string key = trim(pair.substr(0, eq));
    const std::string value = trim(pair.substr(eq + 1));
    // A value that reads as JSON (0.5, true, [1,2]) keeps that type; anything else is a string.
    json parsed = json::parse(value, nullptr, false);
    ConfigValue v = !parsed.is_discarded() && !parsed.is_object() ? from_json(parsed) : from_json(json(value));
    v.text = value;
    v.from_pairs = true;
    if (!seen.insert(key).second)
      return Error{ErrorCode::invalid_argument, fmt::format("parameter '{}' is given twice", detail::shorten(key, 64)),
                   kWhere, {}, {}};
    c.entries.emplace_back(key, std::move(v));
  }
  return c;
}

Result<BackendConfig> parse_backend_config_file(std::string_view contents, std::string_view path) {
  const std::string p(path);
  const bool yaml = p.size() >= 5 && (p.rfind(".yaml") == p.size() - 5 || p.rfind(".yml") == p.size() - 4);
  if (yaml) {
#ifdef ATTNSEL_WITH_YAML
    auto doc = detail::load_yaml(contents, p);
    if (!doc) return doc.error();
    try {
      return from_object(yaml_to_json(*doc, p), p);
    } catch (const detail::ReadError& e) {
      return Error{ErrorCode::parse_error, e.what(), e.pointer, {}, {}};
    } catch (const YAML::Exception& e) {
      return Error{ErrorCode::parse_error, detail::shorten(e.msg, 300), p, {}, {}};
    }
#else
    return Error{ErrorCode::invalid_argument, "this attnsel was built without YAML support (yaml-cpp): use a JSON file", p, {}, {}};
#endif
  }
  auto j = detail::parse_json(contents, p);
  if (!j) return j.error();
  return from_object(*j, p);
}

Result<BackendConfig> load_backend_config_file(const std::string& path) {
  auto contents = detail::read_file_bounded(path, kMaxBackendConfigBytes);
  if (!contents) return contents.error();
  return parse_backend_config_file(*contents, path);
}

}  // namespace attnsel
