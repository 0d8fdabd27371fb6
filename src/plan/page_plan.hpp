// The page-size plan: one page size that every chosen backend runs with, what SGLang forces,
// and what it costs prefix caching. A constraint solved in the open, never a value changed silently.
#pragma once

#include <optional>
#include <vector>

#include "attnsel/matrix.hpp"
#include "attnsel/request.hpp"
#include "attnsel/selection.hpp"

namespace attnsel::detail {

struct PageInput {
  BackendId backend = kNoBackend;
  Phase phase = Phase::prefill;
  const Cell* cell = nullptr;
  std::optional<int> forced;           // the size SGLang forces for this backend, if it does
  const RuleInfo* forced_by = nullptr;
  // False for a backend no phase runs whose rewrite still applies (Slot::split_default): its size
  // is forced first, and neither its cell nor a later phase's different size conflicts with it.
  bool runs = true;
};
using PageInputs = SmallVector<PageInput, 6>;  // one per chosen backend and phase

PagePlan solve_page_plan(const PageInputs& inputs, std::optional<int> requested, int default_page_size,
                         Preference prefer, std::vector<Finding>& findings, const RuleInfo& conflict_rule,
                         const RuleInfo& rewrite_conflict_rule);

// The block a hybrid model runs with under the matrix's hybrid_page policy: at least `planned`, raised
// to hold one sequence's recurrent state in one attention block; nullopt when the policy leaves the
// plan alone (no recurrent state in the config, an MLA model, a KV dtype whose page attnsel cannot
// size, a default block the release keeps). `kernel_alignment`: the chosen backend's smallest kernel
// block, where its cell names one.
// `rule_alignment`: the alignment of the first alignment_rules entry that holds, which wins over both.
std::optional<int> hybrid_block_size(const HybridPagePolicy& policy, const Request& request, KvCacheDtype kv_dtype,
                                     int planned, bool planned_given, std::optional<int> kernel_alignment,
                                     std::optional<int> rule_alignment);

// A backend's smallest kernel block: its multiple, or its smallest fixed size; nullopt for any size.
std::optional<int> smallest_kernel_block(const PageSupport& support);

}  // namespace attnsel::detail
