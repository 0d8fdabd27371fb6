// Rule pages: every rule id attnsel can report, documented from the data that defines it.
//
// A finding names its rule ("cell.compute-capability", "args.unknown", "fa4-page-size-sm100",
// "advisory.SGL-ADV-0012"). The pages are built from where each rule lives, never written twice:
//   matrix, feature, selection  the capability matrices (data/engines/*/matrix*.json): the
//                               message, the upstream source each generation cites, the condition;
//   engine, check, args         the rules the library's code reports (the matrix engine's own,
//                               `attnsel check`'s, the launch grammar's), described in
//                               data/rules.json with a runnable example;
//   advisory                    the advisories (data/engines/*/advisories.json).
// `attnsel rule ID`, `attnsel rule --list`, docs/rules.md and the help URIs of SARIF and JSON
// output all come from here.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attnsel/error.hpp"
#include "attnsel/export.hpp"
#include "attnsel/render.hpp"
#include "attnsel/types.hpp"

namespace attnsel {

// The project's home, the one place it is written: the rule pages' URIs are made from it.
inline constexpr std::string_view kProjectUrl = "https://github.com/your-org/attnsel";
// docs/rules.md of this release (its tag, v<version>), where every rule has an anchor.
ATTNSEL_API std::string rules_page_url();
// The anchor of a rule on that page: the id in lower case, characters other than [a-z0-9._-] as '-'.
ATTNSEL_API std::string rule_anchor(std::string_view id);
// rules_page_url() + "#" + rule_anchor(id).
ATTNSEL_API std::string rule_help_uri(std::string_view id);

enum class RuleOrigin : std::uint8_t {
  matrix,     // a rule of a capability matrix ("rules")
  feature,    // a feature rule of a matrix ("features": sliding window, attention sinks ...)
  selection,  // an entry of the engine's automatic selection ("selection"): explains a choice
  engine,     // a rule of attnsel's matrix engine itself (a backend's cell, page-size planning ...)
  check,      // `attnsel check`'s own finding (an unknown backend, a value from the environment ...)
  args,       // the engine's argument parser would refuse or reinterpret a flag (the launch grammar)
  advisory,   // a known engine bug (data/engines/<engine>/advisories.json)
};
ATTNSEL_API std::string_view name_of(RuleOrigin o);

// One wording of a data-defined rule and the matrix generations that share it.
struct RuleVariant {
  std::string engine;                    // "sglang"
  std::vector<std::string> generations;  // their labels, oldest first: "v0.5.3", "v0.5.4 to v0.5.5"
  std::string file;                      // the data file the entry is in: "data/engines/sglang/matrix-0.5.12.json"
  Severity severity = Severity::error;
  std::string message;  // as written, placeholders ({title}, {gpu} ...) and all
  std::string source;   // the upstream citation
  std::string note;     // why it was decided this way, if the data says
  std::string when;     // the condition, as the data writes it (one line of JSON); "" when none
  std::string effect;   // what the engine changes silently ("set", one line of JSON); "" when nothing
};

// How to reproduce a rule's finding: an `attnsel check` run (or `attnsel select`, for what only it
// reaches), as data/rules.json gives it for the engine, check and args rules.
struct RuleExample {
  bool select = false;             // `attnsel select --model MODEL FLAGS` rather than `attnsel check`
  std::string engine;              // select: --engine ("" the default)
  std::string gpus;                // --gpu ("" for check: the GPUs the file names)
  std::string command;             // check: a launch command, one line (after --); select: the engine flags
  std::string file, text;          // check: a file's name and text, checked as `attnsel check FILE`
  std::string model, dtype;        // select: --model, --dtype
  std::string release;             // --engine-version, "" for none
  std::optional<std::string> installed;  // --installed, space-separated packages; unset: not given
  bool strict = false;             // --strict
  bool unknown_model_error = false;  // --unknown-model error
  bool report_unused_suppressions = false;  // --report-unused-suppressions
  // The level it reports at when that is not the rule's default (the case its severity_note names).
  std::optional<Severity> level;
  // What the run reports for the rule, one line per finding as `--format concise` prints it
  // ("serve.sh:3:1: error: ... [args.unknown]"); filled by run_rule_examples(), empty before.
  std::vector<std::string> findings;
  // The `attnsel check` command line that runs it (a heredoc for a file).
  ATTNSEL_API std::string command_line() const;
};

struct RuleDoc {
  std::string id;
  RuleOrigin origin = RuleOrigin::matrix;
  Severity severity = Severity::error;  // the default level (a variant or --strict may differ)
  std::string severity_note;            // when the level depends on something ("a note when ...")
  std::string summary;                  // one line
  std::string about;                    // what a rule of its origin is (matrix, feature, selection, advisory)
  std::string meaning;                  // what this rule means, a paragraph ("" for a matrix rule without a note)
  std::string source;                   // the upstream source or the code that reports it
  std::vector<RuleVariant> variants;    // matrix, feature and selection rules: each wording
  std::vector<RuleExample> examples;    // engine, check and args rules
  std::string example_text;             // advisories: the conditions it matches, in words
  std::vector<std::string> links;       // advisories: issues, fixes, related threads
  std::string fix;                      // what to do about a finding
  std::string ignore;                   // how to live with it
  // `about` and `meaning` as one paragraph: the rule's whole description.
  ATTNSEL_API std::string description() const;
};

// Every rule, in id order, built once from the built-in data. Errors: invalid built-in data
// (data/rules.json names the JSON pointer).
ATTNSEL_API Result<std::shared_ptr<const std::vector<RuleDoc>>> rule_docs();
// The rule with this id (exactly, else ignoring case); null when none.
ATTNSEL_API const RuleDoc* find_rule_doc(const std::vector<RuleDoc>& docs, std::string_view id);
// find_rule_doc over rule_docs(), or ErrorCode::unknown_name with the closest ids as choices.
ATTNSEL_API Result<const RuleDoc*> lookup_rule(std::string_view id);

// The page with its examples run: each example's `findings` holds what `attnsel check` reports for
// the rule. Errors: an example that cannot be run (an unknown GPU or release in data/rules.json).
ATTNSEL_API Result<RuleDoc> run_rule_examples(const RuleDoc& doc);

// ---- rendering ----

// One page for people: the summary, what it means, where it comes from, an example (with what it
// reports, when run_rule_examples() ran it), how to fix it and how to ignore it.
ATTNSEL_API std::string render_rule_text(const RuleDoc& doc, const RenderOptions& o = {});
// The "rule" document (docs/schema/rule.schema.json): the page's fields and "help_uri".
ATTNSEL_API std::string render_rule_json(const RuleDoc& doc, int indent = 2);
// The page in Markdown (a section of docs/rules.md).
ATTNSEL_API std::string render_rule_markdown(const RuleDoc& doc);
// Every rule: a table of id, origin, default level and summary (text); the "rules" document
// (JSON); docs/rules.md, an index then every page (Markdown).
ATTNSEL_API std::string render_rule_list_text(const std::vector<RuleDoc>& docs, const RenderOptions& o = {});
ATTNSEL_API std::string render_rule_list_json(const std::vector<RuleDoc>& docs, int indent = 2);
ATTNSEL_API std::string render_rule_list_markdown(const std::vector<RuleDoc>& docs);

}  // namespace attnsel
