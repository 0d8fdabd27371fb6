#include "plan/page_plan.hpp"

#include <algorithm>
#include <numeric>

namespace attnsel::detail {
namespace {

bool allowed_by_all(const PageInputs& inputs, int size) {
  return std::all_of(inputs.begin(), inputs.end(), [&](const PageInput& in) { return in.cell->page_size.allows(size); });
}

// A size some backend is documented to run best with, if every backend accepts it.
std::optional<int> preferred(const PageInputs& inputs) {
  for (const auto& in : inputs)
    if (in.cell->preferred_page_size && allowed_by_all(inputs, *in.cell->preferred_page_size))
      return in.cell->preferred_page_size;
  return std::nullopt;
}

// The smallest size every backend accepts: the first size of the first fixed-size backend that
// they all allow (sizes are sorted), else the least common multiple of the backends' multiples;
// nullopt when none exists. 1 when nothing constrains the size.
std::optional<int> smallest_common(const PageInputs& inputs) {
  auto fixed = std::find_if(inputs.begin(), inputs.end(), [](const PageInput& in) { return in.cell->page_size.mode == PageMode::fixed; });
  if (fixed != inputs.end()) {
    for (int size : fixed->cell->page_size.sizes)
      if (allowed_by_all(inputs, size)) return size;
    return std::nullopt;
  }
  long long lcm = 1;
  for (const auto& in : inputs) {
    if (in.cell->page_size.mode != PageMode::multiple) continue;
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
  for (const auto& in : inputs) plan.constraints.push_back({in.backend, in.phase, &in.cell->page_size});

  // What SGLang itself ends up with: its forced sizes (applied in order, the last wins), else the request, else 1.
  const PageInput* forced = nullptr;
  for (const auto& in : inputs) {
    if (!in.forced) continue;
    if (forced && *forced->forced != *in.forced) {
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

}  // namespace attnsel::detail
