// What every `attnsel check` writer shares (src/render/check_*.cpp): a command written back as
// text, its findings as they are reported (one per finding however many targets have it), the
// totals, and the streaming JSON layout the JSON, SARIF and GitLab writers print with.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attnsel/check.hpp"

namespace attnsel::detail {

// An argument as a shell would need it written back.
std::string quoted(const std::string& a);
// The command as one line: the launcher (unless the command is bare flags), then its arguments.
std::string command_text(const LaunchCommand& cmd);
// "--attention-backend trtllm_mla: message"
std::string located_message(const CheckDiagnostic& d);

bool same_command(const LaunchCommand& a, const LaunchCommand& b);

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

// One finding of one command as it is reported: once however many targets have it, naming the
// targets when only some do. Errors, warnings and the check's own notes; the engine's notes explain
// a plan and are not findings.
struct Finding {
  Severity severity = Severity::info;
  std::string file, rule, message;  // message: "--flag value: text"
  std::string text;                 // the diagnostic's own message, without the flag
  std::string flag, value, source;  // as CheckDiagnostic and Diagnostic have them
  int line = 0, column = 0, end_column = 0;
  std::vector<std::string> gpus;  // the targets it holds on
  std::size_t targets = 0;        // the targets the command was checked for
  // For an error on a flag that its command's fix changes: the fix ("--attention-backend trtllm_mla
  // -> flashinfer"), or each target's when they differ ("[sm90] ...; [MI300X] ...").
  std::string fix;
  std::optional<Suppression> suppression;  // set for a suppressed finding: it counts toward nothing
  bool on_every_target() const { return gpus.size() >= targets; }
  // "[sm90] message" when only some targets have it, then " (fix: ...)" when it has one.
  std::string targeted_message() const {
    return (on_every_target() ? message : fmt::format("[{}] {}", fmt::join(gpus, ", "), message)) + fix_suffix();
  }
  std::string fix_suffix() const { return fix.empty() ? "" : " (fix: " + fix + ")"; }
  // Whether it makes the check fail: an error, or a warning under --strict.
  bool fails(bool strict) const {
    return !suppression && (severity == Severity::error || (strict && severity == Severity::warning));
  }
};

std::vector<Finding> findings_of(const CommandCheck* begin, const CommandCheck* end);
// The suppressed findings of the same checks (CommandCheck::suppressed), alike, each with its suppression.
std::vector<Finding> suppressed_of(const CommandCheck* begin, const CommandCheck* end);
// A finding about a file's comments (FileFinding) as it is reported.
Finding file_finding(const FileFinding& f);
// "suppressed by serve.sh:3 (args.prefix)", "suppressed by --ignore (advisory)", "not selected (--select)".
std::string suppressed_by(const Suppression& s);

// A skipped block (LaunchScan::skipped) as a finding of rule "check.skipped" (a warning), at the
// place its `where` ("file:line:col") names.
Finding skipped_finding(const Error& e);

// "file:line:col" (the file may hold ':') -> file, line, column (0 when absent).
struct SkippedPlace {
  std::string file;
  int line = 0, column = 0;
};
SkippedPlace place_of(const std::string& where);

// What the summaries count, over everything written so far: commands (not command x target
// pairs), findings as reported (one shared by several targets of a command counts once).
struct Tally {
  bool strict = false;
  std::size_t commands = 0, failing = 0, warned = 0, clean = 0, results = 0;
  std::size_t errors = 0, warnings = 0, notes = 0, skipped = 0;
  std::size_t suppressed = 0;     // findings suppressed (counted as findings are: once per command)
  std::size_t file_failing = 0;   // findings about files' comments that fail the check
  std::vector<std::string> gpus;
  std::set<std::string> files;  // the files of the commands written

  // The command's worst outcome over its targets: 2 failing, 1 with warnings, 0 clean.
  static int outcome(const CommandCheck* begin, const CommandCheck* end, bool strict);
  void add(const CommandCheck* begin, const CommandCheck* end, const std::vector<Finding>& findings);
  // Findings about a file's comments (file_finding), suppressed ones counted as such.
  void add_file(const std::vector<Finding>& findings);
  std::string commands_line() const;
  // As the JSON summary counts them: skipped blocks (warnings too, in annotations) on their own.
  std::string findings_line() const;
  // Whether the exit code is 0 (without --exit-zero): what the CLI decides, from the same counts.
  bool ok(const CheckInputs& in) const;
};

// A Markdown table cell: one line, Markdown's punctuation and HTML escaped, control characters shown,
// at most `limit` bytes (cut at a character).
std::string md_cell(std::string_view text, std::size_t limit = 1000);
// A code span: a fence longer than any run of backticks inside, `|` escaped (GFM tables split on it
// even in code), at most `limit` bytes.
std::string md_code(std::string_view text, std::size_t limit = 300);

// Prose for Markdown from attnsel's own data (rule pages, SARIF help): one line, `code spans` kept,
// Markdown's punctuation and HTML escaped outside them, control characters shown.
std::string md_prose(std::string_view text);

// The "summary" object of the JSON document (docs/schema/check.schema.json).
nlohmann::json summary_json(const Tally& t, const CheckInputs& in);

// One JSON object written member by member, arrays element by element, in the layout of
// json::dump(indent), each value through json_text() and the JSON channel's encoder (invalid UTF-8
// replaced, `##[` and bidi controls escaped) as the JSON writer has always printed them. Nothing is
// kept: what is written is gone, so memory stays flat however many elements an array gets.
class JsonStream {
 public:
  JsonStream(std::ostream& out, int indent);
  // Opens the document: "{" (an object) or "[" (an array, GitLab's report).
  void open_object();
  void open_array();
  // A member of the open object, its value whole.
  void member(const char* name, const nlohmann::json& value);
  // A member whose value is an array to be written element by element: `"name": [`.
  void open_member_array(const char* name);
  // A member whose value is an object to be written member by member: `"name": {`.
  void open_member_object(const char* name);
  // An element of the innermost open array.
  void element(const nlohmann::json& value);
  // An element of the innermost open array that is an object to be written member by member.
  void open_element_object();
  // Closes the innermost open array or object.
  void close();
  int depth() const { return static_cast<int>(open_.size()); }

 private:
  struct Level {
    bool array = false;
    std::size_t count = 0;  // members or elements written
  };
  void key(const char* name);
  void value_at(const nlohmann::json& j, int depth);  // after its key or comma
  void write_padded(std::string_view text, int pad);
  void newline_at(int depth);

  std::ostream& out_;
  int indent_;
  std::vector<Level> open_;
};

// A finding's fingerprint, the same on every run and machine for the same finding of the same
// command (GitLab's fingerprint, SARIF's partialFingerprints): SHA-256 of its rule, file, line, the
// command's text, the flag and value it is about and the targets it holds on. `occurrence` tells
// apart findings that agree on all of these (0 for the first).
std::string fingerprint(const Finding& f, const LaunchCommand& command, std::size_t occurrence = 0);

// "file:line:col: " as compilers print it (the parts that are known), "" without a file; the file
// through the GitHub channel's encoder.
std::string concise_place(const std::string& file, int line, int column);
// error, warning, note.
std::string_view severity_word(Severity s);

// The writers of the formats that live in their own files (check_sarif.cpp, check_concise.cpp,
// check_gitlab.cpp); make_check_writer picks among them.
std::unique_ptr<CheckWriter> make_sarif_writer(std::ostream& out, const CheckWriterOptions& o);
std::unique_ptr<CheckWriter> make_concise_writer(std::ostream& out, const CheckWriterOptions& o);
std::unique_ptr<CheckWriter> make_gitlab_writer(std::ostream& out, const CheckWriterOptions& o);

}  // namespace attnsel::detail
