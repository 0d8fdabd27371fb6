// `attnsel check` for one input, as a library call: a launch command's argv or a file's text,
// read, its GPUs and release decided (given, or as the file names them), every command judged.
// The C API and the Python module use it; check.hpp has the pieces it is made of.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attnsel/catalog.hpp"
#include "attnsel/check.hpp"
#include "attnsel/error.hpp"
#include "attnsel/export.hpp"
#include "attnsel/launch.hpp"
#include "attnsel/matrix.hpp"
#include "attnsel/suppress.hpp"
#include "attnsel/walk.hpp"

namespace attnsel {

// One input: a launch command (`argv`: the launcher and its arguments, bare flags, or the whole
// command as one string), else `text`, read as the format `file_name` implies (shell when empty).
struct CheckInput {
  std::optional<std::vector<std::string>> argv;
  std::string text;
  std::string file_name;
};

struct CheckRun {
  // Target GPUs as --gpu takes them ("sm90,H100", "npu"); unset: the GPUs the text names (node
  // selectors, instance types ...). An argv names none: it needs them.
  std::optional<std::string> gpus;
  std::optional<std::string> cuda;  // of the NVIDIA targets
  // The engine release (--engine-version); unset: the release the text names (image tag, pinned pip
  // install) when `release_from_input`, else the matrix given.
  std::optional<std::string> release;
  bool release_from_input = true;  // false for a matrix from a file: the file is the release
  CheckOptions options;            // strict, model kind, installed packages, the config reader ...
  // Which rules count (--select, --ignore, a settings file's; suppress.hpp). Patterns are used as
  // given: check them first (validate_rule_selection).
  RuleSelection rules;
  bool source_suppressions = true;          // honour `# attnsel: ignore[...]` comments in the text
  bool report_unused_suppressions = false;  // a comment that suppressed nothing is a finding
};

struct CheckReport {
  std::string file;                 // the input's name ("" for argv)
  std::vector<CommandCheck> checks; // one per command per target, in source order
  std::vector<Error> skipped;       // blocks that did not tokenise (warnings: --strict fails on them)
  FileContext context;              // what the text says about GPUs, releases and models
  std::string release;              // the release judged against ("" for the matrix given)
  // Remarks on the input as a whole, for people: the GPUs and release taken from the text, a
  // release newer than any matrix (a warning: --strict fails on it).
  std::vector<Diagnostic> remarks;
  // Findings about the text's suppression comments (suppression_findings): unknown rules, and unused
  // comments when asked.
  std::vector<FileFinding> file_findings;

  // True when the check fails: an error in a command; with `strict`, any warning, skipped block or
  // warning remark too. Suppressed findings count toward nothing.
  ATTNSEL_API bool fails(bool strict) const;
};

// Errors: an argv that is no launch command, text that cannot be read at all (YAML in a build
// without yaml-cpp), no target GPU (invalid_argument, where "--gpu"), an unknown GPU name
// (unknown_name with the closest match), a malformed or unknown release or CUDA version. Finding
// no command in a text is not an error: the report is empty.
ATTNSEL_API Result<CheckReport> check_input(const std::shared_ptr<const Matrix>& matrix, const Catalog& catalog,
                                            const CheckInput& input, const CheckRun& run);

// One finding of a report, flattened for bindings: a command's finding for one target, a block
// that did not tokenise (rule "check.skipped", a warning), or a remark on the whole input.
struct ReportFinding {
  CheckDiagnostic finding;  // rule, severity, message, source; flag, value and line where known
  std::string file;         // "" for argv
  std::string gpu;          // the target's label ("sm90"); "" for skipped blocks and remarks
  int column = 0;           // skipped blocks: where the tokeniser stopped
  std::optional<std::size_t> check;  // index into CheckReport::checks; unset for skipped blocks and remarks
  std::optional<Suppression> suppression;  // set for a suppressed finding: it counts toward nothing
};
// Remarks first, then each check's findings (CommandCheck::all order, then its suppressed ones), then
// the skipped blocks, then the findings about suppression comments.
ATTNSEL_API std::vector<ReportFinding> report_findings(const CheckReport& report);

// The reports as `attnsel check --format json` prints them for these inputs (named together).
ATTNSEL_API std::string render_check_json(const std::vector<CheckReport>& reports, int indent = 2);

// A file as `attnsel check` reads it: the bounded reader (read_input_file; "-" is standard input,
// its errors named `stdin_name`), then UTF-16 and UTF-32 text refused (io_error, with the iconv
// command that converts it) and text with a NUL byte anywhere marked binary (counted, never read as
// a script).
struct CheckFile {
  std::string text;
  bool binary = false;
  int nul_line = 0;  // binary: the line of the first NUL byte
};
ATTNSEL_API Result<CheckFile> read_check_file(const std::string& path, const std::string& stdin_name = "<stdin>");

// A binary file is never passed over as if it launched nothing: the shells (bash, dash) drop NUL
// bytes and run the rest of a script, so a NUL byte would hide its commands. The input problem
// (io_error at `name`:line of the first NUL) that `attnsel check` and check_paths report for it.
ATTNSEL_API Error binary_file_error(const std::string& name, const CheckFile& file);

// Files and directories checked as `attnsel check PATH...` does: walked (walk_paths), each file read
// (read_check_file) and checked (check_input, its GPUs and release as the file names them unless
// `run` gives them), files a command names (--config) read only inside the paths' directories.
struct PathCheck {
  std::vector<CheckReport> reports;  // one per file read as text, in the walk's order
  WalkResult walk;                   // the files found, and every path passed over with why
  std::size_t binary = 0;            // files passed over as binary

  // A report fails; with `strict` also a warning of the walk (a .gitignore not fully used).
  ATTNSEL_API bool fails(bool strict) const;
};
// Errors, as `attnsel check` exits 2 on them: nothing read at all (io_error: what was passed over and
// how to include it, nothing_read_message), a path that could not be read or walked (io_error, every
// such path in the message, where = the first), a file with commands and no GPU while the run names
// none (invalid_argument, where "--gpu"), and check_input's errors. Nothing is returned then.
ATTNSEL_API Result<PathCheck> check_paths(const std::shared_ptr<const Matrix>& matrix, const Catalog& catalog,
                                          const std::vector<std::string>& paths, const CheckRun& run,
                                          const WalkOptions& walk = {});
// The check document of a PathCheck, as `attnsel check --format json PATH...` prints it (the summary
// counts the files read and the paths passed over).
ATTNSEL_API std::string render_check_json(const PathCheck& check, int indent = 2);
// The reports with the totals only the caller knows (files read, paths passed over).
ATTNSEL_API std::string render_check_json(const std::vector<CheckReport>& reports, const CheckInputs& inputs,
                                          int indent = 2);

// Reads the files commands name (--config FILE, a backend config), relative to the file holding
// the command, and only inside the directories of `inputs` (a file stands for its directory; the
// current one when empty): a scanned script
// must not make attnsel read /etc/shadow or a FIFO elsewhere on the host. Files are read with the
// bounded reader (read_input_file).
ATTNSEL_API ConfigFileReader config_reader_within(const std::vector<std::string>& inputs);

}  // namespace attnsel
