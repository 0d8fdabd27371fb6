// The attnsel command line: shared pieces. Each subcommand lives in its own file and registers
// itself; main.cpp only parses and maps failures to exit codes.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "attnsel/catalog.hpp"
#include "attnsel/matrix.hpp"

namespace attnsel::cli {

// Documented in the README; CI pipelines depend on them.
enum ExitCode : int { kOk = 0, kInvalidPlan = 1, kUsage = 2, kProbeFailed = 3 };

// Thrown by commands, turned into "attnsel: message" on stderr and the exit code by main().
struct Failure {
  int code;
  std::string message;
};

// Returns the exit code when its subcommand (or the root command) was invoked, nullopt otherwise.
using Command = std::function<std::optional<int>()>;

bool use_color();  // a terminal, and NO_COLOR unset or empty

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

Command add_select_commands(CLI::App& app);  // the root command, `select` and `explain`
Command add_matrix_command(CLI::App& app);
Command add_probe_command(CLI::App& app);
Command add_versions_commands(CLI::App& app);  // `matrix --versions`, `matrix diff`: after add_matrix_command
Command add_check_command(CLI::App& app);  // `attnsel check`: launch commands, scripts and manifests

}  // namespace attnsel::cli
