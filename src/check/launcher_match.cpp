#include "check/launcher_match.hpp"

#include <algorithm>
#include <cctype>

namespace attnsel::launch_detail {
namespace {

// python, python3, python3.12
bool is_python(std::string_view base) {
  if (!starts_with(base, "python")) return false;
  for (char c : base.substr(6)) {
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.')) return false;
  }
  return true;
}

constexpr std::string_view kShells[] = {"sh", "bash", "dash", "zsh", "ash", "ksh"};

bool is_shell(std::string_view base) {
  return std::find(std::begin(kShells), std::end(kShells), base) != std::end(kShells);
}

constexpr std::string_view kContainerRuntimes[] = {"docker", "podman", "nerdctl"};

bool is_container_runtime(std::string_view base) {
  return std::find(std::begin(kContainerRuntimes), std::end(kContainerRuntimes), base) !=
         std::end(kContainerRuntimes);
}

// `docker run` options that take no value (docker and podman run references); every other option
// written without "=" takes the next word.
constexpr std::string_view kRunSwitches[] = {
    "--detach", "--interactive", "--tty", "--rm", "--privileged", "--init", "--publish-all", "--read-only",
    "--quiet", "--no-healthcheck", "--oom-kill-disable", "--disable-content-trust", "--sig-proxy", "--help",
    "--replace", "--rmi", "--no-hosts", "--http-proxy", "--env-host", "--systemd", "--read-only-tmpfs"};

// Short options of `docker run` that take a value: -a -c -e -h -l -m -p -u -v -w.
bool short_takes_value(char c) { return std::string_view("acehlmpuvw").find(c) != std::string_view::npos; }

}  // namespace

// The launcher of an engine profile that argv[k] starts, if any.
std::optional<LauncherMatch> match_launcher(const std::vector<ArgWord>& argv, std::size_t k,
                                            const std::vector<Launcher>& launchers) {
  const std::string_view word = argv[k].text;
  const std::string_view base = basename(word);
  const std::size_t n = argv.size();
  for (const Launcher& l : launchers) {
    if (l.program.empty() || base != l.program || k + l.subcommand.size() >= n) continue;
    bool same = true;
    for (std::size_t s = 0; same && s < l.subcommand.size(); ++s) same = argv[k + 1 + s].text == l.subcommand[s];
    if (!same) continue;
    std::string name(base);
    for (const std::string& s : l.subcommand) name += " " + s;
    return LauncherMatch{&l, std::move(name), k + 1 + l.subcommand.size()};
  }
  // A launcher's module written as the command (`sglang.launch_server --model-path ...`, the
  // interpreter left out, as reports often quote it): the shell would not find it, but the words
  // after it are that launcher's arguments. check says so (check.module-as-command).
  if (k + 1 < n && starts_with(argv[k + 1].text, "-")) {
    for (const Launcher& l : launchers)
      if (!l.module.empty() && word == l.module) return LauncherMatch{&l, l.module, k + 1};
  }
  // An interpreter named by a variable ($PYTHON -m module) counts too.
  if (!is_python(base) && !starts_with(word, "$")) return std::nullopt;
  std::size_t j = k + 1;
  while (j < n && starts_with(argv[j].text, "-") && !starts_with(argv[j].text, "-m")) {
    const std::string& opt = argv[j].text;
    if (opt == "-c" || opt == "-") return std::nullopt;  // python -c CODE, or a script on stdin
    if (opt == "-X" || opt == "-W") ++j;                 // these take a value
    ++j;
  }
  if (j >= n) return std::nullopt;
  std::string module;
  std::size_t next = j + 1;
  if (argv[j].text == "-m") {
    if (j + 1 >= n) return std::nullopt;
    module = argv[j + 1].text;
    next = j + 2;
  } else if (starts_with(argv[j].text, "-m")) {
    module = argv[j].text.substr(2);
  } else {
    return std::nullopt;
  }
  for (const Launcher& l : launchers)
    if (!l.module.empty() && l.module == module) return LauncherMatch{&l, std::string(base) + " -m " + module, next};
  return std::nullopt;
}

bool may_start_launcher(std::string_view word, bool module_flag_follows, const std::vector<Launcher>& launchers) {
  const std::string_view base = basename(word);
  if (module_flag_follows && (starts_with(word, "$") || is_python(base))) return true;
  if (is_shell(base) || is_container_runtime(base)) return true;
  return std::any_of(launchers.begin(), launchers.end(), [&](const Launcher& l) {
    return (!l.program.empty() && base == l.program) || (!l.module.empty() && word == l.module);
  });
}

LauncherStarts::LauncherStarts(const std::vector<Launcher>& launchers) : launchers_(&launchers) {
  for (const Launcher& l : launchers)
    for (const std::string* name : {&l.program, &l.module})
      if (!name->empty()) initial_[static_cast<unsigned char>(name->front())] = true;
  for (std::string_view shell : kShells) initial_[static_cast<unsigned char>(shell.front())] = true;
  for (std::string_view runtime : kContainerRuntimes) initial_[static_cast<unsigned char>(runtime.front())] = true;
}

bool LauncherStarts::may_start(std::string_view word, bool module_flag_follows) const {
  const std::string_view base = basename(word);
  if (!base.empty() && initial_[static_cast<unsigned char>(base.front())])
    return may_start_launcher(word, module_flag_follows, *launchers_);
  // No program or shell starts with this byte: only an interpreter before a -m word can start one.
  return module_flag_follows && (starts_with(word, "$") || is_python(base));
}

const Launcher* launcher_of_image(std::string_view reference, const std::vector<Launcher>& launchers) {
  std::string_view repo = reference.substr(0, reference.find('@'));
  const std::size_t slash = repo.rfind('/');
  const std::size_t colon = repo.rfind(':');
  if (colon != npos && (slash == npos || colon > slash)) repo = repo.substr(0, colon);
  const std::size_t first = repo.find('/');
  if (first != npos) {  // a registry host: "ghcr.io/", "localhost:5000/", "localhost/"
    const std::string_view host = repo.substr(0, first);
    if (host.find_first_of(".:") != npos || host == "localhost") repo.remove_prefix(first + 1);
  }
  if (starts_with(repo, "library/")) repo.remove_prefix(8);
  for (const Launcher& l : launchers)
    for (const std::string& image : l.images)
      if (repo == image) return &l;
  return nullptr;
}

std::optional<ContainerRun> match_container_run(const std::vector<ArgWord>& argv, std::size_t k) {
  if (!is_container_runtime(basename(argv[k].text))) return std::nullopt;
  std::size_t j = k + 1;
  if (j < argv.size() && argv[j].text == "container") ++j;
  if (j >= argv.size() || argv[j].text != "run") return std::nullopt;
  ContainerRun run;
  for (++j; j < argv.size(); ++j) {
    const std::string& t = argv[j].text;
    if (t == "--") {
      if (j + 1 >= argv.size()) return std::nullopt;
      run.image = j + 1;
      return run;
    }
    if (!starts_with(t, "-") || t == "-") {
      run.image = j;
      return run;
    }
    if (starts_with(t, "--")) {
      const std::size_t eq = t.find('=');
      const std::string_view name = std::string_view(t).substr(0, eq);
      if (name == "--entrypoint") {
        if (eq != npos) {
          run.entrypoint = argv[j];
          run.entrypoint->text = t.substr(eq + 1);
        } else if (j + 1 < argv.size()) {
          run.entrypoint = argv[j + 1];
        }
      }
      if (eq == npos && std::find(std::begin(kRunSwitches), std::end(kRunSwitches), name) == std::end(kRunSwitches))
        ++j;  // the value
      continue;
    }
    // Short options, grouped (-it, -dit) or with a value attached (-p8000:8000) or following (-p 8000:8000).
    for (std::size_t c = 1; c < t.size(); ++c) {
      if (!short_takes_value(t[c])) continue;
      if (c + 1 == t.size()) ++j;  // the value is the next word
      break;
    }
  }
  return std::nullopt;
}

std::optional<std::size_t> match_shell_script(const std::vector<ArgWord>& argv, std::size_t k) {
  if (!is_shell(basename(argv[k].text))) return std::nullopt;
  // bash(1): with -c, the first argument after the options is the command string; `--` or `-`
  // ends the options (`bash -lc -- "SCRIPT"`, as aibrix's samples write a container command).
  bool command_string = false;
  for (std::size_t j = k + 1; j < argv.size(); ++j) {
    const std::string& t = argv[j].text;
    if (t == "-" || t == "--") {
      if (!command_string || j + 1 >= argv.size()) return std::nullopt;
      return j + 1;
    }
    if (!starts_with(t, "-")) {
      if (!command_string) return std::nullopt;  // a script file we cannot see
      return j;
    }
    if (starts_with(t, "--")) continue;  // --login, --norc
    if (t.find('c') != npos) command_string = true;
    if (t == "-o") ++j;
  }
  return std::nullopt;
}

}  // namespace attnsel::launch_detail
