// `attnsel check --format sarif`: SARIF 2.1.0 (OASIS; GitHub code scanning, VS Code's SARIF
// viewer, GitLab). One run; its results are written as commands are judged, then the tool with
// the rules those results name (a rule's index is its place among them), the invocation (inputs
// that could not be read are its notifications) and attnsel's totals. JSON members are unordered,
// so results coming before the tool is SARIF all the same, and memory stays flat.
//
// A result is one finding as the annotations report it: once for a command however many targets
// have it, "[sm90] ..." in the message and the GPUs in its properties when only some do.
#include <map>
#include <ostream>

#include <fmt/format.h>

#include "attnsel/rules.hpp"
#include "attnsel/version.hpp"
#include "render/check_common.hpp"

namespace attnsel::detail {
namespace {

using json = nlohmann::json;

constexpr const char* kSarifSchema =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";
// The base the relative artifact URIs resolve against: the directory attnsel ran in.
constexpr const char* kSourceRoot = "%SRCROOT%";

// A path as a URI reference: relative paths stay relative (to the working directory, "./" dropped),
// absolute ones become file:// URIs. Every byte outside RFC 3986's unreserved characters, sub-delims,
// '@' and '/' is percent-encoded (':' too, so that a relative path never reads as a scheme), which
// keeps any file name, invalid UTF-8 included, exactly.
std::string uri_of(std::string_view path, bool& relative) {
  relative = path.empty() || path.front() != '/';
  while (relative && path.size() > 2 && path.substr(0, 2) == "./") path.remove_prefix(2);
  std::string out = relative ? "" : "file://";
  for (char c : path) {
    const auto u = static_cast<unsigned char>(c);
    if ((u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') ||
        std::string_view("-._~!$&'()*+,;=@/").find(c) != std::string_view::npos)
      out += c;
    else
      out += fmt::format("%{:02X}", u);
  }
  return out;
}

std::string_view sarif_level(Severity s) { return s == Severity::error ? "error" : s == Severity::warning ? "warning" : "note"; }

class SarifWriter final : public CheckWriter {
 public:
  SarifWriter(std::ostream& out, const CheckWriterOptions& o) : out_(out), json_(out, o.indent) {
    tally_.strict = o.strict;
    json_.open_object();
    json_.member("$schema", kSarifSchema);
    json_.member("version", "2.1.0");
    json_.open_member_array("runs");
    json_.open_element_object();
    json_.open_member_array("results");
  }
  void command(const std::vector<CommandCheck>& checks, const FileContext*) override {
    for_each_command(checks, [&](const CommandCheck* b, const CommandCheck* e) {
      const std::vector<Finding> findings = findings_of(b, e);
      tally_.add(b, e, findings);
      std::map<std::string, std::size_t> seen;  // fingerprints of this command: equal findings told apart
      for (const Finding& f : findings) {
        const std::string fp = fingerprint(f, b->command);
        result(f, &b->command, fingerprint(f, b->command, seen[fp]++));
      }
      // Suppressed findings are results too, with SARIF's own suppressions: a viewer shows them as such.
      for (const Finding& f : suppressed_of(b, e)) {
        const std::string fp = fingerprint(f, b->command);
        result(f, &b->command, fingerprint(f, b->command, seen[fp]++));
      }
    });
  }
  void file_findings(const std::vector<FileFinding>& findings) override {
    std::vector<Finding> all;
    for (const FileFinding& ff : findings) all.push_back(file_finding(ff));
    tally_.add_file(all);
    std::map<std::string, std::size_t> seen;
    for (const Finding& f : all) {
      LaunchCommand none;
      none.file = f.file;
      const std::string fp = fingerprint(f, none);
      result(f, nullptr, fingerprint(f, none, seen[fp]++));
    }
  }
  void skipped(const std::vector<Error>& blocks) override {
    tally_.skipped += blocks.size();
    for (const Error& e : blocks) {
      const Finding f = skipped_finding(e);
      LaunchCommand none;
      none.file = f.file;
      result(f, nullptr, fingerprint(f, none));
    }
  }
  void finish(const CheckInputs& inputs) override {
    json_.close();  // results
    json_.member("tool", {{"driver", driver()}});
    json notifications = json::array();
    for (const auto* list : {&inputs.problems, &inputs.warnings})
      for (const std::string& text : *list)
        notifications.push_back({{"level", list == &inputs.problems ? "error" : "warning"}, {"message", {{"text", text}}}});
    json invocation = {{"executionSuccessful", inputs.problems.empty()}};
    if (!notifications.empty()) invocation["toolExecutionNotifications"] = std::move(notifications);
    json_.member("invocations", json::array({invocation}));
    json_.member("columnKind", "unicodeCodePoints");
    json_.member("properties", {{"summary", summary_json(tally_, inputs)}, {"ok", tally_.ok(inputs)}});
    json_.close();  // the run
    json_.close();  // runs
    json_.close();
    out_.flush();
  }

 private:
  // The rule's index among the tool's rules, added on its first result.
  std::size_t rule_index(const Finding& f) {
    auto [at, added] = rule_index_.emplace(f.rule, rules_.size());
    if (added) rules_.push_back({f.rule, f.text, f.severity});
    return at->second;
  }

  void result(const Finding& f, const LaunchCommand* command, const std::string& fingerprint) {
    json r;
    r["ruleId"] = f.rule;
    r["ruleIndex"] = rule_index(f);
    r["level"] = std::string(sarif_level(f.severity));
    r["message"] = {{"text", f.targeted_message()}};
    if (!f.file.empty()) {
      bool relative = true;
      json artifact = {{"uri", uri_of(f.file, relative)}};
      if (relative) artifact["uriBaseId"] = kSourceRoot;
      json physical = {{"artifactLocation", artifact}};
      if (f.line > 0) {
        json region = {{"startLine", f.line}};
        if (f.column > 0) {
          region["startColumn"] = f.column;
          if (f.end_column > f.column) region["endColumn"] = f.end_column;
        }
        physical["region"] = region;
      }
      r["locations"] = json::array({{{"physicalLocation", physical}}});
    }
    r["partialFingerprints"] = {{"attnselFinding/v1", fingerprint}};
    if (f.suppression) {
      // inSource: a comment in the file; external: --select, --ignore or a settings file.
      r["suppressions"] = json::array(
          {{{"kind", f.suppression->kind == Suppression::Kind::in_source ? "inSource" : "external"},
            {"justification", suppressed_by(*f.suppression)}}});
    }
    json props = {{"gpus", f.gpus}, {"allGpus", f.on_every_target()}};
    if (command != nullptr) {
      props["command"] = command_text(*command);
      if (command->line > 0) props["commandLine"] = command->line;
    }
    if (!f.flag.empty()) props["flag"] = f.flag;
    if (!f.flag.empty() && !f.value.empty()) props["value"] = f.value;
    if (!f.source.empty()) props["source"] = f.source;
    r["properties"] = std::move(props);
    json_.element(r);
  }

  json driver() const {
    json rules = json::array();
    auto docs = rule_docs();  // a rule without a page (a matrix of the user's own) keeps its id and message
    for (const SeenRule& seen : rules_) {
      const RuleDoc* doc = docs ? find_rule_doc(**docs, seen.id) : nullptr;
      json r = {{"id", seen.id}};
      if (doc != nullptr) {
        r["shortDescription"] = {{"text", doc->summary}};
        r["fullDescription"] = {{"text", doc->description()}};
        r["help"] = {{"text", fmt::format("How to fix: {}\nHow to ignore: {}", doc->fix, doc->ignore)},
                     {"markdown", fmt::format("**How to fix.** {}\n\n**How to ignore.** {}\n\n[The rule's page]({})",
                                              md_prose(doc->fix), md_prose(doc->ignore),
                                              rule_help_uri(doc->id))}};
        r["helpUri"] = rule_help_uri(doc->id);
        r["defaultConfiguration"] = {{"level", std::string(sarif_level(doc->severity))}};
        r["properties"] = {{"tags", json::array({"attnsel", std::string(name_of(doc->origin))})}, {"source", doc->source}};
      } else {
        r["shortDescription"] = {{"text", seen.message}};
        r["defaultConfiguration"] = {{"level", std::string(sarif_level(seen.severity))}};
        r["properties"] = {{"tags", json::array({"attnsel"})}};
      }
      rules.push_back(std::move(r));
    }
    return {{"name", "attnsel"},
            {"version", version()},
            {"semanticVersion", version()},
            {"informationUri", std::string(kProjectUrl)},
            {"rules", std::move(rules)}};
  }

  struct SeenRule {
    std::string id, message;
    Severity severity;
  };
  std::ostream& out_;
  JsonStream json_;
  Tally tally_;
  std::vector<SeenRule> rules_;  // in the order results first named them: their ruleIndex
  std::map<std::string, std::size_t> rule_index_;
};

}  // namespace

std::unique_ptr<CheckWriter> make_sarif_writer(std::ostream& out, const CheckWriterOptions& o) {
  return std::make_unique<SarifWriter>(out, o);
}

}  // namespace attnsel::detail
