// A checked command's advisories: the query from its plan, the matches as findings.
#include "advisory/check_advisories.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "attnsel/advisory.hpp"

namespace attnsel::detail {
namespace {

constexpr std::string_view kDiffusionSuffix = "-diffusion";

bool model_known(const ModelTraits& m) {
  return !m.origin.empty() && m.origin.rfind("assumed", 0) != 0 && m.origin != "kind name";
}

std::string message_of(const AdvisoryMatch& m) {
  const Advisory& a = *m.advisory;
  std::string text = fmt::format("known {} bug {}: {} ({})", a.effect, a.id, a.title, m.standing);
  if (!a.workaround.empty()) text += fmt::format(". Workaround: {}", a.workaround);
  if (!a.link().empty()) text += fmt::format(" See {}", a.link());
  return text;
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& advisory_environment() {
  static const std::vector<std::pair<std::string, std::string>> variables = [] {
    std::vector<std::pair<std::string, std::string>> out;
    for (const std::string& engine : advisory_engines()) {
      auto advisories = builtin_advisories(engine);
      if (!advisories) continue;
      for (const Advisory& a : **advisories)
        for (const AdvisoryCondition& c : a.env)
          if (std::find(out.begin(), out.end(), std::make_pair(c.name, engine)) == out.end()) out.emplace_back(c.name, engine);
    }
    return out;
  }();
  return variables;
}

void add_advisory_findings(const Matrix& matrix, const LaunchCommand& command, const ParsedArgs& args,
                           const std::string& release, CommandCheck& check) {
  AdvisoryQuery q;
  q.engine = matrix.info().engine;
  if (q.engine.size() > kDiffusionSuffix.size() &&
      q.engine.compare(q.engine.size() - kDiffusionSuffix.size(), kDiffusionSuffix.size(), kDiffusionSuffix) == 0) {
    q.engine.resize(q.engine.size() - kDiffusionSuffix.size());
    q.runtime = "diffusion";
  }
  auto advisories = builtin_advisories(q.engine);
  if (!advisories || (*advisories)->empty()) return;
  q.release = release.empty() ? std::nullopt : parse_release(release);
  q.release_text = release;
  q.device = check.target.device;
  q.model = check.model;
  q.model_known = model_known(check.model);
  if (check.selection) {
    const Selection& s = *check.selection;
    for (const SlotPlan& slot : s.slots)
      for (const PhaseChoice& p : slot.phase)
        if (p.backend != kNoBackend) q.backends.push_back(s.name(p.backend));
    q.kv_cache_dtype = std::string(name_of(s.kv_cache_dtype));
  } else {
    q.backends_known = false;
  }
  for (const ParsedArgs::Given& g : args.given) {
    if (!g.flag) continue;
    AdvisoryQuery::Flag f;
    f.names = g.flag->names;
    f.written = g.written;
    if (!g.values.empty() && g.values.front().known()) f.value = g.values.front().text;
    if (g.unset) continue;
    q.flags.push_back(std::move(f));
  }
  q.flags_open_ended = args.open_ended;
  for (const LaunchCommand::EnvSetting& e : command.environment) q.env.emplace_back(e.name, e.value);

  for (const AdvisoryMatch& m : match_advisories(**advisories, q)) {
    CheckDiagnostic d;
    d.diagnostic.rule = "advisory." + m.advisory->id;
    d.diagnostic.severity = m.severity;
    d.diagnostic.message = message_of(m);
    d.diagnostic.source = m.advisory->link();
    for (const std::string& b : q.backends)
      for (const std::string& ab : m.advisory->backends)
        if (d.diagnostic.backend.empty() && b == ab) d.diagnostic.backend = b;
    d.line = command.line;
    if (!m.flag.empty()) {
      for (const ParsedArgs::Given& g : args.given) {
        if (!g.flag || g.origin.size()) continue;
        for (const std::string& n : g.flag->names)
          if (n == m.flag) {
            d.flag = g.written;
            d.value = g.values.empty() ? std::string() : g.values.front().text;
            if (g.line > 0) d.line = g.line;
          }
      }
    }
    check.findings.push_back(std::move(d));
  }
}

}  // namespace attnsel::detail
