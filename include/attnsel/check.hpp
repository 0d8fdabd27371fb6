// `attnsel check`: judge SGLang launch commands (from argv, scripts, Dockerfiles, compose and
// Kubernetes YAML, Markdown) against one or more target GPUs before anything is launched.
//
// launch.hpp finds the commands and reads their flags; this header maps each command to a
// Request per target GPU, runs the engine, and adds what only a check can say (unknown names
// with the flag's line, values that come from the environment, the model kind it assumed).
// Rendering (text, JSON, GitHub annotations, Markdown) lives in src/render/check_render.cpp; SARIF,
// concise lines and GitLab Code Quality in src/render/check_{sarif,concise,gitlab}.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "attnsel/catalog.hpp"
#include "attnsel/error.hpp"
#include "attnsel/export.hpp"
#include "attnsel/launch.hpp"
#include "attnsel/launch_args.hpp"
#include "attnsel/profile.hpp"
#include "attnsel/render.hpp"
#include "attnsel/selection.hpp"

namespace attnsel {

// One GPU (or platform) a command is checked for.
struct CheckTarget {
  std::string label;  // as the user wrote it in the list: "sm90", "H100", "npu"
  DeviceInfo device;
  // Where the target came from, for people: "--gpu", or the file's hint that named it
  // ("README.md:40 (heading: AMD MI300X)"); "" where the caller does not say.
  std::string from;
};

// A comma-separated list: GPU names and architectures as --gpu takes them (sm90, H100, B200,
// MI300X, gfx942 ...), or a platform with no GPU catalog entry: npu (alias ascend), xpu, cpu,
// mps, rocm (plans for an MI300X). `cuda` applies to the NVIDIA targets only; without it each
// NVIDIA target gets the catalog's assumption. Errors: an empty list or entry, an unknown name
// (with the closest one), a malformed CUDA version.
ATTNSEL_API Result<std::vector<CheckTarget>> resolve_check_targets(const Catalog& catalog, std::string_view gpu_list,
                                                                   const std::optional<std::string>& cuda);

// What one command of a file is judged on: the GPUs and the platform its part of the file is for.
struct CommandScope {
  // The GPU list: `given` (--gpu) when set; else the GPUs named by the innermost part of the file
  // that holds the command and names any (a section, tab, admonition, the sentence before its code
  // block, its YAML document), else every GPU the file names; "" when the file names none.
  std::string gpus;
  std::vector<ContextHint> gpus_from;  // the hints the list came from; empty when given
  // The platform it runs on ("rocm", "cuda", "npu", "tpu" ...) where the command or its part of the
  // file says so: the command's own --device or a marker on its lines (a ROCm image, /dev/kfd),
  // else the innermost part's title, marker or GPUs; unset when nothing says, or parts disagree.
  std::optional<ContextHint> platform;
  bool own_platform = false;  // the command itself names its platform
  // The GPUs of the file's entry that holds the command (a YAML key naming them: `B200:` under
  // `hardware:`): its own, judged only on targets of their architecture (entry_targets).
  std::vector<ContextHint> entry;
  // For a command outside every entry, the file's entries (GPUs and platforms): the targets they
  // are for run their own commands, and are not this one's (entry_targets).
  std::vector<ContextHint> elsewhere;
};
ATTNSEL_API CommandScope command_scope(const FileContext& context, const LaunchCommand& command,
                                       const std::optional<std::string>& given);

// The targets on the command's platform (all of them when it has none), each with `from` set:
// "--gpu" (or `given_from`) when given, else where the file named it.
ATTNSEL_API std::vector<CheckTarget> scoped_targets(const std::vector<CheckTarget>& targets, const CommandScope& scope,
                                                    const std::string& file, const std::string& given_from = "--gpu");

// The targets a reading of a branch the script takes by the GPU's compute capability runs on
// (LaunchCommand::capability): those whose capability agrees, or is unknown; all of them for any
// other reading.
ATTNSEL_API std::vector<CheckTarget> capability_targets(const std::vector<CheckTarget>& targets,
                                                        const LaunchCommand& command);
// Why such a reading has no target left: the capability its branch needs or excludes, the test's
// line, and the targets it was given.
ATTNSEL_API std::string capability_message(const LaunchCommand& command, const std::vector<CheckTarget>& targets);

// The targets of a command in an entry for some GPUs (CommandScope::entry): those of the same
// platform and architecture as one of them (sm90 for an `H100:` entry, gfx942 for `MI300X:`). For a
// command outside every entry, the targets no entry of the file is for (CommandScope::elsewhere).
ATTNSEL_API std::vector<CheckTarget> entry_targets(const std::vector<CheckTarget>& targets, const CommandScope& scope);
// Why a command has no target left after entry_targets: the GPUs its entry is for, or the entries
// that run instead on the targets, where, and the targets.
ATTNSEL_API std::string entry_message(const CommandScope& scope, const std::vector<CheckTarget>& targets);

// Why a command has no target left after scoped_targets, and how to check it: the platform it runs
// on and where that is said; the targets it was given (`given_from`, or the GPUs the file names).
ATTNSEL_API std::string unscoped_message(const CommandScope& scope, const std::vector<CheckTarget>& targets,
                                         const std::string& given_from);

struct CheckOptions {
  // The kind of model assumed when a command's model resolves nowhere (not a kind name, not in
  // the model table, no local config.json). Unset: the kind the explicit backends imply (an
  // MLA-only backend means an MLA model), else mha. Either way a note says so.
  std::optional<AttentionKind> model_kind;
  bool strict = false;  // documented caveats (FlashMLA with FP8 KV) are errors; warnings fail the check
  // Diffusion commands (`sglang generate`, `sglang serve --model-type diffusion`) are judged
  // against this matrix (the built-in sglang-diffusion profile); without one they are noted as
  // not checked.
  std::shared_ptr<const Matrix> diffusion_matrix;
  std::vector<std::string> installed;  // optional Python packages on the target hosts (--installed)
  bool installed_known = false;
  // The engine profile whose launch grammar parses the command; null: the built-in profile of
  // the command's engine (of the matrix's engine for bare flags).
  std::shared_ptr<const EngineProfile> profile;
  // The engine release the command runs: picks the launch grammar (and, for handed-off engines,
  // the matrix generation). Unset: the newest.
  std::optional<std::string> release;
  // The engine `release` is a release of; empty: every command's. A command of another engine
  // runs the release `releases` names for its engine (a file with images of two engines), else the
  // newest.
  std::string release_engine;
  std::map<std::string, std::string> releases;
  // Reads the files a command names (`--config FILE`, a backend config file); unset: such files
  // are noted as not read. A reader refuses a file (ErrorCode::invalid_argument) to keep a
  // scanned script from naming files outside the checked tree.
  ConfigFileReader read_config;
  // The model, when the caller resolved it (attnsel select --model); the command's is then not read.
  std::optional<ModelTraits> model;
  // A draft tree width without a speculative algorithm means the profile's first algorithm
  // (attnsel select's shorthand) rather than no speculative decoding (what the engine does).
  bool topk_implies_speculative = false;
  // A model attnsel cannot resolve is an error rather than a note (`check --unknown-model error`).
  bool unknown_model_error = false;
  // Match the built-in advisories (known engine bugs, docs/advisories.md): findings advisory.<ID>.
  bool advisories = true;
  // A failing command gets CommandCheck::fix and fix_all_targets (fix.hpp: changed copies of it
  // judged, at most kFixBudgetPerTarget a target).
  bool propose_fixes = true;
};

enum class Verdict : std::uint8_t { clean, warning, error };
ATTNSEL_API std::string_view name_of(Verdict v);

// A finding located in the checked source.
struct CheckDiagnostic {
  Diagnostic diagnostic;  // rule, severity, message, source, backend, phase
  std::string flag;       // the flag it is about, as written ("--attention-backend"); "" when none
  std::string value;      // that flag's value as written ("trtllm_mla"); "" for a boolean flag or none
  int line = 0;           // the flag's line, else the command's; 0 for the command-line form
  // Where the flag's token starts and ends on `line`, 1-based, in characters; end_column is one past
  // its last character. 0 when unknown (locate_columns() fills them from the file's text).
  int column = 0, end_column = 0;
};

// Whether a finding is reported as one (annotated, counted, suppressible): errors, warnings and the
// check's own notes (rules check.*). The engine's other notes explain a plan and are not findings.
ATTNSEL_API bool is_reported_finding(const CheckDiagnostic& d);

// A command's request as its engine would read it, before any GPU is known: the flags parsed
// with the engine's grammar and mapped through the profile's bindings. `findings` are what the
// engine would exit on (errors) and what attnsel assumed or could not model (notes); when
// `plannable` is false the engine would not get as far as selecting a backend.
struct PreparedRequest {
  Request request;
  std::vector<CheckDiagnostic> findings;
  std::vector<std::string> passed_over;
  bool plannable = true;
  ParsedArgs args;
};
ATTNSEL_API PreparedRequest prepare_request(const std::shared_ptr<const Matrix>& matrix, const EngineProfile& profile,
                                            const Grammar& grammar, const Catalog& catalog, const LaunchCommand& command,
                                            const CheckOptions& options = {});

// One flag of a command changed: its value replaced (`to` set), or the flag dropped so that the
// engine decides (`to` empty). `flag` is as the command writes it: an option
// ("--attention-backend") or, for a choice the engine reads from the environment, the variable.
struct FlagChange {
  std::string flag, from, to;
  bool environment = false;  // an environment variable of the command (VLLM_ATTENTION_BACKEND=...)
  bool drops() const { return to.empty(); }
  friend bool operator==(const FlagChange& a, const FlagChange& b) {
    return a.flag == b.flag && a.from == b.from && a.to == b.to && a.environment == b.environment;
  }
};

// Changes that make a failing command pass (fix.hpp finds them), and the command after them (its
// args and environment changed; its file and lines those of the command changed).
struct CommandFix {
  std::vector<FlagChange> changes;
  LaunchCommand command;
};

// How a finding was suppressed (suppress.hpp): it no longer counts toward the verdict or the exit
// code, and is kept, counted and shown as suppressed, never dropped.
struct Suppression {
  enum class Kind : std::uint8_t {
    in_source,  // a comment in the checked file (`# attnsel: ignore[args.prefix]`)
    external,   // --select, --ignore, or a settings file's select, ignore or per-file-ignores
  };
  Kind kind = Kind::external;
  std::string by;       // where: the comment's "file:line", "--ignore", "--select", ".attnsel.toml:4:11"
  std::string pattern;  // the rule pattern that matched ("args.prefix", "advisory", "*" for a bare ignore)
};

struct SuppressedFinding {
  CheckDiagnostic finding;
  Suppression suppression;
};

// A finding about a file's text rather than one of its commands: a suppression comment naming an
// unknown rule (check.invalid-suppression), or one that suppressed nothing (check.unused-suppression).
struct FileFinding {
  std::string file;
  CheckDiagnostic finding;  // rule, severity, message, line and column
  std::optional<Suppression> suppression;  // set when --ignore or --select suppressed it
  // Whether it makes the check fail: an error, or a warning under --strict; never when suppressed.
  ATTNSEL_API bool fails(bool strict) const;
};

// One command judged for one target.
struct CommandCheck {
  LaunchCommand command;
  CheckTarget target;
  ModelTraits model;                     // as resolved or assumed
  std::optional<Selection> selection;    // absent when SGLang would reject the command before selecting
                                         // (unknown names, argument errors) or it is not modelled (diffusion)
  std::vector<CheckDiagnostic> findings; // the check's own findings (rules "check.*")
  std::vector<CheckDiagnostic> errors, warnings, notes;  // the selection's, in its order, with lines
  std::vector<std::string> passed_over;  // flags read and knowingly not judged (--tp, --mm-attention-backend ...)
  // When the check fails (CheckOptions::propose_fixes): the nearest command that passes on this
  // target, and one that passes on every target of the command (the same in each of its checks);
  // each was judged. Unset where no change of the flags the errors name passes.
  std::optional<CommandFix> fix, fix_all_targets;
  // Findings moved out of the lists above by suppress_findings (suppress.hpp): not in the verdict.
  std::vector<SuppressedFinding> suppressed;

  Verdict verdict() const;
  // False when a choice of the command (an explicit backend, a KV dtype) is one the matrix has no data
  // for: the command is then not judged (finding select.not-judged), whatever its verdict says.
  ATTNSEL_API bool judged() const;
  // True when the check fails: any error, or any warning under --strict.
  ATTNSEL_API bool fails(bool strict) const;
  // Every finding, the check's own first, then the selection's errors, warnings and notes.
  std::vector<const CheckDiagnostic*> all() const;
};

// Judges one command for every target, in target order.
// The releases a file names for engines other than `engine` (the one the file is judged for): the
// first hint per engine that holds a release, its `value` the release ("0.13.0"). They fill
// CheckOptions::releases, with release_engine = engine.
// The message of rule check.release-older: `release` (of `engine`, given `where`: " (--engine-version)",
// " from FILE:LINE (...)", or empty) is judged against the generation that begins at `oldest`.
ATTNSEL_API std::string release_older_message(std::string_view engine, std::string_view release, std::string_view where,
                                              const ReleaseVersion& oldest);
ATTNSEL_API std::vector<ContextHint> releases_of_other_engines(const std::vector<ContextHint>& hints,
                                                                const std::string& engine);

ATTNSEL_API std::vector<CommandCheck> check_command(const std::shared_ptr<const Matrix>& matrix, const Catalog& catalog,
                                                    const LaunchCommand& command,
                                                    const std::vector<CheckTarget>& targets,
                                                    const CheckOptions& options = {});

// Fills CheckDiagnostic::column and end_column of `checks` from the text of the file that holds
// their command: the column where the flag's token starts on the finding's line. A column is set
// only where it is certain: the flag occurs exactly once on that line as a whole token (`--tp` is
// not found in `--tp-size`) and the text before it is valid UTF-8; otherwise it stays 0.
ATTNSEL_API void locate_columns(std::vector<CommandCheck>& checks, std::string_view file_text);

// Where each line of a file's text starts, found once: locating the findings of each of a file's
// many commands then costs the lines looked at, not the whole file again (30,000 commands).
class ATTNSEL_API FileLines {
 public:
  explicit FileLines(std::string_view text);
  // Line `line` (1-based) without its "\n" and a trailing "\r"; false when there is no such line.
  bool get(int line, std::string_view& out) const;

 private:
  std::string_view text_;
  std::vector<std::size_t> starts_;
};
// locate_columns with the file's lines found already (`lines` must outlive the call only).
ATTNSEL_API void locate_columns(std::vector<CommandCheck>& checks, const FileLines& lines);

// ---- rendering ----

// For people: per command its file:line and the command shortened; per target the verdict, the
// findings with their lines, what SGLang would run and the launch flags that say so.
ATTNSEL_API std::string render_check_text(const std::vector<CommandCheck>& checks, const RenderOptions& o = {});
// The check document (kind "check", docs/schema/check.schema.json): "results" holds one object per
// command per target: render_json's object plus "file", "line", "gpu", "launcher", "command",
// "args", "verdict", "check_findings" and "passed_over"; every entry of errors, warnings and notes
// gains "line", "column" and "flag" where known. Then "skipped", "summary" and "ok".
ATTNSEL_API std::string render_check_json(const std::vector<CommandCheck>& checks, int indent = 2);
// GitHub Actions workflow commands, one line per error (::error), warning (::warning) and note of
// the check itself (::notice), on the flag's own line (and column) when known. A finding every
// target shares is printed once; one only some targets have names them ("[sm90] ..."). Then a
// summary line, and a ::notice with the totals when there are more than GitHub shows.
ATTNSEL_API std::string render_check_github(const std::vector<CommandCheck>& checks);

// The escapes of a workflow command (actions/toolkit packages/core/src/command.ts): data
// escapes %, CR and LF; a property also : and ,.
ATTNSEL_API std::string github_escape_data(std::string_view s);
ATTNSEL_API std::string github_escape_property(std::string_view s);

// Blocks the launch readers could not tokenise (LaunchScan::skipped, where = "file:line:col"):
// each one finding, a warning (--strict fails on it).
ATTNSEL_API std::string render_skipped_text(const std::vector<Error>& skipped);
// ::warning file=F,line=L,col=C::... per skipped block.
ATTNSEL_API std::string render_skipped_github(const std::vector<Error>& skipped);
// render_check_json's document with "skipped" holding one object per skipped block:
// {"file", "line", "column", "message"}. Each result whose file has hints in `contexts` (file
// name -> what it says) gains "file_context": {"gpus", "releases", "models"}, each hint
// {"value", "line", "source", "text"}.
ATTNSEL_API std::string render_check_json(const std::vector<CommandCheck>& checks, const std::vector<Error>& skipped,
                                          const std::vector<std::pair<std::string, FileContext>>& contexts = {},
                                          int indent = 2);

// ---- streaming: what `attnsel check` prints, written as each command is judged ----

// text: for people; json: one object (docs/output.md, docs/schema/check.schema.json); github:
// workflow-command annotations; markdown: a report for $GITHUB_STEP_SUMMARY and pull requests;
// sarif: SARIF 2.1.0 (code scanning); concise: one `file:line:col: severity: message [rule]` line per
// finding (editors, problem matchers); gitlab: a GitLab Code Quality report (docs/ci.md).
enum class CheckFormat { text, json, github, markdown, sarif, concise, gitlab };
// Every format's name, in the order `--format` lists them.
ATTNSEL_API const std::vector<std::string>& check_format_names();
ATTNSEL_API std::string_view name_of(CheckFormat f);
// A format by name ("sarif"); an unknown one is ErrorCode::unknown_name with the choices and the
// closest of them.
ATTNSEL_API Result<CheckFormat> parse_check_format(std::string_view name);

// GitHub keeps a step summary up to 1 MiB; the Markdown report stays under this by default.
inline constexpr std::size_t kCheckMarkdownMaxBytes = 1000 * 1000;
// Annotations of one kind (error, warning, notice) GitHub shows for one step; the rest are dropped.
inline constexpr std::size_t kGithubAnnotationsPerKind = 10;

struct CheckWriterOptions {
  RenderOptions render;        // text: colours
  int indent = 2;              // json: clamped to [-1, 16]; -1 is one line
  bool strict = false;         // as CheckOptions::strict: a command with a warning counts as failing
  std::size_t max_bytes = kCheckMarkdownMaxBytes;  // markdown: the report's size, a line says what was cut
  // github: the Markdown report also goes to the step summary, so the notice about annotations
  // GitHub does not show points there.
  bool step_summary = false;
  // text and concise: only what fails the check (errors; warnings too under strict), and nothing at
  // all when nothing fails (-q). The other formats are documents and ignore it.
  bool quiet = false;
  // text: the suppressed findings too, each with what suppressed it (--verbose); the other formats
  // always carry them (JSON "suppressed", SARIF "suppressions") or count them (the summary lines).
  bool show_suppressed = false;
};

// What only the caller knows about the inputs, for the totals the formats end with.
struct CheckInputs {
  std::size_t files = 0;                // files read (0: the distinct files of the commands written)
  std::size_t files_with_commands = 0;  // of those, files holding at least one launch command
  std::size_t binary_skipped = 0;       // files passed over as binary
  std::size_t skipped_directories = 0;  // folders a directory walk passed over (walk.hpp), each counted once
  std::size_t skipped_files = 0;        // files a directory walk passed over: other kinds, .gitignore'd, --exclude'd ...
  std::vector<std::string> problems;    // inputs that could not be read or checked (exit 2), as told on stderr
  std::vector<std::string> warnings;    // other warnings told on stderr (a release newer than any matrix): --strict fails on them
};

// Writes check results as they are made, so that memory does not grow with the number of commands
// checked (the Markdown report is bounded by max_bytes instead). The render_* functions below use
// the same writers: text blocks then the summary line; one JSON object whose "results" stream and
// whose "summary" closes it; workflow commands then the summary line; the Markdown report at the end.
class ATTNSEL_API CheckWriter {
 public:
  virtual ~CheckWriter() = default;
  // The checks of one command (one per target, as check_command returns them); `context` is what
  // the command's file says about GPUs, releases and models, or null.
  virtual void command(const std::vector<CommandCheck>& checks, const FileContext* context) = 0;
  virtual void skipped(const std::vector<Error>& blocks) = 0;
  // Findings about a file's suppression comments (suppression_findings), after its commands.
  virtual void file_findings(const std::vector<FileFinding>& findings) = 0;
  // Closes the output (the JSON object, the summaries) and flushes it.
  virtual void finish(const CheckInputs& inputs) = 0;
  void finish() { finish(CheckInputs{}); }
};

ATTNSEL_API std::unique_ptr<CheckWriter> make_check_writer(CheckFormat format, std::ostream& out,
                                                           const CheckWriterOptions& options);
ATTNSEL_API std::unique_ptr<CheckWriter> make_check_writer(CheckFormat format, std::ostream& out,
                                                           const RenderOptions& o = {}, int indent = 2);

// The Markdown report of checks (a heading, the totals, a table of every finding and one of every
// command's verdicts), as CheckFormat::markdown writes it.
ATTNSEL_API std::string render_check_markdown(const std::vector<CommandCheck>& checks,
                                              const std::vector<Error>& skipped = {});

}  // namespace attnsel
