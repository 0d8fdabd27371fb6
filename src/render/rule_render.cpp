// Rule pages (include/attnsel/rules.hpp) as text, JSON and Markdown (docs/rules.md).
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attnsel/encode.hpp"
#include "attnsel/rules.hpp"
#include "render/check_common.hpp"
#include "render/envelope.hpp"
#include "render/text_util.hpp"

namespace attnsel {
namespace {

using json = nlohmann::ordered_json;

std::string level_text(const RuleDoc& d) {
  return d.severity_note.empty() ? std::string(name_of(d.severity))
                                 : fmt::format("{} ({})", name_of(d.severity), d.severity_note);
}

// "sglang v0.5.3, v0.5.4 to v0.5.5"
std::string generations_text(const RuleVariant& v) { return fmt::format("{} {}", v.engine, fmt::join(v.generations, ", ")); }

std::string one_line(std::string_view s) { return encode_value(s, OutputChannel::terminal); }

// ---- text ----

struct Style {
  bool on = false;
  std::string bold(std::string_view s) const { return on ? fmt::format("\033[1m{}\033[0m", s) : std::string(s); }
  std::string dim(std::string_view s) const { return on ? fmt::format("\033[2m{}\033[0m", s) : std::string(s); }
};

}  // namespace

std::string render_rule_text(const RuleDoc& d, const RenderOptions& o) {
  const Style st{o.color};
  std::string out;
  auto section = [&](std::string_view title, const std::string& body) {
    if (body.empty()) return;
    out += "\n" + st.bold(title) + "\n  " + one_line(body) + "\n";
  };
  out += st.bold(one_line(d.id)) + "  " + st.dim(fmt::format("{} · {}", name_of(d.severity), name_of(d.origin))) + "\n";
  out += one_line(d.summary) + "\n";
  section("What it means", d.description());
  section("Level", level_text(d));
  section("Source", d.source);
  if (!d.variants.empty()) {
    out += "\n" + st.bold("In the data") + "\n";
    for (const RuleVariant& v : d.variants) {
      out += "  " + one_line(generations_text(v)) + "  " + st.dim(one_line(v.file)) + "\n";
      out += "    " + st.dim(std::string(name_of(v.severity))) + "  " + one_line(v.message) + "\n";
      if (!v.when.empty()) out += "    " + st.dim("when ") + " " + one_line(v.when) + "\n";
      if (!v.effect.empty()) out += "    " + st.dim("sets ") + " " + one_line(v.effect) + "\n";
      if (v.source != d.source) out += "    " + st.dim("source") + " " + one_line(v.source) + "\n";
      if (!v.note.empty() && v.note != d.meaning) out += "    " + st.dim("note  ") + " " + one_line(v.note) + "\n";
    }
  }
  if (!d.examples.empty() || !d.example_text.empty()) {
    out += "\n" + st.bold("Example") + "\n";
    for (const RuleExample& e : d.examples) {
      if (!e.file.empty()) {
        out += "  " + st.dim(one_line(e.file) + ":") + "\n";
        std::istringstream lines(e.text);
        for (std::string line; std::getline(lines, line);) out += "    " + one_line(line) + "\n";
      }
      out += "  $ " + one_line(e.command_line()) + "\n";
      for (const std::string& f : e.findings) out += "  " + one_line(f) + "\n";
    }
    if (!d.example_text.empty()) out += "  " + one_line(d.example_text) + "\n";
  }
  if (!d.links.empty()) {
    out += "\n" + st.bold("Links") + "\n";
    for (const std::string& l : d.links) out += "  " + one_line(l) + "\n";
  }
  section("How to fix", d.fix);
  section("How to ignore", d.ignore);
  out += "\n" + st.dim("More: " + rule_help_uri(d.id)) + "\n";
  return detail::terminal_safe(out, st.on);
}

namespace {

json variant_json(const RuleVariant& v) {
  json j;
  j["engine"] = v.engine;
  j["generations"] = v.generations;
  j["file"] = v.file;
  j["severity"] = std::string(name_of(v.severity));
  j["message"] = v.message;
  j["source"] = v.source;
  j["note"] = v.note.empty() ? json(nullptr) : json(v.note);
  j["when"] = v.when.empty() ? json(nullptr) : json::parse(v.when, nullptr, false);
  j["sets"] = v.effect.empty() ? json(nullptr) : json::parse(v.effect, nullptr, false);
  return j;
}

json example_json(const RuleExample& e) {
  json j;
  j["command_line"] = e.command_line();
  j["file"] = e.file.empty() ? json(nullptr) : json(e.file);
  j["text"] = e.file.empty() ? json(nullptr) : json(e.text);
  j["findings"] = e.findings;
  return j;
}

json rule_json(const RuleDoc& d) {
  json j;
  j["id"] = d.id;
  j["origin"] = std::string(name_of(d.origin));
  j["severity"] = std::string(name_of(d.severity));
  j["severity_note"] = d.severity_note.empty() ? json(nullptr) : json(d.severity_note);
  j["summary"] = d.summary;
  j["help_uri"] = rule_help_uri(d.id);
  j["about"] = d.about.empty() ? json(nullptr) : json(d.about);
  j["meaning"] = d.meaning.empty() ? json(nullptr) : json(d.meaning);
  j["source"] = d.source;
  json variants = json::array();
  for (const RuleVariant& v : d.variants) variants.push_back(variant_json(v));
  j["variants"] = variants;
  json examples = json::array();
  for (const RuleExample& e : d.examples) examples.push_back(example_json(e));
  j["examples"] = examples;
  j["example_note"] = d.example_text.empty() ? json(nullptr) : json(d.example_text);
  j["links"] = d.links;
  j["fix"] = d.fix;
  j["ignore"] = d.ignore;
  return j;
}

}  // namespace

std::string render_rule_json(const RuleDoc& d, int indent) { return detail::envelope_text("rule", rule_json(d), indent); }

std::string render_rule_list_json(const std::vector<RuleDoc>& docs, int indent) {
  json list = json::array();
  for (const RuleDoc& d : docs)
    list.push_back({{"id", d.id},
                    {"origin", std::string(name_of(d.origin))},
                    {"severity", std::string(name_of(d.severity))},
                    {"summary", d.summary},
                    {"help_uri", rule_help_uri(d.id)}});
  json body;
  body["count"] = docs.size();
  body["rules"] = std::move(list);
  return detail::envelope_text("rules", std::move(body), indent);
}

std::string render_rule_list_text(const std::vector<RuleDoc>& docs, const RenderOptions& o) {
  const Style st{o.color};
  std::size_t id_width = 0;
  for (const RuleDoc& d : docs) id_width = std::max(id_width, d.id.size());
  std::string out;
  for (const RuleDoc& d : docs)
    out += fmt::format("{}{}  {:<9} {:<8} {}\n", one_line(d.id), std::string(id_width - d.id.size(), ' '),
                       name_of(d.origin), name_of(d.severity), one_line(d.summary));
  out += st.dim(fmt::format("{} rules; `attnsel rule ID` shows one", docs.size())) + "\n";
  return detail::terminal_safe(out, st.on);
}

namespace {

// A paragraph of Markdown from data text: one line, `code` kept, Markdown's punctuation escaped.
std::string md_text(std::string_view s) { return detail::md_prose(s); }

// A fenced code block that no backtick run inside can close.
std::string md_fence(std::string_view text, std::string_view info = "") {
  std::size_t run = 0, longest = 0;
  for (char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(std::max<std::size_t>(3, longest + 1), '`');
  std::string body = encode_output(text, OutputChannel::markdown);
  if (!body.empty() && body.back() != '\n') body += '\n';
  return fence + std::string(info) + "\n" + body + fence + "\n";
}

}  // namespace

namespace {

// Texts every page of a kind shares: printed once in docs/rules.md, linked from each page.
bool shared_fix(const RuleDoc& d) {
  return d.origin == RuleOrigin::matrix || d.origin == RuleOrigin::feature || d.origin == RuleOrigin::selection;
}
std::string fix_anchor(const RuleDoc& d) { return fmt::format("fix-{}-{}", name_of(d.origin), name_of(d.severity)); }
std::string ignore_anchor(Severity s) { return fmt::format("ignore-{}", name_of(s)); }
std::string origin_anchor(RuleOrigin o) { return fmt::format("origin-{}", name_of(o)); }
std::string level_word(Severity s) { return s == Severity::info ? "note" : std::string(name_of(s)); }

// One page. `linked`: the shared texts are in the same document (docs/rules.md) and linked to,
// else written out.
std::string rule_markdown(const RuleDoc& d, bool linked) {
  std::string out;
  out += fmt::format("### <a id=\"{}\"></a>`{}`\n\n", rule_anchor(d.id), d.id);
  out += fmt::format("{}\n\n", md_text(d.summary));
  const std::string origin = linked ? fmt::format("[{}](#{})", name_of(d.origin), origin_anchor(d.origin))
                                    : std::string(name_of(d.origin));
  out += fmt::format("*{}* rule · level **{}**{}\n\n", origin, name_of(d.severity),
                     d.severity_note.empty() ? std::string() : " (" + md_text(d.severity_note) + ")");
  const std::string meaning = linked ? d.meaning : d.description();
  if (!meaning.empty()) out += fmt::format("**What it means.** {}\n\n", md_text(meaning));
  out += fmt::format("**Source.** {}\n\n", md_text(d.source));
  if (!d.variants.empty()) {
    out += "**In the data.**\n\n";
    for (const RuleVariant& v : d.variants) {
      out += fmt::format("- {} ({}, {}): {}\n", md_text(generations_text(v)), detail::md_code(v.file),
                         name_of(v.severity), detail::md_code(v.message, 2000));
      if (!v.when.empty()) out += fmt::format("  when {}", detail::md_code(v.when, 2000));
      if (!v.effect.empty()) out += fmt::format("{}sets {}", v.when.empty() ? "  " : "; ", detail::md_code(v.effect, 2000));
      if (!v.when.empty() || !v.effect.empty()) out += "\n";
      if (v.source != d.source) out += fmt::format("  source: {}\n", md_text(v.source));
      if (!v.note.empty() && v.note != d.meaning) out += fmt::format("  note: {}\n", md_text(v.note));
    }
    out += "\n";
  }
  if (!d.examples.empty() || !d.example_text.empty()) {
    out += "**Example.**";
    if (!d.example_text.empty()) out += " " + md_text(d.example_text);
    out += "\n\n";
    for (const RuleExample& e : d.examples) {
      std::string block;
      if (!e.file.empty()) {
        block += fmt::format("$ cat {}\n{}", e.file, e.text);
        if (!e.text.empty() && e.text.back() != '\n') block += '\n';
      }
      block += "$ " + e.command_line() + "\n";
      for (const std::string& f : e.findings) block += f + "\n";
      out += md_fence(block, "console") + "\n";
    }
  }
  if (!d.links.empty()) {
    out += "**Links.**";
    for (const std::string& l : d.links) out += " <" + encode_value(l, OutputChannel::markdown) + ">";
    out += "\n\n";
  }
  if (linked && shared_fix(d))
    out += fmt::format("**How to fix.** As for every [{} rule's {}](#{}).\n\n", name_of(d.origin), level_word(d.severity),
                       fix_anchor(d));
  else
    out += fmt::format("**How to fix.** {}\n\n", md_text(d.fix));
  if (linked)
    out += fmt::format("**How to ignore.** As for every [{}](#{}).\n", level_word(d.severity), ignore_anchor(d.severity));
  else
    out += fmt::format("**How to ignore.** {}\n", md_text(d.ignore));
  return out;
}

}  // namespace

std::string render_rule_markdown(const RuleDoc& d) { return rule_markdown(d, false); }

std::string render_rule_list_markdown(const std::vector<RuleDoc>& docs) {
  std::map<RuleOrigin, std::size_t> by_origin;
  for (const RuleDoc& d : docs) ++by_origin[d.origin];
  std::string counts;
  for (const auto& [origin, n] : by_origin) counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", n, name_of(origin));
  std::string out;
  out += "# Rules\n\n";
  out += "<!-- Generated by `attnsel rule --list --format markdown` from data/rules.json, the matrices\n"
         "     (data/engines/*/matrix*.json) and the advisories (data/engines/*/advisories.json).\n"
         "     Do not edit: tests/rules_test.cpp fails when this file differs from what attnsel prints. -->\n\n";
  out += fmt::format(
      "Every rule id attnsel reports, {} in all ({}). A finding names its rule (`[cell.compute-capability]` in "
      "text, `rule` in JSON, `ruleId` in SARIF, `check_name` in GitLab Code Quality); `attnsel rule ID` prints its "
      "page, and the SARIF and JSON outputs link here.\n\n",
      docs.size(), counts);
  // What every page of a kind shares, once: what each origin is, the usual fixes, how to ignore.
  std::map<RuleOrigin, const RuleDoc*> first_of_origin;
  std::map<std::string, const RuleDoc*> first_fix;
  std::map<Severity, const RuleDoc*> first_of_level;
  for (const RuleDoc& d : docs) {
    first_of_origin.emplace(d.origin, &d);
    if (shared_fix(d)) first_fix.emplace(fix_anchor(d), &d);
    first_of_level.emplace(d.severity, &d);
  }
  out += "## Origins\n\n";
  for (const auto& [origin, d] : first_of_origin) {
    out += fmt::format("- <a id=\"{}\"></a>**{}**: ", origin_anchor(origin), name_of(origin));
    if (!d->about.empty()) out += md_text(d->about) + "\n";
    else if (origin == RuleOrigin::engine) out += "a rule of attnsel's matrix engine itself (a backend's cell, page-size planning).\n";
    else if (origin == RuleOrigin::check) out += "a finding of `attnsel check` itself (a value it cannot judge, a model it assumed).\n";
    else out += "the engine's argument parser would refuse or reinterpret a flag, as the launch grammar describes it.\n";
  }
  out += "\n## How to fix, as every such rule\n\n";
  for (const auto& [anchor, d] : first_fix)
    out += fmt::format("- <a id=\"{}\"></a>A {} rule's {}: {}\n", anchor, name_of(d->origin), level_word(d->severity),
                       md_text(d->fix));
  out += "\n## How to ignore a finding\n\n";
  for (const auto& [level, d] : first_of_level)
    out += fmt::format("- <a id=\"{}\"></a>{} {}: {}\n", ignore_anchor(level), level == Severity::error ? "An" : "A",
                       level_word(level), md_text(d->ignore));
  out += "\n## Index\n\n| rule | origin | level | summary |\n|---|---|---|---|\n";
  for (const RuleDoc& d : docs)
    out += fmt::format("| [{}](#{}) | {} | {} | {} |\n", detail::md_code(d.id), rule_anchor(d.id), name_of(d.origin),
                       name_of(d.severity), detail::md_cell(d.summary, 300));
  out += "\n## Pages\n";
  for (const RuleDoc& d : docs) out += "\n" + rule_markdown(d, true);
  return out;
}

}  // namespace attnsel
