// The page-size plan: one page size that every chosen backend runs with, what SGLang forces,
// and what it costs prefix caching. A constraint solved in the open, never a value changed silently.
#pragma once

#include <optional>
#include <vector>

#include "attnsel/selection.hpp"

namespace attnsel::detail {

struct PageInput {
  BackendId backend = kNoBackend;
  Phase phase = Phase::prefill;
  const Cell* cell = nullptr;
  std::optional<int> forced;           // the size SGLang forces for this backend, if it does
  const RuleInfo* forced_by = nullptr;
};
using PageInputs = SmallVector<PageInput, 6>;  // one per chosen backend and phase

PagePlan solve_page_plan(const PageInputs& inputs, std::optional<int> requested, int default_page_size,
                         Preference prefer, std::vector<Finding>& findings, const RuleInfo& conflict_rule,
                         const RuleInfo& rewrite_conflict_rule);

}  // namespace attnsel::detail
