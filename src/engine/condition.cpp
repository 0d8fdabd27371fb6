#include "engine/condition.hpp"

#include <algorithm>

namespace attnsel::detail {
namespace {

bool in_ranges(const std::vector<VersionRange>& ranges, const std::optional<Version>& v) {
  if (!v) return false;  // an unknown version satisfies no range
  return std::any_of(ranges.begin(), ranges.end(), [&](const VersionRange& r) { return r.contains(*v); });
}

bool has(BackendSet set, BackendId id) { return id != kNoBackend && set.test(id); }

}  // namespace

bool matches(const Condition& c, const EvalContext& ctx) {
  const Request& req = *ctx.request;
  const std::uint32_t f = c.fields;
  if (f & Condition::f_backend && !has(c.backend, ctx.backend)) return false;
  if (f & Condition::f_phase && (ctx.phase < 0 || !c.phase.contains(static_cast<Phase>(ctx.phase)))) return false;
  if (f & Condition::f_prefill_backend && !has(c.prefill_backend, ctx.prefill)) return false;
  if (f & Condition::f_decode_backend && !has(c.decode_backend, ctx.decode)) return false;
  if (f & Condition::f_any_backend && !has(c.any_backend, ctx.prefill) && !has(c.any_backend, ctx.decode)) return false;
  if (f & Condition::f_hybrid && (ctx.prefill != ctx.decode) != c.hybrid) return false;
  if (f & Condition::f_kind && !c.kind.contains(req.model.kind)) return false;
  if (f & Condition::f_platform && !c.platform.contains(req.device.platform)) return false;
  if (f & Condition::f_cc && !in_ranges(c.cc, req.device.compute_capability)) return false;
  if (f & Condition::f_cuda && !in_ranges(c.cuda, req.device.cuda)) return false;
  if (f & Condition::f_kv_dtype && !c.kv_dtype.contains(ctx.kv_dtype)) return false;
  if (f & Condition::f_kv_dtype_explicit && ctx.kv_dtype_explicit != c.kv_dtype_explicit) return false;
  if (f & Condition::f_dtype && !c.dtype.contains(req.dtype)) return false;
  // Packages nobody reported are assumed present (cell.requires-unknown says so).
  if (f & Condition::f_installed && req.installed_known)
    for (const auto& p : c.installed)
      if (std::find(req.installed.begin(), req.installed.end(), p) == req.installed.end()) return false;
  if (f & Condition::f_topk && !c.topk.matches(req.speculative_topk)) return false;
  if (f & Condition::f_page_size && !c.page_size.matches(ctx.page_size)) return false;
  if (f & Condition::f_page_size_explicit && ctx.page_size_explicit != c.page_size_explicit) return false;
  if (f & Condition::f_backend_explicit && ctx.backend_explicit != c.backend_explicit) return false;
  if (f & Condition::f_sliding_window && req.model.sliding_window != c.sliding_window) return false;
  if (f & Condition::f_multimodal && req.model.multimodal != c.multimodal) return false;
  if (f & Condition::f_attention_sinks && req.model.attention_sinks != c.attention_sinks) return false;
  if (f & Condition::f_deterministic && req.deterministic != c.deterministic) return false;
  if (f & Condition::f_radix_cache && ctx.radix_cache != c.radix_cache) return false;
  if (f & Condition::f_spec_mode && req.speculative_attention_mode != c.spec_mode) return false;
  if (f & Condition::f_family && std::find(c.family.begin(), c.family.end(), req.model.family) == c.family.end())
    return false;
  if (f & Condition::f_architecture &&
      std::find(c.architecture.begin(), c.architecture.end(), req.model.architecture) == c.architecture.end())
    return false;
  if (f & Condition::f_kv_heads && !(req.model.num_key_value_heads && c.kv_heads.matches(*req.model.num_key_value_heads)))
    return false;
  if (f & Condition::f_head_dim && !(req.model.head_dim && c.head_dim.matches(*req.model.head_dim))) return false;
  for (const auto& sub : c.all)
    if (!matches(sub, ctx)) return false;
  if (!c.any.empty() && std::none_of(c.any.begin(), c.any.end(), [&](const Condition& sub) { return matches(sub, ctx); }))
    return false;
  for (const auto& sub : c.none)
    if (matches(sub, ctx)) return false;
  return true;
}

}  // namespace attnsel::detail
