// The attnsel binary end to end: golden outputs (tests/golden/) and exit codes.
// Regenerate the golden files after an intended change: ATTNSEL_UPDATE_GOLDEN=1 ./cli_test
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

namespace {

struct CliRun {
  int exit_code = -1;
  std::string out;  // stdout and stderr together, in order
};

CliRun run_shell(const std::string& command) {
  CliRun r;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf{};
  std::size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

CliRun run(const std::string& args) {
  // No colour, no probing surprises: a fixed environment for every run.
  return run_shell(std::string("env -u ATTNSEL_GPU -u ATTNSEL_MATRIX NO_COLOR=1 '") + ATTNSEL_CLI + "' " + args + " 2>&1");
}

std::string golden_path(const std::string& name) { return std::string(ATTNSEL_TESTS_DIR) + "/golden/" + name; }

void expect_golden(const std::string& name, const std::string& actual) {
  const std::string path = golden_path(name);
  if (const char* update = std::getenv("ATTNSEL_UPDATE_GOLDEN"); update && *update == '1') {
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << "missing golden file " << path << " (run with ATTNSEL_UPDATE_GOLDEN=1)";
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(actual, expected.str()) << "output differs from " << path;
}

struct GoldenCase {
  const char* file;
  const char* args;
  int exit_code;
};

class CliGolden : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(CliGolden, MatchesGoldenOutputAndExitCode) {
  const GoldenCase& c = GetParam();
  const CliRun r = run(c.args);
  EXPECT_EQ(r.exit_code, c.exit_code) << r.out;
  expect_golden(c.file, r.out);
}

const GoldenCase kGolden[] = {
    {"select_sm90_mla.txt", "--gpu sm90 --model mla", 0},
    {"select_b200_deepseek_r1.txt", "--gpu B200 --cuda 12.9 --model deepseek-ai/DeepSeek-R1", 0},
    {"select_h100_flashmla_fp8_page16.txt",
     "--gpu H100 --cuda 12.8 --model deepseek-ai/DeepSeek-R1 --attention-backend flashmla --kv-cache-dtype fp8_e4m3 --page-size 16", 0},
    // FA4 runs standard attention on SM90 at any page size in the newest releases (oracle: v0.5.16, main).
    {"select_sm90_fa4_page64.txt", "--gpu sm90 --cuda 12.8 --model mha --attention-backend fa4 --page-size 64", 0},
    {"select_sm90_trtllm_mla.txt", "--gpu sm90 --cuda 12.8 --model mla --attention-backend trtllm_mla", 1},
    {"select_b200_qwen3_next.txt", "--gpu B200 --cuda 12.9 --model Qwen/Qwen3-Next-80B-A3B-Instruct", 0},
    {"select_h200_deepseek_v32.txt", "--gpu H200 --cuda 12.9 --model deepseek-ai/DeepSeek-V3.2", 0},
    {"select_v100_mha.txt", "--gpu V100 --cuda 12.4 --model mha", 0},
    {"explain_sm90_mha_topk4.txt", "explain --gpu sm90 --cuda 12.9 --model mha --speculative-eagle-topk 4 --page-size 64", 0},
    {"select_sm90_mla.json", "--gpu sm90 --cuda 12.9 --model mla --json", 0},
    // vLLM v0.11 has no --attention-backend: the plan names the backend with VLLM_ATTENTION_BACKEND.
    {"select_vllm011_h100_mha.json", "--engine vllm --engine-version 0.11.0 --gpu H100 --cuda 12.9 --model mha --json", 0},
    {"matrix_table.txt", "matrix", 0},
    {"error_unknown_backend.txt", "--gpu sm90 --model mla --attention-backend flashinfr", 2},
    {"error_unknown_gpu.txt", "--gpu H1OO --model mla", 2},
    {"error_unknown_model.txt", "--gpu sm90 --model deepseek-ai/DeepSeek-V9", 2},
    {"error_bad_cuda.txt", "--gpu sm90 --cuda 12.x --model mla", 2},
};

INSTANTIATE_TEST_SUITE_P(Cli, CliGolden, ::testing::ValuesIn(kGolden), [](const ::testing::TestParamInfo<GoldenCase>& p) {
  std::string n = p.param.file;
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
});

TEST(Cli, JsonContract) {
  const CliRun r = run("--gpu B200 --model deepseek-ai/DeepSeek-R1 --prefill-attention-backend fa4 --attention-backend trtllm_mla --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["ok"].get<bool>());
  const auto& plan = j["plan"];
  EXPECT_TRUE(plan["attention_backend"].is_null()) << "a hybrid plan has no single backend";
  EXPECT_EQ(plan["prefill_backend"], "fa4");
  EXPECT_EQ(plan["decode_backend"], "trtllm_mla");
  EXPECT_EQ(plan["page_size"], 64);
  EXPECT_EQ(plan["kv_cache_dtype"], "auto");
  EXPECT_TRUE(plan["linear_attn_backend"].is_null());
  EXPECT_TRUE(plan["flags"].is_array());
  // The contract's envelope (docs/output.md), then one device's selection under devices.
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["kind"], "select");
  EXPECT_TRUE(j["attnsel_version"].is_string());
  EXPECT_EQ(j["flags"], plan["flags"]);
  ASSERT_EQ(j["devices"].size(), 1u);
  const auto& device = j["devices"][0];
  EXPECT_EQ(device["plan"], plan);
  for (const char* key : {"errors", "warnings"}) EXPECT_TRUE(j[key].is_array()) << key;
  for (const char* key : {"errors", "warnings", "notes", "rejected", "alternatives"}) EXPECT_TRUE(device[key].is_array()) << key;
  for (const auto& r2 : device["rejected"]) {
    EXPECT_TRUE(r2["backend"].is_string());
    for (const auto& reason : r2["reasons"]) {
      EXPECT_TRUE(reason["rule"].is_string());
      EXPECT_TRUE(reason["message"].is_string());
    }
  }
}

TEST(Cli, GdnJsonHasLinearBackends) {
  const CliRun r = run("--gpu sm90 --model gdn --linear-attn-decode-backend cutedsl --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["plan"]["linear_attn_backend"]["prefill"], "triton");
  EXPECT_EQ(j["plan"]["linear_attn_backend"]["decode"], "cutedsl");
}

TEST(Cli, InvalidPlanStillReportsAsJsonWithExitOne) {
  const CliRun r = run("--gpu sm90 --model mla --attention-backend trtllm_mla --json");
  EXPECT_EQ(r.exit_code, 1);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j["ok"].get<bool>());
  ASSERT_FALSE(j["errors"].empty());
  EXPECT_EQ(j["errors"][0]["rule"], "cell.compute-capability");
  EXPECT_EQ(j["errors"][0]["device"], 0);
  EXPECT_TRUE(j["plan"].is_object()) << "the invalid plan is still shown";
  EXPECT_TRUE(j["flags"].is_null()) << "no flags for a plan that will not run";
}

TEST(Cli, PlatformsWithoutAGpu) {
  EXPECT_EQ(run("--platform npu --model mha").exit_code, 0);
  EXPECT_EQ(run("--platform cpu --model mha").exit_code, 0);
  const CliRun rocm = run("--platform rocm --model mla");
  EXPECT_EQ(rocm.exit_code, 0);
  EXPECT_NE(rocm.out.find("assumed for --platform rocm"), std::string::npos) << rocm.out;
}

TEST(Cli, MatrixFromEnvironmentAndFlag) {
  const std::string bad = std::string(ATTNSEL_TESTS_DIR) + "/fixtures/matrices/bad/truncated.json";
  const CliRun r = run("--gpu sm90 --model mla --matrix '" + bad + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("truncated.json:"), std::string::npos) << r.out;
  const std::string good = std::string(ATTNSEL_SOURCE_DIR) + "/data/engines/sglang/matrix-0.5.12.json";
  EXPECT_EQ(run("--gpu sm90 --model mla --matrix '" + good + "'").exit_code, 0);
}

TEST(Cli, NoGpuAndNoProbeIsExitThree) {
  // CI machines have no GPU: the probe finds nothing, and says what it tried.
  const CliRun r = run("--model mla");
  if (r.exit_code == 0) GTEST_SKIP() << "this machine has a GPU";
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("--gpu"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("libnvidia-ml.so.1"), std::string::npos) << r.out;
}

TEST(Cli, MissingModelIsUsage) { EXPECT_EQ(run("--gpu sm90").exit_code, 2); }

TEST(Cli, MatrixFormats) {
  const CliRun md = run("matrix --format markdown");
  EXPECT_EQ(md.exit_code, 0);
  EXPECT_NE(md.out.find("| backend"), std::string::npos);
  const CliRun js = run("matrix --format json");
  EXPECT_EQ(js.exit_code, 0);
  EXPECT_TRUE(nlohmann::json::accept(js.out));
}

}  // namespace

namespace {

TEST(Cli, SeveralDevicesSayWhenPlansDiffer) {
  const CliRun differ = run("--gpu sm90,A100 --model mla");
  EXPECT_EQ(differ.exit_code, 0) << differ.out;
  EXPECT_NE(differ.out.find("device 1 (sm80): --attention-backend triton"), std::string::npos) << differ.out;
  const CliRun same = run("--gpu H100,H200 --model mla --json");
  ASSERT_EQ(same.exit_code, 0) << same.out;
  const auto j = nlohmann::json::parse(same.out);
  EXPECT_TRUE(j["same_plan"].get<bool>());
  EXPECT_EQ(j["devices"].size(), 2u);
  EXPECT_EQ(j["plan"], j["devices"][1]["plan"]) << "the plan every device runs";
  const auto split = nlohmann::json::parse(run("--gpu sm90,A100 --model mla --json").out);
  EXPECT_FALSE(split["same_plan"].get<bool>());
  EXPECT_TRUE(split["plan"].is_null() && split["flags"].is_null()) << "no one plan when the devices differ";
  for (const char* key : {"schema_version", "attnsel_version", "kind", "ok", "same_plan", "plan", "flags", "errors", "warnings", "devices"})
    EXPECT_TRUE(split.contains(key) && j.contains(key)) << key << ": one shape for any number of GPUs";
  // One device that cannot run it makes the whole answer "no".
  EXPECT_EQ(run("--gpu B200,sm90 --model mla --attention-backend trtllm_mla").exit_code, 1);
}

}  // namespace

// ---- the output contract, names and completions (issue 15) ----
namespace {

// stdout alone: what a pipeline that parses attnsel's output reads.
CliRun run_stdout(const std::string& args, const std::string& env = "NO_COLOR=1") {
  return run_shell(std::string("env -u ATTNSEL_GPU -u ATTNSEL_MATRIX ") + env + " '" + ATTNSEL_CLI + "' " + args + " 2>/dev/null");
}

TEST(CliContract, UsageErrorsUnderJsonAreJsonDocumentsOnStdout) {
  const struct {
    const char* args;
    const char* where;
    const char* suggestion;
  } cases[] = {
      {"--gpu H10 --model mla --json", "--gpu", "H100"},
      {"--gpu sm90 --model mla --attention-backend flashinfr --format json", nullptr, nullptr},
      {"matrix --formt json --json", "--formt", "--format"},
      {"check --gpuu sm90 --format json -- x", "--gpuu", "--gpu"},
      {"chek --json", "", "check"},
  };
  for (const auto& c : cases) {
    const CliRun r = run_stdout(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args;
    const auto j = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_TRUE(j.is_object()) << c.args << ": " << r.out;
    EXPECT_EQ(j["kind"], "error") << c.args;
    EXPECT_EQ(j["exit_code"], 2) << c.args;
    EXPECT_FALSE(j["error"]["message"].get<std::string>().empty()) << c.args;
    if (c.where) EXPECT_EQ(j["error"].value("where", ""), c.where) << c.args;
    if (c.suggestion) EXPECT_EQ(j["error"]["suggestion"], c.suggestion) << c.args;
  }
  // Without a JSON format, stdout stays empty: the message is on stderr.
  EXPECT_EQ(run_stdout("--gpu H10 --model mla").out, "");
}

TEST(CliContract, UnknownOptionsAndCommandsNameTheClosestValidOne) {
  const struct {
    const char* args;
    const char* expected;
  } cases[] = {
      {"chek", "unknown command 'chek' (did you mean 'check'?)"},
      {"matrix lnt", "matrix: unknown command 'lnt' (did you mean 'lint'?)"},
      {"check --gpuu sm90 -- x", "--gpuu: unknown option for `attnsel check` (did you mean '--gpu'?)"},
      {"matrix --formt json", "--formt: unknown option for `attnsel matrix` (did you mean '--format'?)"},
      {"--gpu sm90 --model mla --jsn", "--jsn: unknown option (did you mean '--json'?)"},
      {"--gpu sm90 --model mla --attention-backen fa3 --page-sise 1", "--page-size"},
      {"check --gpu sm90 --attention-backend fa3", "a launch command to check goes after --"},
  };
  for (const auto& c : cases) {
    const CliRun r = run(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.expected), std::string::npos) << c.args << "\n" << r.out;
    EXPECT_EQ(r.out.find("The following argument"), std::string::npos) << "CLI11's raw message: " << r.out;
  }
}

TEST(CliContract, FormatOnEverySubcommandAndJsonAsItsAlias) {
  for (const char* args : {"--gpu sm90 --model mla", "explain --gpu sm90 --model mla", "matrix", "matrix --versions",
                           "matrix diff 0.5.3 latest", "probe", "matrix lint --no-probes --engine sglang-diffusion"}) {
    const CliRun a = run_stdout(std::string(args) + " --format json");
    const CliRun b = run_stdout(std::string(args) + " --json");
    const auto ja = nlohmann::json::parse(a.out, nullptr, false);
    ASSERT_TRUE(ja.is_object()) << args << ": " << a.out.substr(0, 300);
    EXPECT_EQ(ja["schema_version"], 1) << args;
    if (std::string(args).find("lint") == std::string::npos) EXPECT_EQ(a.out, b.out) << args;  // lint times itself
  }
  const CliRun md = run_stdout("--gpu sm90 --model mla --format markdown");
  EXPECT_EQ(md.exit_code, 0);
  expect_golden("select_sm90_mla.md", md.out);
  EXPECT_EQ(run_stdout("matrix --format text").out, run_stdout("matrix").out) << "text reads as table";
}

TEST(CliContract, ExplainJsonCarriesTheTrace) {
  const auto j = nlohmann::json::parse(run_stdout("explain --gpu sm90 --model mla --json").out);
  const auto& trace = j["devices"][0]["trace"];
  ASSERT_TRUE(trace.is_array());
  bool matched = false;
  for (const auto& step : trace) matched = matched || (step["step"] == "entry_matched" && step["backend"] == "fa3");
  EXPECT_TRUE(matched) << trace.dump(1);
  EXPECT_FALSE(nlohmann::json::parse(run_stdout("--gpu sm90 --model mla --json").out)["devices"][0].contains("trace"));
}

TEST(CliContract, MatrixDiffExitCode) {
  EXPECT_EQ(run_stdout("matrix diff 0.5.3 latest").exit_code, 0);
  EXPECT_EQ(run_stdout("matrix diff 0.5.3 latest --exit-code").exit_code, 1);
  EXPECT_EQ(run_stdout("matrix diff latest latest --exit-code").exit_code, 0);
  const auto j = nlohmann::json::parse(run_stdout("matrix diff 0.5.3 latest --json").out);
  EXPECT_EQ(j["count"], j["changes"].size());
  EXPECT_GT(j["count"].get<int>(), 0);
}

TEST(CliContract, Colour) {
  const std::string esc = "\033[";
  EXPECT_NE(run_stdout("--gpu sm90 --model mla --color always", "NO_COLOR=").out.find(esc), std::string::npos);
  EXPECT_NE(run_stdout("--gpu sm90 --model mla --color always", "NO_COLOR=1").out.find(esc), std::string::npos)
      << "an explicit --color always wins over NO_COLOR";
  EXPECT_EQ(run_stdout("--gpu sm90 --model mla --color never", "NO_COLOR=").out.find(esc), std::string::npos);
  EXPECT_EQ(run_stdout("matrix --color auto", "NO_COLOR= TERM=xterm").out.find(esc), std::string::npos) << "not a terminal";
  EXPECT_EQ(run_stdout("check --color sometimes --gpu sm90 -- x").exit_code, 2);
}

// The bash completion, loaded into a real bash, asked what it completes.
std::string complete_bash(const std::string& script, const std::string& line) {
  const std::string path = ::testing::TempDir() + "attnsel-completion.bash";
  std::ofstream(path) << script;
  const std::string command = "bash -c 'source \"" + path + "\"; COMP_WORDS=(" + line +
                              "); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _attnsel; printf \"%s\\n\" \"${COMPREPLY[@]}\"'";
  return run_shell(command).out;
}

TEST(CliCompletion, BashCompletesCommandsOptionsAndDataValues) {
  const CliRun script = run_stdout("completion bash");
  ASSERT_EQ(script.exit_code, 0);
  const struct {
    const char* line;
    std::vector<const char*> expected;
  } cases[] = {
      {"attnsel ch", {"check"}},
      {"attnsel matrix l", {"lint"}},
      {"attnsel --gpu H1", {"H100"}},
      {"attnsel --gpu sm1", {"sm100", "sm120"}},
      {"attnsel --gpu sm90 --model deepseek-ai/DeepSeek-V", {"deepseek-ai/DeepSeek-V3"}},
      {"attnsel --gpu sm90 --attention-backend fl", {"flashinfer", "flashmla"}},
      {"attnsel explain --kv-cache-dtype fp8", {"fp8_e4m3"}},
      {"attnsel check --for", {"--format"}},
      {"attnsel check --format \"\"", {"github", "json", "markdown", "text"}},
      {"attnsel --engine \"\"", {"sglang", "vllm"}},
      {"attnsel completion \"\"", {"bash", "fish", "zsh"}},
      {"attnsel probe --", {"--json", "--format", "--color"}},
  };
  for (const auto& c : cases) {
    const std::string out = complete_bash(script.out, c.line);
    for (const char* word : c.expected)
      EXPECT_NE(("\n" + out).find(std::string("\n") + word + "\n"), std::string::npos) << c.line << " -> " << out.substr(0, 400);
  }
  // After -- the launch command is not attnsel's: no attnsel words.
  EXPECT_EQ(complete_bash(script.out, "attnsel check --gpu sm90 -- python3 --"), "\n");
  // A bare word offers the subcommands, not the hundreds of engine flags; a dash offers the options.
  const std::string top = complete_bash(script.out, "attnsel \"\"");
  EXPECT_EQ(top.find("--attention-backend"), std::string::npos) << top.substr(0, 400);
  for (const char* sub : {"check\n", "select\n", "matrix\n", "probe\n"}) EXPECT_NE(top.find(sub), std::string::npos) << sub;
  EXPECT_LT(std::count(top.begin(), top.end(), '\n'), 20) << top;
  EXPECT_NE(complete_bash(script.out, "attnsel --att").find("--attention-backend\n"), std::string::npos);
  // A list completes its last item; a GPU name with a space is one escaped word.
  EXPECT_NE(("\n" + complete_bash(script.out, "attnsel --gpu sm90,H1")).find("\nsm90,H100\n"), std::string::npos);
  EXPECT_NE(("\n" + complete_bash(script.out, "attnsel --gpu \"RTX 50\"")).find("\nRTX\\ 5090\n"), std::string::npos)
      << complete_bash(script.out, "attnsel --gpu \"RTX 50\"");
}

// Papercuts of issue 25: the engine's --device PLATFORM pasted from a launch command, each
// subcommand's own exit codes in its help, and the man page's EXIT STATUS holding exit codes only.
TEST(CliContract, DevicePlatformFooterAndExitStatus) {
  EXPECT_EQ(run_stdout("--device cuda --gpu sm90 --model mla").exit_code, 0);
  const CliRun npu = run_stdout("--device npu --model mha");
  EXPECT_EQ(npu.exit_code, 0) << npu.out;
  EXPECT_NE(npu.out.find("npu"), std::string::npos) << npu.out;
  const CliRun hpu = run_shell(std::string("'") + ATTNSEL_CLI + "' --device hpu --gpu sm90 --model mla 2>&1");
  EXPECT_EQ(hpu.exit_code, 2);
  EXPECT_NE(hpu.out.find("a probed GPU's index (0, 1 ...) or the engine's platform"), std::string::npos) << hpu.out;
  EXPECT_EQ(hpu.out.find("179769313486231570814527423731704356798070567525844996598917476803157260780028538760589558632766878"),
            std::string::npos);
  EXPECT_EQ(run_stdout("--device npu --platform cuda --model mha").exit_code, 2);
  for (const auto& [command, footer] : std::vector<std::pair<std::string, std::string>>{
           {"matrix --help", "Exit codes: 0 printed"},
           {"matrix lint --help", "Exit codes: 0 consistent"},
           {"probe --help", "3 no GPU found"},
           {"advisories --help", "Exit codes: 0 listed"},
           {"--help", "4 a choice attnsel cannot judge"}}) {
    const CliRun help = run_stdout(command);
    EXPECT_NE(help.out.find(footer), std::string::npos) << command << ":\n" << help.out.substr(help.out.size() > 600 ? help.out.size() - 600 : 0);
  }
  const CliRun man = run_stdout("man");
  const std::size_t exit_status = man.out.find(".SH EXIT STATUS\n");
  ASSERT_NE(exit_status, std::string::npos);
  const std::string section = man.out.substr(exit_status, man.out.find(".SH", exit_status + 4) - exit_status);
  EXPECT_NE(section.find("0 valid plan"), std::string::npos) << section;
  EXPECT_EQ(section.find("launch flag"), std::string::npos) << section;
}

TEST(CliCompletion, ZshAndFishScriptsParseWhereTheShellsExist) {
  for (const char* shell : {"zsh", "fish"}) {
    const CliRun script = run_stdout(std::string("completion ") + shell);
    ASSERT_EQ(script.exit_code, 0) << shell;
    EXPECT_NE(script.out.find("H100"), std::string::npos) << shell << ": GPU names from the data";
    EXPECT_NE(script.out.find("attention-backend"), std::string::npos) << shell << ": the engine's flags";
    if (run_shell(std::string("command -v ") + shell + " >/dev/null").exit_code != 0) continue;
    const std::string path = ::testing::TempDir() + "attnsel-completion." + shell;
    std::ofstream(path) << script.out;
    const CliRun parsed = run_shell(std::string(shell) + " -n '" + path + "' 2>&1");
    EXPECT_EQ(parsed.exit_code, 0) << shell << ": " << parsed.out;
  }
}

TEST(CliCompletion, ManPageCoversEverySubcommandAndOption) {
  const CliRun man = run_stdout("man");
  ASSERT_EQ(man.exit_code, 0);
  EXPECT_EQ(man.out.rfind(".TH ATTNSEL 1", 0), 0u);
  for (const char* section : {".SH NAME", ".SH SYNOPSIS", ".SH COMMANDS", ".SH EXIT STATUS", ".SH ENVIRONMENT", ".SH EXAMPLES"})
    EXPECT_NE(man.out.find(section), std::string::npos) << section;
  for (const char* text : {"attnsel check\"", "attnsel matrix diff\"", "\\-\\-exit\\-code", "\\-\\-stdin\\-filename", "\\-\\-color"})
    EXPECT_NE(man.out.find(text), std::string::npos) << text;
  if (run_shell("command -v groff >/dev/null").exit_code == 0) {
    const CliRun warnings = run_shell(std::string("'") + ATTNSEL_CLI + "' man | groff -man -Tutf8 -ww -z 2>&1");
    EXPECT_EQ(warnings.out, "") << "groff warnings";
  }
}

}  // namespace
