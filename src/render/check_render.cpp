// Rendering `attnsel check` results: text for people, JSON for machines, GitHub workflow commands
// for annotations on the offending line. The data (CommandCheck) is built first, in check.cpp.
#include <algorithm>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <sstream>
#include <unordered_set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attnsel/check.hpp"
#include "attnsel/fix.hpp"
#include "attnsel/encode.hpp"
#include "attnsel/rules.hpp"
#include "attnsel/suggest.hpp"
#include "attnsel/version.hpp"
#include "core/json_text.hpp"
#include "render/check_common.hpp"
#include "render/selection_json.hpp"
#include "render/text_util.hpp"

namespace attnsel {
namespace {

using json = nlohmann::json;
using detail::command_text;
using detail::Finding;
using detail::findings_of;
using detail::for_each_command;
using detail::located_message;
using detail::md_cell;
using detail::md_code;
using detail::place_of;
using detail::quoted;
using detail::SkippedPlace;
using detail::summary_json;
using detail::Tally;

struct Style {
  bool on = false;
  std::string wrap(std::string_view code, std::string_view s) const {
    return on ? fmt::format("\033[{}m{}\033[0m", code, s) : std::string(s);
  }
  std::string bold(std::string_view s) const { return wrap("1", s); }
  std::string dim(std::string_view s) const { return wrap("2", s); }
  std::string red(std::string_view s) const { return wrap("31", s); }
  std::string green(std::string_view s) const { return wrap("32", s); }
  std::string yellow(std::string_view s) const { return wrap("33", s); }
};

// The engine a command was judged as, by name ("SGLang", "vLLM").
std::string engine_title(const CommandCheck& c) {
  if (c.selection) return c.selection->matrix->info().title;
  if (auto profile = builtin_profile(c.command.engine.empty() ? "sglang" : c.command.engine)) return (*profile)->title;
  return "the engine";
}

// Shortened to a line a terminal shows whole, cut at a word.
std::string shortened(const std::string& s, std::size_t width = 110) {
  if (s.size() <= width) return s;
  std::size_t cut = s.rfind(' ', width);
  if (cut == std::string::npos || cut < width / 2) cut = width;
  return s.substr(0, cut) + " …";
}

std::string where(const LaunchCommand& cmd, int line) {
  if (cmd.file.empty()) return "";
  return line > 0 ? fmt::format("{}:{}", cmd.file, line) : cmd.file;
}

std::string device_text(const DeviceInfo& d) {
  std::string out = detail::describe_gpu(d);
  if (d.platform == Platform::cuda) {
    if (d.cuda) out += fmt::format(" · CUDA {}{}", to_string(*d.cuda), d.cuda_assumed ? " (assumed; pass --cuda X.Y)" : "");
  } else {
    out += fmt::format(" · platform {}", name_of(d.platform));
  }
  return out;
}

std::string verdict_text(Verdict v, const Style& st) {
  switch (v) {
    case Verdict::clean: return st.green("✓ clean");
    case Verdict::warning: return st.yellow("! warning");
    case Verdict::error: return st.red("✗ error");
  }
  return "";
}

// What the engine would run: one phrase per slot, then the page size and the KV cache.
std::string plan_text(const Selection& s) {
  std::vector<std::string> parts;
  auto choice = [&](const PhaseChoice& c) {
    if (c.backend == kNoBackend) return std::string("none");
    if (c.origin == ChoiceOrigin::rewritten && c.requested != kNoBackend && c.requested != c.backend)
      return fmt::format("{} ({} replaces {})", s.name(c.backend), s.matrix->info().title, s.name(c.requested));
    return s.name(c.backend);
  };
  for (const auto& sp : s.slots) {
    const Slot& slot = s.matrix->slot(sp.slot);
    const std::string pre = choice(sp.phase[0]), dec = choice(sp.phase[1]);
    if (pre == dec) parts.push_back(fmt::format("{} {}", slot.title, pre));
    else parts.push_back(fmt::format("{} {} (prefill) + {} (decode)", slot.title, pre, dec));
  }
  if (s.matrix->info().paged_kv_cache) {  // diffusion has no paged KV cache
    std::string page = fmt::format("page size {}", s.page.page_size);
    if (s.page.origin == PageOrigin::sglang_rewrite) page += " (set by " + s.matrix->info().title + ")";
    else if (s.page.origin == PageOrigin::planned) page += " (chosen by attnsel)";
    parts.push_back(page);
    parts.push_back(fmt::format("KV cache {}", name_of(s.kv_cache_dtype)));
  }
  if (s.request.speculative_topk > 0) parts.push_back(fmt::format("EAGLE topk {}", s.request.speculative_topk));
  if (!s.radix_cache) parts.emplace_back("radix cache off");
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : " · ") + p;
  return out;
}

std::string join_words(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

json diagnostic_json(const CheckDiagnostic& d) {
  json j = {{"rule", d.diagnostic.rule},
            {"severity", std::string(name_of(d.diagnostic.severity))},
            {"message", d.diagnostic.message},
            {"source", d.diagnostic.source},
            {"flag", d.flag.empty() ? json(nullptr) : json(d.flag)},
            {"value", d.flag.empty() ? json(nullptr) : json(d.value)},
            {"line", d.line > 0 ? json(d.line) : json(nullptr)},
            {"column", d.column > 0 ? json(d.column) : json(nullptr)},
            {"help_uri", rule_help_uri(d.diagnostic.rule)}};
  if (!d.diagnostic.backend.empty()) j["backend"] = d.diagnostic.backend;
  if (!d.diagnostic.phase.empty()) j["phase"] = d.diagnostic.phase;
  return j;
}

json suppressed_json(const SuppressedFinding& s) {
  json j = diagnostic_json(s.finding);
  j["suppression"] = {{"kind", s.suppression.kind == Suppression::Kind::in_source ? "inSource" : "external"},
                      {"by", s.suppression.by},
                      {"pattern", s.suppression.pattern.empty() ? json(nullptr) : json(s.suppression.pattern)}};
  return j;
}

// The object render_json would give, for a command the engine would reject before selecting.
json unplanned_json(const CommandCheck& c) {
  const DeviceInfo& d = c.target.device;
  const ModelTraits& m = c.model;
  return {{"ok", false},
          {"device",
           {{"platform", std::string(name_of(d.platform))},
            {"arch", d.arch},
            {"name", d.name},
            {"compute_capability", d.compute_capability ? json(to_string(*d.compute_capability)) : json(nullptr)},
            {"cuda", d.cuda ? json(to_string(*d.cuda)) : json(nullptr)},
            {"cuda_assumed", d.cuda_assumed},
            {"origin", d.origin}}},
          {"model",
           {{"id", m.id},
            {"kind", std::string(name_of(m.kind))},
            {"family", m.family},
            {"architecture", m.architecture},
            {"sliding_window", m.sliding_window},
            {"multimodal", m.multimodal},
            {"attention_sinks", m.attention_sinks},
            {"origin", m.origin}}},
          {"plan", nullptr},
          {"errors", json::array()},
          {"warnings", json::array()},
          {"notes", json::array()},
          {"rejected", json::array()},
          {"alternatives", json::array()}};
}

}  // namespace

namespace {

// Workflow-command text: the characters the runner decodes (%XX) percent-encoded, everything
// between them through the github encoder (controls, bidi, `::`, `##[` shown).
std::string github_escape(std::string_view s, bool property) {
  auto special = [&](char c) { return c == '%' || c == '\r' || c == '\n' || (property && (c == ':' || c == ',')); };
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    if (special(s[i])) {
      const char c = s[i++];
      out += c == '%' ? "%25" : c == '\r' ? "%0D" : c == '\n' ? "%0A" : c == ':' ? "%3A" : "%2C";
      continue;
    }
    std::size_t j = i;
    while (j < s.size() && !special(s[j])) ++j;
    out += encode_value(s.substr(i, j - i), OutputChannel::github);
    i = j;
  }
  return out;
}

}  // namespace

std::string github_escape_data(std::string_view s) { return github_escape(s, false); }

std::string github_escape_property(std::string_view s) { return github_escape(s, true); }

namespace {

// A value from input on one line of text: newlines, controls, `::` and `##[` shown.
std::string one_line(std::string_view s) { return encode_value(s, OutputChannel::terminal); }

// The text of one command's checks (one per target, all of the same command). `quiet`: only the
// targets that fail and the findings that make them fail; "" when none does.
std::string text_block(const CommandCheck* begin, const CommandCheck* end, const Style& st, std::size_t nth,
                       bool quiet = false, bool strict = false, bool show_suppressed = false) {
  if (quiet && std::none_of(begin, end, [&](const CommandCheck& c) { return c.fails(strict); })) return "";
  auto shown = [&](const CheckDiagnostic& d) {
    const Severity sev = d.diagnostic.severity;
    return !quiet || sev == Severity::error || (strict && sev == Severity::warning);
  };
  std::string out;
  std::size_t width = 0;
  for (const CommandCheck* c = begin; c != end; ++c) width = std::max(width, c->target.label.size());
  auto line_of = [&](const LaunchCommand& cmd, const CheckDiagnostic& d, std::string_view indent) {
    const Severity sev = d.diagnostic.severity;
    const std::string mark = sev == Severity::error ? st.red("✗") : sev == Severity::warning ? st.yellow("!") : st.dim("·");
    const std::string at = one_line(where(cmd, d.line));
    return fmt::format("{}{} {}{}  {}\n", indent, mark, at.empty() ? "" : at + "  ", one_line(located_message(d)),
                       st.dim(fmt::format("[{}]", one_line(d.diagnostic.rule))));
  };
  const LaunchCommand& cmd = begin->command;
  // What the check found in the command whatever the GPU, once; then each GPU. Each target's
  // findings are looked up in a set: a command with 50,000 findings stays linear.
  auto identity = [](const CheckDiagnostic& d) {
    return fmt::format("{}\n{}\n{}", d.diagnostic.rule, d.line, d.diagnostic.message);
  };
  std::vector<std::unordered_set<std::string>> found_on(static_cast<std::size_t>(end - begin));
  for (const CommandCheck* c = begin; c != end; ++c)
    for (const CheckDiagnostic& e : c->findings) found_on[static_cast<std::size_t>(c - begin)].insert(identity(e));
  auto everywhere = [&](const CheckDiagnostic& d) {
    const std::string id = identity(d);
    return std::all_of(found_on.begin(), found_on.end(), [&](const auto& set) { return set.count(id) > 0; });
  };
  if (nth > 1) out += "\n";
  const std::string at = one_line(where(cmd, cmd.line));
  out += st.bold(at.empty() ? "command" : at) + "  " + one_line(shortened(command_text(cmd))) + "\n";
  if (!cmd.branch.empty()) out += "  " + st.dim("as run on the branch where " + one_line(cmd.branch)) + "\n";
  for (const auto& d : begin->findings)
    if (everywhere(d) && shown(d)) out += line_of(cmd, d, "  ");
  for (const CommandCheck* it = begin; it != end; ++it) {
    const CommandCheck& c = *it;
    if (quiet && !c.fails(strict)) continue;
    const Verdict v = c.verdict();
    out += fmt::format("  {}{}  {}  {}\n", st.bold(one_line(c.target.label)), std::string(width - c.target.label.size(), ' '),
                       verdict_text(v, st), st.dim(device_text(c.target.device)));
    for (const auto& d : c.findings)
      if (!everywhere(d) && shown(d)) out += line_of(cmd, d, "    ");
    for (const auto* list : {&c.errors, &c.warnings, &c.notes})
      for (const auto& d : *list)
        if (shown(d)) out += line_of(cmd, d, "    ");
    if (show_suppressed)
      for (const SuppressedFinding& s : c.suppressed) {
          const std::string place = one_line(where(cmd, s.finding.line));
          out += fmt::format("    {} {}{}  {}\n", st.dim("-"), place.empty() ? "" : place + "  ",
                             st.dim(one_line(located_message(s.finding))),
                             st.dim(fmt::format("[{}] {}", one_line(s.finding.diagnostic.rule),
                                                one_line(detail::suppressed_by(s.suppression)))));
        }
    // The nearest command that passes here, after the verdict that it is needed.
    const std::string fix = c.fails(strict) && c.fix ? fmt::format("    {}  {}\n", st.bold("fix  "), one_line(describe_fix(*c.fix))) : "";
    if (v == Verdict::error && c.selection && c.selection->ok()) {
      // An error the engine starts with anyway (a setting it ignores): what it runs instead.
      out += fmt::format("    {}  {}\n", st.bold("runs "), one_line(plan_text(*c.selection)));
      out += fmt::format("    {}\n", st.red(engine_title(c) + " starts, but not as the file asks (see above)"));
      out += fix;
    } else if (v == Verdict::error) {
      out += fmt::format("    {}\n", st.red(engine_title(c) + " would not start as written"));
      out += fix;
    } else if (quiet) {
      out += fix;
      continue;  // a warning that fails under --strict: the plan is not what is asked for
    } else if (c.selection && c.selection->ok()) {
      out += fmt::format("    {}  {}\n", st.bold("runs "), one_line(plan_text(*c.selection)));
      out += fmt::format("    {}  {}\n", st.bold("flags"), one_line(join_words(c.selection->flags())));
      if (const auto env = c.selection->environment(); !env.empty())
        out += fmt::format("    {}  {}\n", st.bold("env  "), one_line(join_words(env)));
    } else if (!c.judged()) {
      out += fmt::format("    {}\n", st.yellow("not judged: attnsel has no data for a choice as written (see above)"));
    } else if (!c.selection) {
      out += fmt::format("    {}\n", st.dim("not planned (see above)"));
    } else if (!c.suppressed.empty()) {
      out += fmt::format("    {}\n", st.dim("not planned: the findings that stop it are suppressed"));
    }
  }
  // One command for every target, where the targets' fixes differ or only some targets fail.
  if (end - begin > 1 && std::any_of(begin, end, [&](const CommandCheck& c) { return c.fails(strict); })) {
    const auto& all = begin->fix_all_targets;
    const bool said = all && std::all_of(begin, end, [&](const CommandCheck& c) {
                        return !c.fails(strict) ? false : c.fix && c.fix->changes == all->changes;
                      });
    if (all && !said)
      out += fmt::format("  {}  {}\n", st.bold("fix on every target"), one_line(describe_fix(*all)));
    else if (!all && std::any_of(begin, end, [](const CommandCheck& c) { return c.fix.has_value(); }))
      out += fmt::format("  {}\n", st.dim("no change of the flags named above passes on every target"));
  }
  return detail::terminal_safe(out, st.on);  // scanned files may hold ESC and BEL
}

// {"changes": [{"flag", "from", "to" (null: dropped), "environment"}], "args", "summary"}, or null.
json fix_json(const std::optional<CommandFix>& fix) {
  if (!fix) return nullptr;
  json changes = json::array();
  for (const FlagChange& ch : fix->changes)
    changes.push_back({{"flag", ch.flag}, {"from", ch.from}, {"to", ch.drops() ? json(nullptr) : json(ch.to)},
                       {"environment", ch.environment}});
  return {{"changes", changes}, {"args", fix->command.args}, {"summary", describe_fix(*fix)}};
}

json command_json(const CommandCheck& c) {
  json j = c.selection ? detail::selection_json(*c.selection) : unplanned_json(c);
  // Each diagnostic render_json lists gains the line, column and flag of the same finding.
  auto add_locations = [&](const char* key, const std::vector<CheckDiagnostic>& located) {
    std::vector<bool> used(located.size(), false);
    for (json& entry : j[key]) {
      entry["line"] = nullptr;
      entry["column"] = nullptr;
      entry["flag"] = nullptr;
      entry["help_uri"] = rule_help_uri(entry.value("rule", ""));
      for (std::size_t i = 0; i < located.size(); ++i) {
        if (used[i] || entry.value("rule", "") != located[i].diagnostic.rule ||
            entry.value("message", "") != located[i].diagnostic.message)
          continue;
        used[i] = true;
        if (located[i].line > 0) entry["line"] = located[i].line;
        if (located[i].column > 0) entry["column"] = located[i].column;
        if (!located[i].flag.empty()) entry["flag"] = located[i].flag;
        break;
      }
    }
  };
  if (c.selection) {
    // The selection's lists hold every diagnostic: a suppressed one moves to "suppressed".
    for (const SuppressedFinding& s : c.suppressed) {
      const Severity sev = s.finding.diagnostic.severity;
      json& list = j[sev == Severity::error ? "errors" : sev == Severity::warning ? "warnings" : "notes"];
      for (auto it = list.begin(); it != list.end(); ++it)
        if (it->value("rule", "") == s.finding.diagnostic.rule && it->value("message", "") == s.finding.diagnostic.message) {
          list.erase(it);
          break;
        }
    }
    add_locations("errors", c.errors);
    add_locations("warnings", c.warnings);
    add_locations("notes", c.notes);
  }
  j["file"] = c.command.file.empty() ? json(nullptr) : json(c.command.file);
  j["line"] = c.command.line > 0 ? json(c.command.line) : json(nullptr);
  j["gpu"] = c.target.label;
  j["gpu_from"] = c.target.from.empty() ? json(nullptr) : json(c.target.from);
  j["launcher"] = c.command.launcher;
  j["command"] = command_text(c.command);
  j["branch"] = c.command.branch.empty() ? json(nullptr) : json(c.command.branch);
  j["args"] = c.command.args;
  j["verdict"] = std::string(name_of(c.verdict()));
  j["judged"] = c.judged();
  json findings = json::array();
  for (const auto& d : c.findings) findings.push_back(diagnostic_json(d));
  j["check_findings"] = findings;
  json suppressed = json::array();
  for (const SuppressedFinding& s : c.suppressed) suppressed.push_back(suppressed_json(s));
  j["suppressed"] = suppressed;
  j["passed_over"] = c.passed_over;
  j["fix"] = fix_json(c.fix);
  j["fix_all_targets"] = fix_json(c.fix_all_targets);
  return j;
}

json context_json(const FileContext& ctx) {
  auto hints = [](const std::vector<ContextHint>& hs) {
    json a = json::array();
    for (const ContextHint& h : hs) a.push_back({{"value", h.value}, {"line", h.line}, {"source", h.source}, {"text", h.text}});
    return a;
  };
  return {{"gpus", hints(ctx.gpus)}, {"releases", hints(ctx.releases)}, {"models", hints(ctx.models)}};
}

std::string_view annotation_kind(Severity s) {
  return s == Severity::error ? "error" : s == Severity::warning ? "warning" : "notice";
}

// "::error file=F,line=L,col=C,endLine=L,endColumn=E,title=attnsel RULE::message"
std::string annotation(const Finding& f) {
  std::vector<std::string> props;
  if (!f.file.empty()) {
    props.push_back("file=" + github_escape_property(f.file));
    if (f.line > 0) {
      props.push_back(fmt::format("line={}", f.line));
      if (f.column > 0) {
        props.push_back(fmt::format("col={}", f.column));
        if (f.end_column > f.column) props.push_back(fmt::format("endLine={},endColumn={}", f.line, f.end_column));
      }
    }
  }
  props.push_back("title=" + github_escape_property("attnsel " + f.rule));
  return fmt::format("::{} {}::{}\n", annotation_kind(f.severity), fmt::join(props, ","),
                     github_escape_data(f.targeted_message()));
}

}  // namespace

}  // namespace attnsel

namespace attnsel {
namespace {

// A value from a scanned file on one line of text or a log: shown, never obeyed.
std::string escape_control(std::string_view s) { return encode_value(s, OutputChannel::github); }

}  // namespace

std::string render_skipped_text(const std::vector<Error>& skipped) {
  std::string out;
  for (const Error& e : skipped) {
    out += fmt::format("{}: skipped: {} (this block was not checked; the rest of the file was)\n",
                       escape_control(e.where), escape_control(e.message));
  }
  return out;
}

std::string render_skipped_github(const std::vector<Error>& skipped) {
  std::string out;
  for (const Error& e : skipped) {
    const SkippedPlace p = place_of(e.where);
    std::string props = "file=" + github_escape_property(p.file);
    if (p.line > 0) props += ",line=" + std::to_string(p.line);
    if (p.column > 0) props += ",col=" + std::to_string(p.column);
    props += ",title=" + github_escape_property("attnsel skipped block");
    out += "::warning " + props + "::" + github_escape_data(e.message + " (this block was not checked)") + "\n";
  }
  return out;
}

namespace {

json skipped_json(const Error& e) {
  const SkippedPlace p = place_of(e.where);
  json j;
  j["file"] = p.file;
  j["line"] = p.line > 0 ? json(p.line) : json(nullptr);
  j["column"] = p.column > 0 ? json(p.column) : json(nullptr);
  j["message"] = e.message;
  return j;
}

// Text: each command's block as it comes, the summary line at the end.
class TextWriter final : public CheckWriter {
 public:
  TextWriter(std::ostream& out, const CheckWriterOptions& o)
      : out_(out), style_{o.render.color}, quiet_(o.quiet), show_suppressed_(o.show_suppressed) {
    tally_.strict = o.strict;
  }
  void command(const std::vector<CommandCheck>& checks, const FileContext*) override {
    for_each_command(checks, [&](const CommandCheck* b, const CommandCheck* e) {
      tally_.add(b, e, findings_of(b, e));
      const std::string block = text_block(b, e, style_, blocks_ + 1, quiet_, tally_.strict, show_suppressed_);
      if (block.empty()) return;
      ++blocks_;
      out_ << block;
    });
  }
  void skipped(const std::vector<Error>& blocks) override {
    skipped_ += render_skipped_text(blocks);
    tally_.skipped += blocks.size();
  }
  void file_findings(const std::vector<FileFinding>& findings) override {
    std::vector<Finding> all;
    for (const FileFinding& ff : findings) all.push_back(detail::file_finding(ff));
    tally_.add_file(all);
    for (const Finding& f : all) {
      if (f.suppression ? !show_suppressed_ : quiet_ && !f.fails(tally_.strict)) continue;
      skipped_ += fmt::format("{}{}: {} [{}]{}\n", detail::concise_place(f.file, f.line, f.column),
                              detail::severity_word(f.severity), escape_control(f.message), escape_control(f.rule),
                              f.suppression ? " " + escape_control(detail::suppressed_by(*f.suppression)) : "");
    }
  }
  void finish(const CheckInputs&) override {
    // Quiet: the totals only when something fails (a passing check prints nothing).
    if (tally_.commands > 0 && (!quiet_ || tally_.failing > 0 || tally_.file_failing > 0)) {
      std::string line = tally_.commands_line();
      if (tally_.suppressed > 0)
        line += fmt::format("; {} finding{} suppressed{}", tally_.suppressed, tally_.suppressed == 1 ? "" : "s",
                            show_suppressed_ ? "" : " (--verbose shows them)");
      out_ << "\n" << one_line(line) << "\n";
    }
    out_ << skipped_;
    out_.flush();
  }

 private:
  std::ostream& out_;
  Style style_;
  bool quiet_;
  bool show_suppressed_;
  std::size_t blocks_ = 0;  // command blocks written
  Tally tally_;
  std::string skipped_;  // after the summary, as before streaming: a few lines per file at most
};

// JSON: one object. Its header is written first, then "results" one element at a time as commands
// are judged (their number never sits in memory), then "skipped", "summary" and "ok".
class JsonWriter final : public CheckWriter {
 public:
  JsonWriter(std::ostream& out, const CheckWriterOptions& o) : out_(out), json_(out, o.indent) {
    tally_.strict = o.strict;
    json_.open_object();
    json_.member("schema_version", kJsonSchemaVersion);
    json_.member("attnsel_version", version());
    json_.member("kind", "check");
    json_.open_member_array("results");
  }
  void command(const std::vector<CommandCheck>& checks, const FileContext* context) override {
    for_each_command(checks, [&](const CommandCheck* b, const CommandCheck* e) { tally_.add(b, e, findings_of(b, e)); });
    for (const CommandCheck& c : checks) {
      json j = command_json(c);
      if (context != nullptr && !context->empty() && !c.command.file.empty()) j["file_context"] = context_json(*context);
      json_.element(j);
    }
  }
  void skipped(const std::vector<Error>& blocks) override {
    for (const Error& e : blocks) skipped_.push_back(skipped_json(e));
    tally_.skipped += blocks.size();
  }
  void file_findings(const std::vector<FileFinding>& findings) override {
    std::vector<Finding> all;
    for (const FileFinding& ff : findings) {
      all.push_back(detail::file_finding(ff));
      json j = diagnostic_json(ff.finding);
      j["file"] = ff.file;
      if (ff.suppression)
        j["suppression"] = suppressed_json(SuppressedFinding{ff.finding, *ff.suppression})["suppression"];
      file_findings_.push_back(std::move(j));
    }
    tally_.add_file(all);
  }
  void finish(const CheckInputs& inputs) override {
    json_.close();  // results
    json_.open_member_array("skipped");
    for (const json& s : skipped_) json_.element(s);
    json_.close();
    json_.open_member_array("file_findings");
    for (const json& f : file_findings_) json_.element(f);
    json_.close();
    json_.member("summary", summary_json(tally_, inputs));
    json_.member("ok", tally_.ok(inputs));
    json_.close();
    out_.flush();
  }

 private:
  std::ostream& out_;
  detail::JsonStream json_;
  Tally tally_;
  std::vector<json> skipped_;  // after the results: a few per file at most
  std::vector<json> file_findings_;  // likewise (capped per file: suppress.hpp)
};

// Lines that are attnsel's own workflow commands (their data escaped), each let through as one.
void write_commands(std::ostream& out, std::string_view lines) {
  for (std::size_t i = 0; i < lines.size();) {
    std::size_t nl = lines.find('\n', i);
    nl = nl == std::string_view::npos ? lines.size() : nl + 1;
    allow_workflow_command(out);
    out << lines.substr(i, nl - i);
    i = nl;
  }
}

// Workflow commands as findings come. GitHub shows 10 annotations of each kind per step: notes
// past the ninth are plain log lines, so that the closing notice with the totals is always shown.
class GithubWriter final : public CheckWriter {
 public:
  GithubWriter(std::ostream& out, const CheckWriterOptions& o) : out_(out), step_summary_(o.step_summary) {
    tally_.strict = o.strict;
  }
  void command(const std::vector<CommandCheck>& checks, const FileContext*) override {
    for_each_command(checks, [&](const CommandCheck* b, const CommandCheck* e) {
      const std::vector<Finding> findings = findings_of(b, e);
      tally_.add(b, e, findings);
      for (const Finding& f : findings) {
        if (f.severity == Severity::info && notices_shown_ + 1 >= kGithubAnnotationsPerKind) {
          const std::string at = f.file.empty() ? "" : f.line > 0 ? fmt::format("{}:{}: ", f.file, f.line) : f.file + ": ";
          out_ << "attnsel note: " << escape_control(at + f.targeted_message()) << " [" << escape_control(f.rule) << "]\n";
          continue;
        }
        if (f.severity == Severity::info) ++notices_shown_;
        write_commands(out_, annotation(f));
      }
    });
  }
  void skipped(const std::vector<Error>& blocks) override {
    skipped_ += render_skipped_github(blocks);
    tally_.skipped += blocks.size();
  }
  void file_findings(const std::vector<FileFinding>& findings) override {
    std::vector<Finding> all;
    for (const FileFinding& ff : findings) all.push_back(detail::file_finding(ff));
    tally_.add_file(all);
    for (const Finding& f : all)
      if (!f.suppression) skipped_ += annotation(f);
  }
  void finish(const CheckInputs&) override {
    write_commands(out_, skipped_);
    if (tally_.commands > 0 || tally_.skipped > 0)
      out_ << "attnsel: " << escape_control(tally_.commands_line()) << "; " << tally_.findings_line() << "\n";
    const std::size_t warnings = tally_.warnings + tally_.skipped;
    if (tally_.errors > kGithubAnnotationsPerKind || warnings > kGithubAnnotationsPerKind ||
        tally_.notes + 1 > kGithubAnnotationsPerKind) {
      allow_workflow_command(out_);
      out_ << "::notice title=" << github_escape_property("attnsel: more findings than GitHub annotates") << "::"
           << github_escape_data(fmt::format(
                  "attnsel found {} in {} command{}; GitHub annotates at most {} errors, {} warnings and {} notices "
                  "per step, so some are only in the log. All of them: {}`attnsel check --format text`.",
                  tally_.findings_line(), tally_.commands, tally_.commands == 1 ? "" : "s", kGithubAnnotationsPerKind,
                  kGithubAnnotationsPerKind, kGithubAnnotationsPerKind,
                  step_summary_ ? "the job's step summary, or " : ""))
           << "\n";
    }
    out_.flush();
  }

 private:
  std::ostream& out_;
  bool step_summary_;
  Tally tally_;
  std::size_t notices_shown_ = 0;
  std::string skipped_;  // after the commands: a few per file at most
};

// ---- Markdown ----

std::string md_severity(Severity s) {
  return s == Severity::error ? "❌ error" : s == Severity::warning ? "⚠️ warning" : "ℹ️ note";
}

std::string md_verdict(const CommandCheck& c, bool strict) {
  const Verdict v = c.verdict();
  if (v == Verdict::error) return "❌ error";
  if (v == Verdict::warning) return c.fails(strict) ? "❌ warning (--strict)" : "⚠️ warning";
  return "✅ clean";
}

std::string md_where(const std::string& file, int line, int column) {
  if (file.empty()) return "command line";
  std::string at = file;
  if (line > 0) at += fmt::format(":{}", line);
  if (line > 0 && column > 0) at += fmt::format(":{}", column);
  return md_code(at);
}

// The report: a heading with the outcome, the totals, what could not be read, every finding, and
// every command's verdict per target. Rows are kept until finish() (the totals come first), up to
// max_bytes; past it a line says how many rows were left out.
class MarkdownWriter final : public CheckWriter {
 public:
  MarkdownWriter(std::ostream& out, const CheckWriterOptions& o) : out_(out), max_bytes_(o.max_bytes) {
    tally_.strict = o.strict;
  }
  void command(const std::vector<CommandCheck>& checks, const FileContext*) override {
    for_each_command(checks, [&](const CommandCheck* b, const CommandCheck* e) {
      const std::vector<Finding> findings = findings_of(b, e);
      tally_.add(b, e, findings);
      for (const Finding& f : findings)
        add_row(finding_rows_, omitted_findings_,
                fmt::format("| {} | {} | {} | {} | {} |\n", md_where(f.file, f.line, f.column),
                            md_cell(fmt::format("{}", fmt::join(f.gpus, ", "))), md_severity(f.severity),
                            md_code(f.rule), md_cell(f.message + f.fix_suffix())));
      std::string verdicts;
      for (const CommandCheck* c = b; c != e; ++c)
        verdicts += (verdicts.empty() ? "" : " · ") + md_cell(c->target.label, 60) + " " + md_verdict(*c, tally_.strict);
      const int outcome = Tally::outcome(b, e, tally_.strict);
      add_row(command_rows_, omitted_commands_,
              fmt::format("| {} | {} | {} | {} |\n", outcome == 2 ? "❌" : outcome == 1 ? "⚠️" : "✅",
                          md_where(b->command.file, b->command.line, 0), md_code(shortened(command_text(b->command))),
                          verdicts));
    });
  }
  void skipped(const std::vector<Error>& blocks) override {
    tally_.skipped += blocks.size();
    for (const Error& e : blocks) {
      const SkippedPlace p = place_of(e.where);
      add_row(finding_rows_, omitted_findings_,
              fmt::format("| {} | — | {} | {} | {} |\n", md_where(p.file, p.line, p.column), md_severity(Severity::warning),
                          md_code("check.skipped"), md_cell(e.message + " (this block was not checked)")));
    }
  }
  void file_findings(const std::vector<FileFinding>& findings) override {
    std::vector<Finding> all;
    for (const FileFinding& ff : findings) all.push_back(detail::file_finding(ff));
    tally_.add_file(all);
    for (const Finding& f : all)
      if (!f.suppression)
        add_row(finding_rows_, omitted_findings_,
                fmt::format("| {} | — | {} | {} | {} |\n", md_where(f.file, f.line, f.column), md_severity(f.severity),
                            md_code(f.rule), md_cell(f.message)));
  }
  void finish(const CheckInputs& in) override {
    std::string head;
    const bool ok = tally_.ok(in);
    head += fmt::format("## {} attnsel check: {}\n\n", ok ? "✅" : "❌",
                        tally_.commands == 0 ? std::string("no launch command checked")
                        : tally_.failing == 0 ? std::string("no command fails")
                                              : fmt::format("{} of {} command{} fail{}", tally_.failing, tally_.commands,
                                                            tally_.commands == 1 ? "" : "s",
                                                            tally_.failing == 1 ? "s" : ""));
    if (tally_.commands > 0)
      head += md_cell(tally_.commands_line(), 600) + (tally_.strict ? " (--strict: warnings fail)" : "") + ".\n";
    const std::size_t files = std::max(in.files, tally_.files.size());
    head += fmt::format("{} file{} read, {} with launch commands; {}.\n", files, files == 1 ? "" : "s",
                        std::max(in.files_with_commands, tally_.files.size()), tally_.findings_line());
    if (!in.problems.empty() || !in.warnings.empty()) {
      head += "\n**Not checked or not certain** (attnsel exits 2 on an input it cannot read):\n\n";
      std::size_t shown = 0;
      for (const auto* list : {&in.problems, &in.warnings})
        for (const std::string& p : *list)
          if (shown++ < kListed) head += "- " + md_cell(p, 300) + "\n";
      if (shown > kListed) head += fmt::format("- … and {} more, on standard error\n", shown - kListed);
    }
    out_ << head;
    if (!finding_rows_.empty() || omitted_findings_ > 0) {
      out_ << "\n### Findings\n\n| where | GPU | severity | rule | message |\n|---|---|---|---|---|\n" << finding_rows_;
      if (omitted_findings_ > 0) out_ << "\n" << omitted("finding", omitted_findings_) << "\n";
    }
    if (!command_rows_.empty() || omitted_commands_ > 0) {
      out_ << "\n### Commands\n\n| | where | command | verdict per GPU |\n|---|---|---|---|\n" << command_rows_;
      if (omitted_commands_ > 0) out_ << "\n" << omitted("command", omitted_commands_) << "\n";
    }
    out_.flush();
  }

 private:
  static constexpr std::size_t kListed = 5;            // input problems listed by name
  static constexpr std::size_t kReserved = 4 * 1024;   // the heading, totals, problems, table heads, cut lines

  void add_row(std::string& rows, std::size_t& omitted, std::string row) {
    const std::size_t budget = max_bytes_ > kReserved ? max_bytes_ - kReserved : 0;
    if (full_ || finding_rows_.size() + command_rows_.size() + row.size() > budget) {
      full_ = true;  // once a row is left out, every later one is too: the tables stay in order
      ++omitted;
      return;
    }
    rows += row;
  }
  std::string omitted(const char* what, std::size_t n) const {
    return fmt::format("*{} more {}{} not shown: this report is capped at {} bytes. `attnsel check --format text` "
                       "lists all of them.*",
                       n, what, n == 1 ? "" : "s", max_bytes_);
  }

  std::ostream& out_;
  std::size_t max_bytes_;
  Tally tally_;
  std::string finding_rows_, command_rows_;
  std::size_t omitted_findings_ = 0, omitted_commands_ = 0;
  bool full_ = false;
};

}  // namespace

const std::vector<std::string>& check_format_names() {
  static const std::vector<std::string> names = {"text", "json", "github", "markdown", "sarif", "concise", "gitlab"};
  return names;
}

std::string_view name_of(CheckFormat f) { return check_format_names()[static_cast<std::size_t>(f)]; }

Result<CheckFormat> parse_check_format(std::string_view name) {
  const std::vector<std::string>& names = check_format_names();
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<CheckFormat>(i);
  Error e;
  e.code = ErrorCode::unknown_name;
  e.where = "--format";
  e.message = fmt::format("unknown check format '{}' (choose one of: {})", name, fmt::join(names, ", "));
  e.choices = names;
  e.suggestion = closest_name(name, names);
  return e;
}

std::unique_ptr<CheckWriter> make_check_writer(CheckFormat format, std::ostream& out, const CheckWriterOptions& o) {
  switch (format) {
    case CheckFormat::json:
      return std::make_unique<JsonWriter>(out, o);
    case CheckFormat::github:
      return std::make_unique<GithubWriter>(out, o);
    case CheckFormat::markdown:
      return std::make_unique<MarkdownWriter>(out, o);
    case CheckFormat::sarif:
      return detail::make_sarif_writer(out, o);
    case CheckFormat::concise:
      return detail::make_concise_writer(out, o);
    case CheckFormat::gitlab:
      return detail::make_gitlab_writer(out, o);
    case CheckFormat::text:
      break;
  }
  return std::make_unique<TextWriter>(out, o);
}

std::unique_ptr<CheckWriter> make_check_writer(CheckFormat format, std::ostream& out, const RenderOptions& o,
                                               int indent) {
  CheckWriterOptions options;
  options.render = o;
  options.indent = indent;
  return make_check_writer(format, out, options);
}

std::string render_check_text(const std::vector<CommandCheck>& checks, const RenderOptions& o) {
  if (checks.empty()) return "no launch command found\n";
  std::ostringstream out;
  auto writer = make_check_writer(CheckFormat::text, out, o);
  writer->command(checks, nullptr);
  writer->finish();
  return out.str();
}

std::string render_check_json(const std::vector<CommandCheck>& checks, int indent) {
  return render_check_json(checks, {}, {}, indent);
}

std::string render_check_github(const std::vector<CommandCheck>& checks) {
  std::ostringstream out;
  auto writer = make_check_writer(CheckFormat::github, out);
  writer->command(checks, nullptr);
  writer->finish();
  return out.str();
}

std::string render_check_markdown(const std::vector<CommandCheck>& checks, const std::vector<Error>& skipped) {
  std::ostringstream out;
  auto writer = make_check_writer(CheckFormat::markdown, out);
  writer->command(checks, nullptr);
  writer->skipped(skipped);
  writer->finish();
  return out.str();
}

std::string render_check_json(const std::vector<CommandCheck>& checks, const std::vector<Error>& skipped,
                              const std::vector<std::pair<std::string, FileContext>>& contexts, int indent) {
  std::map<std::string, const FileContext*> by_file;
  for (const auto& [file, ctx] : contexts) by_file.emplace(file, &ctx);
  std::ostringstream out;
  auto writer = make_check_writer(CheckFormat::json, out, {}, indent);
  for_each_command(checks, [&](const CommandCheck* b, const CommandCheck* e) {
    auto it = by_file.find(b->command.file);
    writer->command(std::vector<CommandCheck>(b, e), it == by_file.end() ? nullptr : it->second);
  });
  writer->skipped(skipped);
  writer->finish();
  return out.str();
}

}  // namespace attnsel
