// attnsel: the command line. It parses options (CLI11) and wires the library's pieces; each
// subcommand lives in its own file (select_command.cpp, matrix_command.cpp, probe_command.cpp ...).
//
// Exit codes: 0 a valid plan, 1 no valid plan, 2 bad usage or input, 3 probing failed.
#include <iostream>
#include <vector>

#include <unistd.h>

#include "attnsel/input.hpp"
#include "attnsel/render.hpp"
#include "attnsel/version.hpp"
#include "cli.hpp"

namespace attnsel::cli {

bool use_color() { return color_wanted(isatty(STDOUT_FILENO)); }

void MatrixChoice::add_options(CLI::App& app) {
  app.add_option("--matrix", file, "matrix JSON file (default: ATTNSEL_MATRIX, else the built-in one)");
  app.add_option("--engine", engine, "built-in engine: sglang (default), sglang-diffusion or vllm");
  app.add_option("--engine-version,--sglang-version,--vllm-version", release,
                 "the engine release to check against, e.g. 0.5.3 or 0.27.1 (default: the newest matrix)");
}

std::shared_ptr<const Matrix> load_matrix_or_fail(const MatrixChoice& choice) {
  std::optional<std::string> path = choice.file;
  if (!path)
    if (const char* env = std::getenv("ATTNSEL_MATRIX"); env && *env) path = env;
  if (path) {
    if (choice.release) throw Failure{kUsage, "--engine-version chooses a built-in matrix; it cannot be combined with --matrix/ATTNSEL_MATRIX"};
    auto m = load_matrix_file(*path);
    if (!m) throw Failure{kUsage, "invalid matrix: " + m.error().describe()};
    return *m;
  }
  std::optional<ReleaseVersion> release;
  if (choice.release) {
    release = parse_release(*choice.release);
    if (!release) throw Failure{kUsage, "--engine-version: expected a release like 0.5.3, got '" + *choice.release + "'"};
  }
  auto m = builtin_matrix(choice.engine, release);
  if (!m) throw Failure{kUsage, m.error().describe()};
  return *m;
}

std::shared_ptr<const Matrix> load_matrix_or_fail(const std::optional<std::string>& file) {
  MatrixChoice choice;
  choice.file = file;
  return load_matrix_or_fail(choice);
}

std::shared_ptr<const Catalog> catalog_or_fail() {
  auto c = builtin_catalog();
  if (!c) throw Failure{kUsage, "invalid built-in catalog: " + c.error().describe()};
  return *c;
}

}  // namespace attnsel::cli

int main(int argc, char** argv) {
  using namespace attnsel::cli;
  CLI::App app{"attnsel: pick and check attention backends for SGLang before the model loads", "attnsel"};
  app.set_version_flag("--version", [] {  // the library's version and the built-in matrix's
    auto m = attnsel::builtin_matrix();
    return std::string("attnsel ") + attnsel::version() + "\nmatrix " +
           (m ? (*m)->info().engine + " " + (*m)->info().version + " (schema " +
                    std::to_string((*m)->info().schema_version) + ", built-in)"
              : "invalid: " + m.error().describe());
  });
  app.require_subcommand(0, 1);
  app.footer("Exit codes: 0 valid plan, 1 no valid plan, 2 bad usage or input, 3 probing failed.");

  // Subcommands first claim their invocation; the root command (select) runs when none did.
  std::vector<Command> commands = {add_matrix_command(app), add_probe_command(app), add_check_command(app)};
  // `matrix --versions` and `matrix diff` hang off `matrix` and answer before the table does.
  commands.insert(commands.begin(), add_versions_commands(app));
  commands.push_back(add_select_commands(app));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kOk : kUsage;
  }
  try {
    for (auto& command : commands)
      if (auto code = command()) return *code;
    return kOk;
  } catch (const Failure& f) {
    std::cerr << "attnsel: " << attnsel::escape_for_terminal(f.message) << "\n";  // names may come from hostile files
    return f.code;
  }
}
