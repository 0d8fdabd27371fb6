// The public entry points of the launch readers: argv, and a file's text read as its format.
#include <algorithm>
#include <string>
#include <vector>

#include "attnsel/launch.hpp"
#include "check/launch_internal.hpp"
#include "check/shell_lexer.hpp"

namespace attnsel {

using launch_detail::add_command_context;
using launch_detail::scope_yaml_settings;
using launch_detail::ArgWord;
using launch_detail::basename;
using launch_detail::ends_with;
using launch_detail::extract;
using launch_detail::is_assignment;
using launch_detail::lex_shell;
using launch_detail::lower;
using launch_detail::scan_dockerfile;
using launch_detail::scan_markdown;
using launch_detail::scan_shell;
using launch_detail::scan_yaml;
using launch_detail::Sink;
using launch_detail::source_of;
using launch_detail::starts_with;
using launch_detail::yaml_looks_like_compose;
using launch_detail::scan_python;
using launch_detail::scan_rst;
using launch_detail::scan_asciidoc;
using launch_detail::scan_helm;
using launch_detail::scan_makefile;
using launch_detail::scan_justfile;
using launch_detail::scan_procfile;
using launch_detail::scan_systemd;
using launch_detail::jinja_as_text;
using launch_detail::npos;
using launch_detail::ltrim;

std::string_view name_of(InputFormat f) {
  switch (f) {
    case InputFormat::detect: return "detect";
    case InputFormat::shell: return "shell";
    case InputFormat::dockerfile: return "dockerfile";
    case InputFormat::compose: return "compose";
    case InputFormat::kubernetes: return "kubernetes";
    case InputFormat::markdown: return "markdown";
    case InputFormat::python: return "python";
    case InputFormat::helm: return "helm";
    case InputFormat::rst: return "rst";
    case InputFormat::asciidoc: return "asciidoc";
    case InputFormat::makefile: return "makefile";
    case InputFormat::justfile: return "justfile";
    case InputFormat::procfile: return "procfile";
    case InputFormat::systemd: return "systemd";
    case InputFormat::notebook: return "notebook";
  }
  return "shell";
}

namespace {

// The name of a Jinja template without its suffix (serve.sh.j2 -> serve.sh); nullopt for another name.
std::optional<std::string_view> template_inner(std::string_view file_name) {
  for (std::string_view suffix : {".j2", ".jinja2", ".jinja"}) {
    if (file_name.size() > suffix.size() && lower(file_name.substr(file_name.size() - suffix.size())) == suffix)
      return file_name.substr(0, file_name.size() - suffix.size());
  }
  return std::nullopt;
}

// The program a `#!` line runs: its basename, through `env [-S] PROGRAM`; "" without a shebang.
std::string shebang_program(std::string_view text) {
  if (!starts_with(text, "#!")) return {};
  std::string_view line = text.substr(2, text.find('\n') == npos ? npos : text.find('\n') - 2);
  std::vector<std::string_view> words;
  while (!(line = ltrim(line)).empty()) {
    const std::size_t end = std::min(line.find_first_of(" \t\r"), line.size());
    words.push_back(line.substr(0, end));
    line = line.substr(end);
  }
  std::size_t k = 0;
  if (k < words.size() && basename(words[k]) == "env") {
    ++k;
    while (k < words.size() && (starts_with(words[k], "-") || words[k].find('=') != npos)) ++k;
  }
  return k < words.size() ? lower(basename(words[k])) : std::string();
}

bool is_shell_program(std::string_view program) {
  static constexpr std::string_view kShells[] = {"sh", "bash", "zsh", "ksh", "dash", "ash", "mksh"};
  return std::find(std::begin(kShells), std::end(kShells), program) != std::end(kShells);
}

// The format a lower-case base name says, alone.
std::optional<InputFormat> format_by_name(std::string_view base) {
  auto any_suffix = [&](std::initializer_list<std::string_view> suffixes) {
    return std::any_of(suffixes.begin(), suffixes.end(), [&](std::string_view s) { return ends_with(base, s); });
  };
  if (base == "dockerfile" || base == "containerfile" || starts_with(base, "dockerfile.") ||
      starts_with(base, "containerfile.") || any_suffix({".dockerfile", ".containerfile"}))
    return InputFormat::dockerfile;
  if (any_suffix({".md", ".markdown", ".mdx"})) return InputFormat::markdown;
  if (ends_with(base, ".py")) return InputFormat::python;
  if (any_suffix({".rst", ".rest"})) return InputFormat::rst;
  if (any_suffix({".adoc", ".asciidoc", ".asc"})) return InputFormat::asciidoc;
  if (ends_with(base, ".tpl")) return InputFormat::helm;
  if (any_suffix({".yml", ".yaml"})) return InputFormat::kubernetes;  // told apart by the caller
  if (any_suffix({".sh", ".bash", ".zsh", ".ksh", ".slurm", ".sbatch", ".pbs"})) return InputFormat::shell;
  if (base == "makefile" || base == "gnumakefile" || starts_with(base, "makefile.") || any_suffix({".mk", ".make"}))
    return InputFormat::makefile;
  if (base == "justfile" || base == ".justfile" || ends_with(base, ".just")) return InputFormat::justfile;
  if (base == "procfile" || starts_with(base, "procfile.")) return InputFormat::procfile;
  if (ends_with(base, ".service")) return InputFormat::systemd;
  if (ends_with(base, ".ipynb")) return InputFormat::notebook;
  return std::nullopt;
}

// Extensions of files that are never scripts (source code, data, archives, images): their first
// line is not looked at, so a walk does not open each of them.
bool never_a_script(std::string_view base) {
  const std::size_t dot = base.rfind('.');
  if (dot == npos || dot == 0) return false;
  static constexpr std::string_view kExtensions[] = {
      "c",    "h",     "cc",   "cpp",  "cxx",   "hpp",  "hh",   "hxx",  "cu",      "cuh",   "go",   "rs",
      "java", "kt",    "scala", "js",  "mjs",   "cjs",  "ts",   "tsx",  "jsx",     "json",  "jsonl", "txt",
      "csv",  "tsv",   "log",  "lock", "toml",  "ini",  "cfg",  "conf", "xml",     "html",  "htm",  "css",
      "scss", "svg",   "png",  "jpg",  "jpeg",  "gif",  "ico",  "webp", "pdf",     "zip",   "gz",   "tgz",
      "bz2",  "xz",    "zst",  "tar",  "whl",   "so",   "a",    "o",    "dylib",   "dll",   "exe",  "bin",
      "pt",   "pth",   "safetensors", "onnx", "pb", "npy", "npz", "pkl", "parquet", "proto", "cmake", "tex",
      "pyc",  "pyi",   "patch", "diff"};
  const std::string_view ext = base.substr(dot + 1);
  return std::find(std::begin(kExtensions), std::end(kExtensions), ext) != std::end(kExtensions);
}

}  // namespace

std::optional<InputFormat> recognised_format(std::string_view file_name, std::string_view text) {
  if (auto inner = template_inner(file_name)) file_name = *inner;
  const std::string base = lower(basename(file_name));
  std::optional<InputFormat> format = format_by_name(base);
  if (format == InputFormat::dockerfile || format == InputFormat::markdown || format == InputFormat::notebook)
    return format;
  if (!format && never_a_script(base)) return std::nullopt;
  const std::string program = shebang_program(text);
  if (starts_with(program, "python")) return InputFormat::python;
  if (format == InputFormat::kubernetes) {
    const std::string path = lower(file_name);
    if (path.find("templates/") != std::string::npos || text.find("{{") != std::string_view::npos)
      return InputFormat::helm;
    if (starts_with(base, "docker-compose") || starts_with(base, "compose")) return InputFormat::compose;
    return yaml_looks_like_compose(text) ? InputFormat::compose : InputFormat::kubernetes;
  }
  if (format) return format;
  if (is_shell_program(program)) return InputFormat::shell;
  return std::nullopt;
}

InputFormat detect_input_format(std::string_view file_name, std::string_view text) {
  return recognised_format(file_name, text).value_or(InputFormat::shell);
}

LaunchScan scan_launch_input(std::string_view text, std::string_view file_name, InputFormat format,
                             const std::vector<Launcher>& launchers) {
  return launch_detail::scan_launch_input(text, file_name, format, launchers, launch_detail::ScanShortcuts{});
}

LaunchScan scan_launch_input(std::string_view text, std::string_view file_name, InputFormat format,
                             const std::vector<Launcher>& launchers, const ScanOptions& options) {
  launch_detail::ScanShortcuts shortcuts;
  shortcuts.options = options;
  return launch_detail::scan_launch_input(text, file_name, format, launchers, shortcuts);
}

LaunchScan launch_detail::scan_launch_input(std::string_view text, std::string_view file_name, InputFormat format,
                                            const std::vector<Launcher>& launchers, ScanShortcuts shortcuts) {
  // A Jinja template: read as what it renders to, its statements blanked and its values unknown.
  std::string rendered;
  if (auto inner = template_inner(file_name)) {
    const std::optional<InputFormat> underlying =
        format == InputFormat::detect ? recognised_format(*inner, text) : std::optional<InputFormat>(format);
    const bool yaml = underlying == InputFormat::kubernetes || underlying == InputFormat::compose ||
                      underlying == InputFormat::helm;
    rendered = jinja_as_text(text, /*keep_values=*/yaml);
    text = rendered;
    if (format == InputFormat::detect) format = detect_input_format(*inner, text);
  }
  if (format == InputFormat::detect) format = detect_input_format(file_name, text);
  Sink sink;
  sink.launchers = &launchers;
  sink.prefilter = shortcuts.prefilter;
  sink.file = std::string(file_name);
  // A notebook: read as the Markdown it renders, on its own lines.
  if (format == InputFormat::notebook) {
    rendered = notebook_as_markdown(text, sink);
    text = rendered;
    format = InputFormat::markdown;
  }
  switch (format) {
    case InputFormat::detect:
    case InputFormat::shell: scan_shell(source_of(text, 1), 0, launch_detail::OnLexError::fail, sink); break;
    case InputFormat::dockerfile: scan_dockerfile(text, 1, sink); break;
    case InputFormat::compose:
    case InputFormat::kubernetes: scan_yaml(text, 1, format, /*report=*/true, sink); break;
    case InputFormat::helm: scan_helm(text, sink); break;
    case InputFormat::markdown: scan_markdown(text, sink); break;
    case InputFormat::python: scan_python(text, sink); break;
    case InputFormat::rst: scan_rst(text, sink); break;
    case InputFormat::asciidoc: scan_asciidoc(text, sink); break;
    case InputFormat::makefile: scan_makefile(text, sink); break;
    case InputFormat::justfile: scan_justfile(text, sink); break;
    case InputFormat::procfile: scan_procfile(text, sink); break;
    case InputFormat::systemd: scan_systemd(text, sink); break;
    case InputFormat::notebook: break;  // read as Markdown above
  }
  LaunchScan scan;
  std::stable_sort(sink.found.begin(), sink.found.end(),
                   [](const LaunchCommand& a, const LaunchCommand& b) { return a.line < b.line; });
  // Each command may read (--config) the files written before it; the last one written wins.
  std::stable_sort(sink.written.begin(), sink.written.end(),
                   [](const LaunchCommand::WrittenFile& a, const LaunchCommand::WrittenFile& b) { return a.line < b.line; });
  for (LaunchCommand& c : sink.found)
    for (const LaunchCommand::WrittenFile& w : sink.written)
      if (w.line < c.line)
        c.written.push_back(w);
  scan.commands = std::move(sink.found);
  scan.skipped = std::move(sink.skipped);
  scan.fatal = std::move(sink.fatal);
  if (!scan.commands.empty() || shortcuts.options.context_without_commands) {
    scan.context = find_file_context(text, launchers, shortcuts.every_line, format, file_name);
    if (!sink.markdown_overlay.empty())  // a YAML file's guide: its sections name GPUs too
      launch_detail::merge_file_context(scan.context,
                                        find_file_context(sink.markdown_overlay, launchers, shortcuts.every_line,
                                                          InputFormat::markdown, file_name));
  }
  if (format == InputFormat::kubernetes || format == InputFormat::compose || format == InputFormat::helm)
    scope_yaml_settings(text, scan.commands, scan.context);
  add_command_context(scan.commands, launchers, scan.context);
  return scan;
}

Result<std::vector<LaunchCommand>> find_launch_commands(std::string_view text, std::string_view file_name,
                                                        InputFormat format, const std::vector<Launcher>& launchers) {
  LaunchScan scan = scan_launch_input(text, file_name, format, launchers);
  if (scan.fatal) return *std::move(scan.fatal);
  if (!scan.skipped.empty()) return std::move(scan.skipped.front());
  return std::move(scan.commands);
}

Result<LaunchCommand> launch_command_from_argv(const std::vector<std::string>& argv,
                                               const std::vector<Launcher>& launchers) {
  if (argv.empty()) {
    return Error{ErrorCode::invalid_argument,
                 "no command to check: give an SGLang launch command or its flags after --", "", {}, {}};
  }
  // The whole command as one quoted string: tokenise it the way a shell would.
  std::vector<std::vector<ArgWord>> commands;
  const bool lexed_whole = argv.size() == 1 && argv[0].find_first_of(" \t\n") != std::string::npos;
  if (lexed_whole) {
    const launch_detail::Lexed lexed = lex_shell(argv[0]);
    if (!lexed.error.empty()) {
      return Error{ErrorCode::parse_error, lexed.error + " in the command", "<command line>", {}, {}};
    }
    for (const launch_detail::SimpleCommand& command : lexed.commands) {
      std::vector<ArgWord> words;
      for (const launch_detail::Word& w : command) words.push_back(ArgWord{w.text, 0, 0, w.shape});
      commands.push_back(std::move(words));
    }
  } else {
    std::vector<ArgWord> words;
    for (const std::string& a : argv) words.push_back(ArgWord{a, 0, 0});
    commands.push_back(std::move(words));
  }
  for (const std::vector<ArgWord>& words : commands) {
    std::size_t first = 0;
    while (first < words.size() && is_assignment(words[first].text)) ++first;
    if (first < words.size() && starts_with(words[first].text, "-")) {
      LaunchCommand cmd;
      cmd.launcher = "flags";
      for (std::size_t k = first; k < words.size(); ++k) cmd.args.push_back(words[k].text);
      cmd.arg_lines.assign(cmd.args.size(), 0);
      return cmd;
    }
    Sink sink;
    sink.launchers = &launchers;
    extract(words, launch_detail::Context{}, 0, sink);
    if (!sink.skipped.empty()) return std::move(sink.skipped.front());
    if (!sink.found.empty()) {
      LaunchCommand cmd = std::move(sink.found.front());
      cmd.line = 0;
      cmd.arg_lines.assign(cmd.args.size(), 0);
      // Separate arguments came through a shell already: how they were written is not known, and
      // a $ left in one is read as the environment's (a value not checked).
      if (!lexed_whole) cmd.arg_shapes.clear();
      return cmd;
    }
  }
  const std::string shown = argv[0].size() > 80 ? argv[0].substr(0, 77) + "..." : argv[0];
  std::string expected;
  for (const Launcher& l : launchers) {
    if (!expected.empty()) expected += ", ";
    if (l.module.empty()) {
      expected += "`" + l.program;
      for (const std::string& s : l.subcommand) expected += " " + s;
      expected += " ...`";
    } else {
      expected += "`python3 -m " + l.module + " ...`";
    }
  }
  return Error{ErrorCode::invalid_argument,
               "'" + shown + "' does not start a known serving engine: expected " + expected +
                   ", or only its --flags",
               shown, {}, {}};
}

}  // namespace attnsel
