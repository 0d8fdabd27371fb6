#include "plan/page_plan.hpp"

#include <algorithm>
#include <numeric>

namespace attnsel::detail {
namespace {

bool allowed_by_all(const PageInputs& inputs, int size) {
  return std::all_of(inputs.begin(), inputs.end(), [&](const PageInput& in) { return !in.runs || in.cell->page_size.allows(size); });
}

// A size some backend is documented to run best with, if every backend accepts it.
std::optional<int> preferred(const PageInputs& inputs) {
  for (const auto& in : inputs)
    if (in.runs && in.cell->preferred_page_size && allowed_by_all(inputs, *in.cell->preferred_page_size))
      return in.cell->preferred_page_size;
  return std::nullopt;
}

// The smallest size every backend accepts: the first size of the first fixed-size backend that
// they all allow (sizes are sorted), else the least common multiple of the backends' multiples;
// nullopt when none exists. 1 when nothing constrains the size.
std::optional<int> smallest_common(const PageInputs& inputs) {
  auto fixed = std::find_if(inputs.begin(), inputs.end(),
                            [](const PageInput& in) { return in.runs && in.cell->page_size.mode == PageMode::fixed; });
  if (fixed != inputs.end()) {
    for (int size : fixed->cell->page_size.sizes)
      if (allowed_by_all(inputs, size)) return size;
    return std::nullopt;
  }
  long long lcm = 1;
  for (const auto& in : inputs) {
    if (!in.runs || in.cell->page_size.mode != PageMode::multiple) continue;
    lcm = std::lcm(lcm, static_cast<long long>(in.cell->page_size.multiple_of));
    if (lcm > (1 << 20)) return std::nullopt;
  }
  return static_cast<int>(lcm);
}

}  // namespace

PagePlan solve_page_plan(const PageInputs& inputs, std::optional<int> requested, int default_page_size,
                         Preference prefer, std::vector<Finding>& findings, const RuleInfo& conflict_rule,
                         const RuleInfo& rewrite_conflict_rule) {
  PagePlan plan;
  plan.requested = requested;
  for (const auto& in : inputs)
    if (in.runs) plan.constraints.push_back({in.backend, in.phase, &in.cell->page_size});

  // What SGLang itself ends up with: its forced sizes (applied in order, the last wins), else the request, else 1.
  const PageInput* forced = nullptr;
  for (const auto& in : inputs) {
    if (!in.forced) continue;
    if (forced && forced->runs && *forced->forced != *in.forced) {
      Finding f;
      f.rule = &rewrite_conflict_rule;
      f.severity = Severity::error;
      f.from = *forced->forced;
      f.to = *in.forced;
      f.values = Finding::Values::page_size;
      findings.push_back(f);
    }
    forced = &in;
  }
  if (forced) {
    plan.page_size = *forced->forced;
    plan.origin = PageOrigin::sglang_rewrite;
    plan.rewrite_rule = forced->forced_by;
  } else if (requested) {
    plan.page_size = *requested;
    plan.origin = PageOrigin::requested;
  } else {
    plan.page_size = default_page_size;
    plan.origin = PageOrigin::sglang_default;
  }
  if (requested) return plan;  // what the user asked for is judged per backend; never re-planned

  const std::optional<int> smallest = smallest_common(inputs);
  if (!smallest) {
    Finding f;
    f.rule = &conflict_rule;
    f.severity = Severity::error;
    findings.push_back(f);
    return plan;
  }
  auto choose = [&](int size) {
    if (size == plan.page_size) return;
    plan.page_size = size;
    plan.origin = PageOrigin::planned;
    plan.rewrite_rule = nullptr;
  };
  if (!allowed_by_all(inputs, plan.page_size)) {
    // A fixed-size kernel SGLang does not enforce: state a size it runs with.
    choose(preferred(inputs).value_or(*smallest));
  } else if (prefer == Preference::prefix_reuse) {
    choose(*smallest);
  } else if (prefer == Preference::throughput) {
    if (auto p = preferred(inputs)) choose(*p);
  }
  return plan;
}

namespace {

long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

// Bytes of one element of a dtype as config.json's torch_dtype writes it (bfloat16 when unsaid).
int model_dtype_bytes(const std::string& torch_dtype) { return torch_dtype == "float32" ? 4 : 2; }

// One token of one attention layer on one GPU: K and V of each KV head (vLLM's FullAttentionSpec
// page_size_bytes with block_size 1). nullopt for FP4, whose packed layout attnsel does not size (the
// engine's other layouts, per-token-head and TurboQuant caches, are not judged before this).
std::optional<long long> attention_bytes_per_token(const ModelTraits& m, int tp, KvCacheDtype kv_dtype) {
  if (!m.head_dim || !m.num_key_value_heads) return std::nullopt;
  int bytes = 0;
  switch (kv_dtype) {
    case KvCacheDtype::auto_: bytes = model_dtype_bytes(m.torch_dtype); break;
    case KvCacheDtype::bf16:
    case KvCacheDtype::fp16: bytes = 2; break;
    case KvCacheDtype::fp32: bytes = 4; break;
    case KvCacheDtype::fp8_e4m3:
    case KvCacheDtype::fp8_e5m2: bytes = 1; break;
    case KvCacheDtype::fp4_e2m1: return std::nullopt;
  }
  const long long kv_heads = std::max(1, *m.num_key_value_heads / tp);
  return 2 * kv_heads * *m.head_dim * bytes;
}

// One sequence's recurrent state on one GPU (vLLM's MambaStateShapeCalculator: the convolution state
// (conv_kernel - 1) x its channels, and the SSM state; heads and channels split across the GPUs, Mamba2
// groups replicated up to the tensor-parallel size when it does not divide them).
long long recurrent_state_bytes(const RecurrentState& st, int tp, int conv_bytes, int ssm_bytes) {
  const long long window = st.conv_kernel - 1;
  switch (st.kind) {
    case RecurrentState::Kind::gated_delta_net: {
      const long long channels = (2LL * st.head_k_dim * st.num_k_heads + 1LL * st.head_v_dim * st.num_v_heads) / tp;
      return window * channels * conv_bytes + 1LL * (st.num_v_heads / tp) * st.head_v_dim * st.head_k_dim * ssm_bytes;
    }
    case RecurrentState::Kind::mamba2: {
      const long long groups = st.n_groups % tp == 0 ? st.n_groups : tp;
      const long long channels = (st.intermediate_size + 2 * groups * st.state_size) / tp;
      return window * channels * conv_bytes + 1LL * (st.num_heads / tp) * st.head_dim * st.state_size * ssm_bytes;
    }
    case RecurrentState::Kind::mamba1: {
      const long long channels = st.intermediate_size / tp;
      return window * channels * conv_bytes + channels * st.state_size * ssm_bytes;
    }
  }
  return 0;
}

}  // namespace

std::optional<int> smallest_kernel_block(const PageSupport& support) {
  switch (support.mode) {
    case PageMode::multiple: return support.multiple_of;
    case PageMode::fixed:
      if (!support.sizes.empty()) return *std::min_element(support.sizes.begin(), support.sizes.end());
      return std::nullopt;
    default: return std::nullopt;
  }
}

std::optional<int> hybrid_block_size(const HybridPagePolicy& policy, const Request& request, KvCacheDtype kv_dtype,
                                     int planned, bool planned_given, std::optional<int> kernel_alignment,
                                     std::optional<int> rule_alignment) {
  const ModelTraits& m = request.model;
  if (!m.recurrent_state || m.kind == AttentionKind::mla || m.kind == AttentionKind::dsa) return std::nullopt;
  if (policy.only_given_block_size && !planned_given) return std::nullopt;
  const int tp = std::max(1, request.tensor_parallel_size);
  const auto attention = attention_bytes_per_token(m, tp, kv_dtype);
  if (!attention || *attention <= 0) return std::nullopt;
  const int conv_bytes = model_dtype_bytes(m.torch_dtype);
  const auto& f32 = policy.float32_state_architectures;
  const bool f32_state = std::find(f32.begin(), f32.end(), m.architecture) != f32.end();
  const long long state = recurrent_state_bytes(*m.recurrent_state, tp, conv_bytes, f32_state ? 4 : conv_bytes);
  if (state <= 0) return std::nullopt;
  long long alignment = policy.alignment;
  if (policy.alignment_from_backend && kernel_alignment) alignment = *kernel_alignment;
  if (rule_alignment) alignment = *rule_alignment;
  if (policy.align_to_block_size) alignment = std::max<long long>(alignment, planned);
  // alignment x ceil(state / (alignment x attention)), as nested ceilings: no product can overflow.
  const long long block = alignment * ceil_div(ceil_div(state, *attention), alignment);
  if (block <= planned || block > (1LL << 30)) return std::nullopt;
  return static_cast<int>(block);
}

}  // namespace attnsel::detail
