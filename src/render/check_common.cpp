// What the `attnsel check` writers share: see check_common.hpp.
#include "render/check_common.hpp"

#include <algorithm>
#include <map>

#include "attnsel/encode.hpp"
#include "attnsel/fix.hpp"
#include "core/json_text.hpp"
#include "core/sha256.hpp"

namespace attnsel::detail {

using json = nlohmann::json;

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

std::string located_message(const CheckDiagnostic& d) {
  if (d.flag.empty()) return d.diagnostic.message;
  if (d.value.empty()) return fmt::format("{}: {}", d.flag, d.diagnostic.message);
  return fmt::format("{} {}: {}", d.flag, quoted(d.value), d.diagnostic.message);
}

bool same_command(const LaunchCommand& a, const LaunchCommand& b) {
  return a.file == b.file && a.line == b.line && a.args == b.args && a.launcher == b.launcher;
}

namespace {

// The fix of `c` when it changes the flag `d` names (an error's own flag), described.
std::string fix_for(const CommandCheck& c, const CheckDiagnostic& d) {
  if (!c.fix || d.diagnostic.severity != Severity::error || d.flag.empty()) return "";
  for (const FlagChange& ch : c.fix->changes)
    if (ch.flag == d.flag && ch.from == d.value) return describe_fix(*c.fix);
  return "";
}

// The findings of one command's checks as reported: `each(check, visit)` calls visit(diagnostic,
// suppression or null) for what a check holds.
// `reported_only`: the findings as annotated (is_reported_finding); else every diagnostic (what was
// suppressed is counted and carried whatever its level).
template <class Each>
std::vector<Finding> collect(const CommandCheck* begin, const CommandCheck* end, bool reported_only, Each each) {
  std::vector<Finding> found;
  std::vector<std::vector<std::pair<std::string, std::string>>> fixes;  // per finding: (target, its fix)
  std::map<std::string, std::size_t> index;  // a finding's identity -> its place
  for (const CommandCheck* it = begin; it != end; ++it) {
    const CommandCheck& c = *it;
    each(c, [&](const CheckDiagnostic* d, const Suppression* suppression) {
      const Severity sev = d->diagnostic.severity;
      if (reported_only && !is_reported_finding(*d)) return;
      // A command read once per branch of its script: each finding says which branch.
      const std::string message =
          c.command.branch.empty() ? located_message(*d)
                                   : fmt::format("{} (on the branch where {})", located_message(*d), c.command.branch);
      const std::string identity =
          fmt::format("{}\n{}\n{}\n{}", static_cast<int>(sev), d->line, d->diagnostic.rule, message);
      auto [at, added] = index.emplace(identity, found.size());
      if (added) {
        Finding f;
        f.severity = sev;
        f.file = c.command.file;
        f.rule = d->diagnostic.rule;
        f.message = message;
        f.text = d->diagnostic.message;
        f.flag = d->flag;
        f.value = d->value;
        f.source = d->diagnostic.source;
        f.line = d->line;
        f.column = d->column;
        f.end_column = d->end_column;
        f.targets = static_cast<std::size_t>(end - begin);
        if (suppression != nullptr) f.suppression = *suppression;
        found.push_back(std::move(f));
        fixes.emplace_back();
      }
      Finding& same = found[at->second];
      if (std::find(same.gpus.begin(), same.gpus.end(), c.target.label) == same.gpus.end()) {
        same.gpus.push_back(c.target.label);
        if (suppression == nullptr)
          if (std::string fix = fix_for(c, *d); !fix.empty()) fixes[at->second].emplace_back(c.target.label, std::move(fix));
      }
    });
  }
  for (std::size_t i = 0; i < found.size(); ++i) {
    const auto& per_target = fixes[i];
    if (per_target.empty()) continue;
    const bool one = std::all_of(per_target.begin(), per_target.end(),
                                 [&](const auto& p) { return p.second == per_target.front().second; });
    if (one && per_target.size() == found[i].gpus.size()) {
      found[i].fix = per_target.front().second;
      continue;
    }
    for (const auto& [gpu, fix] : per_target)
      found[i].fix += fmt::format("{}[{}] {}", found[i].fix.empty() ? "" : "; ", gpu, fix);
  }
  return found;
}

}  // namespace

std::vector<Finding> findings_of(const CommandCheck* begin, const CommandCheck* end) {
  return collect(begin, end, true, [](const CommandCheck& c, const auto& visit) {
    for (const CheckDiagnostic* d : c.all()) visit(d, nullptr);
  });
}

std::vector<Finding> suppressed_of(const CommandCheck* begin, const CommandCheck* end) {
  return collect(begin, end, false, [](const CommandCheck& c, const auto& visit) {
    for (const SuppressedFinding& s : c.suppressed) visit(&s.finding, &s.suppression);
  });
}

Finding file_finding(const FileFinding& ff) {
  Finding f;
  const CheckDiagnostic& d = ff.finding;
  f.severity = d.diagnostic.severity;
  f.file = ff.file;
  f.rule = d.diagnostic.rule;
  f.message = located_message(d);
  f.text = d.diagnostic.message;
  f.flag = d.flag;
  f.value = d.value;
  f.source = d.diagnostic.source;
  f.line = d.line;
  f.column = d.column;
  f.end_column = d.end_column;
  f.suppression = ff.suppression;
  return f;
}

std::string suppressed_by(const Suppression& s) {
  if (s.kind == Suppression::Kind::external && s.pattern.empty()) return fmt::format("not selected ({})", s.by);
  return fmt::format("suppressed by {} ({})", s.by, s.pattern);
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

Finding skipped_finding(const Error& e) {
  const SkippedPlace p = place_of(e.where);
  Finding f;
  f.severity = Severity::warning;
  f.file = p.file;
  f.rule = "check.skipped";
  f.text = e.message + " (this block was not checked; the rest of the file was)";
  f.message = f.text;
  f.line = p.line;
  f.column = p.column;
  return f;
}

int Tally::outcome(const CommandCheck* begin, const CommandCheck* end, bool strict) {
  int worst = 0;
  for (const CommandCheck* c = begin; c != end; ++c) {
    if (c->fails(strict)) return 2;
    if (c->verdict() == Verdict::warning) worst = 1;
  }
  return worst;
}

void Tally::add(const CommandCheck* begin, const CommandCheck* end, const std::vector<Finding>& findings) {
  ++commands;
  results += static_cast<std::size_t>(end - begin);
  const int o = outcome(begin, end, strict);
  (o == 2 ? failing : o == 1 ? warned : clean) += 1;
  for (const CommandCheck* c = begin; c != end; ++c)
    if (std::find(gpus.begin(), gpus.end(), c->target.label) == gpus.end()) gpus.push_back(c->target.label);
  if (!begin->command.file.empty()) files.insert(begin->command.file);
  for (const Finding& f : findings)
    (f.severity == Severity::error ? errors : f.severity == Severity::warning ? warnings : notes) += 1;
  suppressed += suppressed_of(begin, end).size();
}

void Tally::add_file(const std::vector<Finding>& findings) {
  for (const Finding& f : findings) {
    if (f.suppression) {
      ++suppressed;
      continue;
    }
    (f.severity == Severity::error ? errors : f.severity == Severity::warning ? warnings : notes) += 1;
    if (f.fails(strict)) ++file_failing;
  }
}

std::string Tally::commands_line() const {
  // No GPU when nothing was checked (a file whose only block could not be read): no empty "for".
  return fmt::format("{} command{} checked{}{}: {} failing, {} with warnings, {} clean", commands,
                     commands == 1 ? "" : "s", gpus.empty() ? "" : " for ", fmt::join(gpus, ", "), failing, warned, clean);
}

std::string Tally::findings_line() const {
  std::string line = fmt::format("{} error{}, {} warning{}, {} note{}", errors, errors == 1 ? "" : "s", warnings,
                                 warnings == 1 ? "" : "s", notes, notes == 1 ? "" : "s");
  if (skipped > 0) line += fmt::format(", {} skipped block{}", skipped, skipped == 1 ? "" : "s");
  if (suppressed > 0) line += fmt::format(", {} suppressed", suppressed);
  return line;
}

bool Tally::ok(const CheckInputs& in) const {
  return failing == 0 && file_failing == 0 && in.problems.empty() && skipped == 0 && !(strict && !in.warnings.empty());
}

json summary_json(const Tally& t, const CheckInputs& in) {
  return {{"files", std::max(in.files, t.files.size())},
          {"files_with_commands", std::max(in.files_with_commands, t.files.size())},
          {"binary_skipped", in.binary_skipped},
          {"skipped_directories", in.skipped_directories},
          {"skipped_files", in.skipped_files},
          {"gpus", t.gpus},
          {"commands", t.commands},
          {"commands_failing", t.failing},
          {"commands_with_warnings", t.warned},
          {"commands_clean", t.clean},
          {"results", t.results},
          {"errors", t.errors},
          {"warnings", t.warnings},
          {"notes", t.notes},
          {"skipped_blocks", t.skipped},
          {"suppressed", t.suppressed},
          {"strict", t.strict},
          {"input_problems", in.problems},
          {"input_warnings", in.warnings}};
}

// A table cell: one line, Markdown's punctuation and HTML escaped, control characters shown, at
// most `limit` bytes (cut at a character).
std::string md_cell(std::string_view text, std::size_t limit) {
  const std::string encoded = encode_value(text, OutputChannel::markdown);
  const std::string_view s = encoded;
  std::string out;
  std::size_t i = 0;
  for (; i < s.size() && out.size() < limit; ++i) {
    const char c = s[i];
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n' || c == '\r' || c == '\t') out += ' ';
    else if (u < 0x20 || u == 0x7f) out += fmt::format("\\x{:02x}", u);
    else if (std::string_view("\\`*_[]<>|#~!&").find(c) != std::string_view::npos) out += std::string("\\") + c;
    else out += c;
  }
  if (i < s.size()) {
    while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80) out.pop_back();
    if (!out.empty() && static_cast<unsigned char>(out.back()) >= 0xC0) out.pop_back();
    out += " …";
  }
  return out;
}

// A code span in a table cell: a fence longer than any run of backticks inside, `|` escaped (GFM
// tables split on it even in code).
std::string md_code(std::string_view text, std::size_t limit) {
  const std::string encoded = encode_value(text, OutputChannel::markdown);
  const std::string_view s = encoded;
  std::string body;
  std::size_t run = 0, longest = 0, i = 0;
  for (; i < s.size() && body.size() < limit; ++i) {
    const char c = s[i];
    const auto u = static_cast<unsigned char>(c);
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
    if (c == '\n' || c == '\r' || c == '\t') body += ' ';
    else if (u < 0x20 || u == 0x7f) body += fmt::format("\\x{:02x}", u);
    else if (c == '|') body += "\\|";
    else body += c;
  }
  if (i < s.size()) {
    while (!body.empty() && (static_cast<unsigned char>(body.back()) & 0xC0) == 0x80) body.pop_back();
    if (!body.empty() && static_cast<unsigned char>(body.back()) >= 0xC0) body.pop_back();
    body += " …";
  }
  const std::string fence(longest + 1, '`');
  const bool pad = !body.empty() && (body.front() == '`' || body.back() == '`');
  return fence + (pad ? " " : "") + body + (pad ? " " : "") + fence;
}

std::string fingerprint(const Finding& f, const LaunchCommand& command, std::size_t occurrence) {
  std::string key = fmt::format("attnsel/v1\n{}\n{}\n{}\n{}\n{}\n{}\n{}", f.rule, f.file, f.line, command_text(command),
                                f.flag, f.value, fmt::join(f.gpus, ","));
  if (occurrence > 0) key += fmt::format("\n#{}", occurrence);
  return sha256_hex(key);
}

std::string concise_place(const std::string& file, int line, int column) {
  if (file.empty()) return "";
  std::string at = encode_value(file, OutputChannel::github);
  if (line > 0) at += fmt::format(":{}", line);
  if (line > 0 && column > 0) at += fmt::format(":{}", column);
  return at + ": ";
}

std::string_view severity_word(Severity s) {
  return s == Severity::error ? "error" : s == Severity::warning ? "warning" : "note";
}

std::string md_prose(std::string_view text) {
  const std::string encoded = encode_value(text, OutputChannel::markdown);
  std::string out;
  out.reserve(encoded.size());
  bool in_code = false;
  for (char c : encoded) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '`') in_code = !in_code;
    if (c == '\n' || c == '\r' || c == '\t') out += ' ';
    else if (u < 0x20 || u == 0x7f) out += fmt::format("\\x{:02x}", u);
    else if (!in_code && std::string_view("\\*_[]<>|~").find(c) != std::string_view::npos) out += std::string("\\") + c;
    else out += c;
  }
  if (in_code) out += '`';  // an unpaired backtick would open a span to the end of the paragraph
  return out;
}

// ---- JsonStream ----

JsonStream::JsonStream(std::ostream& out, int indent) : out_(out), indent_(clamp_indent(indent)) {}

void JsonStream::open_object() {
  out_ << "{";
  open_.push_back({false, 0});
}

void JsonStream::open_array() {
  out_ << "[";
  open_.push_back({true, 0});
}

void JsonStream::newline_at(int depth) {
  if (indent_ < 0) return;
  out_ << '\n' << std::string(static_cast<std::size_t>(indent_ * depth), ' ');
}

void JsonStream::key(const char* name) {
  Level& level = open_.back();
  if (level.count++ > 0) out_ << ",";
  newline_at(depth());
  out_ << '"' << name << (indent_ < 0 ? "\":" : "\": ");
}

void JsonStream::write_padded(std::string_view text, int pad) {
  const std::string spaces(static_cast<std::size_t>(pad), ' ');
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    out_ << spaces;
    out_.write(text.data() + at, static_cast<std::streamsize>(end - at));
    if (end < text.size()) out_ << '\n';
    at = end + 1;
  }
}

// The value's first line goes where the cursor is (after a key, or on a fresh padded line); its
// other lines are padded to `depth`.
void JsonStream::value_at(const json& j, int depth) {
  const std::string text = encode_output(json_text(j, indent_), OutputChannel::json);
  const std::size_t first_line = std::min(text.find('\n'), text.size());
  out_.write(text.data(), static_cast<std::streamsize>(first_line));
  if (first_line < text.size()) {
    out_ << '\n';
    write_padded(std::string_view(text).substr(first_line + 1), std::max(indent_, 0) * depth);
  }
}

void JsonStream::member(const char* name, const json& value) {
  key(name);
  value_at(value, depth());
}

void JsonStream::open_member_array(const char* name) {
  key(name);
  out_ << "[";
  open_.push_back({true, 0});
}

void JsonStream::open_member_object(const char* name) {
  key(name);
  out_ << "{";
  open_.push_back({false, 0});
}

void JsonStream::element(const json& value) {
  Level& level = open_.back();
  if (level.count++ > 0) out_ << ",";
  newline_at(depth());
  value_at(value, depth());
}

void JsonStream::open_element_object() {
  Level& level = open_.back();
  if (level.count++ > 0) out_ << ",";
  newline_at(depth());
  out_ << "{";
  open_.push_back({false, 0});
}

void JsonStream::close() {
  const Level level = open_.back();
  open_.pop_back();
  if (level.count > 0) newline_at(depth());
  out_ << (level.array ? "]" : "}");
}

}  // namespace attnsel::detail
