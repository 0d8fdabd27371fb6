// Finding SGLang launch commands in argv, shell scripts, Dockerfiles, compose and Kubernetes YAML
// and Markdown, and reading their attention flags.
#include "attnsel/launch.hpp"
#include "attnsel/launch_args.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#ifndef ATTNSEL_TESTS_DIR
#define ATTNSEL_TESTS_DIR "tests"
#endif

namespace attnsel {
namespace {

using Args = std::vector<std::string>;
using Lines = std::vector<int>;

std::string read_fixture(const std::string& name) {
  std::ifstream in(std::string(ATTNSEL_TESTS_DIR) + "/fixtures/check/" + name, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read fixture " << name;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<LaunchCommand> find_ok(const std::string& text, const std::string& file,
                                   InputFormat format = InputFormat::detect) {
  Result<std::vector<LaunchCommand>> found = find_launch_commands(text, file, format);
  EXPECT_TRUE(found.ok()) << (found.ok() ? "" : found.error().where + ": " + found.error().message);
  return found.ok() ? found.value() : std::vector<LaunchCommand>{};
}

Error find_error(const std::string& text, const std::string& file, InputFormat format = InputFormat::detect) {
  Result<std::vector<LaunchCommand>> found = find_launch_commands(text, file, format);
  EXPECT_FALSE(found.ok()) << "expected an error for " << file;
  return found.ok() ? Error{} : found.error();
}

Lines same_line(int line, std::size_t n) { return Lines(n, line); }

struct Expected {
  int line;
  std::string launcher;
  Args args;
  Lines arg_lines;
};

// Asserts the commands exactly, and that each arg is written on the line it is said to be on.
void expect_commands(const std::vector<LaunchCommand>& got, const std::vector<Expected>& want,
                     const std::string& file, const std::string& text) {
  ASSERT_EQ(got.size(), want.size()) << file;
  const std::vector<std::string> source = lines_of(text);
  for (std::size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(file + " command #" + std::to_string(i) + " at line " + std::to_string(want[i].line));
    EXPECT_EQ(got[i].file, file);
    EXPECT_EQ(got[i].line, want[i].line);
    EXPECT_EQ(got[i].launcher, want[i].launcher);
    EXPECT_EQ(got[i].args, want[i].args);
    EXPECT_EQ(got[i].arg_lines, want[i].arg_lines);
    ASSERT_EQ(got[i].args.size(), got[i].arg_lines.size());
    for (std::size_t a = 0; a < got[i].args.size(); ++a) {
      const int line = got[i].arg_lines[a];
      ASSERT_TRUE(line >= 1 && static_cast<std::size_t>(line) <= source.size());
      // A value the file assigned ($MODEL) is reported on the line that uses it.
      const std::string& written = source[static_cast<std::size_t>(line) - 1];
      if (written.find('$') == std::string::npos) {
        EXPECT_NE(written.find(got[i].args[a]), std::string::npos) << "'" << got[i].args[a] << "' is not on line " << line;
      }
    }
  }
}

const char* const kLaunchServer = "python3 -m sglang.launch_server";

// ---- fixture files of each kind ----

TEST(FindLaunchCommands, ShellScript) {
  const std::string text = read_fixture("launch.sh");
  expect_commands(
      find_ok(text, "launch.sh"),
      {
          // MODEL=deepseek-ai/DeepSeek-R1 earlier in the script: resolved.
          {8, kLaunchServer,
           {"--model-path", "deepseek-ai/DeepSeek-R1", "--tp", "8", "--attention-backend", "trtllm_mla",
            "--trust-remote-code"},
           {9, 9, 10, 10, 11, 11, 12}},
          {15, kLaunchServer,
           {"--model-path", "deepseek-ai/DeepSeek-V3", "--attention-backend=trtllm_mla", "--tp", "8"},
           same_line(15, 5)},
          {18, "python3.12 -m sglang.launch_server",
           {"--model-path", "Qwen/Qwen3-30B-A3B-Instruct-2507-FP8", "--attention-backend", "fa4", "--page-size", "64"},
           {19, 19, 20, 20, 21, 21}},
          {24, "sglang serve",
           {"deepseek-ai/DeepSeek-V2-Lite", "--attention-backend", "cutlass_mla", "--kv-cache-dtype", "fp8_e4m3"},
           same_line(24, 5)},
          {27, "python -m sglang.launch_server",
           {"--model", "meta-llama/Meta-Llama-3.1-8B-Instruct", "--attention-backend", "flashinfr"},
           same_line(27, 4)},
          // vLLM is an engine of its own (data/engines/vllm): its launcher is found like SGLang's.
          {30, "vllm serve", {"meta-llama/Meta-Llama-3.1-8B-Instruct", "--attention-backend", "FLASHINFER"},
           same_line(30, 3)},
          {38, kLaunchServer,
           {"--model-path", "deepseek-ai/DeepSeek-R1", "--attention-backend", "flashmla", "--kv-cache-dtype",
            "fp8_e4m3"},
           {38, 38, 39, 39, 39, 39}},
          {42, kLaunchServer, {"--model-path", "$(cat /models/name)", "--attention-backend", "triton"},
           same_line(42, 4)},
      },
      "launch.sh", text);
}

TEST(FindLaunchCommands, Dockerfile) {
  const std::string text = read_fixture("Dockerfile");
  const Args typo = {"--model-path", "meta-llama/Meta-Llama-3.1-8B-Instruct", "--attention-backend", "flashinfr"};
  expect_commands(
      find_ok(text, "Dockerfile"),
      {
          {6, kLaunchServer,
           {"--model-path", "deepseek-ai/DeepSeek-V3", "--attention-backend", "trtllm_mla", "--tp", "8", "--help"},
           {6, 6, 8, 8, 9, 9, 9}},
          {14, kLaunchServer,
           {"--model-path", "meta-llama/Meta-Llama-3.1-8B-Instruct", "--attention-backend", "fa3", "--page-size", "16"},
           {15, 15, 16, 16, 16, 16}},
          {21, kLaunchServer,
           {"--model-path", "Qwen/Qwen3-30B-A3B-Instruct-2507-FP8", "--attention-backend", "fa4", "--page-size", "64"},
           {21, 21, 22, 22, 22, 22}},
          {26, "sglang serve", typo, same_line(26, 4)},
          {30, kLaunchServer,
           {"--model-path", "deepseek-ai/DeepSeek-V2-Lite", "--attention-backend", "cutlass_mla", "--kv-cache-dtype",
            "fp8_e4m3"},
           same_line(30, 6)},
          {34, "vllm serve", {"meta-llama/Meta-Llama-3.1-8B-Instruct"}, same_line(34, 1)},
      },
      "Dockerfile", text);
}

TEST(FindLaunchCommands, Compose) {
  if (!yaml_input_supported()) GTEST_SKIP() << "built without yaml-cpp";
  const std::string text = read_fixture("docker-compose.yml");
  expect_commands(
      find_ok(text, "docker-compose.yml"),
      {
          {8, kLaunchServer,
           {"--model-path", "deepseek-ai/DeepSeek-R1", "--tp", "8", "--attention-backend", "trtllm_mla",
            "--kv-cache-dtype", "fp8_e4m3"},
           {9, 9, 10, 10, 11, 11, 12, 12}},
          {17, kLaunchServer,
           {"--model-path", "Qwen/Qwen3-30B-A3B-Instruct-2507-FP8", "--attention-backend", "fa4", "--page-size", "64"},
           {20, 21, 22, 23, 24, 25}},
          {29, kLaunchServer,
           {"--model-path", "deepseek-ai/DeepSeek-V2-Lite", "--attention-backend", "cutlass_mla", "--kv-cache-dtype",
            "fp8_e4m3"},
           same_line(30, 6)},
          {34, kLaunchServer,
           {"--model-path", "meta-llama/Meta-Llama-3.1-8B-Instruct", "--attention-backend", "flashinfr"},
           same_line(34, 4)},
          // vLLM's image runs `vllm serve`: a service that gives only `command` gives its arguments.
          {38, "vllm/vllm-openai:latest", {"--model", "meta-llama/Meta-Llama-3.1-8B-Instruct"}, same_line(38, 2)},
      },
      "docker-compose.yml", text);
}

TEST(FindLaunchCommands, KubernetesManifest) {
  if (!yaml_input_supported()) GTEST_SKIP() << "built without yaml-cpp";
  const std::string text = read_fixture("deployment.yaml");
  expect_commands(
      find_ok(text, "deployment.yaml"),
      {
          {21, kLaunchServer,
           {"--model-path", "deepseek-ai/DeepSeek-R1", "--tp", "8", "--attention-backend", "trtllm_mla"},
           {23, 24, 25, 26, 27, 28}},
          {35, kLaunchServer,
           {"--model-path", "deepseek-ai/DeepSeek-V2-Lite", "--attention-backend", "cutlass_mla", "--kv-cache-dtype",
            "fp8_e4m3"},
           {36, 36, 37, 37, 38, 38}},
          // vLLM's image runs `vllm serve`: a container that gives only `args` gives its arguments.
          {49, "vllm/vllm-openai:latest", {"--model", "meta-llama/Meta-Llama-3.1-8B-Instruct"}, same_line(49, 2)},
          {53, "sglang serve",
           {"--model-path", "meta-llama/Meta-Llama-3.1-8B-Instruct", "--attention-backend=flashinfr"},
           same_line(54, 3)},
      },
      "deployment.yaml", text);
}

TEST(FindLaunchCommands, Markdown) {
  const std::string text = read_fixture("README.md");
  const Args r1 = {"--model-path", "deepseek-ai/DeepSeek-R1", "--tp", "8", "--attention-backend", "trtllm_mla"};
  expect_commands(
      find_ok(text, "README.md"),
      {
          {6, kLaunchServer, r1, {7, 7, 7, 7, 8, 8}},
          {14, kLaunchServer, r1, {14, 14, 14, 14, 15, 15}},
          {23, "sglang serve",
           {"Qwen/Qwen3-30B-A3B-Instruct-2507-FP8", "--attention-backend", "fa4", "--page-size", "64"},
           same_line(23, 5)},
          {27, "python -m sglang.launch_server",
           {"--model", "meta-llama/Meta-Llama-3.1-8B-Instruct", "--attention-backend", "flashinfr"},
           same_line(27, 4)},
          {32, kLaunchServer, {"--attention-backend", "fa3"}, same_line(32, 2)},  // ```python: subprocess.run([...])
          {36, "vllm serve", {"meta-llama/Meta-Llama-3.1-8B-Instruct"}, same_line(36, 1)},
          {44, kLaunchServer, {"--attention-backend", "cutlass_mla", "--kv-cache-dtype", "fp8_e4m3"},
           same_line(44, 4)},
      },
      "README.md", text);
}

// The arguments as SGLang's launch grammar (data/engines/sglang) reads them.
ParsedArgs args_of(const LaunchCommand& cmd) {
  static const auto profile = *builtin_profile("sglang");
  ParseOptions o;
  o.engine_title = profile->title;
  o.positional_model = cmd.positional_model;
  return parse_launch_args(cmd, *profile->grammar(cmd.grammar), o);
}

// ---- every sglang.launch_server example of seed 001, each with the GPU it is meant for ----

struct SeedExample {
  std::string gpu;
  Args args;
  std::string flags;  // the attention flags parse_launch_flags reads, summarised
};

std::string summary(const ParsedArgs& f) {
  std::string out;
  auto add = [&](const char* key, const char* field) {
    const ArgValue* v = f.value(field);
    if (!v) return;
    if (!out.empty()) out += ' ';
    out += std::string(key) + "=" + v->text;
  };
  add("model", "model");
  add("tp", "tp");
  add("attn", "attention.all");
  add("prefill", "attention.prefill");
  add("decode", "attention.decode");
  add("kv", "kv_cache_dtype");
  add("page", "page_size");
  return out;
}

TEST(FindLaunchCommands, EverySeed001Example) {
  const std::string llama = "meta-llama/Meta-Llama-3.1-8B-Instruct";
  const Args trc = {"--trust-remote-code"};
  const std::vector<SeedExample> want = {
      {"sm100",
       {"--model-path", "nvidia/DeepSeek-R1-FP4", "--tp", "8", "--attention-backend", "trtllm_mla",
        "--moe-runner-backend", "flashinfer_trtllm", "--quantization", "modelopt_fp4", "--prefill-attention-backend",
        "fa4"},
       "model=nvidia/DeepSeek-R1-FP4 tp=8 attn=trtllm_mla prefill=fa4"},
      {"sm80", {"--model", llama, "--attention-backend", "flashinfer"}, "model=" + llama + " attn=flashinfer"},
      {"sm80",
       {"--tp", "8", "--model", "deepseek-ai/DeepSeek-V3", "--attention-backend", "flashinfer", "--trust-remote-code"},
       "model=deepseek-ai/DeepSeek-V3 tp=8 attn=flashinfer"},
      {"sm90", {"--model", llama, "--attention-backend", "fa3"}, "model=" + llama + " attn=fa3"},
      {"sm90",
       {"--tp", "8", "--model", "deepseek-ai/DeepSeek-V3", "--trust-remote-code", "--attention-backend", "fa3"},
       "model=deepseek-ai/DeepSeek-V3 tp=8 attn=fa3"},
      {"sm80", {"--model", llama, "--attention-backend", "triton"}, "model=" + llama + " attn=triton"},
      {"sm80",
       {"--tp", "8", "--model", "deepseek-ai/DeepSeek-V3", "--attention-backend", "triton", "--trust-remote-code"},
       "model=deepseek-ai/DeepSeek-V3 tp=8 attn=triton"},
      {"sm90",
       {"--tp", "8", "--model", "deepseek-ai/DeepSeek-R1", "--attention-backend", "flashmla", "--trust-remote-code"},
       "model=deepseek-ai/DeepSeek-R1 tp=8 attn=flashmla"},
      {"sm90",
       {"--tp", "8", "--model", "deepseek-ai/DeepSeek-R1", "--attention-backend", "flashmla", "--kv-cache-dtype",
        "fp8_e4m3", "--trust-remote-code"},
       "model=deepseek-ai/DeepSeek-R1 tp=8 attn=flashmla kv=fp8_e4m3"},
      {"sm100",
       {"--tp", "8", "--model", "deepseek-ai/DeepSeek-R1", "--attention-backend", "trtllm_mla", "--trust-remote-code"},
       "model=deepseek-ai/DeepSeek-R1 tp=8 attn=trtllm_mla"},
      {"sm100",
       {"--tp", "8", "--model", "deepseek-ai/DeepSeek-R1", "--attention-backend", "trtllm_mla", "--kv-cache-dtype",
        "fp8_e4m3", "--trust-remote-code"},
       "model=deepseek-ai/DeepSeek-R1 tp=8 attn=trtllm_mla kv=fp8_e4m3"},
      {"sm100",
       {"--tp", "4", "--model", "Qwen/Qwen3.5-35B-A3B-FP8", "--attention-backend", "trtllm_mha",
        "--trust-remote-code"},
       "model=Qwen/Qwen3.5-35B-A3B-FP8 tp=4 attn=trtllm_mha"},
      {"sm90",
       {"--tp", "4", "--model", "Qwen/Qwen3.5-35B-A3B-FP8", "--decode-attention-backend", "trtllm_mha",
        "--trust-remote-code"},
       "model=Qwen/Qwen3.5-35B-A3B-FP8 tp=4 decode=trtllm_mha"},
      {"sm90",
       {"--model-path", "Qwen/Qwen3-30B-A3B-Instruct-2507-FP8", "--attention-backend", "fa4", "--page-size", "128",
        "--trust-remote-code"},
       "model=Qwen/Qwen3-30B-A3B-Instruct-2507-FP8 attn=fa4 page=128"},
      {"sm100",
       {"--tp", "8", "--model", "deepseek-ai/DeepSeek-R1", "--prefill-attention-backend", "fa4",
        "--trust-remote-code"},
       "model=deepseek-ai/DeepSeek-R1 tp=8 prefill=fa4"},
      {"sm100",
       {"--tp", "8", "--model", "deepseek-ai/DeepSeek-R1", "--attention-backend", "cutlass_mla",
        "--trust-remote-code"},
       "model=deepseek-ai/DeepSeek-R1 tp=8 attn=cutlass_mla"},
      {"ascend", {"--model", llama, "--attention-backend", "ascend"}, "model=" + llama + " attn=ascend"},
      {"xpu", {"--model", llama, "--attention-backend", "intel_xpu"}, "model=" + llama + " attn=intel_xpu"},
      {"gfx942", {"--model", llama, "--attention-backend", "wave"}, "model=" + llama + " attn=wave"},
      {"sm90", {"--model", llama, "--attention-backend", "flex_attention"}, "model=" + llama + " attn=flex_attention"},
      {"sm90",
       {"--model", "Qwen/Qwen2.5-14B-Instruct-1M", "--attention-backend", "dual_chunk_flash_attn"},
       "model=Qwen/Qwen2.5-14B-Instruct-1M attn=dual_chunk_flash_attn"},
      {"sm80", {"--model", llama, "--attention-backend", "torch_native"}, "model=" + llama + " attn=torch_native"},
  };

  const std::string text = read_fixture("seed_001_examples.md");
  const std::vector<std::string> source = lines_of(text);
  // The GPU comments, in order, with their lines.
  std::vector<std::pair<int, std::string>> gpus;
  for (std::size_t i = 0; i < source.size(); ++i) {
    const std::string prefix = "<!-- gpu: ";
    if (source[i].rfind(prefix, 0) == 0) {
      gpus.emplace_back(static_cast<int>(i) + 1, source[i].substr(prefix.size(), source[i].find(' ', prefix.size()) -
                                                                                    prefix.size()));
    }
  }
  const std::vector<LaunchCommand> found = find_ok(text, "seed_001_examples.md");
  ASSERT_EQ(gpus.size(), want.size());
  ASSERT_EQ(found.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("seed example #" + std::to_string(i + 1) + " (" + want[i].gpu + ")");
    EXPECT_EQ(gpus[i].second, want[i].gpu);
    EXPECT_EQ(found[i].line, gpus[i].first + 2);  // the comment, the fence, the command
    EXPECT_EQ(found[i].launcher, kLaunchServer);
    EXPECT_EQ(found[i].args, want[i].args);
    for (std::size_t a = 0; a < found[i].args.size(); ++a) {
      const auto line = static_cast<std::size_t>(found[i].arg_lines[a]);
      ASSERT_TRUE(line >= 1 && line <= source.size());
      EXPECT_EQ(source[line - 1].rfind(found[i].args[a].rfind("--", 0) == 0 ? found[i].args[a] : "--", 0), 0u)
          << found[i].args[a] << " not on line " << line;
    }
    const ParsedArgs flags = args_of(found[i]);
    EXPECT_EQ(summary(flags), want[i].flags);
    for (const ArgFinding& f : flags.findings) EXPECT_EQ(f.rule, "args.prefix") << f.message;  // the docs' --tp
  }
}

// ---- shell tokenising ----

TEST(ShellTokenising, QuotesAndEscapes) {
  const auto found = find_ok(
      "python3 -m sglang.launch_server --model-path \"a b\" --x 'c \"d\"' --y e\\ f --z \"q\\\"r\\n\" --w $'t\\tu'\n",
      "run.sh");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].args,
            (Args{"--model-path", "a b", "--x", "c \"d\"", "--y", "e f", "--z", "q\"r\\n", "--w", "t\tu"}));
}

TEST(ShellTokenising, OperatorsSplitCommandsAndEnvPrefixesGo) {
  const auto found = find_ok(
      "A=1 B=\"x y\" python3 -m sglang.launch_server --tp 2 | tee log; python3 -m sglang.launch_server --tp 4 && "
      "true || false\n(python3 -m sglang.launch_server --tp 8)\n",
      "run.sh");
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].args, (Args{"--tp", "2"}));
  EXPECT_EQ(found[1].args, (Args{"--tp", "4"}));
  EXPECT_EQ(found[2].args, (Args{"--tp", "8"}));
  EXPECT_EQ(found[2].line, 2);
}

TEST(ShellTokenising, VariablesAndSubstitutionsStayLiteral) {
  const auto found = find_ok(
      "python3 -m sglang.launch_server --model-path ${MODEL_DIR}/$NAME --revision $(git -C \"/x y\" rev-parse HEAD) "
      "--z `date +%s` --attention-backend \"$BACKEND\"\n",
      "run.sh");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].args, (Args{"--model-path", "${MODEL_DIR}/$NAME", "--revision",
                                 "$(git -C \"/x y\" rev-parse HEAD)", "--z", "`date +%s`", "--attention-backend",
                                 "$BACKEND"}));
  EXPECT_EQ(found[0].shape(7), WordShape::value);  // "$BACKEND": one word the shell fills in
}

// $'...' as bash reads it: the engine receives fa3 for $'fa\x33' (issue 26, round four: it was
// judged as the literal fa\x33, an invalid choice).
TEST(ShellTokenising, AnsiCQuotingHasBashsEscapes) {
  const auto found = find_ok(
      "python3 -m sglang.launch_server --attention-backend=$'fa\\x33' --a $'\\e[1m\\u00e9\\U0001F600\\101\\cA\\?' "
      "--b $'x\\0gone' --c $'\\xZ\\q'\n",
      "run.sh");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].args, (Args{"--attention-backend=fa3", "--a", "\x1b[1m\xc3\xa9\xf0\x9f\x98\x80" "A\x01?", "--b", "x",
                                 "--c", "\\xZ\\q"}));
}

TEST(ShellTokenising, RedirectionsAreNotArguments) {
  const auto found =
      find_ok("python3 -m sglang.launch_server --tp 2 >log 2>&1 </dev/null &>/dev/null --page-size 16 >> x &\n",
              "run.sh");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].args, (Args{"--tp", "2", "--page-size", "16"}));
}

TEST(ShellTokenising, ContinuationsCommentsAndCrlf) {
  const auto found = find_ok(
      "# python3 -m sglang.launch_server --tp 1\r\n"
      "python3 -m sglang.launch_server \\\r\n"
      "  --tp 2 \\\r\n"
      "  --page-size 16 # python3 -m sglang.launch_server\r\n"
      "x=#not-a-comment python3 -m sglang.launch_server --a#b\r\n",
      "run.sh");
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].line, 2);
  EXPECT_EQ(found[0].args, (Args{"--tp", "2", "--page-size", "16"}));
  EXPECT_EQ(found[0].arg_lines, (Lines{3, 3, 4, 4}));
  EXPECT_EQ(found[1].args, (Args{"--a#b"}));
}

TEST(ShellTokenising, LaunchersAndWrappers) {
  const auto found = find_ok(
      "python3.11 -u -m sglang.launch_server --tp 1\n"
      "/opt/venv/bin/python -m sglang.launch_server --tp 2\n"
      "$PYTHON -m sglang.launch_server --tp 3\n"
      "exec sudo -E srun --ntasks=1 python3 -msglang.launch_server --tp 4\n"
      "uv run --with sglang python -m sglang_router.launch_server --dp-size 2\n"
      "sglang generate --model-path black-forest-labs/FLUX.1-dev --attention-backend fa\n"
      "bash -o pipefail -c 'sh -c \"python3 -m sglang.launch_server --tp 5\"'\n",
      "run.sh");
  ASSERT_EQ(found.size(), 7u);
  EXPECT_EQ(found[0].launcher, "python3.11 -m sglang.launch_server");
  EXPECT_EQ(found[1].launcher, "python -m sglang.launch_server");
  EXPECT_EQ(found[2].launcher, "$PYTHON -m sglang.launch_server");
  EXPECT_EQ(found[3].launcher, kLaunchServer);
  EXPECT_EQ(found[3].args, (Args{"--tp", "4"}));
  EXPECT_EQ(found[4].launcher, "python -m sglang_router.launch_server");
  EXPECT_EQ(found[5].launcher, "sglang generate");
  EXPECT_EQ(found[6].args, (Args{"--tp", "5"}));
  EXPECT_EQ(found[6].line, 7);
}

TEST(ShellTokenising, NotLaunches) {
  const auto found = find_ok(
      "python3 -m sglang.launch_serverx --tp 1\n"
      "python3 script.py -m sglang.launch_server\n"
      "python3 -c 'import sglang' -m sglang.launch_server\n"
      "python3 -m sglang.bench_one_batch --attention-backend fa3\n"
      "vllm bench x; sglang version; sglang-router --help\n"
      "printf '%s' python3 -m sglang.launch_server\n"
      "grep -r 'sglang serve' .\n"
      "bash run_sglang.sh --attention-backend fa3\n",
      "run.sh");
  EXPECT_TRUE(found.empty());
}

// ---- robustness: errors or empty results, never a crash ----

TEST(Robustness, UnterminatedQuoteInAScriptIsAParseError) {
  const Error e = find_error("python3 -m sglang.launch_server --model-path 'x\n--tp 2\n", "bad.sh");
  EXPECT_EQ(e.code, ErrorCode::parse_error);
  EXPECT_EQ(e.where, "bad.sh:1:46");
  EXPECT_NE(e.message.find("unterminated single quote"), std::string::npos);
  EXPECT_EQ(find_error("echo \"unclosed\n", "bad.sh").where, "bad.sh:1:6");
  EXPECT_EQ(find_error("x=$(echo\n", "bad.sh").code, ErrorCode::parse_error);
}

TEST(Robustness, UnterminatedQuoteElsewhereOnlyMattersNearSglang) {
  // One Dockerfile instruction or Markdown block is a unit: a broken one that does not mention
  // sglang is not ours to report.
  EXPECT_TRUE(find_ok("FROM x\nRUN echo 'oops\nCMD python3 -m sglang.launch_server --tp 2\n", "Dockerfile").size() == 1);
  EXPECT_EQ(find_error("FROM x\nCMD python3 -m sglang.launch_server --model-path 'x\n", "Dockerfile").where,
            "Dockerfile:2:50");
  EXPECT_TRUE(find_ok("```\nit's output\n```\n```sh\nsglang serve m --tp 2\n```\n", "x.md").size() == 1);
  EXPECT_EQ(find_error("text\n```bash\nsglang serve 'm\n```\n", "x.md").where, "x.md:3:14");
}

TEST(Robustness, LoneBackslashAtEnd) {
  const auto found = find_ok("python3 -m sglang.launch_server --tp 2 \\", "run.sh");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].args, (Args{"--tp", "2"}));
  EXPECT_TRUE(find_ok("\\", "run.sh").empty());
  EXPECT_TRUE(find_ok("CMD python3 \\", "Dockerfile").empty());
  EXPECT_TRUE(find_ok("```sh\n\\", "x.md").empty());
}

TEST(Robustness, OneMegabyteLine) {
  const std::string huge(std::size_t{1} << 20, 'a');
  auto found = find_ok("python3 -m sglang.launch_server --model-path " + huge + " --tp 2\n", "run.sh");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].args[1].size(), huge.size());
  EXPECT_EQ(found[0].args[3], "2");

  std::string many = "bash -c \"python3 -m sglang.launch_server";
  while (many.size() < (std::size_t{1} << 20)) many += " --tp 8";
  found = find_ok(many + " --attention-backend fa3\"\n", "run.sh");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].args.back(), "fa3");

  std::string nested;
  while (nested.size() < (std::size_t{1} << 20)) nested += "$(\"";
  EXPECT_FALSE(find_launch_commands(nested, "run.sh").ok());
  const Result<std::vector<LaunchCommand>> docker = find_launch_commands("CMD " + nested, "Dockerfile");
  EXPECT_TRUE(!docker.ok() || docker.value().empty());
  EXPECT_TRUE(find_ok("```sh\n" + huge + "\n```\n", "x.md").empty());
  if (yaml_input_supported()) {
    EXPECT_FALSE(find_launch_commands(std::string(100000, '['), "k8s.yaml").ok());
    EXPECT_TRUE(find_launch_commands("command: [python3, -m, sglang.launch_server, " + huge + "]\n", "k8s.yaml").ok());
  }
}

TEST(Robustness, RandomInputNeverCrashes) {
  const std::string alphabet = "ab -=#\\'\"$(){}`;&|<>\n\r\t[]:,.*!~python3 sglang.launch_server serve CMD RUN ```";
  std::mt19937 rng(4242);
  std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
  std::uniform_int_distribution<int> length(0, 300);
  const char* const files[] = {"x.sh", "Dockerfile", "x.md", "compose.yaml", "k8s.yaml"};
  for (int round = 0; round < 1500; ++round) {
    std::string text;
    const int n = length(rng);
    for (int i = 0; i < n; ++i) text += alphabet[pick(rng)];
    if (round % 3 == 0) text = "python3 -m sglang.launch_server " + text;
    for (const char* file : files) {
      Result<std::vector<LaunchCommand>> found = find_launch_commands(text, file);
      if (!found.ok()) continue;
      for (const LaunchCommand& cmd : found.value()) {
        EXPECT_EQ(cmd.args.size(), cmd.arg_lines.size());
        (void)args_of(cmd);
      }
    }
    (void)launch_command_from_argv({text});
  }
}

// ---- format detection ----

TEST(DetectInputFormat, ByNameThenContent) {
  EXPECT_EQ(detect_input_format("Dockerfile", ""), InputFormat::dockerfile);
  EXPECT_EQ(detect_input_format("docker/Dockerfile.rocm", ""), InputFormat::dockerfile);
  EXPECT_EQ(detect_input_format("Containerfile", ""), InputFormat::dockerfile);
  EXPECT_EQ(detect_input_format("gpu.dockerfile", ""), InputFormat::dockerfile);
  EXPECT_EQ(detect_input_format("docs/README.md", ""), InputFormat::markdown);
  EXPECT_EQ(detect_input_format("docker-compose.prod.yml", "apiVersion: v1\n"), InputFormat::compose);
  EXPECT_EQ(detect_input_format("compose.yaml", ""), InputFormat::compose);
  EXPECT_EQ(detect_input_format("deploy.yaml", "apiVersion: v1\nkind: Pod\n"), InputFormat::kubernetes);
  EXPECT_EQ(detect_input_format("stack.yml", "# c\nservices:\n  a: {}\n"), InputFormat::compose);
  EXPECT_EQ(detect_input_format("launch.sh", ""), InputFormat::shell);
  EXPECT_EQ(detect_input_format("start", ""), InputFormat::shell);
  EXPECT_EQ(name_of(InputFormat::kubernetes), "kubernetes");
}

TEST(FindLaunchCommands, YamlWithoutYamlSupportIsAnError) {
  if (yaml_input_supported()) {
    EXPECT_EQ(find_error("a: [\n", "k8s.yaml").code, ErrorCode::parse_error);
    EXPECT_EQ(find_error("a: [\n", "k8s.yaml").where, "k8s.yaml:2:1");
    return;
  }
  EXPECT_EQ(find_error("services: {}\n", "compose.yaml").code, ErrorCode::invalid_argument);
}

TEST(FindLaunchCommands, ScriptsInsideYamlStrings) {
  if (!yaml_input_supported()) GTEST_SKIP() << "built without yaml-cpp";
  const std::string text =
      "apiVersion: v1\n"
      "kind: ConfigMap\n"
      "data:\n"
      "  start.sh: |\n"
      "    #!/bin/sh\n"
      "    exec python3 -m sglang.launch_server \\\n"
      "      --attention-backend fa3\n";
  const auto found = find_ok(text, "cm.yaml");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].line, 6);
  EXPECT_EQ(found[0].args, (Args{"--attention-backend", "fa3"}));
  EXPECT_EQ(found[0].arg_lines, (Lines{7, 7}));
}

// ---- the command-line form ----

LaunchCommand from_argv(const Args& argv) {
  Result<LaunchCommand> cmd = launch_command_from_argv(argv);
  EXPECT_TRUE(cmd.ok()) << (cmd.ok() ? "" : cmd.error().message);
  return cmd.ok() ? cmd.value() : LaunchCommand{};
}

TEST(LaunchCommandFromArgv, LauncherFlagsAndOneString) {
  LaunchCommand cmd =
      from_argv({"CUDA_VISIBLE_DEVICES=0", "python3", "-m", "sglang.launch_server", "--attention-backend", "fa3"});
  EXPECT_EQ(cmd.launcher, kLaunchServer);
  EXPECT_EQ(cmd.args, (Args{"--attention-backend", "fa3"}));
  EXPECT_EQ(cmd.arg_lines, (Lines{0, 0}));
  EXPECT_EQ(cmd.file, "");
  EXPECT_EQ(cmd.line, 0);

  cmd = from_argv({"--attention-backend", "fa3", "--page-size", "16"});
  EXPECT_EQ(cmd.launcher, "flags");
  EXPECT_EQ(cmd.args, (Args{"--attention-backend", "fa3", "--page-size", "16"}));

  cmd = from_argv({"sglang serve  'my model' --tp 2"});
  EXPECT_EQ(cmd.launcher, "sglang serve");
  EXPECT_EQ(cmd.args, (Args{"my model", "--tp", "2"}));
  EXPECT_EQ(cmd.arg_lines, (Lines{0, 0, 0}));

  cmd = from_argv({"uv", "run", "python", "-m", "sglang.launch_server", "--tp", "2"});
  EXPECT_EQ(cmd.launcher, "python -m sglang.launch_server");
}

TEST(LaunchCommandFromArgv, NotAnEngineIsAnError) {
  Result<LaunchCommand> cmd = launch_command_from_argv({"text-generation-launcher", "--model-id", "x"});
  ASSERT_FALSE(cmd.ok());
  EXPECT_EQ(cmd.error().code, ErrorCode::invalid_argument);
  EXPECT_EQ(cmd.error().where, "text-generation-launcher");
  Result<LaunchCommand> vllm = launch_command_from_argv({"vllm", "serve", "x", "-tp", "2"});
  ASSERT_TRUE(vllm.ok());
  EXPECT_EQ(vllm->engine, "vllm");
  EXPECT_EQ(vllm->launcher, "vllm serve");
  EXPECT_FALSE(launch_command_from_argv({}).ok());
  EXPECT_EQ(launch_command_from_argv({"python3 -m sglang.launch_server --model-path 'x"}).error().code,
            ErrorCode::parse_error);
}

// ---- reading the flags with SGLang's launch grammar (data/engines/sglang) ----

ParsedArgs args_of(const Args& argv) { return args_of(from_argv(argv)); }

std::vector<std::string> finding_rules(const ParsedArgs& p) {
  std::vector<std::string> out;
  for (const auto& f : p.findings) out.push_back(f.rule + " " + f.flag);
  return out;
}

TEST(ParseLaunchArgs, EveryAttentionFlagInBothForms) {
  const ParsedArgs f = args_of({"--model-path=org/m",
                                "--attention-backend",
                                "fa3",
                                "--prefill-attention-backend=fa4",
                                "--decode-attention-backend",
                                "trtllm_mha",
                                "--page-size=64",
                                "--kv-cache-dtype",
                                "fp8_e4m3",
                                "--speculative-algorithm=EAGLE",
                                "--speculative-eagle-topk",
                                "4",
                                "--speculative-attention-mode",
                                "decode",
                                "--linear-attn-backend",
                                "triton",
                                "--linear-attn-prefill-backend=cutedsl",
                                "--linear-attn-decode-backend",
                                "flashinfer",
                                "--nsa-prefill-backend",
                                "flashmla_sparse",
                                "--dsa-decode-backend=flashmla_kv",
                                "--mm-attention-backend",
                                "fa3",
                                "--tp-size",
                                "8",
                                "--enable-deterministic-inference",
                                "--disable-radix-cache"});
  EXPECT_EQ(finding_rules(f), (Args{"args.deprecated --nsa-prefill-backend"}));
  EXPECT_EQ(f.value("model")->text, "org/m");
  EXPECT_EQ(f.value("model")->flag, "--model-path");
  EXPECT_EQ(f.value("attention.all")->text, "fa3");
  EXPECT_EQ(f.value("attention.prefill")->text, "fa4");
  EXPECT_EQ(f.value("attention.decode")->text, "trtllm_mha");
  EXPECT_EQ(f.value("page_size")->text, "64");
  EXPECT_EQ(f.value("page_size")->flag, "--page-size");
  EXPECT_EQ(f.value("kv_cache_dtype")->text, "fp8_e4m3");
  EXPECT_EQ(f.value("speculative.algorithm")->text, "EAGLE");
  EXPECT_EQ(f.value("speculative.topk")->text, "4");
  EXPECT_EQ(f.value("speculative.attention_mode")->text, "decode");
  EXPECT_EQ(f.value("linear.all")->text, "triton");
  EXPECT_EQ(f.value("linear.prefill")->text, "cutedsl");
  EXPECT_EQ(f.value("linear.decode")->text, "flashinfer");
  EXPECT_EQ(f.value("sparse.prefill")->text, "flashmla_sparse");
  EXPECT_EQ(f.value("sparse.prefill")->flag, "--nsa-prefill-backend");
  EXPECT_EQ(f.value("sparse.decode")->text, "flashmla_kv");
  EXPECT_EQ(f.value("sparse.decode")->flag, "--dsa-decode-backend");
  EXPECT_EQ(f.value("mm_attention_backend")->text, "fa3");
  EXPECT_EQ(f.value("tp")->text, "8");
  EXPECT_NE(f.flag("deterministic"), nullptr);
  EXPECT_NE(f.flag("disable_radix_cache"), nullptr);
}

TEST(ParseLaunchArgs, SpellingsOfModelAndTp) {
  const ParsedArgs tp = args_of({"--model", "a", "--tp", "2"});
  EXPECT_EQ(tp.value("tp")->flag, "--tp");  // argparse's unique prefix of --tp-size, noted
  EXPECT_EQ(finding_rules(tp), (Args{"args.prefix --tp"}));
  EXPECT_EQ(args_of({"--model", "a", "--tensor-parallel-size", "4"}).value("tp")->text, "4");
  EXPECT_EQ(args_of({"--model", "a"}).value("model")->flag, "--model");
  const ParsedArgs serve = args_of({"sglang", "serve", "org/m", "--trust-remote-code"});
  EXPECT_EQ(serve.value("model")->text, "org/m");
  EXPECT_EQ(serve.value("model")->flag, "");
  EXPECT_TRUE(serve.findings.empty());
  EXPECT_EQ(args_of({"--model", "a", "--attention-backend", "fa3", "--attention-backend=triton"})
                .value("attention.all")
                ->text,
            "triton");  // argparse: the last one wins
}

TEST(ParseLaunchArgs, EveryOtherFlagIsParsedWithItsValues) {
  const ParsedArgs f = args_of({"--model", "a", "--cuda-graph-bs", "1", "2", "4", "--attention-backend", "fa3",
                                "--chunked-prefill-size", "-1", "--page-size", "16", "--trust-remote-code",
                                "--mem-fraction-static=0.8", "--enable-dp-attention", "--dp-size", "2"});
  // --cuda-graph-bs still works in SGLang main, with a deprecation warning.
  EXPECT_EQ(finding_rules(f), (Args{"args.deprecated --cuda-graph-bs"}));
  EXPECT_EQ(f.value("attention.all")->text, "fa3");
  EXPECT_EQ(f.value("page_size")->text, "16");
  EXPECT_EQ(f.unbound(), (Args{"--cuda-graph-bs", "--chunked-prefill-size", "--trust-remote-code",
                               "--mem-fraction-static", "--enable-dp-attention", "--dp-size"}));
}

TEST(ParseLaunchArgs, WhatSglangWouldRejectIsAnError) {
  ParsedArgs f = args_of({"--model-path", "m", "--page-size", "--tp-size", "8", "--attention-backend"});
  EXPECT_EQ(finding_rules(f), (Args{"args.missing-value --page-size", "args.missing-value --attention-backend"}));
  EXPECT_EQ(f.findings[0].message, "SGLang would exit: argument --page-size: expected one argument");
  EXPECT_EQ(f.value("page_size"), nullptr);
  EXPECT_EQ(f.value("tp")->text, "8");

  f = args_of({"--model", "m", "--disable-radix-cache=true", "--trust-remote-code=1"});
  EXPECT_EQ(finding_rules(f), (Args{"args.explicit-value --disable-radix-cache", "args.explicit-value --trust-remote-code"}));
  EXPECT_EQ(f.flag("disable_radix_cache"), nullptr);

  f = args_of({"--model", "m", "--attention_backend", "fa3", "--page_size=16", "--disable_radix_cache"});
  ASSERT_EQ(finding_rules(f),
            (Args{"args.unknown --attention_backend", "args.unknown --page_size", "args.unknown --disable_radix_cache"}));
  EXPECT_EQ(f.findings[0].suggestion, "--attention-backend");
  EXPECT_EQ(f.findings[1].suggestion, "--page-size");
  EXPECT_EQ(f.findings[2].suggestion, "--disable-radix-cache");
  EXPECT_EQ(f.value("attention.all"), nullptr);

  f = args_of({"python3", "-m", "sglang.launch_server", "org/m", "--tp-size", "2"});
  EXPECT_EQ(finding_rules(f), (Args{"args.positional org/m", "args.required --model-path"}));
}

TEST(ParseLaunchArgs, ValuesAndFindingsCarryTheirLines) {
  const auto found = find_ok(
      "python3 -m sglang.launch_server \\\n"
      "  --model-path m \\\n"
      "  --attention-backend flashmla \\\n"
      "  --page-size\n",
      "run.sh");
  ASSERT_EQ(found.size(), 1u);
  const ParsedArgs f = args_of(found[0]);
  EXPECT_EQ(f.value("model")->line, 2);
  EXPECT_EQ(f.value("attention.all")->line, 3);
  ASSERT_EQ(f.findings.size(), 1u);
  EXPECT_EQ(f.findings[0].line, 4);
}

}  // namespace
}  // namespace attnsel
