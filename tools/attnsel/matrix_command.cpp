// `attnsel matrix`: the capability matrix, readable.
#include <iostream>

#include "attnsel/render.hpp"
#include "cli.hpp"

namespace attnsel::cli {

Command add_matrix_command(CLI::App& app) {
  struct Args {
    std::string format = "table";
    std::optional<std::string> matrix;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("matrix", "print the capability matrix");
  cmd->add_option("--format", args->format, "table|markdown|json")->check(CLI::IsMember({"table", "markdown", "json"}));
  cmd->add_option("--matrix", args->matrix, "matrix JSON file (default: ATTNSEL_MATRIX, else the built-in one)");
  return [cmd, args]() -> std::optional<int> {
    if (!*cmd) return std::nullopt;
    auto matrix = load_matrix_or_fail(args->matrix);
    const MatrixFormat f = args->format == "json" ? MatrixFormat::json
                           : args->format == "markdown" ? MatrixFormat::markdown : MatrixFormat::table;
    std::cout << render_matrix(*matrix, f, RenderOptions{use_color()});
    return kOk;
  };
}

}  // namespace attnsel::cli
