// attnsel: the command line. It parses options (CLI11) and wires the library's pieces; each
// subcommand lives in its own file (select_command.cpp, matrix_command.cpp, probe_command.cpp ...).
//
// Exit codes: 0 a valid plan, 1 no valid plan, 2 bad usage or input, 3 probing failed.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <iostream>
#include <vector>

#include <sys/ioctl.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attnsel/encode.hpp"
#include "attnsel/input.hpp"
#include "attnsel/profile.hpp"
#include "attnsel/render.hpp"
#include "attnsel/suggest.hpp"
#include "attnsel/version.hpp"
#include "cli.hpp"

namespace attnsel::cli {
namespace {

std::string color_choice = "auto";

// Every subcommand, depth first (`matrix lint`, `matrix diff` under `matrix`).
void collect_apps(CLI::App* app, std::vector<CLI::App*>& out) {
  out.push_back(app);
  for (CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; })) collect_apps(sub, out);
}

std::string command_path(const CLI::App* app) {
  std::string path;
  for (const CLI::App* a = app; a; a = a->get_parent()) path = a->get_name() + (path.empty() ? "" : " " + path);
  return path;
}

std::vector<std::string> option_names(const CLI::App* app) {
  std::vector<std::string> names;
  for (const CLI::Option* o : app->get_options())
    for (const std::string& n : o->get_lnames()) names.push_back("--" + n);
  return names;
}

std::vector<std::string> subcommand_names(CLI::App* app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; })) names.push_back(sub->get_name());
  return names;
}

// CLI11 would say "The following arguments were not expected: fa3 --attention-backen". Subcommands
// take no extras, so that what is left over here is a typo: name it, with the closest option or
// command. (The root command, `select` and `explain` pass their extras to the engine's grammar.)
void reject_leftovers(const std::vector<CLI::App*>& apps, const std::vector<CLI::App*>& engine_flag_apps) {
  for (CLI::App* app : apps) {
    if (!app->parsed() || std::find(engine_flag_apps.begin(), engine_flag_apps.end(), app) != engine_flag_apps.end()) continue;
    for (const std::string& arg : app->remaining()) {
      if (arg == "--") break;  // `check -- COMMAND...`: the command's own
      Error e;
      e.code = ErrorCode::unknown_name;
      if (arg.rfind("-", 0) == 0) {
        const std::string flag = arg.substr(0, arg.find('='));
        e.where = flag;
        e.choices = option_names(app);
        e.suggestion = closest_name(flag, e.choices);
        e.message = fmt::format("unknown option for `{}`", command_path(app));
        if (app->get_name() == "check" && e.suggestion.empty())
          e.message += fmt::format("; a launch command to check goes after --: attnsel check --gpu sm90 -- {} ...",
                                   launcher_example());
      } else {
        e.where = app->get_parent() ? command_path(app).substr(command_path(app).find(' ') + 1) : std::string();
        e.choices = subcommand_names(app);
        e.suggestion = closest_name(arg, e.choices);
        e.message = e.choices.empty() ? fmt::format("unexpected argument '{}'", arg)
                                      : fmt::format("unknown command '{}'", arg);
      }
      fail(e);
    }
  }
}

// `attnsel chek ...`: a bare word where a subcommand goes is a mistyped subcommand, not the
// select command's input (which is all options).
void reject_unknown_subcommand(CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-' || argv[1][0] == '\0') return;
  const std::string word = argv[1];
  std::vector<std::string> commands = subcommand_names(&app);
  if (std::find(commands.begin(), commands.end(), word) != commands.end()) return;
  Error e;
  e.code = ErrorCode::unknown_name;
  e.message = fmt::format("unknown command '{}'", word);
  e.choices = commands;
  e.suggestion = closest_name(word, commands);
  fail(e);
}

// Whether the user asked for JSON: then even a usage error is a JSON document on stdout. Read from
// argv itself, so that it holds when CLI11 could not parse the rest.
bool json_requested(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--" || arg == kFilesMarker) return false;
    if (arg == "--json" || arg == "--format=json" || (arg == "--format" && i + 1 < argc && std::string_view(argv[i + 1]) == "json"))
      return true;
  }
  return false;
}

void print_error_json(int code, const std::string& message, const std::optional<Error>& error) {
  nlohmann::json e = {{"message", message}};
  if (error) {
    e["message"] = error->message;
    if (!error->where.empty()) e["where"] = error->where;
    if (!error->suggestion.empty()) e["suggestion"] = error->suggestion;
    if (!error->choices.empty()) e["choices"] = error->choices;
  }
  const nlohmann::json body = {{"ok", false}, {"exit_code", code}, {"error", e}};
  std::cout << render_json_document("error", body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)) << "\n";
}

// The channel standard output is encoded for, once the options are known: JSON for --json or
// --format json, workflow commands for --format github (check sets it itself), else text.
OutputChannel parsed_output_channel(const std::vector<CLI::App*>& apps) {
  for (const CLI::App* app : apps) {
    if (!app->parsed()) continue;
    if (const CLI::Option* j = app->get_option_no_throw("--json"); j && j->count() > 0) return OutputChannel::json;
    if (const CLI::Option* f = app->get_option_no_throw("--format"); f && f->count() > 0) {
      const std::string value = f->results().back();
      // SARIF and GitLab's report are JSON; concise lines are read by log parsers, as annotations are.
      if (value == "json" || value == "sarif" || value == "gitlab") return OutputChannel::json;
      if (value == "github" || value == "concise") return OutputChannel::github;
    }
  }
  return OutputChannel::terminal;
}

GuardedOutput* stdout_guard = nullptr;

std::optional<std::vector<std::string>> files_after_marker_;

}  // namespace

void fail(const Error& e, int code) { throw Failure{code, e.describe(), e}; }

void set_output_channel(OutputChannel channel, bool keep_colors) {
  if (!stdout_guard) return;
  stdout_guard->drain();  // what was written before is encoded as it was then
  stdout_guard->encoder().set_channel(channel, keep_colors);
}

const std::optional<std::vector<std::string>>& files_after_marker() { return files_after_marker_; }

bool use_color() {
  if (color_choice == "always") return true;
  if (color_choice == "never") return false;
  return color_wanted(isatty(STDOUT_FILENO));
}

std::string launcher_example() {
  auto matrix = builtin_matrix();
  for (const Launcher& l : builtin_launchers()) {
    if (!matrix || l.engine != (*matrix)->info().engine) continue;
    if (!l.module.empty()) return "python3 -m " + l.module;
    std::string out = l.program;
    for (const std::string& word : l.subcommand) out += " " + word;
    return out;
  }
  return "COMMAND";
}

std::size_t output_width() {
  if (!isatty(STDOUT_FILENO)) return 0;
  if (const char* columns = std::getenv("COLUMNS"); columns && *columns) {
    char* end = nullptr;
    const long n = std::strtol(columns, &end, 10);
    if (*end == '\0' && n >= 40 && n <= 10000) return static_cast<std::size_t>(n);
  }
  winsize ws{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40) return ws.ws_col;
  return 0;
}

void add_color_option(CLI::App& app) {
  app.add_option("--color", color_choice, "colour: auto (a terminal, unless NO_COLOR or TERM=dumb), always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
}

namespace {

struct DeferredOptions {
  CLI::App* app;
  std::function<void(CLI::App&)> define;
  bool defined = false;
  void run() {
    if (defined) return;
    defined = true;
    define(*app);
    add_color_option(*app);
  }
};

// One CLI per process: the deferred definitions live as long as it does.
std::vector<std::shared_ptr<DeferredOptions>>& deferred_options() {
  static std::vector<std::shared_ptr<DeferredOptions>> all;
  return all;
}

}  // namespace

void define_options_on_use(CLI::App& app, std::function<void(CLI::App&)> define) {
  auto d = std::make_shared<DeferredOptions>(DeferredOptions{&app, std::move(define)});
  deferred_options().push_back(d);
  app.preparse_callback([d](std::size_t) { d->run(); });
}

bool options_on_use(const CLI::App& app) {
  const auto& all = deferred_options();
  return std::any_of(all.begin(), all.end(), [&app](const auto& d) { return d->app == &app; });
}

void define_all_options() {
  for (const auto& d : deferred_options()) d->run();
}

void FormatChoice::add_options(CLI::App& app, const std::vector<std::string>& formats) {
  format = formats.front();
  std::vector<std::string> accepted = formats;
  if (std::find(formats.begin(), formats.end(), "table") != formats.end()) accepted.emplace_back("text");
  std::string help;
  for (const auto& f : formats) help += (help.empty() ? "" : "|") + f;
  app.add_option("--format", format, help + " (default " + formats.front() + ")")->check(CLI::IsMember(accepted));
  app.add_flag("--json", json, "the same as --format json");
}

Format FormatChoice::get() const {
  if (json || format == "json") return Format::json;
  if (format == "markdown") return Format::markdown;
  if (format == "github") return Format::github;
  return Format::text;
}

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
    if (!m) throw Failure{kUsage, "invalid matrix: " + m.error().describe(), m.error()};
    return *m;
  }
  std::optional<ReleaseVersion> release;
  if (choice.release) {
    release = parse_release(*choice.release);
    if (!release) throw Failure{kUsage, "--engine-version: expected a release like 0.5.3, got '" + *choice.release + "'"};
  }
  auto m = builtin_matrix(choice.engine, release);
  if (!m) fail(m.error());
  return *m;
}

std::shared_ptr<const Matrix> load_matrix_or_fail(const std::optional<std::string>& file) {
  MatrixChoice choice;
  choice.file = file;
  return load_matrix_or_fail(choice);
}

std::shared_ptr<const Catalog> catalog_or_fail() {
  auto c = builtin_catalog();
  if (!c) throw Failure{kUsage, "invalid built-in catalog: " + c.error().describe(), c.error()};
  return *c;
}

}  // namespace attnsel::cli

namespace {

int run(int argc, char** argv) {
  using namespace attnsel::cli;
  CLI::App app{"attnsel: pick and check attention backends for SGLang and vLLM before the model loads", "attnsel"};
  app.set_version_flag("--version", [] {  // the library's version and the built-in matrix's
    auto m = attnsel::builtin_matrix_info();
    return std::string("attnsel ") + attnsel::version() + "\nmatrix " +
           (m ? m->engine + " " + m->version + " (schema " + std::to_string(m->schema_version) + ", built-in)"
              : "invalid: " + m.error().describe());
  });
  app.require_subcommand(0, 1);
  app.footer(kSelectExitCodes);

  // Subcommands first claim their invocation; the root command (select) runs when none did.
  std::vector<Command> commands = {add_matrix_command(app), add_probe_command(app), add_check_command(app)};
  // `matrix --versions` and `matrix diff` hang off `matrix` and answer before the table does.
  commands.insert(commands.begin(), add_versions_commands(app));
  std::vector<CLI::App*> engine_flag_apps = {&app};
  commands.push_back(add_select_commands(app, engine_flag_apps));
  commands.push_back(add_completion_command(app));
  commands.push_back(add_advisories_command(app));
  commands.push_back(add_rule_command(app));

  std::vector<CLI::App*> apps;
  collect_apps(&app, apps);
  for (CLI::App* a : apps) {
    if (!options_on_use(*a)) add_color_option(*a);  // else with the deferred options, after them
    a->allow_extras();  // typos are named by reject_leftovers, with a suggestion
  }

  const bool json = json_requested(argc, argv);
  try {
    try {
      reject_unknown_subcommand(app, argc, argv);
      app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
      return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
      return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
      return app.exit(e);
    } catch (const CLI::ParseError& e) {
      throw Failure{kUsage, std::string(e.what()) + "\nRun with --help for more information."};
    }
    reject_leftovers(apps, engine_flag_apps);
    if (files_after_marker() && !app.get_subcommand("check")->parsed())
      throw Failure{kUsage, std::string(kFilesMarker) + " belongs to `attnsel check`: the files to check follow it"};
    set_output_channel(parsed_output_channel(apps), use_color());
    for (auto& command : commands)
      if (auto code = command()) return *code;
    return kOk;
  } catch (const Failure& f) {
    std::cerr << "attnsel: " << attnsel::escape_for_terminal(f.message) << "\n";  // names may come from hostile files
    if (json) print_error_json(f.code, f.message, f.error);
    return f.code;
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace attnsel;
  using namespace attnsel::cli;
  // `check ... --files A B`: every argument after --files is a path, never an option: CLI11 never
  // sees them (a file named --help or --matrix=x is a file). Before any -- (a launch command).
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg == kFilesMarker) {
      files_after_marker_.emplace(argv + i + 1, argv + argc);
      argc = i;
      break;
    }
  }
  // Every byte written goes through the channel's encoder, and every write is checked.
  GuardedOutput out(STDOUT_FILENO, json_requested(argc, argv) ? OutputChannel::json : OutputChannel::terminal);
  GuardedOutput err(STDERR_FILENO, OutputChannel::terminal);
  std::streambuf* const cout_buf = std::cout.rdbuf(&out);
  std::streambuf* const cerr_buf = std::cerr.rdbuf(&err);
  stdout_guard = &out;
  int code = kUsage;
  try {
    code = run(argc, argv);
  } catch (const std::bad_alloc&) {
    std::cerr << "attnsel: out of memory\n";
    code = kUsage;
  }
  std::cout.flush();
  std::cerr.flush();
  const int out_error = out.finish();
  if (out_error != 0) {
    std::cerr << "attnsel: writing standard output failed: " << std::strerror(out_error)
              << "; the output is incomplete\n";
    code = kUsage;
  }
  std::cerr.flush();
  if (err.finish() != 0) code = kUsage;
  stdout_guard = nullptr;
  std::cout.rdbuf(cout_buf);
  std::cerr.rdbuf(cerr_buf);
  return code;
}
