// `attnsel matrix diff A B`: two matrices compared entry by entry on their normalised JSON.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attnsel/render.hpp"
#include "core/json_text.hpp"
#include "render/envelope.hpp"
#include "render/matrix_json.hpp"

namespace attnsel {
namespace {

using json = nlohmann::json;

struct FieldChange {
  std::string field;
  json from, to;
};

struct Change {
  std::string section;  // slots, backends, rules, selection
  std::string key;
  std::string kind;     // added, removed, changed
  std::vector<FieldChange> fields;
  json entry;           // the added or removed entry
};

// Provenance changes are not changes of behaviour.
bool ignored(const std::string& field) { return field == "source" || field == "note"; }

void compare_objects(const json& a, const json& b, const std::string& prefix, std::vector<FieldChange>& out) {
  for (auto it = a.begin(); it != a.end(); ++it) {
    if (ignored(it.key())) continue;
    const std::string field = prefix + it.key();
    if (!b.contains(it.key())) out.push_back({field, *it, nullptr});
    else if (b[it.key()] != *it) out.push_back({field, *it, b[it.key()]});
  }
  for (auto it = b.begin(); it != b.end(); ++it)
    if (!ignored(it.key()) && !a.contains(it.key())) out.push_back({prefix + it.key(), nullptr, *it});
}

// Cells have no name: the kinds and platforms they cover identify them.
std::string cell_key(const json& cell) {
  return fmt::format("{}/{}", fmt::join(cell["kinds"].get<std::vector<std::string>>(), ","),
                     fmt::join(cell["platforms"].get<std::vector<std::string>>(), ","));
}

void compare_backend(const json& a, const json& b, std::vector<FieldChange>& out) {
  json a_rest = a, b_rest = b;
  a_rest.erase("cells");
  b_rest.erase("cells");
  compare_objects(a_rest, b_rest, "", out);
  auto by_key = [](const json& cells) {
    std::map<std::string, json> m;
    for (const auto& c : cells) m[cell_key(c)] = c;
    return m;
  };
  auto ca = by_key(a["cells"]), cb = by_key(b["cells"]);
  for (const auto& [key, cell] : ca) {
    if (!cb.count(key)) out.push_back({"cell " + key, cell, nullptr});
    else compare_objects(cell, cb[key], "cell " + key + ": ", out);
  }
  for (const auto& [key, cell] : cb)
    if (!ca.count(key)) out.push_back({"cell " + key, nullptr, cell});
}

std::vector<Change> diff(const json& a, const json& b) {
  std::vector<Change> changes;
  auto keyed = [](const std::string& section, const json& e) {
    if (section == "backends") return e["slot"].get<std::string>() + ":" + e["name"].get<std::string>();
    if (section == "slots") return e["name"].get<std::string>();
    return e["id"].get<std::string>();
  };
  for (const char* section : {"slots", "backends", "rules", "selection"}) {
    const json empty = json::array();
    const json& ea = a.contains(section) ? a[section] : empty;
    const json& eb = b.contains(section) ? b[section] : empty;
    std::map<std::string, std::pair<std::size_t, const json*>> ma, mb;
    for (std::size_t i = 0; i < ea.size(); ++i) ma[keyed(section, ea[i])] = {i, &ea[i]};
    for (std::size_t i = 0; i < eb.size(); ++i) mb[keyed(section, eb[i])] = {i, &eb[i]};
    for (const auto& e : ea)
      if (!mb.count(keyed(section, e))) changes.push_back({section, keyed(section, e), "removed", {}, e});
    for (const auto& e : eb) {
      const std::string key = keyed(section, e);
      auto it = ma.find(key);
      if (it == ma.end()) {
        changes.push_back({section, key, "added", {}, e});
        continue;
      }
      Change c{section, key, "changed", {}, nullptr};
      if (std::string(section) == "backends") compare_backend(*it->second.second, e, c.fields);
      else compare_objects(*it->second.second, e, "", c.fields);
      if (!c.fields.empty()) changes.push_back(std::move(c));
    }
  }
  return changes;
}

std::string short_json(const json& j) {
  if (j.is_null()) return "(none)";
  std::string s = j.is_string() ? j.get<std::string>() : detail::json_text(j);
  if (s.size() > 160) s = s.substr(0, 157) + "...";
  return s;
}

std::string describe_entry(const std::string& section, const json& e) {
  if (section == "rules" || section == "selection") {
    std::string what = e.contains("message") ? e["message"].get<std::string>() : "";
    if (section == "selection") what = fmt::format("-> {}{}", e["backend"].get<std::string>(), what.empty() ? "" : ": " + what);
    return what;
  }
  if (section == "backends") return e.value("title", "");
  return e.value("title", "");
}

}  // namespace

std::string render_matrix_diff(const Matrix& from, const Matrix& to, MatrixFormat format) {
  const json a = matrix_json(from), b = matrix_json(to);
  const auto changes = diff(a, b);
  if (format == MatrixFormat::json) {
    json out;
    out["from"] = a["matrix"];
    out["to"] = b["matrix"];
    out["changes"] = json::array();
    for (const auto& c : changes) {
      json jc = {{"section", c.section}, {"key", c.key}, {"change", c.kind}};
      if (!c.entry.is_null()) jc["entry"] = c.entry;
      for (const auto& f : c.fields) jc["fields"].push_back({{"field", f.field}, {"from", f.from}, {"to", f.to}});
      out["changes"].push_back(jc);
    }
    out["count"] = changes.size();
    return detail::envelope_text("matrix-diff", std::move(out), 2) + "\n";
  }
  const bool md = format == MatrixFormat::markdown;
  std::string out = fmt::format("{}{} {} ({}) -> {} {} ({})\n", md ? "# " : "", from.info().engine, from.info().version,
                                from.info().origin, to.info().engine, to.info().version, to.info().origin);
  if (changes.empty()) return out + "\nno differences\n";
  std::string section;
  for (const auto& c : changes) {
    if (c.section != section) {
      section = c.section;
      out += md ? fmt::format("\n## {}\n\n", section) : fmt::format("\n{}\n", section);
    }
    const char* mark = c.kind == "added" ? "+" : c.kind == "removed" ? "-" : "~";
    out += fmt::format("{} {} {}", md ? "-" : " ", mark, md ? "`" + c.key + "`" : c.key);
    if (c.kind != "changed") {
      const std::string what = describe_entry(c.section, c.entry);
      out += what.empty() ? "\n" : fmt::format(": {}\n", what);
      continue;
    }
    out += "\n";
    for (const auto& f : c.fields)
      out += fmt::format("{}      {}: {} -> {}\n", md ? "  " : "", f.field, short_json(f.from), short_json(f.to));
  }
  out += fmt::format("\n{} changes\n", changes.size());
  return out;
}

std::size_t matrix_change_count(const Matrix& from, const Matrix& to) { return diff(matrix_json(from), matrix_json(to)).size(); }

}  // namespace attnsel
