// `attnsel check`: engine launch commands judged for target GPUs before anything is launched.
//
//   attnsel check --gpu sm90,sm100 [--cuda X.Y] [--strict] [--format text|json|github|markdown|sarif|concise|gitlab]
//                 [--exit-zero] [-q] [--model-kind K]
//                 [--matrix FILE] -- python3 -m sglang.launch_server ...
//   attnsel check [--gpu sm90] [--sglang-version X.Y.Z] [--exclude GLOB] [--include GLOB] [--verbose] FILE|DIR...
//                 (shell, Slurm/PBS, Dockerfile, compose, Kubernetes, Helm, Markdown/MDX, rst, AsciiDoc,
//                 Python, Makefile, justfile, Procfile, systemd units, Jinja templates of them; - is
//                 stdin, see --stdin-filename). Directories are walked by the library (walk.hpp): what
//                 it passes over is counted on stderr and in the JSON summary, --verbose lists it.
//   Without --gpu, the GPU the files name (node selectors, instance types, dstack, SkyPilot).
//   Under --format github, $GITHUB_STEP_SUMMARY (when set) gets the Markdown report appended.
//   [--select IDS] [--ignore IDS] [--report-unused-suppressions] [--settings FILE | --isolated]: which
//   rules count (suppress.hpp; `# attnsel: ignore[ID]` comments in the files too) and the settings
//   file (.attnsel.toml or pyproject.toml [tool.attnsel], found above the paths: settings.hpp).
//
// Exit codes: 0 every command clean (or warnings only, without --strict; anything with --exit-zero);
// 1 an error in a checked command, or a warning with --strict; 2 bad usage of attnsel or unreadable
// input, or a walk that found no file to read.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <exception>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <thread>
#include <sstream>

#include <fmt/format.h>

#include "attnsel/check.hpp"
#include "attnsel/check_input.hpp"
#include "attnsel/encode.hpp"
#include "attnsel/input.hpp"
#include "attnsel/launch.hpp"
#include "attnsel/matrix.hpp"
#include "attnsel/settings.hpp"
#include "attnsel/suppress.hpp"
#include "attnsel/walk.hpp"
#include "cli.hpp"

namespace attnsel::cli {
namespace {

struct CheckArgs {
  std::optional<std::string> gpu, cuda, model_kind, matrix, installed, stdin_filename, release;
  std::optional<std::string> sglang_release, vllm_release;  // --sglang-version, --vllm-version: one engine's commands
  std::optional<std::string> unknown_model;  // note (default) or error
  std::string format = "text";
  bool json = false;  // --json: --format json
  bool strict = false;
  bool exit_zero = false;  // findings never fail the exit code (input problems still exit 2)
  bool quiet = false;      // -q: only what fails, nothing on success
  bool files_marker = false;  // --files: only in the help (main() takes the paths after it out of argv)
  std::vector<std::string> exclude, include;  // walk globs (walk.hpp)
  bool no_gitignore = false;
  bool verbose = false;  // list every path a walk passed over, and the suppressed findings
  std::vector<std::string> select, ignore;  // rule patterns, comma-separated and repeatable
  bool report_unused = false;               // --report-unused-suppressions
  std::optional<std::string> settings;      // --settings FILE
  std::optional<std::string> report;        // --report FILE: the JSON document too, whatever --format prints
  bool isolated = false;                    // --isolated: no settings file
  std::vector<std::string> inputs;  // files and directories, or the command after --
};

// --select/--ignore values: comma-separated, each a rule pattern attnsel knows (exit 2 naming the
// closest id otherwise).
std::vector<RulePattern> rule_patterns(const std::vector<std::string>& values, const char* flag) {
  std::vector<RulePattern> out;
  for (const std::string& value : values)
    for (std::string p : CLI::detail::split(value, ',')) {
      p = CLI::detail::trim_copy(p);
      if (p.empty()) continue;
      if (auto e = check_rule_pattern(p, flag)) fail(*e);
      out.push_back({p, flag});
    }
  return out;
}

// What the run takes from the settings file: --settings FILE, else the one found above the paths
// named (the current directory for a command after -- and for stdin), unless --isolated. Flags given
// win over its keys; exclude, include and ignore add up; --select replaces select.
struct RunRules {
  RuleSelection rules;
  bool report_unused = false;
  std::string gpu_from;  // where the GPUs came from when the settings file gave them
};
RunRules settle(CheckArgs& a, bool after_separator) {
  RunRules out;
  if (a.isolated && a.settings) throw Failure{kUsage, "--isolated reads no settings file: give --settings FILE or --isolated, not both"};
  std::optional<std::string> file = a.settings;
  if (!file && !a.isolated) {
    std::vector<std::string> starts;
    if (after_separator || a.inputs.empty()) starts.emplace_back();
    for (const std::string& p : after_separator ? std::vector<std::string>{} : a.inputs) starts.push_back(p == "-" ? "" : p);
    std::optional<std::string> first;
    std::string first_path;
    for (const std::string& p : starts) {
      auto found = find_settings_file(p);
      if (!found) fail(found.error());
      const std::string f = found->value_or("");
      if (!first) {
        first = f;
        first_path = p.empty() ? "." : p;
      } else if (*first != f) {
        throw Failure{kUsage, fmt::format("{} and {} have different settings files ({} and {}): check them in separate "
                                          "runs, or name one with --settings FILE (--isolated: none)",
                                          encode_value(first_path, OutputChannel::terminal),
                                          encode_value(p.empty() ? "." : p, OutputChannel::terminal),
                                          first->empty() ? "none" : encode_value(*first, OutputChannel::terminal),
                                          f.empty() ? "none" : encode_value(f, OutputChannel::terminal))};
      }
    }
    if (first && !first->empty()) file = *first;
  }
  Settings s;
  if (file) {
    auto read = read_settings(*file);
    if (!read) fail(read.error());
    s = std::move(*read);
  }
  auto at = [&](const char* key) {
    auto it = s.where.find(key);
    return it == s.where.end() ? std::string() : it->second;
  };
  if (!a.gpu && s.gpus && !(std::getenv("ATTNSEL_GPU") && *std::getenv("ATTNSEL_GPU"))) {
    a.gpu = s.gpus;
    out.gpu_from = at("gpus") + " (gpus)";
  }
  if (!a.cuda) a.cuda = s.cuda;
  if (!a.release && !a.sglang_release && !a.vllm_release) {
    a.release = s.engine_version;
    a.sglang_release = s.sglang_version;
    a.vllm_release = s.vllm_version;
  }
  if (!a.strict) a.strict = s.strict.value_or(false);
  if (!a.unknown_model) a.unknown_model = s.unknown_model;
  if (!a.model_kind) a.model_kind = s.model_kind;
  a.exclude.insert(a.exclude.begin(), s.exclude.begin(), s.exclude.end());
  a.include.insert(a.include.begin(), s.include.begin(), s.include.end());
  if (s.gitignore == false) a.no_gitignore = true;
  out.rules = std::move(s.rules);
  if (!a.select.empty()) out.rules.select = rule_patterns(a.select, "--select");
  for (RulePattern& p : rule_patterns(a.ignore, "--ignore")) out.rules.ignore.push_back(std::move(p));
  out.report_unused = a.report_unused || s.report_unused_suppressions.value_or(false);
  return out;
}

struct Input {
  std::string name;
  std::string text;
};


struct ScannedFile {
  std::string name;
  LaunchScan scan;
  std::string text;  // kept for the columns of findings until its commands are checked
};

// One named file, read and scanned: what run_check then takes, in the order the files were named.
struct ReadResult {
  std::string problem;  // could not be read, or could not be read as its format
  bool binary = false;
  bool counted = false;  // read as text (a file of the "read N files" total)
  ScannedFile file;
  std::exception_ptr failure;  // thrown while reading; rethrown where reading it in turn would have
};

ReadResult read_and_scan(const std::string& path, const CheckArgs& a) {
  ReadResult r;
  try {
    const std::string name = path == "-" ? a.stdin_filename.value_or("<stdin>") : path;
    Result<CheckFile> file = read_check_file(path, name);
    if (!file) {
      r.problem = file.error().describe();
      return r;
    }
    if (file->binary) {  // an input problem: a shell would run what the NUL bytes hide
      r.binary = true;
      r.problem = binary_file_error(name, *file).describe();
      return r;
    }
    std::string& text = file->text;
    // The hints of a file without commands are never used: no GPU, release or model to judge against.
    ScanOptions options;
    options.context_without_commands = false;
    LaunchScan scan = scan_launch_input(text, name,
                                        path == "-" && !a.stdin_filename ? InputFormat::shell : InputFormat::detect,
                                        builtin_launchers(), options);
    r.counted = true;
    if (scan.fatal) {
      const Error& e = *scan.fatal;
      r.problem = (e.where.empty() ? name : e.where) + ": " + e.message;
      return r;
    }
    // Only a file with commands needs its text again (the columns of its findings).
    if (scan.commands.empty()) text = std::string();
    r.file = ScannedFile{name, std::move(scan), std::move(text)};
  } catch (...) {
    r.failure = std::current_exception();
  }
  return r;
}

// Every file read and scanned, on every core: files are independent, and each result stays in
// its slot, so what is written from them is in the files' order, as one reader would write it.
// Standard input is read on this thread alone (a second "-" reads what the first left: nothing).
std::vector<ReadResult> read_all(const std::vector<std::string>& paths, const CheckArgs& a) {
  std::vector<ReadResult> results(paths.size());
  const bool stdin_named = std::find(paths.begin(), paths.end(), "-") != paths.end();
  const std::size_t threads =
      stdin_named ? 1 : std::min<std::size_t>({paths.size(), std::max(1u, std::thread::hardware_concurrency()), 16});
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < paths.size(); i = next++) results[i] = read_and_scan(paths[i], a);
  };
  std::vector<std::thread> workers;
  for (std::size_t t = 1; t < threads; ++t) workers.emplace_back(work);
  work();
  for (std::thread& t : workers) t.join();
  return results;
}

// Writes to several writers at once: the annotations and the step summary.
class TeeWriter final : public CheckWriter {
 public:
  explicit TeeWriter(std::vector<std::unique_ptr<CheckWriter>> writers) : writers_(std::move(writers)) {}
  void command(const std::vector<CommandCheck>& checks, const FileContext* context) override {
    for (auto& w : writers_) w->command(checks, context);
  }
  void skipped(const std::vector<Error>& blocks) override {
    for (auto& w : writers_) w->skipped(blocks);
  }
  void file_findings(const std::vector<FileFinding>& findings) override {
    for (auto& w : writers_) w->file_findings(findings);
  }
  void finish(const CheckInputs& inputs) override {
    for (auto& w : writers_) w->finish(inputs);
  }

 private:
  std::vector<std::unique_ptr<CheckWriter>> writers_;
};

// $GITHUB_STEP_SUMMARY: a regular file, opened to append without blocking (a FIFO or a device is
// refused, never waited on), every write checked.
struct StepSummary {
  int fd = -1;
  std::unique_ptr<GuardedOutput> buffer;
  std::unique_ptr<std::ostream> out;
  ~StepSummary() {
    out.reset();
    buffer.reset();
    if (fd >= 0) ::close(fd);
  }
};

// The step summary and how many bytes GitHub still takes in it (1 MiB a step, shared with earlier
// writers of the same step); null when unset or not writable (a warning says why).
std::unique_ptr<StepSummary> open_step_summary(std::size_t& budget) {
  const char* path = std::getenv("GITHUB_STEP_SUMMARY");
  if (path == nullptr || *path == '\0') return nullptr;
  const std::string shown = encode_value(path, OutputChannel::terminal);
  const int fd = ::open(path, O_WRONLY | O_APPEND | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    std::cerr << "attnsel: warning: cannot write GITHUB_STEP_SUMMARY (" << shown << "): " << std::strerror(errno) << "\n";
    return nullptr;
  }
  auto summary = std::make_unique<StepSummary>();
  summary->fd = fd;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    std::cerr << "attnsel: warning: GITHUB_STEP_SUMMARY (" << shown
              << ") is not a regular file; the report is not added to it\n";
    return nullptr;
  }
  constexpr std::size_t kGithubSummaryBytes = 1024 * 1024;
  const auto used = static_cast<std::size_t>(st.st_size);
  budget = std::min(kCheckMarkdownMaxBytes, used < kGithubSummaryBytes ? kGithubSummaryBytes - used : 0);
  if (budget < 8 * 1024) {
    std::cerr << "attnsel: warning: GITHUB_STEP_SUMMARY (" << shown << ") is nearly full; the report is not added to it\n";
    return nullptr;
  }
  summary->buffer = std::make_unique<GuardedOutput>(fd, OutputChannel::markdown);
  summary->out = std::make_unique<std::ostream>(summary->buffer.get());
  return summary;
}

std::string hint_where(const std::string& file, const ContextHint& h) {
  if (h.line == 0) return fmt::format("{} ({}: {})", file, h.source, h.text);  // its name
  return fmt::format("{}:{} ({}: {})", file, h.line, h.source, h.text);
}

// " for lines 40-72" for a hint scoped to a part of its file; "" for one of the whole file.
std::string scope_of(const ContextHint& h) {
  return h.scope_first == 0 ? std::string() : fmt::format(" for lines {}-{}", h.scope_first, h.scope_last);
}

int run_check(const CheckArgs& given, bool after_separator) {
  CheckArgs a = given;
  const RunRules run_rules = settle(a, after_separator);
  std::optional<std::string> gpu = a.gpu;
  if (!gpu)
    if (const char* env = std::getenv("ATTNSEL_GPU"); env && *env) gpu = env;
  // --engine-version: the release of every command's engine; --sglang-version, --vllm-version: the
  // release of that engine's commands only (a file may launch both).
  std::map<std::string, std::string> named_releases;
  for (const auto& [engine_name, value] : {std::pair{"sglang", &a.sglang_release}, std::pair{"vllm", &a.vllm_release}})
    if (*value) {
      if (!parse_release(**value))
        throw Failure{kUsage, fmt::format("--{}-version: expected a release like 0.5.3, got '{}'", engine_name, **value)};
      named_releases[engine_name] = **value;
    }
  if (a.release && !named_releases.empty())
    throw Failure{kUsage, "--engine-version sets every engine's release; give it or --sglang-version/--vllm-version, not both"};
  if ((a.release || !named_releases.empty()) && a.matrix)
    throw Failure{kUsage, "--engine-version (--sglang-version, --vllm-version) chooses a built-in matrix; it cannot be combined with --matrix"};
  std::optional<ReleaseVersion> release;
  if (a.release) {
    release = parse_release(*a.release);
    if (!release) throw Failure{kUsage, "--engine-version: expected a release like 0.5.3, got '" + *a.release + "'"};
  }

  // Read and scan first: the files may name the GPU and the release.
  std::vector<LaunchCommand> argv_commands;
  std::vector<ScannedFile> scanned;
  CheckInputs inputs;  // what the summaries say about the inputs: what stderr says too
  // Messages name files and quote hints: one line each on stderr, whatever they hold.
  auto problem = [&](std::string message) {
    std::cerr << "attnsel: " << encode_value(message, OutputChannel::terminal) << "\n";
    inputs.problems.push_back(std::move(message));
  };
  auto warning = [&](std::string message) {
    if (!a.quiet || a.strict)  // -q: told only where it fails the check
      std::cerr << "attnsel: warning: " << encode_value(message, OutputChannel::terminal) << "\n";
    inputs.warnings.push_back(std::move(message));
  };
  std::size_t files = 0, files_with = 0, binary = 0;
  WalkResult walk;
  if (after_separator) {
    if (a.inputs.empty()) throw Failure{kUsage, "nothing after --: give the launch command to check"};
    auto cmd = launch_command_from_argv(a.inputs);
    if (!cmd)
      throw Failure{kUsage, fmt::format("{}\nThe arguments after -- must be a launch command of an engine attnsel "
                                        "knows, or its flags; to check files, name them without --",
                                        cmd.error().describe())};
    argv_commands.push_back(*cmd);
  } else {
    if (a.inputs.empty())
      throw Failure{kUsage, "nothing to check: name files or directories (scripts, Dockerfiles, compose, Kubernetes "
                            "or Helm YAML, Markdown, reStructuredText, AsciiDoc, Python, Makefiles, justfiles, "
                            "Procfiles, systemd units, notebooks; - for stdin) or give a command after --"};
    WalkOptions walk_options;
    walk_options.exclude = a.exclude;
    walk_options.include = a.include;
    walk_options.gitignore = !a.no_gitignore;
    walk = walk_paths(a.inputs, walk_options);
    for (const Error& e : walk.problems) problem(e.describe());
    for (std::string& w : walk.warnings) warning(std::move(w));
    if (a.verbose)
      for (const SkippedPath& s : walk.skipped)
        std::cerr << "attnsel: passed over " << encode_value(s.path + (s.directory ? "/" : ""), OutputChannel::terminal)
                  << " (" << encode_value(s.detail, OutputChannel::terminal) << ")\n";
    if (walk.files.empty() && walk.problems.empty()) {
      std::string where;
      for (const std::string& d : walk.empty_directories) where += (where.empty() ? "" : ", ") + d;
      problem((where.empty() ? "" : where + ": ") + nothing_read_message(walk) +
              (a.verbose || walk.skipped.empty() ? "" : "; --verbose lists every path passed over"));
    }
    for (ReadResult& r : read_all(walk.files, a)) {
      if (r.failure) std::rethrow_exception(r.failure);
      if (r.binary) ++binary;
      if (r.counted) ++files;
      if (!r.problem.empty()) {
        problem(std::move(r.problem));
        continue;
      }
      if (!r.file.scan.commands.empty()) ++files_with;
      scanned.push_back(std::move(r.file));
    }
  }

  // The GPU: --gpu / ATTNSEL_GPU for every command, else each file's own (node selectors, instance
  // types, dstack, SkyPilot): a file is checked for the GPUs it names, never another file's.
  auto file_gpus = [&](const ScannedFile& f) {
    std::string list;
    for (const ContextHint& h : f.scan.context.gpus)
      if (("," + list + ",").find("," + h.value + ",") == std::string::npos) list += (list.empty() ? "" : ",") + h.value;
    return list;
  };
  std::vector<const ScannedFile*> no_gpu;
  if (!gpu) {
    for (const ScannedFile& f : scanned) {
      if (f.scan.commands.empty()) continue;
      // A file that names no GPU needs --gpu, unless each of its commands runs on a platform
      // attnsel does not judge (a TPU manifest): those are told as not judged, below.
      if (file_gpus(f).empty() && std::any_of(f.scan.commands.begin(), f.scan.commands.end(), [&](const LaunchCommand& c) {
            const CommandScope scope = command_scope(f.scan.context, c, std::nullopt);
            return !scope.platform || parse_platform(scope.platform->value);
          }))
        no_gpu.push_back(&f);
      else if (a.format == "text" && !a.json && !a.quiet)
        for (const ContextHint& h : f.scan.context.gpus)
          std::cerr << "attnsel: GPU " << encode_value(h.value + scope_of(h) + " from " + hint_where(f.name, h), OutputChannel::terminal)
                    << "\n";
    }
  }
  const std::size_t with_commands = static_cast<std::size_t>(
      std::count_if(scanned.begin(), scanned.end(), [](const ScannedFile& f) { return !f.scan.commands.empty(); }));
  if (!gpu && (after_separator || (with_commands > 0 && no_gpu.size() == with_commands)))
    throw Failure{kUsage, "check needs the target GPUs: --gpu sm90 (or a list: --gpu sm90,sm100; npu, xpu, cpu for "
                          "other platforms); it never probes, a CI runner has no GPU, and the checked files name "
                          "none (no node selector, instance type, dstack gpu or SkyPilot accelerators)"};
  for (const ScannedFile* f : no_gpu)
    problem(fmt::format("{}: names no GPU; its {} command{} not checked: pass --gpu", f->name, f->scan.commands.size(),
                        f->scan.commands.size() == 1 ? " was" : "s were"));

  auto default_matrix = release || !named_releases.empty() ? std::shared_ptr<const Matrix>() : load_matrix_or_fail(a.matrix);
  const std::string engine = default_matrix ? default_matrix->info().engine : std::string();
  auto catalog = catalog_or_fail();
  std::map<std::string, std::vector<CheckTarget>> targets_by_list;
  auto targets_for = [&](const std::string& list) -> const std::vector<CheckTarget>& {
    auto it = targets_by_list.find(list);
    if (it != targets_by_list.end()) return it->second;
    auto t = resolve_check_targets(*catalog, list, a.cuda);
    if (!t) fail(t.error());
    return targets_by_list[list] = std::move(*t);
  };
  if (gpu) targets_for(*gpu);  // a bad --gpu is a usage error before anything is checked
  CheckOptions options;
  options.strict = a.strict;
  options.read_config = config_reader_within(after_separator ? std::vector<std::string>{} : a.inputs);
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
  options.unknown_model_error = a.unknown_model == std::optional<std::string>("error");

  // The matrix for a release: --sglang-version, else the release a file names (built-in matrices only).
  std::map<std::string, std::shared_ptr<const Matrix>> by_release;
  // The release a file's commands are judged for (its launch grammar, its advisories), as the
  // library's check_input sets it: the release whose built-in matrix matrix_for returned.
  std::optional<std::string> judged_release;
  std::set<std::string> unknown_releases;  // no matrix: judged against the newest, for no release
  // Commands of the file's other engines (a vLLM image beside an SGLang one) run the release the
  // file names for their own engine, never the matrix engine's (CheckOptions::release_engine).
  std::string release_engine;
  std::map<std::string, std::string> other_releases;
  auto matrix_for = [&](const ScannedFile* f) -> std::shared_ptr<const Matrix> {
    judged_release.reset();
    release_engine.clear();
    other_releases.clear();
    std::optional<ReleaseVersion> r = release;
    std::string flag = "--engine-version";  // what set r, when no file did
    const ContextHint* from = nullptr;
    // The matrix engine: the default matrix's, or with named releases the built-in default's.
    const std::string default_engine =
        default_matrix ? engine : !named_releases.empty() ? (*builtin_matrix())->info().engine : std::string();
    const char* env_matrix = std::getenv("ATTNSEL_MATRIX");  // set but empty: not set, as load_matrix_or_fail reads it
    if (!named_releases.empty()) {
      // Each named release judges its own engine's commands; the matrix engine's comes first.
      release_engine = default_engine;
      if (auto it = named_releases.find(release_engine); it != named_releases.end()) {
        r = parse_release(it->second);
        flag = "--" + release_engine + "-version";
      }
    }
    if (!r && f && !a.matrix && !(env_matrix && *env_matrix)) {
      release_engine = default_engine.empty() ? (*builtin_matrix())->info().engine : default_engine;
      for (const ContextHint& h : releases_of_other_engines(f->scan.context.releases, release_engine)) {
        other_releases[h.engine] = h.value;
        if (a.format == "text" && !a.json && !a.quiet)
          std::cerr << "attnsel: " << h.engine << " release "
                    << encode_value(h.value + " from " + hint_where(f->name, h), OutputChannel::terminal) << "\n";
      }
    }
    for (const auto& [other, value] : named_releases)  // the flags win over the file's hints
      if (other != release_engine) other_releases[other] = value;
    if (!r && f && !a.matrix && !(env_matrix && *env_matrix)) {
      for (const ContextHint& h : f->scan.context.releases) {
        if (!default_engine.empty() && h.engine != default_engine) continue;
        if (auto parsed = parse_release(h.value)) {
          r = parsed;
          from = &h;
          break;
        }
      }
    }
    if (!r) return default_matrix ? default_matrix : load_matrix_or_fail(a.matrix);
    const std::string key = to_string(*r);
    auto it = by_release.find(key);
    if (it != by_release.end()) {
      if (!unknown_releases.count(key)) judged_release = key;
      return it->second;
    }
    const std::string eng = default_engine.empty() ? (*builtin_matrix())->info().engine : default_engine;
    // Older than every generation: judged against the oldest, with the release's own grammar and
    // advisories, as the library's check_input judges it (check.release-older).
    auto m = builtin_matrix_to_judge(eng, *r);
    if (m && m->oldest) {
      warning(release_older_message(eng, key, from ? " from " + hint_where(f->name, *from) : " (" + flag + ")", *m->oldest));
      judged_release = key;
      return by_release[key] = m->matrix;
    }
    if (!m) {
      if (!from) {
        Error e = m.error();
        e.where = flag;  // the release flag the user wrote
        fail(e);
      }
      warning(hint_where(f->name, *from) + ": " + m.error().message + "; checked against the newest matrix");
      unknown_releases.insert(key);
      return by_release[key] = default_matrix ? default_matrix : load_matrix_or_fail(a.matrix);
    }
    if (auto newest = newest_known_release(eng); newest && *newest < *r) {
      warning("release " + key + (from ? " from " + hint_where(f->name, *from) : " (" + flag + ")") +
              " is newer than any matrix attnsel knows (newest: " + to_string(*newest) + "); checked against the newest");
    } else if (from && a.format == "text" && !a.json && !a.quiet) {
      std::cerr << "attnsel: release " << encode_value(key + " from " + hint_where(f->name, *from), OutputChannel::terminal)
                << "\n";
    }
    judged_release = key;
    return by_release[key] = m->matrix;
  };

  // Each command is judged, written and dropped: the output streams, and memory stays flat however
  // many commands the files hold.
  auto parsed_format = parse_check_format(a.json ? "json" : a.format);
  if (!parsed_format) fail(parsed_format.error());
  const CheckFormat format = *parsed_format;
  // SARIF and GitLab's report are JSON documents; concise lines are read by log parsers, as annotations are.
  const bool json_document = format == CheckFormat::json || format == CheckFormat::sarif || format == CheckFormat::gitlab;
  CheckWriterOptions writer_options;
  writer_options.render = RenderOptions{format == CheckFormat::text && use_color()};
  writer_options.strict = a.strict;
  writer_options.quiet = a.quiet;
  writer_options.show_suppressed = a.verbose;
  std::vector<std::unique_ptr<CheckWriter>> writers;
  std::size_t summary_budget = 0;
  std::unique_ptr<StepSummary> step_summary = format == CheckFormat::github ? open_step_summary(summary_budget) : nullptr;
  writer_options.step_summary = step_summary != nullptr;
  set_output_channel(json_document                                                        ? OutputChannel::json
                     : format == CheckFormat::github || format == CheckFormat::concise ? OutputChannel::github
                                                                                       : OutputChannel::terminal,
                     writer_options.render.color);
  writers.push_back(make_check_writer(format, std::cout, writer_options));
  // --report FILE: the JSON document beside what --format prints (the Action's totals, from the same run).
  std::unique_ptr<std::ofstream> report;
  if (a.report) {
    report = std::make_unique<std::ofstream>(*a.report, std::ios::binary | std::ios::trunc);
    if (!report->good())
      fail(Error{ErrorCode::invalid_argument,
                 fmt::format("cannot write --report {}: {}", encode_value(*a.report, OutputChannel::terminal),
                             std::strerror(errno)),
                 "--report", {}, {}});
    CheckWriterOptions json_options = writer_options;
    json_options.render = RenderOptions{false};
    json_options.quiet = false;
    json_options.step_summary = false;
    writers.push_back(make_check_writer(CheckFormat::json, *report, json_options));
  }
  if (step_summary) {
    CheckWriterOptions md = writer_options;
    md.max_bytes = summary_budget;
    writers.push_back(make_check_writer(CheckFormat::markdown, *step_summary->out, md));
  }
  TeeWriter writer(std::move(writers));
  bool failed = false, any_skipped = false;
  // Each command is judged on its own targets: the GPUs of its part of the file (or --gpu), on the
  // platform it or its part says it runs on. One with no target left is a skipped block, told why.
  const std::string given_from = !run_rules.gpu_from.empty() ? run_rules.gpu_from : given.gpu ? "--gpu" : "ATTNSEL_GPU";
  auto check_all = [&](const std::vector<LaunchCommand>& commands, const std::shared_ptr<const Matrix>& matrix,
                       const FileContext* context, const std::string& file, std::string_view text) {
    options.release = judged_release;
    options.release_engine = release_engine;
    options.releases = other_releases;
    const FileLines lines(text);  // once per file, not per command
    // The file's suppression comments (`# attnsel: ignore[...]`), read once.
    std::optional<SourceSuppressions> comments;
    if (!text.empty()) comments.emplace(text, file);
    static const FileContext kNoContext;
    std::vector<Error> unscoped;
    std::set<std::string> told;  // a command read once per branch of its script is told of once
    for (const LaunchCommand& cmd : commands) {
      if (!std::cout) return;  // stdout failed (a full disk, a closed pipe): nothing more can be told
      const CommandScope scope = command_scope(context ? *context : kNoContext, cmd, gpu);
      const std::string where = file.empty() ? std::string("<command line>") : file + ":" + std::to_string(cmd.line);
      // A platform attnsel does not judge (TPU, Gaudi, Neuron) is a warning, whatever the GPUs.
      if (scope.platform && !parse_platform(scope.platform->value)) {
        std::string message = where + ": " + unscoped_message(scope, {}, given_from) + ": not checked";
        if (told.insert(message).second) warning(std::move(message));
        continue;
      }
      if (scope.gpus.empty()) continue;  // the file names no GPU: said once for the file
      const std::vector<CheckTarget>& listed = targets_for(scope.gpus);
      const std::vector<CheckTarget> on_platform = scoped_targets(listed, scope, file, given_from);
      if (on_platform.empty()) {  // a platform it judges, with no target in the list: not checked (exit 2), told what to add
        std::string message = unscoped_message(scope, listed, given_from);
        if (told.insert(where + ": " + message).second)
          unscoped.push_back(Error{ErrorCode::invalid_argument, std::move(message), where, {}, {}});
        continue;
      }
      // A reading of the script's branch for other GPUs: its other branch is judged on these.
      const std::vector<CheckTarget> targets = entry_targets(capability_targets(on_platform, cmd), scope);
      if (targets.empty()) {
        const std::vector<CheckTarget> branch = capability_targets(on_platform, cmd);
        const std::string message = branch.empty() ? capability_message(cmd, on_platform) : entry_message(scope, branch);
        if (a.format == "text" && !a.json && !a.quiet && told.insert(where + ": " + message).second)
          std::cerr << "attnsel: " << encode_value(where + ": " + message, OutputChannel::terminal) << "\n";
        continue;
      }
      std::vector<CommandCheck> results = check_command(matrix, *catalog, cmd, targets, options);
      if (!text.empty()) locate_columns(results, lines);
      suppress_findings(results, comments ? &*comments : nullptr, run_rules.rules);
      failed = failed || std::any_of(results.begin(), results.end(), [&](const CommandCheck& c) { return c.fails(a.strict); });
      writer.command(results, context);
    }
    writer.skipped(unscoped);
    any_skipped = any_skipped || !unscoped.empty();
    if (comments) {
      const std::vector<FileFinding> about = suppression_findings(*comments, run_rules.rules, run_rules.report_unused);
      failed = failed || std::any_of(about.begin(), about.end(), [&](const FileFinding& f) { return f.fails(a.strict); });
      writer.file_findings(about);
    }
  };
  if (after_separator) check_all(argv_commands, matrix_for(nullptr), nullptr, "", {});
  for (ScannedFile& f : scanned) {
    if (!std::cout) break;  // main() reports the failed write and exits 2
    if (!f.scan.commands.empty() && std::find(no_gpu.begin(), no_gpu.end(), &f) == no_gpu.end())
      check_all(f.scan.commands, matrix_for(&f), &f.scan.context, f.name, f.text);
    std::string().swap(f.text);
    writer.skipped(f.scan.skipped);
    any_skipped = any_skipped || !f.scan.skipped.empty();
  }

  inputs.files = files;
  inputs.files_with_commands = files_with;
  inputs.binary_skipped = binary;
  inputs.skipped_directories = walk.skipped_directories();
  inputs.skipped_files = walk.skipped_files();
  writer.finish(inputs);
  if (json_document) std::cout << "\n";
  bool report_failed = false;
  if (report) {
    *report << "\n";
    report->flush();
    if (!report->good()) {
      std::cerr << "attnsel: writing --report " << encode_value(*a.report, OutputChannel::terminal) << " failed\n";
      report_failed = true;
    }
  }
  bool summary_failed = false;
  if (step_summary) {
    step_summary->out->flush();
    if (const int err = step_summary->buffer->finish(); err != 0) {
      std::cerr << "attnsel: writing GITHUB_STEP_SUMMARY failed: " << std::strerror(err) << "\n";
      summary_failed = true;
    }
  }

  const std::size_t commands = argv_commands.size() + [&] {
    std::size_t n = 0;
    for (const ScannedFile& f : scanned) n += f.scan.commands.size();
    return n;
  }();
  // What a walk passed over is said whatever the format: never a silent skip (-q: nothing on
  // stderr but what the exit code stands for, the problems, told as they came).
  const std::string passed_over = walk.skipped.empty() ? std::string()
      : "; passed over " + describe_skipped(walk) + (a.verbose ? "" : " (--verbose lists them)");
  if (a.quiet) {
  } else if (!after_separator && commands == 0 && files > 0)
    std::cerr << fmt::format("attnsel: warning: no engine launch command found in {} file{}{}{}\n", files,
                             files == 1 ? "" : "s", binary ? fmt::format(" ({} binary skipped)", binary) : "",
                             passed_over);
  else if (!after_separator && !walk.files.empty() &&
           ((a.format == "text" && !a.json && (files > 1 || files_with < files)) || !walk.skipped.empty()))
    std::cerr << fmt::format("attnsel: read {} file{}, {} with launch commands{}{}\n", files, files == 1 ? "" : "s",
                             files_with, binary ? fmt::format(", {} binary skipped", binary) : "", passed_over);

  // An input or a block that could not be read: the verdict is incomplete, never a pass.
  if (!inputs.problems.empty() || any_skipped || summary_failed || report_failed) return kUsage;
  if (a.exit_zero) return kOk;  // findings are reported, never failed on
  if (a.strict && !inputs.warnings.empty()) return kInvalidPlan;
  return failed ? kInvalidPlan : kOk;
}

}  // namespace

Command add_check_command(CLI::App& app) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App* cmd = app.add_subcommand(
      "check", "check SGLang and vLLM launch commands (after --) or the scripts, Dockerfiles, compose/Kubernetes YAML and "
               "Markdown that hold them, for target GPUs");
  cmd->add_option("--gpu", args->gpu,
                  "target GPUs, comma-separated: sm90,sm100, H100, B200, MI300X; npu (ascend), xpu, cpu, mps, rocm "
                  "(default: ATTNSEL_GPU)");
  cmd->add_option("--cuda", args->cuda, "CUDA version X.Y of the NVIDIA targets (default: the catalog's assumption)");
  cmd->add_option("--installed", args->installed,
                  "Python packages the target hosts have, comma-separated (diffusion backends: sageattention, st_attn ...)");
  cmd->add_flag("--strict", args->strict,
                "warnings fail the check, and documented caveats (FlashMLA with FP8 KV) are errors");
  cmd->add_option("--format", args->format,
                  "text (default), json (one object: docs/schema/check.schema.json), github (workflow-command "
                  "annotations; the Markdown report is appended to $GITHUB_STEP_SUMMARY when set), markdown, sarif "
                  "(SARIF 2.1.0 for code scanning), concise (file:line:col: severity: message [rule]) or gitlab "
                  "(GitLab Code Quality)")
      ->check(CLI::IsMember(check_format_names()));
  cmd->add_flag("--exit-zero", args->exit_zero,
                "exit 0 whatever the findings (an input that cannot be read still exits 2)");
  cmd->add_flag("-q,--quiet", args->quiet,
                "text and concise: only what fails the check (errors; warnings too with --strict), nothing on success");
  cmd->add_flag("--json", args->json, "the same as --format json");
  cmd->add_option("--model-kind", args->model_kind,
                  "the kind of a model attnsel cannot resolve (default: what the backends imply, else mha)")
      ->check(CLI::IsMember({"mha", "mla", "gdn", "dsa"}));
  cmd->add_option("--unknown-model", args->unknown_model,
                  "a model attnsel cannot resolve is a note (default) or an error, for strict CI")
      ->check(CLI::IsMember({"note", "error"}));
  cmd->add_option("--matrix", args->matrix, "matrix JSON file (default: ATTNSEL_MATRIX, else the built-in one)");
  cmd->add_option("--engine-version", args->release,
                  "the engine release to check every command against, e.g. 0.5.3 (default: the release the file names "
                  "in an image tag or a pinned pip install, else the newest matrix)");
  cmd->add_option("--sglang-version", args->sglang_release, "the release of the SGLang commands only, e.g. 0.5.3");
  cmd->add_option("--vllm-version", args->vllm_release, "the release of the vLLM commands only, e.g. 0.11.0");
  cmd->add_option("--stdin-filename", args->stdin_filename,
                  "the name standard input is reported under and read as (its format comes from the name)");
  cmd->add_option("--exclude", args->exclude,
                  "pass over paths that match GLOB (gitignore syntax: *, **, a trailing / for folders, a leading / "
                  "anchors at the walked directory); repeatable; named files too")
      ->type_name("GLOB")
      ->allow_extra_args(false);
  cmd->add_option("--include", args->include,
                  "walk paths that match GLOB although a default would pass over them: a folder of the skip list "
                  "(--include build), a file of another kind (read as a shell script), a .gitignore'd path; "
                  "repeatable; --exclude wins")
      ->type_name("GLOB")
      ->allow_extra_args(false);
  cmd->add_flag("--no-gitignore", args->no_gitignore, "walk directories without reading their .gitignore files");
  cmd->add_flag("-v,--verbose", args->verbose,
                "list on stderr every path a directory walk passed over, with why; text: show suppressed findings");
  cmd->add_option("--select", args->select,
                  "only these rules count: comma-separated ids, families (args, check, advisory) or prefixes ending in * "
                  "(attnsel rule --list); replaces the settings file's select; repeatable")
      ->type_name("IDS")
      ->allow_extra_args(false);
  cmd->add_option("--ignore", args->ignore,
                  "these rules never count (suppressed: counted and shown as such, not in the verdict); ids, families "
                  "or prefixes* as --select; adds to the settings file's ignore; repeatable")
      ->type_name("IDS")
      ->allow_extra_args(false);
  cmd->add_flag("--report-unused-suppressions", args->report_unused,
                "a `# attnsel: ignore[...]` comment that suppressed nothing is a finding (check.unused-suppression)");
  cmd->add_option("--report", args->report,
                  "also write the JSON document (docs/schema/check.schema.json) to FILE, whatever --format prints: "
                  "annotations and their totals from one run")
      ->type_name("FILE");
  cmd->add_option("--settings", args->settings,
                  "the settings file (.attnsel.toml, or pyproject.toml's [tool.attnsel]); default: the nearest one in "
                  "the checked paths' directories and above, up to the repository's root")
      ->type_name("FILE");
  cmd->add_flag("--isolated", args->isolated, "read no settings file");
  cmd->add_flag("--files", args->files_marker,
                "every argument after it is a FILE or DIR, never an option (a file may be named --help or -); put it "
                "last: attnsel check --gpu sm90 --files deploy/*");
  cmd->add_option("inputs", args->inputs,
                  "FILE or DIR... (directories are walked in name order, passing over .git, node_modules, vendor, "
                  "build, dist ... and .gitignore'd paths, counted; a directory named is always walked; - reads "
                  "stdin, a shell script unless --stdin-filename names another format), or -- COMMAND...");
  cmd->footer(
      "Exit codes: 0 clean (warnings allowed without --strict; any findings with --exit-zero), 1 an error in a "
      "checked command (or a warning with --strict), 2 bad usage, unreadable input, a block not checked (a "
      "`skipped:` line says why: it does not parse, or runs on a platform no --gpu given is), or directories "
      "that gave no file to read.");
  return [cmd, args]() -> std::optional<int> {
    if (!*cmd) return std::nullopt;
    // CLI11 keeps the -- it saw among the subcommand's leftovers; everything after it is the command.
    // Bare flags need no -- to be told from file names.
    const std::vector<std::string> rest = cmd->remaining();
    if (const auto& files = files_after_marker()) {
      if (!args->inputs.empty() || !rest.empty())
        throw Failure{kUsage, "with --files, every file goes after it (and no launch command after --): "
                              "attnsel check --gpu sm90 --files FILE..."};
      // Paths only: "-" is a file named -, not standard input.
      for (const std::string& f : *files) args->inputs.push_back(f == "-" ? "./-" : f);
      return run_check(*args, false);
    }
    const bool after_separator = std::find(rest.begin(), rest.end(), "--") != rest.end() ||
                                 (!args->inputs.empty() && args->inputs.front().rfind("--", 0) == 0);
    return run_check(*args, after_separator);
  };
}

}  // namespace attnsel::cli
