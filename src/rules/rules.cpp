// The rule pages (include/attnsel/rules.hpp): one registry built from the matrices, data/rules.json
// and the advisories, the examples run through the library's own check.
#include "attnsel/rules.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <mutex>
#include <set>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attnsel/advisory.hpp"
#include "attnsel/catalog.hpp"
#include "attnsel/check_input.hpp"
#include "attnsel/matrix.hpp"
#include "attnsel/select_options.hpp"
#include "attnsel/suggest.hpp"
#include "attnsel/version.hpp"
#include "core/json_text.hpp"
#include "matrix/embedded.hpp"
#include "matrix/json_reader.hpp"
#include "render/check_common.hpp"

namespace attnsel {

std::string rules_page_url() { return fmt::format("{}/blob/v{}/docs/rules.md", kProjectUrl, version()); }

std::string rule_anchor(std::string_view id) {
  std::string out;
  out.reserve(id.size());
  for (char c : id) {
    const auto u = static_cast<unsigned char>(c);
    const char lower = static_cast<char>(std::tolower(u));
    out += (u < 0x80 && (std::isalnum(u) || c == '.' || c == '_' || c == '-')) ? lower : '-';
  }
  return out;
}

std::string rule_help_uri(std::string_view id) { return rules_page_url() + "#" + rule_anchor(id); }

std::string_view name_of(RuleOrigin o) {
  switch (o) {
    case RuleOrigin::matrix: return "matrix";
    case RuleOrigin::feature: return "feature";
    case RuleOrigin::selection: return "selection";
    case RuleOrigin::engine: return "engine";
    case RuleOrigin::check: return "check";
    case RuleOrigin::args: return "args";
    case RuleOrigin::advisory: return "advisory";
  }
  return "";
}

namespace {

using json = nlohmann::json;
using detail::ObjectReader;

constexpr std::string_view kRulesFile = "rules.json";  // under data/

// A word as a shell needs it written: as it is when it holds nothing the shell reads, else quoted.
std::string shell_word(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./,=:@%+") ==
                        std::string::npos)
    return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// ---- data/rules.json ----

struct SharedTexts {
  std::map<std::string, std::string> meaning;                       // by origin name
  std::map<std::string, std::map<std::string, std::string>> fixes;  // origin -> severity -> text
  std::string advisory_fix;
  std::map<std::string, std::string> ignore;  // by severity name
};

struct CodeRules {
  std::vector<RuleDoc> docs;
  SharedTexts texts;
};

RuleExample read_example(const json& j, const std::string& ptr) {
  if (!j.is_object()) detail::fail(ptr, "an example is an object");
  ObjectReader r(j, ptr);
  RuleExample e;
  e.select = r.boolean("select", false);
  e.engine = r.optional_string("engine").value_or("");
  e.gpus = r.string("gpus");
  e.command = r.optional_string("command").value_or("");
  e.file = r.optional_string("file").value_or("");
  e.text = r.optional_string("text").value_or("");
  e.release = r.optional_string("release").value_or("");
  e.model = r.optional_string("model").value_or("");
  e.dtype = r.optional_string("dtype").value_or("");
  e.installed = r.optional_string("installed");
  e.strict = r.boolean("strict", false);
  e.unknown_model_error = r.boolean("unknown_model_error", false);
  e.report_unused_suppressions = r.boolean("report_unused_suppressions", false);
  if (auto level = r.optional_string("level")) {
    e.level = parse_severity(*level);
    if (!e.level) detail::fail(r.child("level"), fmt::format("unknown severity \"{}\"; valid: info, warning, error", *level));
  }
  r.finish();
  if (e.command.empty() == e.file.empty()) detail::fail(ptr, "an example has a \"command\" or a \"file\" with its \"text\"");
  if (!e.file.empty() && e.text.empty()) detail::fail(r.child("text"), "a file example needs its text");
  if (e.select && (e.model.empty() || e.gpus.empty() || !e.file.empty()))
    detail::fail(ptr, "a select example has \"gpus\", \"model\" and the engine flags as \"command\"");
  if (!e.dtype.empty() && !parse_compute_dtype(e.dtype)) detail::fail(r.child("dtype"), "unknown dtype; valid: auto, fp16, bf16, fp32");
  return e;
}

Result<CodeRules> load_code_rules() {
  const std::string origin = "built-in:" + std::string(kRulesFile);
  auto parsed = detail::parse_json(embedded::find(kRulesFile), origin);
  if (!parsed) return parsed.error();
  CodeRules out;
  try {
    ObjectReader r(*parsed, "");
    r.get("$schema");
    r.get("description");
    if (detail::expect_int(r.require("schema_version"), "/schema_version", 0, 1000) != 1)
      detail::fail("/schema_version", "this attnsel reads schema_version 1");
    const json& origins = r.require("origins");
    ObjectReader o(origins, "/origins");
    for (const char* name : {"matrix", "feature", "selection"}) {
      ObjectReader entry(o.require(name), o.child(name));
      out.texts.meaning[name] = entry.string("meaning");
      ObjectReader fix(entry.require("fix"), entry.child("fix"));
      for (const char* sev : {"error", "warning", "info"}) out.texts.fixes[name][sev] = fix.string(sev);
      fix.finish();
      entry.finish();
    }
    {
      ObjectReader entry(o.require("advisory"), o.child("advisory"));
      out.texts.meaning["advisory"] = entry.string("meaning");
      out.texts.advisory_fix = entry.string("fix");
      entry.finish();
    }
    o.finish();
    ObjectReader ignore(r.require("ignore"), "/ignore");
    for (const char* sev : {"error", "warning", "info"}) out.texts.ignore[sev] = ignore.string(sev);
    ignore.finish();
    const json& rules = r.require("rules");
    if (!rules.is_array()) detail::fail("/rules", "a list of rules");
    std::set<std::string> seen;
    for (std::size_t i = 0; i < rules.size(); ++i) {
      const std::string ptr = "/rules/" + std::to_string(i);
      if (!rules[i].is_object()) detail::fail(ptr, "a rule is an object");
      ObjectReader e(rules[i], ptr);
      RuleDoc d;
      d.id = e.string("id");
      if (d.id.empty() || d.id.find_first_of(" \t\n") != std::string::npos)
        detail::fail(e.child("id"), "a rule id is a non-empty word without spaces");
      if (!seen.insert(d.id).second) detail::fail(e.child("id"), fmt::format("rule {} is listed twice", d.id));
      const std::string origin_name = e.string("origin");
      if (origin_name == "engine") d.origin = RuleOrigin::engine;
      else if (origin_name == "check") d.origin = RuleOrigin::check;
      else if (origin_name == "args") d.origin = RuleOrigin::args;
      else detail::fail(e.child("origin"), "the rules of data/rules.json are of origin engine, check or args");
      if (auto s = e.optional_string("severity")) {
        auto sev = parse_severity(*s);
        if (!sev) detail::fail(e.child("severity"), fmt::format("unknown severity \"{}\"; valid: info, warning, error", *s));
        d.severity = *sev;
      } else if (d.origin != RuleOrigin::engine) {
        detail::fail(ptr, "a check or args rule states its severity (an engine rule's comes from the matrix engine)");
      }
      d.severity_note = e.optional_string("severity_note").value_or("");
      d.summary = e.string("summary");
      d.meaning = e.string("meaning");
      d.source = e.string("source");
      d.fix = e.string("fix");
      d.ignore = e.optional_string("ignore").value_or("");  // else the text of its level, below
      const std::string note = e.optional_string("example_note").value_or("");
      if (const json* examples = e.get("examples")) {
        if (!examples->is_array() || examples->empty()) detail::fail(e.child("examples"), "a non-empty list of examples");
        for (std::size_t k = 0; k < examples->size(); ++k)
          d.examples.push_back(read_example((*examples)[k], e.child("examples") + "/" + std::to_string(k)));
      }
      if (d.examples.empty() == note.empty())
        detail::fail(ptr, "a rule has runnable \"examples\" or an \"example_note\" saying why it has none");
      d.example_text = note;
      e.finish();
      out.docs.push_back(std::move(d));
    }
    r.finish();
  } catch (const detail::ReadError& e) {
    return Error{ErrorCode::invalid_matrix, e.what(), fmt::format("{}#{}", origin, e.pointer.empty() ? "/" : e.pointer), {}, {}};
  }
  return out;
}

// ---- the matrices ----

// Placeholders of a message template as words, for a one-line summary.
std::string summary_of(const std::string& message) {
  static const std::pair<const char*, const char*> kWords[] = {
      {"{title}", "the backend"}, {"{backend}", "the backend"}, {"{phase}", "this phase"},
      {"{kind}", "this model kind"}, {"{gpu}", "this GPU"}, {"{cuda}", "this CUDA version"},
      {"{kv_dtype}", "this KV cache dtype"}, {"{topk}", "K"}, {"{page_size}", "N"}, {"{from}", "X"}, {"{to}", "Y"},
      {"{supported}", "the supported values"}, {"{platform}", "this platform"}, {"{model}", "the model"},
      {"{dtype}", "this dtype"}, {"{detail}", "…"}};
  std::string out = message;
  for (const auto& [key, word] : kWords)
    for (std::size_t at = out.find(key); at != std::string::npos; at = out.find(key, at + std::string_view(word).size()))
      out.replace(at, std::string_view(key).size(), word);
  return out;
}

struct Occurrence {
  RuleOrigin origin;
  RuleVariant variant;
  bool strict_error = false;
};

// The entry `id` of `section` as the data writes it for the generation file `file`: in the file
// itself when it writes the entry, else in the base it extends, and so on (an overlay's entry
// replaces its base's whole, so the file that writes it last has it as the engine reads it).
// `defined_in` is that file, under data/.
const json* defining_entry(const std::string& file, const std::string& section, const std::string& id,
                           std::map<std::string, json>& raw, std::string& defined_in) {
  std::string at = file;
  defined_in = file;
  for (int depth = 0; depth < 16 && !at.empty(); ++depth) {
    auto it = raw.find(at);
    if (it == raw.end()) {
      auto parsed = detail::parse_json(embedded::find(at), at);
      it = raw.emplace(at, parsed ? std::move(*parsed) : json()).first;
    }
    const json& doc = it->second;
    if (!doc.is_object()) return nullptr;
    const json* list = doc.contains(section) ? &doc[section] : nullptr;
    if (list && list->is_array()) {
      for (const json& e : *list) {
        if (e.is_object() && e.value("id", std::string()) == id) return defined_in = at, &e;
        // A rule inside a slot (slots[].split_default).
        const json* split = e.is_object() && e.contains("split_default") ? &e["split_default"] : nullptr;
        if (split && split->is_object() && split->value("id", std::string()) == id) return defined_in = at, split;
      }
    } else if (list && list->is_object()) {
      for (const auto& entry : list->items())
        if (entry.value().is_object() && entry.value().value("id", std::string()) == id) return defined_in = at, &entry.value();
    }
    if (!doc.contains("extends") || !doc["extends"].is_string()) return nullptr;
    at = at.substr(0, at.rfind('/') + 1) + doc["extends"].get<std::string>();
  }
  return nullptr;
}

Result<std::map<std::string, std::vector<Occurrence>>> matrix_occurrences() {
  auto generations = builtin_generations();
  if (!generations) return generations.error();
  std::map<std::string, std::vector<Occurrence>> by_id;
  std::map<std::string, json> raw;
  for (const MatrixGeneration& g : *generations) {
    auto matrix = builtin_matrix_file(g.file);
    if (!matrix) return matrix.error();
    const Matrix& m = **matrix;
    auto add = [&](RuleOrigin o, const RuleInfo& info, const char* section, bool strict_error) {
      Occurrence occ;
      occ.origin = o;
      occ.strict_error = strict_error;
      RuleVariant& v = occ.variant;
      v.engine = g.engine;
      v.generations = {g.label};
      std::string defined_in;
      const json* entry = defining_entry(g.file, section, info.id, raw, defined_in);
      v.file = "data/" + defined_in;
      v.severity = o == RuleOrigin::selection ? Severity::info : info.severity;
      v.message = info.message;
      v.source = info.source;
      v.note = info.note;
      if (entry != nullptr && entry->contains("when")) v.when = detail::json_text((*entry)["when"], -1);
      if (entry != nullptr && entry->contains("set")) v.effect = detail::json_text((*entry)["set"], -1);
      by_id[info.id].push_back(std::move(occ));
    };
    for (const Rule& rule : m.rules()) add(RuleOrigin::matrix, rule.info, "rules", rule.strict_error);
    for (int f = 0; f < kFeatureCount; ++f)
      if (const FeatureRule* fr = m.feature_rule(static_cast<Feature>(f))) add(RuleOrigin::feature, fr->info, "features", false);
    for (const SelectionEntry& s : m.selection()) add(RuleOrigin::selection, s.info, "selection", false);
    if (const auto& hybrid = m.hybrid_page()) add(RuleOrigin::matrix, hybrid->info, "matrix", false);
    for (const Slot& slot : m.slots())
      if (slot.split_default) add(RuleOrigin::matrix, *slot.split_default, "slots", false);
  }
  return by_id;
}

// One page per data-defined id: its wordings, each with the generations that share it.
RuleDoc matrix_doc(const std::string& id, const std::vector<Occurrence>& occurrences, const SharedTexts& texts) {
  RuleDoc d;
  d.id = id;
  d.origin = occurrences.front().origin;
  bool strict_error = false;
  for (const Occurrence& occ : occurrences) {
    strict_error = strict_error || occ.strict_error;
    auto same = std::find_if(d.variants.begin(), d.variants.end(), [&](const RuleVariant& v) {
      return v.engine == occ.variant.engine && v.file == occ.variant.file && v.severity == occ.variant.severity &&
             v.message == occ.variant.message && v.source == occ.variant.source && v.note == occ.variant.note &&
             v.when == occ.variant.when && v.effect == occ.variant.effect;
    });
    if (same == d.variants.end()) d.variants.push_back(occ.variant);
    else same->generations.push_back(occ.variant.generations.front());
  }
  // The newest wording leads: the page's summary and default level are today's.
  const RuleVariant& newest = d.variants.back();
  d.severity = newest.severity;
  std::set<Severity> levels;
  for (const RuleVariant& v : d.variants) levels.insert(v.severity);
  if (strict_error) d.severity_note = "an error under --strict";
  if (levels.size() > 1) {
    std::string by_release;
    for (const RuleVariant& v : d.variants)
      by_release += fmt::format("{}{} in {} {}", by_release.empty() ? "" : "; ", name_of(v.severity), v.engine,
                                fmt::join(v.generations, ", "));
    d.severity_note += (d.severity_note.empty() ? "" : "; ") + by_release;
  }
  d.summary = summary_of(newest.message);
  const std::string origin = std::string(name_of(d.origin));
  d.about = texts.meaning.at(origin);
  d.meaning = newest.note;  // why the data decided it so, when it says
  d.source = newest.source;
  d.fix = texts.fixes.at(origin).at(std::string(name_of(d.severity)));
  return d;
}

// ---- advisories ----

std::string list_text(const std::vector<std::string>& items) { return fmt::format("{}", fmt::join(items, ", ")); }

RuleDoc advisory_doc(const Advisory& a, const SharedTexts& texts) {
  RuleDoc d;
  d.id = "advisory." + a.id;
  d.origin = RuleOrigin::advisory;
  d.severity = a.severe() ? Severity::error : Severity::warning;
  d.severity_note = a.severe() ? "an error inside the affected range; a warning when the range is unknown or the model's "
                                 "traits were assumed; a note naming the fix when the release is unknown"
                               : "a note naming the fix when the release is unknown";
  d.summary = a.title;
  std::string range;
  if (!a.introduced_text.empty() || !a.fixed_text.empty())
    range = fmt::format("affected: {} to {}", a.introduced_text.empty() ? "unknown" : a.introduced_text,
                        a.fixed_text.empty() ? "unfixed or unknown" : "before " + a.fixed_text);
  else
    range = "affected releases: not recorded";
  if (!a.fix_merged.empty()) range += fmt::format("; fix merged {}", a.fix_merged);
  d.meaning = fmt::format("{} Effect: {}; status: {}; {}.{}{}", a.summary, a.effect, a.status, range,
                          a.range_note.empty() ? "" : " " + a.range_note, a.notes.empty() ? "" : " " + a.notes);
  std::vector<std::string> evidence;
  for (const AdvisoryEvidence& e : a.evidence)
    evidence.push_back(fmt::format("{} ({}, {}): \"{}\"", e.url, e.who, e.date, e.text));
  d.source = evidence.empty() ? a.link() : list_text(evidence);
  std::vector<std::string> when;
  when.push_back(fmt::format("{} commands", a.engine));
  if (a.runtime != "llm") when.push_back("runtime " + a.runtime);
  if (!a.platform.empty()) when.push_back("platform " + a.platform);
  if (!a.gpus.empty()) when.push_back("GPUs " + list_text(a.gpus));
  if (!a.backends.empty()) when.push_back("backends " + list_text(a.backends));
  if (!a.kv_cache_dtypes.empty()) when.push_back("KV cache " + list_text(a.kv_cache_dtypes));
  if (!a.model_families.empty()) when.push_back("model families " + list_text(a.model_families));
  if (!a.architectures.empty()) when.push_back("architectures " + list_text(a.architectures));
  if (!a.models.empty()) when.push_back("models " + list_text(a.models));
  if (!a.model_traits.empty()) when.push_back("model traits " + list_text(a.model_traits));
  auto conditions = [](const std::vector<AdvisoryCondition>& cs) {
    std::vector<std::string> out;
    for (const AdvisoryCondition& c : cs) {
      std::string s = c.name;
      if (c.absent) s += " not given";
      else if (!c.values.empty()) s += " = " + fmt::format("{}", fmt::join(c.values, " or "));
      else if (c.min) s += fmt::format(" >= {}", *c.min);
      out.push_back(s);
    }
    return out;
  };
  if (!a.flags.empty()) when.push_back("flags " + list_text(conditions(a.flags)));
  if (!a.env.empty()) when.push_back("environment " + list_text(conditions(a.env)));
  d.example_text = "Matches " + fmt::format("{}", fmt::join(when, "; ")) + ".";
  for (const auto* list : {&a.issues, &a.fix, &a.related})
    for (const std::string& link : *list) d.links.push_back(link);
  d.fix = a.workaround.empty() ? texts.advisory_fix : a.workaround + " " + texts.advisory_fix;
  return d;
}

// ---- the registry ----

Result<std::shared_ptr<const std::vector<RuleDoc>>> build_rule_docs() {
  auto code = load_code_rules();
  if (!code) return code.error();
  std::vector<RuleDoc> docs;
  // The engine's own rules take their level from the matrix engine (any built-in matrix has them).
  auto matrix = builtin_matrix();
  if (!matrix) return matrix.error();
  std::map<std::string, Severity> engine_levels;
  for (std::size_t b = 0; b < static_cast<std::size_t>(BuiltinRule::count); ++b) {
    const RuleInfo& info = (*matrix)->builtin(static_cast<BuiltinRule>(b));
    engine_levels[info.id] = info.severity;
  }
  for (RuleDoc& d : code->docs) {
    if (d.origin == RuleOrigin::engine) {
      auto level = engine_levels.find(d.id);
      if (level == engine_levels.end())
        return Error{ErrorCode::invalid_matrix,
                     fmt::format("rule {} is of origin engine, but the matrix engine has no such rule", d.id),
                     "built-in:rules.json", {}, {}};
      d.severity = level->second;
      engine_levels.erase(level);
    }
    if (d.ignore.empty()) d.ignore = code->texts.ignore.at(std::string(name_of(d.severity)));
    docs.push_back(std::move(d));
  }
  if (!engine_levels.empty())
    return Error{ErrorCode::invalid_matrix,
                 fmt::format("the matrix engine's rule {} has no entry in data/rules.json", engine_levels.begin()->first),
                 "built-in:rules.json#/rules", {}, {}};
  std::set<std::string> ids;
  for (const RuleDoc& d : docs) ids.insert(d.id);

  auto occurrences = matrix_occurrences();
  if (!occurrences) return occurrences.error();
  for (const auto& [id, list] : *occurrences) {
    if (ids.count(id) > 0)
      return Error{ErrorCode::invalid_matrix, fmt::format("rule {} is both a matrix entry and in data/rules.json", id),
                   list.front().variant.file, {}, {}};
    RuleDoc d = matrix_doc(id, list, code->texts);
    d.ignore = code->texts.ignore.at(std::string(name_of(d.severity)));
    ids.insert(id);
    docs.push_back(std::move(d));
  }
  for (const std::string& engine : advisory_engines()) {
    auto advisories = builtin_advisories(engine);
    if (!advisories) return advisories.error();
    for (const Advisory& a : **advisories) {
      RuleDoc d = advisory_doc(a, code->texts);
      d.about = code->texts.meaning.at("advisory");
      d.ignore = code->texts.ignore.at(std::string(name_of(d.severity)));
      if (!ids.insert(d.id).second)
        return Error{ErrorCode::invalid_matrix, fmt::format("rule {} is listed twice", d.id), "advisories", {}, {}};
      docs.push_back(std::move(d));
    }
  }
  std::sort(docs.begin(), docs.end(), [](const RuleDoc& a, const RuleDoc& b) { return a.id < b.id; });
  return std::make_shared<const std::vector<RuleDoc>>(std::move(docs));
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// ---- examples ----

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    std::size_t j = i;
    while (j < s.size() && s[j] != ' ') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

// "a,b" -> {"a", "b"}, as --installed takes it.
std::vector<std::string> comma_list(const std::string& s) {
  std::vector<std::string> out;
  for (std::size_t at = 0; at <= s.size();) {
    const std::size_t comma = std::min(s.find(',', at), s.size());
    if (comma > at) out.push_back(s.substr(at, comma - at));
    at = comma + 1;
  }
  return out;
}

// A finding as `attnsel check --format concise` prints it.
std::string finding_line(const std::string& file, int line, int column, const CheckDiagnostic& d, const std::string& gpu,
                         bool name_gpu) {
  const std::string place = detail::concise_place(file, line, column);
  return fmt::format("{}{}: {}{} [{}]", place.empty() ? "attnsel: " : place, detail::severity_word(d.diagnostic.severity),
                     name_gpu && !gpu.empty() ? "[" + gpu + "] " : std::string(), detail::located_message(d),
                     d.diagnostic.rule);
}

Result<std::vector<std::string>> run_check_example(const RuleExample& e, std::string_view rule) {
  auto catalog = builtin_catalog();
  if (!catalog) return catalog.error();
  auto matrix = builtin_matrix();
  if (!matrix) return matrix.error();
  CheckInput input;
  if (!e.command.empty()) input.argv = std::vector<std::string>{e.command};
  else {
    input.text = e.text;
    input.file_name = e.file;
  }
  CheckRun run;
  if (!e.gpus.empty()) run.gpus = e.gpus;
  if (!e.release.empty()) run.release = e.release;
  run.options.strict = e.strict;
  run.options.unknown_model_error = e.unknown_model_error;
  run.report_unused_suppressions = e.report_unused_suppressions;
  if (e.installed) {
    run.options.installed_known = true;
    run.options.installed = comma_list(*e.installed);
  }
  if (auto diffusion = builtin_matrix("sglang-diffusion", std::nullopt)) run.options.diffusion_matrix = *diffusion;
  // As `attnsel check` reads the files a command names: inside the checked file's directory only.
  run.options.read_config = config_reader_within(e.file.empty() ? std::vector<std::string>{} : std::vector<std::string>{e.file});
  auto report = check_input(*matrix, **catalog, input, run);
  if (!report) return report.error();
  std::vector<std::string> lines;
  const bool several = e.gpus.find(',') != std::string::npos;
  for (const ReportFinding& f : report_findings(*report)) {
    if (f.finding.diagnostic.rule != rule) continue;
    const int column = f.column > 0 ? f.column : f.finding.column;
    std::string line = finding_line(f.file, f.finding.line, column, f.finding, f.gpu, several);
    if (std::find(lines.begin(), lines.end(), line) == lines.end()) lines.push_back(std::move(line));
  }
  return lines;
}

Result<std::vector<std::string>> run_select_example(const RuleExample& e, std::string_view rule) {
  auto catalog = builtin_catalog();
  if (!catalog) return catalog.error();
  auto matrix = builtin_matrix(e.engine.empty() ? "sglang" : e.engine, std::nullopt);
  if (!matrix) return matrix.error();
  DeviceSpec spec;
  spec.gpu = e.gpus;
  auto device = resolve_device(**catalog, spec);
  if (!device) return device.error();
  SelectOptions options;
  options.model = e.model;
  options.engine_flags = words(e.command);
  if (!e.dtype.empty()) options.dtype = *parse_compute_dtype(e.dtype);
  options.strict = e.strict;
  if (e.installed) options.installed = comma_list(*e.installed);
  auto prepared = prepare_select(*matrix, **catalog, options);
  if (!prepared) return prepared.error();
  std::vector<std::string> lines;
  for (const CheckDiagnostic& d : prepared->findings)
    if (d.diagnostic.rule == rule) lines.push_back(finding_line("", 0, 0, d, "", false));
  Request request = prepared->request;
  request.device = *device;
  auto selection = select(*matrix, request);
  if (!selection) return selection.error();
  for (const auto* list : {&selection->errors, &selection->warnings, &selection->notes})
    for (const Diagnostic& diag : selection->describe(*list)) {
      if (diag.rule != rule) continue;
      CheckDiagnostic d;
      d.diagnostic = diag;
      lines.push_back(finding_line("", 0, 0, d, "", false));
    }
  return lines;
}

}  // namespace

std::string RuleDoc::description() const {
  if (about.empty()) return meaning;
  return meaning.empty() ? about : about + " " + meaning;
}

std::string RuleExample::command_line() const {
  std::string out = select ? "attnsel select" : "attnsel check";
  if (select && !engine.empty()) out += " --engine " + shell_word(engine);
  if (!gpus.empty()) out += " --gpu " + shell_word(gpus);
  if (select) out += " --model " + shell_word(model);
  if (!dtype.empty()) out += " --dtype " + shell_word(dtype);
  if (installed) out += " --installed " + shell_word(*installed);
  if (!release.empty()) out += " --engine-version " + shell_word(release);
  if (strict) out += " --strict";
  if (unknown_model_error) out += " --unknown-model error";
  if (report_unused_suppressions) out += " --report-unused-suppressions";
  if (select) return out + " " + command;
  if (!file.empty()) return out + " " + shell_word(file);
  return out + " -- " + command;
}

Result<std::shared_ptr<const std::vector<RuleDoc>>> rule_docs() {
  static std::mutex mutex;
  static std::optional<Result<std::shared_ptr<const std::vector<RuleDoc>>>> built;
  std::lock_guard<std::mutex> lock(mutex);
  if (!built) built.emplace(build_rule_docs());
  return *built;
}

const RuleDoc* find_rule_doc(const std::vector<RuleDoc>& docs, std::string_view id) {
  auto exact = std::lower_bound(docs.begin(), docs.end(), id, [](const RuleDoc& d, std::string_view v) { return d.id < v; });
  if (exact != docs.end() && exact->id == id) return &*exact;
  const std::string wanted = lower(id);
  for (const RuleDoc& d : docs)
    if (lower(d.id) == wanted) return &d;
  return nullptr;
}

Result<const RuleDoc*> lookup_rule(std::string_view id) {
  auto docs = rule_docs();
  if (!docs) return docs.error();
  if (const RuleDoc* d = find_rule_doc(**docs, id)) return d;
  std::vector<std::string> ids;
  ids.reserve((*docs)->size());
  for (const RuleDoc& d : **docs) ids.push_back(d.id);
  Error e;
  e.code = ErrorCode::unknown_name;
  e.where = std::string(id);
  e.choices = closest_names(id, ids, 5);
  e.suggestion = e.choices.empty() ? std::string() : e.choices.front();
  e.message = e.choices.empty()
                  ? "no rule has this id; `attnsel rule --list` lists them"
                  : fmt::format("no rule has this id; the nearest: {} (`attnsel rule --list` lists them all)",
                                fmt::join(e.choices, ", "));
  return e;
}

Result<RuleDoc> run_rule_examples(const RuleDoc& doc) {
  RuleDoc out = doc;
  for (RuleExample& e : out.examples) {
    auto lines = e.select ? run_select_example(e, doc.id) : run_check_example(e, doc.id);
    if (!lines) {
      Error err = lines.error();
      err.message = fmt::format("the example of rule {} cannot be run: {}", doc.id, err.message);
      return err;
    }
    e.findings = std::move(*lines);
  }
  return out;
}

}  // namespace attnsel
