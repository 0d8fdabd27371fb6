// `attnsel matrix`: the capability matrix, readable; `attnsel matrix lint`: its whole-space consistency.
#include <chrono>
#include <iostream>

#include "attnsel/lint.hpp"
#include "attnsel/render.hpp"
#include "cli.hpp"

namespace attnsel::cli {

Command add_matrix_command(CLI::App& app) {
  struct Args {
    FormatChoice format;       // also read by `matrix --versions` (versions_command.cpp)
    MatrixChoice matrix;       // --matrix, --engine, --engine-version
    MatrixChoice lint_matrix;  // the same after `lint`; unset ones come from before it
    FormatChoice lint_format;
    bool full = false, no_probes = false;
    std::size_t max_examples = 20;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("matrix", "print the capability matrix; `matrix lint` checks it over the whole request space");
  cmd->require_subcommand(0, 1);
  args->format.add_options(*cmd, {"table", "markdown", "json"});
  args->matrix.add_options(*cmd);
  cmd->footer("Exit codes: 0 printed, 2 bad usage or a matrix that does not load (matrix lint: 1 when inconsistent).");

  CLI::App* lint = cmd->add_subcommand(
      "lint",
      "run automatic selection over every catalog GPU x CUDA version x model kind x KV dtype x top-k x page size x "
      "sliding window, replay each plan explicitly, and report inconsistencies, dead rules and unreachable backends; "
      "exit 1 when inconsistent");
  args->lint_matrix.add_options(*lint);
  args->lint_format.add_options(*lint, {"text", "json"});
  lint->add_flag("--full", args->full, "also every model family of the model table and --enable-deterministic-inference");
  lint->add_flag("--no-probes", args->no_probes, "skip the explicit per-backend probes (faster; fewer rules can fire)");
  lint->add_option("--max-examples", args->max_examples, "distinct problems to show (default 20)");
  lint->footer("Exit codes: 0 consistent, 1 inconsistencies found, 2 bad usage or a matrix that does not load.");

  return [cmd, lint, args]() -> std::optional<int> {
    if (!*cmd) return std::nullopt;
    if (*lint) {
      MatrixChoice choice = args->lint_matrix;
      if (!choice.file) choice.file = args->matrix.file;
      if (lint->count("--engine") == 0) choice.engine = args->matrix.engine;
      if (!choice.release) choice.release = args->matrix.release;
      auto matrix = load_matrix_or_fail(choice);
      auto catalog = catalog_or_fail();
      LintOptions o;
      o.model_families = o.deterministic = args->full;
      o.explicit_probes = !args->no_probes;
      o.max_examples = args->max_examples;
      const auto start = std::chrono::steady_clock::now();
      const LintReport report = lint_matrix(matrix, *catalog, o);
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (args->lint_format.get() == Format::json || args->format.get() == Format::json) std::cout << render_lint_json(report, seconds) << "\n";
      else std::cout << render_lint_text(report, seconds);
      return report.consistent() ? kOk : kInvalidPlan;
    }
    auto matrix = load_matrix_or_fail(args->matrix);
    const MatrixFormat f = args->format.get() == Format::json       ? MatrixFormat::json
                           : args->format.get() == Format::markdown ? MatrixFormat::markdown
                                                                    : MatrixFormat::table;
    std::cout << render_matrix(*matrix, f, RenderOptions{use_color(), output_width()});
    return kOk;
  };
}

}  // namespace attnsel::cli
