// attnsel check for one input: read, decide the GPUs and release, judge every command.
#include "attnsel/check_input.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <unistd.h>

#include <sstream>

#include <fmt/format.h>

#include "attnsel/input.hpp"

namespace attnsel {

bool CheckReport::fails(bool strict) const {
  if (std::any_of(checks.begin(), checks.end(), [&](const CommandCheck& c) { return c.fails(strict); })) return true;
  if (std::any_of(file_findings.begin(), file_findings.end(), [&](const FileFinding& f) { return f.fails(strict); }))
    return true;
  if (!strict) return false;
  return !skipped.empty() ||
         std::any_of(remarks.begin(), remarks.end(), [](const Diagnostic& d) { return d.severity != Severity::info; });
}

namespace {

Diagnostic remark(Severity severity, std::string rule, std::string message, std::string source) {
  Diagnostic d;
  d.rule = std::move(rule);
  d.severity = severity;
  d.message = std::move(message);
  d.source = std::move(source);
  return d;
}

std::string hint_where(const std::string& file, const ContextHint& h) {
  if (h.line == 0) return fmt::format("{} ({}: {})", file, h.source, h.text);  // its name
  return fmt::format("{}:{} ({}: {})", file, h.line, h.source, h.text);
}


}  // namespace

Result<CheckReport> check_input(const std::shared_ptr<const Matrix>& matrix, const Catalog& catalog,
                                const CheckInput& input, const CheckRun& run) {
  CheckReport report;
  std::vector<LaunchCommand> commands;
  if (input.argv) {
    auto cmd = launch_command_from_argv(*input.argv);
    if (!cmd) {
      Error e = cmd.error();
      e.message += "; the argv must be a launch command of an engine attnsel knows, or its flags";
      return e;
    }
    commands.push_back(std::move(*cmd));
  } else {
    report.file = input.file_name.empty() ? "<string>" : input.file_name;
    LaunchScan scan = scan_launch_input(input.text, report.file,
                                        input.file_name.empty() ? InputFormat::shell : InputFormat::detect);
    if (scan.fatal) return *scan.fatal;
    commands = std::move(scan.commands);
    report.skipped = std::move(scan.skipped);
    report.context = std::move(scan.context);
  }

  // The GPUs: given, else the ones the text names, each command's from its part of the text.
  if (!run.gpus) {
    for (const ContextHint& h : report.context.gpus)
      report.remarks.push_back(remark(
          Severity::info, "check.gpu-from-file",
          fmt::format("GPU {}{} from {}", h.value,
                      h.scope_first == 0 ? std::string() : fmt::format(" for lines {}-{}", h.scope_first, h.scope_last),
                      hint_where(report.file, h)),
          h.source));
  }
  // A text that names no GPU needs them, unless each command runs where attnsel judges nothing.
  const bool all_unjudged = std::all_of(commands.begin(), commands.end(), [&](const LaunchCommand& c) {
    const CommandScope scope = command_scope(report.context, c, std::nullopt);
    return scope.platform && !parse_platform(scope.platform->value);
  });
  if (!run.gpus && report.context.gpus.empty() && !commands.empty() && !all_unjudged)
    return Error{ErrorCode::invalid_argument,
                 input.argv ? "the target GPUs are needed to check a command: sm90, or a list: sm90,sm100 (npu, xpu, "
                              "cpu for other platforms)"
                            : "the text names no GPU (no node selector, instance type, dstack gpu or SkyPilot "
                              "accelerators): give the target GPUs, sm90 or a list: sm90,sm100",
                 "--gpu", {}, {}};
  std::map<std::string, std::vector<CheckTarget>> targets_by_list;
  auto targets_for = [&](const std::string& list) -> Result<const std::vector<CheckTarget>*> {
    auto it = targets_by_list.find(list);
    if (it == targets_by_list.end()) {
      auto t = resolve_check_targets(catalog, list, run.cuda);
      if (!t) return t.error();
      it = targets_by_list.emplace(list, std::move(*t)).first;
    }
    return &it->second;
  };
  if (run.gpus)  // a bad list is an error before anything is checked
    if (auto t = targets_for(*run.gpus); !t) return t.error();

  // The release: given, else the one the text names (an image tag, a pinned install).
  std::shared_ptr<const Matrix> judged = matrix;
  const std::string engine = matrix->info().engine;
  std::optional<ReleaseVersion> release;
  const ContextHint* from = nullptr;
  if (run.release) {
    release = parse_release(*run.release);
    if (!release)
      return Error{ErrorCode::invalid_argument, fmt::format("expected a release like 0.5.3, got '{}'", *run.release),
                   "--engine-version", {}, {}};
  } else if (run.release_from_input) {
    for (const ContextHint& h : report.context.releases) {
      if (h.engine != engine) continue;
      if (auto parsed = parse_release(h.value)) {
        release = parsed;
        from = &h;
        break;
      }
    }
  }
  CheckOptions options = run.options;
  if (!run.release && run.release_from_input) {
    // Commands of another engine (a vLLM image beside an SGLang one) run the release the text
    // names for their own engine, never this one's.
    options.release_engine = engine;
    for (const ContextHint& h : releases_of_other_engines(report.context.releases, engine)) {
      options.releases[h.engine] = h.value;
      report.remarks.push_back(remark(Severity::info, "check.release-from-file",
                                      fmt::format("{} release {} from {}", h.engine, h.value, hint_where(report.file, h)),
                                      h.source));
    }
  }
  if (release) {
    const std::string key = to_string(*release);
    // A release older than every generation is still judged, against the oldest matrix with a
    // warning: its launch grammar and its advisories apply, where refusing the release would leave
    // the command unjudged (issue 22).
    auto m = builtin_matrix_to_judge(engine, *release);
    if (!m && !from) return m.error();
    if (m && m->oldest) {
      judged = m->matrix;
      report.release = key;
      options.release = key;
      report.remarks.push_back(remark(
          Severity::warning, "check.release-older",
          release_older_message(engine, key, from ? " from " + hint_where(report.file, *from) : " (--engine-version)",
                                *m->oldest),
          from ? from->source : std::string("--engine-version")));
    } else if (!m) {
      report.remarks.push_back(remark(Severity::warning, "check.release-unknown",
                                      fmt::format("{}: {}; checked against the newest matrix",
                                                  hint_where(report.file, *from), m.error().message),
                                      from->source));
    } else {
      judged = m->matrix;
      report.release = key;
      options.release = key;
      if (auto newest = newest_known_release(engine); newest && *newest < *release)
        report.remarks.push_back(remark(
            Severity::warning, "check.release-newer",
            fmt::format("release {}{} is newer than any matrix attnsel knows (newest: {}); checked against the newest",
                        key, from ? " from " + hint_where(report.file, *from) : std::string(" (--engine-version)"),
                        to_string(*newest)),
            from ? from->source : std::string("--engine-version")));
      else if (from)
        report.remarks.push_back(remark(Severity::info, "check.release-from-file",
                                        fmt::format("release {} from {}", key, hint_where(report.file, *from)),
                                        from->source));
    }
  }

  const FileLines lines(input.text);
  // The text's suppression comments, read only when it has commands for them to hold for.
  std::optional<SourceSuppressions> comments;
  if (run.source_suppressions && !input.text.empty() && !commands.empty()) comments.emplace(input.text, report.file);
  std::set<std::string> told;  // a command read once per branch of its script is told of once
  for (const LaunchCommand& cmd : commands) {
    const CommandScope scope = command_scope(report.context, cmd, run.gpus);
    const std::string where = report.file.empty() ? std::string("<command line>")
                                                  : report.file + ":" + std::to_string(cmd.line);
    if (scope.platform && !parse_platform(scope.platform->value)) {  // TPU, Gaudi, Neuron: told, not judged
      std::string message = where + ": " + unscoped_message(scope, {}, "--gpu") + ": not checked";
      if (told.insert(message).second)
        report.remarks.push_back(remark(Severity::warning, "check.platform-not-judged", std::move(message),
                                        scope.platform->source));
      continue;
    }
    auto listed = targets_for(scope.gpus);
    if (!listed) return listed.error();
    const std::vector<CheckTarget> on_platform = scoped_targets(**listed, scope, report.file);
    if (on_platform.empty()) {  // its platform has no target: not checked, and told why (attnsel check's way)
      std::string message = unscoped_message(scope, **listed, "--gpu");
      if (told.insert(where + ": " + message).second)
        report.skipped.push_back(Error{ErrorCode::invalid_argument, std::move(message), where, {}, {}});
      continue;
    }
    const std::vector<CheckTarget> targets = capability_targets(on_platform, cmd);
    if (targets.empty()) {  // the script's branch for other GPUs: its other branch is judged on these
      report.remarks.push_back(remark(Severity::info, "check.capability-branch",
                                      where + ": " + capability_message(cmd, on_platform),
                                      "the script's test of nvidia-smi's compute_cap"));
      continue;
    }
    const std::vector<CheckTarget> entry = entry_targets(targets, scope);
    if (entry.empty()) {  // the file's entry for other GPUs (`B200:` under `hardware:`)
      std::string message = where + ": " + entry_message(scope, targets);
      if (told.insert(message).second)
        report.remarks.push_back(remark(Severity::info, "check.entry-for-other-gpus", std::move(message),
                                        scope.entry.front().source));
      continue;
    }
    std::vector<CommandCheck> results = check_command(judged, catalog, cmd, entry, options);
    if (!input.text.empty()) locate_columns(results, lines);  // as `attnsel check` does
    suppress_findings(results, comments ? &*comments : nullptr, run.rules);
    for (CommandCheck& c : results) report.checks.push_back(std::move(c));
  }
  if (comments) report.file_findings = suppression_findings(*comments, run.rules, run.report_unused_suppressions);
  return report;
}

std::vector<ReportFinding> report_findings(const CheckReport& report) {
  std::vector<ReportFinding> out;
  for (const Diagnostic& d : report.remarks) {
    ReportFinding f;
    f.finding.diagnostic = d;
    f.file = report.file;
    out.push_back(std::move(f));
  }
  for (std::size_t i = 0; i < report.checks.size(); ++i) {
    const CommandCheck& c = report.checks[i];
    for (const CheckDiagnostic* d : c.all()) {
      ReportFinding f;
      f.finding = *d;
      f.file = c.command.file;
      f.gpu = c.target.label;
      f.check = i;
      out.push_back(std::move(f));
    }
    for (const SuppressedFinding& s : c.suppressed) {
      ReportFinding f;
      f.finding = s.finding;
      f.file = c.command.file;
      f.gpu = c.target.label;
      f.check = i;
      f.suppression = s.suppression;
      out.push_back(std::move(f));
    }
  }
  for (const Error& e : report.skipped) {
    ReportFinding f;
    f.finding.diagnostic = remark(Severity::warning, "check.skipped",
                                  e.message + " (this block was not checked; the rest of the file was)", "");
    // where is "file:line:col" (or "file:line"); the file name itself may hold colons.
    std::string_view where = e.where;
    std::vector<int> numbers;  // from the right: column, line
    while (numbers.size() < 2) {
      const std::size_t colon = where.rfind(':');
      if (colon == std::string_view::npos) break;
      const std::string_view digits = where.substr(colon + 1);
      if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string_view::npos) break;
      numbers.push_back(std::stoi(std::string(digits)));
      where = where.substr(0, colon);
    }
    if (numbers.size() == 2) std::swap(numbers[0], numbers[1]);
    f.file = numbers.empty() ? report.file : std::string(where);
    f.finding.line = numbers.empty() ? 0 : numbers[0];
    f.column = numbers.size() == 2 ? numbers[1] : 0;
    out.push_back(std::move(f));
  }
  for (const FileFinding& ff : report.file_findings) {
    ReportFinding f;
    f.finding = ff.finding;
    f.file = ff.file;
    f.suppression = ff.suppression;
    out.push_back(std::move(f));
  }
  return out;
}

std::string render_check_json(const std::vector<CheckReport>& reports, int indent) {
  return render_check_json(reports, CheckInputs{}, indent);
}

namespace {

// UTF-16 or UTF-32 text: a byte-order mark, or NUL bytes between ASCII characters.
bool looks_utf16(std::string_view text) {
  if (text.size() >= 2 && ((text[0] == '\xFF' && text[1] == '\xFE') || (text[0] == '\xFE' && text[1] == '\xFF'))) return true;
  const std::string_view head = text.substr(0, 512);
  std::size_t nul_odd = 0, nul_even = 0;
  for (std::size_t i = 0; i < head.size(); ++i)
    if (head[i] == '\0') ++(i % 2 == 0 ? nul_even : nul_odd);
  const std::size_t half = head.size() / 2;
  return half >= 4 && (nul_odd * 10 >= half * 9 || nul_even * 10 >= half * 9);
}

}  // namespace

Result<CheckFile> read_check_file(const std::string& path, const std::string& stdin_name) {
  Result<std::string> text = path == "-" ? read_input_fd(STDIN_FILENO, "<stdin>") : read_input_file(path);
  if (!text) return text.error();
  CheckFile f;
  if (looks_utf16(*text))
    return Error{ErrorCode::io_error, "UTF-16 or UTF-32 text; attnsel reads UTF-8 (convert it: iconv -f UTF-16 -t UTF-8)",
                 path == "-" ? stdin_name : path, {}, {}};
  // Anywhere in the text, not only its head: past a binary-looking head a script still runs.
  const std::size_t nul = text->find('\0');
  f.binary = nul != std::string::npos;
  if (f.binary) f.nul_line = 1 + static_cast<int>(std::count(text->begin(), text->begin() + static_cast<std::ptrdiff_t>(nul), '\n'));
  else f.text = std::move(*text);
  return f;
}

Error binary_file_error(const std::string& name, const CheckFile& file) {
  return Error{ErrorCode::io_error,
               "a NUL byte: not read as text, and not passed over (bash and dash drop NUL bytes and run the rest "
               "of a script); remove them, or --exclude the file",
               name + (file.nul_line > 0 ? ":" + std::to_string(file.nul_line) : std::string()), {}, {}};
}

bool PathCheck::fails(bool strict) const {
  if (std::any_of(reports.begin(), reports.end(), [&](const CheckReport& r) { return r.fails(strict); })) return true;
  return strict && !walk.warnings.empty();
}

Result<PathCheck> check_paths(const std::shared_ptr<const Matrix>& matrix, const Catalog& catalog,
                              const std::vector<std::string>& paths, const CheckRun& run, const WalkOptions& walk) {
  PathCheck out;
  out.walk = walk_paths(paths, walk);
  std::vector<Error> problems = out.walk.problems;
  if (out.walk.files.empty() && problems.empty()) {
    std::string where;
    for (const std::string& d : out.walk.empty_directories) where += (where.empty() ? "" : ", ") + d;
    return Error{ErrorCode::io_error, nothing_read_message(out.walk), where, {}, {}};
  }
  CheckRun each = run;
  each.options.read_config = config_reader_within(paths);
  std::optional<Error> no_gpu;
  std::size_t with_commands = 0, without_gpu = 0;
  for (const std::string& path : out.walk.files) {
    Result<CheckFile> file = read_check_file(path);
    if (!file) {
      problems.push_back(file.error());
      continue;
    }
    if (file->binary) {
      ++out.binary;
      problems.push_back(binary_file_error(path, *file));
      continue;
    }
    CheckInput input;
    input.text = std::move(file->text);
    input.file_name = path;
    Result<CheckReport> report = check_input(matrix, catalog, input, each);
    if (!report) {
      if (report.error().where == "--gpu" && !run.gpus) {
        // As `attnsel check` says it: this file's commands were not checked.
        ++with_commands;
        ++without_gpu;
        if (!no_gpu) no_gpu = report.error();
        problems.push_back(Error{ErrorCode::invalid_argument, "names no GPU; its commands were not checked: give the GPUs",
                                 path, {}, {}});
        continue;
      }
      Error e = report.error();
      if (e.where.empty()) e.where = path;
      problems.push_back(std::move(e));
      continue;
    }
    if (!report->checks.empty()) ++with_commands;
    out.reports.push_back(std::move(*report));
  }
  if (no_gpu && without_gpu == with_commands) return *no_gpu;  // no file names its GPUs: the run must
  if (!problems.empty()) {
    std::string message = problems.size() == 1 ? std::string()
                                               : fmt::format("{} paths could not be read or checked: ", problems.size());
    for (std::size_t k = 0; k < problems.size(); ++k)
      message += (k ? "; " : "") + (problems[k].where.empty() ? std::string() : problems[k].where + ": ") + problems[k].message;
    if (problems.size() == 1) return Error{problems[0].code, problems[0].message, problems[0].where, {}, {}};
    return Error{ErrorCode::io_error, std::move(message), problems.front().where, {}, {}};
  }
  return out;
}

std::string render_check_json(const std::vector<CheckReport>& reports, const CheckInputs& inputs, int indent) {
  std::ostringstream out;
  CheckWriterOptions options;
  options.indent = indent;
  std::unique_ptr<CheckWriter> writer = make_check_writer(CheckFormat::json, out, options);
  for (const CheckReport& r : reports) {
    // One command's checks (one per target, the targets in the same order for every command of
    // the file) at a time, as `attnsel check` writes them.
    std::size_t k = 0;
    while (k < r.checks.size()) {
      std::size_t end = k + 1;
      while (end < r.checks.size() && r.checks[end].target.label != r.checks[k].target.label) ++end;
      writer->command(std::vector<CommandCheck>(r.checks.begin() + static_cast<std::ptrdiff_t>(k),
                                                r.checks.begin() + static_cast<std::ptrdiff_t>(end)),
                      r.context.empty() ? nullptr : &r.context);
      k = end;
    }
    writer->skipped(r.skipped);
    writer->file_findings(r.file_findings);
  }
  writer->finish(inputs);
  return out.str();
}

std::string render_check_json(const PathCheck& check, int indent) {
  CheckInputs inputs;
  inputs.files = check.reports.size();
  for (const CheckReport& r : check.reports) inputs.files_with_commands += r.checks.empty() ? 0 : 1;
  inputs.binary_skipped = check.binary;
  inputs.skipped_directories = check.walk.skipped_directories();
  inputs.skipped_files = check.walk.skipped_files();
  inputs.warnings = check.walk.warnings;
  return render_check_json(check.reports, inputs, indent);
}

namespace {
constexpr std::size_t kMaxConfigBytes = 4u << 20;  // a --config file of more is not a config file
}  // namespace

ConfigFileReader config_reader_within(const std::vector<std::string>& inputs) {
  namespace fs = std::filesystem;
  // Shared, never copied: the reader is copied with the options of every command, and the roots of
  // 20,000 named files are one root (a file named 20,000 times is too).
  auto roots = std::make_shared<std::vector<fs::path>>();
  std::set<std::string> seen;
  std::error_code ec;
  auto add = [&](const fs::path& root) {
    fs::path canonical = fs::weakly_canonical(root, ec);
    if (seen.insert(canonical.string()).second) roots->push_back(std::move(canonical));
  };
  std::set<std::string> named;
  for (const std::string& in : inputs) {
    if (!named.insert(in).second) continue;
    fs::path root = in == "-" ? fs::current_path(ec) : fs::path(in);
    if (in != "-" && !fs::is_directory(root, ec)) root = root.parent_path();
    if (root.empty()) root = fs::current_path(ec);
    add(root);
  }
  if (inputs.empty()) add(fs::current_path(ec));
  return [roots = std::shared_ptr<const std::vector<fs::path>>(roots)](const std::string& path,
                                                                        const LaunchCommand& cmd) -> Result<std::string> {
    std::error_code err;
    auto inside = [&](const fs::path& canonical) {
      return std::any_of(roots->begin(), roots->end(), [&](const fs::path& root) {
        const fs::path rel = canonical.lexically_relative(root);
        return !rel.empty() && *rel.begin() != "..";
      });
    };
    // Beside the file holding the command, else (a relative path) under a checked directory: a
    // script run from its repository's root names its configs from there.
    std::vector<fs::path> candidates;
    fs::path p(path);
    if (p.is_relative()) {
      candidates.push_back(
          (cmd.file.empty() || !fs::exists(cmd.file, err) ? fs::current_path(err) : fs::path(cmd.file).parent_path()) / p);
      for (const fs::path& root : *roots) candidates.push_back(root / p);
    } else {
      candidates.push_back(p);
    }
    std::optional<fs::path> first_inside;
    for (const fs::path& candidate : candidates) {
      const fs::path canonical = fs::weakly_canonical(candidate, err);
      if (!inside(canonical)) continue;
      if (!first_inside) first_inside = canonical;
      if (!fs::exists(canonical, err)) continue;
      // Bounded: a config file is a few lines; a huge one (or /dev/zero behind a link) is refused.
      return read_input_file(canonical.string(), kMaxConfigBytes);
    }
    if (!first_inside)
      return Error{ErrorCode::invalid_argument,
                   fmt::format("{} is outside the checked files' directories; attnsel reads only files inside them", path),
                   path, {}, {}};
    return read_input_file(first_inside->string(), kMaxConfigBytes);  // not there: its own error
  };
}

}  // namespace attnsel
