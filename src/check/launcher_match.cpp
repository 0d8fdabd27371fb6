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
  if (is_shell(base)) return true;
  return std::any_of(launchers.begin(), launchers.end(),
                     [&](const Launcher& l) { return !l.program.empty() && base == l.program; });
}

LauncherStarts::LauncherStarts(const std::vector<Launcher>& launchers) : launchers_(&launchers) {
  for (const Launcher& l : launchers)
    if (!l.program.empty()) initial_[static_cast<unsigned char>(l.program.front())] = true;
  for (std::string_view shell : kShells) initial_[static_cast<unsigned char>(shell.front())] = true;
}

bool LauncherStarts::may_start(std::string_view word, bool module_flag_follows) const {
  const std::string_view base = basename(word);
  if (!base.empty() && initial_[static_cast<unsigned char>(base.front())])
    return may_start_launcher(word, module_flag_follows, *launchers_);
  // No program or shell starts with this byte: only an interpreter before a -m word can start one.
  return module_flag_follows && (starts_with(word, "$") || is_python(base));
}

std::optional<std::size_t> match_shell_script(const std::vector<ArgWord>& argv, std::size_t k) {
  if (!is_shell(basename(argv[k].text))) return std::nullopt;
  for (std::size_t j = k + 1; j < argv.size(); ++j) {
    const std::string& t = argv[j].text;
    if (!starts_with(t, "-") || t == "-" || t == "--") return std::nullopt;  // a script file we cannot see
    if (starts_with(t, "--")) continue;                                     // --login, --norc
    if (t.find('c') != npos) return j + 1 < argv.size() ? std::optional<std::size_t>(j + 1) : std::nullopt;
    if (t == "-o") ++j;
  }
  return std::nullopt;
}

}  // namespace attnsel::launch_detail
