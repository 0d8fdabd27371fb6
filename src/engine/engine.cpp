// select(): (Matrix, Request) -> Selection. Pure: no I/O, no globals, every reason returned as data.
//
// 1. request rules normalise the request (kv dtype "auto" for DSA ...);
// 2. per slot (attention, linear, sparse) every backend is judged in every phase: its cell's columns,
//    the features the model needs, and the backend-scope rules (including SGLang's silent rewrites);
// 3. explicit choices are taken as given; missing ones follow the matrix's selection entries in order,
//    as SGLang's automatic selection does;
// 4. plan rules check the chosen combination; the page-size plan is solved (plan/page_plan.cpp);
// 5. the chosen backends are judged again at the final page size.
#include <algorithm>
#include <array>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "attnsel/selection.hpp"
#include "core/suggest.hpp"
#include "engine/condition.hpp"
#include "engine/engine.hpp"
#include "plan/page_plan.hpp"

namespace attnsel {
namespace {

using detail::EvalContext;
using detail::matches;

// One backend judged in one phase.
struct Verdict {
  bool evaluated = false;
  bool valid = false;
  const Cell* cell = nullptr;
  BackendId redirect = kNoBackend;  // SGLang silently runs this backend instead
  const Rule* redirect_rule = nullptr;
  const Rule* ignored_by = nullptr;  // the engine ignores this explicit choice and chooses itself
  int page_size = 1;                // after the backend's own page-size rewrites
  const Rule* page_rule = nullptr;  // the rewrite that set it, if any
  bool page_from_set = false;       // a fixed-size kernel with no size given: the plan must pick one
  SmallVector<Finding, 4> findings;
};

// Verdicts by backend and phase, made on demand. Addresses are stable: a reference to one survives
// judging others. The first few live inside the table: choosing usually judges only a handful.
class VerdictTable {
 public:
  VerdictTable() = default;
  VerdictTable(const VerdictTable&) = delete;
  VerdictTable& operator=(const VerdictTable&) = delete;
  ~VerdictTable() {
    for (std::size_t at = kInline; at < count_; ++at) slot(at).~Verdict();
  }

  Verdict* find(BackendId b, int phase) {
    const std::uint16_t at = index_[b][static_cast<std::size_t>(phase)];
    return at == 0 ? nullptr : &slot(at - 1u);
  }
  Verdict& add(BackendId b, int phase) {
    const std::size_t at = count_;
    if (at >= kInline) {
      if ((at - kInline) % kBlock == 0) blocks_.push_back(std::unique_ptr<Block>(new Block));  // raw storage
      ::new (static_cast<void*>(&slot(at))) Verdict;
    }
    ++count_;
    index_[b][static_cast<std::size_t>(phase)] = static_cast<std::uint16_t>(at + 1);
    return slot(at);
  }

 private:
  static constexpr std::size_t kInline = 8, kBlock = 32;
  struct Block {
    alignas(Verdict) unsigned char bytes[kBlock * sizeof(Verdict)];
  };
  Verdict& slot(std::size_t at) {
    if (at < kInline) return inline_[at];
    return reinterpret_cast<Verdict*>(blocks_[(at - kInline) / kBlock]->bytes)[(at - kInline) % kBlock];
  }
  std::array<std::array<std::uint16_t, kPhaseCount>, kMaxBackends> index_{};  // 0: not judged, else 1 + position
  std::array<Verdict, kInline> inline_;
  std::vector<std::unique_ptr<Block>> blocks_;
  std::size_t count_ = 0;
};

// The phases one automatic choice decides: one, or every phase of a joint slot.
struct Phases {
  int at[kPhaseCount] = {};
  std::size_t n = 0;
  const int* begin() const { return at; }
  const int* end() const { return at + n; }
  std::size_t size() const { return n; }
  bool empty() const { return n == 0; }
  int operator[](std::size_t i) const { return at[i]; }
};

class Engine {
 public:
  // judged: also judge every other candidate (Selection::judged()); rejections: only report the rules
  // that reject them, once per context (the lint). Both null: leave them unjudged.
  Engine(const std::shared_ptr<const Matrix>& matrix, const Request& request, Selection& out, JudgedAlternatives* judged,
         detail::RejectionRules* rejections)
      : m_(*matrix), out_(out), judged_(judged), rejections_(rejections) {
    out_.matrix = matrix;
    out_.request = request;
    base_.request = &out_.request;
    base_.kv_dtype = request.kv_cache_dtype;
    base_.kv_dtype_explicit = request.kv_cache_dtype != KvCacheDtype::auto_;
    base_.page_size = request.page_size.value_or(m_.default_page_size());
    base_.page_size_explicit = request.page_size.has_value();
    base_.radix_cache = !request.disable_radix_cache;
    for (int f = 0; f < kFeatureCount; ++f) feature_rules_[static_cast<std::size_t>(f)] = m_.feature_rule(static_cast<Feature>(f));
    uses_replaced_ = m_.rules_test(Condition::f_replaced);
  }

  std::optional<Error> run() {
    if (auto err = resolve_explicit()) return err;
    apply_request_rules();
    const bool raised_before = raise_given_hybrid_block();
    planned_ = 0;
    for (SlotId s = 0; s < m_.slots().size(); ++s) {
      if (!m_.slot(s).kinds.contains(out_.request.model.kind)) continue;
      if (!runs_with(s)) {
        report_unused(s);
        continue;
      }
      planned_ |= 1u << s;
      choose(s);
    }
    if (!out_.slots.empty()) {
      check_backend_config();
      plan_page_size();
      apply_plan_rules();
      if (raised_before) {  // the backends were judged at the raised block: plan it, nothing to re-judge
        align_hybrid_block();
        revalidate_at_final_page();
      } else {
        revalidate_at_final_page();
        align_hybrid_block();
      }
      collect();
    }
    return std::nullopt;
  }

 private:
  // ---- slots that run only inside another slot's backend ----

  // Whether slot s runs with the plan so far: always, unless it runs only inside some backends of an
  // earlier slot (Slot::only_with) and that slot runs none of them in any phase.
  bool runs_with(SlotId s) const {
    const Slot& slot = m_.slot(s);
    if (!slot.only_with_slot) return true;
    for (const SlotPlan& sp : out_.slots) {
      if (sp.slot != *slot.only_with_slot) continue;
      for (const PhaseChoice& c : sp.phase)
        if (std::find(slot.only_with.begin(), slot.only_with.end(), c.backend) != slot.only_with.end()) return true;
    }
    return false;
  }

  // A backend named for a slot that does not run: SGLang runs it only inside the backends the slot runs
  // with, which the user should know rather than believe it applied.
  void report_unused(SlotId s) {
    const Slot& slot = m_.slot(s);
    std::string runs = "none";
    for (const SlotPlan& sp : out_.slots)
      if (slot.only_with_slot && sp.slot == *slot.only_with_slot) {
        runs = m_.backend(sp.phase[0].backend != kNoBackend ? sp.phase[0].backend : sp.phase[1].backend).name;
        if (sp.hybrid() && sp.phase[1].backend != kNoBackend) runs += "/" + m_.backend(sp.phase[1].backend).name;
      }
    std::vector<std::string> with;
    for (BackendId b : slot.only_with) with.push_back(m_.backend(b).name);
    const std::string& with_title = m_.slot(*slot.only_with_slot).title;
    const std::string detail = fmt::format("the {} backends run only inside the {} backend {}, and this plan's {} backend is {}",
                                           slot.title, with_title, fmt::join(with, " or "), with_title, runs);
    const RuleInfo& unused = m_.builtin(BuiltinRule::slot_unused);
    for (int p = 0; p < kPhaseCount; ++p) {
      const BackendId b = explicit_[s][static_cast<std::size_t>(p)];
      if (b == kNoBackend) continue;
      Finding f = finding(unused, unused.severity, b, p);
      f.detail = detail;
      add_once(f);
    }
  }

  // ---- explicit names ----

  std::optional<Error> resolve_explicit() {
    explicit_.clear();
    phase_flag_.clear();
    for (std::size_t i = 0; i < m_.slots().size(); ++i) {
      explicit_.push_back({kNoBackend, kNoBackend});
      phase_flag_.push_back({false, false});
    }
    for (SlotId s = 0; s < m_.slots().size(); ++s) {
      const Slot& slot = m_.slot(s);
      const BackendChoice* choice = out_.request.choice_for(slot.name);
      if (!choice) continue;
      const std::optional<std::string>* by_phase[kPhaseCount] = {&choice->prefill, &choice->decode};
      for (int p = 0; p < kPhaseCount; ++p) {
        const std::optional<std::string>& name = by_phase[p]->has_value() ? *by_phase[p] : choice->all;
        if (!name) continue;
        auto id = m_.find_backend(*name, s);
        if (!id) return unknown_backend(s, *name, by_phase[p]->has_value() ? (p == 0 ? slot.prefill_flag : slot.decode_flag)
                                                                          : slot.flag);
        explicit_[s][p] = *id;
        phase_flag_[s][p] = by_phase[p]->has_value();
      }
    }
    return std::nullopt;
  }

  Error unknown_backend(SlotId s, const std::string& name, const std::string& flag) const {
    Error e;
    e.code = ErrorCode::unknown_name;
    e.where = flag;
    e.choices = m_.backend_names(s);
    e.suggestion = detail::closest_match(name, e.choices);
    e.message = "unknown " + m_.slot(s).title + " backend '" + name + "'";
    for (SlotId other = 0; other < m_.slots().size(); ++other)
      if (other != s && m_.find_backend(name, other))
        e.message += " ('" + name + "' is a " + m_.slot(other).title + " backend)";
    return e;
  }

  // ---- request rules ----

  void apply_request_rules() {
    for (const Rule* rule : m_.rules_in(RuleScope::request)) {
      if (!matches(rule->when, base_)) continue;
      Finding f = finding(rule->info, effective_severity(*rule));
      // One value change per rule, KV dtype or compute dtype (the loader sees to it): the finding's
      // from -> to. A change to what the request already holds is no firing.
      if (rule->set.kv_dtype) {
        f.from = static_cast<int>(base_.kv_dtype);
        f.to = static_cast<int>(*rule->set.kv_dtype);
        f.values = Finding::Values::kv_dtype;
        if (f.from == f.to) continue;
        // Resolving "auto" is a default, not a rewrite of what the user said.
        if (!base_.kv_dtype_explicit) f.severity = Severity::info;
        base_.kv_dtype = *rule->set.kv_dtype;
      } else if (rule->set.dtype) {
        f.from = static_cast<int>(out_.request.dtype);
        f.to = static_cast<int>(*rule->set.dtype);
        f.values = Finding::Values::dtype;
        if (f.from == f.to) continue;
        // The engine's resolution of "auto" is a default; a --dtype the user gave is a rewrite.
        if (out_.request.dtype == ComputeDtype::auto_) f.severity = Severity::info;
        out_.request.dtype = *rule->set.dtype;
      } else if (rule->set.topk) {
        // The speculative top-k the engine runs with: later rules, the cells and the flags see it.
        f.from = out_.request.speculative_topk;
        f.to = *rule->set.topk;
        f.values = Finding::Values::topk;
        if (f.from == f.to) continue;
        out_.request.speculative_topk = *rule->set.topk;
      }
      // The engine's own reading of the model: later rules, the slots and the cells see this kind,
      // and an MLA config run as multi-head attention its standard head size, not the latent one.
      if (rule->set.kind) set_model_kind(*rule->set.kind);
      if (rule->set.disable_radix_cache) base_.radix_cache = false;
      add(f);
      out_.trace.push_back({TraceStep::Kind::request_rule, 0, -1, kNoBackend, &rule->info});
    }
    out_.kv_cache_dtype = base_.kv_dtype;
  }

  void set_model_kind(AttentionKind kind) {
    ModelTraits& model = out_.request.model;
    const bool latent = model.kind == AttentionKind::mla || model.kind == AttentionKind::dsa;
    if (latent && kind == AttentionKind::mha && model.mha_head_dim) model.head_dim = model.mha_head_dim;
    model.kind = kind;
  }

  // ---- judging candidates ----

  // `replaced`: b runs as another backend's replacement (Condition::replaced); judged apart only
  // where some rule of the matrix asks.
  Verdict& judge(BackendId b, int phase, bool replaced = false) {
    replaced = replaced && uses_replaced_;
    VerdictTable& table = replaced ? replacement_verdicts_ : verdicts_;
    if (Verdict* judged = table.find(b, phase)) return *judged;
    Verdict& v = table.add(b, phase);
    v.evaluated = true;
    const SlotId s = m_.backend(b).slot;
    EvalContext ctx = base_;
    ctx.backend = b;
    ctx.phase = phase;
    ctx.replaced = replaced;
    ctx.backend_explicit = explicit_[s][static_cast<std::size_t>(phase)] == b;
    ctx.phase_flag = ctx.backend_explicit && phase_flag_[s][static_cast<std::size_t>(phase)];
    judge_into(v, b, phase, ctx);
    return v;
  }

  void judge_into(Verdict& v, BackendId b, int phase, EvalContext& ctx) {
    const Request& req = out_.request;
    // An explicit choice the engine ignores is not judged: choose() reports it with the backend
    // that runs instead (a backend without a cell for the model may be ignored so).
    for (const Rule* rule : m_.backend_rules(b)) {
      if (rule->set.ignore_choice && matches(rule->when, ctx)) {
        v.ignored_by = rule;
        v.valid = true;
        return;
      }
    }
    // A backend the engine replaces by name runs as the replacement whatever its own cells say: the
    // rewrite happens in the engine's arguments, before any kernel of the named backend is built.
    // The engine's checks listed before the rewrite still judge the named backend, and an error
    // among them stops the launch before the replacement (SGLang v0.5.2 refuses trtllm_mha off SM100
    // in ServerArgs before ModelRunner replaces Qwen3-Next's backend). A backend named by the joint
    // flag is checked for every phase the flag names, so a refusal of its prefill stops both.
    const SlotId slot = m_.backend(b).slot;
    const auto refuses = [&](const Rule& rule) {
      if (rule.set.any() || effective_severity(rule) != Severity::error) return false;
      EvalContext at = ctx;
      for (int q = 0; q < kPhaseCount; ++q) {
        const auto p = static_cast<std::size_t>(q);
        const bool same_flag = ctx.backend_explicit && !ctx.phase_flag && explicit_[slot][p] == b && !phase_flag_[slot][p];
        if (q != phase && !same_flag) continue;
        at.phase = q;
        if (matches(rule.when, at)) return true;
      }
      return false;
    };
    std::vector<const Rule*> refused_before_rewrite;
    for (const Rule* rule : m_.backend_rules(b)) {
      if (!rule->set.backend) {
        if (refuses(*rule)) refused_before_rewrite.push_back(rule);
        continue;
      }
      if (!matches(rule->when, ctx)) continue;
      if (!refused_before_rewrite.empty()) {  // the engine stops before it would replace the backend
        for (const Rule* refusal : refused_before_rewrite) v.findings.push_back(finding(refusal->info, Severity::error, b, phase));
        v.valid = false;
        return;
      }
      Finding f = finding(rule->info, rule->info.severity, b, phase);
      f.from = b;
      f.to = *rule->set.backend;
      f.values = Finding::Values::backend;
      if (!ctx.backend_explicit) f.severity = Severity::info;
      v.redirect = *rule->set.backend;
      v.redirect_rule = rule;
      v.findings.push_back(f);
      v.valid = true;  // the backend that runs is judged on its own
      return;
    }
    const Cell* cell = m_.cell_for(b, req.model.kind, req.device.platform, req.device.compute_capability);
    auto reject = [&](BuiltinRule check, int value = 0) {
      Finding f = finding(m_.builtin(check), Severity::error, b, phase);
      f.cell = cell;
      f.from = value;
      f.values = Finding::Values::page_size;
      v.findings.push_back(f);
    };
    if (!cell) {
      const auto& cells = m_.backend(b).cells;
      bool kind_ok = std::any_of(cells.begin(), cells.end(), [&](const Cell& c) { return c.kinds.contains(req.model.kind); });
      reject(kind_ok ? BuiltinRule::platform : BuiltinRule::kind);
      v.valid = false;
      return;
    }
    v.cell = cell;

    // SGLang's silent page-size rewrites next: later rules see the rewritten page size.
    for (const Rule* rule : m_.backend_rules(b)) {
      if (!rule->set.page_size || *rule->set.page_size == ctx.page_size || !matches(rule->when, ctx)) continue;
      Finding f = finding(rule->info, rule->info.severity, b, phase);
      f.from = ctx.page_size;
      f.to = *rule->set.page_size;
      f.values = Finding::Values::page_size;
      ctx.page_size = *rule->set.page_size;
      v.page_rule = rule;
      // Only a size the user gave is rewritten behind their back; otherwise the page plan states the rule.
      if (ctx.page_size_explicit) v.findings.push_back(f);
    }
    v.page_size = ctx.page_size;

    for (const Rule* rule : m_.backend_rules(b)) {
      if (rule->set.any() || !matches(rule->when, ctx)) continue;
      v.findings.push_back(finding(rule->info, effective_severity(*rule), b, phase));
    }

    const auto& cc = req.device.compute_capability;
    if (!cell->compute_capability.empty()) {
      if (!cc) reject(BuiltinRule::unknown_device);
      else if (std::none_of(cell->compute_capability.begin(), cell->compute_capability.end(),
                            [&](const VersionRange& r) { return r.contains(*cc); }))
        reject(BuiltinRule::compute_capability);
    }
    if (cell->min_cuda && req.device.cuda && *req.device.cuda < *cell->min_cuda) reject(BuiltinRule::cuda);
    if (!cell->phases.contains(static_cast<Phase>(phase))) reject(BuiltinRule::phase);
    if (!cell->kv_dtypes.contains(ctx.kv_dtype)) reject(BuiltinRule::kv_dtype);
    if (!cell->dtypes.contains(req.dtype)) reject(BuiltinRule::dtype);
    if (!cell->head_sizes.empty() && req.model.head_dim && !cell->head_sizes.matches(*req.model.head_dim)) {
      reject(BuiltinRule::head_size);
      v.findings.back().detail = std::to_string(*req.model.head_dim);
    }
    for (const auto& package : cell->requires_packages) {
      const bool present = std::find(req.installed.begin(), req.installed.end(), package) != req.installed.end();
      if (present) continue;
      Finding f = finding(m_.builtin(req.installed_known ? BuiltinRule::requires_package : BuiltinRule::requires_unknown),
                          req.installed_known ? Severity::error : Severity::warning, b, phase);
      f.detail = package;
      f.cell = cell;
      v.findings.push_back(std::move(f));
    }
    if (!cell->page_size.allows(ctx.page_size)) {
      // A size the user asked for (or SGLang forced) that the kernel cannot run; with no size given the plan picks one.
      if (ctx.page_size_explicit || v.page_rule) reject(BuiltinRule::page_size, ctx.page_size);
      else v.page_from_set = true;
    }
    const int topk = req.speculative_topk;
    if (topk > 0) {
      bool ok = cell->speculative == TopkSupport::any || (cell->speculative == TopkSupport::one && topk == 1) ||
                (cell->speculative == TopkSupport::many_at_page1 && (topk == 1 || ctx.page_size == 1));
      if (!ok) reject(BuiltinRule::speculative);
    }
    for (int fi = 0; fi < kFeatureCount; ++fi) {
      const FeatureRule* rule = feature_rules_[static_cast<std::size_t>(fi)];
      if (rule && (rule->slots >> m_.backend(b).slot & 1u) && !cell->has(static_cast<Feature>(fi)) && matches(rule->when, ctx))
        v.findings.push_back(finding(rule->info, rule->info.severity, b, phase));
    }
    v.valid = std::none_of(v.findings.begin(), v.findings.end(), [](const Finding& f) { return f.severity == Severity::error; });
  }

  // The backend that actually runs for a choice (following a silent rewrite) and whether it is usable.
  BackendId runs(BackendId b, int phase) {
    const Verdict& v = judge(b, phase);
    return v.redirect != kNoBackend ? v.redirect : b;
  }
  // The verdict of the backend that runs for b: its own, or its replacement's.
  Verdict& judge_running(BackendId b, int phase) {
    const BackendId r = runs(b, phase);
    return judge(r, phase, r != b);
  }
  bool usable(BackendId b, int phase) { return !judge(b, phase).ignored_by && judge_running(b, phase).valid; }
  // A chosen backend's verdict: as a replacement where a rewrite put it in.
  bool is_replacement(const PhaseChoice& c, int phase) {
    return uses_replaced_ && c.origin == ChoiceOrigin::rewritten && c.requested != kNoBackend &&
           c.requested != c.backend && judge(c.requested, phase).redirect == c.backend;
  }
  Verdict& judge_choice(const PhaseChoice& c, int phase) { return judge(c.backend, phase, is_replacement(c, phase)); }

  // ---- choosing ----

  void choose(SlotId s) {
    const Slot& slot = m_.slot(s);
    SlotPlan plan;
    plan.slot = s;
    std::array<bool, kPhaseCount> open{};
    std::array<const Rule*, kPhaseCount> ignored{};  // explicit choices the engine ignores
    for (int p = 0; p < kPhaseCount; ++p) {
      BackendId b = explicit_[s][static_cast<std::size_t>(p)];
      if (b == kNoBackend) {
        open[static_cast<std::size_t>(p)] = true;
        continue;
      }
      if (const Rule* rule = judge(b, p).ignored_by) {
        ignored[static_cast<std::size_t>(p)] = rule;
        open[static_cast<std::size_t>(p)] = true;
        continue;
      }
      plan.phase[p] = {b, ChoiceOrigin::explicit_flag, nullptr, b};
      out_.trace.push_back({TraceStep::Kind::explicit_choice, s, static_cast<std::int8_t>(p), b, nullptr});
    }
    if (slot.joint) {
      Phases phases;
      for (int p = 0; p < kPhaseCount; ++p)
        if (open[static_cast<std::size_t>(p)]) phases.at[phases.n++] = p;
      if (!phases.empty()) auto_choose(s, phases, plan);
    } else {
      for (int p = 0; p < kPhaseCount; ++p)
        if (open[static_cast<std::size_t>(p)]) auto_choose(s, Phases{{p}, 1}, plan);
    }
    for (int p = 0; p < kPhaseCount; ++p) {
      const Rule* rule = ignored[static_cast<std::size_t>(p)];
      if (!rule) continue;
      PhaseChoice& c = plan.phase[p];
      Finding f = finding(rule->info, effective_severity(*rule), explicit_[s][static_cast<std::size_t>(p)], p);
      f.from = explicit_[s][static_cast<std::size_t>(p)];
      f.to = c.backend;
      f.values = Finding::Values::backend;
      add_once(f);
      if (c.backend == kNoBackend) continue;
      c.requested = explicit_[s][static_cast<std::size_t>(p)];
      c.origin = ChoiceOrigin::rewritten;
      c.decided_by = &rule->info;
      out_.trace.push_back({TraceStep::Kind::rewrite, s, static_cast<std::int8_t>(p), c.backend, c.decided_by});
    }
    for (int p = 0; p < kPhaseCount; ++p) follow_rewrite(plan.phase[p], p, s);
    out_.slots.push_back(plan);
  }

  void auto_choose(SlotId s, const Phases& phases, SlotPlan& plan) {
    auto usable_everywhere = [&](BackendId b) {
      return std::all_of(phases.begin(), phases.end(), [&](int p) { return usable(b, p); }) &&
             plan_allows(s, b, phases, plan);
    };
    auto take = [&](BackendId b, ChoiceOrigin origin, const RuleInfo* why) {
      for (int p : phases) plan.phase[p] = {b, origin, why, b};
    };
    const std::int8_t phase_tag = phases.size() == 1 ? static_cast<std::int8_t>(phases[0]) : -1;
    const SelectionEntry* sglang_choice = nullptr;  // the first entry that matched: what SGLang itself would run
    // An engine whose walk does not check the page size takes the first candidate that fails only on
    // it: that is its choice, and it cannot run; attnsel walks on for one that can.
    BackendId page_blind_choice = kNoBackend;
    for (const auto& entry : m_.selection()) {
      if (entry.slot != s || !std::all_of(phases.begin(), phases.end(), [&](int p) { return entry.phases.contains(static_cast<Phase>(p)); }))
        continue;
      if (!matches(entry.when, base_)) continue;
      if (!sglang_choice) sglang_choice = &entry;
      // A priority list is walked as the engine walks it: the first candidate that is valid runs.
      for (BackendId candidate : entry.backends) {
        if (!usable_everywhere(candidate)) {
          if (page_blind_choice == kNoBackend && sglang_choice == &entry && !m_.info().selection_checks_page_size &&
              fails_only_on_page_size(candidate, phases))
            page_blind_choice = candidate;
          out_.trace.push_back({TraceStep::Kind::entry_failed, s, phase_tag, candidate, &entry.info});
          continue;
        }
        const bool engines_own = sglang_choice == &entry && page_blind_choice == kNoBackend;
        take(candidate, engines_own ? ChoiceOrigin::sglang_auto : ChoiceOrigin::attnsel_auto, &entry.info);
        out_.trace.push_back({TraceStep::Kind::entry_matched, s, phase_tag, candidate, &entry.info});
        if (page_blind_choice != kNoBackend) {
          note_default_fails(page_blind_choice, candidate, phase_tag);
        } else if (sglang_choice != &entry) {
          note_default_fails(sglang_choice->backend, candidate, phase_tag);
        }
        return;
      }
    }
    const Slot& slot = m_.slot(s);
    if (slot.sglang_default && !sglang_choice) {
      take(*slot.sglang_default, ChoiceOrigin::slot_default, nullptr);
      out_.trace.push_back({TraceStep::Kind::slot_default, s, phase_tag, *slot.sglang_default, nullptr});
      return;
    }
    for (BackendId b = 0; b < m_.backends().size(); ++b) {
      if (m_.backend(b).slot != s || !usable_everywhere(b)) continue;
      take(b, ChoiceOrigin::attnsel_auto, nullptr);
      out_.trace.push_back({TraceStep::Kind::fallback, s, phase_tag, b, nullptr});
      if (page_blind_choice != kNoBackend) {
        note_default_fails(page_blind_choice, b, phase_tag);
      } else if (sglang_choice) {
        note_default_fails(sglang_choice->backend, b, phase_tag);
      }
      return;
    }
    // Nothing runs here: report SGLang's own choice (or the slot default) so its reasons show.
    BackendId shown = sglang_choice ? sglang_choice->backend : slot.sglang_default.value_or(kNoBackend);
    Finding f = finding(m_.builtin(BuiltinRule::no_backend), Severity::error);
    f.from = s;
    f.values = Finding::Values::slot;
    add(f);
    if (shown != kNoBackend) take(shown, ChoiceOrigin::sglang_auto, sglang_choice ? &sglang_choice->info : nullptr);
    else for (int p : phases) plan.phase[p].backend = kNoBackend;
  }

  // Plan rules that would reject the combination a candidate makes with the phases already chosen
  // (e.g. topk > 1 on a page size > 1 needs page-tree backends). Such a candidate is rejected in
  // every phase it would fill, with the rule, and automatic selection moves on.
  bool plan_allows(SlotId s, BackendId candidate, const Phases& phases, const SlotPlan& plan) {
    if (s != 0) return true;  // plan rules read the first slot's backends
    EvalContext ctx = base_;
    BackendId chosen[kPhaseCount] = {plan.phase[0].backend, plan.phase[1].backend};
    bool filled[kPhaseCount] = {};
    for (int p : phases) chosen[p] = runs(candidate, p), filled[p] = true;
    ctx.prefill = chosen[0];
    ctx.decode = chosen[1];
    for (int p = 0; p < kPhaseCount; ++p) {
      const Verdict& v = filled[p]                   ? judge_running(candidate, p)
                         : chosen[p] == kNoBackend ? judge(candidate, p)
                                                   : judge_choice(plan.phase[p], p);
      if (v.page_rule) ctx.page_size = v.page_size;  // the size SGLang will force
    }
    bool allowed = true;
    const auto& plan_rules = m_.rules_in(RuleScope::plan);
    for (std::size_t i = 0; i < plan_rules.size(); ++i) {
      const Rule* rule = plan_rules[i];
      if (effective_severity(*rule) != Severity::error) continue;
      const bool per_phase = plan_rule_per_phase(i);
      for (int p = per_phase ? 0 : -1; p < (per_phase ? kPhaseCount : 0); ++p) {
        EvalContext c = ctx;
        c.phase = p;
        c.backend = p >= 0 ? chosen[p] : kNoBackend;
        if (!matches(rule->when, c)) continue;
        allowed = false;
        for (int q : phases) {
          Verdict& v = judge(candidate, q);
          if (std::none_of(v.findings.begin(), v.findings.end(), [&](const Finding& f) { return f.rule == &rule->info; }))
            v.findings.push_back(finding(rule->info, Severity::error, candidate, q));
          v.valid = false;
        }
        break;
      }
    }
    return allowed;
  }

  // A candidate the page size alone rules out: valid in every phase but for the cell's page-size
  // check, and allowed by the plan rules.
  bool fails_only_on_page_size(BackendId candidate, const Phases& phases) {
    const RuleInfo* page = &m_.builtin(BuiltinRule::page_size);
    for (int p : phases) {
      if (judge(candidate, p).ignored_by) return false;
      const Verdict& v = judge_running(candidate, p);
      if (v.valid) continue;
      if (std::any_of(v.findings.begin(), v.findings.end(),
                      [&](const Finding& f) { return f.severity == Severity::error && f.rule != page; }))
        return false;
    }
    return true;
  }

  void note_default_fails(BackendId engine_choice, BackendId picked, std::int8_t phase) {
    Finding f = finding(m_.builtin(BuiltinRule::default_fails), Severity::warning, engine_choice, phase);
    f.from = engine_choice;
    f.to = picked;
    f.values = Finding::Values::backend;
    add(f);
  }

  void follow_rewrite(PhaseChoice& c, int p, SlotId s) {
    if (c.backend == kNoBackend) return;
    const Verdict& v = judge(c.backend, p);
    if (v.redirect == kNoBackend) return;
    c.requested = c.backend;
    c.backend = v.redirect;
    c.origin = ChoiceOrigin::rewritten;
    c.decided_by = &v.redirect_rule->info;
    out_.trace.push_back({TraceStep::Kind::rewrite, s, static_cast<std::int8_t>(p), c.backend, c.decided_by});
  }

  // ---- --attention-backend-config against the chosen backend's declared parameters ----

  void check_backend_config() {
    const auto& config = out_.request.backend_config;
    if (!config) return;
    const BackendId b = out_.slots.front().phase[0].backend;
    if (b == kNoBackend) return;
    const Backend& backend = m_.backend(b);
    auto report = [&](BuiltinRule rule, std::string detail) {
      Finding f = finding(m_.builtin(rule), m_.builtin(rule).severity, b);
      f.detail = std::move(detail);
      add(f);
    };
    if (backend.config.empty()) {
      report(BuiltinRule::config_unused, "");
      return;
    }
    for (const auto& [key, value] : config->entries) {
      auto param = std::find_if(backend.config.begin(), backend.config.end(), [&, &k = key](const ConfigParam& p) { return p.name == k; });
      if (param == backend.config.end()) {
        report(BuiltinRule::config_unknown_key, key);
        continue;
      }
      if (auto problem = config_problem(*param, value)) report(problem->first, problem->second);
    }
    for (const auto& p : backend.config) {
      if (!p.required) continue;
      bool given = std::any_of(config->entries.begin(), config->entries.end(), [&](const auto& e) { return e.first == p.name; });
      if (!given) report(BuiltinRule::config_required, p.name);
    }
  }

  // Type and range of one value; k=v values are strings and take the parameter's type if they can.
  static std::optional<std::pair<BuiltinRule, std::string>> config_problem(const ConfigParam& p, const ConfigValue& v) {
    using T = ConfigValue::Type;
    auto type_error = [&] {
      return std::make_pair(BuiltinRule::config_type,
                            p.name + " expects " + std::string(name_of(p.type)) + ", got '" + v.text + "'");
    };
    double number = 0;
    switch (p.type) {
      case ConfigParam::Type::string:
        // key=value text is a string whatever it looks like (sta_mode=123 is "123").
        if (v.type != T::string && !v.from_pairs) return type_error();
        return std::nullopt;
      case ConfigParam::Type::boolean:
        if (v.type == T::boolean) return std::nullopt;
        if (v.from_pairs && (v.text == "true" || v.text == "false" || v.text == "True" || v.text == "False")) return std::nullopt;
        return type_error();
      case ConfigParam::Type::int_list:
        if (v.type == T::int_list) return std::nullopt;
        return type_error();
      case ConfigParam::Type::integer:
        if (v.type != T::integer) return type_error();
        number = static_cast<double>(v.integer);
        break;
      case ConfigParam::Type::number:
        if (v.type != T::integer && v.type != T::number) return type_error();
        number = v.type == T::integer ? static_cast<double>(v.integer) : v.number;
        break;
    }
    auto fmt_num = [](double d) {
      std::string s = std::to_string(d);
      s.erase(s.find_last_not_of('0') + 1);
      if (!s.empty() && s.back() == '.') s.pop_back();
      return s;
    };
    if (p.min && number < *p.min)
      return std::make_pair(BuiltinRule::config_range, p.name + " = " + v.text + " is below the minimum " + fmt_num(*p.min));
    if (p.max && number > *p.max)
      return std::make_pair(BuiltinRule::config_range, p.name + " = " + v.text + " is above the maximum " + fmt_num(*p.max));
    return std::nullopt;
  }

  // ---- plan rules and the page size ----

  EvalContext plan_context(int phase) {
    EvalContext ctx = base_;
    ctx.prefill = out_.slots.front().phase[0].backend;
    ctx.decode = out_.slots.front().phase[1].backend;
    ctx.phase = phase;
    ctx.backend = phase >= 0 ? out_.slots.front().phase[phase].backend : kNoBackend;
    ctx.backend_explicit = phase >= 0 && out_.slots.front().phase[phase].origin == ChoiceOrigin::explicit_flag;
    ctx.phase_flag = ctx.backend_explicit && phase_flag_[0][static_cast<std::size_t>(phase)];
    ctx.replaced = phase >= 0 && is_replacement(out_.slots.front().phase[phase], phase);
    ctx.page_size = out_.page.page_size;
    return ctx;
  }

  // Whether a plan rule reads the phase or its backend (then it is checked per phase); worked out once.
  bool plan_rule_per_phase(std::size_t i) {
    const auto& plan_rules = m_.rules_in(RuleScope::plan);
    while (plan_per_phase_.size() < plan_rules.size()) plan_per_phase_.push_back(kUnknown);
    if (plan_per_phase_[i] == kUnknown) {
      const Condition& when = plan_rules[i]->when;
      const bool nested = !when.all.empty() || !when.any.empty() || !when.none.empty();
      plan_per_phase_[i] = ((nested ? when.uses() : when.fields) & (Condition::f_backend | Condition::f_phase)) != 0;
    }
    return plan_per_phase_[i] != 0;
  }

  void apply_plan_rules() {
    const auto& plan_rules = m_.rules_in(RuleScope::plan);
    for (std::size_t i = 0; i < plan_rules.size(); ++i) {
      const Rule* rule = plan_rules[i];
      const bool per_phase = plan_rule_per_phase(i);
      for (int p = per_phase ? 0 : -1; p < (per_phase ? kPhaseCount : 0); ++p) {
        EvalContext ctx = plan_context(p);
        if (!matches(rule->when, ctx)) continue;
        if (rule->set.disable_radix_cache) base_.radix_cache = false;
        add(finding(rule->info, effective_severity(*rule), ctx.backend, static_cast<std::int8_t>(p)));
        out_.trace.push_back({TraceStep::Kind::plan_rule, 0, static_cast<std::int8_t>(p), ctx.backend, &rule->info});
        break;  // one finding per rule
      }
    }
    out_.radix_cache = base_.radix_cache;
  }

  // Slot::split_default: with both phases named apart by their own flags, the backend SGLang
  // still puts in the joint flag (its first selection entry that holds, else the slot's default),
  // where no phase runs it already; kNoBackend otherwise.
  BackendId split_default(const SlotPlan& sp) const {
    const Slot& slot = m_.slot(sp.slot);
    const auto& named = explicit_[sp.slot];
    const auto& own_flag = phase_flag_[sp.slot];
    if (!slot.split_default || named[0] == kNoBackend || named[1] == kNoBackend || named[0] == named[1] ||
        !own_flag[0] || !own_flag[1])
      return kNoBackend;
    BackendId choice = slot.sglang_default.value_or(kNoBackend);
    for (const auto& entry : m_.selection())
      if (entry.slot == sp.slot && entry.phases.contains(Phase::prefill) && entry.phases.contains(Phase::decode) &&
          matches(entry.when, base_)) {
        choice = entry.backend;
        break;
      }
    if (choice == sp.phase[0].backend || choice == sp.phase[1].backend) return kNoBackend;
    return choice;
  }

  void plan_page_size() {
    detail::PageInputs inputs;
    // The joint flag's backend of a split slot first: its rewrite applies before the phases' own.
    const RuleInfo* split_rule = nullptr;
    BackendId split = kNoBackend;
    for (const auto& sp : out_.slots) {
      const BackendId b = split_default(sp);
      if (b == kNoBackend) continue;
      for (int p = 0; p < kPhaseCount && !split_rule; ++p) {
        const Verdict& v = judge(b, p);
        if (!v.cell || !v.page_rule) continue;
        inputs.push_back({b, static_cast<Phase>(p), v.cell, v.page_size, &v.page_rule->info, /*runs=*/false});
        split_rule = &v.page_rule->info;
        split = b;
      }
      if (split_rule) break;
    }
    for (const auto& sp : out_.slots)
      for (int p = 0; p < kPhaseCount; ++p) {
        BackendId b = sp.phase[p].backend;
        if (b == kNoBackend) continue;
        const Verdict& v = judge_choice(sp.phase[p], p);
        if (!v.cell) continue;
        inputs.push_back({b, static_cast<Phase>(p), v.cell, v.page_rule ? v.page_size : std::optional<int>{},
                          v.page_rule ? &v.page_rule->info : nullptr});
      }
    std::vector<Finding> findings;
    out_.page = detail::solve_page_plan(inputs, out_.request.page_size, m_.default_page_size(), out_.request.prefer,
                                        findings, m_.builtin(BuiltinRule::page_conflict),
                                        m_.builtin(BuiltinRule::page_rewrite_conflict));
    for (const auto& f : findings) add(f);
    if (split_rule && out_.page.rewrite_rule == split_rule) {
      const Slot& slot = m_.slot(m_.backend(split).slot);
      Finding f = finding(*slot.split_default, slot.split_default->severity, split, -1);
      f.from = out_.request.page_size.value_or(m_.default_page_size());
      f.to = out_.page.page_size;
      f.values = Finding::Values::page_size;
      add(f);
    }
    out_.trace.push_back({TraceStep::Kind::page, 0, -1, kNoBackend, out_.page.rewrite_rule});
  }

  // vLLM up to v0.21 raises a hybrid model's given block when it builds its configuration, before
  // any layer chooses a backend (HybridAttentionMambaModelConfig.verify_and_update_config): the
  // backends are judged at the raised block. The alignment rules see the backend the user named.
  bool raise_given_hybrid_block() {
    const auto& policy = m_.hybrid_page();
    if (!policy || !policy->before_selection || !out_.request.page_size || !out_.request.model.recurrent_state ||
        m_.slots().empty())
      return false;
    EvalContext ctx = base_;
    ctx.phase = 0;
    ctx.backend = explicit_[0][0];
    ctx.backend_explicit = ctx.backend != kNoBackend;
    std::optional<int> rule_alignment;
    for (const HybridAlignmentRule& rule : policy->alignment_rules)
      if (matches(rule.when, ctx)) {
        rule_alignment = rule.alignment;
        break;
      }
    const auto block = detail::hybrid_block_size(*policy, out_.request, base_.kv_dtype, base_.page_size, true,
                                                 std::nullopt, rule_alignment);
    if (!block) return false;
    base_.page_size = *block;
    return true;
  }

  // A hybrid model's attention block holds one sequence's recurrent state (matrix hybrid_page): the
  // engine raises the block after choosing the backend, whatever its kernels' own block sizes (the
  // kernels then run on sub-blocks), so the cells are not judged again at the raised size.
  void align_hybrid_block() {
    const auto& policy = m_.hybrid_page();
    if (!policy || out_.slots.empty() || !out_.request.model.recurrent_state) return;
    const SlotPlan& plan = out_.slots.front();
    const BackendId attention = plan.phase[0].backend;
    if (attention == kNoBackend) return;
    std::optional<int> kernel_alignment;
    if (const Verdict* v = &judge_choice(plan.phase[0], 0); v->cell)
      kernel_alignment = detail::smallest_kernel_block(v->cell->page_size);
    EvalContext ctx = base_;
    ctx.backend = attention;
    ctx.phase = 0;
    ctx.backend_explicit = plan.phase[0].origin == ChoiceOrigin::explicit_flag;
    ctx.prefill = plan.phase[0].backend;
    ctx.decode = plan.phase[1].backend;
    ctx.page_size = out_.page.page_size;
    std::optional<int> rule_alignment;
    for (const HybridAlignmentRule& rule : policy->alignment_rules)
      if (matches(rule.when, ctx)) {
        rule_alignment = rule.alignment;
        break;
      }
    const auto block = detail::hybrid_block_size(*policy, out_.request, base_.kv_dtype, out_.page.page_size,
                                                 out_.request.page_size.has_value(), kernel_alignment, rule_alignment);
    if (!block) return;
    Finding f = finding(policy->info, policy->info.severity);
    f.from = out_.page.page_size;
    f.to = *block;
    f.values = Finding::Values::page_size;
    add(f);
    out_.page.page_size = *block;
    out_.page.origin = PageOrigin::sglang_rewrite;
    out_.page.rewrite_rule = &policy->info;
  }

  // A choice judged at the default page size may not hold at the planned one (topk > 1 at page 1 ...).
  void revalidate_at_final_page() {
    if (out_.page.page_size == base_.page_size) return;
    base_.page_size = out_.page.page_size;
    for (auto& sp : out_.slots)
      for (int p = 0; p < kPhaseCount; ++p) {
        BackendId b = sp.phase[p].backend;
        if (b == kNoBackend) continue;
        const bool replaced = is_replacement(sp.phase[p], p);
        Verdict& v = judge(b, p, replaced);
        Verdict again;
        again.evaluated = true;
        EvalContext ctx = base_;
        ctx.backend = b;
        ctx.phase = p;
        ctx.backend_explicit = sp.phase[p].origin == ChoiceOrigin::explicit_flag;
        ctx.phase_flag = ctx.backend_explicit && phase_flag_[sp.slot][static_cast<std::size_t>(p)];
        ctx.page_size_explicit = true;  // the plan states it on the command line
        ctx.replaced = replaced;
        judge_into(again, b, p, ctx);
        // The plan's size is not the user's: rewrites of it are plan facts (page.*), not warnings.
        again.findings.erase(std::remove_if(again.findings.begin(), again.findings.end(),
                                            [&](const Finding& f) {
                                              return f.values == Finding::Values::page_size &&
                                                     f.rule != &m_.builtin(BuiltinRule::page_size);
                                            }),
                             again.findings.end());
        // Keep what SGLang rewrote on the way to this page size: the user must still hear of it.
        for (const auto& f : v.findings)
          if (f.values == Finding::Values::page_size && f.rule != &m_.builtin(BuiltinRule::page_size))
            again.findings.insert(again.findings.begin(), f);
        again.page_rule = v.page_rule;
        v = std::move(again);
      }
  }

  // ---- results ----

  void collect() {
    SmallVector<std::pair<BackendId, int>, 6> chosen;
    for (const auto& sp : out_.slots)
      for (int p = 0; p < kPhaseCount; ++p) {
        const PhaseChoice& c = sp.phase[p];
        if (c.backend == kNoBackend) continue;
        if (c.requested != c.backend) {
          for (const auto& f : judge(c.requested, p).findings) add_once(f);
        }
        chosen.emplace_back(c.backend, p);
        for (const auto& f : judge_choice(c, p).findings) add_once(f);
      }
    if (rejections_) {
      report_rejection_rules(chosen);
      return;
    }
    if (!judged_) return;
    for (BackendId b = 0; b < m_.backends().size(); ++b) {
      if (!(planned_ & (1u << m_.backend(b).slot))) continue;
      bool is_chosen = std::any_of(chosen.begin(), chosen.end(), [&](const auto& c) { return c.first == b; });
      if (is_chosen) continue;
      Rejection r;
      r.backend = b;
      for (int p = 0; p < kPhaseCount; ++p) {
        const Verdict& v = judge(b, p);
        if (v.valid && v.redirect == kNoBackend) continue;
        for (const auto& f : v.findings) {
          // A silently replaced backend shows the replacement; a rejected one its errors.
          if (v.redirect == kNoBackend ? f.severity != Severity::error : f.to != v.redirect) continue;
          auto same = std::find_if(r.reasons.begin(), r.reasons.end(), [&](const Finding& g) { return g.rule == f.rule; });
          if (same == r.reasons.end()) r.reasons.push_back(f);
          else if (same->phase != f.phase) same->phase = -1;  // fails in every phase
        }
      }
      if (r.reasons.empty()) judged_->valid.push_back(b);
      else judged_->rejected.push_back(std::move(r));
    }
  }

  // The rules collect() would put in Selection::rejected, for candidates not judged yet in this context.
  void report_rejection_rules(const SmallVector<std::pair<BackendId, int>, 6>& chosen) {
    const int context = rejections_->context(base_);  // judge() judges in base_, with the backend's own fields
    for (BackendId b = 0; b < m_.backends().size(); ++b) {
      const SlotId s = m_.backend(b).slot;
      if (!(planned_ & (1u << s))) continue;
      if (std::any_of(chosen.begin(), chosen.end(), [&](const auto& c) { return c.first == b; })) continue;
      for (int p = 0; p < kPhaseCount; ++p) {
        const Verdict* v = verdicts_.find(b, p);
        if (!v) {
          const bool is_explicit = explicit_[s][static_cast<std::size_t>(p)] == b;
          if (!rejections_->first_time(context, b, p, is_explicit)) continue;  // judged so before: the same rules
          v = &judge(b, p);
        }
        if (v->valid && v->redirect == kNoBackend) continue;
        for (const auto& f : v->findings)
          if (v->redirect == kNoBackend ? f.severity == Severity::error : f.to == v->redirect) rejections_->rules.push_back(f.rule);
      }
    }
  }

  // ---- findings ----

  Severity effective_severity(const Rule& rule) const {
    if (rule.strict_error && out_.request.strict) return Severity::error;
    return rule.info.severity;
  }

  static Finding finding(const RuleInfo& info, Severity severity, BackendId b = kNoBackend, int phase = -1) {
    Finding f;
    f.rule = &info;
    f.severity = severity;
    f.backend = b;
    f.phase = static_cast<std::int8_t>(phase);
    return f;
  }

  void add(const Finding& f) {
    switch (f.severity) {
      case Severity::error: out_.errors.push_back(f); break;
      case Severity::warning: out_.warnings.push_back(f); break;
      case Severity::info: out_.notes.push_back(f); break;
    }
  }

  void add_once(const Finding& f) {
    auto& list = f.severity == Severity::error ? out_.errors : f.severity == Severity::warning ? out_.warnings : out_.notes;
    for (auto& g : list)
      if (g.rule == f.rule && g.backend == f.backend) {
        if (g.phase != f.phase) g.phase = -1;
        return;
      }
    list.push_back(f);
  }

  const Matrix& m_;
  Selection& out_;
  JudgedAlternatives* judged_;
  detail::RejectionRules* rejections_;
  EvalContext base_;
  SmallVector<std::array<BackendId, kPhaseCount>, 4> explicit_;
  SmallVector<std::array<bool, kPhaseCount>, 4> phase_flag_;  // explicit_ named with the phase's own flag
  std::uint32_t planned_ = 0;  // bit s: slot s is planned (its kind has it and it runs with the plan)
  VerdictTable verdicts_;
  VerdictTable replacement_verdicts_;  // backends judged as another's replacement (judge's `replaced`)
  bool uses_replaced_ = false;         // some rule tests Condition::replaced
  std::array<const FeatureRule*, kFeatureCount> feature_rules_{};  // by Feature; null where the matrix has none
  static constexpr std::int8_t kUnknown = -1;
  SmallVector<std::int8_t, 32> plan_per_phase_;  // by position in rules_in(RuleScope::plan); kUnknown until needed
};

}  // namespace

namespace detail {

struct EngineAccess {
  static Result<Selection> select(const std::shared_ptr<const Matrix>& matrix, const Request& request, bool judge_all,
                                  RejectionRules* rejections = nullptr) {
    Result<Selection> out(std::in_place);  // filled where it lies: a Selection is large to move
    auto judged = judge_all ? std::make_unique<JudgedAlternatives>() : nullptr;
    Engine engine(matrix, request, *out, judged.get(), rejections);
    if (auto err = engine.run()) out = Result<Selection>(std::move(*err));
    else out->judged_.store(judged.release());
    return out;
  }
};

Result<Selection> select_judging_all(const std::shared_ptr<const Matrix>& matrix, const Request& request) {
  return EngineAccess::select(matrix, request, true);
}

Result<Selection> select_for_lint(const std::shared_ptr<const Matrix>& matrix, const Request& request,
                                  RejectionRules& rejections) {
  return EngineAccess::select(matrix, request, false, &rejections);
}

}  // namespace detail

Result<Selection> select(const std::shared_ptr<const Matrix>& matrix, const Request& request) {
  return detail::EngineAccess::select(matrix, request, false);
}

// ---- what a Selection judges on first use ----

Selection::Selection(const Selection& other) : SelectionOutcome(other) {
  if (const JudgedAlternatives* j = other.judged_.load(std::memory_order_acquire)) judged_.store(new JudgedAlternatives(*j));
}

Selection::Selection(Selection&& other) noexcept
    : SelectionOutcome(std::move(other)), judged_(other.judged_.exchange(nullptr, std::memory_order_acq_rel)) {}

Selection& Selection::operator=(const Selection& other) {
  if (this != &other) *this = Selection(other);
  return *this;
}

Selection& Selection::operator=(Selection&& other) noexcept {
  if (this == &other) return *this;
  SelectionOutcome::operator=(std::move(other));
  delete judged_.exchange(other.judged_.exchange(nullptr, std::memory_order_acq_rel), std::memory_order_acq_rel);
  return *this;
}

Selection::~Selection() { delete judged_.load(std::memory_order_acquire); }

const JudgedAlternatives& Selection::judged() const {
  if (const JudgedAlternatives* j = judged_.load(std::memory_order_acquire)) return *j;
  static const JudgedAlternatives kNone;
  if (!matrix) return kNone;
  // The same engine on the same matrix and request, judging every candidate this time.
  auto again = detail::EngineAccess::select(matrix, request, true);
  if (!again) return kNone;
  const JudgedAlternatives* fresh = again->judged_.exchange(nullptr);
  const JudgedAlternatives* expected = nullptr;
  if (judged_.compare_exchange_strong(expected, fresh, std::memory_order_acq_rel)) return *fresh;
  delete fresh;  // another thread judged first
  return *expected;
}

}  // namespace attnsel
