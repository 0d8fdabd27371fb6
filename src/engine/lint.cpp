// lint_matrix(): automatic selection against explicit validation over the whole request space.
//
// Per configuration: select automatically; replay a valid plan explicitly and compare; when there is
// no valid plan, search the explicit combinations for one; probe each backend explicitly. Every
// rule, feature and selection entry the engine reports along the way counts as fired.
#include "attnsel/lint.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <exception>
#include <limits>
#include <map>
#include <memory>
#include <thread>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attnsel/selection.hpp"
#include "core/json_text.hpp"
#include "render/envelope.hpp"

namespace attnsel {
namespace {

struct LintDevice {
  DeviceInfo info;
  std::string args;  // "--gpu sm90 --cuda 12.4", "--platform npu"
};

struct LintModel {
  ModelTraits traits;
  std::string args;  // "--model mla", "--model deepseek-ai/DeepSeek-V3"
};

std::vector<LintDevice> devices_of(const Catalog& catalog, const LintOptions& o) {
  std::vector<LintDevice> out;
  auto add = [&](const DeviceSpec& spec, std::string args) {
    auto d = resolve_device(catalog, spec);
    if (d) out.push_back({*d, std::move(args)});
  };
  for (const GpuArch& a : catalog.architectures()) {
    if (a.platform != Platform::cuda) {
      add(DeviceSpec{a.arch, std::nullopt, std::nullopt, "--gpu"}, "--gpu " + a.arch);
      continue;
    }
    for (const std::string& v : o.cuda_versions) {
      auto cuda = parse_version(v);
      if (!cuda || (a.min_cuda && *cuda < *a.min_cuda) || (a.max_cuda && *cuda >= *a.max_cuda)) continue;
      add(DeviceSpec{a.arch, std::nullopt, v, "--gpu"}, fmt::format("--gpu {} --cuda {}", a.arch, v));
    }
  }
  for (Platform p : o.gpu_less_platforms)
    add(DeviceSpec{std::nullopt, p, std::nullopt, "--platform"}, fmt::format("--platform {}", name_of(p)));
  return out;
}

std::vector<LintModel> models_of(const Catalog& catalog, const LintOptions& o) {
  std::vector<LintModel> out;
  for (const char* kind : {"mha", "mla", "gdn", "dsa"})
    if (auto t = resolve_model(catalog, kind)) out.push_back({*t, std::string("--model ") + kind});
  if (!o.model_families) return out;
  for (const ModelFamily& f : catalog.families()) {
    const std::string& name = !f.models.empty() ? f.models.front() : !f.architectures.empty() ? f.architectures.front() : f.name;
    if (auto t = resolve_model(catalog, name)) out.push_back({*t, "--model " + name});
  }
  return out;
}

// The attnsel flags that name the request's explicit backends and page size.
std::string explicit_args(const Matrix& m, const Request& r) {
  std::string out;
  for (const Slot& slot : m.slots()) {
    const BackendChoice* c = r.choice_for(slot.name);
    if (!c) continue;
    if (c->all) out += fmt::format(" {} {}", slot.flag, *c->all);
    if (c->prefill) out += fmt::format(" {} {}", slot.prefill_flag, *c->prefill);
    if (c->decode) out += fmt::format(" {} {}", slot.decode_flag, *c->decode);
  }
  if (r.page_size) out += fmt::format(" --page-size {}", *r.page_size);
  return out.empty() ? out : out.substr(1);
}

BackendChoice* choice_of(Request& r, std::string_view slot) {
  return const_cast<BackendChoice*>(std::as_const(r).choice_for(slot));  // r itself is not const
}

// The request fields a condition reads that the space does not vary.
std::vector<std::string> outside_space(std::uint32_t uses, const LintOptions& o) {
  struct FieldName {
    std::uint32_t field;
    const char* name;
    bool varied;
  };
  const FieldName fields[] = {
      {Condition::f_family, "family", o.model_families},
      {Condition::f_architecture, "architecture", false},
      {Condition::f_kv_heads, "kv_heads", false},
      {Condition::f_head_dim, "head_dim", false},
      {Condition::f_multimodal, "multimodal", o.model_families},
      {Condition::f_attention_sinks, "attention_sinks", o.model_families},
      {Condition::f_deterministic, "deterministic", o.deterministic},
      {Condition::f_radix_cache, "radix_cache", o.deterministic},
      {Condition::f_spec_mode, "speculative_attention_mode", false},
  };
  std::vector<std::string> out;
  for (const auto& f : fields)
    if ((uses & f.field) && !f.varied) out.emplace_back(f.name);
  return out;
}

// Configurations by their position in the space: [begin, end).
struct Range {
  std::size_t begin, end;
};
constexpr Range kAll{0, std::numeric_limits<std::size_t>::max()};
constexpr Range kNone{std::numeric_limits<std::size_t>::max(), std::numeric_limits<std::size_t>::max()};

class Linter {
 public:
  Linter(const std::shared_ptr<const Matrix>& matrix, const LintOptions& o) : matrix_(matrix), m_(*matrix), o_(o) {
    for (const Rule& r : m_.rules()) track(r.info, "rule", r.when.uses());
    for (int f = 0; f < kFeatureCount; ++f)
      if (const FeatureRule* fr = m_.feature_rule(static_cast<Feature>(f))) track(fr->info, "feature", fr->when.uses());
    for (const SelectionEntry& e : m_.selection()) track(e.info, "selection", e.when.uses());
    const std::size_t n = m_.backends().size();
    chosen_auto_.assign(n, false);
    valid_.assign(n, {false, false});
    hopeless_.assign(n, {false, false});
  }

  void run(const std::vector<LintDevice>& devices, const std::vector<LintModel>& models) {
    report_.devices = devices.size();
    report_.models = models.size();
    const std::size_t total = for_each_case(devices, models, kNone, [](const Request&, const std::string&) { return true; });
    std::size_t threads = o_.threads != 0 ? o_.threads : std::max<std::size_t>(1, std::thread::hardware_concurrency());
    threads = std::min(threads, total);
    if (threads <= 1) {
      sweep(devices, models, 0, total);
    } else {
      // Contiguous chunks, handed out as workers free up; each has its own partial report, merged in
      // the order of the space: the same report as one thread's.
      const std::size_t chunks = std::min(total, threads * 16);
      std::vector<std::unique_ptr<Linter>> parts(chunks);
      std::atomic<std::size_t> next{0};
      std::vector<std::exception_ptr> failures(threads);
      auto work = [&](std::size_t worker) {
        try {
          for (std::size_t c = next++; c < chunks; c = next++) {
            auto part = std::make_unique<Linter>(matrix_, o_);
            part->sweep(devices, models, total * c / chunks, total * (c + 1) / chunks);
            parts[c] = std::move(part);
          }
        } catch (...) {
          failures[worker] = std::current_exception();
          next = chunks;
        }
      };
      std::vector<std::thread> workers;
      for (std::size_t w = 1; w < threads; ++w) workers.emplace_back(work, w);
      work(0);
      for (std::thread& t : workers) t.join();
      for (const std::exception_ptr& e : failures)
        if (e) std::rethrow_exception(e);
      for (auto& part : parts) merge(std::move(*part));
    }
    hybrid_pass(devices, models);
    finish();
  }

  // Checks the configurations [begin, end) of the space.
  void sweep(const std::vector<LintDevice>& devices, const std::vector<LintModel>& models, std::size_t begin, std::size_t end) {
    for_each_case(devices, models, {begin, end}, [&](const Request& r, const std::string& args) {
      check(r, args);
      return true;
    });
  }

  // A part of the space that covered the configurations just after this one's.
  void merge(Linter&& part) {
    LintReport& p = part.report_;
    report_.configurations += p.configurations;
    report_.selections += p.selections;
    report_.auto_valid += p.auto_valid;
    report_.auto_invalid += p.auto_invalid;
    report_.replay_rejected += p.replay_rejected;
    report_.replay_differs += p.replay_differs;
    report_.missed += p.missed;
    report_.engine_errors += p.engine_errors;
    for (LintProblem& problem : p.problems) {
      auto key = std::make_pair(problem.kind, problem.detail);
      if (auto it = problem_index_.find(key); it != problem_index_.end()) {
        report_.problems[it->second].count += problem.count;
        continue;
      }
      problem_index_.emplace(std::move(key), report_.problems.size());
      report_.problems.push_back(std::move(problem));
    }
    for (std::size_t i = 0; i < tracked_.size(); ++i) tracked_[i].fired = tracked_[i].fired || part.tracked_[i].fired;
    for (std::size_t b = 0; b < chosen_auto_.size(); ++b) {
      chosen_auto_[b] = chosen_auto_[b] || part.chosen_auto_[b];
      for (std::size_t ph = 0; ph < valid_[b].size(); ++ph) valid_[b][ph] = valid_[b][ph] || part.valid_[b][ph];
    }
  }

  // Calls f(request, attnsel arguments) for every configuration of the space in `range` while f
  // returns true; returns the position after the last configuration visited (with kNone: the size
  // of the space).
  template <class F>
  std::size_t for_each_case(const std::vector<LintDevice>& devices, const std::vector<LintModel>& models, F&& f) const {
    return for_each_case(devices, models, kAll, std::forward<F>(f));
  }
  template <class F>
  std::size_t for_each_case(const std::vector<LintDevice>& devices, const std::vector<LintModel>& models, Range range,
                            F&& f) const {
    std::size_t at = 0;
    for (const auto& d : devices)
      for (const auto& model : models)
        for (bool deterministic : {false, true}) {
          if (deterministic && !o_.deterministic) continue;
          for (KvCacheDtype kv : o_.kv_dtypes)
            for (int topk : o_.topks)
              for (const auto& page : o_.page_sizes)
                for (bool sw : {false, true}) {
                  if (!sw && model.traits.sliding_window) continue;  // the model's own trait: one case
                  const std::size_t position = at++;
                  if (position < range.begin) continue;
                  if (position >= range.end) return position;
                  Request r;
                  r.device = d.info;
                  r.model = model.traits;
                  r.model.sliding_window = model.traits.sliding_window || sw;
                  r.kv_cache_dtype = kv;
                  r.page_size = page;
                  r.speculative_topk = topk;
                  r.deterministic = deterministic;
                  std::string args = fmt::format("{} {}", d.args, model.args);
                  if (kv != KvCacheDtype::auto_) args += fmt::format(" --kv-cache-dtype {}", name_of(kv));
                  if (topk) args += fmt::format(" --speculative-eagle-topk {}", topk);
                  if (page) args += fmt::format(" --page-size {}", *page);
                  if (sw && !model.traits.sliding_window) args += " --sliding-window";
                  if (deterministic) args += " --enable-deterministic-inference";
                  if (!f(r, args)) return at;
                }
        }
    return at;
  }

  LintReport take() { return std::move(report_); }

 private:
  struct Tracked {
    const RuleInfo* info;
    const char* what;
    std::uint32_t uses;
    bool fired = false;
  };

  void track(const RuleInfo& info, const char* what, std::uint32_t uses) {
    index_[&info] = tracked_.size();
    tracked_.push_back({&info, what, uses});
  }

  void fired(const RuleInfo* info) {
    if (!info) return;
    auto it = index_.find(info);
    if (it != index_.end()) tracked_[it->second].fired = true;
  }

  // Runs the engine and records what fired and which backends were valid where.
  std::optional<Selection> run_select(const Request& r, const std::string& args, bool automatic) {
    ++report_.selections;
    auto s = select(matrix_, r);
    if (!s) {
      problem(LintProblemKind::engine_error, s.error().describe(), args, explicit_args(m_, r));
      ++report_.engine_errors;
      return std::nullopt;
    }
    for (const auto* list : {&s->errors, &s->warnings, &s->notes})
      for (const Finding& f : *list) fired(f.rule);
    for (const Rejection& rej : s->rejected)
      for (const Finding& f : rej.reasons) fired(f.rule);
    for (const TraceStep& t : s->trace) fired(t.rule);
    fired(s->page.rewrite_rule);
    if (s->ok())
      for (const SlotPlan& sp : s->slots)
        for (int p = 0; p < kPhaseCount; ++p) {
          const PhaseChoice& c = sp.phase[p];
          if (c.backend == kNoBackend) continue;
          fired(c.decided_by);
          valid_[c.backend][static_cast<std::size_t>(p)] = true;
          if (automatic && c.origin != ChoiceOrigin::explicit_flag) chosen_auto_[c.backend] = true;
        }
    return std::move(*s);
  }

  static void set_choice(Request& r, const Matrix& m, SlotId s, int phase, const std::string& name) {
    BackendChoice* c = choice_of(r, m.slot(s).name);
    if (!c) return;
    (phase == 0 ? c->prefill : c->decode) = name;
  }

  // The automatic plan, as the user would pass it: every slot's backend per phase and the page size.
  Request replay_of(const Request& r, const Selection& s) const {
    Request e = r;
    for (const SlotPlan& sp : s.slots) {
      const Slot& slot = m_.slot(sp.slot);
      BackendChoice* c = choice_of(e, slot.name);
      if (!c) continue;
      const BackendId pre = sp.phase[0].backend, dec = sp.phase[1].backend;
      if (pre == dec && !slot.flag.empty()) {
        c->all = m_.backend(pre).name;
      } else {
        if (pre != kNoBackend) c->prefill = m_.backend(pre).name;
        if (dec != kNoBackend) c->decode = m_.backend(dec).name;
      }
    }
    e.page_size = s.page.page_size;
    return e;
  }

  std::string plan_summary(const Selection& s) const {
    std::string out;
    for (const SlotPlan& sp : s.slots) {
      auto name = [&](BackendId b) { return b == kNoBackend ? std::string("none") : m_.backend(b).name; };
      out += fmt::format("{}{}={}/{}", out.empty() ? "" : " ", m_.slot(sp.slot).name, name(sp.phase[0].backend),
                         name(sp.phase[1].backend));
    }
    return out + fmt::format(" page={}", s.page.page_size);
  }

  std::string error_summary(const Selection& s) const {
    std::vector<std::string> parts;
    for (const Finding& f : s.errors) {
      std::string p = f.rule->id;
      if (f.backend != kNoBackend && f.phase >= 0)
        p += fmt::format(" ({}, {})", m_.backend(f.backend).name, name_of(static_cast<Phase>(f.phase)));
      else if (f.backend != kNoBackend)
        p += fmt::format(" ({})", m_.backend(f.backend).name);
      if (std::find(parts.begin(), parts.end(), p) == parts.end()) parts.push_back(p);
    }
    return fmt::format("{}", fmt::join(parts, "; "));
  }

  void check(const Request& r, const std::string& args) {
    ++report_.configurations;
    auto automatic = run_select(r, args, true);
    if (!automatic) return;
    if (automatic->ok()) {
      ++report_.auto_valid;
      const Request replay = replay_of(r, *automatic);
      const std::string replay_args = explicit_args(m_, replay);
      if (auto again = run_select(replay, args, false)) {
        if (!again->ok()) {
          ++report_.replay_rejected;
          problem(LintProblemKind::replay_rejected,
                  fmt::format("automatic {}; explicit replay rejected by {}", plan_summary(*automatic), error_summary(*again)),
                  args, replay_args);
        } else if (plan_summary(*again) != plan_summary(*automatic)) {
          ++report_.replay_differs;
          problem(LintProblemKind::replay_differs,
                  fmt::format("automatic {}; explicit replay runs {}", plan_summary(*automatic), plan_summary(*again)),
                  args, replay_args);
        }
      }
    } else {
      ++report_.auto_invalid;
    }
    const bool search_needed = !automatic->ok() && o_.search_missed && !request_level_failure(*automatic);
    if (o_.explicit_probes || search_needed) probe(r, args);
    if (search_needed) search(r, args, *automatic);
  }

  // An error from a request-scope rule holds whatever the backends are: no combination can help.
  bool request_level_failure(const Selection& s) const {
    const auto& request_rules = m_.rules_in(RuleScope::request);
    return std::any_of(s.errors.begin(), s.errors.end(), [&](const Finding& f) {
      return std::any_of(request_rules.begin(), request_rules.end(), [&](const Rule* rule) { return &rule->info == f.rule; });
    });
  }

  // Backends of a slot that have a cell for this kind and platform covering a phase.
  std::vector<BackendId> candidates(SlotId s, int phase, const Request& r) const {
    std::vector<BackendId> out;
    for (BackendId b = 0; b < m_.backends().size(); ++b) {
      if (m_.backend(b).slot != s) continue;
      const Cell* c = m_.cell_for(b, r.model.kind, r.device.platform);
      if (c && c->phases.contains(static_cast<Phase>(phase))) out.push_back(b);
    }
    return out;
  }

  std::vector<SlotId> slots_of(const Request& r) const {
    std::vector<SlotId> out;
    for (SlotId s = 0; s < m_.slots().size(); ++s)
      if (m_.slot(s).kinds.contains(r.model.kind) && r.choice_for(m_.slot(s).name)) out.push_back(s);
    return out;
  }

  // Every explicit combination (each slot, each phase), until one is valid.
  void search(const Request& r, const std::string& args, const Selection& automatic) {
    struct Axis {
      SlotId slot;
      int phase;
      std::vector<BackendId> options;
    };
    std::vector<Axis> axes;
    for (SlotId s : slots_of(r))
      for (int p = 0; p < kPhaseCount; ++p) {
        axes.push_back({s, p, {}});
        for (BackendId b : candidates(s, p, r))
          if (!hopeless_[b][static_cast<std::size_t>(p)]) axes.back().options.push_back(b);
        if (axes.back().options.empty()) return;  // nothing has a cell here
      }
    std::vector<std::size_t> at(axes.size(), 0);
    while (true) {
      Request e = r;
      for (std::size_t i = 0; i < axes.size(); ++i)
        set_choice(e, m_, axes[i].slot, axes[i].phase, m_.backend(axes[i].options[at[i]]).name);
      auto s = run_select(e, args, false);
      if (s && s->ok()) {
        ++report_.missed;
        problem(LintProblemKind::missed,
                fmt::format("no automatic plan ({}), yet explicit {} is valid", error_summary(automatic), plan_summary(*s)),
                args, explicit_args(m_, e));
        return;
      }
      std::size_t i = 0;
      for (; i < axes.size(); ++i) {
        if (++at[i] < axes[i].options.size()) break;
        at[i] = 0;
      }
      if (i == axes.size()) return;
    }
  }

  // Each backend explicitly: in every phase at once where its cell has both, else in the phase it has.
  // Records where a backend fails for reasons no other choice can change (its cell's columns, the
  // model's features), so that search() need not try it there.
  void probe(const Request& r, const std::string& args) {
    for (auto& h : hopeless_) h = {false, false};
    for (SlotId s : slots_of(r))
      for (BackendId b = 0; b < m_.backends().size(); ++b) {
        if (m_.backend(b).slot != s) continue;
        const Cell* c = m_.cell_for(b, r.model.kind, r.device.platform);
        if (!c) continue;
        Request e = r;
        for (int p = 0; p < kPhaseCount; ++p)
          if (c->phases.contains(static_cast<Phase>(p))) set_choice(e, m_, s, p, m_.backend(b).name);
        auto sel = run_select(e, args, false);
        if (!sel) continue;
        for (const Finding& f : sel->errors) {
          if (f.backend != b || !fixed_by_request(f.rule)) continue;
          for (int p = 0; p < kPhaseCount; ++p)
            if (f.phase < 0 || f.phase == p) hopeless_[b][static_cast<std::size_t>(p)] = true;
        }
      }
  }

  // Checks whose outcome depends only on the request and the backend, not on the page size or the
  // other choices: the cell's columns and the model's features.
  bool fixed_by_request(const RuleInfo* rule) const {
    for (BuiltinRule b : {BuiltinRule::kind, BuiltinRule::platform, BuiltinRule::compute_capability, BuiltinRule::cuda,
                          BuiltinRule::phase, BuiltinRule::kv_dtype, BuiltinRule::unknown_device})
      if (rule == &m_.builtin(b)) return true;
    for (int f = 0; f < kFeatureCount; ++f)
      if (const FeatureRule* fr = m_.feature_rule(static_cast<Feature>(f)); fr && rule == &fr->info)
        return !(fr->when.uses() & (Condition::f_page_size | Condition::f_page_size_explicit));
    return false;
  }

  // Plan rules judge the attention backends of both phases together: for those that have not fired
  // yet, every explicit (prefill, decode) pair of the attention slot, until they all have. Pairs with
  // a backend its cell already rejects are skipped: a rule that fires only there is redundant.
  void hybrid_pass(const std::vector<LintDevice>& devices, const std::vector<LintModel>& models) {
    auto unfired_plan_rules = [&] {
      for (const Rule* rule : m_.rules_in(RuleScope::plan))
        if (!tracked_[index_.at(&rule->info)].fired) return true;
      return false;
    };
    if (m_.slots().empty() || !unfired_plan_rules()) return;
    for_each_case(devices, models, [&](const Request& r, const std::string& args) {
      if (!m_.slot(0).kinds.contains(r.model.kind)) return true;
      const auto prefill = candidates(0, 0, r), decode = candidates(0, 1, r);
      if (prefill.size() + decode.size() <= 2) return true;  // no pair of two backends
      probe(r, args);
      for (BackendId p : prefill)
        for (BackendId d : decode) {
          if (p == d || hopeless_[p][0] || hopeless_[d][1]) continue;
          Request e = r;
          set_choice(e, m_, 0, 0, m_.backend(p).name);
          set_choice(e, m_, 0, 1, m_.backend(d).name);
          run_select(e, args, false);
        }
      return unfired_plan_rules();
    });
  }

  void problem(LintProblemKind kind, std::string detail, const std::string& args, std::string replay_args) {
    auto key = std::make_pair(kind, detail);
    auto it = problem_index_.find(key);
    if (it != problem_index_.end()) {
      ++report_.problems[it->second].count;
      return;
    }
    problem_index_[key] = report_.problems.size();
    report_.problems.push_back({kind, std::move(detail), 1, args, std::move(replay_args)});
  }

  void finish() {
    auto& problems = report_.problems;
    std::stable_sort(problems.begin(), problems.end(), [](const LintProblem& a, const LintProblem& b) { return a.count > b.count; });
    if (problems.size() > o_.max_examples) problems.resize(o_.max_examples);
    for (const Tracked& t : tracked_) {
      if (t.fired) {
        report_.fired.push_back(t.info->id);
        continue;
      }
      report_.dead.push_back({t.info->id, t.what, t.info->pointer, outside_space(t.uses, o_)});
    }
    std::sort(report_.fired.begin(), report_.fired.end());
    for (BackendId b = 0; b < m_.backends().size(); ++b) {
      const std::string name = m_.slot(m_.backend(b).slot).name + ":" + m_.backend(b).name;
      const bool valid = valid_[b][0] || valid_[b][1];
      if (!chosen_auto_[b] && !valid) report_.unreachable_backends.push_back(name);
      else if (!chosen_auto_[b]) report_.explicit_only_backends.push_back(name);
    }
  }

  std::shared_ptr<const Matrix> matrix_;
  const Matrix& m_;
  const LintOptions& o_;
  LintReport report_;
  std::vector<Tracked> tracked_;
  std::unordered_map<const RuleInfo*, std::size_t> index_;
  std::map<std::pair<LintProblemKind, std::string>, std::size_t> problem_index_;
  std::vector<bool> chosen_auto_;
  std::vector<std::array<bool, kPhaseCount>> valid_;
  std::vector<std::array<bool, kPhaseCount>> hopeless_;  // per configuration, filled by probe()
};

}  // namespace

std::string_view name_of(LintProblemKind k) {
  switch (k) {
    case LintProblemKind::replay_rejected: return "replay-rejected";
    case LintProblemKind::replay_differs: return "replay-differs";
    case LintProblemKind::missed: return "missed";
    case LintProblemKind::engine_error: return "engine-error";
  }
  return "?";
}

std::size_t LintReport::dead_count() const {
  return static_cast<std::size_t>(std::count_if(dead.begin(), dead.end(), [](const DeadEntry& d) { return d.outside_space.empty(); }));
}

LintReport lint_matrix(const std::shared_ptr<const Matrix>& matrix, const Catalog& catalog, const LintOptions& options) {
  Linter linter(matrix, options);
  linter.run(devices_of(catalog, options), models_of(catalog, options));
  return linter.take();
}

std::string render_lint_text(const LintReport& r, double seconds) {
  std::string out = fmt::format("Space  {} configurations ({} devices x {} models x KV dtype x top-k x page size x sliding window)\n",
                                r.configurations, r.devices, r.models);
  out += fmt::format("       {} selections; automatic plan valid in {}, invalid in {}\n", r.selections, r.auto_valid, r.auto_invalid);
  if (seconds > 0)
    out += fmt::format("Time   {:.2f} s: {:.0f} configurations/s, {:.0f} selections/s\n", seconds,
                       static_cast<double>(r.configurations) / seconds, static_cast<double>(r.selections) / seconds);
  out += fmt::format("\n{} {} inconsistencies: {} replays rejected, {} replays differ, {} missed, {} engine errors\n",
                     r.consistent() ? "✓" : "✗", r.inconsistencies(), r.replay_rejected, r.replay_differs, r.missed, r.engine_errors);
  for (const auto& p : r.problems) {
    out += fmt::format("  {} x{}: {}\n", name_of(p.kind), p.count, p.detail);
    out += fmt::format("      attnsel {}\n", p.args);
    if (!p.replay_args.empty()) out += fmt::format("      attnsel {} {}\n", p.args, p.replay_args);
  }
  out += fmt::format("\nDead ({} never fire anywhere in the space)\n", r.dead_count());
  for (const auto& d : r.dead)
    if (d.outside_space.empty()) out += fmt::format("  {:<10} {}  {}\n", d.what, d.id, d.pointer);
  bool header = false;
  for (const auto& d : r.dead) {
    if (d.outside_space.empty()) continue;
    if (!header) out += "Not exercised (their conditions read fields this space does not vary)\n";
    header = true;
    out += fmt::format("  {:<10} {}  needs {}\n", d.what, d.id, fmt::join(d.outside_space, ", "));
  }
  out += fmt::format("\nUnreachable backends (never chosen automatically, never valid): {}\n",
                     r.unreachable_backends.empty() ? "none" : fmt::format("{}", fmt::join(r.unreachable_backends, ", ")));
  out += fmt::format("Explicit-only backends (valid somewhere, never chosen automatically): {}\n",
                     r.explicit_only_backends.empty() ? "none" : fmt::format("{}", fmt::join(r.explicit_only_backends, ", ")));
  return out;
}

std::string render_lint_json(const LintReport& r, double seconds, int indent) {
  using json = nlohmann::json;
  json problems = json::array();
  for (const auto& p : r.problems)
    problems.push_back({{"kind", std::string(name_of(p.kind))}, {"detail", p.detail}, {"count", p.count},
                        {"args", p.args}, {"replay_args", p.replay_args}});
  json dead = json::array();
  for (const auto& d : r.dead)
    dead.push_back({{"id", d.id}, {"what", d.what}, {"pointer", d.pointer}, {"outside_space", d.outside_space}});
  json j = {
      {"consistent", r.consistent()},
      {"configurations", r.configurations},
      {"devices", r.devices},
      {"models", r.models},
      {"selections", r.selections},
      {"auto_valid", r.auto_valid},
      {"auto_invalid", r.auto_invalid},
      {"seconds", seconds},
      {"configurations_per_second", seconds > 0 ? static_cast<double>(r.configurations) / seconds : 0.0},
      {"inconsistencies", {{"total", r.inconsistencies()}, {"replay_rejected", r.replay_rejected},
                           {"replay_differs", r.replay_differs}, {"missed", r.missed}, {"engine_errors", r.engine_errors}}},
      {"problems", problems},
      {"dead", dead},
      {"unreachable_backends", r.unreachable_backends},
      {"explicit_only_backends", r.explicit_only_backends},
  };
  return detail::envelope_text("lint", j, indent);
}

}  // namespace attnsel
