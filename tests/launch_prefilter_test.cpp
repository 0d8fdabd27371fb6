// The launch readers' shortcuts change nothing they find: the shell reader passes over commands
// that cannot launch anything without expanding them (read_shell.cpp, may_extract), and the
// context reader reads only the lines that hold one of its needles (launch_context.cpp,
// lines_holding). Every fixture, the fuzz seeds and regressions, tricky hand-written scripts and
// thousands of generated ones are read in every format both ways, and must come out the same.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "attnsel/launch.hpp"
#include "check/launch_internal.hpp"

#ifndef ATTNSEL_TESTS_DIR
#define ATTNSEL_TESTS_DIR "tests"
#endif
#ifndef ATTNSEL_SOURCE_DIR
#define ATTNSEL_SOURCE_DIR "."
#endif

namespace attnsel {
namespace {

namespace fs = std::filesystem;

constexpr InputFormat kFormats[] = {InputFormat::detect,   InputFormat::shell,  InputFormat::dockerfile,
                                    InputFormat::compose,  InputFormat::kubernetes, InputFormat::markdown,
                                    InputFormat::python,   InputFormat::helm,   InputFormat::rst,
                                    InputFormat::asciidoc};

void hints(std::ostringstream& out, const char* kind, const std::vector<ContextHint>& hs) {
  for (const ContextHint& h : hs)
    out << kind << " " << h.value << " | " << h.source << " | " << h.text << " | " << h.engine << " | " << h.line << "\n";
}

// Everything a scan found, one line per item.
std::string describe(const LaunchScan& scan) {
  std::ostringstream out;
  for (const LaunchCommand& c : scan.commands) {
    out << "command " << c.file << ":" << c.line << " " << c.launcher << " [" << c.engine << "/" << c.grammar
        << (c.positional_model ? " positional" : "") << "]";
    for (std::size_t k = 0; k < c.args.size(); ++k)
      out << " {" << c.args[k] << "@" << (k < c.arg_lines.size() ? c.arg_lines[k] : -1) << "/"
          << static_cast<int>(c.shape(k)) << "}";
    out << " shapes=" << c.arg_shapes.size() << " lines=" << c.arg_lines.size();
    for (const LaunchCommand::EnvSetting& e : c.environment) out << " env " << e.name << "=" << e.value << "@" << e.line;
    out << "\n";
  }
  for (const Error& e : scan.skipped) out << "skipped " << e.where << ": " << e.message << "\n";
  if (scan.fatal) out << "fatal " << scan.fatal->where << ": " << scan.fatal->message << "\n";
  hints(out, "gpu", scan.context.gpus);
  hints(out, "release", scan.context.releases);
  hints(out, "model", scan.context.models);
  hints(out, "environment", scan.context.environment);
  return out.str();
}

// The text read in every format, with the shortcuts and without them.
void expect_same(const std::string& text, const std::string& name) {
  const std::vector<Launcher>& launchers = builtin_launchers();
  for (InputFormat format : kFormats) {
    const LaunchScan fast = launch_detail::scan_launch_input(text, name, format, launchers, {true, false});
    const LaunchScan full = launch_detail::scan_launch_input(text, name, format, launchers, {false, true});
    ASSERT_EQ(describe(fast), describe(full)) << name << " read as " << name_of(format);
  }
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(LaunchPrefilter, EveryFixtureAndFuzzInputReadsTheSame) {
  std::size_t files = 0;
  for (const fs::path root : {fs::path(ATTNSEL_TESTS_DIR) / "fixtures", fs::path(ATTNSEL_SOURCE_DIR) / "fuzz",
                              fs::path(ATTNSEL_SOURCE_DIR) / "examples"}) {
    if (!fs::is_directory(root)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
      if (!entry.is_regular_file() || entry.file_size() > (1u << 20)) continue;
      std::string text = read(entry.path());
      expect_same(text, entry.path().string());
      // The fuzz targets' inputs start with a byte that picks the format (fuzz/targets.hpp).
      if (!text.empty() && static_cast<unsigned char>(text[0]) < 16) expect_same(text.substr(1), entry.path().string());
      ++files;
    }
  }
  EXPECT_GT(files, 100u);
}

// Launches the shortcut must not miss: words assembled by quotes, escapes, variables, defaults,
// arrays, eval, sh -c, heredocs; interpreters named by variables; launchers after wrappers.
TEST(LaunchPrefilter, AssembledLaunchesReadTheSame) {
  const char* const kScripts[] = {
      "sgl\"ang\" serve m --tp 2\n",
      "sgl\\ang serve m\n",
      "'python3' -m sglang.launch_server --model-path m\n",
      "python3 -m 'sglang'.launch_server --model-path m\n",
      "A=sgl\n${A}ang serve m\n",
      "A=sglang\n\"$A\" serve m\n",
      "M=sglang.launch_server\npython -m $M --model-path m\n",
      "P=python3\n$P -m sglang.launch_server --tp 8\n",
      "${PY:-python3} -m sglang.launch_server --tp 8\n",
      "\"${PYTHON:-python}\" -m sglang.launch_server\n",
      "$PYTHON -m sglang.launch_server --tp 8\n",
      "$PYTHON -msglang.launch_server --tp 8\n",
      "CMD=\"python3 -m sglang.launch_server --model-path m\"\n$CMD --tp 2\n",
      "CMD=(python3 -m sglang.launch_server --model-path m)\n\"${CMD[@]}\" --tp 2\n",
      "CMD=(vllm serve)\nCMD+=(m --tensor-parallel-size 2)\n\"${CMD[@]}\"\n",
      "ARGS=(--tp 8)\npython3 -m sglang.launch_server \"${ARGS[@]}\" \"$@\" $EXTRA\n",
      "eval python3 -m sglang.launch_server --tp 2\n",
      "eval \"$CMD\"\n",
      "X='python3 -m sglang.launch_server'\neval $X --tp 4\n",
      "bash -c \"python3 -m sglang.launch_server --tp 2\"\n",
      "sh -lc 'vllm serve m'\n",
      "S=sh\n$S -c 'sglang serve m'\n",
      "cat > run.sh <<EOF\npython3 -m sglang.launch_server --tp $TP\nEOF\n",
      "cat <<'X'\nvllm serve m\nX\n",
      "nohup env A=1 python3.12 -m sglang.launch_server --tp 2 &\n",
      "exec /usr/bin/python3 -m vllm.entrypoints.openai.api_server --model m\n",
      "uv run sglang serve m\n",
      "docker run img python3 -m sglang.launch_server --tp 2\n",
      "echo python3 -m sglang.launch_server\n",
      "E=echo\n$E python3 -m sglang.launch_server\n",
      "X=${X:-python3}\n$X -m sglang.launch_server\n",
      "export PY=python3\n$PY -m sglang.launch_server\n",
      "local V=sglang; $V serve m\n",
      "declare -a A=(sglang serve m)\n\"${A[@]}\"\n",
      "for i in 1 2; do python -m sglang.launch_server --port $((30000 + i)); done\n",
      "if true; then vllm serve m; fi\n",
      "f() { python3 -m sglang.launch_server \"$@\"; }\nf --tp 2\n",
      "python3 -W ignore -X dev -m sglang.launch_server\n",
      "python3 -u - <<EOF\nprint(1)\nEOF\n",
      "$1 -m sglang.launch_server\n",
      "${@} -m sglang.launch_server\n",
      "`which python3` -m sglang.launch_server\n",
      "$(which python3) -m sglang.launch_server\n",
      "sglang generate --model-path m\n",
      "A=gen\nsglang ${A}erate --model-path m\n",
      "python3 -m sglang_router.launch_server --model-path m\n",
      "python3 -m dynamo.sglang --model-path m\n",
      "python3 -m sglang.launch_server 'unterminated\n",
      "echo \"unterminated\nvllm serve m\n",
      "X=( a b\n",
      "CMD=\"vllm\"\n$CMD serve m\n",
      "PYTHON=python3 $PYTHON -m sglang.launch_server\n",
      "A=-m\npython3 $A sglang.launch_server\n",
      "python3 ${M:--m} sglang.launch_server\n",
  };
  for (const char* script : kScripts) expect_same(script, "script.sh");
}

// Scripts built at random from launch words, variables, quotes and shell syntax (seeded: the same
// scripts on every run and platform).
TEST(LaunchPrefilter, GeneratedScriptsReadTheSame) {
  const char* const kWords[] = {
      "python3",  "python",      "python3.11", "$PYTHON",   "${PY:-python3}", "-m",       "-msglang.launch_server",
      "sglang.launch_server",     "sglang",     "serve",     "vllm",           "generate", "sh",
      "bash",     "-c",          "-lc",        "eval",      "echo",           "env",      "nohup",
      "X=1",      "CMD=python3", "M=sglang.launch_server",   "P=$X",           "$CMD",     "$M",
      "\"$@\"",   "$EXTRA",      "${ARGS[@]}", "--tp",      "8",              "--model-path", "m",
      "sgl\"ang\"", "'vllm'",    "\\\n",       ";",         "&&",             "|",        "\n",
      "(",        ")",           "ARR=(",      "$(date)",   "`id`",           "<<EOF\nvllm serve m\nEOF\n",
      "#",        "export",      "local",      "A=sgl",     "${A}ang",        "\"",       "'",
  };
  constexpr std::size_t kCount = sizeof kWords / sizeof kWords[0];
  std::mt19937 rng(16);
  for (int n = 0; n < 4000; ++n) {
    std::string script;
    const std::size_t words = 1 + rng() % 24;
    for (std::size_t k = 0; k < words; ++k) {
      script += kWords[rng() % kCount];
      script += rng() % 4 == 0 ? "\n" : " ";
    }
    SCOPED_TRACE(script);
    expect_same(script, "generated.sh");
    if (HasFatalFailure()) return;
  }
}

// Context hints: keys split over lines, needles at the start and end of the text, CRLF lines.
TEST(LaunchPrefilter, ContextHintsReadTheSame) {
  const char* const kTexts[] = {
      "nodeSelector:\n  nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3\n",
      "affinity:\n  - key: cloud.google.com/gke-accelerator\n    operator: In\n    values:\n    - nvidia-h200-141gb\n",
      "resources:\n  gpu: H100:8\n",
      "resources:\n  accelerators:\n  - A100:8\n",
      "image:\n  repository: lmsysorg/sglang\n  tag: v0.5.5-cu126\n",
      "FROM lmsysorg/sglang:v0.5.3\r\nRUN pip install sglang[all]==0.5.2\r\n",
      "pip install vllm==0.11.0\nexport VLLM_ATTENTION_BACKEND=FLASHINFER\n",
      "env:\n- name: VLLM_ATTENTION_BACKEND\n  value: TRITON_ATTN\n",
      "sglang",
      "gpu:",
      "node.kubernetes.io/instance-type: p5.48xlarge",
  };
  for (const char* text : kTexts) {
    expect_same(text, "deploy.yaml");
    expect_same(text, "Dockerfile");
  }
}

}  // namespace
}  // namespace attnsel
