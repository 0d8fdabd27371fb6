// Engine profiles: data/engines/<engine>/profile.json, read strictly (unknown keys are errors).
#include "attnsel/profile.hpp"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <sstream>

#include <fmt/format.h>

#include "attnsel/matrix.hpp"

#include "core/suggest.hpp"
#include "matrix/embedded.hpp"
#include "matrix/image.hpp"
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
  if (r.has("images")) l.images = r.strings("images");
  l.source = r.string("source");
  r.finish();
  for (std::size_t i = 0; i < l.images.size(); ++i) {
    const std::string& image = l.images[i];
    const bool plain = !image.empty() && image.find_first_of(":@ \t") == std::string::npos && image.front() != '/' &&
                       image.back() != '/' &&
                       std::none_of(image.begin(), image.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
    if (!plain)
      detail::fail(fmt::format("{}/images/{}", pointer, i),
                   fmt::format("'{}' is not an image repository: lowercase, without a tag (:) or digest (@)", image));
  }
  if (l.module.empty() == l.program.empty())
    detail::fail(pointer, "a launcher names either a python \"module\" or a \"program\", not both or neither");
  if (!l.module.empty() && !l.subcommand.empty())
    detail::fail(r.child("subcommand"), "only a program has subcommands");
  return l;
}

constexpr int kManyValues = std::numeric_limits<int>::max();

ArgAction parse_action(std::string_view a) {
  if (a == "store") return ArgAction::store;
  if (a == "store_true") return ArgAction::store_true;
  if (a == "store_false") return ArgAction::store_false;
  if (a == "store_const") return ArgAction::store_const;
  if (a == "append") return ArgAction::append;
  if (a == "count") return ArgAction::count;
  if (a == "boolean_optional") return ArgAction::boolean_optional;
  if (a == "help") return ArgAction::help;
  if (a == "version") return ArgAction::version;
  return ArgAction::other;
}

ArgType parse_type(std::string_view t) {
  if (t == "str") return ArgType::string;
  if (t == "int") return ArgType::integer;
  if (t == "float") return ArgType::number;
  if (t == "json") return ArgType::json;
  return ArgType::other;
}

std::string scalar_text(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

GrammarFlag read_flag(const json& j, const std::string& pointer) {
  ObjectReader r(j, pointer);
  GrammarFlag f;
  f.names = r.strings("names");
  if (f.names.empty()) detail::fail(r.child("names"), "a flag needs at least one option string");
  for (const std::string& n : f.names)
    if (n.size() < 2 || n[0] != '-') detail::fail(r.child("names"), fmt::format("'{}' is not an option string", n));
  if (r.has("deprecated_names")) f.deprecated_names = r.strings("deprecated_names");
  f.dest = r.optional_string("dest").value_or("");
  f.action_name = r.optional_string("action").value_or("store");
  f.action = parse_action(f.action_name);
  if (const json* t = r.get("type"); t && !t->is_null()) f.type_name = detail::expect_string(*t, r.child("type"));
  f.type = f.type_name.empty() ? ArgType::string : parse_type(f.type_name);
  switch (f.action) {
    case ArgAction::store_true:
    case ArgAction::store_false:
    case ArgAction::store_const:
    case ArgAction::count:
    case ArgAction::help:
    case ArgAction::version:
    case ArgAction::boolean_optional: f.nargs_min = f.nargs_max = 0; break;
    default: break;
  }
  const json* nargs_value = r.get("nargs");
  // A custom Action of unknown arity: take a value when one follows, never demand one.
  if (f.action == ArgAction::other && (!nargs_value || nargs_value->is_null())) f.nargs_min = 0;
  if (const json* n = nargs_value; n && !n->is_null()) {
    if (n->is_number_integer()) {
      f.nargs_min = f.nargs_max = detail::expect_int(*n, r.child("nargs"), 0, 1000);
    } else {
      const std::string nargs = detail::expect_string(*n, r.child("nargs"));
      if (nargs == "?") f.nargs_min = 0, f.nargs_max = 1;
      else if (nargs == "*") f.nargs_min = 0, f.nargs_max = kManyValues;
      else if (nargs == "+") f.nargs_min = 1, f.nargs_max = kManyValues;
      else detail::fail(r.child("nargs"), fmt::format("expected null, an integer, \"?\", \"*\" or \"+\", got \"{}\"", nargs));
    }
  }
  if (const json* c = r.get("choices"); c && !c->is_null()) {
    if (!c->is_array()) detail::fail(r.child("choices"), "expected an array or null");
    for (const json& v : *c) f.choices.push_back(scalar_text(v));
  }
  for (const char* informational : {"default", "const", "file", "choices_expr", "choices_unresolved", "default_suppressed",
                                    "help_suppressed", "help"})
    r.get(informational);
  f.required = r.boolean("required", false);
  f.deprecated = r.boolean("deprecated", false);
  f.removed = r.boolean("removed", false);
  if (const json* v = r.get("replacement"); v && !v->is_null()) f.replacement = detail::expect_string(*v, r.child("replacement"));
  if (const json* l = r.get("line"); l && !l->is_null()) f.line = detail::expect_int(*l, r.child("line"), 0, 10000000);
  r.finish();
  return f;
}

void index_grammar(Grammar& g, const std::string& origin) {
  g.index.clear();
  for (std::size_t i = 0; i < g.flags.size(); ++i)
    for (const std::string& n : g.flags[i].names) g.index.emplace_back(n, i);
  std::sort(g.index.begin(), g.index.end());
  for (std::size_t i = 1; i < g.index.size(); ++i)
    if (g.index[i].first == g.index[i - 1].first)
      detail::fail(fmt::format("/flags/{}", g.index[i].second),
                   fmt::format("{} is declared twice in {} (argparse refuses conflicting option strings)",
                               g.index[i].first, origin));
}

Grammar read_grammar(const json& j, std::string name, std::string since, const std::string& origin) {
  ObjectReader r(j, "");
  r.get("$schema");
  Grammar g;
  g.name = std::move(name);
  g.since = std::move(since);
  g.source = r.string("source");
  g.engine_version = r.optional_string("engine_version").value_or("");
  r.get("extracted_by");
  r.get("note");
  r.get("prog");
  g.allow_abbrev = r.boolean("allow_abbrev", true);
  g.complete = r.boolean("complete", true);
  g.underscore_dashes = r.boolean("underscore_dashes", false);
  g.dotted_keys = r.boolean("dotted_keys", false);
  if (const json* c = r.get("config_flag"); c && !c->is_null()) g.config_flag = detail::expect_string(*c, r.child("config_flag"));
  if (const json* c = r.get("config_merge"); c && !c->is_null()) g.config_merge = detail::expect_string(*c, r.child("config_merge"));
  const json& flags = r.require("flags");
  if (!flags.is_array()) detail::fail("/flags", "expected an array");
  g.flags.reserve(flags.size());
  for (std::size_t i = 0; i < flags.size(); ++i) g.flags.push_back(read_flag(flags[i], fmt::format("/flags/{}", i)));
  // argparse gives every parser -h/--help unless it is built with add_help=False.
  if (r.boolean("add_help", true)) {
    GrammarFlag help;
    help.names = {"-h", "--help"};
    help.dest = "help";
    help.action = ArgAction::help;
    help.action_name = "help";
    help.nargs_min = help.nargs_max = 0;
    help.line = 0;
    g.flags.push_back(std::move(help));
  }
  if (const json* p = r.get("positionals"); p && !(p->is_array() && p->empty()))
    detail::fail("/positionals", "positional arguments are not supported yet; the launcher's positional_model covers MODEL");
  r.finish();
  index_grammar(g, origin);
  return g;
}

Vocabulary read_vocabulary(const json& j, const std::string& pointer, std::string name) {
  ObjectReader r(j, pointer);
  Vocabulary v;
  v.name = std::move(name);
  v.source = r.string("source");
  const json& spellings = r.require("spellings");
  if (!spellings.is_object()) detail::fail(r.child("spellings"), "expected an object: spelling -> attnsel's name or null");
  for (const auto& [k, value] : spellings.items()) {
    if (value.is_null()) v.spellings.emplace_back(k, std::nullopt);
    else v.spellings.emplace_back(k, detail::expect_string(value, r.child("spellings") + "/" + detail::escape_pointer(k)));
  }
  r.finish();
  return v;
}

SpeculativeDefaults read_speculative(const json& j) {
  ObjectReader r(j, "/speculative");
  SpeculativeDefaults s;
  s.source = r.string("source");
  s.algorithms = r.strings("algorithms");
  if (const json* a = r.get("aliases")) {
    if (!a->is_object()) detail::fail(r.child("aliases"), "expected an object: alias -> algorithm");
    for (const auto& [k, v] : a->items())
      s.algorithm_aliases.emplace_back(k, detail::expect_string(v, r.child("aliases") + "/" + detail::escape_pointer(k)));
  }
  s.auto_when_unset = r.strings("auto_when_unset");
  const json& topk = r.require("auto_topk");
  if (!topk.is_array()) detail::fail(r.child("auto_topk"), "expected an array");
  for (std::size_t i = 0; i < topk.size(); ++i) {
    ObjectReader t(topk[i], fmt::format("/speculative/auto_topk/{}", i));
    SpeculativeDefaults::Topk entry;
    if (t.has("architectures")) entry.architectures = t.strings("architectures");
    if (t.has("algorithms")) entry.algorithms = t.strings("algorithms");
    entry.topk = detail::expect_int(t.require("topk"), t.child("topk"), 1, 1 << 16);
    t.finish();
    s.topk.push_back(std::move(entry));
  }
  r.finish();
  return s;
}

struct Binding {
  std::vector<std::string> flags;
  std::string field;
  std::string key;                        // a key of the flag's JSON value; "" for the value itself
  bool upper_case = false;                // "case": "upper"
  std::vector<std::string> unset_values;  // "unset": values that mean the flag is not given
};

EngineProfile read_profile(const json& j, const std::string& origin, const ProfileFileReader& read_file) {
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

  std::vector<Binding> bindings;
  if (const json* b = r.get("bindings")) {
    if (!b->is_array()) detail::fail("/bindings", "expected an array");
    for (std::size_t i = 0; i < b->size(); ++i) {
      ObjectReader br((*b)[i], fmt::format("/bindings/{}", i));
      Binding binding{br.strings("flags"), br.string("field")};
      binding.key = br.optional_string("key").value_or("");
      if (auto c = br.optional_string("case")) {
        if (*c != "upper") detail::fail(br.child("case"), fmt::format("unknown case '{}'; valid: upper", *c));
        binding.upper_case = true;
      }
      binding.unset_values = br.strings("unset");
      br.finish();
      bindings.push_back(std::move(binding));
    }
  }
  if (const json* v = r.get("vocabularies")) {
    if (!v->is_object()) detail::fail("/vocabularies", "expected an object: name -> vocabulary");
    for (const auto& [name, voc] : v->items())
      p.vocabularies.push_back(read_vocabulary(voc, "/vocabularies/" + detail::escape_pointer(name), name));
  }
  if (const json* s = r.get("speculative")) p.speculative = read_speculative(*s);
  p.tp_heads_source = r.optional_string("tp_heads_source").value_or("");
  if (const json* e = r.get("environment")) {
    if (!e->is_array()) detail::fail("/environment", "expected an array");
    for (std::size_t i = 0; i < e->size(); ++i) {
      ObjectReader er((*e)[i], fmt::format("/environment/{}", i));
      EngineProfile::EnvBinding b;
      b.variable = er.string("variable");
      b.field = er.optional_string("field").value_or("");
      b.replacement = er.optional_string("replacement").value_or("");
      for (auto [key, out] : {std::pair{"deprecated_since", &b.deprecated_since}, std::pair{"ignored_since", &b.ignored_since}}) {
        *out = er.optional_string(key).value_or("");
        if (!out->empty() && !parse_release(*out)) detail::fail(er.child(key), fmt::format("'{}' is not a release", *out));
      }
      if (const json* a = er.get("aliases")) {
        if (!a->is_object()) detail::fail(er.child("aliases"), "expected an object: older spelling -> current spelling");
        for (const auto& [from, to] : a->items())
          b.aliases.emplace_back(from, detail::expect_string(to, er.child("aliases") + "/" + detail::escape_pointer(from)));
      }
      if (const json* rules = er.get("rules")) {
        if (!rules->is_array()) detail::fail(er.child("rules"), "expected an array");
        for (std::size_t k = 0; k < rules->size(); ++k) {
          ObjectReader rr((*rules)[k], fmt::format("{}/{}", er.child("rules"), k));
          EngineProfile::EnvRule rule;
          rule.id = rr.string("id");
          rule.values = rr.strings("values");
          rule.field = rr.string("field");
          if (rr.has("min")) rule.min = detail::expect_int(rr.require("min"), rr.child("min"), -1000000, 1000000);
          if (rr.has("max")) rule.max = detail::expect_int(rr.require("max"), rr.child("max"), -1000000, 1000000);
          if (!rule.min && !rule.max) detail::fail(rr.pointer(), "a rule gives the field's allowed \"min\" or \"max\"");
          rule.severity = rr.optional_string("severity").value_or("error");
          if (rule.severity != "info" && rule.severity != "warning" && rule.severity != "error")
            detail::fail(rr.child("severity"), fmt::format("'{}' is not a severity; valid: info, warning, error", rule.severity));
          for (auto [key, out] : {std::pair{"since", &rule.since}, std::pair{"until", &rule.until}}) {
            *out = rr.optional_string(key).value_or("");
            if (!out->empty() && !parse_release(*out)) detail::fail(rr.child(key), fmt::format("'{}' is not a release", *out));
          }
          rule.message = rr.string("message");
          rule.source = rr.string("source");
          rr.finish();
          b.rules.push_back(std::move(rule));
        }
      }
      b.source = er.string("source");
      er.finish();
      if (b.field.empty() && b.rules.empty() && b.ignored_since.empty() && b.deprecated_since.empty())
        detail::fail(fmt::format("/environment/{}", i),
                     "a variable stands for a request \"field\", has \"rules\", or is deprecated or ignored from a release");
      p.environment.push_back(std::move(b));
    }
  }
  if (const json* h = r.get("handoffs")) {
    if (!h->is_array()) detail::fail("/handoffs", "expected an array");
    for (std::size_t i = 0; i < h->size(); ++i) {
      ObjectReader hr((*h)[i], fmt::format("/handoffs/{}", i));
      p.handoffs.push_back(EngineProfile::Handoff{hr.string("field"), hr.string("value"), hr.string("engine"), hr.string("source")});
      hr.finish();
    }
  }
  if (const json* g = r.get("grammars")) {
    if (!g->is_array()) detail::fail("/grammars", "expected an array");
    for (std::size_t i = 0; i < g->size(); ++i) {
      const std::string pointer = fmt::format("/grammars/{}", i);
      ObjectReader gr((*g)[i], pointer);
      const std::string name = gr.string("name");
      const std::string since = gr.optional_string("since").value_or("");
      if (!since.empty() && !parse_release(since)) detail::fail(gr.child("since"), fmt::format("'{}' is not a release", since));
      // One file, or several whose flags add up (a launcher that takes another parser's flags too).
      std::vector<std::string> files;
      if (gr.has("file")) files.push_back(gr.string("file"));
      if (gr.has("files")) files = gr.strings("files");
      gr.finish();
      if (files.empty()) detail::fail(pointer, "a grammar names its \"file\" or \"files\"");
      if (!read_file) detail::fail(pointer, "this profile was loaded from text: it cannot name other files");
      Grammar merged;
      for (std::size_t k = 0; k < files.size(); ++k) {
        const std::string& file = files[k];
        const std::string at = gr.has("files") ? fmt::format("{}/files/{}", pointer, k) : pointer + "/file";
        Result<std::string> text = read_file(file);
        if (!text) detail::fail(at, text.error().describe());
        auto parsed = detail::parse_json(*text, fmt::format("{} ({})", file, origin));
        if (!parsed) detail::fail(at, parsed.error().describe());
        try {
          Grammar part = read_grammar(*parsed, name, since, file);
          if (k == 0) {
            merged = std::move(part);
            continue;
          }
          merged.source += "; " + part.source;
          merged.complete = merged.complete && part.complete;
          for (GrammarFlag& f : part.flags)
            if (std::none_of(f.names.begin(), f.names.end(), [&](const std::string& n) { return merged.exact(n) != nullptr; }))
              merged.flags.push_back(std::move(f));
          index_grammar(merged, file);
        } catch (const detail::ReadError& e) {
          detail::fail(at, fmt::format("{}#{}: {}", file, e.pointer, e.what()));
        }
      }
      p.grammars.push_back(std::move(merged));
    }
  }
  r.finish();
  for (const Launcher& l : p.launchers)
    if (!p.grammars.empty() && !p.grammar(l.grammar))
      detail::fail("/launchers", fmt::format("launcher '{}' names grammar '{}', which the profile does not have", l.label, l.grammar));
  // Bindings name a flag by its spellings across releases (and deprecated aliases declared as
  // flags of their own); each grammar binds what it has.
  for (std::size_t i = 0; i < p.grammars.size(); ++i) {
    Grammar& g = p.grammars[i];
    for (const Binding& b : bindings)
      for (const std::string& name : b.flags) {
        const GrammarFlag* found = g.exact(name);
        if (!found) continue;
        GrammarFlag& f = g.flags[static_cast<std::size_t>(found - g.flags.data())];
        if (b.key.empty()) f.field = b.field;
        else f.key_fields.push_back({b.key, b.field});
        f.upper_case = f.upper_case || b.upper_case;
        f.unset_values.insert(f.unset_values.end(), b.unset_values.begin(), b.unset_values.end());
      }
  }
  return p;
}

}  // namespace

// ---- the grammar list ----

struct GrammarList::Entry {
  std::string name, since;
  std::function<Grammar()> decode;  // empty for a grammar given decoded
  std::once_flag once;
  std::atomic<bool> done{false};
  Grammar grammar;

  const Grammar& get() {
    std::call_once(once, [this] {
      if (decode) {
        grammar = decode();
        decode = nullptr;
      }
      done.store(true, std::memory_order_release);
    });
    return grammar;
  }
};

const Grammar& GrammarList::operator[](std::size_t i) const { return entries_[i]->get(); }

Grammar& GrammarList::operator[](std::size_t i) { return own(i).grammar; }

// Once decoded, the grammar's own (a non-const access may have changed them).
const std::string& GrammarList::name(std::size_t i) const {
  const Entry& e = *entries_[i];
  return e.done.load(std::memory_order_acquire) ? e.grammar.name : e.name;
}
const std::string& GrammarList::since(std::size_t i) const {
  const Entry& e = *entries_[i];
  return e.done.load(std::memory_order_acquire) ? e.grammar.since : e.since;
}
bool GrammarList::decoded(std::size_t i) const { return entries_[i]->done.load(std::memory_order_acquire); }

void GrammarList::push_back(Grammar g) {
  auto e = std::make_shared<Entry>();
  e->name = g.name;
  e->since = g.since;
  e->grammar = std::move(g);
  e->get();
  entries_.push_back(std::move(e));
}

void GrammarList::push_back_lazy(std::string name, std::string since, std::function<Grammar()> decode) {
  auto e = std::make_shared<Entry>();
  e->name = std::move(name);
  e->since = std::move(since);
  e->decode = std::move(decode);
  entries_.push_back(std::move(e));
}

// A list about to be changed: its entry decoded, and its own (copies share entries).
GrammarList::Entry& GrammarList::own(std::size_t i) {
  std::shared_ptr<Entry>& e = entries_[i];
  e->get();
  if (e.use_count() > 1) {
    auto copy = std::make_shared<Entry>();
    copy->name = e->name;
    copy->since = e->since;
    copy->grammar = e->grammar;
    copy->get();
    e = std::move(copy);
  }
  return *e;
}

// ---- lookups ----

const GrammarFlag* Grammar::exact(std::string_view option) const {
  auto it = std::lower_bound(index.begin(), index.end(), option,
                             [](const auto& entry, std::string_view o) { return entry.first < o; });
  return it != index.end() && it->first == option ? &flags[it->second] : nullptr;
}

std::vector<const GrammarFlag*> Grammar::prefixed(std::string_view prefix) const {
  std::vector<const GrammarFlag*> out;
  auto it = std::lower_bound(index.begin(), index.end(), prefix,
                             [](const auto& entry, std::string_view o) { return entry.first < o; });
  for (; it != index.end() && std::string_view(it->first).substr(0, prefix.size()) == prefix; ++it) {
    const GrammarFlag* f = &flags[it->second];
    if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
  }
  return out;
}

const GrammarFlag* Grammar::for_field(std::string_view field) const {
  for (const GrammarFlag& f : flags)
    if (f.field == field) return &f;
  return nullptr;
}

std::vector<std::string> Grammar::option_names() const {
  std::vector<std::string> out;
  out.reserve(index.size());
  for (const auto& entry : index) out.push_back(entry.first);
  return out;
}

std::optional<std::optional<std::string>> Vocabulary::find(std::string_view spelling) const {
  for (const auto& [k, v] : spellings)
    if (k == spelling) return v;
  return std::nullopt;
}

const Grammar* EngineProfile::grammar(std::string_view name, std::string_view release) const {
  if (name.empty() && !launchers.empty()) name = launchers.front().grammar;
  // The newest grammar not newer than the release; the oldest for an older release; the newest without one.
  const std::optional<ReleaseVersion> wanted = release.empty() ? std::nullopt : parse_release(release);
  // Chosen by name and `since` alone: only the grammar returned is decoded.
  constexpr std::size_t none = static_cast<std::size_t>(-1);
  std::size_t fitting = none, oldest = none;
  ReleaseVersion fitting_since{}, oldest_since{};
  for (std::size_t i = 0; i < grammars.size(); ++i) {
    if (grammars.name(i) != name) continue;
    const ReleaseVersion since = parse_release(grammars.since(i)).value_or(ReleaseVersion{});
    if (oldest == none || since < oldest_since) oldest = i, oldest_since = since;
    if (wanted && *wanted < since) continue;
    if (fitting == none || fitting_since < since) fitting = i, fitting_since = since;
  }
  if (fitting != none) return &grammars[fitting];
  return oldest != none ? &grammars[oldest] : nullptr;
}

const Vocabulary* EngineProfile::vocabulary(std::string_view name) const {
  for (const Vocabulary& v : vocabularies)
    if (v.name == name) return &v;
  return nullptr;
}

Result<std::shared_ptr<const EngineProfile>> load_profile(std::string_view json_text, std::string_view origin,
                                                         const ProfileFileReader& read_file) {
  auto parsed = detail::parse_json(json_text, origin);
  if (!parsed) return parsed.error();
  try {
    auto profile = std::make_shared<EngineProfile>(read_profile(*parsed, std::string(origin), read_file));
    profile->origin = std::string(origin);
    return std::shared_ptr<const EngineProfile>(std::move(profile));
  } catch (const detail::ReadError& e) {
    return Error{ErrorCode::invalid_matrix, e.what(), fmt::format("{}#{}", origin, e.pointer), {}, {}};
  }
}

std::vector<std::string> detail::builtin_profile_paths() {
  std::vector<std::string> out;
  for (const auto& file : embedded::files()) {
    const std::string_view name = file.name;
    if (name.substr(0, 8) != "engines/" || name.size() < 13 || name.substr(name.size() - 13) != "/profile.json") continue;
    out.emplace_back(name);
  }
  return out;
}

Result<std::shared_ptr<const EngineProfile>> detail::load_builtin_profile_json(std::string_view path) {
  const std::string_view text = embedded::find(path);
  if (text.data() == nullptr)
    return Error{ErrorCode::io_error, fmt::format("no built-in data file {}", path), std::string(path), {}, {}};
  const std::string dir(path.substr(0, path.size() - 12));  // "engines/<engine>/"
  return load_profile(text, fmt::format("built-in:{}", path), [&](std::string_view relative) -> Result<std::string> {
    const std::string file = dir + std::string(relative);
    const std::string_view content = embedded::find(file);
    if (content.data() == nullptr)
      return Error{ErrorCode::io_error, fmt::format("no built-in data file {}", file), file, {}, {}};
    return std::string(content);
  });
}

namespace {

// One built-in profile, loaded on first use and shared: from the compiled image when the library
// has one (built from the same JSON and validated at build time), else from its JSON. Null when
// the file is absent or invalid (the build's tests load every profile, so a broken one cannot ship).
std::shared_ptr<const EngineProfile> cached_builtin_profile(const std::string& path) {
  static std::mutex mutex;
  // Never destroyed: freeing every grammar at exit would cost a CLI run more than loading them.
  static auto& cache = *new std::map<std::string, std::shared_ptr<const EngineProfile>, std::less<>>();
  const std::lock_guard<std::mutex> lock(mutex);
  if (auto it = cache.find(path); it != cache.end()) return it->second;
  std::shared_ptr<const EngineProfile> loaded = image::profile(path);
  if (!loaded)
    if (auto from_json = detail::load_builtin_profile_json(path)) loaded = *from_json;
  cache.emplace(path, loaded);
  return loaded;
}

}  // namespace

const std::vector<std::shared_ptr<const EngineProfile>>& builtin_profiles() {
  static const auto& all = *new std::vector<std::shared_ptr<const EngineProfile>>([] {
    std::vector<std::shared_ptr<const EngineProfile>> out;
    for (const std::string& path : detail::builtin_profile_paths())
      if (auto profile = cached_builtin_profile(path)) out.push_back(std::move(profile));
    return out;
  }());
  return all;
}

Result<std::shared_ptr<const EngineProfile>> load_profile_file(const std::string& path) {
  namespace fs = std::filesystem;
  auto read = [](const fs::path& file) -> Result<std::string> {
    std::error_code ec;
    if (!fs::is_regular_file(file, ec))
      return Error{ErrorCode::io_error, "not a regular file", file.string(), {}, {}};
    std::ifstream in(file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in && !in.eof()) return Error{ErrorCode::io_error, "cannot read the file", file.string(), {}, {}};
    return text.str();
  };
  Result<std::string> text = read(path);
  if (!text) return text.error();
  const fs::path dir = fs::path(path).parent_path();
  return load_profile(*text, path, [&](std::string_view relative) {
    const fs::path file = dir / std::string(relative);
    // A profile names files beside it, never elsewhere on the host.
    if (fs::path(std::string(relative)).is_absolute() || std::string(relative).find("..") != std::string::npos)
      return Result<std::string>(Error{ErrorCode::invalid_argument, "a profile names files in its own directory", std::string(relative), {}, {}});
    return read(file);
  });
}

Result<std::shared_ptr<const EngineProfile>> builtin_profile(std::string_view engine) {
  // engines/<engine>/profile.json first: one engine's profile is loaded, not every engine's.
  if (engine.find('/') == std::string_view::npos && !engine.empty())
    if (auto p = cached_builtin_profile(fmt::format("engines/{}/profile.json", engine)); p && p->engine == engine) return p;
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
