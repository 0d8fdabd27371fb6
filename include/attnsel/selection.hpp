// The result of selection: the chosen backends per slot and phase, the page-size plan,
// and every reason (errors, warnings, notes, rejected candidates) as data.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attnsel/error.hpp"
#include "attnsel/export.hpp"
#include "attnsel/matrix.hpp"
#include "attnsel/request.hpp"
#include "attnsel/small_vector.hpp"

namespace attnsel {

// One reason: the rule that fired and what it fired on. Messages are rendered on demand
// (Selection::describe) so that selection itself stays cheap.
struct Finding {
  enum class Values : std::uint8_t { none, page_size, backend, kv_dtype, dtype, slot, topk };
  const RuleInfo* rule = nullptr;
  Severity severity = Severity::error;
  BackendId backend = kNoBackend;
  std::int8_t phase = -1;   // Phase, or -1 when the finding is not about one phase
  const Cell* cell = nullptr;
  int from = 0;             // rewrites: the old value (page size, backend id, kv dtype)
  int to = 0;               // rewrites: the new value
  Values values = Values::none;  // what from/to hold
  std::string detail;       // a name the message needs ({detail}: a package, a config parameter); usually empty
};

// A finding rendered for people and machines.
struct Diagnostic {
  std::string rule;
  Severity severity = Severity::error;
  std::string message;
  std::string source;
  std::string backend;  // "" when not about one backend
  std::string phase;    // "" when not about one phase
};

// How a slot's backend was decided for one phase.
enum class ChoiceOrigin : std::uint8_t {
  explicit_flag,   // the user passed it
  sglang_auto,     // SGLang's automatic selection (a selection entry)
  attnsel_auto,    // SGLang's own choice would fail here; attnsel picked the next valid one
  slot_default,    // the flag's default value (e.g. --linear-attn-backend triton)
  rewritten,       // SGLang silently replaces the requested backend (a rule with set.backend)
};
ATTNSEL_API std::string_view name_of(ChoiceOrigin o);

struct PhaseChoice {
  BackendId backend = kNoBackend;
  ChoiceOrigin origin = ChoiceOrigin::sglang_auto;
  const RuleInfo* decided_by = nullptr;  // the selection entry or rewrite rule, if any
  BackendId requested = kNoBackend;      // before a rewrite
};

struct SlotPlan {
  SlotId slot = 0;
  PhaseChoice phase[kPhaseCount];
  bool hybrid() const { return phase[0].backend != phase[1].backend; }
};

enum class PageOrigin : std::uint8_t {
  requested,       // --page-size as given
  sglang_default,  // SGLang's default (1)
  sglang_rewrite,  // SGLang forces it (e.g. flashmla -> 64)
  planned,         // attnsel chose it to satisfy a fixed-size kernel SGLang does not enforce, or for --prefer
};
ATTNSEL_API std::string_view name_of(PageOrigin o);

struct PageConstraint {
  BackendId backend = kNoBackend;
  Phase phase = Phase::prefill;
  const PageSupport* support = nullptr;
};

struct PagePlan {
  int page_size = 1;
  std::optional<int> requested;
  PageOrigin origin = PageOrigin::sglang_default;
  const RuleInfo* rewrite_rule = nullptr;   // for sglang_rewrite
  SmallVector<PageConstraint, 6> constraints;  // one per chosen backend and phase
  // Prefix caching matches whole pages: prompts shorter than page_size tokens are never cached,
  // and up to page_size - 1 trailing tokens of each prompt are not reusable.
  int uncached_prompt_below() const { return page_size; }
  int max_unreusable_tokens() const { return page_size - 1; }
};

struct Rejection {
  BackendId backend = kNoBackend;
  std::vector<Finding> reasons;  // every error that rejected it, in every phase
};

// One step of the decision, in order, for `attnsel explain`.
struct TraceStep {
  enum class Kind : std::uint8_t {
    request_rule,   // a request-scope rule normalised the request
    explicit_choice,
    entry_matched,  // a selection entry matched and its backend is valid
    entry_failed,   // a selection entry matched but its backend is rejected here
    fallback,       // no entry gave a valid backend; the first valid one in matrix order
    slot_default,
    rewrite,
    page,
    plan_rule,
  };
  Kind kind;
  SlotId slot = 0;
  std::int8_t phase = -1;
  BackendId backend = kNoBackend;
  const RuleInfo* rule = nullptr;
};

// The candidates a selection did not have to judge to decide: every one that is not usable here,
// with the rules that reject it, and those valid in every phase but not chosen.
struct JudgedAlternatives {
  std::vector<Rejection> rejected;
  std::vector<BackendId> valid;
};

class Selection;
namespace detail {
struct EngineAccess;  // the engine fills what a Selection judges on first use (src/engine/engine.cpp)
}

// A read-only list that a Selection judges on first use (Selection::rejected, Selection::alternatives):
// iterate it, index it, or bind it to a const std::vector&.
template <class T, std::vector<T> JudgedAlternatives::*List>
class JudgedList {
 public:
  explicit JudgedList(const Selection* owner) : owner_(owner) {}
  JudgedList(const JudgedList&) = delete;  // a view of its Selection: copy the vector (get()) instead
  JudgedList& operator=(const JudgedList&) = delete;

  const std::vector<T>& get() const;
  operator const std::vector<T>&() const { return get(); }  // NOLINT(google-explicit-constructor)
  typename std::vector<T>::const_iterator begin() const { return get().begin(); }
  typename std::vector<T>::const_iterator end() const { return get().end(); }
  std::size_t size() const { return get().size(); }
  bool empty() const { return get().empty(); }
  const T& operator[](std::size_t i) const { return get()[i]; }
  const T& front() const { return get().front(); }
  const T& back() const { return get().back(); }

 private:
  const Selection* owner_;
};

// What select() decides. Selection adds the alternatives, judged on first use.
struct SelectionOutcome {
  bool ok() const { return errors.empty(); }

  std::shared_ptr<const Matrix> matrix;  // keeps the rules the findings point to alive
  Request request;                       // as the caller passed it (request-scope rules change the fields below)
  KvCacheDtype kv_cache_dtype = KvCacheDtype::auto_;  // effective
  bool radix_cache = true;               // false when disabled by the user or a rule
  SmallVector<SlotPlan, 3> slots;        // attention first; only the slots the model kind has
  PagePlan page;
  std::vector<Finding> errors, warnings, notes;
  SmallVector<TraceStep, 8> trace;
};

class ATTNSEL_API Selection : public SelectionOutcome {
 public:
  Selection() = default;
  Selection(const Selection& other);
  Selection(Selection&& other) noexcept;
  Selection& operator=(const Selection& other);
  Selection& operator=(Selection&& other) noexcept;
  ~Selection();

  // Judging every other candidate costs more than choosing, so it happens on the first read of
  // either list (from matrix and request; thread-safe), never in select() itself.
  JudgedList<Rejection, &JudgedAlternatives::rejected> rejected{this};  // every candidate not usable here
  JudgedList<BackendId, &JudgedAlternatives::valid> alternatives{this};  // valid in every phase but not chosen
  const JudgedAlternatives& judged() const;

  const SlotPlan* slot(std::string_view name) const;
  // The attention backend, for one phase; kNoBackend when the plan has none.
  BackendId backend(Phase p) const;

  Diagnostic describe(const Finding& f) const;
  std::vector<Diagnostic> describe(const std::vector<Finding>& fs) const;
  // The engine launch flags that realise this plan, spelled as the matrix's release spells them.
  std::vector<std::string> flags() const;
  // NAME=VALUE settings the plan needs where that release reads a variable instead of a flag
  // (vLLM v0.11-v0.12: VLLM_ATTENTION_BACKEND); empty for most plans.
  std::vector<std::string> environment() const;
  const std::string& name(BackendId id) const { return matrix->backend(id).name; }

 private:
  friend struct detail::EngineAccess;
  mutable std::atomic<const JudgedAlternatives*> judged_{nullptr};
};

template <class T, std::vector<T> JudgedAlternatives::*List>
const std::vector<T>& JudgedList<T, List>::get() const {
  return owner_->judged().*List;
}

// The engine: pure, no I/O, no globals. Unknown backend names are an Error (unknown_name);
// everything else, including an impossible configuration, is a Selection with errors.
ATTNSEL_API Result<Selection> select(const std::shared_ptr<const Matrix>& matrix, const Request& request);

}  // namespace attnsel
