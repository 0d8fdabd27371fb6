// Engine profiles: data/engines/<engine>/profile.json, read strictly (unknown keys are errors).
#include "attnsel/profile.hpp"

#include <mutex>

#include <fmt/format.h>

#include "core/suggest.hpp"
#include "matrix/embedded.hpp"
#include "matrix/json_reader.hpp"

namespace attnsel {
namespace {

using detail::json;
using detail::ObjectReader;

Launcher read_launcher(const json& j, const std::string& pointer, const std::string& engine) {
  ObjectReader r(j, pointer);
  Launcher l;
  l.engine = engine;
  l.label = r.string("label");
  l.module = r.optional_string("module").value_or("");
  l.program = r.optional_string("program").value_or("");
  if (r.has("subcommand")) l.subcommand = r.strings("subcommand");
  l.grammar = r.string("grammar");
  l.positional_model = r.boolean("positional_model", false);
  l.source = r.string("source");
  r.finish();
  if (l.module.empty() == l.program.empty())
    detail::fail(pointer, "a launcher names either a python \"module\" or a \"program\", not both or neither");
  if (!l.module.empty() && !l.subcommand.empty())
    detail::fail(r.child("subcommand"), "only a program has subcommands");
  return l;
}

EngineProfile read_profile(const json& j) {
  ObjectReader r(j, "");
  r.get("$schema");
  if (detail::expect_int(r.require("schema_version"), "/schema_version", 0, 1000) != 1)
    detail::fail("/schema_version", "this attnsel reads profile schema_version 1");
  EngineProfile p;
  p.engine = r.string("engine");
  p.title = r.string("title");
  p.description = r.optional_string("description").value_or("");
  p.source = r.string("source");
  const json& launchers = r.require("launchers");
  if (!launchers.is_array()) detail::fail("/launchers", "expected an array");
  for (std::size_t i = 0; i < launchers.size(); ++i)
    p.launchers.push_back(read_launcher(launchers[i], fmt::format("/launchers/{}", i), p.engine));
  r.finish();
  return p;
}

}  // namespace

Result<std::shared_ptr<const EngineProfile>> load_profile(std::string_view json_text, std::string_view origin) {
  auto parsed = detail::parse_json(json_text, origin);
  if (!parsed) return parsed.error();
  try {
    auto profile = std::make_shared<EngineProfile>(read_profile(*parsed));
    profile->origin = std::string(origin);
    return std::shared_ptr<const EngineProfile>(std::move(profile));
  } catch (const detail::ReadError& e) {
    return Error{ErrorCode::invalid_matrix, e.what(), fmt::format("{}#{}", origin, e.pointer), {}, {}};
  }
}

const std::vector<std::shared_ptr<const EngineProfile>>& builtin_profiles() {
  static const std::vector<std::shared_ptr<const EngineProfile>> all = [] {
    std::vector<std::shared_ptr<const EngineProfile>> out;
    for (const auto& file : embedded::files()) {
      const std::string_view name = file.name;
      if (name.substr(0, 8) != "engines/" || name.size() < 13 || name.substr(name.size() - 13) != "/profile.json") continue;
      auto profile = load_profile(file.text, fmt::format("built-in:{}", name));
      // The build validates the data (tests load every profile); a broken one cannot ship.
      if (profile) out.push_back(*profile);
    }
    return out;
  }();
  return all;
}

Result<std::shared_ptr<const EngineProfile>> builtin_profile(std::string_view engine) {
  std::vector<std::string> names;
  for (const auto& p : builtin_profiles()) {
    if (p->engine == engine) return p;
    names.push_back(p->engine);
  }
  return Error{ErrorCode::unknown_name, fmt::format("no engine profile '{}'", engine), "--engine", names,
               detail::closest_match(engine, names)};
}

const std::vector<Launcher>& builtin_launchers() {
  static const std::vector<Launcher> all = [] {
    std::vector<Launcher> out;
    for (const auto& p : builtin_profiles()) out.insert(out.end(), p->launchers.begin(), p->launchers.end());
    return out;
  }();
  return all;
}

}  // namespace attnsel
