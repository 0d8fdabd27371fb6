// Real-deployment idioms (tests/fixtures/deploy): every launch command found with its line,
// launcher and args, which args the shell fills in, the blocks skipped, the GPU, platform, release
// and model the file itself names, and the GPUs and platform each command is judged on.
// Expectations: tests/cases/deploy_fixtures.json.
// ATTNSEL_UPDATE_DEPLOY_CASES=1 rewrites that file from what the readers find (review the diff).
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "attnsel/catalog.hpp"
#include "attnsel/check.hpp"
#include "attnsel/launch.hpp"
#include "attnsel/launch_args.hpp"
#include "attnsel/profile.hpp"
#include "check/shell_lexer.hpp"

#ifndef ATTNSEL_TESTS_DIR
#define ATTNSEL_TESTS_DIR "tests"
#endif
#ifndef ATTNSEL_CLI
#define ATTNSEL_CLI ""
#endif

namespace attnsel {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

const std::string kDir = std::string(ATTNSEL_TESTS_DIR) + "/fixtures/deploy/";
const std::string kCases = std::string(ATTNSEL_TESTS_DIR) + "/cases/deploy_fixtures.json";

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> fixture_files() {
  std::vector<std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(kDir))
    if (e.is_regular_file()) files.push_back(fs::relative(e.path(), kDir).generic_string());
  std::sort(files.begin(), files.end());
  return files;
}

// What the readers find in one fixture, in the shape of its expectation.
json actual_of(const std::string& rel) {
  const LaunchScan scan = scan_launch_input(read_text(kDir + rel), rel);
  json j;
  j["file"] = rel;
  j["format"] = std::string(name_of(detect_input_format(rel, read_text(kDir + rel))));
  json commands = json::array();
  for (const LaunchCommand& c : scan.commands) {
    json cj;
    cj["line"] = c.line;
    cj["launcher"] = c.launcher;
    cj["args"] = c.args;
    json nonliteral = json::object();
    for (std::size_t k = 0; k < c.args.size(); ++k) {
      if (c.shape(k) == WordShape::value) nonliteral[std::to_string(k)] = "value";
      if (c.shape(k) == WordShape::words) nonliteral[std::to_string(k)] = "words";
    }
    cj["nonliteral"] = nonliteral;
    // Where the file's settings and branches reach this command only (absent when they do not).
    if (!c.branch.empty()) cj["branch"] = c.branch;
    if (c.capability)  // a branch taken by the GPU's compute capability
      cj["capability"] = (c.capability->equal ? "== " : "!= ") + c.capability->value + " (line " +
                         std::to_string(c.capability->line) + ")";
    json environment = json::array();
    for (const LaunchCommand::EnvSetting& e : c.environment)
      environment.push_back(e.name + "=" + e.value + " @" + std::to_string(e.line));
    if (!environment.empty()) cj["environment"] = environment;
    // The YAML files written before it, which its --config reads first (absent when none).
    json written = json::array();
    for (const LaunchCommand::WrittenFile& w : c.written)
      written.push_back(w.path + " @" + std::to_string(w.line) + (w.expands ? " (expands)" : "") +
                        (w.section ? " (section)" : ""));
    if (!written.empty()) cj["written"] = written;
    // What the command is judged on without --gpu: its part's GPUs and platform (absent: none).
    const CommandScope scope = command_scope(scan.context, c, std::nullopt);
    if (!scope.gpus.empty()) {
      std::string from;
      for (const ContextHint& h : scope.gpus_from)
        if (h.scope_first != 0) from = " (" + h.source + " @" + std::to_string(h.line) + ")";
      cj["targets"] = scope.gpus + from;
    }
    if (scope.platform)
      cj["platform"] = scope.platform->value + " (" + scope.platform->source + " @" + std::to_string(scope.platform->line) + ")";
    commands.push_back(cj);
  }
  j["commands"] = commands;
  json skipped = json::array();
  for (const Error& e : scan.skipped) skipped.push_back(e.where + ": " + e.message);
  j["skipped"] = skipped;
  auto hints = [](const std::vector<ContextHint>& hs) {
    json a = json::array();
    for (const ContextHint& h : hs)
      a.push_back(h.value + " @" + std::to_string(h.line) +
                  (h.scope_first == 0 ? "" : " [" + std::to_string(h.scope_first) + "-" + std::to_string(h.scope_last) + "]") +
                  " (" + h.source + ")");
    return a;
  };
  j["gpus"] = hints(scan.context.gpus);
  j["releases"] = hints(scan.context.releases);
  j["models"] = hints(scan.context.models);
  j["environment"] = hints(scan.context.environment);
  j["platforms"] = hints(scan.context.platforms);
  return j;
}

TEST(DeployFixtures, EveryFixtureMatchesItsExpectation) {
  const std::vector<std::string> files = fixture_files();
  ASSERT_GE(files.size(), 40u) << "issue 13 asks for at least 40 deployment fixtures";
  if (const char* update = std::getenv("ATTNSEL_UPDATE_DEPLOY_CASES"); update && *update == '1') {
    json all = json::array();
    for (const std::string& f : files) all.push_back(actual_of(f));
    std::ofstream(kCases) << all.dump(2) << "\n";
    GTEST_SKIP() << "rewrote " << kCases;
  }
  const json cases = json::parse(read_text(kCases));
  std::set<std::string> covered;
  for (const json& expected : cases) {
    const std::string file = expected.at("file");
    covered.insert(file);
    SCOPED_TRACE(file);
    ASSERT_TRUE(fs::exists(kDir + file));
    const json actual = actual_of(file);
    for (const char* key : {"format", "commands", "skipped", "gpus", "releases", "models", "environment", "platforms"})
      EXPECT_EQ(actual.at(key), expected.at(key)) << key << " of " << file;
  }
  for (const std::string& f : files) EXPECT_TRUE(covered.count(f)) << f << " has no expectation";
}

// Zero false alarms: no positional junk reaches the flag reader from the idiom fixtures.
TEST(DeployFixtures, EveryFixtureHoldsACommand) {
  for (const std::string& f : fixture_files()) {
    const LaunchScan scan = scan_launch_input(read_text(kDir + f), f);
    EXPECT_FALSE(scan.commands.empty()) << f;
  }
}

TEST(ShellLexer, TooDeepIsNotUnterminated) {
  std::string nested = "python3 -m sglang.launch_server --x ";
  for (int i = 0; i < 10000; ++i) nested += "\"$(";
  const LaunchScan scan = scan_launch_input(nested, "run.sh");
  ASSERT_EQ(scan.skipped.size(), 1u);
  EXPECT_NE(scan.skipped[0].message.find("nested more than"), std::string::npos) << scan.skipped[0].message;
}

// A console transcript's `$ curl -d '{` goes on to the line that closes the quote (dstack's AMD PD
// blog post: the JSON body spans 9 lines); quotes in comments and escaped ones open nothing.
TEST(ShellLexer, OpenQuoteAfterALine) {
  using launch_detail::open_quote_after;
  EXPECT_EQ(open_quote_after("curl -d '{", 0), '\'');
  EXPECT_EQ(open_quote_after("  \"model\": \"x\",", '\''), '\'');
  EXPECT_EQ(open_quote_after("  }'", '\''), 0);
  EXPECT_EQ(open_quote_after("echo \"it's \\\" here", 0), '"');
  EXPECT_EQ(open_quote_after("echo it\\'s # it's", 0), 0);
  EXPECT_EQ(open_quote_after("echo a#'b", 0), '\'');  // '#' inside a word is no comment
  EXPECT_EQ(open_quote_after("done\" # x", '"'), 0);
}

TEST(ShellLexer, HeredocInsideCommandSubstitution) {
  const LaunchScan scan = scan_launch_input(
      "MSG=$(cat <<END\nit's a test\nEND\n)\npython3 -m sglang.launch_server --attention-backend fa3\n", "run.sh");
  EXPECT_TRUE(scan.skipped.empty());
  ASSERT_EQ(scan.commands.size(), 1u);
  EXPECT_EQ(scan.commands[0].line, 5);
}

TEST(ShellLexer, OneBadBlockIsOneFindingAndTheRestIsRead) {
  const LaunchScan scan =
      scan_launch_input("echo 'oops\npython3 -m sglang.launch_server --attention-backend fa3\n", "run.sh");
  ASSERT_EQ(scan.skipped.size(), 1u);
  EXPECT_EQ(scan.skipped[0].where, "run.sh:1:6");
  ASSERT_EQ(scan.commands.size(), 1u);
  EXPECT_EQ(scan.commands[0].line, 2);
}

TEST(ShellLexer, ShapesOfExpansions) {
  const LaunchScan scan = scan_launch_input(
      "python3 -m sglang.launch_server \"$@\" $EXTRA \"$X\" \"${A[@]}\" $(cmd) lit \"${Y:-8}\" <path> ...\n",
      "run.sh");
  ASSERT_EQ(scan.commands.size(), 1u);
  const LaunchCommand& c = scan.commands[0];
  const std::vector<WordShape> want = {WordShape::words, WordShape::words, WordShape::value,
                                       WordShape::words, WordShape::words, WordShape::literal,
                                       WordShape::value, WordShape::value, WordShape::words};
  ASSERT_EQ(c.args.size(), want.size());
  for (std::size_t k = 0; k < want.size(); ++k) EXPECT_EQ(c.shape(k), want[k]) << k << ": " << c.args[k];
  EXPECT_EQ(c.args[6], "8");  // the default, judged, marked as a value
}

// A section title that negates a GPU does not make it a target: the GPUs each title leaves a
// command under it (a Markdown heading over one sglang command), "" for none.
TEST(FileContext, NegatedGpusInTitlesAreNoTargets) {
  struct Case {
    const char* title;
    const char* targets;
  };
  const Case cases[] = {
      {"FlashInfer (Default for Non-Hopper Machines, e.g., A100, A40)", "A100,A40"},
      {"FlashAttention 3 (Default for Hopper Machines, e.g., H100, H200, H20)", "sm90,H100,H200,H20"},
      {"Runs on every GPU except B200", ""},
      {"Not supported on the H100 or H200; use A100", "A100"},
      {"Works on GPUs other than H20, such as L40S", "L40S"},
      {"Without 8x H100: one B200", "B200"},
      {"Note: On H100 GPUs, use TP4", "H100"},  // "Note" is no "not"
      {"B200, not GB200", "B200"},
  };
  for (const Case& c : cases) {
    const std::string text = std::string("## ") + c.title +
                             "\n\n```bash\npython3 -m sglang.launch_server --model-path Qwen/Qwen3-8B\n```\n";
    const LaunchScan scan = scan_launch_input(text, "guide.md");
    ASSERT_EQ(scan.commands.size(), 1u) << c.title;
    EXPECT_EQ(command_scope(scan.context, scan.commands[0], std::nullopt).gpus, c.targets) << c.title;
  }
}

TEST(FileContext, GpuLabels) {
  EXPECT_EQ(gpu_from_label("NVIDIA-H100-80GB-HBM3"), "H100");
  EXPECT_EQ(gpu_from_label("nvidia-h200-141gb"), "H200");
  EXPECT_EQ(gpu_from_label("p5.48xlarge"), "H100");
  EXPECT_EQ(gpu_from_label("Standard_ND96isr_H100_v5"), "H100");
  EXPECT_EQ(gpu_from_label("a3-ultragpu-8g"), "H200");
  EXPECT_EQ(gpu_from_label("B200:8"), "B200");
  EXPECT_EQ(gpu_from_label("nvidia-l4"), "L4");
  EXPECT_EQ(gpu_from_label("NVIDIA-L40S"), "L40S");
  EXPECT_EQ(gpu_from_label("MI300X"), "MI300X");
  EXPECT_EQ(gpu_from_label("m5.large"), "");
  // Every name and alias of the GPU catalog (data/gpus.json), a variant's alias read as its GPU.
  EXPECT_EQ(gpu_from_label("NVIDIA-RTX-A6000"), "RTX A6000");
  EXPECT_EQ(gpu_from_label("NVIDIA-GeForce-RTX-4090"), "RTX 4090");
  EXPECT_EQ(gpu_from_label("NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition"), "RTX PRO 6000");
  EXPECT_EQ(gpu_from_label("nvidia-a10g"), "A10");
  EXPECT_EQ(gpu_from_label("AMD-Instinct-MI355X"), "MI355X");
  EXPECT_EQ(gpu_from_label("rtxa6000"), "RTX A6000");  // Slurm --gres=gpu:rtxa6000:1
  EXPECT_EQ(gpu_from_label("nvidia-rtx4090"), "RTX 4090");
  EXPECT_EQ(gpu_from_label("thor"), "");  // a one-word alias without a digit is a word, not a GPU
}

TEST(ModelNames, Candidates) {
  const std::vector<std::string> dsr1 = model_id_candidates("/models/DeepSeek-R1-0528/");
  ASSERT_GE(dsr1.size(), 3u);
  EXPECT_EQ(dsr1[1], "DeepSeek-R1-0528");
  EXPECT_EQ(dsr1[2], "DeepSeek-R1");
  const std::vector<std::string> qwen = model_id_candidates("Qwen/Qwen3-32B-Instruct-FP8");
  EXPECT_NE(std::find(qwen.begin(), qwen.end(), "Qwen/Qwen3-32B"), qwen.end());
  const std::vector<std::string> awq = model_id_candidates("/models/Llama-3.3-70B-Instruct-AWQ");
  EXPECT_NE(std::find(awq.begin(), awq.end(), "Llama-3.3-70B"), awq.end());
}

std::pair<int, std::string> run_cli(const std::string& args) {
  const std::string command = std::string("env -u ATTNSEL_GPU -u ATTNSEL_MATRIX NO_COLOR=1 '") + ATTNSEL_CLI + "' " +
                              args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  std::string out;
  char buf[4096];
  while (pipe && fgets(buf, sizeof buf, pipe)) out += buf;
  const int status = pipe ? pclose(pipe) : -1;
  return {WEXITSTATUS(status), out};
}

// A notebook is read as the Markdown it renders, on the notebook's own lines: its %%bash cell's
// command is judged on the MI300X its markdown cells name. A notebook not saved a line a string
// is said to be so (a skipped block, exit 2), and one that is no JSON is no notebook (exit 2).
TEST(CheckCli, ANotebookIsReadOnItsOwnLines) {
  if (std::string(ATTNSEL_CLI).empty()) GTEST_SKIP() << "no CLI in this build";
  auto [rc, out] = run_cli("check --format json '" + kDir + "notebook/deepseekr1_sglang.ipynb' 2>/dev/null | cat");  // its remarks go to stderr
  const json results = json::parse(out).at("results");
  ASSERT_EQ(results.size(), 1u) << out;
  EXPECT_TRUE(json::parse(out).at("ok").get<bool>()) << out;
  EXPECT_EQ(results[0]["line"], 113) << out;  // `docker run -d --rm \` of the %%bash cell
  EXPECT_EQ(results[0]["gpu"], "MI300X") << out;
  EXPECT_NE(results[0]["gpu_from"].get<std::string>().find("MI300X"), std::string::npos) << out;

  // Written as a person might by hand: a cell's source one string.
  char dir[] = "/tmp/attnsel-notebook-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string one_string = std::string(dir) + "/one_string.ipynb";
  std::ofstream(one_string) << "{\n \"cells\": [\n  {\n   \"cell_type\": \"code\",\n   \"metadata\": {},\n"
                               "   \"source\": \"%%bash\\nvllm serve Qwen/Qwen3-8B\"\n  }\n ],\n \"nbformat\": 4\n}\n";
  auto [rc2, out2] = run_cli("check --gpu sm90 '" + one_string + "'");
  EXPECT_EQ(rc2, 2) << out2;
  EXPECT_NE(out2.find("one_string.ipynb:6: skipped: this cell's source is not written a line a string"),
            std::string::npos)
      << out2;
  const std::string broken = std::string(dir) + "/broken.ipynb";
  std::ofstream(broken) << "{\"cells\": [\n";
  auto [rc3, out3] = run_cli("check --gpu sm90 '" + broken + "'");
  EXPECT_EQ(rc3, 2) << out3;
  EXPECT_NE(out3.find("broken.ipynb: not a notebook"), std::string::npos) << out3;
  fs::remove_all(dir);
}

TEST(CheckCli, DirectoryIsWalked) {
  if (std::string(ATTNSEL_CLI).empty()) GTEST_SKIP() << "no CLI in this build";
  auto [rc, out] = run_cli("check --gpu sm90 '" + kDir + "bench'");
  EXPECT_EQ(rc, 2) << out;  // bad_block.sh's block was not read: the verdict is incomplete
  EXPECT_NE(out.find("read 24 files, 24 with launch commands"), std::string::npos) << out;
  EXPECT_NE(out.find("skipped"), std::string::npos) << out;  // bad_block.sh's unterminated quote
}

TEST(CheckCli, StdinWithFilename) {
  if (std::string(ATTNSEL_CLI).empty()) GTEST_SKIP() << "no CLI in this build";
  auto [rc, out] = run_cli("check --gpu sm90 --stdin-filename k8s.yaml - < '" + kDir + "k8s/deployment.yaml'");
  EXPECT_NE(rc, 2) << out;
  EXPECT_NE(out.find("k8s.yaml"), std::string::npos) << out;
}

TEST(CheckCli, GpuAndReleaseFromTheFile) {
  if (std::string(ATTNSEL_CLI).empty()) GTEST_SKIP() << "no CLI in this build";
  auto [rc, out] = run_cli("check '" + kDir + "k8s/deployment.yaml'");
  EXPECT_NE(rc, 2) << out;
  EXPECT_NE(out.find("GPU H100 from"), std::string::npos) << out;
  EXPECT_NE(out.find("release 0.5.5"), std::string::npos) << out;
  auto [rcj, json_out] = run_cli("check --format json '" + kDir + "k8s/deployment.yaml' 2>/dev/null");
  EXPECT_NE(rcj, 2) << json_out;
  const json j = json::parse(json_out).at("results");
  ASSERT_TRUE(j.is_array() && !j.empty());
  EXPECT_EQ(j[0]["file_context"]["gpus"][0]["value"], "H100");
  EXPECT_EQ(j[0]["file_context"]["releases"][0]["line"], 13);
  auto [rc2, out2] = run_cli("check '" + kDir + "bench/router.sh'");
  EXPECT_EQ(rc2, 2) << out2;  // no --gpu, none in the file
}

// ---- files read as they run (issue 24) ----

// The commands of a script given as text.
std::vector<LaunchCommand> commands_of(const std::string& text, const std::string& name = "run.sh") {
  return scan_launch_input(text, name).commands;
}

// A variable assigned on several branches: the command once per branch, the defaults first.
TEST(ReadAsRun, EveryBranchOfAnIfElse) {
  const std::vector<LaunchCommand> c = commands_of(
      "if [ \"$1\" = small ]; then\n  MODEL=Qwen/Qwen3-8B\nelse\n  MODEL=deepseek-ai/DeepSeek-R1\nfi\n"
      "python3 -m sglang.launch_server --model-path $MODEL --attention-backend fa3\n");
  ASSERT_EQ(c.size(), 2u);  // never `$MODEL` unresolved: one of the two branches always runs
  EXPECT_EQ(c[0].args[1], "Qwen/Qwen3-8B");
  EXPECT_EQ(c[0].branch, "MODEL=Qwen/Qwen3-8B (line 2)");
  EXPECT_EQ(c[1].args[1], "deepseek-ai/DeepSeek-R1");
  EXPECT_EQ(c[1].branch, "MODEL=deepseek-ai/DeepSeek-R1 (line 4)");
  EXPECT_EQ(c[0].line, 6);
}

TEST(ReadAsRun, OneLineBranchesAndAnIfWithoutElse) {
  const std::vector<LaunchCommand> c = commands_of(
      "KV=auto\nif [ -n \"$FP8\" ]; then KV=fp8_e5m2; fi\n"
      "python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --kv-cache-dtype $KV\n");
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].args[3], "auto");
  EXPECT_EQ(c[0].branch, "");
  EXPECT_EQ(c[1].args[3], "fp8_e5m2");
  EXPECT_EQ(c[1].branch, "KV=fp8_e5m2 (line 2)");
}

// getopts' $OPTARG and a positional $2 are the user's: the default the script documents stands.
TEST(ReadAsRun, OptargAndPositionalsKeepTheDocumentedDefault) {
  const std::vector<LaunchCommand> c = commands_of(
      "MODEL=deepseek-ai/DeepSeek-V3\nKV=auto\n"
      "while getopts \"m:f\" opt; do\n  case $opt in\n    m) MODEL=$OPTARG ;;\n    f) KV=fp8_e4m3 ;;\n  esac\ndone\n"
      "while [[ $# -gt 0 ]]; do\n  case \"$1\" in\n    --model) MODEL=\"$2\"; shift 2 ;;\n    *) shift ;;\n  esac\ndone\n"
      "python3 -m sglang.launch_server --model-path \"$MODEL\" --kv-cache-dtype \"$KV\"\n");
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].args[1], "deepseek-ai/DeepSeek-V3");  // never $OPTARG, judged as an unknown MHA model
  EXPECT_EQ(c[0].args[3], "auto");
  EXPECT_EQ(c[1].args[1], "deepseek-ai/DeepSeek-V3");
  EXPECT_EQ(c[1].args[3], "fp8_e4m3");
  EXPECT_EQ(c[1].branch, "KV=fp8_e4m3 (line 6)");
}

// Branches of two constructs that each always assign combine; the note names the ones a command uses.
TEST(ReadAsRun, BranchesOfSuccessiveConstructsCombine) {
  const std::vector<LaunchCommand> c = commands_of(
      "if a; then M=m1; else M=m2; fi\nif b; then K=k1; else K=k2; fi\nif c; then UNUSED=1; fi\n"
      "python3 -m sglang.launch_server --model-path $M --kv-cache-dtype $K\n");
  std::vector<std::string> seen;
  for (const LaunchCommand& x : c) seen.push_back(x.args[1] + " " + x.args[3] + " | " + x.branch);
  EXPECT_EQ(seen, (std::vector<std::string>{
                      "m1 k1 | M=m1 (line 1), K=k1 (line 2)",
                      "m1 k2 | M=m1 (line 1), K=k2 (line 2)",
                      "m2 k1 | M=m2 (line 1), K=k1 (line 2)",
                      "m2 k2 | M=m2 (line 1), K=k2 (line 2)",
                  }));
}

// Bounded: a script of many branches gives at most 16 readings of a command, and says so.
TEST(ReadAsRun, BranchesAreBoundedAndTheBoundIsReported) {
  std::string script;
  for (int i = 0; i < 40; ++i) script += "if x; then M" + std::to_string(i) + "=a; else M" + std::to_string(i) + "=b; fi\n";
  script += "python3 -m sglang.launch_server --model-path $M0$M1$M2$M3$M4$M5 --page-size 1\n";
  const LaunchScan scan = scan_launch_input(script, "run.sh");
  EXPECT_EQ(scan.commands.size(), 16u);  // M0..M3 each way; M4 on is left unknown (visible as such)
  ASSERT_EQ(scan.skipped.size(), 1u);
  EXPECT_NE(scan.skipped[0].message.find("more than 16 combinations"), std::string::npos) << scan.skipped[0].message;
  // Nesting deeper than the readers follow, and unbalanced keywords, are read without failing.
  std::string deep;
  for (int i = 0; i < 20000; ++i) deep += "if x; then\n";
  deep += "M=a\npython3 -m sglang.launch_server --model-path $M\nfi\nfi\nesac\ndone\n";
  EXPECT_EQ(commands_of(deep).size(), 1u);
}

// Past the bound a branch still reads the command it builds with its own assignments
// (InferenceX's server_sglang.sh: PREFILL_CMD="..." then setsid bash -c "$PREFILL_CMD" inside the
// node's branch); the commands after the branch never see those values.
TEST(ReadAsRun, ABranchPastTheBoundReadsItsOwnCommand) {
  std::string script;
  for (int i = 0; i < 40; ++i) script += "if x; then M" + std::to_string(i) + "=a; else M" + std::to_string(i) + "=b; fi\n";
  script +=
      "[ \"$M0$M1$M2$M3$M4$M5\" = x ] && exit; if [ \"$NODE_RANK\" -eq 0 ]; then\n"
      "  CMD=\"python3 -m sglang.launch_server --model-path m --attention-backend fa3\"\n"
      "  if [ \"$NODES\" -gt 1 ]; then\n    CMD=\"$CMD --nnodes 2\"\n    CMD+=\" --node-rank 0\"\n  fi\n"
      "  if [ \"$DRY_RUN\" = 1 ]; then echo \"$CMD\"; else\n    setsid bash -c \"$CMD\" > log 2>&1 &\n  fi\n"
      "else\n  DECODE=\"vllm serve m --tensor-parallel-size 2\"\n  eval \"$DECODE\"\n  nohup $DECODE &\nfi\n"
      "bash -c \"$CMD\"\n$DECODE\n";
  const LaunchScan scan = scan_launch_input(script, "run.sh");
  ASSERT_EQ(scan.skipped.size(), 1u);
  EXPECT_NE(scan.skipped[0].message.find("more than 16 combinations"), std::string::npos);
  std::vector<std::string> seen;
  for (const LaunchCommand& c : scan.commands) {
    std::string args;
    for (const std::string& a : c.args) args += " " + a;
    seen.push_back(std::to_string(c.line) + args);
  }
  EXPECT_EQ(seen, (std::vector<std::string>{
                      "48 --model-path m --attention-backend fa3",  // the nested if's values are gone with it
                      "52 m --tensor-parallel-size 2",
                      "53 m --tensor-parallel-size 2",
                  }));
}

// `exec "${CMD[@]}"` runs the command the array spelled out: it is reported at the launcher's line.
TEST(ReadAsRun, ConstructedCommands) {
  const std::vector<LaunchCommand> c = commands_of(
      "CMD=(python3 -m sglang.launch_server\n  --model-path Qwen/Qwen3-8B)\nexec \"${CMD[@]}\"\n"
      "args=$(echo serve Qwen/Qwen3-8B --attention-backend triton)\nargs=($args)\nsglang \"${args[@]}\"\n");
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].line, 1);
  EXPECT_EQ(c[0].args, (std::vector<std::string>{"--model-path", "Qwen/Qwen3-8B"}));
  EXPECT_EQ(c[1].launcher, "sglang serve");
  EXPECT_EQ(c[1].args, (std::vector<std::string>{"Qwen/Qwen3-8B", "--attention-backend", "triton"}));
  // A value the file leaves unknown stays written (sgl-cookbook's DeepSeek-V3.2 page: --model-path
  // $MAPPED_MODEL_PATH); printf '%s ' writes the same words; a pipeline or echo -e is not read.
  const std::vector<LaunchCommand> d = commands_of(
      "args=$(echo serve --model-path $MODEL \\\n  --attention-backend nsa)\nargs=($args)\nsglang \"${args[@]}\"\n"
      "more=$(printf '%s ' serve --model-path \"$MODEL\" --tp 8)\nmore=($more)\nsglang \"${more[@]}\"\n"
      "x=$(echo serve --model-path m | tr a b)\nx=($x)\nsglang \"${x[@]}\"\n"
      "y=$(echo -e serve --model-path m)\ny=($y)\nsglang \"${y[@]}\"\n");
  std::string said;
  for (const LaunchCommand& x : d) {
    said += std::to_string(x.line) + ":";
    for (const std::string& a : x.args) said += " " + a;
    said += "\n";
  }
  ASSERT_EQ(d.size(), 2u) << said;
  EXPECT_EQ(d[0].args, (std::vector<std::string>{"--model-path", "$MODEL", "--attention-backend", "nsa"}));
  EXPECT_EQ(d[0].line, 4);  // where it runs: `sglang "${args[@]}"`
  ASSERT_EQ(d[0].arg_shapes.size(), 4u);
  EXPECT_NE(d[0].arg_shapes[1], WordShape::literal);
  EXPECT_EQ(d[1].args, (std::vector<std::string>{"--model-path", "$MODEL", "--tp", "8"}));
  // An empty default the environment may fill (X="${X:-}") stays written inside a longer word: it
  // never reads as "/" or as a flag with no value (InferenceX server_vllm.sh: --served-model-name).
  const std::vector<LaunchCommand> e = commands_of(
      "DIR=\"${DIR:-}\"\nNAME=\"${NAME:-}\"\nSERVED=\"${NAME}\"\n"
      "CMD=\"vllm serve $DIR/$NAME --served-model-name ${SERVED} --port 8000\"\neval \"$CMD\"\n");
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].args, (std::vector<std::string>{"$DIR/$NAME", "--served-model-name", "${SERVED}", "--port", "8000"}));
}

// A backslash then a space ends the line: one finding at the backslash, the command read up to it.
TEST(ReadAsRun, BackslashSpaceIsReportedAtItsColumn) {
  const LaunchScan scan = scan_launch_input(read_text(kDir + "bench/broken_continuation.sh"), "b.sh");
  ASSERT_EQ(scan.skipped.size(), 1u);
  EXPECT_EQ(scan.skipped[0].where, "b.sh:5:30");
  ASSERT_EQ(scan.commands.size(), 1u);
  EXPECT_EQ(scan.commands[0].args.back(), " ");
  // As published in vLLM's GLM-4.5V recipe (a Markdown code block: the column is the file's).
  const LaunchScan glm = scan_launch_input(read_text(kDir + "docs/glm_v_recipe.md"), "GLM-V.md");
  ASSERT_EQ(glm.skipped.size(), 1u);
  EXPECT_EQ(glm.skipped[0].where, "GLM-V.md:34:32");
  // Quoted, in a comment or followed by more text, it is no line break.
  EXPECT_TRUE(scan_launch_input("python3 -m sglang.launch_server --x '\\ '\n# \\ \n"
                                "python3 -m sglang.launch_server --model-path a\\ b\n",
                                "ok.sh")
                  .skipped.empty());
}

// Kubernetes fills $(VAR) from the container's env, envFrom a ConfigMap of the same file; $$ is a $.
TEST(ReadAsRun, KubernetesContainerEnvironment) {
  if (!yaml_input_supported()) GTEST_SKIP() << "built without yaml-cpp";
  const std::vector<LaunchCommand> gke = commands_of(read_text(kDir + "k8s/gke_model_env.yaml"), "gke.yaml");
  ASSERT_EQ(gke.size(), 1u);
  EXPECT_EQ(gke[0].args[0], "--model=google/gemma-3-27b-it");
  EXPECT_EQ(gke[0].shape(0), WordShape::value);
  const std::vector<LaunchCommand> from = commands_of(read_text(kDir + "k8s/envfrom_configmap.yaml"), "k.yaml");
  ASSERT_EQ(from.size(), 1u);
  EXPECT_EQ(from[0].args, (std::vector<std::string>{"--model-path", "deepseek-ai/DeepSeek-V3", "--kv-cache-dtype",
                                                    "fp8_e5m2", "--tp-size", "8", "--attention-backend", "fa3",
                                                    "--served-model-name", "$(literal)"}));
  // A name no env sets stays as written; a huge value is never repeated past the word's budget.
  std::string big = "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: s\n    env:\n    - name: X\n      value: " +
                    std::string(60000, 'a') + "\n    command: [python3, -m, sglang.launch_server, --model-path, \"";
  for (int i = 0; i < 2000; ++i) big += "$(X)";
  big += "\", --tp-size, $(UNSET)]\n";
  const std::vector<LaunchCommand> b = commands_of(big, "big.yaml");
  ASSERT_EQ(b.size(), 1u);
  EXPECT_LE(b[0].args[1].size(), 70000u + 2000u * 4u);
  EXPECT_EQ(b[0].args[3], "$(UNSET)");
}

// A Helm if/else whose branches give the same key: each branch is read on its own, once.
TEST(ReadAsRun, HelmBranchesAreEachRead) {
  if (!yaml_input_supported()) GTEST_SKIP() << "built without yaml-cpp";
  const LaunchScan scan = scan_launch_input(read_text(kDir + "helm/templates/branches.yaml"), "templates/branches.yaml");
  EXPECT_TRUE(scan.skipped.empty()) << scan.skipped.front().message;  // no duplicate key "command"
  ASSERT_EQ(scan.commands.size(), 3u);
  EXPECT_EQ(scan.commands[0].line, 15);
  EXPECT_EQ(scan.commands[0].branch, "");
  EXPECT_EQ(scan.commands[1].line, 17);
  EXPECT_EQ(scan.commands[1].branch, "the template's {{ else }} at line 16 is taken");
  EXPECT_EQ(scan.commands[2].line, 19);
  EXPECT_EQ(scan.commands[2].branch, "the template's {{ else }} at line 18 is taken");
  // Linear in the template: 100,000 nested blocks, and a block of 50 branches read at most 9 ways.
  std::string deep = "apiVersion: v1\nkind: Pod\n";
  for (int i = 0; i < 100000; ++i) deep += "{{- if .Values.a }}\n";
  for (int i = 0; i < 50; ++i) deep += "{{- else }}\n";
  deep += "spec: {containers: [{name: s, command: [python3, -m, sglang.launch_server, --page-size, '1']}]}\n";
  for (int i = 0; i < 100000; ++i) deep += "{{- end }}\n";
  EXPECT_LE(scan_launch_input(deep, "templates/deep.yaml").commands.size(), 1u);
}

// A VAR=x prefix belongs to its own command; an export reaches the commands after it.
TEST(ReadAsRun, InlineEnvironmentStaysWithItsCommand) {
  const std::vector<LaunchCommand> c = commands_of(read_text(kDir + "docs/inline_env.md"), "docs/inline_env.md");
  ASSERT_EQ(c.size(), 4u);
  auto env = [](const LaunchCommand& x) {
    std::string out;
    for (const auto& e : x.environment) out += e.name + "=" + e.value + ";";
    return out;
  };
  EXPECT_EQ(env(c[0]), "VLLM_ATTENTION_BACKEND=FLASH_ATTN;");
  EXPECT_EQ(env(c[1]), "VLLM_ATTENTION_BACKEND=FLASHINFER;");
  EXPECT_EQ(env(c[2]), "");  // no prefix, and the export comes later
  EXPECT_EQ(env(c[3]), "VLLM_ATTENTION_BACKEND=TRITON_ATTN;");
}

// Every finding of a command read on a branch says which branch, in every format.
// A script that branches on nvidia-smi's compute capability (the Llama 3.3 recipe): each reading is
// judged on the GPUs that take its branch; one no target takes is told on stderr, not judged.
TEST(CheckCli, ABranchOnComputeCapabilityIsJudgedOnItsGpus) {
  if (std::string(ATTNSEL_CLI).empty()) GTEST_SKIP() << "no CLI in this build";
  const std::string recipe = "'" + kDir + "docs/llama33_recipe.md'";
  auto [rc, js] = run_cli("check --gpu sm90,B200 --format json " + recipe + " 2>/dev/null");
  const json both = json::parse(js).at("results");
  ASSERT_EQ(both.size(), 2u) << js;
  EXPECT_NE(both[0]["command"].get<std::string>().find("Instruct-FP4"), std::string::npos) << js;
  EXPECT_EQ(both[0]["gpu"], "B200") << js;
  EXPECT_NE(both[1]["command"].get<std::string>().find("Instruct-FP8"), std::string::npos) << js;
  EXPECT_EQ(both[1]["gpu"], "sm90") << js;
  auto [rc90, js90] = run_cli("check --gpu sm90 --format json " + recipe + " 2>/dev/null");
  const json hopper = json::parse(js90).at("results");
  ASSERT_EQ(hopper.size(), 1u) << js90;
  EXPECT_NE(hopper[0]["command"].get<std::string>().find("Instruct-FP8"), std::string::npos) << js90;
  auto [rct, text] = run_cli("check --gpu sm90 " + recipe);
  EXPECT_EQ(rct, rc90) << text;
  EXPECT_NE(text.find("branch for GPUs of compute capability 10.0 (the test at line 49); sm90 holds none"),
            std::string::npos)
      << text;
  auto [rcb, jsb] = run_cli("check --gpu B200 --format json " + recipe + " 2>/dev/null");
  const json blackwell = json::parse(jsb).at("results");
  ASSERT_EQ(blackwell.size(), 1u) << jsb;
  EXPECT_NE(blackwell[0]["command"].get<std::string>().find("Instruct-FP4"), std::string::npos) << jsb;
}

TEST(CheckCli, FindingsNameTheirBranch) {
  if (std::string(ATTNSEL_CLI).empty()) GTEST_SKIP() << "no CLI in this build";
  const std::string script = "/tmp/attnsel_branch_test_" + std::to_string(::getpid()) + ".sh";
  std::ofstream(script) << "KV=auto\nif [ -n \"$FP8\" ]; then\n  KV=fp8_e4m3\nfi\n"
                           "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --kv-cache-dtype $KV "
                           "--attention-backend fa3\n";
  auto [rc, out] = run_cli("check --gpu sm90 --format concise '" + script + "'");
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("(on the branch where KV=fp8_e4m3 (line 3))"), std::string::npos) << out;
  auto [rcj, js] = run_cli("check --gpu sm90 --format json '" + script + "' 2>/dev/null");
  const json results = json::parse(js).at("results");
  ASSERT_EQ(results.size(), 2u) << js;
  EXPECT_TRUE(results[0]["branch"].is_null());
  EXPECT_EQ(results[1]["branch"], "KV=fp8_e4m3 (line 3)");
  std::remove(script.c_str());
}

// SkyPilot runs the job on any GPU of an any-of set: each one is a target.
TEST(CheckCli, EveryGpuOfAnAnyOfSetIsATarget) {
  if (std::string(ATTNSEL_CLI).empty()) GTEST_SKIP() << "no CLI in this build";
  auto [rc, out] = run_cli("check '" + kDir + "skypilot/deepseek-r1-671B.sky.yaml'");
  for (const char* gpu : {"GPU H200 from", "GPU H100 from", "GPU A100 from"})
    EXPECT_NE(out.find(gpu), std::string::npos) << gpu << "\n" << out;
}

// ---- targets per command (issue 24) ----

// The GPUs each command of a check --format json run was judged on, by the command's line.
std::map<int, std::set<std::string>> judged_on(const std::string& out) {
  std::map<int, std::set<std::string>> by_line;
  const json doc = json::parse(out);  // kept: a range over a temporary's member would dangle
  for (const json& r : doc.at("results")) by_line[r.at("line").get<int>()].insert(r.at("gpu").get<std::string>());
  return by_line;
}

// A doc with a section per GPU pair and a <details> per platform: each command is judged on the
// GPUs of its heading, narrowed to its <details>' platform; JSON says where each came from.
TEST(CheckCli, EachCommandIsJudgedForItsPartOfTheDocument) {
  const std::string doc = "'" + kDir + "docs/deepseek_v3_platforms.md'";
  auto [rc, out] = run_cli("check --format json " + doc + " 2>/dev/null");
  ASSERT_NE(rc, 2) << out;
  const auto on = judged_on(out);
  EXPECT_EQ(on.at(44), (std::set<std::string>{"H200"})) << out;    // "### 8xH200 / 8xMI300X" > "— CUDA"
  EXPECT_EQ(on.at(60), (std::set<std::string>{"MI300X"})) << out;  // "— ROCm", VLLM_ROCM_USE_AITER
  EXPECT_EQ(on.at(91), (std::set<std::string>{"B200"})) << out;    // "### 4xB200 (FP4)"
  EXPECT_NE(out.find("\"gpu_from\": \"" + kDir + "docs/deepseek_v3_platforms.md:37 (heading: 8xH200 / 8xMI300X (FP8))\""),
            std::string::npos) << out;
  // Tabs, and the sentence before a block: "Blackwell" is sm100 unless the sentence names the GPU.
  auto [rc2, out2] = run_cli("check --format json '" + kDir + "docs/minimax_m3_tabs.mdx' 2>/dev/null");
  ASSERT_NE(rc2, 2) << out2;
  const auto tabs = judged_on(out2);
  EXPECT_EQ(tabs.at(22), (std::set<std::string>{"B200"})) << out2;
  EXPECT_EQ(tabs.at(36), (std::set<std::string>{"sm100"})) << out2;
  EXPECT_EQ(tabs.at(55), (std::set<std::string>{"H200"})) << out2;
  EXPECT_EQ(tabs.at(72), (std::set<std::string>{"sm90"})) << out2;
  // A script whose GPU only its file name says.
  auto [rc3, out3] = run_cli("check --format json '" + kDir + "bench/dsr1_fp8_mi355x_docker.sh' 2>/dev/null");
  ASSERT_NE(rc3, 2) << out3;
  EXPECT_EQ(judged_on(out3).at(19), (std::set<std::string>{"MI355X"})) << out3;
}

// --gpu names the GPUs; a part's platform narrows them, and a command left with none is not
// checked: a skipped block (exit 2) that names the GPU to add, never a silent pass.
TEST(CheckCli, APartsPlatformNarrowsTheGivenGpus) {
  const std::string doc = "'" + kDir + "docs/deepseek_v3_platforms.md'";
  auto [rc, out] = run_cli("check --gpu sm90,mi300x --format json " + doc + " 2>/dev/null");
  ASSERT_NE(rc, 2) << out;
  const auto on = judged_on(out);
  EXPECT_EQ(on.at(44), (std::set<std::string>{"sm90"})) << out;
  EXPECT_EQ(on.at(60), (std::set<std::string>{"mi300x"})) << out;
  EXPECT_NE(out.find("\"gpu_from\": \"--gpu\""), std::string::npos) << out;
  auto [rc2, out2] = run_cli("check --gpu sm90 --format concise " + doc);
  EXPECT_EQ(rc2, 2) << out2;
  EXPECT_NE(out2.find("deepseek_v3_platforms.md:60: warning: this command runs on ROCm (tab at line 52: Tensor Parallel"),
            std::string::npos) << out2;
  EXPECT_NE(out2.find("add one to check it (--gpu sm90,mi300x)"), std::string::npos) << out2;
}

// A YAML entry keyed by hardware (sgl-cookbook's `hardware: {B200: {extra_args}}`) is for that GPU
// alone: judged on the targets of its architecture, --gpu given or not, and told where none is one;
// a setting written in an entry (recipes' `hardware_overrides.amd.extra_env`) reaches its commands only.
TEST(CheckCli, AnEntryKeyedByHardwareIsJudgedOnlyThere) {
  const std::string cookbook = "'" + kDir + "cookbook/qwen35.yaml'";
  auto [rc, out] = run_cli("check --gpu sm90,sm100 --format json " + cookbook + " 2>/dev/null");
  ASSERT_EQ(rc, 0) << out;
  auto on = judged_on(out);
  EXPECT_EQ(on.size(), 1u) << out;                                       // the B300 entry: no sm103 target
  EXPECT_EQ(on.at(59), (std::set<std::string>{"sm100"})) << out;  // the B200 entry, not on sm90
  auto [rct, text] = run_cli("check --gpu sm90 " + cookbook);
  EXPECT_EQ(rct, 0) << text;
  EXPECT_NE(text.find("qwen35.yaml:59: this command is the file's entry for B200 (YAML key at line 56: B200) and sm90 "
                      "holds no sm100 GPU, so it was not judged: add one to judge it (--gpu sm90,b200)"),
            std::string::npos)
      << text;
  auto [rcn, none] = run_cli("check --format json " + cookbook + " 2>/dev/null");  // the keys are the targets
  on = judged_on(none);
  EXPECT_EQ(on.at(59), (std::set<std::string>{"B200"})) << none;
  EXPECT_EQ(on.at(68), (std::set<std::string>{"B300"})) << none;

  const std::string recipe = "'" + kDir + "recipes/gpt-oss-120b.yaml'";
  auto [rcr, text2] = run_cli("check --gpu sm90,mi300x " + recipe);
  EXPECT_EQ(rcr, 0) << text2;
  EXPECT_NE(text2.find("runs on TPU"), std::string::npos) << text2;  // the guide's Ironwood block: told, not judged
  auto [rcj, js] = run_cli("check --gpu sm90,mi300x --format json " + recipe + " 2>/dev/null | cat");
  on = judged_on(js);
  EXPECT_EQ(on.at(21), (std::set<std::string>{"sm90"})) << js;  // the base args: hardware_overrides.amd runs on AMD
  EXPECT_EQ(on.at(61), (std::set<std::string>{"mi300x"})) << js;          // hardware_overrides.amd
  EXPECT_EQ(on.at(127), (std::set<std::string>{"mi300x"})) << js;         // the guide's "AMD MI300X/MI325X:"
  EXPECT_EQ(on.at(82), (std::set<std::string>{"sm90"})) << js;            // the guide's "A100 (single card ...):"
  // (Which commands extra_env reaches is the deploy table's: recipes/gpt-oss-120b.yaml's rows.)
  const json doc = json::parse(js);  // kept: a range over a temporary's member would dangle
  int readings_at_61 = 0;  // hardware_overrides.amd alone, then with each feature (the site's order)
  for (const json& r : doc.at("results")) readings_at_61 += (r.at("line") == 61) ? 1 : 0;
  EXPECT_EQ(readings_at_61, 3) << js;
  // Without --gpu: the GPUs meta.hardware lists, and those the guide's sections name for theirs.
  auto [rcn2, none2] = run_cli("check --format json " + recipe + " 2>/dev/null | cat");  // its TPU block warns
  on = judged_on(none2);
  EXPECT_EQ(on.at(21), (std::set<std::string>{"H100", "H200", "B200"})) << none2;
  EXPECT_EQ(on.at(61), (std::set<std::string>{"MI300X", "MI325X", "MI355X"})) << none2;
  EXPECT_EQ(on.at(82), (std::set<std::string>{"A100"})) << none2;

  // A key naming a family is for all of it: `blackwell:` runs on B300 (sm103) too, and the base
  // args, the file's default, are not what runs there.
  const std::string family = testing::TempDir() + "attnsel-recipe-family.yaml";
  std::ofstream(family) << "model:\n  model_id: deepseek-ai/DeepSeek-V3\n  min_vllm_version: \"0.10.0\"\n"
                           "  base_args: [--tensor-parallel-size, \"8\"]\n"
                           "hardware_overrides:\n  blackwell:\n    extra_args: [--kv-cache-dtype, fp8]\n";
  auto [rcf, fam] = run_cli("check --gpu b300,sm90 --format json '" + family + "' 2>/dev/null | cat");
  on = judged_on(fam);
  EXPECT_EQ(on.at(4), (std::set<std::string>{"sm90"})) << fam;  // base args
  EXPECT_EQ(on.at(7), (std::set<std::string>{"b300"})) << fam;  // the blackwell override
  std::remove(family.c_str());
}

// A heading that names a GPU the catalog does not know ("sm61", unsupported) gives no target:
// never an unknown-GPU error for a --gpu nobody passed, and a known GPU beside it still counts.
TEST(CheckCli, AGpuTheCatalogDoesNotKnowIsNoTarget) {
  const std::string doc = "/tmp/attnsel_unknown_gpu_" + std::to_string(::getpid()) + ".md";
  std::ofstream(doc) << "# Serving\n\n## sm61 and gfx908 are not supported\n\n```bash\n"
                        "python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct\n```\n\n"
                        "## H100 (sm90), not sm61\n\n```bash\n"
                        "python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct\n```\n";
  auto [rc, out] = run_cli("check --format json '" + doc + "' 2>/dev/null");
  std::remove(doc.c_str());
  ASSERT_NE(rc, 2) << out;
  const auto on = judged_on(out);
  EXPECT_EQ(on.at(6), (std::set<std::string>{"H100", "sm90"})) << out;  // outside every GPU part: the file's GPUs
  EXPECT_EQ(on.at(12), (std::set<std::string>{"H100", "sm90"})) << out;
}

// A command for a platform attnsel has no backends for is told and not judged: a warning (exit 0,
// --strict fails on it), and no --gpu is asked for it.
TEST(CheckCli, APlatformAttnselDoesNotJudgeIsAWarning) {
  const std::string manifest = "'" + kDir + "k8s/vllm_tpu.yaml'";
  auto [rc, out] = run_cli("check " + manifest);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("vllm_tpu.yaml:46: this command runs on TPU"), std::string::npos) << out;
  EXPECT_NE(out.find("which attnsel does not judge: not checked"), std::string::npos) << out;
  auto [rc2, out2] = run_cli("check --gpu sm90 --strict " + manifest);
  EXPECT_EQ(rc2, 1) << out2;
}

}  // namespace
}  // namespace attnsel

namespace attnsel {
namespace {

// The flags a fixture's command gets from its --config, as the engine's parser reads them.
ParsedArgs config_parse(const std::string& rel, std::size_t k = 0) {
  const LaunchScan scan = scan_launch_input(read_text(kDir + rel), rel);
  EXPECT_GT(scan.commands.size(), k) << rel;
  if (scan.commands.size() <= k) return {};
  const LaunchCommand& c = scan.commands[k];
  auto profile = builtin_profile(c.engine);
  EXPECT_TRUE(profile) << rel;
  const Grammar* grammar = profile ? (*profile)->grammar(c.grammar) : nullptr;
  EXPECT_NE(grammar, nullptr) << rel;
  if (!grammar) return {};
  ParseOptions o;
  o.positional_model = c.positional_model;
  return parse_launch_args(c, *grammar, o);
}

bool has_rule(const ParsedArgs& p, const std::string& rule, Severity severity) {
  return std::any_of(p.findings.begin(), p.findings.end(),
                     [&](const ArgFinding& f) { return f.rule == rule && f.severity == severity; });
}

// Issue 24: a --config file the text writes (a heredoc) or shows (a Markdown block under its name)
// is read from there, on the text's own lines; its $VAR stays a value the shell fills in.
TEST(ConfigForm, HeredocConfigJoinsTheCommand) {
  if (!yaml_input_supported()) GTEST_SKIP() << "built without yaml-cpp";
  const ParsedArgs p = config_parse("bench/heredoc_config.sh");
  const ParsedArgs::Given* caching = nullptr;
  const ParsedArgs::Given* length = nullptr;
  for (const ParsedArgs::Given& g : p.given) {
    if (g.written == "--no-enable-prefix-caching") caching = &g;
    if (g.written == "--max-model-len") length = &g;
  }
  ASSERT_NE(caching, nullptr);
  EXPECT_EQ(caching->line, 8);  // the heredoc's line in the script
  ASSERT_NE(length, nullptr);
  ASSERT_EQ(length->values.size(), 1u);
  EXPECT_EQ(length->values[0].shape, WordShape::value);  // $CALCULATED_MAX_MODEL_LEN, not a type error
  EXPECT_FALSE(has_rule(p, "args.config", Severity::error));
  EXPECT_FALSE(has_rule(p, "args.type", Severity::error));
}

TEST(ConfigForm, MarkdownBlockUnderTheFileName) {
  if (!yaml_input_supported()) GTEST_SKIP() << "built without yaml-cpp";
  for (std::size_t k : {0u, 1u}) {
    const ParsedArgs p = config_parse("docs/config_blocks.md", k);
    const ArgValue* kv = p.value("kv_cache_dtype");
    ASSERT_NE(kv, nullptr) << k;
    EXPECT_EQ(kv->text, "fp8");
    EXPECT_EQ(kv->line, k == 0 ? 6 : 15);  // the Blackwell block for the first branch, the Hopper one next
  }
}

// A config file on its own, and a dynamo config's workers, are judged as the command that loads them.
TEST(ConfigForm, ConfigFilesJudgedOnTheirOwn) {
  if (!yaml_input_supported()) GTEST_SKIP() << "built without yaml-cpp";
  const ParsedArgs recipe = config_parse("vllm/GPT-OSS_Hopper.yaml");
  EXPECT_TRUE(std::any_of(recipe.given.begin(), recipe.given.end(),
                          [](const ParsedArgs::Given& g) { return g.written == "--max-num-batched-tokens" && g.line == 5; }));
  for (std::size_t k : {0u, 1u}) {
    const ParsedArgs worker = config_parse("dynamo/disagg.yaml", k);
    ASSERT_NE(worker.value("model"), nullptr);
    EXPECT_EQ(worker.value("model")->text, "deepseek-ai/DeepSeek-R1-Distill-Llama-8B");
    EXPECT_FALSE(std::any_of(worker.findings.begin(), worker.findings.end(),
                             [](const ArgFinding& f) { return f.severity == Severity::error; }))
        << k << ": ServiceArgs is the dynamo SDK's, never an unknown flag";
  }
}

// A --config that is not read leaves the command open: no required-flag error, a note instead.
TEST(ConfigForm, UnreadConfigIsVisibleNeverAnError) {
  LaunchCommand c = scan_launch_input("python3 -m sglang.launch_server --config missing.yaml\n", "run.sh").commands.at(0);
  auto profile = builtin_profile(c.engine);
  ASSERT_TRUE(profile);
  ParseOptions o;
  o.read_config = [](const std::string& path, const LaunchCommand&) -> Result<std::string> {
    return Error{ErrorCode::invalid_argument, path + " is neither beside the file holding the command nor under the checked directories", path, {}, {}};
  };
  const ParsedArgs p = parse_launch_args(c, *(*profile)->grammar(c.grammar), o);
  EXPECT_TRUE(p.open_ended);
  EXPECT_TRUE(has_rule(p, "args.config", Severity::info));
  EXPECT_FALSE(has_rule(p, "args.required", Severity::error));
  EXPECT_TRUE(has_rule(p, "args.required", Severity::info));
  // Not there to open when attnsel runs: a note too; a directory or a FIFO is the engine's exit.
  o.read_config = [](const std::string& path, const LaunchCommand&) -> Result<std::string> {
    return Error{ErrorCode::io_error, "cannot open: No such file or directory", path, {}, {}};
  };
  EXPECT_FALSE(has_rule(parse_launch_args(c, *(*profile)->grammar(c.grammar), o), "args.config", Severity::error));
  o.read_config = [](const std::string& path, const LaunchCommand&) -> Result<std::string> {
    return Error{ErrorCode::io_error, std::string("cannot open: ") + std::strerror(EACCES), path, {}, {}};
  };
  EXPECT_TRUE(has_rule(parse_launch_args(c, *(*profile)->grammar(c.grammar), o), "args.config", Severity::error))
      << "there but unreadable: the engine cannot read it either";
  o.read_config = [](const std::string& path, const LaunchCommand&) -> Result<std::string> {
    return Error{ErrorCode::io_error, "is a directory, not a file", path, {}, {}};
  };
  EXPECT_TRUE(has_rule(parse_launch_args(c, *(*profile)->grammar(c.grammar), o), "args.config", Severity::error));
}

}  // namespace
}  // namespace attnsel


namespace attnsel {
namespace {
// A string that is a statement of its own (a docstring) is never run: prose naming a launcher is no
// block that failed to read (aibrix ssh_launch.py: "the box's HTTP endpoint"), while a command
// written in it is still found; a string passed to a call that does not tokenise still is one.
TEST(ReadAsRun, DocstringProseIsNoBrokenBlock) {
  const LaunchScan prose = scan_launch_input(read_text(kDir + "python/docstring_prose.py"), "ssh_launch.py");
  EXPECT_TRUE(prose.skipped.empty());
  ASSERT_EQ(prose.commands.size(), 1u);
  EXPECT_EQ(prose.commands[0].line, 28);
  const LaunchScan doc = scan_launch_input(
      "def serve(model):\n    \"\"\"\n    Serves a vLLM model using Python's subprocess module.\n\n"
      "    Args: arguments to pass to the vllm serve command.\n    \"\"\"\n\n"
      "def usage():\n    \"\"\"Start it with: python3 -m sglang.launch_server --model-path m --tp 2\"\"\"\n",
      "serve.py");
  EXPECT_TRUE(doc.skipped.empty());
  ASSERT_EQ(doc.commands.size(), 1u);
  EXPECT_EQ(doc.commands[0].args.back(), "2");
  const LaunchScan call = scan_launch_input("import os\nos.system(\"python3 -m sglang.launch_server --model-path 'm\")\n", "r.py");
  EXPECT_EQ(call.skipped.size(), 1u);
}

}  // namespace
}  // namespace attnsel

namespace attnsel {
namespace {

// Only branches that assign what a launch command (or a test) reads take a set of values: open-r1's
// generate.slurm parses 16 options for its data client, and its vllm serve reads one of them.
TEST(ReadAsRun, BranchesThatNoLaunchReadsDoNotCount) {
  std::string script = "while [[ $# -gt 0 ]]; do\n  case $1 in\n";
  for (int i = 0; i < 24; ++i) script += "    --o" + std::to_string(i) + ") O" + std::to_string(i) + "=\"$2\"; shift 2 ;;\n";
  script += "    --model) MODEL=\"$2\"; shift 2 ;;\n    --big) SIZE=big; shift ;;\n  esac\ndone\nSIZE=${SIZE:-small}\n"
            "if [ \"$SIZE\" = big ]; then TP=8; fi\n"
            "python generate.py --o1 \"$O1\" --o2 \"$O2\" --vllm-server-url \"http://$HOST:8000\"\n"
            "vllm serve $MODEL --tensor-parallel-size ${TP:-1}\n";
  const LaunchScan scan = scan_launch_input(script, "generate.slurm");
  EXPECT_TRUE(scan.skipped.empty()) << scan.skipped.front().message;
  std::set<std::string> tp;
  for (const LaunchCommand& c : scan.commands) tp.insert(c.args.back());
  EXPECT_EQ(tp, (std::set<std::string>{"1", "8"}));  // SIZE, read by a test, still decides TP
}

}  // namespace
}  // namespace attnsel

namespace attnsel {
namespace {

// Nested: an if the file decides inside a branch assigns in that branch's values (its other branch
// never runs), and a case inside a branch whose every arm assigns stands for the branch from then on:
// only the feasible combinations are read (no reading with BACKEND or KVD unset, none with triton).
TEST(ReadAsRun, NestedBranchesGiveTheirFeasibleReadings) {
  const LaunchScan scan = scan_launch_input(
      "MODE=serve\nKV=auto\n"
      "if [ \"$GPU\" = h100 ]; then\n"
      "  if [ \"$MODE\" = serve ]; then\n    BACKEND=fa3\n  else\n    BACKEND=triton\n  fi\n"
      "  case \"$KV\" in\n    fp8) KVD=fp8_e4m3 ;;\n    *) KVD=auto ;;\n  esac\n"
      "  EXTRA=--enable-metrics\n"
      "else\n  BACKEND=flashinfer\n  KVD=auto\n  EXTRA=\nfi\n"
      "python3 -m sglang.launch_server --model-path m --attention-backend $BACKEND --kv-cache-dtype $KVD $EXTRA\n",
      "run.sh");
  EXPECT_TRUE(scan.skipped.empty());
  std::vector<std::string> seen;
  for (const LaunchCommand& c : scan.commands) {
    std::string args;
    for (std::size_t k = 3; k < c.args.size(); ++k) args += (k > 3 ? " " : "") + c.args[k];
    seen.push_back(args);
  }
  EXPECT_EQ(seen, (std::vector<std::string>{
                      "fa3 --kv-cache-dtype fp8_e4m3 --enable-metrics",
                      "fa3 --kv-cache-dtype auto --enable-metrics",
                      "flashinfer --kv-cache-dtype auto",
                  }));
  // The branch around has no values of its own when the inner construct closes (SlimServe's
  // `if [[ -z "$CTX" ]]; then if (( TP >= 4 )); then CTX=...; else CTX=...; fi; fi`); what the
  // script assigns after it reaches each reading once.
  const std::vector<LaunchCommand> c = commands_of(
      "if [ \"$GPU\" = h100 ]; then\n  case \"$KV\" in\n    fp8) KVD=fp8_e4m3 ;;\n    *) KVD=auto ;;\n  esac\n"
      "  B=fa3\nelse\n  KVD=auto; B=triton\nfi\nARGS=(--attention-backend $B)\nARGS+=(--kv-cache-dtype $KVD)\n"
      "python3 -m sglang.launch_server --model-path m \"${ARGS[@]}\"\n");
  std::vector<std::string> got;
  for (const LaunchCommand& x : c) {
    std::string args;
    for (std::size_t k = 2; k < x.args.size(); ++k) args += (k > 2 ? " " : "") + x.args[k];
    got.push_back(args);
  }
  EXPECT_EQ(got, (std::vector<std::string>{
                     "--attention-backend fa3 --kv-cache-dtype fp8_e4m3",
                     "--attention-backend fa3 --kv-cache-dtype auto",
                     "--attention-backend triton --kv-cache-dtype auto",
                 }));
}

}  // namespace
}  // namespace attnsel
