// attnsel: the command line. It parses options (CLI11) and wires the library's pieces; each
// subcommand lives in its own file (select_command.cpp, matrix_command.cpp, probe_command.cpp ...).
//
// Exit codes: 0 a valid plan, 1 no valid plan, 2 bad usage or input, 3 probing failed.
#include <iostream>
#include <vector>

#include <unistd.h>

#include "cli.hpp"

#ifndef ATTNSEL_VERSION_STRING
#define ATTNSEL_VERSION_STRING "0.0.0"
#endif

namespace attnsel::cli {

bool use_color() {
  const char* no_color = std::getenv("NO_COLOR");
  return isatty(STDOUT_FILENO) && (!no_color || !*no_color);
}

std::shared_ptr<const Matrix> load_matrix_or_fail(const std::optional<std::string>& file) {
  std::optional<std::string> path = file;
  if (!path)
    if (const char* env = std::getenv("ATTNSEL_MATRIX"); env && *env) path = env;
  auto m = path ? load_matrix_file(*path) : builtin_matrix();
  if (!m) throw Failure{kUsage, "invalid matrix: " + m.error().describe()};
  return *m;
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
  app.set_version_flag("--version", std::string("attnsel ") + ATTNSEL_VERSION_STRING);
  app.require_subcommand(0, 1);
  app.footer("Exit codes: 0 valid plan, 1 no valid plan, 2 bad usage or input, 3 probing failed.");

  // Subcommands first claim their invocation; the root command (select) runs when none did.
  std::vector<Command> commands = {add_matrix_command(app), add_probe_command(app)};
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
    std::cerr << "attnsel: " << f.message << "\n";
    return f.code;
  }
}
