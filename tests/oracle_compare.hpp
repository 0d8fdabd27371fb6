// What the oracle tests (oracle_test.cpp for SGLang, oracle_vllm_test.cpp for vLLM) share: attnsel's
// verdict on one case, its disagreement class against the engine's answer, and allowlist matching.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnsel/matrix.hpp"
#include "attnsel/selection.hpp"

namespace attnsel::oracle {

using nlohmann::json;

// attnsel's answer to one case.
struct Verdict {
  bool ok = false;
  std::string prefill, decode;
  int page_size = 0;
  std::string why;          // the first error, when refused
  std::string rule;         // its rule id
  bool not_judged = false;  // attnsel says it has no data for the command (select.not-judged)
};

inline std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// The verdict a selection gives: backends, page size, and whether the command as written runs.
inline void read_selection(const Selection& selection, Verdict& v) {
  const auto name = [&](Phase p) {
    const BackendId id = selection.backend(p);
    return id == kNoBackend ? std::string() : selection.name(id);
  };
  v.prefill = name(Phase::prefill);
  v.decode = name(Phase::decode);
  v.page_size = selection.page.page_size;
  v.ok = selection.ok();
  if (!v.ok) {
    // The cause rather than its consequence: a rule that refused every backend, before "no backend".
    const Finding* cause = &selection.errors.front();
    for (const Finding& f : selection.errors)
      if (selection.describe(f).rule != "select.no-backend") {
        cause = &f;
        break;
      }
    const Diagnostic d = selection.describe(*cause);
    v.why = first_line(d.message);
    v.rule = d.rule;
    return;
  }
  // The engine's own choice cannot run this: the command as written fails there, whatever
  // backend attnsel names in its place (select.default-fails).
  for (const Finding& f : selection.warnings) {
    const Diagnostic d = selection.describe(f);
    if (d.rule == "select.default-fails") {
      v.ok = false;
      v.why = first_line(d.message);
      v.rule = d.rule;
      return;
    }
  }
  // A page size the plan chose that the engine would not set: without the flag the engine keeps
  // its default, which the kernel cannot run (check's check.page-size-unset).
  if (selection.page.origin == PageOrigin::planned && !selection.page.requested) {
    v.ok = false;
    v.why = "the engine keeps its default page size, which the chosen kernel cannot run";
    v.rule = "check.page-size-unset";
  }
}

// One backend under two names: the engine's (an alias in the matrix, "nsa") and attnsel's ("dsa").
// vLLM's V1 backends of the v0.10-v0.11 era report get_name() with a "_VLLM_V1" suffix
// ("FLASHMLA_SPARSE_VLLM_V1"): the name of the class that ran, which no user can choose, so the
// unsuffixed name stands for it.
inline bool same_backend(const Matrix& m, const std::string& engine, const std::string& ours) {
  if (engine == ours) return true;
  if (const auto id = m.find_backend(engine, 0); id && m.backend(*id).name == ours) return true;
  constexpr std::string_view kV1 = "_VLLM_V1";
  return engine.size() > kV1.size() && engine.compare(engine.size() - kV1.size(), kV1.size(), kV1) == 0 &&
         same_backend(m, engine.substr(0, engine.size() - kV1.size()), ours);
}

// The disagreement classes; "accepts-refused" is never allowed.
inline std::string classify(const Matrix& m, const json& c, const Verdict& v) {
  const bool engine_ok = c.at("ok").get<bool>();
  if (!engine_ok) return v.ok ? "accepts-refused" : "";
  if (!v.ok) return "refuses-accepted";
  const json& r = c.at("resolved");
  const auto str = [&](const char* k) { return r.contains(k) && r[k].is_string() ? r[k].get<std::string>() : ""; };
  if (!same_backend(m, str("prefill"), v.prefill) || !same_backend(m, str("decode"), v.decode)) return "different-backend";
  if (r.contains("page_size") && r["page_size"].is_number() && r["page_size"].get<int>() != v.page_size)
    return "different-page-size";
  return "";
}

// An allowlist entry matches a disagreement by release (or "*"), class, attnsel's rule (an id or a
// list of ids), the backend attnsel judged (`attnsel_backend`: its prefill or decode backend, any of a
// list), the backend the engine resolved (`engine_backend`, likewise), and any of the case's fields
// it names (gpu, model, flags as one string, cuda, platform, and `env`: each named variable holds
// one of the listed values).
struct Allowed {
  json entry;
  int used = 0;
  bool matches(const std::string& release, const std::string& cls, const Verdict& v, const json& c) const {
    const std::string& rule = v.rule;
    if (entry.value("class_of_disagreement", "") != cls) return false;
    const auto releases = entry.value("releases", std::vector<std::string>{"*"});
    if (std::find(releases.begin(), releases.end(), "*") == releases.end() &&
        std::find(releases.begin(), releases.end(), release) == releases.end())
      return false;
    if (entry.contains("attnsel_rule")) {  // one rule id, or a list of them
      const json& want = entry["attnsel_rule"];
      if (want.is_array() ? std::find(want.begin(), want.end(), rule) == want.end() : want != rule) return false;
    }
    for (const char* key : {"gpu", "model", "cuda", "platform"}) {
      if (!entry.contains(key)) continue;
      const auto want = entry[key].get<std::vector<std::string>>();
      const std::string have = c.value(key, "");
      if (std::find(want.begin(), want.end(), have) == want.end()) return false;
    }
    // A list of backends names the prefill or the decode one.
    const auto names_either = [&](const char* key, const std::string& prefill, const std::string& decode) {
      const auto want = entry[key].get<std::vector<std::string>>();
      return std::find(want.begin(), want.end(), prefill) != want.end() ||
             std::find(want.begin(), want.end(), decode) != want.end();
    };
    if (entry.contains("attnsel_backend") && !names_either("attnsel_backend", v.prefill, v.decode)) return false;
    if (entry.contains("engine_backend")) {  // the backend the engine resolved
      const json* r = c.contains("resolved") && c["resolved"].is_object() ? &c["resolved"] : nullptr;
      const auto resolved = [&](const char* phase) {
        return r && r->contains(phase) && (*r)[phase].is_string() ? (*r)[phase].get<std::string>() : std::string();
      };
      if (!names_either("engine_backend", resolved("prefill"), resolved("decode"))) return false;
    }
    if (entry.contains("env")) {
      for (const auto& [name, values] : entry["env"].items()) {
        const json* have = c.contains("env") && c["env"].is_object() && c["env"].contains(name) ? &c["env"][name] : nullptr;
        if (!have || !have->is_string() ||
            std::find(values.begin(), values.end(), have->get<std::string>()) == values.end())
          return false;
      }
    }
    if (entry.contains("flags_contain")) {
      std::string flags;
      for (const auto& f : c.at("flags")) flags += " " + f.get<std::string>();
      flags += " ";
      for (const auto& needle : entry["flags_contain"])
        if (flags.find(" " + needle.get<std::string>() + " ") == std::string::npos) return false;
    }
    return true;
  }
};

}  // namespace attnsel::oracle
