// The input side of `attnsel check`: SGLang launch commands, found in argv, shell scripts,
// Dockerfiles, compose and Kubernetes YAML and Markdown, and the attention flags they set.
// Finding and parsing only; judging the values is the engine's work.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attnsel/error.hpp"
#include "attnsel/export.hpp"
#include "attnsel/profile.hpp"

namespace attnsel {

// How a word of a command becomes arguments when the shell runs it.
enum class WordShape : std::uint8_t {
  literal,  // exactly as written
  value,    // one argument whose text the shell fills in: "$X", "${X:-8}", "$(cmd)"
  words,    // zero or more arguments: "$@", "${A[@]}", an unquoted $EXTRA_ARGS
};

// One engine launch command, as the launched program would receive it.
struct LaunchCommand {
  // The arguments after the launcher ("--model-path", "X", ...), shell quoting removed.
  // Env prefixes (FOO=1), wrappers (nohup, env, exec, uv run, docker run IMAGE ...) and the
  // launcher words themselves are not in it; $VAR and $(cmd) are kept literally.
  std::vector<std::string> args;
  std::vector<int> arg_lines;  // 1-based source line of each arg; 0 for the command-line form
  std::vector<WordShape> arg_shapes;  // parallel to args; empty when every arg is literal
  std::string file;            // "" for the command-line form
  int line = 0;                // line of the command's first word (env prefix included); 0 for argv
  // "python3 -m sglang.launch_server" (the interpreter's basename as written: python, python3.11,
  // $PYTHON), "python3 -m sglang_router.launch_server", "sglang serve", "sglang generate", or
  // "flags" for bare flags on the command line.
  std::string launcher;
  std::string engine;   // the profile whose launcher matched ("" for bare flags)
  std::string grammar;  // the launcher's grammar in that profile
  bool positional_model = false;  // the launcher takes MODEL as its first word (`sglang serve MODEL`)
  // Variables its engine's profile reads from the environment, as the file sets them: Dockerfile
  // ENV for every command of the file; compose `environment:` and Kubernetes `env:` for the
  // commands of the innermost block holding both (the service, the container), every command where
  // no block does; a shell `export` for the commands from its line on; and one written on the
  // command's own lines (`VAR=... cmd`, `docker run -e VAR=...`) for that command alone.
  struct EnvSetting {
    std::string name, value;
    int line = 0;
  };
  std::vector<EnvSetting> environment;
  // The branch of the script this reading of the command comes from, when the script assigns its
  // variables on several branches (if/else, case, getopts) and the command is read once per set
  // of values: the branch assignments its words use, "KV=fp8_e4m3 (line 3)"; "" for the script's
  // defaults and for a command read once.
  std::string branch;
  // The reading of a branch the script takes by the GPU's compute capability
  // (`CC=$(nvidia-smi --query-gpu=compute_cap ...)`, then `if [ "$CC" = "10.0" ]`): the capability
  // the branch needs (`equal`) or excludes, and the line of the test. Judged only on targets that
  // agree; unset for any other reading.
  struct CapabilityTest {
    std::string value;  // as the script writes it: "10.0"
    bool equal = true;
    int line = 0;
    friend bool operator==(const CapabilityTest& a, const CapabilityTest& b) {
      return a.value == b.value && a.equal == b.equal && a.line == b.line;
    }
    friend bool operator!=(const CapabilityTest& a, const CapabilityTest& b) { return !(a == b); }
  };
  std::optional<CapabilityTest> capability;
  // YAML files the text holding the command writes or shows before the command, where a
  // `--config FILE` it names is read first: a heredoc (`cat > cfg.yaml <<EOF ... EOF`), a Markdown
  // code block under the file's name (`cfg.yaml` on the line before it), the text itself when it is
  // a config file judged on its own.
  struct WrittenFile {
    std::string path;                          // as written: "cfg.yaml", "/tmp/cfg.yaml"
    std::shared_ptr<const std::string> text;   // its content as written
    int line = 0;                              // the line of its first line in the command's file
    bool expands = false;                      // the shell fills in its $VAR as it writes it (<<EOF)
    // A service's part of an orchestrator's config (a dynamo `...Worker:` section): its keys that
    // name no flag and hold a mapping (ServiceArgs) are the orchestrator's, not the engine's.
    bool section = false;
  };
  std::vector<WrittenFile> written;

  WordShape shape(std::size_t k) const { return k < arg_shapes.size() ? arg_shapes[k] : WordShape::literal; }
};

// Reading the arguments the way the engine does is launch_args.hpp's parse_launch_args().

// One command given as argv (`attnsel check -- python3 -m sglang.launch_server ...`): a launcher
// with its arguments, bare flags (`-- --attention-backend fa3 ...`), or the whole command as one
// quoted string. An argv that is neither an SGLang launcher nor flags is an Error.
ATTNSEL_API Result<LaunchCommand> launch_command_from_argv(const std::vector<std::string>& argv,
                                                          const std::vector<Launcher>& launchers = builtin_launchers());

// New formats are added at the end: the values are part of the ABI.
enum class InputFormat {
  detect, shell, dockerfile, compose, kubernetes, markdown, python, helm, rst, asciidoc,
  makefile,  // Makefile, GNUmakefile, *.mk: recipe lines, with the file's make variables
  justfile,  // justfile: recipe lines, with the file's variables and the recipes' parameter defaults
  procfile,  // Procfile: `name: command` lines
  systemd,   // systemd units (*.service): ExecStart= and its kin, with Environment=
  notebook,  // Jupyter notebooks (*.ipynb): the Markdown they render, %%bash cells and !lines as shell
};

ATTNSEL_API std::string_view name_of(InputFormat f);
// The format a file is read as, by name, else by its first line:
//   Dockerfile, Containerfile, Dockerfile.*, *.dockerfile -> dockerfile; *.md, *.markdown, *.mdx ->
//   markdown; *.py or a python shebang -> python; *.rst, *.rest -> rst; *.adoc, *.asciidoc, *.asc ->
//   asciidoc; *.tpl and YAML under templates/ or holding `{{ ... }}` -> helm; docker-compose*.yml,
//   compose*.yaml, other *.yml/*.yaml by content (apiVersion/kind -> kubernetes, services ->
//   compose); *.sh, *.bash, *.zsh, *.ksh, *.slurm, *.sbatch, *.pbs, or a sh/bash/zsh/ksh/dash
//   shebang -> shell; Makefile, GNUmakefile, makefile, Makefile.*, *.mk, *.make -> makefile;
//   justfile, .justfile, *.just -> justfile; Procfile, Procfile.* -> procfile; *.service -> systemd;
//   *.ipynb -> notebook.
//   The first line of a file whose extension says it is never a script (*.c, *.h, *.json, *.txt,
//   images, archives ...) is not looked at.
//   A Jinja template (*.j2, *.jinja, *.jinja2) is read as what its name is without that suffix
//   (serve.sh.j2 as shell, values.yaml.j2 as YAML), its {% ... %} and {# ... #} blanked and its
//   {{ ... }} unknown values.
// nullopt for a file of another kind: a directory walk passes over it (counted), and
// detect_input_format reads it as shell. `text` may be only the file's first bytes: its first line
// (a shebang) decides, and YAML's kind is only told apart with the whole text.
ATTNSEL_API std::optional<InputFormat> recognised_format(std::string_view file_name, std::string_view text);
// recognised_format, shell for a file of another kind. Never returns detect.
ATTNSEL_API InputFormat detect_input_format(std::string_view file_name, std::string_view text);
// Whether this build reads compose and Kubernetes YAML (built with yaml-cpp).
ATTNSEL_API bool yaml_input_supported();

// Something a file says about where its commands run, with where it said it.
struct ContextHint {
  std::string value;   // "H100", "0.5.5", "DeepSeek-R1-0528"
  std::string source;  // what it was read from: "nodeSelector nvidia.com/gpu.product", "image tag", ...
  std::string text;    // the text as written ("NVIDIA-H100-80GB-HBM3", "lmsysorg/...:v0.5.5-cu126")
  std::string engine;  // release hints: the engine profile the release belongs to; "" otherwise
  int line = 0;
  // GPU and platform hints: the lines they hold for, inclusive. A document's section, tab,
  // admonition or the code block a sentence introduces; a manifest's YAML document; the code block
  // or file a platform marker (a ROCm image, HIP_VISIBLE_DEVICES ...) is written in. 0 and 0: the
  // whole file.
  int scope_first = 0, scope_last = 0;
  // A GPU a paragraph of a section names ("You can use 4x H200 or 4x A100 GPUs"), not a title, a
  // code comment or the sentence that introduces the block: it holds a command only where none of
  // those names a GPU, and it is no GPU of the file for commands outside its part.
  bool paragraph = false;
  // A GPU or platform a YAML mapping key names (`hardware: {B200: {...}}`, `hardware_overrides:
  // {amd: {...}}`) whose lines hold a command: what is under the key is for that hardware alone, so
  // a command there is judged only on targets of its architecture (platform), --gpu given or not,
  // and a command outside every entry is not judged on the targets an entry is for.
  bool entry = false;

  bool holds(int l) const { return scope_first == 0 || (l >= scope_first && l <= scope_last); }
};

// What a file itself says about its target: GPUs (Kubernetes node selectors and affinities,
// cloud instance types, dstack `gpu:`, SkyPilot `accelerators:`), engine releases (image tags
// of an image named like the engine, `pip install ENGINE==X.Y.Z`) and models (served names and
// model path basenames of the commands found). In source order, each value once (its first
// mention), at most 32 of a kind. GPUs are also read from the titles of a document's sections,
// tabs and admonitions, and from the sentence before a code block ("On B200, run:"), each for
// its part of the document (scope_first, scope_last), and from a section's paragraphs (`paragraph`);
// a GPU once per part, at most 128 (64 from paragraphs).
struct FileContext {
  std::vector<ContextHint> gpus, releases, models;
  // The platforms parts of the file are for, scoped as the GPUs are: value "cuda", "rocm", "npu",
  // "xpu", "cpu" (attnsel judges these), or "tpu", "hpu", "neuron" (it does not). From a title
  // ("### AMD (ROCm)", a tab "NVIDIA") or a marker: a ROCm or CANN image, /dev/kfd,
  // HIP_VISIBLE_DEVICES, amd.com/gpu or nvidia.com/gpu resources, ASCEND_RT_VISIBLE_DEVICES, an
  // engine image its profile names (a CUDA build) ...
  std::vector<ContextHint> platforms;
  // Settings of variables an engine profile reads: value, source = the variable, engine.
  std::vector<ContextHint> environment;
  bool empty() const { return gpus.empty() && releases.empty() && models.empty(); }
};

// A file read as its format: the commands found, the blocks that could not be tokenised (each
// one Error, parse_error, where = "file:line:col", the rest of the file still read) and the
// context hints.
struct LaunchScan {
  std::vector<LaunchCommand> commands;
  std::vector<Error> skipped;
  FileContext context;
  // An Error that stopped the whole file (YAML support missing from this build); nullopt else.
  std::optional<Error> fatal;
};

ATTNSEL_API LaunchScan scan_launch_input(std::string_view text, std::string_view file_name,
                                         InputFormat format = InputFormat::detect,
                                         const std::vector<Launcher>& launchers = builtin_launchers());

// What scan_launch_input reads besides the commands.
struct ScanOptions {
  // The context hints of a file that holds no command. A caller that uses only the hints of files
  // with commands (attnsel check: the GPUs and release of the commands it judges) sets this false
  // and gets an empty LaunchScan::context for such files, read faster.
  bool context_without_commands = true;
};
ATTNSEL_API LaunchScan scan_launch_input(std::string_view text, std::string_view file_name, InputFormat format,
                                         const std::vector<Launcher>& launchers, const ScanOptions& options);

// The context hints of a text alone (no commands needed); scan_launch_input also adds the model
// hints of its commands. Exposed for tests.
ATTNSEL_API FileContext find_file_context(std::string_view text, const std::vector<Launcher>& launchers = builtin_launchers());

// A GPU name as attnsel's --gpu takes it ("H100", "B200", "MI300X") from a label or instance type
// ("NVIDIA-H100-80GB-HBM3", "nvidia-h100-80gb", "p5.48xlarge", "Standard_ND96isr_H100_v5"); "" when
// none is recognised.
ATTNSEL_API std::string gpu_from_label(std::string_view label);

// Every SGLang launch command inside a file's text, in source order, with file and line.
// An Error (parse_error, where = "file:line:col") when the file cannot be read as its format:
// a shell script that does not tokenise, invalid YAML, a Dockerfile instruction or Markdown
// block that mentions sglang and does not tokenise; invalid_argument for YAML in a build
// without yaml-cpp. The first of scan_launch_input's `skipped` errors, for callers that want
// the whole file or nothing; new callers use scan_launch_input.
ATTNSEL_API Result<std::vector<LaunchCommand>> find_launch_commands(
    std::string_view text, std::string_view file_name, InputFormat format = InputFormat::detect,
    const std::vector<Launcher>& launchers = builtin_launchers());

}  // namespace attnsel
