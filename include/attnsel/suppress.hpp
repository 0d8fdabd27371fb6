// Living with findings: which of them count. A finding is suppressed by a comment in the checked
// file (`# attnsel: ignore[args.prefix]`) or by rule selection (--select, --ignore, a settings
// file's select, ignore and per-file-ignores: settings.hpp). A suppressed finding no longer counts
// toward the verdict or the exit code; it is moved to CommandCheck::suppressed with what suppressed
// it, counted in every format's summary and shown (JSON "suppressed", SARIF "suppressions", text
// with --verbose), never dropped.
//
// Comments (docs/ci.md, "Living with findings"), found in the text of every format alike: a comment
// opener (`#`, `//`, `<!--`, `{#`, `;`, or `..` at the start of a line) followed by
//   attnsel: ignore[ID,...]        the findings of the next line of code (the comment's own line when
//                                  code comes before it on that line), and of the whole command
//                                  when that line is one of a (multi-line) command's lines;
//   attnsel: ignore                the same, every rule;
//   attnsel: ignore-file[ID,...]   every finding of the file (anywhere in it); bare: every rule.
// "The next line of code" skips blank lines, other comment lines and code-fence lines (```,
// ~~~, ----, [source,...]): a `<!-- attnsel: ignore[...] -->` above a Markdown code block holds for
// its first command. Text after the closing `]` is free (a reason). A comment that names an
// unknown rule, or an `attnsel:` comment that is no directive, is a finding of its own
// (check.invalid-suppression): a typo never silently suppresses nothing.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attnsel/check.hpp"
#include "attnsel/error.hpp"
#include "attnsel/export.hpp"

namespace attnsel {

// A rule pattern, as --select, --ignore, settings and comments write it:
//   an id ("args.prefix", "advisory.SGL-ADV-0015", "fa4-page-size-sm100"): that rule;
//   a family, the part of ids before a '.' ("args", "advisory", "check"): every rule of it;
//   a prefix ending in '*' ("advisory.SGL-*", "fa4-*"; "*" alone: every rule).
// Ids are matched exactly (case and all).
ATTNSEL_API bool rule_pattern_matches(std::string_view pattern, std::string_view rule);

// nullopt when `pattern` names at least one rule attnsel can report (rule_docs()); else
// ErrorCode::unknown_name, where = `where`, naming the pattern and the closest ids (suggestion,
// choices). Also the error of invalid built-in rule data.
ATTNSEL_API std::optional<Error> check_rule_pattern(std::string_view pattern, const std::string& where);

struct RulePattern {
  std::string pattern;
  std::string where;  // where it was given: "--ignore", "--select", ".attnsel.toml:4:11"
};

// Rules ignored for some files only (a settings file's per-file-ignores).
struct PathRules {
  std::string glob;  // gitignore syntax (walk.hpp's glob_match), relative to RuleSelection::base
  std::string where;  // "pyproject.toml:12:1"
  std::vector<RulePattern> ignore;
};

// Which rules count. A finding counts when `select` is empty or one of its patterns matches the
// finding's rule, and no pattern of `ignore` (nor of a `per_path` entry whose glob matches the
// finding's file) does.
struct RuleSelection {
  std::vector<RulePattern> select, ignore;
  std::vector<PathRules> per_path;
  // The directory per_path globs are relative to (a settings file's); "": the current directory.
  std::string base;
  bool empty() const { return select.empty() && ignore.empty() && per_path.empty(); }
};
// The first pattern that names no rule (check_rule_pattern, where = the pattern's), or nullopt.
ATTNSEL_API std::optional<Error> validate_rule_selection(const RuleSelection& rules);

// The suppression comments of one file, read once (linear in its size, whatever its comments hold),
// and which of their rules suppressed something so far.
class ATTNSEL_API SourceSuppressions {
 public:
  SourceSuppressions(std::string_view text, std::string file);
  ~SourceSuppressions();
  SourceSuppressions(SourceSuppressions&&) noexcept;
  SourceSuppressions& operator=(SourceSuppressions&&) noexcept;
  SourceSuppressions(const SourceSuppressions&) = delete;
  SourceSuppressions& operator=(const SourceSuppressions&) = delete;

  const std::string& file() const;
  // The comments found (directives), for tests and tools.
  std::size_t size() const;
  // The first matching comment for a finding of `rule` on line `line` of a command whose lines are
  // [first, last] (0, 0: no command), marking it used; nullopt when none holds for it.
  std::optional<Suppression> match(std::string_view rule, int line, int first, int last);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
  friend ATTNSEL_API std::vector<FileFinding> suppression_findings(const SourceSuppressions& source,
                                                                   const RuleSelection& rules, bool report_unused);
};

// Moves each finding of `checks` that is suppressed into CommandCheck::suppressed: first by a comment
// of `source` (null: none; the file's own commands only), then by `rules`. The lists keep their
// order. Every diagnostic with a rule id can be suppressed, notes too.
ATTNSEL_API void suppress_findings(std::vector<CommandCheck>& checks, SourceSuppressions* source,
                                   const RuleSelection& rules);

// The findings about a file's comments, once every command of the file went through
// suppress_findings: each unknown rule or malformed directive (check.invalid-suppression, a warning);
// with `report_unused`, each rule of a comment that suppressed nothing (check.unused-suppression, a
// warning; a bare `ignore` is one). `rules` applies to them as to any finding (--ignore
// check.unused-suppression); a comment cannot suppress them. In line order.
ATTNSEL_API std::vector<FileFinding> suppression_findings(const SourceSuppressions& source, const RuleSelection& rules,
                                                          bool report_unused);

// The suppression `rules` gives a finding of `rule` in `file`, or nullopt when it counts.
ATTNSEL_API std::optional<Suppression> selection_suppression(const RuleSelection& rules, std::string_view rule,
                                                              const std::string& file);

}  // namespace attnsel
