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
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attnsel/selection.hpp"
#include "core/json_text.hpp"
#include "engine/engine.hpp"
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
std::vector<std::string> outside_space(std::uint64_t uses, const LintOptions& o) {
  struct FieldName {
    std::uint64_t field;
    const char* name;
    bool varied;
  };
  const FieldName fields[] = {
      {Condition::f_family, "family", o.model_families},
      {Condition::f_architecture, "architecture", false},
      {Condition::f_kv_heads, "kv_heads", false},
      {Condition::f_head_dim, "head_dim", false},
      {Condition::f_heads_per_rank, "heads_per_rank", false},
      {Condition::f_config_has, "config_has", false},
      {Condition::f_config_lacks, "config_lacks", false},
      {Condition::f_kv_dtype_written, "kv_dtype_written", false},
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

// One configuration of the space; its attnsel arguments are rendered only when a problem needs them.
struct Case {
  std::size_t position = 0;  // in the space
  const LintDevice* device = nullptr;
  const LintModel* model = nullptr;
  bool deterministic = false;
  KvCacheDtype kv = KvCacheDtype::auto_;
  int topk = 0;
  std::optional<int> page;
  bool sliding_window = false;

  std::string args() const {
    std::string out = fmt::format("{} {}", device->args, model->args);
    if (kv != KvCacheDtype::auto_) out += fmt::format(" --kv-cache-dtype {}", name_of(kv));
    if (topk) out += fmt::format(" --speculative-eagle-topk {}", topk);
    if (page) out += fmt::format(" --page-size {}", *page);
    if (sliding_window && !model->traits.sliding_window) out += " --sliding-window";
    if (deterministic) out += " --enable-deterministic-inference";
    return out;
  }
};

// The matrix entries the lint tracks (rules, features, selection entries), by the address of their
// RuleInfo: an open-addressing table, built once and shared by every part of a sweep.
class TrackedIndex {
 public:
  static constexpr std::size_t kNotTracked = std::numeric_limits<std::size_t>::max();

  void add(const RuleInfo* info, std::size_t index) {
    if (slots_.empty() || 2 * (count_ + 1) > slots_.size()) grow();
    insert(info, index);
  }
  std::size_t find(const RuleInfo* info) const {
    if (slots_.empty()) return kNotTracked;
    for (std::size_t at = hash(info);; at = (at + 1) & (slots_.size() - 1)) {
      const Slot& s = slots_[at];
      if (s.info == info) return s.index;
      if (!s.info) return kNotTracked;
    }
  }

 private:
  struct Slot {
    const RuleInfo* info = nullptr;
    std::size_t index = 0;
  };
  std::size_t hash(const RuleInfo* info) const {
    const auto key = reinterpret_cast<std::uintptr_t>(info) >> 3;
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> 32) & (slots_.size() - 1);
  }
  void insert(const RuleInfo* info, std::size_t index) {
    std::size_t at = hash(info);
    while (slots_[at].info && slots_[at].info != info) at = (at + 1) & (slots_.size() - 1);
    if (!slots_[at].info) ++count_;
    slots_[at] = {info, index};
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(std::max<std::size_t>(64, old.size() * 2), Slot{});
    count_ = 0;
    for (const Slot& s : old)
      if (s.info) insert(s.info, s.index);
  }
  std::vector<Slot> slots_;  // a power of two, at most half full
  std::size_t count_ = 0;
};

// What the main sweep's probe() found per configuration (the hopeless backends and how many selections
// it made), for the hybrid pass, which probes the same configurations again. Parts of a sweep write
// disjoint configurations.
class ProbeRecords {
 public:
  ProbeRecords(std::size_t configurations, std::size_t backends)
      : backends_(backends), selections_(configurations, 0), hopeless_(configurations * backends, 0) {}

  void record(std::size_t position, const std::vector<std::array<bool, kPhaseCount>>& hopeless, std::size_t selections) {
    for (std::size_t b = 0; b < backends_; ++b)
      hopeless_[position * backends_ + b] = static_cast<std::uint8_t>((hopeless[b][0] ? 1 : 0) | (hopeless[b][1] ? 2 : 0));
    selections_[position] = selections + 1;
  }
  // Restores a recorded probe; false when the configuration was not probed (or an engine error made
  // its problems worth reporting again).
  bool replay(std::size_t position, std::vector<std::array<bool, kPhaseCount>>& hopeless, std::size_t& selections) const {
    if (position >= selections_.size() || selections_[position] == 0) return false;
    for (std::size_t b = 0; b < backends_; ++b) {
      const std::uint8_t bits = hopeless_[position * backends_ + b];
      hopeless[b] = {(bits & 1) != 0, (bits & 2) != 0};
    }
    selections += selections_[position] - 1;
    return true;
  }

 private:
  std::size_t backends_;
  std::vector<std::size_t> selections_;  // 1 + the probe's selections; 0: not recorded
  std::vector<std::uint8_t> hopeless_;   // per configuration and backend: bit 0 prefill, bit 1 decode
};

class Linter {
 public:
  Linter(const std::shared_ptr<const Matrix>& matrix, const LintOptions& o) : matrix_(matrix), m_(*matrix), o_(o) {
    auto index = std::make_shared<TrackedIndex>();
    for (const Rule& r : m_.rules()) track(*index, r.info, "rule", r.when.uses());
    for (int f = 0; f < kFeatureCount; ++f)
      if (const FeatureRule* fr = m_.feature_rule(static_cast<Feature>(f))) track(*index, fr->info, "feature", fr->when.uses());
    for (const SelectionEntry& e : m_.selection()) track(*index, e.info, "selection", e.when.uses());
    index_ = std::move(index);
    for (const Rule* rule : m_.rules_in(RuleScope::plan)) plan_rules_.push_back(index_->find(&rule->info));
    const std::size_t n = m_.backends().size();
    chosen_auto_.assign(n, false);
    valid_.assign(n, {false, false});
    hopeless_.assign(n, {false, false});
  }

  // A part of a sweep: the same matrix, options and tracked entries, nothing recorded yet.
  struct PartOf {};
  Linter(PartOf, const Linter& root)
      : matrix_(root.matrix_), m_(root.m_), o_(root.o_), tracked_(root.tracked_), index_(root.index_), plan_rules_(root.plan_rules_),
        probes_(root.probes_) {
    for (Tracked& t : tracked_) t.fired = false;
    const std::size_t n = m_.backends().size();
    chosen_auto_.assign(n, false);
    valid_.assign(n, {false, false});
    hopeless_.assign(n, {false, false});
  }

  void run(const std::vector<LintDevice>& devices, const std::vector<LintModel>& models) {
    report_.devices = devices.size();
    report_.models = models.size();
    const std::size_t total = for_each_case(devices, models, kNone, [](const Request&, const Case&) { return true; });
    probes_ = std::make_shared<ProbeRecords>(total, m_.backends().size());
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
      on_threads(threads, [&](std::size_t) {
        for (std::size_t c = next++; c < chunks; c = next++) {
          auto part = std::make_unique<Linter>(PartOf{}, *this);
          part->sweep(devices, models, total * c / chunks, total * (c + 1) / chunks);
          parts[c] = std::move(part);
        }
      }, [&] { next = chunks; });
      for (auto& part : parts) merge(std::move(*part));
    }
    hybrid_pass(devices, models, total, threads);
    finish();
  }

  // Checks the configurations [begin, end) of the space.
  void sweep(const std::vector<LintDevice>& devices, const std::vector<LintModel>& models, std::size_t begin, std::size_t end) {
    for_each_case(devices, models, {begin, end}, [&](const Request& r, const Case& c) {
      check(r, c);
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

  // Calls f(request, configuration) for every configuration of the space in `range` while f returns
  // true; returns the position after the last configuration visited (with kNone: the size of the space).
  template <class F>
  std::size_t for_each_case(const std::vector<LintDevice>& devices, const std::vector<LintModel>& models, Range range,
                            F&& f) const {
    std::size_t at = 0;
    Request r;
    Case c;
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
                  if (c.device != &d || c.model != &model) {  // the strings once per device and model
                    r.device = d.info;
                    r.model = model.traits;
                    c.device = &d;
                    c.model = &model;
                  }
                  r.model.sliding_window = model.traits.sliding_window || sw;
                  r.kv_cache_dtype = kv;
                  r.page_size = page;
                  r.speculative_topk = topk;
                  r.deterministic = deterministic;
                  c.position = position;
                  c.deterministic = deterministic;
                  c.kv = kv;
                  c.topk = topk;
                  c.page = page;
                  c.sliding_window = sw;
                  if (!f(std::as_const(r), std::as_const(c))) return at;
                }
        }
    return at;
  }

  LintReport take() { return std::move(report_); }

 private:
  struct Tracked {
    const RuleInfo* info;
    const char* what;
    std::uint64_t uses;
    bool fired = false;
  };

  void track(TrackedIndex& index, const RuleInfo& info, const char* what, std::uint64_t uses) {
    index.add(&info, tracked_.size());
    tracked_.push_back({&info, what, uses});
  }

  void fired(const RuleInfo* info) {
    if (!info) return;
    const std::size_t at = index_->find(info);
    if (at != TrackedIndex::kNotTracked) tracked_[at].fired = true;
  }

  // Runs work(worker) on `threads` threads (this one included); a worker that throws calls stop()
  // so that the others finish early, and the first failure is rethrown here.
  template <class Work, class Stop>
  static void on_threads(std::size_t threads, Work&& work, Stop&& stop) {
    std::vector<std::exception_ptr> failures(threads);
    auto guarded = [&](std::size_t worker) {
      try {
        work(worker);
      } catch (...) {
        failures[worker] = std::current_exception();
        stop();
      }
    };
    std::vector<std::thread> workers;
    for (std::size_t w = 1; w < threads; ++w) workers.emplace_back(guarded, w);
    guarded(0);
    for (std::thread& t : workers) t.join();
    for (const std::exception_ptr& e : failures)
      if (e) std::rethrow_exception(e);
  }

  // Runs the engine and records what fired and which backends were valid where.
  Result<Selection> run_select(const Request& r, const Case& c, bool automatic) {
    ++report_.selections;
    auto s = detail::select_for_lint(matrix_, r, rejections_);
    for (const RuleInfo* rule : rejections_.rules) fired(rule);
    rejections_.rules.clear();
    if (!s) {
      problem(LintProblemKind::engine_error, s.error().describe(), c, [&] { return explicit_args(m_, r); });
      ++report_.engine_errors;
      return s;
    }
    for (const auto* list : {&s->errors, &s->warnings, &s->notes})
      for (const Finding& f : *list) fired(f.rule);
    for (const TraceStep& t : s->trace) fired(t.rule);
    fired(s->page.rewrite_rule);
    if (s->ok())
      for (const SlotPlan& sp : s->slots)
        for (int p = 0; p < kPhaseCount; ++p) {
          const PhaseChoice& pc = sp.phase[p];
          if (pc.backend == kNoBackend) continue;
          fired(pc.decided_by);
          valid_[pc.backend][static_cast<std::size_t>(p)] = true;
          if (automatic && pc.origin != ChoiceOrigin::explicit_flag) chosen_auto_[pc.backend] = true;
        }
    return s;
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

  // plan_summary(a) == plan_summary(b), without rendering them when the plans are the same.
  bool same_plan(const Selection& a, const Selection& b) const {
    bool same = a.page.page_size == b.page.page_size && a.slots.size() == b.slots.size();
    for (std::size_t i = 0; same && i < a.slots.size(); ++i)
      same = a.slots[i].slot == b.slots[i].slot && a.slots[i].phase[0].backend == b.slots[i].phase[0].backend &&
             a.slots[i].phase[1].backend == b.slots[i].phase[1].backend;
    return same || plan_summary(a) == plan_summary(b);
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

  void check(const Request& r, const Case& c) {
    ++report_.configurations;
    rejections_.new_configuration();
    auto automatic = run_select(r, c, true);
    if (!automatic) return;
    if (automatic->ok()) {
      ++report_.auto_valid;
      const Request replay = replay_of(r, *automatic);
      if (auto again = run_select(replay, c, false)) {
        if (!again->ok()) {
          ++report_.replay_rejected;
          problem(LintProblemKind::replay_rejected,
                  fmt::format("automatic {}; explicit replay rejected by {}", plan_summary(*automatic), error_summary(*again)),
                  c, [&] { return explicit_args(m_, replay); });
        } else if (!same_plan(*again, *automatic)) {
          ++report_.replay_differs;
          problem(LintProblemKind::replay_differs,
                  fmt::format("automatic {}; explicit replay runs {}", plan_summary(*automatic), plan_summary(*again)),
                  c, [&] { return explicit_args(m_, replay); });
        }
      }
    } else {
      ++report_.auto_invalid;
    }
    const bool search_needed = !automatic->ok() && o_.search_missed && !request_level_failure(*automatic);
    if (o_.explicit_probes || search_needed) {
      const std::size_t selections = report_.selections, errors = report_.engine_errors;
      probe(r, c);
      if (report_.engine_errors == errors) probes_->record(c.position, hopeless_, report_.selections - selections);
    }
    if (search_needed) search(r, c, *automatic);
  }

  // An error from a request-scope rule holds whatever the backends are: no combination can help.
  // So does one from a rule that wants the backend named on the command line (backend_explicit:
  // false, a release whose checks run before it picks its default): an explicit plan that works
  // is what the engine asks for, not a miss.
  bool request_level_failure(const Selection& s) const {
    const auto& request_rules = m_.rules_in(RuleScope::request);
    const auto& backend_rules = m_.rules_in(RuleScope::backend);
    return std::any_of(s.errors.begin(), s.errors.end(), [&](const Finding& f) {
      return std::any_of(request_rules.begin(), request_rules.end(), [&](const Rule* rule) { return &rule->info == f.rule; }) ||
             std::any_of(backend_rules.begin(), backend_rules.end(), [&](const Rule* rule) {
               return &rule->info == f.rule && (rule->when.uses() & Condition::f_backend_explicit) && !rule->when.backend_explicit;
             });
    });
  }

  // Backends of a slot that have a cell for this kind and platform covering a phase.
  std::vector<BackendId> candidates(SlotId s, int phase, const Request& r) const {
    std::vector<BackendId> out;
    for (BackendId b = 0; b < m_.backends().size(); ++b) {
      if (m_.backend(b).slot != s) continue;
      const Cell* c = m_.cell_for(b, r.model.kind, r.device.platform, r.device.compute_capability);
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
  void search(const Request& r, const Case& c, const Selection& automatic) {
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
    Request e = r;  // every combination sets every axis
    while (true) {
      for (std::size_t i = 0; i < axes.size(); ++i)
        set_choice(e, m_, axes[i].slot, axes[i].phase, m_.backend(axes[i].options[at[i]]).name);
      auto s = run_select(e, c, false);
      if (s && s->ok()) {
        ++report_.missed;
        problem(LintProblemKind::missed,
                fmt::format("no automatic plan ({}), yet explicit {} is valid", error_summary(automatic), plan_summary(*s)),
                c, [&] { return explicit_args(m_, e); });
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
  void probe(const Request& r, const Case& c) {
    for (auto& h : hopeless_) h = {false, false};
    Request e = r;
    for (SlotId s : slots_of(r)) {
      const BackendChoice& given = *r.choice_for(m_.slot(s).name);
      BackendChoice& choice = *choice_of(e, m_.slot(s).name);
      for (BackendId b = 0; b < m_.backends().size(); ++b) {
        if (m_.backend(b).slot != s) continue;
        const Cell* cell = m_.cell_for(b, r.model.kind, r.device.platform, r.device.compute_capability);
        if (!cell) continue;
        choice = given;  // only this backend is explicit
        for (int p = 0; p < kPhaseCount; ++p)
          if (cell->phases.contains(static_cast<Phase>(p))) set_choice(e, m_, s, p, m_.backend(b).name);
        auto sel = run_select(e, c, false);
        if (!sel) continue;
        for (const Finding& f : sel->errors) {
          if (f.backend != b || !fixed_by_request(f.rule)) continue;
          for (int p = 0; p < kPhaseCount; ++p)
            if (f.phase < 0 || f.phase == p) hopeless_[b][static_cast<std::size_t>(p)] = true;
        }
      }
      choice = given;
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

  bool unfired_plan_rules() const {
    return std::any_of(plan_rules_.begin(), plan_rules_.end(), [&](std::size_t i) { return !tracked_[i].fired; });
  }

  // The hybrid pass on one configuration: false when it is not one the pass looks at.
  bool hybrid_case(const Request& r, const Case& c) {
    if (!m_.slot(0).kinds.contains(r.model.kind)) return false;
    const auto prefill = candidates(0, 0, r), decode = candidates(0, 1, r);
    if (prefill.size() + decode.size() <= 2) return false;  // no pair of two backends
    rejections_.new_configuration();
    // The main sweep probed this configuration already: the same selections, so the same rules fired
    // and the same backends are hopeless. Count them as one thread does, without running them again.
    if (!probes_ || !probes_->replay(c.position, hopeless_, report_.selections)) probe(r, c);
    Request e = r;  // every pair sets both phases
    for (BackendId p : prefill)
      for (BackendId d : decode) {
        if (p == d || hopeless_[p][0] || hopeless_[d][1]) continue;
        set_choice(e, m_, 0, 0, m_.backend(p).name);
        set_choice(e, m_, 0, 1, m_.backend(d).name);
        run_select(e, c, false);
      }
    return true;
  }

  // Plan rules judge the attention backends of both phases together: for those that have not fired
  // yet, every explicit (prefill, decode) pair of the attention slot, until they all have. Pairs with
  // a backend its cell already rejects are skipped: a rule that fires only there is redundant.
  //
  // On several threads, parts sweep chunks of the space in order, each noting after which
  // configuration it fired plan rules; where the space in order first has them all is where one thread
  // stops, and the report takes the parts up to there (the last one swept again up to that configuration).
  void hybrid_pass(const std::vector<LintDevice>& devices, const std::vector<LintModel>& models, std::size_t total,
                   std::size_t threads) {
    if (m_.slots().empty() || !unfired_plan_rules()) return;
    if (threads <= 1) {
      for_each_case(devices, models, kAll, [&](const Request& r, const Case& c) {
        return !hybrid_case(r, c) || unfired_plan_rules();
      });
      return;
    }
    // Chunks grow from small (the pass may stop after a few configurations) to a share of the space.
    std::vector<Range> chunks;
    const std::size_t largest = std::max<std::size_t>(16, total / (threads * 16));
    for (std::size_t begin = 0, size = 16; begin < total; begin += size, size = std::min(size * 2, largest))
      chunks.push_back({begin, std::min(total, begin + size)});
    struct Part {
      std::unique_ptr<Linter> linter;
      std::vector<std::pair<std::size_t, std::size_t>> firsts;  // (configuration, plan rule) first fired in this part
      bool done = false;
    };
    std::vector<bool> at_start(plan_rules_.size());
    for (std::size_t i = 0; i < plan_rules_.size(); ++i) at_start[i] = tracked_[plan_rules_[i]].fired;
    // The configurations [chunks[index].begin, end); with stop_when_all_fired, only until the part
    // (which starts from what fired before the pass) has fired every plan rule.
    auto sweep_part = [&](std::size_t index, std::size_t end, bool stop_when_all_fired) {
      Part out;
      out.linter = std::make_unique<Linter>(PartOf{}, *this);
      Linter& part = *out.linter;
      for (std::size_t i = 0; i < plan_rules_.size(); ++i) part.tracked_[plan_rules_[i]].fired = at_start[i];
      std::vector<bool> seen = at_start;
      part.for_each_case(devices, models, {chunks[index].begin, end}, [&](const Request& r, const Case& c) {
        if (!part.hybrid_case(r, c)) return true;
        for (std::size_t i = 0; i < plan_rules_.size(); ++i)
          if (!seen[i] && part.tracked_[plan_rules_[i]].fired) {
            seen[i] = true;
            out.firsts.emplace_back(c.position, i);
          }
        return !stop_when_all_fired || part.unfired_plan_rules();
      });
      return out;
    };

    std::vector<Part> parts(chunks.size());
    std::mutex mutex;
    std::vector<bool> merged = at_start;  // plan rules fired in the parts before `frontier`
    std::size_t frontier = 0;
    std::optional<std::pair<std::size_t, std::size_t>> stop;  // (part, configuration) where one thread stops
    std::atomic<std::size_t> next{0}, needed{chunks.size()};   // parts from `needed` on are not needed
    on_threads(threads, [&](std::size_t) {
      for (std::size_t i = next++; i < needed.load(); i = next++) {
        Part part = sweep_part(i, chunks[i].end, true);
        std::lock_guard<std::mutex> lock(mutex);
        parts[i] = std::move(part);
        parts[i].done = true;
        for (; !stop && frontier < parts.size() && parts[frontier].done; ++frontier)
          for (const auto& [position, rule] : parts[frontier].firsts) {
            merged[rule] = true;
            if (std::find(merged.begin(), merged.end(), false) == merged.end()) {
              stop = std::make_pair(frontier, position);
              needed = frontier + 1;
              break;
            }
          }
      }
    }, [&] { needed = 0; });
    for (std::size_t i = 0; i < parts.size(); ++i) {
      if (stop && i == stop->first) {
        merge(std::move(*sweep_part(i, stop->second + 1, false).linter));  // up to where one thread stops
        break;
      }
      merge(std::move(*parts[i].linter));
    }
  }

  template <class ReplayArgs>
  void problem(LintProblemKind kind, std::string detail, const Case& c, ReplayArgs&& replay_args) {
    auto key = std::make_pair(kind, std::move(detail));
    auto it = problem_index_.find(key);
    if (it != problem_index_.end()) {
      ++report_.problems[it->second].count;
      return;
    }
    problem_index_[key] = report_.problems.size();
    report_.problems.push_back({kind, key.second, 1, c.args(), replay_args()});
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
  std::shared_ptr<const TrackedIndex> index_;  // shared by every part
  std::vector<std::size_t> plan_rules_;        // tracked indices of the plan rules
  std::map<std::pair<LintProblemKind, std::string>, std::size_t> problem_index_;
  std::vector<bool> chosen_auto_;
  std::vector<std::array<bool, kPhaseCount>> valid_;
  std::vector<std::array<bool, kPhaseCount>> hopeless_;  // per configuration, filled by probe()
  std::shared_ptr<ProbeRecords> probes_;                 // shared by every part (each writes its own configurations)
  detail::RejectionRules rejections_;
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
