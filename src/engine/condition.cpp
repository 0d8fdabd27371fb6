#include "engine/condition.hpp"

#include <algorithm>

namespace attnsel::detail {
namespace {

bool in_ranges(const std::vector<VersionRange>& ranges, const std::optional<Version>& v) {
  if (!v) return false;  // an unknown version satisfies no range
  return std::any_of(ranges.begin(), ranges.end(), [&](const VersionRange& r) { return r.contains(*v); });
}

bool has(BackendSet set, BackendId id) { return id != kNoBackend && set.test(id); }

// One field of a condition against the context. Fields combine with AND, so their order does not
// change the result: matches() tests only the fields a condition sets, cheap ones first.
[[gnu::always_inline]] inline bool field_matches(std::uint64_t field, const Condition& c, const EvalContext& ctx) {
  const Request& req = *ctx.request;
  switch (field) {
    case Condition::f_backend: return has(c.backend, ctx.backend);
    case Condition::f_phase: return ctx.phase >= 0 && c.phase.contains(static_cast<Phase>(ctx.phase));
    case Condition::f_prefill_backend: return has(c.prefill_backend, ctx.prefill);
    case Condition::f_decode_backend: return has(c.decode_backend, ctx.decode);
    case Condition::f_any_backend: return has(c.any_backend, ctx.prefill) || has(c.any_backend, ctx.decode);
    case Condition::f_hybrid: return (ctx.prefill != ctx.decode) == c.hybrid;
    case Condition::f_kind: return c.kind.contains(req.model.kind);
    case Condition::f_platform: return c.platform.contains(req.device.platform);
    case Condition::f_cc: return in_ranges(c.cc, req.device.compute_capability);
    case Condition::f_cuda: return in_ranges(c.cuda, req.device.cuda);
    case Condition::f_kv_dtype: return c.kv_dtype.contains(ctx.kv_dtype);
    case Condition::f_kv_dtype_explicit: return ctx.kv_dtype_explicit == c.kv_dtype_explicit;
    case Condition::f_dtype: return c.dtype.contains(req.dtype);
    case Condition::f_installed:
      // Packages nobody reported are assumed present (cell.requires-unknown says so).
      if (!req.installed_known) return true;
      for (const auto& p : c.installed)
        if (std::find(req.installed.begin(), req.installed.end(), p) == req.installed.end()) return false;
      return true;
    case Condition::f_topk: return c.topk.matches(req.speculative_topk);
    case Condition::f_page_size: return c.page_size.matches(ctx.page_size);
    case Condition::f_page_size_explicit: return ctx.page_size_explicit == c.page_size_explicit;
    case Condition::f_backend_explicit: return ctx.backend_explicit == c.backend_explicit;
    case Condition::f_phase_flag: return ctx.phase_flag == c.phase_flag;
    case Condition::f_replaced: return ctx.replaced == c.replaced;
    case Condition::f_sliding_window: return req.model.sliding_window == c.sliding_window;
    case Condition::f_multimodal: return req.model.multimodal == c.multimodal;
    case Condition::f_attention_sinks: return req.model.attention_sinks == c.attention_sinks;
    case Condition::f_deterministic: return req.deterministic == c.deterministic;
    case Condition::f_radix_cache: return ctx.radix_cache == c.radix_cache;
    case Condition::f_spec_mode: return req.speculative_attention_mode == c.spec_mode;
    case Condition::f_family: return std::find(c.family.begin(), c.family.end(), req.model.family) != c.family.end();
    case Condition::f_architecture:
      return std::find(c.architecture.begin(), c.architecture.end(), req.model.architecture) != c.architecture.end();
    case Condition::f_kv_heads: return req.model.num_key_value_heads && c.kv_heads.matches(*req.model.num_key_value_heads);
    case Condition::f_config_has:
    case Condition::f_config_lacks: {
      if (!req.model.config_keys) return false;  // no config.json read: attnsel cannot tell either way
      const bool want = field == Condition::f_config_has;
      for (const auto& key : want ? c.config_has : c.config_lacks)
        if (std::binary_search(req.model.config_keys->begin(), req.model.config_keys->end(), key) != want) return false;
      return true;
    }
    case Condition::f_head_dim: return req.model.head_dim && c.head_dim.matches(*req.model.head_dim);
    case Condition::f_heads_per_rank:
      return req.model.num_attention_heads && req.tensor_parallel_size >= 1 &&
             c.heads_per_rank.matches(*req.model.num_attention_heads / req.tensor_parallel_size);
    case Condition::f_kv_dtype_written:
      return !req.kv_cache_dtype_written.empty() &&
             std::find(c.kv_dtype_written.begin(), c.kv_dtype_written.end(), req.kv_cache_dtype_written) !=
                 c.kv_dtype_written.end();
    default: return true;  // no such field
  }
}

// Fields that compare strings or walk ranges: tested after every other field has passed.
constexpr std::uint64_t kCostlyFields = Condition::f_cc | Condition::f_cuda | Condition::f_installed | Condition::f_family |
                                        Condition::f_architecture | Condition::f_kv_heads | Condition::f_head_dim | Condition::f_heads_per_rank |
                                        Condition::f_config_has | Condition::f_config_lacks | Condition::f_kv_dtype_written |
                                        Condition::f_topk | Condition::f_page_size;

[[gnu::always_inline]] inline bool fields_match(std::uint64_t fields, const Condition& c, const EvalContext& ctx) {
  for (; fields != 0; fields &= fields - 1)
    if (!field_matches(fields & (~fields + 1), c, ctx)) return false;  // the lowest field set
  return true;
}

}  // namespace

bool matches(const Condition& c, const EvalContext& ctx) {
  if (!fields_match(c.fields & ~kCostlyFields, c, ctx) || !fields_match(c.fields & kCostlyFields, c, ctx)) return false;
  for (const auto& sub : c.all)
    if (!matches(sub, ctx)) return false;
  if (!c.any.empty() && std::none_of(c.any.begin(), c.any.end(), [&](const Condition& sub) { return matches(sub, ctx); }))
    return false;
  for (const auto& sub : c.none)
    if (matches(sub, ctx)) return false;
  return true;
}

}  // namespace attnsel::detail
