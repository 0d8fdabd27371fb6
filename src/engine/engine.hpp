// The engine's entry points for the library's own callers.
#pragma once

#include <array>
#include <bitset>
#include <memory>
#include <vector>

#include "attnsel/selection.hpp"
#include "engine/condition.hpp"

namespace attnsel::detail {

// select(), judging every other candidate at once (Selection::rejected and alternatives are then
// ready): for a caller that reads them after every selection.
ATTNSEL_API Result<Selection> select_judging_all(const std::shared_ptr<const Matrix>& matrix, const Request& request);

// For the whole-space lint, which selects many times per configuration and needs of the candidates a
// selection does not choose only the rules that reject them (the rules of Selection::rejected). A
// candidate judged again in a context it was already judged in (same configuration, page size,
// explicitness ...) is rejected by the same rules, so it is judged once per context.
class RejectionRules {
 public:
  // The rules of every rejection of the last selection, in no order, with repeats; the caller clears it.
  std::vector<const RuleInfo*> rules;

  // The next selections are of another configuration (device, model, dtype ...): forget every context.
  void new_configuration() { contexts_used_ = 0; }

  // The context of a selection's remaining judging (its page size, KV dtype ...; not the backend):
  // a handle for first_time(), or -1 when too many contexts were seen to remember another.
  int context(const EvalContext& ctx) {
    const Context::Key key{ctx.page_size, ctx.kv_dtype, ctx.page_size_explicit, ctx.radix_cache, ctx.kv_dtype_explicit};
    std::size_t at = 0;
    while (at < contexts_used_ && !(contexts_[at].key == key)) ++at;
    if (at == contexts_used_) {
      if (at == contexts_.size()) return -1;
      contexts_[at].key = key;
      contexts_[at].judged.reset();
      ++contexts_used_;
    }
    return static_cast<int>(at);
  }

  // Whether the candidate has not been judged in this phase and context yet in this configuration;
  // records that it now is.
  bool first_time(int context, BackendId b, int phase, bool backend_explicit) {
    if (context < 0) return true;  // not remembered: judge again
    const std::size_t bit = (static_cast<std::size_t>(b) * kPhaseCount + static_cast<std::size_t>(phase)) * 2 + (backend_explicit ? 1 : 0);
    auto& judged = contexts_[static_cast<std::size_t>(context)].judged;
    if (judged.test(bit)) return false;
    judged.set(bit);
    return true;
  }

 private:
  struct Context {
    struct Key {
      int page_size = 0;
      KvCacheDtype kv_dtype = KvCacheDtype::auto_;
      bool page_size_explicit = false, radix_cache = false, kv_dtype_explicit = false;
      bool operator==(const Key& o) const {
        return page_size == o.page_size && kv_dtype == o.kv_dtype && page_size_explicit == o.page_size_explicit &&
               radix_cache == o.radix_cache && kv_dtype_explicit == o.kv_dtype_explicit;
      }
    } key;
    std::bitset<kMaxBackends * kPhaseCount * 2> judged;  // by backend, phase and whether it is explicit
  };
  std::array<Context, 8> contexts_;
  std::size_t contexts_used_ = 0;
};

// select() for the lint: Selection::rejected is left unjudged; the rules that reject the candidates
// not chosen are appended to rejections.rules instead, for contexts not seen before.
Result<Selection> select_for_lint(const std::shared_ptr<const Matrix>& matrix, const Request& request,
                                  RejectionRules& rejections);

}  // namespace attnsel::detail
