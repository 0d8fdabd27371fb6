// Rendering `attnsel check` results: text for people, JSON for machines, GitHub workflow commands
// for annotations on the offending line. The data (CommandCheck) is built first, in check.cpp.
#include <algorithm>
#include <map>
#include <memory>
#include <ostream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attnsel/check.hpp"
#include "core/json_text.hpp"
#include "render/text_util.hpp"

namespace attnsel {
namespace {

using json = nlohmann::json;

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

// An argument as a shell would need it written back.
std::string quoted(const std::string& a) {
  if (!a.empty() && a.find_first_of(" \t\n'\"\\;&|<>()*?[]#~") == std::string::npos) return a;
  std::string out = "'";
  for (char c : a) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string command_text(const LaunchCommand& cmd) {
  std::string out = cmd.launcher == "flags" ? "" : cmd.launcher;
  for (const auto& a : cmd.args) {
    if (!out.empty()) out += ' ';
    out += quoted(a);
  }
  return out;
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

// "--attention-backend trtllm_mla: message"
std::string located_message(const CheckDiagnostic& d) {
  if (d.flag.empty()) return d.diagnostic.message;
  if (d.value.empty()) return fmt::format("{}: {}", d.flag, d.diagnostic.message);
  return fmt::format("{} {}: {}", d.flag, quoted(d.value), d.diagnostic.message);
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
            {"line", d.line > 0 ? json(d.line) : json(nullptr)}};
  if (!d.diagnostic.backend.empty()) j["backend"] = d.diagnostic.backend;
  if (!d.diagnostic.phase.empty()) j["phase"] = d.diagnostic.phase;
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

std::string github_escape_data(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '%') out += "%25";
    else if (c == '\r') out += "%0D";
    else if (c == '\n') out += "%0A";
    else out += c;
  }
  return out;
}

std::string github_escape_property(std::string_view s) {
  std::string out;
  for (char c : github_escape_data(s)) {
    if (c == ':') out += "%3A";
    else if (c == ',') out += "%2C";
    else out += c;
  }
  return out;
}

namespace {

// What the text summary line counts, over every command written so far.
struct TextTally {
  std::size_t commands = 0, failing = 0, warned = 0, clean = 0;
  std::vector<std::string> gpus;
};

// The text of one command's checks (one per target, all of the same command).
std::string text_block(const CommandCheck* begin, const CommandCheck* end, const Style& st, TextTally& tally) {
  std::string out;
  std::size_t width = 0;
  for (const CommandCheck* c = begin; c != end; ++c) width = std::max(width, c->target.label.size());
  auto line_of = [&](const LaunchCommand& cmd, const CheckDiagnostic& d, std::string_view indent) {
    const Severity sev = d.diagnostic.severity;
    const std::string mark = sev == Severity::error ? st.red("✗") : sev == Severity::warning ? st.yellow("!") : st.dim("·");
    const std::string at = where(cmd, d.line);
    return fmt::format("{}{} {}{}  {}\n", indent, mark, at.empty() ? "" : at + "  ", located_message(d),
                       st.dim(fmt::format("[{}]", d.diagnostic.rule)));
  };
  auto same_finding = [](const CheckDiagnostic& a, const CheckDiagnostic& b) {
    return a.diagnostic.rule == b.diagnostic.rule && a.line == b.line && a.diagnostic.message == b.diagnostic.message;
  };
  const LaunchCommand& cmd = begin->command;
  // What the check found in the command whatever the GPU, once; then each GPU.
  auto everywhere = [&](const CheckDiagnostic& d) {
    for (const CommandCheck* c = begin; c != end; ++c)
      if (std::none_of(c->findings.begin(), c->findings.end(), [&](const CheckDiagnostic& e) { return same_finding(d, e); }))
        return false;
    return true;
  };
  if (++tally.commands > 1) out += "\n";
  const std::string at = where(cmd, cmd.line);
  out += st.bold(at.empty() ? "command" : at) + "  " + shortened(command_text(cmd)) + "\n";
  for (const auto& d : begin->findings)
    if (everywhere(d)) out += line_of(cmd, d, "  ");
  for (const CommandCheck* it = begin; it != end; ++it) {
    const CommandCheck& c = *it;
    if (std::find(tally.gpus.begin(), tally.gpus.end(), c.target.label) == tally.gpus.end())
      tally.gpus.push_back(c.target.label);
    const Verdict v = c.verdict();
    (v == Verdict::error ? tally.failing : v == Verdict::warning ? tally.warned : tally.clean) += 1;
    out += fmt::format("  {}{}  {}  {}\n", st.bold(c.target.label), std::string(width - c.target.label.size(), ' '),
                       verdict_text(v, st), st.dim(device_text(c.target.device)));
    for (const auto& d : c.findings)
      if (!everywhere(d)) out += line_of(cmd, d, "    ");
    for (const auto* list : {&c.errors, &c.warnings, &c.notes})
      for (const auto& d : *list) out += line_of(cmd, d, "    ");
    if (v == Verdict::error) {
      out += fmt::format("    {}\n", st.red(engine_title(c) + " would not start as written"));
    } else if (c.selection && c.selection->ok()) {
      out += fmt::format("    {}  {}\n", st.bold("runs "), plan_text(*c.selection));
      out += fmt::format("    {}  {}\n", st.bold("flags"), join_words(c.selection->flags()));
    } else if (!c.selection) {
      out += fmt::format("    {}\n", st.dim("not planned (see above)"));
    }
  }
  return detail::terminal_safe(out, st.on);  // scanned files may hold ESC and BEL
}

std::string text_summary(const TextTally& t) {
  return fmt::format("\n{} command{} checked for {}: {} failing, {} with warnings, {} clean\n", t.commands,
                     t.commands == 1 ? "" : "s", fmt::join(t.gpus, ", "), t.failing, t.warned, t.clean);
}

bool same_command(const LaunchCommand& a, const LaunchCommand& b) {
  return a.file == b.file && a.line == b.line && a.args == b.args && a.launcher == b.launcher;
}

// Calls `each(begin, end)` for every run of checks of one command.
template <class F>
void for_each_command(const std::vector<CommandCheck>& checks, F each) {
  for (std::size_t first = 0; first < checks.size();) {
    std::size_t last = first + 1;
    while (last < checks.size() && same_command(checks[last].command, checks[first].command)) ++last;
    each(checks.data() + first, checks.data() + last);
    first = last;
  }
}

json command_json(const CommandCheck& c) {
  json j = c.selection ? json::parse(render_json(*c.selection, -1)) : unplanned_json(c);
  // Each diagnostic render_json lists gains the line and flag of the same finding.
  auto add_locations = [&](const char* key, const std::vector<CheckDiagnostic>& located) {
    std::vector<bool> used(located.size(), false);
    for (json& entry : j[key]) {
      entry["line"] = nullptr;
      entry["flag"] = nullptr;
      for (std::size_t i = 0; i < located.size(); ++i) {
        if (used[i] || entry.value("rule", "") != located[i].diagnostic.rule ||
            entry.value("message", "") != located[i].diagnostic.message)
          continue;
        used[i] = true;
        if (located[i].line > 0) entry["line"] = located[i].line;
        if (!located[i].flag.empty()) entry["flag"] = located[i].flag;
        break;
      }
    }
  };
  if (c.selection) {
    add_locations("errors", c.errors);
    add_locations("warnings", c.warnings);
    add_locations("notes", c.notes);
  }
  j["file"] = c.command.file.empty() ? json(nullptr) : json(c.command.file);
  j["line"] = c.command.line > 0 ? json(c.command.line) : json(nullptr);
  j["gpu"] = c.target.label;
  j["launcher"] = c.command.launcher;
  j["command"] = command_text(c.command);
  j["args"] = c.command.args;
  j["verdict"] = std::string(name_of(c.verdict()));
  json findings = json::array();
  for (const auto& d : c.findings) findings.push_back(diagnostic_json(d));
  j["check_findings"] = findings;
  j["passed_over"] = c.passed_over;
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

// The annotations of one command's checks: one per distinct finding, with the targets it occurs on.
std::string github_block(const CommandCheck* begin, const CommandCheck* end) {
  struct Annotation {
    std::string kind;         // error, warning, notice
    std::string command_key;  // which command it belongs to
    std::string file, rule, message;
    int line = 0;
    std::vector<std::string> gpus;
  };
  std::vector<Annotation> annotations;
  std::map<std::string, std::size_t> index;               // an annotation's identity -> its place
  std::map<std::string, std::size_t> targets_of_command;  // how many targets each command was checked for
  auto command_key = [](const LaunchCommand& cmd) {
    return fmt::format("{}\n{}\n{}\n{}", cmd.file, cmd.line, cmd.launcher, join_words(cmd.args));
  };
  for (const CommandCheck* it = begin; it != end; ++it) {
    const CommandCheck& c = *it;
    const std::string key = command_key(c.command);
    ++targets_of_command[key];
    for (const CheckDiagnostic* d : c.all()) {
      const Severity sev = d->diagnostic.severity;
      const bool own = d->diagnostic.rule.rfind("check.", 0) == 0;
      if (sev == Severity::info && !own) continue;  // the engine's notes explain a plan; they are not findings
      const std::string kind = sev == Severity::error ? "error" : sev == Severity::warning ? "warning" : "notice";
      const std::string message = located_message(*d);
      const std::string identity = fmt::format("{}\n{}\n{}\n{}\n{}", kind, key, d->line, d->diagnostic.rule, message);
      auto [at, added] = index.emplace(identity, annotations.size());
      if (added) annotations.push_back({kind, key, c.command.file, d->diagnostic.rule, message, d->line, {}});
      Annotation& same = annotations[at->second];
      if (std::find(same.gpus.begin(), same.gpus.end(), c.target.label) == same.gpus.end())
        same.gpus.push_back(c.target.label);
    }
  }
  std::string out;
  for (const Annotation& a : annotations) {
    std::vector<std::string> props;
    if (!a.file.empty()) {
      props.push_back("file=" + github_escape_property(a.file));
      if (a.line > 0) props.push_back(fmt::format("line={}", a.line));
    }
    props.push_back("title=" + github_escape_property("attnsel " + a.rule));
    std::string message = a.message;
    if (a.gpus.size() < targets_of_command[a.command_key]) message = fmt::format("[{}] {}", fmt::join(a.gpus, ", "), message);
    out += fmt::format("::{} {}::{}\n", a.kind, fmt::join(props, ","), github_escape_data(message));
  }
  return out;
}

}  // namespace

}  // namespace attnsel

namespace attnsel {
namespace {

// "file:line:col" (the file may hold ':') -> file, line, column (0 when absent).
struct SkippedPlace {
  std::string file;
  int line = 0, column = 0;
};

// Control characters from a scanned file are shown, never sent to the terminal.
std::string escape_control(std::string_view s) {
  std::string out;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t') || u == 0x7f) {
      out += fmt::format("\\x{:02x}", u);
    } else {
      out += c;
    }
  }
  return out;
}

SkippedPlace place_of(const std::string& where) {
  SkippedPlace p{where, 0, 0};
  auto take_number = [&](int& out) {
    const std::size_t colon = p.file.rfind(':');
    if (colon == std::string::npos || colon + 1 >= p.file.size()) return false;
    const std::string digits = p.file.substr(colon + 1);
    if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9) return false;
    out = std::stoi(digits);
    p.file.resize(colon);
    return true;
  };
  int last = 0, before = 0;
  if (take_number(last)) {
    if (take_number(before)) {
      p.line = before;
      p.column = last;
    } else {
      p.line = last;
    }
  }
  return p;
}

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
  j["verdict"] = "skipped";
  j["file"] = p.file;
  j["line"] = p.line > 0 ? json(p.line) : json(nullptr);
  j["column"] = p.column > 0 ? json(p.column) : json(nullptr);
  j["message"] = e.message;
  return j;
}

// Text: each command's block as it comes, the summary line at the end.
class TextWriter final : public CheckWriter {
 public:
  TextWriter(std::ostream& out, const RenderOptions& o) : out_(out), style_{o.color} {}
  void command(const std::vector<CommandCheck>& checks, const FileContext*) override {
    for_each_command(checks, [&](const CommandCheck* b, const CommandCheck* e) { out_ << text_block(b, e, style_, tally_); });
  }
  void skipped(const std::vector<Error>& blocks) override { skipped_ += render_skipped_text(blocks); }
  void finish() override {
    if (tally_.commands > 0) out_ << text_summary(tally_);
    out_ << skipped_;
    out_.flush();
  }

 private:
  std::ostream& out_;
  Style style_;
  TextTally tally_;
  std::string skipped_;  // after the summary, as before streaming: a few lines per file at most
};

// JSON: one array, written element by element, so its size never sits in memory.
class JsonWriter final : public CheckWriter {
 public:
  JsonWriter(std::ostream& out, int indent) : out_(out), indent_(detail::clamp_indent(indent)) {}
  void command(const std::vector<CommandCheck>& checks, const FileContext* context) override {
    for (const CommandCheck& c : checks) {
      json j = command_json(c);
      if (context != nullptr && !context->empty() && !c.command.file.empty()) j["file_context"] = context_json(*context);
      element(j);
    }
  }
  void skipped(const std::vector<Error>& blocks) override {
    for (const Error& e : blocks) skipped_.push_back(skipped_json(e));
  }
  void finish() override {
    for (const json& j : skipped_) element(j);
    out_ << (count_ == 0 ? "[]" : indent_ < 0 ? "]" : "\n]");
    out_.flush();
  }

 private:
  // `[` before the first element, `,` between: the layout of json::dump(indent) for an array.
  void element(const json& j) {
    out_ << (count_++ == 0 ? "[" : ",");
    if (indent_ < 0) {
      out_ << detail::json_text(j, -1);
      return;
    }
    const std::string pad(static_cast<std::size_t>(indent_), ' ');
    const std::string text = detail::json_text(j, indent_);
    out_ << '\n' << pad;
    for (char ch : text) {
      out_ << ch;
      if (ch == '\n') out_ << pad;
    }
  }

  std::ostream& out_;
  int indent_;
  std::size_t count_ = 0;
  std::vector<json> skipped_;  // after the commands, as the array has always listed them
};

class GithubWriter final : public CheckWriter {
 public:
  explicit GithubWriter(std::ostream& out) : out_(out) {}
  void command(const std::vector<CommandCheck>& checks, const FileContext*) override {
    for_each_command(checks, [&](const CommandCheck* b, const CommandCheck* e) { out_ << github_block(b, e); });
  }
  void skipped(const std::vector<Error>& blocks) override { skipped_ += render_skipped_github(blocks); }
  void finish() override {
    out_ << skipped_;
    out_.flush();
  }

 private:
  std::ostream& out_;
  std::string skipped_;
};

}  // namespace

std::unique_ptr<CheckWriter> make_check_writer(CheckFormat format, std::ostream& out, const RenderOptions& o,
                                               int indent) {
  switch (format) {
    case CheckFormat::json:
      return std::make_unique<JsonWriter>(out, indent);
    case CheckFormat::github:
      return std::make_unique<GithubWriter>(out);
    case CheckFormat::text:
      break;
  }
  return std::make_unique<TextWriter>(out, o);
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

std::string render_check_json(const std::vector<CommandCheck>& checks, const std::vector<Error>& skipped,
                              const std::vector<std::pair<std::string, FileContext>>& contexts, int indent) {
  std::map<std::string, const FileContext*> by_file;
  for (const auto& [file, ctx] : contexts) by_file.emplace(file, &ctx);
  std::ostringstream out;
  auto writer = make_check_writer(CheckFormat::json, out, {}, indent);
  for (const CommandCheck& c : checks) {
    auto it = by_file.find(c.command.file);
    writer->command({c}, it == by_file.end() ? nullptr : it->second);
  }
  writer->skipped(skipped);
  writer->finish();
  return out.str();
}

}  // namespace attnsel
