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
// is no launcher's program or module and no shell, and it is no interpreter (python3.12, $PYTHON) or no
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

// The launcher whose container image `reference` runs ("docker.io/vllm/vllm-openai:v0.11.0" ->
// vllm serve): the registry host, the tag and the digest are set aside. Null when none.
const Launcher* launcher_of_image(std::string_view reference, const std::vector<Launcher>& launchers);

// `docker run [OPTIONS] IMAGE [ARG...]` (podman, nerdctl; `container run` too) at argv[k].
struct ContainerRun {
  std::size_t image = 0;                // the index of IMAGE
  std::optional<ArgWord> entrypoint;    // --entrypoint PROGRAM: it runs with the words after IMAGE
};
std::optional<ContainerRun> match_container_run(const std::vector<ArgWord>& argv, std::size_t k);

}  // namespace attnsel::launch_detail
