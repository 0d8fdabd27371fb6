// The attnsel command line: shared pieces. Each subcommand lives in its own file and registers
// itself; main.cpp only parses and maps failures to exit codes.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "attnsel/catalog.hpp"
#include "attnsel/encode.hpp"
#include "attnsel/error.hpp"
#include "attnsel/matrix.hpp"

namespace attnsel::cli {

// Documented in the README; CI pipelines depend on them. kUsage is also a failed write (standard
// output, the step summary): the output is incomplete, never a verdict.
enum ExitCode : int { kOk = 0, kInvalidPlan = 1, kUsage = 2, kProbeFailed = 3, kNotJudged = 4 };
// The exit codes of `attnsel [select|explain]`, for its --help and the man page's EXIT STATUS.
inline constexpr const char* kSelectExitCodes =
    "Exit codes: 0 valid plan, 1 no valid plan, 2 bad usage or input, 3 probing failed, 4 a choice attnsel cannot "
    "judge (a backend or KV dtype its matrix has no data for).";

// `attnsel check ... --files PATH...`: every argument after it is a path, never an option.
inline constexpr std::string_view kFilesMarker = "--files";
// The paths after --files (main() takes them out of argv before CLI11 parses it); nullopt without it.
const std::optional<std::vector<std::string>>& files_after_marker();
// How standard output is encoded from now on (check: its --format; the colours when kept).
void set_output_channel(OutputChannel channel, bool keep_colors);

// Thrown by commands, turned into "attnsel: message" on stderr and the exit code by main(); under
// a JSON format also into an "error" document on stdout (docs/output.md).
struct Failure {
  int code;
  std::string message;
  std::optional<Error> error = std::nullopt;  // the library's error behind the message: where, valid choices, suggestion
};
// A library error as a Failure (usage, exit 2, unless `code` says otherwise).
[[noreturn]] void fail(const Error& e, int code = kUsage);

// The output formats of docs/output.md. Each subcommand offers the ones that make sense for it.
enum class Format { text, json, markdown, github };
// --format FORMAT (the first of `formats` is the default; "table" is read as text) and --json, an
// alias of --format json.
struct FormatChoice {
  std::string format;
  bool json = false;
  void add_options(CLI::App& app, const std::vector<std::string>& formats);
  Format get() const;
};

// Returns the exit code when its subcommand (or the root command) was invoked, nullopt otherwise.
using Command = std::function<std::optional<int>()>;

// --color always|never, else (auto) a terminal with NO_COLOR unset or empty and TERM not dumb.
bool use_color();
// How the default engine's first launcher is typed ("python3 -m MODULE", "PROGRAM SUBCOMMAND"), for
// examples in messages and the man page; "COMMAND" when there is none.
std::string launcher_example();

// How wide tables may be: the terminal's width (COLUMNS when set) when stdout is a terminal, else 0
// (as wide as their content).
std::size_t output_width();
// --color auto|always|never on `app` and every subcommand under it.
void add_color_option(CLI::App& app);

// A subcommand whose options are defined only when it is invoked (CLI11's pre-parse callback) or
// when the whole definition is read (completions, the man page): `define`, then --color, so the help
// lists them in the usual order. select and explain repeat the root's 30 options; defining them for
// every run cost more than the rest of `attnsel --version`.
void define_options_on_use(CLI::App& app, std::function<void(CLI::App&)> define);
bool options_on_use(const CLI::App& app);
// Defines every deferred subcommand's options now.
void define_all_options();

// Which matrix: --matrix FILE, else ATTNSEL_MATRIX, else the built-in one of --engine (default
// sglang) for --sglang-version (default: the newest generation).
struct MatrixChoice {
  std::optional<std::string> file;
  std::string engine = "sglang";
  std::optional<std::string> release;
  void add_options(CLI::App& app);
};
// Exit 2 when the matrix is invalid or the engine/release unknown.
std::shared_ptr<const Matrix> load_matrix_or_fail(const MatrixChoice& choice);
std::shared_ptr<const Matrix> load_matrix_or_fail(const std::optional<std::string>& path);
std::shared_ptr<const Catalog> catalog_or_fail();

// The root command, `select` and `explain`; the apps whose leftover arguments are the engine's flags
// are added to `engine_flag_apps`.
Command add_select_commands(CLI::App& app, std::vector<CLI::App*>& engine_flag_apps);
Command add_matrix_command(CLI::App& app);
Command add_probe_command(CLI::App& app);
Command add_versions_commands(CLI::App& app);  // `matrix --versions`, `matrix diff`: after add_matrix_command
Command add_check_command(CLI::App& app);  // `attnsel check`: launch commands, scripts and manifests
Command add_completion_command(CLI::App& app);  // `attnsel completion bash|zsh|fish`, `attnsel man`
Command add_advisories_command(CLI::App& app);  // `attnsel advisories`: the known engine bugs
Command add_rule_command(CLI::App& app);        // `attnsel rule ID`, `attnsel rule --list`: the rule pages

}  // namespace attnsel::cli
