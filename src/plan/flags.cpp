// The engine launch flags that realise a plan, and small Selection accessors.
#include <fmt/format.h>

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

std::vector<std::string> Selection::flags() const {
  // The engine's own spellings, from its profile's launch grammar (the matrix names the slots' flags).
  auto profile = builtin_profile(matrix->info().engine);
  const Grammar* grammar = profile && !(*profile)->launchers.empty() ? (*profile)->grammar((*profile)->launchers.front().grammar)
                                                                   : nullptr;
  auto spelled = [&](std::string_view field) -> std::string {
    const GrammarFlag* f = grammar ? grammar->for_field(field) : nullptr;
    return f ? f->names.front() : std::string();
  };
  std::vector<std::string> out;
  auto add = [&](const std::string& flag, std::string value) {
    if (flag.empty()) return;
    out.push_back(flag);
    out.push_back(std::move(value));
  };
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
  return out;
}

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
