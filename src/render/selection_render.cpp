#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attnsel/render.hpp"
#include "core/json_text.hpp"
#include "render/envelope.hpp"
#include "render/selection_json.hpp"
#include "render/text_util.hpp"

namespace attnsel {
namespace {

using json = nlohmann::json;

struct Style {
  bool on = false;
  std::string bold(std::string_view s) const { return on ? fmt::format("\033[1m{}\033[0m", s) : std::string(s); }
  std::string dim(std::string_view s) const { return on ? fmt::format("\033[2m{}\033[0m", s) : std::string(s); }
  std::string green(std::string_view s) const { return on ? fmt::format("\033[32m{}\033[0m", s) : std::string(s); }
  std::string red(std::string_view s) const { return on ? fmt::format("\033[31m{}\033[0m", s) : std::string(s); }
  std::string yellow(std::string_view s) const { return on ? fmt::format("\033[33m{}\033[0m", s) : std::string(s); }
};

std::string origin_phrase(ChoiceOrigin o, const std::string& engine) {
  switch (o) {
    case ChoiceOrigin::explicit_flag: return "as requested";
    case ChoiceOrigin::sglang_auto: return engine + "'s automatic choice";
    case ChoiceOrigin::attnsel_auto: return "chosen by attnsel (" + engine + "'s own choice fails here)";
    case ChoiceOrigin::slot_default: return "the flag's default";
    case ChoiceOrigin::rewritten: return engine + "'s silent replacement";
  }
  return "";
}

std::string page_phrase(const PagePlan& p, const std::string& engine) {
  switch (p.origin) {
    case PageOrigin::requested: return "as requested";
    case PageOrigin::sglang_default: return engine + "'s default";
    case PageOrigin::sglang_rewrite:
      return p.requested ? fmt::format("{} changes the requested {} to this", engine, *p.requested)
                         : "set by " + engine + " for this backend";
    case PageOrigin::planned: return "chosen by attnsel: " + engine + " would not set it";
  }
  return "";
}

std::string device_line(const Selection& s) {
  const DeviceInfo& d = s.request.device;
  std::string line = detail::describe_gpu(d);
  if (d.platform == Platform::cuda) {
    if (d.cuda) line += fmt::format(" · CUDA {}", to_string(*d.cuda));
    if (d.cuda_assumed) line += " (assumed; pass --cuda X.Y)";
  } else {
    line += fmt::format(" · platform {}", name_of(d.platform));
  }
  if (!d.origin.empty()) line += fmt::format(" · from {}", d.origin);
  return line;
}

std::string model_line(const Selection& s) {
  const ModelTraits& m = s.request.model;
  if (s.matrix->info().any_model)
    return fmt::format("{} (the {} matrix does not depend on the model)", m.id.empty() ? "any" : m.id, s.matrix->info().engine);
  std::string line = m.id.empty() || m.id == name_of(m.kind) ? std::string(name_of(m.kind))
                                                               : fmt::format("{} → {}", m.id, name_of(m.kind));
  line += fmt::format(" ({})", detail::kind_title(m.kind));
  std::vector<std::string> traits;
  if (m.sliding_window) traits.emplace_back("sliding window");
  if (m.attention_sinks) traits.emplace_back("attention sinks");
  if (m.multimodal) traits.emplace_back("multimodal");
  if (!traits.empty()) line += fmt::format(", {}", fmt::join(traits, ", "));
  return line;
}

std::string backend_label(const Selection& s, BackendId b) {
  if (b == kNoBackend) return "none";
  const Backend& be = s.matrix->backend(b);
  return be.title == be.name ? be.name : fmt::format("{} ({})", be.name, be.title);
}

std::string shell_join(const std::vector<std::string>& args) {
  std::string out;
  for (const auto& a : args) {
    if (!out.empty()) out += ' ';
    out += a;
  }
  return out;
}

// A rule's message as this selection states it: the finding it raised fills the rule's
// placeholders ({from}, {to} ...); a rule that raised none (a selection entry) has no placeholders.
std::string stated(const Selection& s, const RuleInfo& r) {
  for (const auto* fs : {&s.errors, &s.warnings, &s.notes})
    for (const Finding& f : *fs)
      if (f.rule == &r) return s.describe(f).message;
  return r.message.empty() ? r.id : r.message;
}

void list_findings(std::string& out, const Selection& s, const std::vector<Finding>& fs, const std::string& mark) {
  for (const auto& d : s.describe(fs)) {
    out += fmt::format("  {} {}\n", mark, d.message);
    out += fmt::format("    rule {}{}\n", d.rule, d.source.empty() ? "" : fmt::format(" · {}", d.source));
  }
}

json diag_json(const Diagnostic& d) {
  json j = {{"rule", d.rule}, {"message", d.message}, {"severity", std::string(name_of(d.severity))}, {"source", d.source}};
  if (!d.backend.empty()) j["backend"] = d.backend;
  if (!d.phase.empty()) j["phase"] = d.phase;
  return j;
}

json diags_json(const Selection& s, const std::vector<Finding>& fs) {
  json arr = json::array();
  for (const auto& d : s.describe(fs)) arr.push_back(diag_json(d));
  return arr;
}

}  // namespace

std::string render_text(const Selection& s, const RenderOptions& o) {
  Style st{o.color};
  std::string out;
  out += fmt::format("{} {}\n", st.bold("GPU  "), device_line(s));
  out += fmt::format("{} {}\n\n", st.bold("Model"), model_line(s));

  out += st.bold(s.ok() ? "Plan" : "Plan (invalid)");
  out += s.ok() ? fmt::format("  {}\n", st.green("✓ valid")) : fmt::format("  {}\n", st.red("✗ will not run as asked"));
  for (const auto& sp : s.slots) {
    const Slot& slot = s.matrix->slot(sp.slot);
    const PhaseChoice& pre = sp.phase[0];
    const PhaseChoice& dec = sp.phase[1];
    if (pre.backend == dec.backend && pre.origin == dec.origin) {
      out += fmt::format("  {:<12} {:<34} {} · {}\n", slot.title, backend_label(s, pre.backend),
                         slot.phased ? "prefill + decode" : "every forward pass", origin_phrase(pre.origin, s.matrix->info().title));
    } else {
      out += fmt::format("  {:<12} {:<34} prefill · {}\n", slot.title, backend_label(s, pre.backend), origin_phrase(pre.origin, s.matrix->info().title));
      out += fmt::format("  {:<12} {:<34} decode · {}\n", "", backend_label(s, dec.backend), origin_phrase(dec.origin, s.matrix->info().title));
    }
  }
  if (!s.slots.empty() && s.matrix->info().paged_kv_cache) {
    std::vector<std::string> how;
    for (const auto& c : s.page.constraints) {
      if (c.support->mode != PageMode::fixed && c.support->mode != PageMode::multiple) continue;
      how.push_back(fmt::format("{} needs {}", s.name(c.backend), detail::describe_page_support(*c.support)));
    }
    std::sort(how.begin(), how.end());
    how.erase(std::unique(how.begin(), how.end()), how.end());
    out += fmt::format("  {:<12} {:<34} {}{}\n", "page size", s.page.page_size, page_phrase(s.page, s.matrix->info().title),
                       how.empty() ? "; any size works" : fmt::format("; {}", fmt::join(how, ", ")));
    std::string kv_how = s.kv_cache_dtype == KvCacheDtype::auto_ ? "the model's dtype" : "as requested";
    if (s.kv_cache_dtype != s.request.kv_cache_dtype)
      kv_how = s.request.kv_cache_dtype == KvCacheDtype::auto_
                   ? "resolved from auto"
                   : fmt::format("rewritten by {} from {}", s.matrix->info().title, name_of(s.request.kv_cache_dtype));
    out += fmt::format("  {:<12} {:<34} {}\n", "KV cache", name_of(s.kv_cache_dtype), kv_how);
    if (s.page.page_size == 1)
      out += fmt::format("  {:<12} token-level: every cached prefix token is reusable\n", "prefix cache");
    else
      out += fmt::format("  {:<12} whole pages only: prompts under {} tokens are never cached; up to {} trailing tokens of each "
                         "prompt are not reused\n",
                         "prefix cache", s.page.uncached_prompt_below(), s.page.max_unreusable_tokens());
    if (!s.radix_cache) out += fmt::format("  {:<12} disabled\n", "radix cache");
  }
  if (s.ok()) {
    out += fmt::format("\n{}\n  {}\n", st.bold("Launch flags"), shell_join(s.flags()));
    // Settings this release reads from the environment instead of a flag: before the command.
    for (const std::string& setting : s.environment()) out += fmt::format("  {}  (environment)\n", shell_join({setting}));
  }
  if (!s.errors.empty()) {
    out += fmt::format("\n{}\n", st.bold(st.red("Errors")));
    list_findings(out, s, s.errors, st.red("✗"));
  }
  if (!s.warnings.empty()) {
    out += fmt::format("\n{}\n", st.bold(st.yellow("Warnings")));
    list_findings(out, s, s.warnings, st.yellow("!"));
  }
  // Why: the selection entries that decided.
  std::vector<const RuleInfo*> why;
  for (const auto& t : s.trace)
    if ((t.kind == TraceStep::Kind::entry_matched || t.kind == TraceStep::Kind::rewrite) && t.rule &&
        std::find(why.begin(), why.end(), t.rule) == why.end())
      why.push_back(t.rule);
  if (!why.empty() || !s.notes.empty()) {
    out += fmt::format("\n{}\n", st.bold("Why"));
    for (const RuleInfo* r : why) {
      out += fmt::format("  • {}\n", stated(s, *r));
      out += st.dim(fmt::format("    rule {} · {}", r->id, r->source)) + "\n";
    }
    for (const auto& d : s.describe(s.notes)) {
      if (std::any_of(why.begin(), why.end(), [&](const RuleInfo* r) { return r->id == d.rule; })) continue;
      out += fmt::format("  • {}\n", d.message);
      out += st.dim(fmt::format("    rule {} · {}", d.rule, d.source)) + "\n";
    }
  }
  if (!s.alternatives.empty()) {
    std::vector<std::string> names;
    for (BackendId b : s.alternatives) names.push_back(s.name(b));
    out += fmt::format("\n{} {}\n", st.bold("Also valid:"), fmt::join(names, ", "));
  }
  if (!s.rejected.empty()) {
    // Backends for another kind of model or another platform are noise here: one line each.
    std::vector<std::string> other_kind, other_platform;
    std::string detailed;
    for (const auto& r : s.rejected) {
      if (r.reasons.size() == 1 && r.reasons[0].rule == &s.matrix->builtin(BuiltinRule::kind)) {
        other_kind.push_back(s.name(r.backend));
        continue;
      }
      if (r.reasons.size() == 1 && r.reasons[0].rule == &s.matrix->builtin(BuiltinRule::platform)) {
        std::vector<std::string> platforms;
        for (const auto& c : s.matrix->backend(r.backend).cells)
          for (int p = 0; p < kPlatformCount; ++p)
            if (c.platforms.contains(static_cast<Platform>(p)) &&
                std::find(platforms.begin(), platforms.end(), name_of(static_cast<Platform>(p))) == platforms.end())
              platforms.emplace_back(name_of(static_cast<Platform>(p)));
        other_platform.push_back(fmt::format("{} ({})", s.name(r.backend), fmt::join(platforms, ", ")));
        continue;
      }
      auto ds = s.describe(r.reasons);
      for (std::size_t i = 0; i < ds.size(); ++i) {
        std::string phase = ds[i].phase.empty() ? "" : fmt::format(" (in {})", ds[i].phase);
        detailed += fmt::format("  {:<22} {}{}\n", i == 0 ? s.name(r.backend) : "", ds[i].message, phase);
        detailed += st.dim(fmt::format("  {:<22} rule {}", "", ds[i].rule)) + "\n";
      }
    }
    out += fmt::format("\n{}\n", st.bold("Rejected"));
    out += detailed;
    if (!other_kind.empty())
      out += fmt::format("  {:<22} {}\n", fmt::format("not for {} models:", name_of(s.request.model.kind)), fmt::join(other_kind, ", "));
    if (!other_platform.empty())
      out += fmt::format("  {:<22} {}\n", "other platforms:", fmt::join(other_platform, ", "));
  }
  return detail::terminal_safe(out, o.color);  // names from argv and files reach this text
}

}  // namespace attnsel

namespace attnsel::detail {

json selection_json(const Selection& s) {
  json j;
  j["ok"] = s.ok();
  const DeviceInfo& d = s.request.device;
  j["device"] = {{"platform", std::string(name_of(d.platform))},
                 {"arch", d.arch},
                 {"name", d.name},
                 {"compute_capability", d.compute_capability ? json(to_string(*d.compute_capability)) : json(nullptr)},
                 {"cuda", d.cuda ? json(to_string(*d.cuda)) : json(nullptr)},
                 {"cuda_assumed", d.cuda_assumed},
                 {"origin", d.origin}};
  const ModelTraits& m = s.request.model;
  j["model"] = {{"id", m.id},           {"kind", std::string(name_of(m.kind))}, {"family", m.family},
                {"architecture", m.architecture}, {"sliding_window", m.sliding_window}, {"multimodal", m.multimodal},
                {"attention_sinks", m.attention_sinks}, {"origin", m.origin}};
  json plan = nullptr;
  if (!s.slots.empty()) {
    plan = json::object();
    BackendId pre = s.backend(Phase::prefill), dec = s.backend(Phase::decode);
    auto name_or_null = [&](BackendId b) { return b == kNoBackend ? json(nullptr) : json(s.name(b)); };
    plan["attention_backend"] = pre == dec ? name_or_null(pre) : json(nullptr);
    plan["prefill_backend"] = name_or_null(pre);
    plan["decode_backend"] = name_or_null(dec);
    plan["hybrid"] = pre != dec;
    plan["page_size"] = s.page.page_size;
    plan["kv_cache_dtype"] = std::string(name_of(s.kv_cache_dtype));
    plan["linear_attn_backend"] = nullptr;
    plan["sparse_backend"] = nullptr;
    json slots = json::array();
    for (const auto& sp : s.slots) {
      const Slot& slot = s.matrix->slot(sp.slot);
      json js = {{"slot", slot.name}};
      for (int p = 0; p < kPhaseCount; ++p) {
        const PhaseChoice& c = sp.phase[p];
        json jc = {{"backend", name_or_null(c.backend)}, {"origin", std::string(name_of(c.origin))}};
        if (c.decided_by) jc["rule"] = c.decided_by->id;
        if (c.requested != c.backend && c.requested != kNoBackend) jc["requested"] = s.name(c.requested);
        js[std::string(name_of(static_cast<Phase>(p)))] = jc;
      }
      slots.push_back(js);
      if (slot.name == "linear")
        plan["linear_attn_backend"] = {{"prefill", name_or_null(sp.phase[0].backend)}, {"decode", name_or_null(sp.phase[1].backend)}};
      if (slot.name == "sparse")
        plan["sparse_backend"] = {{"prefill", name_or_null(sp.phase[0].backend)}, {"decode", name_or_null(sp.phase[1].backend)}};
    }
    plan["slots"] = slots;
    json constraints = json::array();
    for (const auto& c : s.page.constraints) {
      json jc = {{"backend", s.name(c.backend)}, {"phase", std::string(name_of(c.phase))}};
      switch (c.support->mode) {
        case PageMode::any: jc["mode"] = "any"; break;
        case PageMode::emulated: jc["mode"] = "emulated"; break;
        case PageMode::fixed: jc["mode"] = "fixed"; jc["sizes"] = c.support->sizes; break;
        case PageMode::multiple: jc["mode"] = "multiple"; jc["multiple_of"] = c.support->multiple_of; break;
      }
      constraints.push_back(jc);
    }
    plan["page"] = {{"size", s.page.page_size},
                    {"requested", s.page.requested ? json(*s.page.requested) : json(nullptr)},
                    {"origin", std::string(name_of(s.page.origin))},
                    {"rule", s.page.rewrite_rule ? json(s.page.rewrite_rule->id) : json(nullptr)},
                    {"constraints", constraints},
                    {"prompts_never_cached_below", s.page.uncached_prompt_below()},
                    {"max_unreusable_tokens_per_prompt", s.page.max_unreusable_tokens()}};
    plan["radix_cache"] = s.radix_cache;
    plan["flags"] = s.flags();
    plan["environment"] = s.environment();
  }
  j["plan"] = plan;
  j["errors"] = diags_json(s, s.errors);
  j["warnings"] = diags_json(s, s.warnings);
  j["notes"] = diags_json(s, s.notes);
  json rejected = json::array();
  for (const auto& r : s.rejected) {
    json reasons = json::array();
    for (const auto& reason : s.describe(r.reasons)) reasons.push_back(diag_json(reason));
    rejected.push_back({{"backend", s.name(r.backend)}, {"slot", s.matrix->slot(s.matrix->backend(r.backend).slot).name}, {"reasons", reasons}});
  }
  j["rejected"] = rejected;
  json alternatives = json::array();
  for (BackendId b : s.alternatives) alternatives.push_back(s.name(b));
  j["alternatives"] = alternatives;
  j["matrix"] = {{"engine", s.matrix->info().engine}, {"version", s.matrix->info().version}, {"origin", s.matrix->info().origin}};
  return j;
}

}  // namespace attnsel::detail

namespace attnsel {
namespace {

std::string_view step_name(TraceStep::Kind k) {
  switch (k) {
    case TraceStep::Kind::request_rule: return "request_rule";
    case TraceStep::Kind::explicit_choice: return "explicit_choice";
    case TraceStep::Kind::entry_matched: return "entry_matched";
    case TraceStep::Kind::entry_failed: return "entry_failed";
    case TraceStep::Kind::fallback: return "fallback";
    case TraceStep::Kind::slot_default: return "slot_default";
    case TraceStep::Kind::rewrite: return "rewrite";
    case TraceStep::Kind::page: return "page";
    case TraceStep::Kind::plan_rule: return "plan_rule";
  }
  return "unknown";
}

// The decision step by step, as `attnsel explain` prints it: each step names its slot, phase,
// backend and the rule that decided, with the rule's message and source.
json trace_json(const Selection& s) {
  json steps = json::array();
  for (const TraceStep& t : s.trace) {
    json step = {{"step", step_name(t.kind)}};
    const bool slotted = t.kind >= TraceStep::Kind::explicit_choice && t.kind <= TraceStep::Kind::rewrite;
    step["slot"] = slotted ? json(s.matrix->slot(t.slot).name) : json(nullptr);
    step["phase"] = t.phase >= 0 ? json(std::string(name_of(static_cast<Phase>(t.phase)))) : json(nullptr);
    step["backend"] = t.backend == kNoBackend ? json(nullptr) : json(s.name(t.backend));
    step["rule"] = t.rule ? json(t.rule->id) : json(nullptr);
    step["message"] = t.rule ? json(t.rule->message) : json(nullptr);
    step["source"] = t.rule ? json(t.rule->source) : json(nullptr);
    steps.push_back(std::move(step));
  }
  return steps;
}

}  // namespace

std::string render_json(const Selection& s, int indent) {
  // Backend, model and matrix names come from argv and files: invalid UTF-8 is replaced, never thrown.
  return detail::json_text(detail::selection_json(s), indent);
}

std::string render_select_json(const std::vector<Selection>& plans, bool trace, int indent) {
  json body;
  bool ok = true, same = true;
  json errors = json::array(), warnings = json::array(), devices = json::array();
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const Selection& s = plans[i];
    ok = ok && s.ok();
    same = same && s.ok() == plans[0].ok() && s.flags() == plans[0].flags() && s.environment() == plans[0].environment();
    json device = detail::selection_json(s);
    for (const char* key : {"errors", "warnings"})
      for (json d : device[key]) {
        d["device"] = i;
        (std::string_view(key) == "errors" ? errors : warnings).push_back(std::move(d));
      }
    if (trace) device["trace"] = trace_json(s);
    devices.push_back(std::move(device));
  }
  body["ok"] = ok;
  body["same_plan"] = same;
  const bool common = !plans.empty() && same;
  body["plan"] = common ? devices[0]["plan"] : json(nullptr);
  body["flags"] = common && plans[0].ok() ? json(plans[0].flags()) : json(nullptr);
  body["environment"] = common && plans[0].ok() ? json(plans[0].environment()) : json(nullptr);
  body["errors"] = std::move(errors);
  body["warnings"] = std::move(warnings);
  body["devices"] = std::move(devices);
  return detail::envelope_text("select", std::move(body), indent);
}

std::string render_markdown(const Selection& s) {
  using detail::markdown_cell;
  std::string out = fmt::format("#### {} · {} · {}\n\n", markdown_cell(device_line(s)), markdown_cell(model_line(s)),
                                s.ok() ? "✅ valid plan" : "❌ will not run as asked");
  const std::string& engine = s.matrix->info().title;
  if (!s.slots.empty()) {
    out += "| | backend | phases | why |\n|---|---|---|---|\n";
    for (const auto& sp : s.slots) {
      const Slot& slot = s.matrix->slot(sp.slot);
      const PhaseChoice& pre = sp.phase[0];
      const PhaseChoice& dec = sp.phase[1];
      const auto row = [&](const std::string& title, const PhaseChoice& c, const char* phases) {
        out += fmt::format("| {} | `{}` | {} | {} |\n", markdown_cell(title), markdown_cell(backend_label(s, c.backend)), phases,
                           markdown_cell(origin_phrase(c.origin, engine)));
      };
      if (pre.backend == dec.backend && pre.origin == dec.origin) {
        row(slot.title, pre, slot.phased ? "prefill + decode" : "every forward pass");
      } else {
        row(slot.title, pre, "prefill");
        row("", dec, "decode");
      }
    }
    if (s.matrix->info().paged_kv_cache) {
      out += fmt::format("| page size | `{}` | | {} |\n", s.page.page_size, markdown_cell(page_phrase(s.page, engine)));
      out += fmt::format("| KV cache | `{}` | | |\n", name_of(s.kv_cache_dtype));
    }
    out += "\n";
  }
  if (s.ok()) out += fmt::format("Launch flags: `{}`\n\n", markdown_cell(shell_join(s.flags())));
  if (s.ok() && !s.environment().empty())
    out += fmt::format("Environment: `{}`\n\n", markdown_cell(shell_join(s.environment())));
  const auto findings = [&](const char* title, const std::vector<Finding>& fs) {
    if (fs.empty()) return;
    out += fmt::format("**{}**\n\n", title);
    for (const auto& d : s.describe(fs)) out += fmt::format("- {} (`{}`)\n", markdown_cell(d.message), markdown_cell(d.rule));
    out += "\n";
  };
  findings("Errors", s.errors);
  findings("Warnings", s.warnings);
  findings("Notes", s.notes);
  std::string rejected;
  std::size_t count = 0;
  for (const auto& r : s.rejected) {
    // Backends for another kind of model or another platform are noise in a review comment.
    if (r.reasons.size() == 1 && (r.reasons[0].rule == &s.matrix->builtin(BuiltinRule::kind) ||
                                  r.reasons[0].rule == &s.matrix->builtin(BuiltinRule::platform)))
      continue;
    ++count;
    for (const auto& d : s.describe(r.reasons))
      rejected += fmt::format("| `{}` | {} | `{}` |\n", markdown_cell(s.name(r.backend)), markdown_cell(d.message), markdown_cell(d.rule));
  }
  if (count > 0)
    out += fmt::format("<details><summary>Rejected ({})</summary>\n\n| backend | reason | rule |\n|---|---|---|\n{}\n</details>\n",
                       count, rejected);
  return out;
}

std::string render_explain(const Selection& s, const RenderOptions& o) {
  Style st{o.color};
  std::string out;
  int n = 0;
  auto step = [&](const std::string& title) { out += fmt::format("\n{} {}\n", st.bold(fmt::format("{}.", ++n)), st.bold(title)); };
  step("The device");
  out += fmt::format("   {}\n", device_line(s));
  step("The model");
  out += fmt::format("   {}\n   decided by: {}\n", model_line(s), s.request.model.origin.empty() ? "--model" : s.request.model.origin);
  step("The request");
  out += fmt::format("   KV cache {}, page size {}, speculative topk {}{}\n", name_of(s.request.kv_cache_dtype),
                     s.request.page_size ? std::to_string(*s.request.page_size) : "not given",
                     s.request.speculative_topk ? std::to_string(s.request.speculative_topk) : "none (no speculative decoding)",
                     s.request.deterministic ? ", deterministic inference" : "");
  for (const auto& t : s.trace)
    if (t.kind == TraceStep::Kind::request_rule)
      out += fmt::format("   → {} ({})\n", stated(s, *t.rule), st.dim("rule " + t.rule->id));

  SlotId current = 255;
  for (const auto& t : s.trace) {
    const std::string phase = t.phase >= 0 ? fmt::format(" for {}", name_of(static_cast<Phase>(t.phase))) : "";
    if ((t.kind >= TraceStep::Kind::explicit_choice && t.kind <= TraceStep::Kind::rewrite) && t.slot != current) {
      current = t.slot;
      step(fmt::format("The {} backend", s.matrix->slot(t.slot).title));
    }
    switch (t.kind) {
      case TraceStep::Kind::explicit_choice:
        out += fmt::format("   {} given explicitly{}\n", s.name(t.backend), phase);
        break;
      case TraceStep::Kind::entry_matched:
        out += fmt::format("   {} {} → {}: {}\n", st.green("✓"), t.rule->id, s.name(t.backend), t.rule->message);
        out += st.dim(fmt::format("     source: {}", t.rule->source)) + "\n";
        break;
      case TraceStep::Kind::entry_failed:
        out += fmt::format("   {} {} → {} matches this setup, but {} cannot run it (see rejected)\n", st.red("✗"), t.rule->id,
                           s.name(t.backend), s.name(t.backend));
        break;
      case TraceStep::Kind::fallback:
        out += fmt::format("   no selection rule gave a usable backend{}; the first usable one in the matrix is {}\n", phase,
                           s.name(t.backend));
        break;
      case TraceStep::Kind::slot_default:
        out += fmt::format("   no flag given{}: {} uses the default, {}\n", phase, s.matrix->info().title, s.name(t.backend));
        break;
      case TraceStep::Kind::rewrite:
        out += fmt::format("   {} silently runs {}{} instead: {}\n", s.matrix->info().title, s.name(t.backend), phase,
                           stated(s, *t.rule));
        break;
      default: break;
    }
  }
  step("The page size");
  out += fmt::format("   {} ({})\n", s.page.page_size, page_phrase(s.page, s.matrix->info().title));
  for (const auto& c : s.page.constraints)
    out += fmt::format("   - {} {}: {}\n", s.name(c.backend), name_of(c.phase), detail::describe_page_support(*c.support));
  if (s.page.rewrite_rule) out += fmt::format("   rule {}: {}\n", s.page.rewrite_rule->id, s.page.rewrite_rule->source);
  step("Checks on the whole plan");
  bool any = false;
  for (const auto& t : s.trace)
    if (t.kind == TraceStep::Kind::plan_rule) {
      out += fmt::format("   → {} ({})\n", stated(s, *t.rule), st.dim("rule " + t.rule->id));
      any = true;
    }
  if (!any) out += "   no plan-level rule fired\n";
  step("Result");
  out += "\n" + render_text(s, o);
  return detail::terminal_safe(out, o.color);
}

}  // namespace attnsel
