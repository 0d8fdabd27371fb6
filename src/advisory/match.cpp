// Matching advisories against a plan, and their severity (docs/advisories.md, "Matching and
// severity"). Pure: no I/O, every reason returned as data.
#include <algorithm>
#include <cctype>
#include <cstdlib>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attnsel/advisory.hpp"

namespace attnsel {
namespace {

bool iequal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

bool contains(const std::vector<std::string>& list, std::string_view v) {
  return std::any_of(list.begin(), list.end(), [&](const std::string& s) { return iequal(s, v); });
}

bool negative(std::string_view flag) { return flag.rfind("--no-", 0) == 0; }

enum class Tri { no, yes, unknown };

// A trait of the model: yes, no, or unknown (attnsel cannot read it from what it knows).
Tri trait(const ModelTraits& m, std::string_view t) {
  auto of = [](bool b) { return b ? Tri::yes : Tri::no; };
  if (t == "attention_sinks") return of(m.attention_sinks);
  if (t == "sliding_window") return of(m.sliding_window);
  if (t == "multimodal") return of(m.multimodal);
  if (t == "mla") return of(m.kind == AttentionKind::mla || m.kind == AttentionKind::dsa);
  if (t == "sparse_mla") return of(m.kind == AttentionKind::dsa);
  if (t == "hybrid_gdn") return of(m.kind == AttentionKind::gdn);
  if (t == "gqa" && m.num_attention_heads && m.num_key_value_heads)
    return of(*m.num_key_value_heads < *m.num_attention_heads && *m.num_key_value_heads > 1);
  return Tri::unknown;
}

// One flag or environment condition. `given` is the last value set (nullopt: not given; an empty
// string: given without a value).
bool holds(const AdvisoryCondition& c, const std::optional<std::string>& given, bool open_ended) {
  if (c.absent) return !given || open_ended;
  if (!given) return false;
  if (!c.values.empty() && !contains(c.values, *given)) return false;
  if (c.min) {
    char* end = nullptr;
    const double v = std::strtod(given->c_str(), &end);
    if (given->empty() || end != given->c_str() + given->size() || v < *c.min) return false;
  }
  return true;
}

std::optional<std::string> flag_value(const AdvisoryQuery& q, const std::string& name, int* index = nullptr) {
  std::optional<std::string> out;
  for (std::size_t k = 0; k < q.flags.size(); ++k) {
    const AdvisoryQuery::Flag& f = q.flags[k];
    const bool same = f.written == name ||
                      (contains(f.names, name) && negative(f.written) == negative(name));
    if (!same) continue;
    out = f.value.value_or("");
    if (index) *index = static_cast<int>(k);
  }
  return out;
}

std::optional<std::string> env_value(const AdvisoryQuery& q, const std::string& name) {
  std::optional<std::string> out;
  for (const auto& [n, v] : q.env)
    if (n == name) out = v;
  return out;
}

// A development build or pre-release as engines version them: 0.11.2.dev638+g541a2ef89,
// 0.22.1rc1.dev392, 0.5.10rc0, 0.0.0.dev1+g30705c004.
bool development_build(std::string_view text) {
  return text.find("dev") != std::string_view::npos || text.find("rc") != std::string_view::npos ||
         text.find('+') != std::string_view::npos;
}

std::string short_note(std::string_view text) {
  if (text.size() <= 240) return std::string(text);
  std::size_t cut = text.rfind(' ', 237);
  if (cut == std::string_view::npos || cut < 120) cut = 237;
  return std::string(text.substr(0, cut)) + "...";
}

}  // namespace

std::vector<AdvisoryMatch> match_advisories(const std::vector<Advisory>& advisories, const AdvisoryQuery& q) {
  std::vector<AdvisoryMatch> out;
  for (const Advisory& a : advisories) {
    if (a.engine != q.engine || a.runtime != q.runtime) continue;
    if (!a.platform.empty() && a.platform != name_of(q.device.platform)) continue;
    if (!a.gpus.empty() && !contains(a.gpus, q.device.arch) && !(q.device.name.size() && contains(a.gpus, q.device.name)))
      continue;
    if (!a.backends.empty() &&
        (!q.backends_known || std::none_of(q.backends.begin(), q.backends.end(),
                                           [&](const std::string& b) { return contains(a.backends, b); })))
      continue;
    if (!a.kv_cache_dtypes.empty() && !contains(a.kv_cache_dtypes, q.kv_cache_dtype)) continue;
    const bool model_condition = !a.model_families.empty() || !a.architectures.empty();
    if (model_condition && !(contains(a.model_families, q.model.family) ||
                             (!q.model.architecture.empty() && contains(a.architectures, q.model.architecture))))
      continue;
    bool assumed = false, excluded = false;
    for (const std::string& t : a.model_traits) {
      // A trait read from a model attnsel knows decides; the kind's traits (mla, sparse_mla,
      // hybrid_gdn) rule out even for a kind that was assumed. A trait that could not be read (an
      // unresolved model; gqa without the head counts) may not hold: at most a warning, unless
      // the model's family or architecture matched the advisory's (the family has it).
      const Tri v = trait(q.model, t);
      const bool from_kind = t == "mla" || t == "sparse_mla" || t == "hybrid_gdn";
      if ((q.model_known || from_kind) && v == Tri::no) excluded = true;
      if (!q.model_known || (v == Tri::unknown && !model_condition)) assumed = true;
    }
    if (excluded) continue;
    bool flags_hold = true;
    std::string first_flag;
    for (const AdvisoryCondition& c : a.flags) {
      const auto given = flag_value(q, c.name);
      if (!holds(c, given, q.flags_open_ended)) flags_hold = false;
      if (given && !c.absent && first_flag.empty()) first_flag = c.name;
    }
    if (!flags_hold) continue;
    if (!std::all_of(a.env.begin(), a.env.end(),
                     [&](const AdvisoryCondition& c) { return holds(c, env_value(q, c.name), false); }))
      continue;

    // The release decides the severity.
    AdvisoryMatch m;
    m.advisory = &a;
    m.flag = first_flag;
    m.traits_assumed = assumed;
    const std::string merged = a.fix_merged.empty() ? std::string() : fmt::format(", fix merged {}", a.fix_merged);
    const std::string note = a.range_note.empty() ? std::string() : " (" + short_note(a.range_note) + ")";
    Severity in_range_severity = a.severe() ? Severity::error : Severity::warning;
    const bool development = development_build(q.release_text);
    if (a.likely_main_only) {
      // A bug of the main branch between two releases: quiet for a tagged release, a warning for a
      // development build (which may date from the affected window), a note when the release is unknown.
      if (q.release && !development) continue;
      m.severity = development ? Severity::warning : Severity::info;
      m.standing = development
                       ? fmt::format("a main-branch bug{}: {} is a development build, affected if it dates from before the fix",
                                     merged, q.release_text)
                       : fmt::format("a main-branch bug{}: it affects only nightlies and source builds from around then", merged);
    } else if (q.release) {
      const std::string r = q.release_text.empty() ? to_string(*q.release) : q.release_text;
      if (a.introduced && *q.release < *a.introduced) continue;
      // A development build or release candidate of the fixing release may predate the fix.
      const bool before_fix_unknown = a.fixed && development && !(*q.release < *a.fixed) && !(*a.fixed < *q.release);
      if (a.fixed && !(*q.release < *a.fixed) && !before_fix_unknown) continue;
      if (before_fix_unknown) {
        m.severity = Severity::warning;
        m.standing = fmt::format("{} is a pre-release of {}, the release with the fix{}: affected if it predates the fix", r,
                                 a.fixed_text, merged);
      } else if (a.fixed) {
        m.in_range = true;
        m.severity = in_range_severity;
        m.standing = a.introduced ? fmt::format("release {} is affected (introduced {}, fixed in {}: upgrade)", r,
                                                a.introduced_text, a.fixed_text)
                                  : fmt::format("release {} is affected (fixed in {}: upgrade)", r, a.fixed_text);
      } else if (a.introduced && a.status == "open") {
        m.in_range = true;
        m.severity = in_range_severity;
        m.standing = fmt::format("release {} is affected (introduced {}; no fix merged yet)", r, a.introduced_text);
      } else {
        m.severity = Severity::warning;
        m.standing = a.status == "open"
                         ? fmt::format("no fix merged; the first affected release is not known: compare it with {}{}", r, note)
                         : fmt::format("the affected releases are not known{}: compare them with {}{}", merged, r, note);
      }
    } else if (a.fixed) {
      m.severity = Severity::info;
      m.standing = fmt::format("fixed in {}: upgrade if you run an older release (pass --engine-version to judge it)",
                               a.fixed_text);
    } else {
      m.severity = Severity::warning;
      m.standing = a.status == "open" ? fmt::format("no fix merged; the release is not known (pass --engine-version){}", note)
                                      : fmt::format("the affected releases are not known{}{}", merged, note);
    }
    if (assumed && m.severity == Severity::error) {
      m.severity = Severity::warning;
      m.standing += "; attnsel could not read whether the model has " +
                    fmt::format("{}", fmt::join(a.model_traits, ", ")) + ", so it may not apply";
    }
    out.push_back(std::move(m));
  }
  return out;
}

std::string_view advisory_standing(const Advisory& a, ReleaseVersion release) {
  if (a.introduced && release < *a.introduced) return "not yet introduced";
  if (a.fixed && !(release < *a.fixed)) return "fixed";
  if (a.likely_main_only) return "main only";
  if (a.fixed || (a.introduced && a.status == "open")) return "affected";
  return "unknown";
}

bool advisory_selected(const Advisory& a, const AdvisoryFilter& f) {
  if (!f.engine.empty() && !iequal(a.engine, f.engine)) return false;
  if (!f.platform.empty() && !a.platform.empty() && !iequal(a.platform, f.platform)) return false;
  if (!f.gpu.empty() && !a.gpus.empty() && !contains(a.gpus, f.gpu)) return false;
  if (!f.backend.empty() && !a.backends.empty() && !contains(a.backends, f.backend)) return false;
  if (!f.effect.empty() && !iequal(a.effect, f.effect)) return false;
  if (!f.model.empty() && (!a.model_families.empty() || !a.architectures.empty()) &&
      !contains(a.model_families, f.model) && !contains(a.architectures, f.model) && !contains(a.models, f.model))
    return false;
  if (f.release) {
    const std::string_view s = advisory_standing(a, *f.release);
    if (s == "fixed" || s == "not yet introduced" || s == "main only") return false;
  }
  return true;
}

std::string advisory_json(const Advisory& a, int indent) {
  using json = nlohmann::ordered_json;
  auto nullable = [](const std::string& s) { return s.empty() ? json(nullptr) : json(s); };
  auto conditions = [](const std::vector<AdvisoryCondition>& list, const char* key) {
    json out = json::array();
    for (const AdvisoryCondition& c : list) {
      json j;
      j[key] = c.name;
      if (c.values.size() == 1) j["value"] = c.values.front();
      if (c.values.size() > 1) j["values"] = c.values;
      if (c.min) j["min"] = *c.min;
      if (c.absent) j["absent"] = true;
      if (!c.note.empty()) j["note"] = c.note;
      out.push_back(std::move(j));
    }
    return out;
  };
  json j;
  j["id"] = a.id;
  j["engine"] = a.engine;
  j["title"] = a.title;
  j["status"] = a.status;
  j["effect"] = a.effect;
  j["introduced"] = nullable(a.introduced_text);
  j["fixed"] = nullable(a.fixed_text);
  j["fix_merged"] = nullable(a.fix_merged);
  j["range_note"] = nullable(a.range_note);
  j["likely_main_only"] = a.likely_main_only;
  j["runtime"] = a.runtime;
  j["platform"] = nullable(a.platform);
  j["gpus"] = a.gpus;
  j["backends"] = a.backends;
  j["kv_cache_dtype"] = a.kv_cache_dtypes;
  j["model_families"] = a.model_families;
  j["architectures"] = a.architectures;
  j["model_traits"] = a.model_traits;
  j["models"] = a.models;
  j["flags"] = conditions(a.flags, "flag");
  j["env"] = conditions(a.env, "name");
  j["summary"] = a.summary;
  j["workaround"] = nullable(a.workaround);
  j["link"] = a.link();
  j["links"] = {{"issues", a.issues}, {"fix", a.fix}, {"related", a.related}};
  return j.dump(indent < 0 ? -1 : indent, ' ', false, json::error_handler_t::replace);
}

}  // namespace attnsel
