// The SGLang launch flags that realise a plan, and small Selection accessors.
#include <fmt/format.h>

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
  std::vector<std::string> out;
  auto add = [&](const std::string& flag, std::string value) {
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
  if (!slots.empty() && matrix->info().paged_kv_cache) add("--page-size", std::to_string(page.page_size));
  if (request.kv_cache_dtype != KvCacheDtype::auto_) add("--kv-cache-dtype", std::string(name_of(request.kv_cache_dtype)));
  if (request.speculative_topk > 0) add("--speculative-eagle-topk", std::to_string(request.speculative_topk));
  if (request.speculative_attention_mode == Phase::decode) add("--speculative-attention-mode", "decode");
  if (request.deterministic) out.push_back("--enable-deterministic-inference");
  if (!radix_cache) out.push_back("--disable-radix-cache");
  return out;
}

std::string_view name_of(ChoiceOrigin o) {
  switch (o) {
    case ChoiceOrigin::explicit_flag: return "explicit";
    case ChoiceOrigin::sglang_auto: return "sglang-auto";
    case ChoiceOrigin::attnsel_auto: return "attnsel-auto";
    case ChoiceOrigin::slot_default: return "default";
    case ChoiceOrigin::rewritten: return "rewritten";
  }
  return "?";
}

std::string_view name_of(PageOrigin o) {
  switch (o) {
    case PageOrigin::requested: return "requested";
    case PageOrigin::sglang_default: return "sglang-default";
    case PageOrigin::sglang_rewrite: return "sglang-rewrite";
    case PageOrigin::planned: return "planned";
  }
  return "?";
}

}  // namespace attnsel
