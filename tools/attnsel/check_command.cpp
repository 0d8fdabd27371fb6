// `attnsel check`: SGLang launch commands judged for target GPUs before anything is launched.
//
//   attnsel check --gpu sm90,sm100 [--cuda X.Y] [--strict] [--format text|json|github] [--model-kind K]
//                 [--matrix FILE] -- python3 -m sglang.launch_server ...
//   attnsel check --gpu sm90 FILE...        (shell, Dockerfile, compose, Kubernetes, Markdown; - is stdin)
//
// Exit codes: 0 every command clean (or warnings only, without --strict); 1 an error in a checked
// command, or a warning with --strict; 2 bad usage of attnsel or unreadable input.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "attnsel/check.hpp"
#include "cli.hpp"

namespace attnsel::cli {
namespace {

struct CheckArgs {
  std::optional<std::string> gpu, cuda, model_kind, matrix, installed;
  std::string format = "text";
  bool strict = false;
  std::vector<std::string> inputs;  // files, or the command after --
};

struct Input {
  std::string name;
  std::string text;
};

// The whole file; "-" is standard input, read as a shell script.
std::optional<Input> read_input(const std::string& path, std::string& problem) {
  if (path == "-") {
    std::ostringstream text;
    text << std::cin.rdbuf();
    return Input{"<stdin>", text.str()};
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    problem = fmt::format("{}: cannot read the file ({})", path, std::strerror(errno));
    return std::nullopt;
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    problem = fmt::format("{}: read error", path);
    return std::nullopt;
  }
  return Input{path, text.str()};
}

int run_check(const CheckArgs& a, bool after_separator) {
  std::optional<std::string> gpu = a.gpu;
  if (!gpu)
    if (const char* env = std::getenv("ATTNSEL_GPU"); env && *env) gpu = env;
  if (!gpu)
    throw Failure{kUsage, "check needs the target GPUs: --gpu sm90 (or a list: --gpu sm90,sm100; npu, xpu, cpu for "
                          "other platforms); it never probes, a CI runner has no GPU"};
  auto matrix = load_matrix_or_fail(a.matrix);
  auto catalog = catalog_or_fail();
  auto targets = resolve_check_targets(*catalog, *gpu, a.cuda);
  if (!targets) throw Failure{kUsage, targets.error().describe()};
  CheckOptions options;
  options.strict = a.strict;
  // `sglang generate` and `--model-type diffusion` commands: the diffusion profile (--matrix
  // replaces only the LLM one).
  if (auto diffusion = builtin_matrix("sglang-diffusion", std::nullopt)) options.diffusion_matrix = *diffusion;
  if (a.installed) {
    options.installed_known = true;
    for (auto& p : CLI::detail::split(*a.installed, ',')) {
      p = CLI::detail::trim_copy(p);
      if (!p.empty()) options.installed.push_back(p);
    }
  }
  if (a.model_kind) options.model_kind = parse_kind(*a.model_kind);

  std::vector<LaunchCommand> commands;
  bool input_failed = false;
  std::size_t files = 0, files_without = 0;
  if (after_separator) {
    if (a.inputs.empty()) throw Failure{kUsage, "nothing after --: give the SGLang launch command to check"};
    auto cmd = launch_command_from_argv(a.inputs);
    if (!cmd)
      throw Failure{kUsage, fmt::format("{}\nThe arguments after -- must be an SGLang launch command "
                                        "(python3 -m sglang.launch_server ..., sglang serve ...) or its flags; to check "
                                        "files, name them without --",
                                        cmd.error().describe())};
    commands.push_back(*cmd);
  } else {
    if (a.inputs.empty())
      throw Failure{kUsage, "nothing to check: name files (scripts, Dockerfiles, compose or Kubernetes YAML, Markdown; "
                            "- for stdin) or give a command after --"};
    for (const std::string& path : a.inputs) {
      std::string problem;
      auto input = read_input(path, problem);
      if (!input) {
        std::cerr << "attnsel: " << problem << "\n";
        input_failed = true;
        continue;
      }
      ++files;
      auto found = find_launch_commands(input->text, input->name);
      if (!found) {
        const Error& e = found.error();
        std::cerr << "attnsel: " << (e.where.empty() ? input->name : e.where) << ": " << e.message << "\n";
        input_failed = true;
        continue;
      }
      if (found->empty()) ++files_without;
      commands.insert(commands.end(), found->begin(), found->end());
    }
  }

  std::vector<CommandCheck> checks;
  for (const LaunchCommand& cmd : commands) {
    auto results = check_command(matrix, *catalog, cmd, *targets, options);
    checks.insert(checks.end(), std::make_move_iterator(results.begin()), std::make_move_iterator(results.end()));
  }

  if (a.format == "json") std::cout << render_check_json(checks) << "\n";
  else if (a.format == "github") std::cout << render_check_github(checks);
  else if (!checks.empty()) std::cout << render_check_text(checks, RenderOptions{use_color()});

  if (!after_separator && commands.empty() && files > 0)
    std::cerr << fmt::format("attnsel: warning: no SGLang launch command found in {} file{}\n", files,
                             files == 1 ? "" : "s");
  else if (files_without > 0 && a.format == "text")
    std::cerr << fmt::format("attnsel: {} of {} files hold no SGLang launch command\n", files_without, files);

  if (input_failed) return kUsage;
  const bool failed = std::any_of(checks.begin(), checks.end(), [&](const CommandCheck& c) { return c.fails(a.strict); });
  return failed ? kInvalidPlan : kOk;
}

}  // namespace

Command add_check_command(CLI::App& app) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App* cmd = app.add_subcommand(
      "check", "check SGLang launch commands (after --) or the scripts, Dockerfiles, compose/Kubernetes YAML and "
               "Markdown that hold them, for target GPUs");
  cmd->add_option("--gpu", args->gpu,
                  "target GPUs, comma-separated: sm90,sm100, H100, B200, MI300X; npu (ascend), xpu, cpu, mps, rocm "
                  "(default: ATTNSEL_GPU)");
  cmd->add_option("--cuda", args->cuda, "CUDA version X.Y of the NVIDIA targets (default: the catalog's assumption)");
  cmd->add_option("--installed", args->installed,
                  "Python packages the target hosts have, comma-separated (diffusion backends: sageattention, st_attn ...)");
  cmd->add_flag("--strict", args->strict,
                "warnings fail the check, and documented caveats (FlashMLA with FP8 KV) are errors");
  cmd->add_option("--format", args->format, "text (default), json, or github (workflow-command annotations)")
      ->check(CLI::IsMember({"text", "json", "github"}));
  cmd->add_option("--model-kind", args->model_kind,
                  "the kind of a model attnsel cannot resolve (default: what the backends imply, else mha)")
      ->check(CLI::IsMember({"mha", "mla", "gdn", "dsa"}));
  cmd->add_option("--matrix", args->matrix, "matrix JSON file (default: ATTNSEL_MATRIX, else the built-in one)");
  cmd->add_option("inputs", args->inputs, "FILE... (- reads a shell script from stdin), or -- COMMAND...");
  cmd->footer(
      "Exit codes: 0 clean (warnings allowed without --strict), 1 an error in a checked command (or a warning with "
      "--strict), 2 bad usage or unreadable input.");
  return [cmd, args]() -> std::optional<int> {
    if (!*cmd) return std::nullopt;
    // CLI11 keeps the -- it saw among the subcommand's leftovers; everything after it is the command.
    // Bare flags need no -- to be told from file names.
    const std::vector<std::string> rest = cmd->remaining();
    const bool after_separator = std::find(rest.begin(), rest.end(), "--") != rest.end() ||
                                 (!args->inputs.empty() && args->inputs.front().rfind("--", 0) == 0);
    return run_check(*args, after_separator);
  };
}

}  // namespace attnsel::cli
