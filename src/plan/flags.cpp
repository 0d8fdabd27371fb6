// The engine launch flags that realise a plan, and small Selection accessors.
#include <fmt/format.h>

#include "attnsel/matrix.hpp"
#include "attnsel/profile.hpp"
#include "attnsel/selection.hpp"

namespace attnsel {

const SlotPlan* Selection::slot(std::string_view name) const {
  for (const auto& s : slots)
    if (matrix->slot(s.slot).name == name) return &s;
  return nullptr;
}

BackendId Selection::backend(Phase p) const {
  return slots.empty() ? kNoBackend : slots.front().phase[static_cast<int>(p)].backend;
}

namespace {

// The launch grammar of the release a built-in matrix describes (its generation's first release),
// so that a plan is spelled with the flags that release has; the newest for a matrix of one's own.
const Grammar* release_grammar(const Matrix& m, const EngineProfile& profile) {
  if (profile.launchers.empty()) return nullptr;
  const std::string& name = profile.launchers.front().grammar;
  if (auto generations = builtin_generations())
    for (const MatrixGeneration& g : *generations)
      if (g.engine == m.info().engine && m.info().origin == "built-in:" + g.file) return profile.grammar(name, to_string(g.since));
  return profile.grammar(name);
}

struct LaunchSettings {
  std::vector<std::string> flags;        // argv words
  std::vector<std::string> environment;  // NAME=VALUE
};

LaunchSettings launch_settings(const Selection& s) {
  const Matrix& m = *s.matrix;
  // The engine's own spellings, from its profile's launch grammar (the matrix names the slots' flags).
  auto profile = builtin_profile(m.info().engine);
  const Grammar* grammar = profile ? release_grammar(m, **profile) : nullptr;
  auto spelled = [&](std::string_view field) -> std::string {
    const GrammarFlag* f = grammar ? grammar->for_field(field) : nullptr;
    return f ? f->names.front() : std::string();
  };
  LaunchSettings settings;
  std::vector<std::string>& out = settings.flags;
  auto add = [&](const std::string& flag, std::string value) {
    if (flag.empty()) return;
    // A flag the release does not have yet, whose variable it reads instead (vLLM v0.11-v0.12:
    // VLLM_ATTENTION_BACKEND before --attention-backend).
    if (grammar && !grammar->exact(flag))
      for (const EngineProfile::EnvBinding& e : (*profile)->environment)
        if (e.replacement == flag) {
          settings.environment.push_back(e.variable + "=" + value);
          return;
        }
    out.push_back(flag);
    out.push_back(std::move(value));
  };
  const auto& slots = s.slots;
  const auto& request = s.request;
  const auto& page = s.page;
  const bool radix_cache = s.radix_cache;
  const auto name = [&](BackendId id) { return s.name(id); };
  const Matrix* matrix = &m;
  for (const auto& sp : slots) {
    const Slot& s = matrix->slot(sp.slot);
    const PhaseChoice& pre = sp.phase[0];
    const PhaseChoice& dec = sp.phase[1];
    if (pre.backend == kNoBackend || dec.backend == kNoBackend) continue;
    // The flag's own default needs no flag.
    if (pre.origin == ChoiceOrigin::slot_default && dec.origin == ChoiceOrigin::slot_default) continue;
    if ((pre.backend == dec.backend || !s.phased) && !s.flag.empty()) {
      add(s.flag, name(pre.backend));
    } else {
      add(s.prefill_flag, name(pre.backend));
      add(s.decode_flag, name(dec.backend));
    }
  }
  if (!slots.empty() && matrix->info().paged_kv_cache) add(spelled("page_size"), std::to_string(page.page_size));
  if (request.kv_cache_dtype != KvCacheDtype::auto_) {
    // The engine's spelling of attnsel's dtype: the same name when the engine has it, else the first that maps to it.
    const std::string canonical(name_of(request.kv_cache_dtype));
    std::string engine_name;
    if (const Vocabulary* v = profile ? (*profile)->vocabulary("kv_cache_dtype") : nullptr)
      for (const auto& [spelling, target] : v->spellings)
        if (target == canonical && (engine_name.empty() || spelling == canonical)) engine_name = spelling;
    add(spelled("kv_cache_dtype"), engine_name.empty() ? canonical : engine_name);
  }
  if (request.speculative_topk > 0) add(spelled("speculative.topk"), std::to_string(request.speculative_topk));
  if (request.speculative_attention_mode == Phase::decode)
    add(spelled("speculative.attention_mode"), std::string(name_of(Phase::decode)));
  auto flag_only = [&](std::string_view field) {
    if (std::string f = spelled(field); !f.empty()) out.push_back(std::move(f));
  };
  if (request.deterministic) flag_only("deterministic");
  if (!radix_cache) flag_only("disable_radix_cache");
  return settings;
}

}  // namespace

std::vector<std::string> Selection::flags() const { return launch_settings(*this).flags; }

std::vector<std::string> Selection::environment() const { return launch_settings(*this).environment; }

std::string_view name_of(ChoiceOrigin o) {
  switch (o) {
    case ChoiceOrigin::explicit_flag: return "explicit";
    case ChoiceOrigin::sglang_auto: return "engine-auto";
    case ChoiceOrigin::attnsel_auto: return "attnsel-auto";
    case ChoiceOrigin::slot_default: return "default";
    case ChoiceOrigin::rewritten: return "rewritten";
  }
  return "?";
}

std::string_view name_of(PageOrigin o) {
  switch (o) {
    case PageOrigin::requested: return "requested";
    case PageOrigin::sglang_default: return "engine-default";
    case PageOrigin::sglang_rewrite: return "engine-rewrite";
    case PageOrigin::planned: return "planned";
  }
  return "?";
}

}  // namespace attnsel
