// `attnsel matrix --versions` and `attnsel matrix diff A B`: the built-in generations and what
// changed between two of them (or two files).
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

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
    std::string from, to, engine = "sglang";
    FormatChoice format;
    bool exit_code = false;
  };
  auto args = std::make_shared<DiffArgs>();
  CLI::App* diff = matrix->add_subcommand("diff", "what changed between two matrices (releases like 0.5.3, or files)");
  diff->add_option("from", args->from, "the older matrix: a release (0.4.6), ENGINE@RELEASE, 'latest', or a file")->required();
  diff->add_option("to", args->to, "the newer matrix")->required();
  diff->add_option("--engine", args->engine, "the engine of bare releases (default sglang)");
  args->format.add_options(*diff, {"table", "markdown", "json"});
  diff->add_flag("--exit-code", args->exit_code, "exit 1 when the matrices differ, like git diff --exit-code");
  diff->footer("Exit codes: 0 printed (with --exit-code: the matrices are the same), 1 with --exit-code: they differ, "
               "2 bad usage or a matrix that does not load.");

  return [matrix, diff, versions, args]() -> std::optional<int> {
    if (*diff) {
      auto from = matrix_named(args->from, args->engine);
      auto to = matrix_named(args->to, args->engine);
      const MatrixFormat f = args->format.get() == Format::json       ? MatrixFormat::json
                             : args->format.get() == Format::markdown ? MatrixFormat::markdown
                                                                      : MatrixFormat::table;
      std::cout << render_matrix_diff(*from, *to, f);
      return args->exit_code && matrix_change_count(*from, *to) > 0 ? kInvalidPlan : kOk;
    }
    if (!*matrix || !*versions) return std::nullopt;
    auto generations = builtin_generations();
    if (!generations) fail(generations.error());
    // --format and --json belong to `matrix`; --versions honours them.
    const bool json = matrix->count("--json") > 0 ||
                      (matrix->count("--format") > 0 && matrix->get_option("--format")->results().back() == "json");
    if (json) {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& g : *generations) {
        auto m = builtin_matrix_file(g.file);
        list.push_back({{"engine", g.engine},
                        {"default_engine", g.default_engine},
                        {"since", to_string(g.since)},
                        {"file", g.file},
                        {"label", g.label},
                        {"source", g.source},
                        {"matrix_version", m ? nlohmann::json((*m)->info().version) : nlohmann::json(nullptr)},
                        {"error", m ? nlohmann::json(nullptr) : nlohmann::json(m.error().describe())}});
      }
      const nlohmann::json body = {{"generations", list}};
      std::cout << render_json_document("matrix-versions", body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))
                << "\n";
      return kOk;
    }
    std::size_t file_width = 0, label_width = 0;
    for (const auto& g : *generations) {
      file_width = std::max(file_width, g.file.size());
      label_width = std::max(label_width, g.label.size());
    }
    std::string engine;
    for (const auto& g : *generations) {
      if (g.engine != engine) {
        engine = g.engine;
        std::cout << fmt::format("{}{}{}\n", engine == generations->front().engine ? "" : "\n", engine,
                                 g.default_engine ? " (default engine)" : "");
      }
      auto m = builtin_matrix_file(g.file);
      std::cout << fmt::format("  since {:<8} {:<{}} {:<{}} {}\n", to_string(g.since), g.file, file_width, g.label, label_width,
                               m ? (*m)->info().version : std::string("INVALID: ") + m.error().describe());
    }
    std::cout << "\n--sglang-version X.Y.Z picks the newest generation not newer than X.Y.Z.\n";
    return kOk;
  };
}

}  // namespace attnsel::cli
