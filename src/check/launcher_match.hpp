// Which launcher of an engine profile an argv starts, and where a shell's -c script is.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attnsel/profile.hpp"
#include "check/launch_internal.hpp"

namespace attnsel::launch_detail {

struct LauncherMatch {
  const Launcher* launcher = nullptr;
  std::string name;  // as written: "python3 -m <module>", "<program> <subcommand>"
  std::size_t args_begin = 0;
};

// The launcher of an engine profile that argv[k] starts, if any.
std::optional<LauncherMatch> match_launcher(const std::vector<ArgWord>& argv, std::size_t k,
                                            const std::vector<Launcher>& launchers);

// False when neither match_launcher nor match_shell_script can match at a word with this text: it
// is no launcher's program and no shell, and it is no interpreter (python3.12, $PYTHON) or no
// later word may be the -m of a module (`module_flag_follows`: a later word starts with "-m").
bool may_start_launcher(std::string_view word, bool module_flag_follows, const std::vector<Launcher>& launchers);

// may_start_launcher for the many words of a script: the first bytes of the launchers' programs
// and of the shells are noted once, so that most words are passed over after one lookup.
class LauncherStarts {
 public:
  explicit LauncherStarts(const std::vector<Launcher>& launchers);
  bool may_start(std::string_view word, bool module_flag_follows) const;

 private:
  const std::vector<Launcher>* launchers_;
  bool initial_[256] = {};
};

// `bash -c SCRIPT`, `sh -lc SCRIPT`, `bash -o pipefail -c SCRIPT`: the index of SCRIPT.
std::optional<std::size_t> match_shell_script(const std::vector<ArgWord>& argv, std::size_t k);

}  // namespace attnsel::launch_detail
