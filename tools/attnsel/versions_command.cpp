// `attnsel matrix --versions` and `attnsel matrix diff A B`: the built-in generations and what
// changed between two of them (or two files).
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "attnsel/render.hpp"
#include "cli.hpp"

namespace attnsel::cli {
namespace {

// "0.5.3" / "v0.5.3" (a release of --engine), "sglang-diffusion@0.5.0", or a matrix file.
std::shared_ptr<const Matrix> matrix_named(const std::string& name, const std::string& engine) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(name, ec)) return load_matrix_or_fail(std::optional<std::string>(name));
  MatrixChoice choice;
  choice.engine = engine;
  std::string release = name;
  if (auto at = name.find('@'); at != std::string::npos) {
    choice.engine = name.substr(0, at);
    release = name.substr(at + 1);
  }
  if (release != "latest") choice.release = release;
  if (choice.release && !parse_release(*choice.release))
    throw Failure{kUsage, fmt::format("matrix diff: '{}' is neither a matrix file nor a release like 0.5.3 or {}@0.5.3", name, engine)};
  return load_matrix_or_fail(choice);
}

}  // namespace

Command add_versions_commands(CLI::App& app) {
  CLI::App* matrix = app.get_subcommand("matrix");
  auto versions = std::make_shared<bool>(false);
  matrix->add_flag("--versions", *versions, "list the built-in matrices: engines and the releases each generation covers");

  struct DiffArgs {
    std::string from, to, engine = "sglang", format = "table";
  };
  auto args = std::make_shared<DiffArgs>();
  CLI::App* diff = matrix->add_subcommand("diff", "what changed between two matrices (releases like 0.5.3, or files)");
  diff->add_option("from", args->from, "the older matrix: a release (0.4.6), ENGINE@RELEASE, 'latest', or a file")->required();
  diff->add_option("to", args->to, "the newer matrix")->required();
  diff->add_option("--engine", args->engine, "the engine of bare releases (default sglang)");
  diff->add_option("--format", args->format, "table|markdown|json")->check(CLI::IsMember({"table", "markdown", "json"}));

  return [matrix, diff, versions, args]() -> std::optional<int> {
    if (*diff) {
      auto from = matrix_named(args->from, args->engine);
      auto to = matrix_named(args->to, args->engine);
      const MatrixFormat f = args->format == "json" ? MatrixFormat::json
                             : args->format == "markdown" ? MatrixFormat::markdown : MatrixFormat::table;
      std::cout << render_matrix_diff(*from, *to, f);
      return kOk;
    }
    if (!*matrix || !*versions) return std::nullopt;
    auto generations = builtin_generations();
    if (!generations) throw Failure{kUsage, generations.error().describe()};
    std::string engine;
    for (const auto& g : *generations) {
      if (g.engine != engine) {
        engine = g.engine;
        std::cout << fmt::format("{}{}{}\n", engine == generations->front().engine ? "" : "\n", engine,
                                 g.default_engine ? " (default engine)" : "");
      }
      auto m = builtin_matrix_file(g.file);
      std::cout << fmt::format("  since {:<8} {:<22} {:<20} {}\n", to_string(g.since), g.file, g.label,
                               m ? (*m)->info().version : std::string("INVALID: ") + m.error().describe());
    }
    std::cout << "\n--sglang-version X.Y.Z picks the newest generation not newer than X.Y.Z.\n";
    return kOk;
  };
}

}  // namespace attnsel::cli
