// `attnsel check`: launch commands judged for target GPUs, located on the flag's line, rendered as
// text, JSON and GitHub annotations, and the CLI's exit codes.
#include "attnsel/check.hpp"
#include "attnsel/check_input.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#ifndef ATTNSEL_TESTS_DIR
#define ATTNSEL_TESTS_DIR "tests"
#endif
#ifndef ATTNSEL_CLI
#define ATTNSEL_CLI ""
#endif

namespace attnsel {
namespace {

using Args = std::vector<std::string>;
using json = nlohmann::json;

const std::string kFixtures = std::string(ATTNSEL_TESTS_DIR) + "/fixtures/check/";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The in-process checks were written against the v0.5.12 generation (data/engines/sglang/matrix-0.5.12.json, whose
// backends the seed documents use); SGLang main's data is tested by tests/cases/select-main.json.
std::shared_ptr<const Matrix> matrix() {
  auto m = builtin_matrix("sglang", parse_release("0.5.12"));
  EXPECT_TRUE(m.ok());
  return *m;
}

const Catalog& catalog() {
  static const std::shared_ptr<const Catalog> c = *builtin_catalog();
  return *c;
}

std::vector<CheckTarget> targets(const std::string& list, const std::optional<std::string>& cuda = std::nullopt) {
  auto t = resolve_check_targets(catalog(), list, cuda);
  EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().describe());
  return t.ok() ? *t : std::vector<CheckTarget>{};
}

LaunchCommand argv_command(const Args& argv) {
  auto cmd = launch_command_from_argv(argv);
  EXPECT_TRUE(cmd.ok()) << (cmd.ok() ? "" : cmd.error().describe());
  return cmd.ok() ? *cmd : LaunchCommand{};
}

// The matrix's findings alone: these tests pin them exactly; advisories (known bugs, whose findings
// change as the data grows) are tested in advisory_test and incidents_test.
CheckOptions without_advisories(CheckOptions o) {
  o.advisories = false;
  return o;
}

// One command-line command for one GPU.
CommandCheck check_one(const Args& argv, const std::string& gpu, const CheckOptions& options = {}) {
  auto results = check_command(matrix(), catalog(), argv_command(argv), targets(gpu), without_advisories(options));
  EXPECT_EQ(results.size(), 1u);
  return results.empty() ? CommandCheck{} : results.front();
}

std::vector<CommandCheck> check_file(const std::string& name, const std::string& gpus, const CheckOptions& options = {},
                                     std::shared_ptr<const Matrix> m = nullptr) {
  auto found = find_launch_commands(read_file(kFixtures + name), name);
  EXPECT_TRUE(found.ok()) << (found.ok() ? "" : found.error().describe());
  std::vector<CommandCheck> out;
  if (!found.ok()) return out;
  const auto t = targets(gpus);
  for (const auto& cmd : *found) {
    auto r = check_command(m ? m : matrix(), catalog(), cmd, t, without_advisories(options));
    out.insert(out.end(), r.begin(), r.end());
  }
  return out;
}

// The rule ids of the errors and warnings, the check's own first.
std::vector<std::string> rules(const CommandCheck& c) {
  std::vector<std::string> out;
  for (const CheckDiagnostic* d : c.all())
    if (d->diagnostic.severity != Severity::info) out.push_back(d->diagnostic.rule);
  return out;
}

const CheckDiagnostic* find(const CommandCheck& c, const std::string& rule) {
  for (const CheckDiagnostic* d : c.all())
    if (d->diagnostic.rule == rule) return d;
  return nullptr;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// "prefill/decode@page" of the plan's attention slot.
std::string plan_of(const CommandCheck& c) {
  if (!c.selection) return "none";
  const Selection& s = *c.selection;
  const std::string pre = s.backend(Phase::prefill) == kNoBackend ? "none" : s.name(s.backend(Phase::prefill));
  const std::string dec = s.backend(Phase::decode) == kNoBackend ? "none" : s.name(s.backend(Phase::decode));
  return (pre == dec ? pre : pre + "/" + dec) + "@" + std::to_string(s.page.page_size);
}

// ---- every sglang.launch_server example of seed 001, on the GPU its comment names ----

struct SeedVerdict {
  std::string gpu;
  Verdict verdict;
  std::vector<std::string> rules;  // errors and warnings
  std::string plan;
};

TEST(CheckSeed001, EveryExampleOnItsGpu) {
  const std::vector<SeedVerdict> want = {
      {"sm100", Verdict::clean, {}, "fa4/trtllm_mla@64"},  // FA4 prefill + TRTLLM MLA decode (Blackwell)
      {"sm80", Verdict::clean, {}, "flashinfer@1"},
      {"sm80", Verdict::clean, {}, "flashinfer@1"},
      {"sm90", Verdict::clean, {}, "fa3@1"},
      {"sm90", Verdict::clean, {}, "fa3@1"},
      {"sm80", Verdict::clean, {}, "triton@1"},
      {"sm80", Verdict::clean, {}, "triton@1"},
      {"sm90", Verdict::clean, {}, "flashmla@64"},
      {"sm90", Verdict::warning, {"flashmla-fp8-kv"}, "flashmla@64"},  // a documented caveat
      {"sm100", Verdict::clean, {}, "trtllm_mla@64"},
      {"sm100", Verdict::clean, {}, "trtllm_mla@64"},
      {"sm100", Verdict::clean, {}, "trtllm_mha@64"},  // Qwen3.5's vision tower: a note (feature.multimodal), not a warning
      {"sm90", Verdict::clean, {}, "fa3/trtllm_mha@64"},
      {"sm90", Verdict::warning, {"fa4-sm90-decode-slowdown"}, "fa4@128"},
      {"sm100", Verdict::clean, {}, "fa4/trtllm_mla@64"},
      {"sm100", Verdict::clean, {}, "cutlass_mla@128"},
      {"ascend", Verdict::clean, {}, "ascend@128"},
      {"xpu", Verdict::clean, {}, "intel_xpu@128"},
      {"gfx942", Verdict::warning, {"cell.requires-unknown"}, "wave@1"},  // wave_lang: not in SGLang's ROCm image
      {"sm90", Verdict::clean, {}, "flex_attention@1"},
      {"sm90", Verdict::clean, {}, "dual_chunk_flash_attn@1"},
      {"sm80", Verdict::clean, {}, "torch_native@1"},
  };
  const std::string text = read_file(kFixtures + "seed_001_examples.md");
  auto found = find_launch_commands(text, "seed_001_examples.md");
  ASSERT_TRUE(found.ok());
  ASSERT_EQ(found->size(), want.size());
  std::istringstream lines(text);
  std::vector<std::string> gpus;
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("<!-- gpu: ", 0) == 0) gpus.push_back(line.substr(10, line.find(' ', 10) - 10));
  ASSERT_EQ(gpus.size(), want.size());

  for (std::size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("seed example #" + std::to_string(i + 1) + " on " + gpus[i]);
    ASSERT_EQ(gpus[i], want[i].gpu);
    const auto results = check_command(matrix(), catalog(), (*found)[i], targets(gpus[i]), without_advisories({}));
    ASSERT_EQ(results.size(), 1u);
    const CommandCheck& c = results[0];
    EXPECT_EQ(c.verdict(), want[i].verdict);
    EXPECT_EQ(rules(c), want[i].rules);
    EXPECT_EQ(plan_of(c), want[i].plan);
    // Every model and name is known; the docs' `--tp` is argparse's prefix of --tp-size, which is noted.
    for (const CheckDiagnostic& f : c.findings) EXPECT_EQ(f.diagnostic.rule, "args.prefix") << f.diagnostic.message;
    EXPECT_FALSE(c.fails(false));
  }
}

TEST(CheckSeed001, StrictTurnsTheFlashMlaFp8CaveatIntoAnError) {
  CheckOptions strict;
  strict.strict = true;
  const Args cmd = {"python3", "-m", "sglang.launch_server", "--tp", "8", "--model", "deepseek-ai/DeepSeek-R1",
                    "--attention-backend", "flashmla", "--kv-cache-dtype", "fp8_e4m3", "--trust-remote-code"};
  const CommandCheck lax = check_one(cmd, "sm90");
  EXPECT_EQ(lax.verdict(), Verdict::warning);
  EXPECT_FALSE(lax.fails(false));
  EXPECT_TRUE(lax.fails(true));  // --strict: any warning fails
  const CommandCheck c = check_one(cmd, "sm90", strict);
  EXPECT_EQ(c.verdict(), Verdict::error);
  ASSERT_EQ(c.errors.size(), 1u);
  EXPECT_EQ(c.errors[0].diagnostic.rule, "flashmla-fp8-kv");
  EXPECT_EQ(c.errors[0].flag, "--kv-cache-dtype");
}

// ---- the wrong GPU for a command: messages a user understands without the docs ----

TEST(CheckWrongGpu, TrtllmMlaOnHopper) {
  const CommandCheck c = check_one({"python3", "-m", "sglang.launch_server", "--model-path", "deepseek-ai/DeepSeek-R1",
                                    "--attention-backend", "trtllm_mla"},
                                   "H100");
  EXPECT_EQ(c.verdict(), Verdict::error);
  ASSERT_EQ(c.errors.size(), 1u);
  const CheckDiagnostic& e = c.errors[0];
  EXPECT_EQ(e.diagnostic.rule, "cell.compute-capability");
  EXPECT_EQ(e.diagnostic.message,
            "TensorRT-LLM MLA needs compute capability 10.x, 11.x or 12.x; this GPU is sm90 (H100)");
  EXPECT_EQ(e.flag, "--attention-backend");
  EXPECT_EQ(e.value, "trtllm_mla");
  EXPECT_TRUE(contains(render_check_text({c}),
                       "--attention-backend trtllm_mla: TensorRT-LLM MLA needs compute capability 10.x, 11.x or 12.x; "
                       "this GPU is sm90 (H100)"));
  EXPECT_TRUE(contains(render_check_text({c}), "SGLang would not start as written"));
}

TEST(CheckWrongGpu, Fa4WithPageSize64OnHopper) {
  const CommandCheck c = check_one({"sglang", "serve", "Qwen/Qwen3-30B-A3B-Instruct-2507-FP8", "--attention-backend",
                                    "fa4", "--page-size", "64"},
                                   "sm90");
  EXPECT_EQ(c.verdict(), Verdict::error);
  const CheckDiagnostic* e = find(c, "cell.page-size");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->diagnostic.severity, Severity::error);
  EXPECT_EQ(e->diagnostic.message, "FlashAttention 4 runs only with page size 128; page size 64 was asked for");
  EXPECT_EQ(e->flag, "--page-size");
  EXPECT_EQ(e->value, "64");
}

TEST(CheckWrongGpu, CutlassMlaWithFp8OnAmpere) {
  const CommandCheck c = check_one({"python3", "-m", "sglang.launch_server", "--model-path", "deepseek-ai/DeepSeek-V3",
                                    "--attention-backend", "cutlass_mla", "--kv-cache-dtype", "fp8_e4m3"},
                                   "sm86");
  EXPECT_EQ(c.verdict(), Verdict::error);
  ASSERT_EQ(rules(c), (std::vector<std::string>{"cell.compute-capability"}));
  EXPECT_EQ(c.errors[0].diagnostic.message, "Cutlass MLA needs compute capability 10.x; this GPU is sm86 (Ampere)");
  EXPECT_EQ(c.errors[0].flag, "--attention-backend");
  // The same command is fine where Cutlass MLA runs, at the page size SGLang forces.
  const CommandCheck b200 = check_one({"python3", "-m", "sglang.launch_server", "--model-path",
                                       "deepseek-ai/DeepSeek-V3", "--attention-backend", "cutlass_mla",
                                       "--kv-cache-dtype", "fp8_e4m3"},
                                      "B200");
  EXPECT_EQ(b200.verdict(), Verdict::clean);
  EXPECT_EQ(plan_of(b200), "cutlass_mla@128");
}

TEST(CheckWrongGpu, Fa4OnHopperWithoutAPageSize) {
  // On SM90 FA4 needs page size 128, which SGLang v0.5.12 never sets: the command must say it.
  const auto results = check_command(matrix(), catalog(),
                                     argv_command({"sglang", "serve", "meta-llama/Meta-Llama-3.1-8B-Instruct",
                                                   "--attention-backend", "fa4"}),
                                     targets("sm90,sm100"), without_advisories({}));
  ASSERT_EQ(results.size(), 2u);
  const CheckDiagnostic* d = find(results[0], "check.page-size-unset");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->diagnostic.severity, Severity::error);
  EXPECT_EQ(d->diagnostic.message,
            "FlashAttention 4 runs only with page size 128 on sm90 (Hopper), and SGLang does not set it: without "
            "--page-size SGLang keeps its default, 1; add --page-size 128");
  EXPECT_EQ(d->flag, "--attention-backend");
  EXPECT_EQ(results[0].verdict(), Verdict::error);
  EXPECT_EQ(results[1].verdict(), Verdict::clean);
  // SM100 runs FA4 at any page size; v0.5.12 forces 128 only for --prefill-attention-backend fa4.
  EXPECT_EQ(plan_of(results[1]), "fa4@1");
  // With the page size given, Hopper is fine (but for the decode caveat).
  EXPECT_EQ(check_one({"sglang", "serve", "meta-llama/Meta-Llama-3.1-8B-Instruct", "--attention-backend", "fa4",
                       "--page-size", "128"},
                      "sm90")
                .verdict(),
            Verdict::warning);
}

// ---- several target GPUs ----

TEST(CheckTargets, AScriptFineOnOneGpuAndNotTheOther) {
  const auto results = check_command(matrix(), catalog(),
                                     argv_command({"python3", "-m", "sglang.launch_server", "--model-path",
                                                   "deepseek-ai/DeepSeek-V3", "--attention-backend", "trtllm_mla"}),
                                     targets("sm90,sm100"), without_advisories({}));
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].target.label, "sm90");
  EXPECT_EQ(results[0].verdict(), Verdict::error);
  EXPECT_EQ(results[1].target.label, "sm100");
  EXPECT_EQ(results[1].verdict(), Verdict::clean);
  EXPECT_EQ(plan_of(results[1]), "trtllm_mla@64");
  // And the other way round: fa3 runs on Hopper, not on Blackwell.
  const auto fa3 = check_command(matrix(), catalog(),
                                 argv_command({"--model", "meta-llama/Meta-Llama-3.1-8B-Instruct", "--attention-backend",
                                               "fa3", "--page-size", "16"}),
                                 targets("H100,B200"), without_advisories({}));
  ASSERT_EQ(fa3.size(), 2u);
  EXPECT_EQ(fa3[0].verdict(), Verdict::clean);
  EXPECT_EQ(fa3[1].verdict(), Verdict::error);
  EXPECT_EQ(rules(fa3[1]), (std::vector<std::string>{"cell.compute-capability"}));
}

TEST(CheckTargets, ListsPlatformsAndCuda) {
  const auto t = targets("sm90, H100 ,npu,ascend,xpu,cpu,rocm,sm90", std::string("12.4"));
  ASSERT_EQ(t.size(), 7u);  // the repeated sm90 once
  EXPECT_EQ(t[0].label, "sm90");
  EXPECT_EQ(t[0].device.platform, Platform::cuda);
  EXPECT_EQ(t[0].device.cuda, (CudaVersion{12, 4}));
  EXPECT_FALSE(t[0].device.cuda_assumed);
  EXPECT_EQ(t[1].label, "H100");
  EXPECT_EQ(t[1].device.name, "H100");
  EXPECT_EQ(t[2].device.platform, Platform::npu);
  EXPECT_EQ(t[3].label, "ascend");
  EXPECT_EQ(t[3].device.platform, Platform::npu);
  EXPECT_EQ(t[4].device.platform, Platform::xpu);
  EXPECT_EQ(t[5].device.platform, Platform::cpu);
  EXPECT_EQ(t[6].device.platform, Platform::rocm);  // --cuda does not apply to it
  EXPECT_FALSE(t[6].device.cuda);

  const auto assumed = targets("sm100");
  ASSERT_EQ(assumed.size(), 1u);
  EXPECT_TRUE(assumed[0].device.cuda_assumed);
}

TEST(CheckTargets, BadListsAreErrors) {
  EXPECT_FALSE(resolve_check_targets(catalog(), "", std::nullopt).ok());
  EXPECT_FALSE(resolve_check_targets(catalog(), "sm90,", std::nullopt).ok());
  EXPECT_FALSE(resolve_check_targets(catalog(), "sm90,,sm100", std::nullopt).ok());
  auto unknown = resolve_check_targets(catalog(), "sm90,H10", std::nullopt);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().where, "--gpu");
  EXPECT_FALSE(unknown.error().suggestion.empty());
  EXPECT_TRUE(contains(unknown.error().message, "npu (ascend), xpu, cpu, mps, rocm"));
  auto cuda = resolve_check_targets(catalog(), "sm90", std::string("12.x"));
  ASSERT_FALSE(cuda.ok());
  EXPECT_EQ(cuda.error().where, "--cuda");
}

TEST(CheckTargets, CudaTooOldForTheGpuIsRefused) {
  // No driver with CUDA 12.6 runs a B200: the target itself is wrong, not the command.
  auto t = resolve_check_targets(catalog(), "sm100", std::string("12.6"));
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find("needs CUDA 12.8 or newer"), std::string::npos) << t.error().describe();
}

TEST(CheckTargets, CudaTooOldForABackend) {
  const auto results = check_command(
      matrix(), catalog(), argv_command({"--model", "meta-llama/Meta-Llama-3.1-8B-Instruct", "--attention-backend", "trtllm_mha"}),
      targets("sm90", std::string("12.2")));
  ASSERT_EQ(results.size(), 1u);
  // Hopper refuses trtllm_mha prefill anyway (SGLang gates prefill to SM100), and CUDA 12.2 is too old.
  EXPECT_EQ(rules(results[0]), (std::vector<std::string>{"trtllm-mha-prefill-sm100", "trtllm-mha-cuda-sm90"}));
}

// ---- names SGLang would reject, and values attnsel cannot know ----

TEST(CheckNames, UnknownBackendIsAnErrorWithTheClosestName) {
  const CommandCheck c = check_one({"--model", "meta-llama/Meta-Llama-3.1-8B-Instruct", "--attention-backend=flashinfr"},
                                   "sm90");
  EXPECT_EQ(c.verdict(), Verdict::error);
  EXPECT_FALSE(c.selection);  // SGLang exits while parsing: nothing is selected
  ASSERT_EQ(c.findings.size(), 1u);
  // argparse's own words, from the launch grammar's choices, with the closest name.
  EXPECT_EQ(c.findings[0].diagnostic.rule, "args.choice");
  EXPECT_EQ(c.findings[0].flag, "--attention-backend");
  EXPECT_EQ(c.findings[0].value, "flashinfr");
  EXPECT_TRUE(contains(c.findings[0].diagnostic.message, "did you mean flashinfer?"));
  EXPECT_TRUE(contains(c.findings[0].diagnostic.message, "SGLang would exit: argument --attention-backend: invalid choice: 'flashinfr' (choose from"));
}

TEST(CheckNames, EverySlotIsCheckedAndEveryUnknownReported) {
  const CommandCheck c = check_one({"--model", "deepseek-ai/DeepSeek-V3.2", "--prefill-attention-backend", "dsa",
                                    "--decode-attention-backend", "tritn", "--nsa-prefill-backend", "flashmla_sparce",
                                    "--linear-attn-backend", "cutedls"},
                                   "sm90");
  std::vector<std::string> flags;
  for (const auto& d : c.findings)
    if (d.diagnostic.rule == "args.choice") flags.push_back(d.flag);
  EXPECT_EQ(flags, (Args{"--decode-attention-backend", "--nsa-prefill-backend", "--linear-attn-backend"}));
  ASSERT_EQ(rules(c), (std::vector<std::string>{"args.choice", "args.choice", "args.choice"}));
  EXPECT_TRUE(contains(c.findings[0].diagnostic.message, "did you mean triton?"));
  EXPECT_TRUE(contains(c.findings[1].diagnostic.message, "--nsa-prefill-backend is deprecated; use --dsa-prefill-backend"));
  EXPECT_EQ(c.findings[1].diagnostic.severity, Severity::info);
  EXPECT_TRUE(contains(c.findings[2].diagnostic.message, "did you mean flashmla_sparse?"));
  EXPECT_TRUE(contains(c.findings[3].diagnostic.message, "did you mean cutedsl?"));
}

TEST(CheckNames, BackendOfAnotherSlotSaysSo) {
  const CommandCheck c = check_one({"--attention-backend", "flashmla_kv"}, "sm90");
  ASSERT_NE(find(c, "args.choice"), nullptr);
  EXPECT_TRUE(contains(find(c, "args.choice")->diagnostic.message, "('flashmla_kv' is a DSA sparse backend)"));
}

// What SGLang accepts and attnsel has no data for is not judged, and says so: a warning of its own
// (select.not-judged; --strict fails on it), no plan with another backend in its place.
TEST(CheckNames, UpstreamBackendAttnselHasNoDataFor) {
  const CommandCheck c = check_one({"--model", "meta-llama/Meta-Llama-3.1-8B-Instruct", "--attention-backend", "hpc_ops"},
                                   "sm90");
  EXPECT_EQ(c.verdict(), Verdict::warning);
  EXPECT_FALSE(c.judged());
  EXPECT_FALSE(c.fails(false));
  EXPECT_TRUE(c.fails(true));
  EXPECT_FALSE(c.selection);
  const CheckDiagnostic* d = find(c, "select.not-judged");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->diagnostic.severity, Severity::warning);
  EXPECT_EQ(d->flag, "--attention-backend");
  EXPECT_EQ(d->value, "hpc_ops");
  EXPECT_TRUE(contains(d->diagnostic.message, "SGLang accepts this attention backend, but attnsel's matrix has no data for it"));
}

TEST(CheckNames, KvCacheDtypes) {
  const Args base = {"--model", "meta-llama/Meta-Llama-3.1-8B-Instruct", "--kv-cache-dtype"};
  auto with = [&](const std::string& dtype) {
    Args a = base;
    a.push_back(dtype);
    return check_one(a, "sm90");
  };
  // bfloat16 is SGLang's long spelling of bf16.
  const CommandCheck bf16 = with("bfloat16");
  EXPECT_EQ(bf16.verdict(), Verdict::clean);
  ASSERT_TRUE(bf16.selection);
  EXPECT_EQ(bf16.selection->request.kv_cache_dtype, KvCacheDtype::bf16);

  const CommandCheck typo = with("fp8_e4m");
  EXPECT_EQ(rules(typo), (std::vector<std::string>{"args.choice"}));
  EXPECT_TRUE(contains(typo.findings[0].diagnostic.message, "did you mean fp8_e4m3?"));
  EXPECT_EQ(typo.findings[0].flag, "--kv-cache-dtype");

  // attnsel knows fp16, SGLang's --kv-cache-dtype does not.
  EXPECT_EQ(rules(with("fp16")), (std::vector<std::string>{"args.choice"}));

  // Spellings the profile's vocabulary maps to nothing: accepted by SGLang, not judged by attnsel.
  for (const char* upstream : {"mxfp8", "nvfp4", "fp4_mx_block16"}) {
    const CommandCheck c = with(upstream);
    SCOPED_TRACE(upstream);
    EXPECT_EQ(c.verdict(), Verdict::warning);
    EXPECT_FALSE(c.judged());
    EXPECT_FALSE(c.selection);
    ASSERT_EQ(c.findings.size(), 1u);
    EXPECT_EQ(c.findings[0].diagnostic.rule, "select.not-judged");
    EXPECT_TRUE(contains(c.findings[0].diagnostic.message, "SGLang accepts this KV cache dtype, but attnsel's matrix has no data for it"));
  }
}

TEST(CheckNames, MalformedValues) {
  // argparse's type and choice checks, once each; then attnsel's own range checks.
  EXPECT_EQ(rules(check_one({"--page-size", "sixty-four"}, "sm90")), (std::vector<std::string>{"args.type"}));
  EXPECT_EQ(rules(check_one({"--page-size", "0"}, "sm90")), (std::vector<std::string>{"check.invalid-value"}));
  EXPECT_EQ(rules(check_one({"--speculative-attention-mode", "verify"}, "sm90")), (std::vector<std::string>{"args.choice"}));
  EXPECT_EQ(rules(check_one({"--speculative-algorithm", "EAGLE", "--speculative-eagle-topk", "x"}, "sm90")),
            (std::vector<std::string>{"args.type"}));
}

TEST(CheckNames, ValuesFromTheEnvironmentAreNotChecked) {
  const CommandCheck c = check_one({"python3 -m sglang.launch_server --model-path meta-llama/Meta-Llama-3.1-8B-Instruct "
                                    "--attention-backend \"$BACKEND\" --page-size ${PAGE}"},
                                   "sm90");
  EXPECT_EQ(c.verdict(), Verdict::clean);
  ASSERT_EQ(c.findings.size(), 2u);
  EXPECT_EQ(c.findings[0].diagnostic.rule, "check.from-environment");
  EXPECT_EQ(c.findings[0].flag, "--attention-backend");
  EXPECT_EQ(c.findings[0].value, "$BACKEND");
  EXPECT_TRUE(contains(c.findings[0].diagnostic.message, "not checked: value comes from the environment"));
  EXPECT_EQ(c.findings[1].flag, "--page-size");
  // Checked as if unset: SGLang's automatic choice at its default page size.
  EXPECT_EQ(plan_of(c), "fa3@1");
}

TEST(CheckNames, ArgumentsSglangRejectsAreErrorsOnTheirLine) {
  auto found = find_launch_commands("python3 -m sglang.launch_server \\\n  --attention_backend fa3 \\\n  --page-size\n",
                                    "run.sh");
  ASSERT_TRUE(found.ok());
  ASSERT_EQ(found->size(), 1u);
  const auto results = check_command(matrix(), catalog(), (*found)[0], targets("sm90"));
  const CommandCheck& c = results[0];
  EXPECT_FALSE(c.selection);
  ASSERT_EQ(rules(c), (std::vector<std::string>{"args.unknown", "args.missing-value", "args.required"}));
  EXPECT_EQ(c.findings[0].line, 2);
  EXPECT_TRUE(contains(c.findings[0].diagnostic.message, "unrecognized arguments: --attention_backend (its flags are spelled with dashes)"));
  EXPECT_TRUE(contains(c.findings[0].diagnostic.message, "did you mean --attention-backend?"));
  EXPECT_EQ(c.findings[1].line, 3);
  EXPECT_EQ(c.findings[1].diagnostic.message, "SGLang would exit: argument --page-size: expected one argument");
  EXPECT_EQ(c.findings[2].line, 1);
  EXPECT_EQ(c.findings[2].diagnostic.message, "SGLang would exit: the following arguments are required: --model-path");
}

// ---- the model ----

TEST(CheckModel, UnknownModelAssumesMhaAndSaysHowToStateTheKind) {
  const CommandCheck c = check_one({"--model-path", "my-org/private-model", "--attention-backend", "fa3"}, "sm90");
  EXPECT_EQ(c.verdict(), Verdict::warning);
  EXPECT_EQ(c.model.kind, AttentionKind::mha);
  const CheckDiagnostic* d = find(c, "check.model-assumed");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->diagnostic.severity, Severity::warning);
  EXPECT_EQ(d->flag, "--model-path");
  EXPECT_EQ(d->value, "my-org/private-model");
  EXPECT_EQ(d->diagnostic.message,
            "this model is neither in attnsel's model table nor a local config.json or model directory; "
            "checked as kind mha (standard multi-head attention), the default, with no sliding window, attention sinks "
            "or fixed head size; attnsel reads the model's config.json when the command names a local model directory "
            "inside the checked files, or a Hugging Face id downloaded to the local cache (HF_HUB_CACHE or HF_HOME); "
            "else state the kind with attnsel check --model-kind mha|mla|gdn|dsa");
}

// ---- the environment table and models as deployments name them (tests/cases/check_env_models.json) ----

TEST(CheckEnvModels, Table) {
  std::ifstream in(std::string(ATTNSEL_TESTS_DIR) + "/cases/check_env_models.json");
  ASSERT_TRUE(in.good());
  std::ostringstream text;
  text << in.rdbuf();
  const nlohmann::json cases = nlohmann::json::parse(text.str())["cases"];
  ASSERT_GE(cases.size(), 15u);
  for (const auto& c : cases) {
    const std::string label = c["label"].get<std::string>();
    auto m = builtin_matrix(c["engine"].get<std::string>(), std::nullopt);
    ASSERT_TRUE(m.ok()) << label;
    CheckInput input;
    input.text = c["script"].get<std::string>();
    input.file_name = "launch.sh";
    CheckRun run;
    run.gpus = c["gpu"].get<std::string>();
    if (c["release"].is_string()) run.release = c["release"].get<std::string>();
    run.options.advisories = false;
    auto report = check_input(*m, catalog(), input, run);
    ASSERT_TRUE(report.ok()) << label << ": " << report.error().describe();
    ASSERT_EQ(report->checks.size(), 1u) << label;
    const CommandCheck& check = report->checks.front();
    std::set<std::string> got;
    for (const std::string& r : rules(check)) got.insert(r);
    std::set<std::string> want;
    for (const auto& r : c["expect"]) want.insert(r.get<std::string>());
    EXPECT_EQ(got, want) << label;
    for (const auto& r : c.value("absent", nlohmann::json::array()))
      EXPECT_EQ(find(check, r.get<std::string>()), nullptr) << label << ": " << r;
    EXPECT_EQ(check.model.family, c["model"].get<std::string>()) << label << " (" << check.model.origin << ")";
  }
}

TEST(CheckEnvModels, TheRuleMessageNamesTheVariableAndTheValue) {
  auto m = builtin_matrix("sglang", std::nullopt);
  ASSERT_TRUE(m.ok());
  CheckInput input;
  input.text = "export SGLANG_ENABLE_SPEC_V2=1\npython -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct "
               "--speculative-algorithm EAGLE3 --speculative-draft-model-path x/y --speculative-num-steps 5 \\\n"
               "  --speculative-eagle-topk 4 --speculative-num-draft-tokens 8\n";
  input.file_name = "launch.sh";
  CheckRun run;
  run.gpus = "sm90";
  run.options.advisories = false;
  auto report = check_input(*m, catalog(), input, run);
  ASSERT_TRUE(report.ok());
  const CheckDiagnostic* d = find(report->checks.front(), "spec-v2-topk");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->diagnostic.severity, Severity::error);
  EXPECT_TRUE(contains(d->diagnostic.message, "SGLANG_ENABLE_SPEC_V2=1 runs speculative decoding v2")) << d->diagnostic.message;
  EXPECT_TRUE(contains(d->diagnostic.message, "--speculative-eagle-topk 4 fails")) << d->diagnostic.message;
  EXPECT_EQ(d->flag, "--speculative-eagle-topk");  // located on the flag's line, not the export
  EXPECT_EQ(d->line, 3);
  EXPECT_TRUE(contains(d->diagnostic.source, "attention_backend.md"));
}

// A file naming releases of two engines (an SGLang image tag, a vLLM image tag) judges each engine's
// commands with its own release: the vLLM command is not left unjudged for want of a vLLM 0.5.4.
TEST(CheckRelease, EachEngineRunsTheReleaseTheFileNamesForIt) {
  const std::vector<ContextHint> hints = {
      {"0.5.4", "image tag", "lmsysorg/sglang:v0.5.4", "sglang", 1},
      {"v0.13", "image tag", "vllm/vllm-openai:v0.13", "vllm", 2},
      {"0.14.0", "pinned install", "vllm==0.14.0", "vllm", 3},  // the first vLLM release wins
      {"H100", "node label", "H100", "", 4}};
  const std::vector<ContextHint> others = releases_of_other_engines(hints, "sglang");
  ASSERT_EQ(others.size(), 1u);
  EXPECT_EQ(others[0].engine, "vllm");
  EXPECT_EQ(others[0].value, "0.13.0");
  EXPECT_EQ(others[0].line, 2);

  auto m = builtin_matrix("sglang", std::nullopt);
  ASSERT_TRUE(m.ok());
  CheckInput input;
  input.text = "docker run vllm/vllm-openai:v0.13.0 --model Qwen/Qwen3-8B\n"
               "docker run lmsysorg/sglang:v0.5.4 python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B\n";
  input.file_name = "run.sh";
  CheckRun run;
  run.gpus = "sm90";
  run.release_from_input = true;
  auto report = check_input(*m, catalog(), input, run);
  ASSERT_TRUE(report.ok()) << report.error().describe();
  ASSERT_EQ(report->checks.size(), 2u);
  EXPECT_EQ(report->release, "0.5.4");
  for (const CommandCheck& c : report->checks) {
    EXPECT_TRUE(c.judged()) << c.command.launcher;
    EXPECT_EQ(find(c, "check.not-modelled"), nullptr) << c.command.launcher;
  }
  EXPECT_EQ(report->checks[0].command.engine, "vllm");
  EXPECT_TRUE(report->checks[0].selection && report->checks[0].selection->ok());
  EXPECT_TRUE(std::any_of(report->remarks.begin(), report->remarks.end(), [](const auto& r) {
    return contains(r.message, "vllm release 0.13.0 from run.sh:1");
  }));
}

TEST(CheckEnvModels, UnknownModelWarningSaysHowToGiveTheConfig) {
  const CommandCheck c = check_one({"--model-path", "my-org/private-model", "--attention-backend", "fa3"}, "sm90");
  const CheckDiagnostic* d = find(c, "check.model-assumed");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->diagnostic.severity, Severity::warning);
  EXPECT_TRUE(contains(d->diagnostic.message, "with no sliding window, attention sinks or fixed head size"));
  EXPECT_TRUE(contains(d->diagnostic.message, "Hugging Face id downloaded to the local cache"));
  EXPECT_TRUE(contains(d->diagnostic.message, "--model-kind"));
}

TEST(CheckModel, TheBackendsImplyTheKind) {
  const CommandCheck c = check_one({"--model-path", "my-org/private-mla", "--attention-backend", "trtllm_mla"}, "sm100");
  EXPECT_EQ(c.model.kind, AttentionKind::mla);
  EXPECT_EQ(rules(c), (std::vector<std::string>{"check.model-assumed"}));  // the unknown model, a warning
  EXPECT_TRUE(contains(find(c, "check.model-assumed")->diagnostic.message,
                       "checked as kind mla (multi-head latent attention) because trtllm_mla runs only mla models"));
}

TEST(CheckModel, ModelKindOptionWins) {
  CheckOptions dsa;
  dsa.model_kind = AttentionKind::dsa;
  const CommandCheck c = check_one({"--model-path", "my-org/private", "--attention-backend", "trtllm_mla"}, "sm100", dsa);
  EXPECT_EQ(c.model.kind, AttentionKind::dsa);
  EXPECT_TRUE(contains(find(c, "check.model-assumed")->diagnostic.message, "as given with --model-kind"));
  EXPECT_FALSE(contains(find(c, "check.model-assumed")->diagnostic.message, "state the kind"));
  // A known model keeps its own kind.
  EXPECT_EQ(check_one({"--model", "deepseek-ai/DeepSeek-R1"}, "sm90", dsa).model.kind, AttentionKind::mla);
  // In the bare-flags form --model-kind is attnsel's own flag.
  EXPECT_EQ(check_one({"--model-kind", "gdn", "--attention-backend", "triton"}, "sm90").model.kind, AttentionKind::gdn);
  EXPECT_EQ(rules(check_one({"--model-kind", "moe"}, "sm90")), (std::vector<std::string>{"check.model-kind"}));
}

TEST(CheckModel, LocalConfigFilesAndDirectories) {
  const std::string configs = std::string(ATTNSEL_TESTS_DIR) + "/fixtures/configs/";
  // Model files are read through the caller's reader, here one confined to the configs.
  CheckOptions within;
  within.read_config = config_reader_within({configs});
  EXPECT_EQ(check_one({"--model-path", configs + "mla-unknown-arch.json"}, "sm90", within).model.kind, AttentionKind::mla);
  const CommandCheck gdn = check_one({"--model-path", configs + "qwen3-next-dir"}, "sm100", within);
  EXPECT_EQ(gdn.model.kind, AttentionKind::gdn);
  EXPECT_EQ(find(gdn, "check.model-assumed"), nullptr);
  const CommandCheck bad = check_one({"--model-path", configs + "malformed.json"}, "sm90", within);
  EXPECT_EQ(rules(bad), (std::vector<std::string>{"check.model-config"}));
  // Without a reader nothing is opened: the model is assumed, as one attnsel cannot look up (a warning).
  const CommandCheck unread = check_one({"--model-path", configs + "malformed.json"}, "sm90");
  EXPECT_EQ(rules(unread), (std::vector<std::string>{"check.model-assumed"}));
}

TEST(CheckModel, ModelPathsOutsideTheCheckedTreeAreNeverOpened) {
  const std::string fixtures = std::string(ATTNSEL_TESTS_DIR) + "/fixtures/";
  CheckOptions within;
  within.read_config = config_reader_within({fixtures + "check/launch.sh"});  // the tree: fixtures/check
  for (const std::string& outside : {fixtures + "configs/malformed.json", fixtures + "configs/absent-dir",
                                     std::string("/etc/passwd"), fixtures + "check/../configs/malformed.json"}) {
    SCOPED_TRACE(outside);
    const CommandCheck c = check_one({"--model-path", outside}, "sm90", within);
    // The same warning whether it exists or not, and never what the file holds.
    EXPECT_EQ(rules(c), (std::vector<std::string>{"check.model-assumed"}));
    ASSERT_NE(find(c, "check.model-assumed"), nullptr);
    EXPECT_TRUE(contains(find(c, "check.model-assumed")->diagnostic.message, "outside the checked files' directories"));
  }
  // A directory named like a family's checkpoints resolves by its name, still without being opened.
  const CommandCheck named = check_one({"--model-path", fixtures + "configs/qwen3-next-dir"}, "sm90", within);
  EXPECT_EQ(named.model.family, "qwen3-next");
  EXPECT_TRUE(contains(named.model.origin, "checkpoint names")) << named.model.origin;
}

TEST(CheckModel, ParseErrorsNeverQuoteTheFile) {
  const std::string configs = std::string(ATTNSEL_TESTS_DIR) + "/fixtures/";
  CheckOptions within;
  within.read_config = config_reader_within({configs + "hostile/inside/bad-model-config.sh"});
  const CommandCheck c =
      check_one({"--model-path", configs + "hostile/inside/badmodel"}, "sm90", within);
  ASSERT_NE(find(c, "check.model-config"), nullptr);
  EXPECT_FALSE(contains(find(c, "check.model-config")->diagnostic.message, "ATTNSEL-INSIDE-TOKEN"));
  EXPECT_TRUE(contains(find(c, "check.model-config")->diagnostic.message, "not valid JSON"));
}

// The launcher's engine judges it: `sglang generate` is the diffusion profile, built in.
// Deployment files name models by path and variant; strict CI may refuse a model attnsel cannot resolve.
TEST(CheckModel, VariantsResolveAndUnknownModelsCanBeErrors) {
  const CommandCheck fp8 = check_one({"--model-path", "/models/DeepSeek-R1-0528", "--attention-backend", "flashmla"}, "sm90");
  EXPECT_EQ(fp8.model.kind, AttentionKind::mla);
  ASSERT_NE(find(fp8, "check.model-variant"), nullptr);
  EXPECT_EQ(find(fp8, "check.model-assumed"), nullptr);

  CheckOptions strict_model;
  strict_model.unknown_model_error = true;
  const auto cmd = launch_command_from_argv({"--model-path", "my-org/private-model", "--attention-backend", "fa3"});
  ASSERT_TRUE(cmd.ok());
  const auto results = check_command(matrix(), catalog(), *cmd, targets("sm90"), strict_model);
  EXPECT_EQ(results[0].verdict(), Verdict::error);
  EXPECT_EQ(find(results[0], "check.model-assumed")->diagnostic.severity, Severity::error);
}

// `sglang serve --model-type diffusion` hands the command to the diffusion profile; --model-type
// is the serve front end's own flag, not an unknown one.
TEST(CheckModel, ServeModelTypeHandsOffToTheDiffusionProfile) {
  const CommandCheck d = check_one({"sglang", "serve", "black-forest-labs/FLUX.1-dev", "--model-type", "diffusion",
                                    "--attention-backend", "fa"},
                                   "sm90");
  ASSERT_TRUE(d.selection);
  EXPECT_EQ(d.selection->matrix->info().engine, "sglang-diffusion");
  EXPECT_EQ(d.verdict(), Verdict::clean);
  const CommandCheck llm = check_one({"sglang", "serve", "meta-llama/Meta-Llama-3.1-8B-Instruct", "--model-type", "llm"},
                                     "sm90");
  EXPECT_EQ(llm.verdict(), Verdict::clean);
  ASSERT_TRUE(llm.selection);
  EXPECT_NE(llm.selection->matrix->info().engine, "sglang-diffusion");
}

TEST(CheckModel, DiffusionIsJudgedWithItsOwnProfile) {
  const CommandCheck c = check_one({"sglang", "generate", "--model-path", "black-forest-labs/FLUX.1-dev",
                                    "--attention-backend", "fa"},
                                   "sm90");
  EXPECT_EQ(c.verdict(), Verdict::clean);
  ASSERT_TRUE(c.selection);
  EXPECT_EQ(c.selection->matrix->info().engine, "sglang-diffusion");
  EXPECT_TRUE(c.findings.empty());
}

// ---- speculative decoding, determinism, the radix cache ----

TEST(CheckSpeculative, SglangsDefaultTopkDependsOnTheArchitecture) {
  // Llama: SGLang picks (steps, topk, draft tokens) = (5, 4, 8).
  const CommandCheck llama = check_one({"--model", "meta-llama/Meta-Llama-3.1-8B-Instruct", "--speculative-algorithm",
                                        "EAGLE", "--speculative-draft-model-path", "x/eagle"},
                                       "sm90");
  ASSERT_TRUE(llama.selection);
  EXPECT_EQ(llama.selection->request.speculative_topk, 4);
  EXPECT_TRUE(contains(find(llama, "check.speculative-topk")->diagnostic.message,
                       "SGLang picks topk 4 for LlamaForCausalLM"));
  // Every other architecture (DeepSeek here) gets topk 1; so does STANDALONE.
  EXPECT_EQ(check_one({"--model", "deepseek-ai/DeepSeek-R1", "--speculative-algorithm", "nextn"}, "sm90")
                .selection->request.speculative_topk,
            1);
  EXPECT_EQ(check_one({"--model", "meta-llama/Meta-Llama-3.1-8B-Instruct", "--speculative-algorithm", "STANDALONE"},
                      "sm90")
                .selection->request.speculative_topk,
            1);
  // The given topk is used as it is.
  EXPECT_EQ(check_one({"--model", "deepseek-ai/DeepSeek-R1", "--speculative-algorithm", "EAGLE",
                       "--speculative-eagle-topk", "2"},
                      "sm90")
                .selection->request.speculative_topk,
            2);
}

TEST(CheckSpeculative, TheDefaultTopkMeetsTheBackend) {
  // trtllm_mha verifies topk 1 only; Llama's default topk 4 fails, located on --speculative-algorithm.
  const CommandCheck c = check_one({"--model", "meta-llama/Meta-Llama-3.1-8B-Instruct", "--attention-backend",
                                    "trtllm_mha", "--speculative-algorithm", "EAGLE3"},
                                   "sm100");
  EXPECT_EQ(c.verdict(), Verdict::error);
  const CheckDiagnostic* d = find(c, "cell.speculative");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->flag, "--speculative-algorithm");
}

TEST(CheckSpeculative, PartialParametersFailInSglang) {
  const CommandCheck c = check_one({"--model", "deepseek-ai/DeepSeek-R1", "--speculative-algorithm", "EAGLE",
                                    "--speculative-num-steps", "3"},
                                   "sm90");
  EXPECT_EQ(rules(c), (std::vector<std::string>{"check.speculative"}));
  EXPECT_EQ(c.findings[0].flag, "--speculative-num-steps");
}

TEST(CheckSpeculative, OtherAlgorithmsAndTopkAloneAreNotModelled) {
  const CommandCheck ngram = check_one({"--model", "meta-llama/Meta-Llama-3.1-8B-Instruct", "--speculative-algorithm",
                                        "NGRAM"},
                                       "sm90");
  ASSERT_TRUE(ngram.selection);
  EXPECT_EQ(ngram.selection->request.speculative_topk, 0);
  EXPECT_TRUE(contains(find(ngram, "check.speculative")->diagnostic.message, "not modelled"));
  const CommandCheck alone = check_one({"--speculative-eagle-topk", "4"}, "sm90");
  EXPECT_EQ(alone.selection->request.speculative_topk, 0);
  EXPECT_TRUE(contains(find(alone, "check.speculative")->diagnostic.message, "no effect without --speculative-algorithm"));
}

TEST(CheckSpeculative, AttentionModeDeterminismAndRadixCacheReachTheRequest) {
  const CommandCheck c = check_one({"--model", "deepseek-ai/DeepSeek-R1", "--speculative-algorithm", "EAGLE",
                                    "--speculative-attention-mode", "decode", "--disable-radix-cache"},
                                   "sm90");
  ASSERT_TRUE(c.selection);
  EXPECT_EQ(c.selection->request.speculative_attention_mode, Phase::decode);
  EXPECT_TRUE(c.selection->request.disable_radix_cache);
  EXPECT_FALSE(c.selection->radix_cache);

  auto found = find_launch_commands(
      "sglang serve deepseek-ai/DeepSeek-R1 \\\n  --attention-backend flashmla \\\n  --enable-deterministic-inference\n",
      "run.sh");
  ASSERT_TRUE(found.ok());
  const auto det = check_command(matrix(), catalog(), (*found)[0], targets("sm90"));
  ASSERT_TRUE(det[0].selection);
  EXPECT_TRUE(det[0].selection->request.deterministic);
  const CheckDiagnostic* d = find(det[0], "deterministic-backends");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->flag, "--enable-deterministic-inference");
  EXPECT_EQ(d->line, 3);
}

TEST(CheckFlags, PassedOverKnowingly) {
  const CommandCheck c = check_one({"--model", "meta-llama/Meta-Llama-3.1-8B-Instruct", "--tp", "8",
                                    "--mm-attention-backend", "fa3", "--trust-remote-code"},
                                   "sm90");
  EXPECT_EQ(c.verdict(), Verdict::clean);
  EXPECT_EQ(c.passed_over, (Args{"--trust-remote-code", "--tp", "--mm-attention-backend"}));
}

// ---- the file forms: each finding with its file and line ----

// "line gpu severity rule flag" for every error and warning.
std::vector<std::string> located(const std::vector<CommandCheck>& checks) {
  std::vector<std::string> out;
  for (const CommandCheck& c : checks)
    for (const CheckDiagnostic* d : c.all())
      if (d->diagnostic.severity != Severity::info)
        out.push_back(c.command.file + ":" + std::to_string(d->line) + " " + c.target.label + " " +
                      std::string(name_of(d->diagnostic.severity)) + " " + d->diagnostic.rule + " " + d->flag);
  return out;
}

const char* const kFleet = "sm86,sm90,sm100";

TEST(CheckFiles, ShellScript) {
  EXPECT_EQ(located(check_file("launch.sh", kFleet)),
            (Args{
                "launch.sh:11 sm86 error cell.compute-capability --attention-backend",
                "launch.sh:11 sm90 error cell.compute-capability --attention-backend",
                "launch.sh:15 sm86 error cell.compute-capability --attention-backend",
                "launch.sh:15 sm90 error cell.compute-capability --attention-backend",
                "launch.sh:20 sm86 error cell.compute-capability --attention-backend",
                "launch.sh:21 sm86 error cell.page-size --page-size",
                "launch.sh:21 sm90 error cell.page-size --page-size",
                "launch.sh:20 sm90 warning fa4-sm90-decode-slowdown --attention-backend",
                "launch.sh:24 sm86 error cell.compute-capability --attention-backend",
                "launch.sh:24 sm90 error cell.compute-capability --attention-backend",
                "launch.sh:27 sm86 error args.choice --attention-backend",
                "launch.sh:27 sm90 error args.choice --attention-backend",
                "launch.sh:27 sm100 error args.choice --attention-backend",
                "launch.sh:39 sm86 error cell.compute-capability --attention-backend",
                "launch.sh:39 sm86 warning flashmla-fp8-kv --kv-cache-dtype",
                "launch.sh:39 sm90 warning flashmla-fp8-kv --kv-cache-dtype",
                "launch.sh:39 sm100 warning flashmla-fp8-kv --kv-cache-dtype",
            }));
}

TEST(CheckFiles, Dockerfile) {
  EXPECT_EQ(located(check_file("Dockerfile", kFleet)),
            (Args{
                "Dockerfile:16 sm100 error cell.compute-capability --attention-backend",  // fa3 is not for Blackwell
                "Dockerfile:22 sm86 error cell.compute-capability --attention-backend",
                "Dockerfile:22 sm86 error cell.page-size --page-size",
                "Dockerfile:22 sm90 error cell.page-size --page-size",
                "Dockerfile:22 sm90 warning fa4-sm90-decode-slowdown --attention-backend",
                "Dockerfile:26 sm86 error args.choice --attention-backend",
                "Dockerfile:26 sm90 error args.choice --attention-backend",
                "Dockerfile:26 sm100 error args.choice --attention-backend",
                "Dockerfile:30 sm86 error cell.compute-capability --attention-backend",
                "Dockerfile:30 sm90 error cell.compute-capability --attention-backend",
            }));
}

TEST(CheckFiles, Compose) {
  if (!yaml_input_supported()) GTEST_SKIP() << "built without yaml-cpp";
  EXPECT_EQ(located(check_file("docker-compose.yml", kFleet)),
            (Args{
                "docker-compose.yml:11 sm86 error cell.compute-capability --attention-backend",
                "docker-compose.yml:11 sm90 error cell.compute-capability --attention-backend",
                "docker-compose.yml:22 sm86 error cell.compute-capability --attention-backend",
                "docker-compose.yml:24 sm86 error cell.page-size --page-size",
                "docker-compose.yml:24 sm90 error cell.page-size --page-size",
                "docker-compose.yml:22 sm90 warning fa4-sm90-decode-slowdown --attention-backend",
                "docker-compose.yml:30 sm86 error cell.compute-capability --attention-backend",
                "docker-compose.yml:30 sm90 error cell.compute-capability --attention-backend",
                "docker-compose.yml:34 sm86 error args.choice --attention-backend",
                "docker-compose.yml:34 sm90 error args.choice --attention-backend",
                "docker-compose.yml:34 sm100 error args.choice --attention-backend",
            }));
}

TEST(CheckFiles, KubernetesManifest) {
  if (!yaml_input_supported()) GTEST_SKIP() << "built without yaml-cpp";
  EXPECT_EQ(located(check_file("deployment.yaml", kFleet)),
            (Args{
                "deployment.yaml:27 sm86 error cell.compute-capability --attention-backend",
                "deployment.yaml:27 sm90 error cell.compute-capability --attention-backend",
                "deployment.yaml:37 sm86 error cell.compute-capability --attention-backend",
                "deployment.yaml:37 sm90 error cell.compute-capability --attention-backend",
                "deployment.yaml:54 sm86 error args.choice --attention-backend",
                "deployment.yaml:54 sm90 error args.choice --attention-backend",
                "deployment.yaml:54 sm100 error args.choice --attention-backend",
            }));
}

TEST(CheckFiles, Markdown) {
  EXPECT_EQ(located(check_file("README.md", kFleet)),
            (Args{
                "README.md:8 sm86 error cell.compute-capability --attention-backend",
                "README.md:8 sm90 error cell.compute-capability --attention-backend",
                "README.md:15 sm86 error cell.compute-capability --attention-backend",
                "README.md:15 sm90 error cell.compute-capability --attention-backend",
                "README.md:23 sm86 error cell.compute-capability --attention-backend",
                "README.md:23 sm86 error cell.page-size --page-size",
                "README.md:23 sm90 error cell.page-size --page-size",
                "README.md:23 sm90 warning fa4-sm90-decode-slowdown --attention-backend",
                "README.md:27 sm86 error args.choice --attention-backend",
                "README.md:27 sm90 error args.choice --attention-backend",
                "README.md:27 sm100 error args.choice --attention-backend",
                // The ```python block's command names no model either.
                "README.md:32 sm86 error args.required --model-path",
                "README.md:32 sm90 error args.required --model-path",
                "README.md:32 sm100 error args.required --model-path",
                // The Dockerfile's CMD names no model: SGLang requires --model-path.
                "README.md:44 sm86 error args.required --model-path",
                "README.md:44 sm90 error args.required --model-path",
                "README.md:44 sm100 error args.required --model-path",
            }));
}

TEST(CheckFiles, TheFixturesSayWhereEachCommandIsGood) {
  // The comment above each command in launch.sh names the GPU it is good or bad on.
  const auto checks = check_file("launch.sh", "sm90,sm100");
  std::map<std::pair<int, std::string>, Verdict> verdicts;
  for (const auto& c : checks) verdicts[{c.command.line, c.target.label}] = c.verdict();
  EXPECT_EQ((verdicts[{8, "sm100"}]), Verdict::clean);  // good on sm100
  EXPECT_EQ((verdicts[{15, "sm90"}]), Verdict::error);  // bad on sm90
  EXPECT_EQ((verdicts[{18, "sm90"}]), Verdict::error);  // FA4 at page 64 on Hopper
  EXPECT_EQ((verdicts[{27, "sm100"}]), Verdict::error);  // a typo is bad anywhere
  EXPECT_EQ((verdicts[{38, "sm90"}]), Verdict::warning);  // runs, with the FlashMLA FP8 caveat
  EXPECT_EQ((verdicts[{42, "sm90"}]), Verdict::clean);
}

// ---- rendering ----

TEST(CheckRender, GithubEscapes) {
  EXPECT_EQ(github_escape_data("50% of a\r\nb: c, d"), "50%25 of a%0D%0Ab: c, d");
  EXPECT_EQ(github_escape_property("dir:a,b%\n"), "dir%3Aa%2Cb%25%0A");
}

TEST(CheckRender, GithubAnnotationsForAScript) {
  const std::string got = render_check_github(check_file("launch.sh", "sm90,sm100"));
  const std::string model_note = ", with no sliding window, attention sinks or fixed head size; state the kind with attnsel check "
                                 "--model-kind mha|mla|gdn|dsa";
  const std::string want =
      // MODEL=${MODEL:-deepseek-ai/DeepSeek-R1} in the script: its default is the model judged (lines 9, 38).
      // Each error on a flag the command's fix changes ends with the fix.
      "::error file=launch.sh,line=11,title=attnsel cell.compute-capability::[sm90] --attention-backend trtllm_mla: "
      "TensorRT-LLM MLA needs compute capability 10.x, 11.x or 12.x; this GPU is sm90 (Hopper) (fix: "
      "--attention-backend trtllm_mla -> flashinfer)\n"
      "::error file=launch.sh,line=15,title=attnsel cell.compute-capability::[sm90] --attention-backend trtllm_mla: "
      "TensorRT-LLM MLA needs compute capability 10.x, 11.x or 12.x; this GPU is sm90 (Hopper) (fix: "
      "--attention-backend trtllm_mla -> flashinfer)\n"
      "::error file=launch.sh,line=21,title=attnsel cell.page-size::[sm90] --page-size 64: FlashAttention 4 runs only "
      "with page size 128; page size 64 was asked for\n"
      "::warning file=launch.sh,line=20,title=attnsel fa4-sm90-decode-slowdown::[sm90] --attention-backend fa4: "
      "FlashAttention 4 decode on SM90 slows down as sequences grow (no split-KV): at batch 1 vs FA3 on H100 about "
      "-10%25 at 2K tokens, -18%25 at 4K, -31%25 at 8K, -49%25 at 16K; at batch 8 about -2%25 at 2K and -8%25 at 4K. "
      "Blackwell is not affected; consider --decode-attention-backend fa3\n"
      "::error file=launch.sh,line=24,title=attnsel cell.compute-capability::[sm90] --attention-backend cutlass_mla: "
      "Cutlass MLA needs compute capability 10.x; this GPU is sm90 (Hopper) (fix: --attention-backend cutlass_mla -> "
      "flashinfer)\n"
      "::error file=launch.sh,line=27,title=attnsel args.choice::--attention-backend flashinfr: SGLang would exit: "
      "argument --attention-backend: invalid choice: 'flashinfr' (choose from 'triton', 'torch_native', "
      "'flex_attention', 'dsa', 'nsa', 'dsv4', 'compressed', 'cutlass_mla', 'fa3', 'fa4', 'flashinfer', 'flashmla', "
      "'trtllm_mla', 'cutedsl_mla', 'tokenspeed_mla', 'trtllm_mha', 'dual_chunk_flash_attn', 'hpc_ops', "
      "'minicpm_flashattn', 'minicpm_flashinfer', 'aiter', 'wave', 'intel_amx', 'ascend', 'intel_xpu') (did you mean "
      "flashinfer?) (fix: --attention-backend flashinfr -> flashinfer)\n"
      "::warning file=launch.sh,line=39,title=attnsel flashmla-fp8-kv::--kv-cache-dtype fp8_e4m3: FlashMLA with an FP8 "
      "KV cache is documented as not working (sgl-project/sglang#8856); use a bf16 KV cache or another backend "
      "(trtllm_mla, cutlass_mla)\n"
      "::notice file=launch.sh,line=42,title=attnsel check.model-assumed::--model-path '$(cat /models/name)': the model "
      "comes from a command substitution when the command runs, so attnsel cannot look it up; checked as kind mha "
      "(standard multi-head attention), the default" + model_note + "\n"
      // Commands, not command x GPU pairs: 27 fails on both GPUs and is one failing command.
      "attnsel: 8 commands checked for sm90, sm100: 5 failing, 1 with warnings, 2 clean; 5 errors, 2 warnings, 1 note\n";
  EXPECT_EQ(got, want);
}

TEST(CheckRender, GithubWithoutAFileAndWithEscapes) {
  const CommandCheck c = check_one({"--attention-backend", "trtllm_mla", "--model", "deepseek-ai/DeepSeek-R1"}, "sm90");
  EXPECT_EQ(render_check_github({c}),
            "::error title=attnsel cell.compute-capability::--attention-backend trtllm_mla: TensorRT-LLM MLA needs "
            "compute capability 10.x, 11.x or 12.x; this GPU is sm90 (Hopper) (fix: --attention-backend trtllm_mla -> "
            "flashinfer)\n"
            "attnsel: 1 command checked for sm90: 1 failing, 0 with warnings, 0 clean; 1 error, 0 warnings, 0 notes\n");
  // A file name with a colon and a comma stays one property.
  CommandCheck odd = c;
  odd.command.file = "deploy/a:b,c.sh";
  odd.command.line = 3;
  odd.errors[0].line = 4;
  EXPECT_EQ(render_check_github({odd}).rfind(
                "::error file=deploy/a%3Ab%2Cc.sh,line=4,title=attnsel cell.compute-capability::--attention-backend", 0),
            0u);
}

TEST(CheckRender, JsonOneObjectPerCommandAndGpu) {
  const auto checks = check_file("launch.sh", "sm90,sm100");
  const json doc = json::parse(render_check_json(checks));
  ASSERT_TRUE(doc.is_object());
  EXPECT_EQ(doc["schema_version"], 1);
  EXPECT_EQ(doc["kind"], "check");
  EXPECT_EQ(doc["ok"], false);
  const json& j = doc["results"];
  ASSERT_EQ(j.size(), 16u);  // 8 commands (7 SGLang, 1 vLLM) x 2 GPUs
  const json& sum = doc["summary"];
  EXPECT_EQ(sum["commands"], 8);
  EXPECT_EQ(sum["results"], 16);
  EXPECT_EQ(sum["commands_failing"], 5);  // commands, not the 6 failing command x GPU pairs
  EXPECT_EQ(sum["commands_with_warnings"], 1);
  EXPECT_EQ(sum["commands_clean"], 2);
  EXPECT_EQ(sum["files"], 1);
  EXPECT_EQ(sum["gpus"], (Args{"sm90", "sm100"}));
  EXPECT_EQ(sum["errors"], 5);  // as annotated: one finding shared by both GPUs counts once
  EXPECT_EQ(sum["warnings"], 2);
  EXPECT_EQ(sum["notes"], 1);
  const json& bad = j[2];    // launch.sh:15 on sm90
  EXPECT_EQ(bad["file"], "launch.sh");
  EXPECT_EQ(bad["line"], 15);
  EXPECT_EQ(bad["gpu"], "sm90");
  EXPECT_EQ(bad["launcher"], "python3 -m sglang.launch_server");
  EXPECT_EQ(bad["command"],
            "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --attention-backend=trtllm_mla --tp 8");
  EXPECT_EQ(bad["verdict"], "error");
  EXPECT_EQ(bad["ok"], false);
  ASSERT_EQ(bad["errors"].size(), 1u);
  EXPECT_EQ(bad["errors"][0]["rule"], "cell.compute-capability");
  EXPECT_EQ(bad["errors"][0]["line"], 15);
  EXPECT_EQ(bad["errors"][0]["flag"], "--attention-backend");
  ASSERT_EQ(bad["check_findings"].size(), 1u);  // only the note on --tp, argparse's prefix of --tp-size
  EXPECT_EQ(bad["check_findings"][0]["rule"], "args.prefix");
  for (const char* key : {"plan", "device", "model", "rejected", "alternatives", "matrix", "warnings", "notes"})
    EXPECT_TRUE(bad.contains(key)) << key;  // render_json's object

  const json& good = j[3];  // the same on sm100
  EXPECT_EQ(good["ok"], true);
  EXPECT_EQ(good["plan"]["attention_backend"], "trtllm_mla");
  EXPECT_EQ(good["plan"]["page_size"], 64);
  EXPECT_EQ(good["plan"]["flags"], (Args{"--attention-backend", "trtllm_mla", "--page-size", "64"}));

  const json& fa4 = j[4];  // launch.sh:18 on sm90: the page-size error and the decode caveat on their own lines
  ASSERT_EQ(fa4["errors"].size(), 1u);
  EXPECT_EQ(fa4["errors"][0]["line"], 21);
  EXPECT_EQ(fa4["errors"][0]["flag"], "--page-size");
  ASSERT_EQ(fa4["warnings"].size(), 1u);
  EXPECT_EQ(fa4["warnings"][0]["rule"], "fa4-sm90-decode-slowdown");
  EXPECT_EQ(fa4["warnings"][0]["line"], 20);
  EXPECT_EQ(fa4["warnings"][0]["flag"], "--attention-backend");

  const json& typo = j[8];  // launch.sh:27: no selection
  EXPECT_EQ(typo["line"], 27);
  EXPECT_TRUE(typo["plan"].is_null());
  ASSERT_EQ(typo["check_findings"].size(), 1u);
  EXPECT_EQ(typo["check_findings"][0]["rule"], "args.choice");
  EXPECT_EQ(typo["check_findings"][0]["line"], 27);
  EXPECT_EQ(typo["check_findings"][0]["value"], "flashinfr");
  EXPECT_EQ(typo["device"]["arch"], "sm90");

  const json argv = json::parse(render_check_json({check_one({"--attention-backend", "fa3"}, "sm90")}))["results"];
  EXPECT_TRUE(argv[0]["file"].is_null());
  EXPECT_TRUE(argv[0]["line"].is_null());
}

TEST(CheckRender, TextNamesTheLineTheVerdictAndWhatRuns) {
  const std::string text = render_check_text(check_file("launch.sh", "sm90,sm100"));
  EXPECT_TRUE(contains(text, "launch.sh:15  python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 "
                             "--attention-backend=trtllm_mla --tp 8\n"));
  EXPECT_TRUE(contains(text, "    ✗ launch.sh:15  --attention-backend trtllm_mla: TensorRT-LLM MLA needs compute "
                             "capability 10.x, 11.x or 12.x; this GPU is sm90 (Hopper)  [cell.compute-capability]\n"));
  EXPECT_TRUE(contains(text, "    runs   attention trtllm_mla · page size 64 (set by SGLang) · KV cache auto\n"));
  EXPECT_TRUE(contains(text, "    flags  --attention-backend trtllm_mla --page-size 64\n"));
  // Commands, not command x GPU pairs (those were 6 failing, 3 with warnings, 7 clean).
  EXPECT_TRUE(contains(text, "\n8 commands checked for sm90, sm100: 5 failing, 1 with warnings, 2 clean\n"));
  EXPECT_EQ(text.find("\033["), std::string::npos);  // no colour unless asked
}

// ---- columns, limits, hostile names, the Markdown report ----

// A command whose one finding is on `flag` at `line`.
CommandCheck with_finding(const std::string& flag, int line) {
  CommandCheck c;
  c.command.file = "f.sh";
  c.command.line = 1;
  CheckDiagnostic d;
  d.diagnostic.rule = "r";
  d.diagnostic.severity = Severity::error;
  d.flag = flag;
  d.line = line;
  c.findings.push_back(d);
  return c;
}

std::pair<int, int> column_of(const std::string& flag, int line, const std::string& text) {
  std::vector<CommandCheck> checks = {with_finding(flag, line)};
  locate_columns(checks, text);
  return {checks[0].findings[0].column, checks[0].findings[0].end_column};
}

TEST(CheckColumns, TheFlagsTokenOnItsLineOrNone) {
  using P = std::pair<int, int>;
  EXPECT_EQ(column_of("--page-size", 2, "x\n  --page-size 64 \\\n"), (P{3, 14}));
  EXPECT_EQ(column_of("--attention-backend", 1, "sglang serve m --attention-backend=fa3\n"), (P{16, 35}));
  EXPECT_EQ(column_of("--tp", 1, "CMD [\"sglang\", \"serve\", \"m\", \"--tp\", \"8\"]"), (P{31, 35}));  // JSON form
  EXPECT_EQ(column_of("--tp", 1, "a --tp-size 2 --tp 8\r\n"), (P{15, 19}));  // not inside --tp-size; CRLF
  EXPECT_EQ(column_of("--tp", 1, "a --tp-size 2\n--tp 8\n"), (P{0, 0}));    // only a longer flag on the line
  EXPECT_EQ(column_of("--tp", 1, "a --tp 2; b --tp 4\n"), (P{0, 0}));       // twice: which one is not certain
  EXPECT_EQ(column_of("--tp", 1, "é ü --tp 2\n"), (P{5, 9}));                // characters, not bytes
  EXPECT_EQ(column_of("--tp", 1, "\xff --tp 2\n"), (P{0, 0}));              // invalid UTF-8 before it
  EXPECT_EQ(column_of("--tp", 1, "\xf0\x9f\x98\x80 --tp 2\n"), (P{0, 0}));  // outside the BMP: editors differ
  EXPECT_EQ(column_of("--tp", 3, "--tp 2\n"), (P{0, 0}));                   // no such line
  EXPECT_EQ(column_of("--tp", 0, "--tp 2\n"), (P{0, 0}));
  EXPECT_EQ(column_of("", 1, "--tp 2\n"), (P{0, 0}));
  // A value set in a config file names that file: the flag text is not on the command's line.
  EXPECT_EQ(column_of("--tp (in cfg.yaml:3)", 1, "sglang serve m --config cfg.yaml --tp 2\n"), (P{0, 0}));
}

TEST(CheckRender, GithubColumnsFromTheFile) {
  std::vector<CommandCheck> checks = check_file("launch.sh", "sm90");
  locate_columns(checks, read_file(kFixtures + "launch.sh"));
  const std::string got = render_check_github(checks);
  // launch.sh:15 `python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --attention-backend=trtllm_mla`
  EXPECT_TRUE(contains(got, "::error file=launch.sh,line=15,col=70,endLine=15,endColumn=89,title=attnsel "
                            "cell.compute-capability::--attention-backend trtllm_mla:"))
      << got;
  EXPECT_TRUE(contains(got, "::error file=launch.sh,line=21,col=3,endLine=21,endColumn=14,title=attnsel cell.page-size::"));
  const json j = json::parse(render_check_json(checks))["results"];
  EXPECT_EQ(j[1]["errors"][0]["column"], 70);
}

TEST(CheckRender, GithubHostileFileNamesStayOneCommand) {
  CommandCheck c = check_one({"--attention-backend", "flashinfr"}, "sm90");
  c.command.file = "dir/a\nb::c%d,e\r.sh";
  c.command.line = 2;
  for (auto& d : c.findings) d.line = 2;
  const std::string got = render_check_github({c});
  EXPECT_TRUE(contains(got, "::error file=dir/a%0Ab%3A%3Ac%25d%2Ce%0D.sh,line=2,title=attnsel args.choice::"));
  std::istringstream lines(got);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_TRUE(line.rfind("::", 0) == 0 || line.rfind("attnsel: ", 0) == 0) << line;
    EXPECT_EQ(line.find('\r'), std::string::npos);
  }
}

// n commands, each one error (an unknown backend) on its own line of f.sh.
std::vector<CommandCheck> failing_commands(int n) {
  const CommandCheck one =
      check_one({"--model", "meta-llama/Meta-Llama-3.1-8B-Instruct", "--attention-backend", "flashinfr"}, "sm90");
  std::vector<CommandCheck> out;
  for (int i = 1; i <= n; ++i) {
    CommandCheck c = one;
    c.command.file = "f.sh";
    c.command.line = i;
    for (auto& d : c.findings) d.line = i;
    out.push_back(c);
  }
  return out;
}

std::size_t count_lines_starting(const std::string& text, const std::string& prefix) {
  std::size_t n = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) n += line.rfind(prefix, 0) == 0;
  return n;
}

TEST(CheckRender, GithubSaysWhenThereAreMoreThanItAnnotates) {
  const std::string ten = render_check_github(failing_commands(10));
  EXPECT_EQ(count_lines_starting(ten, "::error "), 10u);
  EXPECT_EQ(count_lines_starting(ten, "::notice "), 0u) << "10 errors: GitHub shows them all";

  const std::string many = render_check_github(failing_commands(23));
  EXPECT_EQ(count_lines_starting(many, "::error "), 23u);  // all in the log
  ASSERT_EQ(count_lines_starting(many, "::notice "), 1u);
  EXPECT_TRUE(contains(many, "attnsel found 23 errors, 0 warnings, 0 notes in 23 commands; GitHub annotates at most "
                             "10 errors, 10 warnings and 10 notices per step"))
      << many;
  EXPECT_TRUE(contains(many, "attnsel check --format text"));
  EXPECT_TRUE(contains(many, "attnsel: 23 commands checked for sm90: 23 failing, 0 with warnings, 0 clean"));
  EXPECT_EQ(many.rfind("::notice "), many.find("::notice "));  // after the errors: the last annotation
  EXPECT_GT(many.find("::notice "), many.rfind("::error "));

  // With the step summary written, the notice points there.
  std::ostringstream out;
  CheckWriterOptions o;
  o.step_summary = true;
  auto writer = make_check_writer(CheckFormat::github, out, o);
  writer->command(failing_commands(11), nullptr);
  writer->finish();
  EXPECT_TRUE(contains(out.str(), "All of them: the job's step summary, or `attnsel check --format text`."));
}

TEST(CheckRender, GithubKeepsTheLastNoticeForTheTotals) {
  // Notes past the ninth are log lines, so that GitHub's tenth notice is the one with the totals.
  const CommandCheck one = check_one({"--model-path", "$(cat /m)", "--attention-backend", "triton"}, "sm90");
  ASSERT_FALSE(one.findings.empty());
  ASSERT_EQ(one.findings[0].diagnostic.severity, Severity::info) << one.findings[0].diagnostic.rule;
  std::vector<CommandCheck> checks;
  for (int i = 1; i <= 12; ++i) {
    CommandCheck c = one;
    c.command.file = "f.sh";
    c.command.line = i;
    for (auto& d : c.findings) d.line = i;
    checks.push_back(c);
  }
  const std::string got = render_check_github(checks);
  EXPECT_EQ(count_lines_starting(got, "::notice "), 10u) << got;
  EXPECT_EQ(count_lines_starting(got, "attnsel note: f.sh:"), 12u - 9u);
  EXPECT_TRUE(contains(got, "12 notes in 12 commands"));
}

TEST(CheckRender, StrictCountsAWarningAsFailing) {
  const CommandCheck warned =
      check_one({"--model", "deepseek-ai/DeepSeek-R1", "--attention-backend", "flashmla", "--kv-cache-dtype", "fp8_e4m3"}, "sm90");
  ASSERT_EQ(warned.verdict(), Verdict::warning);
  for (bool strict : {false, true}) {
    std::ostringstream out;
    CheckWriterOptions o;
    o.strict = strict;
    auto writer = make_check_writer(CheckFormat::json, out, o);
    writer->command({warned}, nullptr);
    writer->finish();
    const json j = json::parse(out.str());
    EXPECT_EQ(j["summary"]["commands_failing"], strict ? 1 : 0);
    EXPECT_EQ(j["summary"]["commands_with_warnings"], strict ? 0 : 1);
    EXPECT_EQ(j["ok"], !strict);
  }
}

TEST(CheckRender, JsonIsOneObjectWhateverTheIndent) {
  const auto checks = check_file("launch.sh", "sm90,sm100");
  const std::vector<Error> skipped = {Error{ErrorCode::parse_error, "unterminated single quote", "a:b.sh:3:7", {}, {}}};
  const json pretty = json::parse(render_check_json(checks, skipped, {}, 2));
  const std::string line = render_check_json(checks, skipped, {}, -1);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_EQ(json::parse(line), pretty);
  std::vector<std::string> keys;
  for (auto it = pretty.begin(); it != pretty.end(); ++it) keys.push_back(it.key());
  // Sorted by nlohmann; the text's order is checked below.
  EXPECT_EQ(line.rfind("{\"schema_version\":1,\"attnsel_version\":\"", 0), 0u) << line.substr(0, 80);
  EXPECT_TRUE(contains(line, "\"kind\":\"check\",\"results\":[{"));
  ASSERT_EQ(pretty["skipped"].size(), 1u);
  EXPECT_EQ(pretty["skipped"][0], json({{"file", "a:b.sh"}, {"line", 3}, {"column", 7}, {"message", "unterminated single quote"}}));
  EXPECT_EQ(pretty["summary"]["skipped_blocks"], 1);
  // Inputs the caller could not read make it not ok, as they make the exit code 2.
  std::ostringstream out;
  auto writer = make_check_writer(CheckFormat::json, out);
  CheckInputs in;
  in.files = 3;
  in.problems = {"x.sh: cannot open: No such file or directory"};
  writer->finish(in);
  const json empty = json::parse(out.str());
  EXPECT_EQ(empty["ok"], false);
  EXPECT_EQ(empty["summary"]["files"], 3);
  EXPECT_EQ(empty["summary"]["input_problems"][0], "x.sh: cannot open: No such file or directory");
  EXPECT_EQ(empty["results"], json::array());
}

TEST(CheckRender, MarkdownReport) {
  const auto checks = check_file("launch.sh", "sm90,sm100");
  const std::string md = render_check_markdown(checks);
  EXPECT_EQ(md.rfind("## ❌ attnsel check: 5 of 8 commands fail\n", 0), 0u) << md.substr(0, 200);
  EXPECT_TRUE(contains(md, "8 commands checked for sm90, sm100: 5 failing, 1 with warnings, 2 clean.\n"));
  EXPECT_TRUE(contains(md, "| where | GPU | severity | rule | message |\n|---|---|---|---|---|\n"));
  EXPECT_TRUE(contains(md, "| `launch.sh:15` | sm90 | ❌ error | `cell.compute-capability` | --attention-backend "
                           "trtllm\\_mla: TensorRT-LLM MLA needs compute capability 10.x, 11.x or 12.x; this GPU is sm90 (Hopper) "
                           "(fix: --attention-backend trtllm\\_mla -\\> flashinfer) |\n"))
      << md;
  EXPECT_TRUE(contains(md, "| ❌ | `launch.sh:27` | `python -m sglang.launch_server --model "
                           "meta-llama/Meta-Llama-3.1-8B-Instruct --attention-backend flashinfr` | sm90 ❌ error · sm100 ❌ error |\n"));
  EXPECT_TRUE(contains(md, "mha\\|mla\\|gdn\\|dsa"));  // `|` in a message does not split the cell
  EXPECT_TRUE(contains(md, "| ✅ | `launch.sh:42` |"));
  EXPECT_FALSE(contains(md, "not shown"));
}

TEST(CheckRender, MarkdownEscapesCellsAndStaysUnderItsCap) {
  CommandCheck c = check_one({"--attention-backend", "flashinfr"}, "sm90");
  c.command.file = "a|b\nc`d<script>.sh";
  c.command.line = 4;
  for (auto& d : c.findings) d.line = 4;
  const std::string md = render_check_markdown({c});
  // One line (the newline shown as \x0A), `|` escaped, in a code span whose fence is longer than
  // the backticks inside.
  EXPECT_TRUE(contains(md, "| ``a\\|b\\x0Ac`d<script>.sh:4`` | sm90 |")) << md;
  std::istringstream lines(md);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("| ", 0) == 0) EXPECT_EQ(line.back(), '|') << line;  // no row is cut by a newline

  for (std::size_t cap : {std::size_t{5000}, std::size_t{20000}}) {
    std::ostringstream out;
    CheckWriterOptions o;
    o.max_bytes = cap;
    auto writer = make_check_writer(CheckFormat::markdown, out, o);
    const auto many = failing_commands(400);
    for (std::size_t i = 0; i < many.size(); ++i) writer->command({many[i]}, nullptr);
    writer->finish();
    const std::string report = out.str();
    EXPECT_LE(report.size(), cap);
    EXPECT_TRUE(contains(report, "400 commands checked for sm90: 400 failing")) << "the totals count everything";
    EXPECT_TRUE(contains(report, "more findings not shown: this report is capped at " + std::to_string(cap) + " bytes"))
        << report.substr(report.size() - 400);
  }
}

// ---- the command line: exit codes and outputs ----

struct CliRun {
  int code = -1;
  std::string out, err;
};

class CheckCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string(ATTNSEL_CLI).empty()) GTEST_SKIP() << "the attnsel CLI is not built";
    dir_ = std::filesystem::temp_directory_path() /
           ("attnsel-check-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }

  std::string file(const std::string& name, const std::string& text) {
    const auto path = dir_ / name;
    std::ofstream(path, std::ios::binary) << text;
    return path.string();
  }

  // Runs `attnsel ARGS` in the fixtures directory, without ATTNSEL_GPU or colours.
  CliRun run(const std::string& args, const std::string& stdin_text = "") {
    const std::string out = (dir_ / "stdout").string(), err = (dir_ / "stderr").string();
    const std::string in = file("stdin", stdin_text);
    const std::string cmd = "cd '" + kFixtures + "' && env -u ATTNSEL_GPU -u ATTNSEL_MATRIX NO_COLOR=1 '" +
                            std::string(ATTNSEL_CLI) + "' " + args + " <'" + in + "' >'" + out + "' 2>'" + err + "'";
    const int status = std::system(cmd.c_str());
    CliRun r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = read_file(out);
    r.err = read_file(err);
    return r;
  }

  std::filesystem::path dir_;
};

TEST_F(CheckCli, CommandAfterTheSeparator) {
  CliRun r = run("check --gpu sm90 -- python3 -m sglang.launch_server --model deepseek-ai/DeepSeek-R1 "
              "--attention-backend trtllm_mla");
  EXPECT_EQ(r.code, 1);
  // SGLang main's is_blackwell covers 11.x too (the CLI checks against the newest generation).
  EXPECT_TRUE(contains(r.out, "TensorRT-LLM MLA needs compute capability 10.x, 11.x or 12.x; this GPU is sm90 (Hopper)"));
  r = run("check --gpu sm100 -- python3 -m sglang.launch_server --model deepseek-ai/DeepSeek-R1 "
          "--attention-backend trtllm_mla");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "flags  --attention-backend trtllm_mla --page-size 64"));
  // Bare flags and one quoted string are commands too.
  EXPECT_EQ(run("check --gpu sm90 -- --attention-backend fa3 --page-size 16").code, 0);
  // FA4 runs standard attention on SM90 in the newest releases (the oracle's v0.5.16 and main answers).
  EXPECT_EQ(run("check --gpu sm90 -- 'sglang serve meta-llama/Meta-Llama-3.1-8B-Instruct --attention-backend fa4'").code,
            0);
}

TEST_F(CheckCli, StrictFailsOnWarnings) {
  const std::string cmd = "-- sglang serve deepseek-ai/DeepSeek-R1 --attention-backend flashmla --kv-cache-dtype fp8_e4m3";
  EXPECT_EQ(run("check --gpu sm90 " + cmd).code, 0);
  const CliRun strict = run("check --gpu sm90 --strict " + cmd);
  EXPECT_EQ(strict.code, 1);
  EXPECT_TRUE(contains(strict.out, "✗ error"));  // the FlashMLA FP8 caveat is an error under --strict
}

TEST_F(CheckCli, Files) {
  CliRun r = run("check --gpu sm90,sm100 --format github launch.sh");
  EXPECT_EQ(r.code, 1);
  // The CLI checks against the newest generation, with the advisories.
  std::vector<CommandCheck> want;
  const auto found = find_launch_commands(read_file(kFixtures + "launch.sh"), "launch.sh");
  ASSERT_TRUE(found.ok());
  for (const auto& cmd : *found) {
    auto r = check_command(*builtin_matrix(), catalog(), cmd, targets("sm90,sm100"));
    want.insert(want.end(), r.begin(), r.end());
  }
  locate_columns(want, read_file(kFixtures + "launch.sh"));
  EXPECT_EQ(r.out, render_check_github(want));
  EXPECT_TRUE(contains(r.out, "::error file=launch.sh,line=15,col=70,endLine=15,endColumn=89,title=")) << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;

  // Only the good command of the Dockerfile, on the GPU it is for.
  const std::string good = file("Dockerfile",
                                "FROM lmsysorg/sglang:latest\n"
                                "CMD [\"python3\", \"-m\", \"sglang.launch_server\", \"--model-path\", "
                                "\"meta-llama/Meta-Llama-3.1-8B-Instruct\", \"--attention-backend\", \"fa3\"]\n");
  r = run("check --gpu H100 --format json '" + good + "'");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  const json j = json::parse(r.out)["results"];
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["file"], good);
  EXPECT_EQ(j[0]["line"], 2);
  EXPECT_EQ(j[0]["verdict"], "clean");

  // Standard input is read as a shell script.
  r = run("check --gpu sm90 --format github -", "sglang serve x/y --attention-backend flashinfr\n");
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.out, "::error file=<stdin>,line=1,col=18,endLine=1,endColumn=37,title=attnsel args.choice::"))
      << r.out;
}

// --format github appends the Markdown report to $GITHUB_STEP_SUMMARY, within what GitHub keeps.
TEST_F(CheckCli, StepSummaryAndMarkdown) {
  const std::string summary = (dir_ / "summary.md").string();
  auto run_with_summary = [&](const std::string& format) {
    const std::string cmd = "cd '" + kFixtures + "' && env -u ATTNSEL_GPU GITHUB_STEP_SUMMARY='" + summary + "' '" +
                            std::string(ATTNSEL_CLI) + "' check --gpu sm90 --format " + format + " launch.sh >'" +
                            (dir_ / "out").string() + "' 2>'" + (dir_ / "err").string() + "'";
    const int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  file("summary.md", "# before\n");
  EXPECT_EQ(run_with_summary("github"), 1);
  std::string md = read_file(summary);
  EXPECT_EQ(md.rfind("# before\n## ❌ attnsel check: 4 of 8 commands fail\n", 0), 0u) << md.substr(0, 200);
  EXPECT_TRUE(contains(md, "| `launch.sh:15:70` | sm90 | ❌ error | `cell.compute-capability` |"));
  EXPECT_EQ(md.substr(9), run("check --gpu sm90 --format markdown launch.sh").out) << "the same report as --format markdown";

  file("summary.md", "# before\n");
  EXPECT_EQ(run_with_summary("text"), 1);
  EXPECT_EQ(read_file(summary), "# before\n") << "only --format github writes the step summary";

  // Nearly the 1 MiB GitHub keeps: the report is left out, with a warning, and the check goes on.
  file("summary.md", std::string(1024 * 1024 - 4096, 'x'));
  EXPECT_EQ(run_with_summary("github"), 1);
  EXPECT_EQ(read_file(summary).size(), 1024u * 1024u - 4096u);
  EXPECT_TRUE(contains(read_file((dir_ / "err").string()), "GITHUB_STEP_SUMMARY"));
  EXPECT_TRUE(contains(read_file((dir_ / "out").string()), "::error file=launch.sh,line=15,col=70"));
}

TEST_F(CheckCli, NoCommandInTheFilesIsAWarningNotAFailure) {
  const std::string none = file("notes.md", "# nothing to launch\n\n```bash\ntext-generation-launcher --model-id x\n```\n");
  const CliRun r = run("check --gpu sm90 '" + none + "'");
  EXPECT_EQ(r.code, 0);
  EXPECT_TRUE(contains(r.err, "warning: no engine launch command found in 1 file"));
  const json j = json::parse(run("check --gpu sm90 --format json '" + none + "'").out);
  EXPECT_EQ(j["results"], json::array());
  EXPECT_EQ(j["summary"]["files"], 1);
  EXPECT_EQ(j["summary"]["files_with_commands"], 0);
  EXPECT_EQ(j["summary"]["commands"], 0);
  EXPECT_EQ(j["ok"], true);
}

TEST_F(CheckCli, BadUsageAndUnreadableInputExitTwo) {
  EXPECT_EQ(run("check -- --attention-backend fa3").code, 2);                 // no --gpu
  EXPECT_EQ(run("check --gpu sm99 -- --attention-backend fa3").code, 2);      // unknown GPU
  EXPECT_EQ(run("check --gpu sm90 --cuda twelve -- --attention-backend fa3").code, 2);
  EXPECT_EQ(run("check --gpu sm90 --format sarf launch.sh").code, 2);  // a format that does not exist
  EXPECT_EQ(run("check --gpu sm90 --model-kind moe launch.sh").code, 2);
  EXPECT_EQ(run("check --gpu sm90").code, 2);                                 // nothing to check
  EXPECT_EQ(run("check --gpu sm90 --").code, 2);                              // nothing after --
  CliRun r = run("check --gpu sm90 -- text-generation-launcher --model-id meta-llama/Meta-Llama-3.1-8B-Instruct");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "does not start a known serving engine"));
  r = run("check --gpu sm90 does-not-exist.sh launch.sh");
  EXPECT_EQ(r.code, 2);  // the other file is still checked and shown
  EXPECT_TRUE(contains(r.err, "does-not-exist.sh: cannot open: No such file or directory"));
  EXPECT_TRUE(contains(r.out, "launch.sh:15"));
  const std::string broken = file("broken.sh", "python3 -m sglang.launch_server --model-path 'x\n");
  // A block that does not tokenise is one finding, and the rest of the file is read; the verdict
  // is incomplete, so the exit status is 2 and JSON's ok is false (docs/ci.md), --strict or not.
  r = run("check --gpu sm90 '" + broken + "'");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.out, broken + ":1:46: skipped"));
  EXPECT_TRUE(contains(r.out, "unterminated single quote"));
  EXPECT_EQ(run("check --gpu sm90 --strict '" + broken + "'").code, 2);
  EXPECT_EQ(json::parse(run("check --gpu sm90 --json '" + broken + "'").out)["ok"], false);
}

// Paths after --files are never options: a file named --help, --matrix=x or - is a file.
TEST_F(CheckCli, FilesAfterTheMarkerAreNeverOptions) {
  const std::string bad = "python3 -m sglang.launch_server --model-path meta-llama/Meta-Llama-3.1-8B-Instruct "
                          "--attention-backend flashinfr\n";
  file("evil.json", "{\"schema_version\": 1}\n");
  for (const std::string name : {"--help", "--matrix=evil.json", "--", "-", "--files", "--format=json", "--json"}) {
    SCOPED_TRACE(name);
    file(name, bad);
    // Named as a glob in the file's own directory names it: relative, starting with -.
    const std::string cmd = "cd '" + dir_.string() + "' && env -u ATTNSEL_GPU -u ATTNSEL_MATRIX NO_COLOR=1 '" +
                            std::string(ATTNSEL_CLI) + "' check --gpu sm90 --files '" + name + "' >out.txt 2>err.txt";
    const int status = std::system(cmd.c_str());
    EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 1) << read_file((dir_ / "err.txt").string());
    EXPECT_TRUE(contains(read_file((dir_ / "out.txt").string()), "flashinfr"));
    std::filesystem::remove(dir_ / name);
  }
  EXPECT_EQ(run("check --gpu sm90 --files").code, 2);  // nothing after it
  EXPECT_EQ(run("matrix --files x").code, 2);          // only check takes it
}

// --sglang-version and --vllm-version set the release of one engine's commands: a file launching
// both judges each with its own, the SGLang matrix is not asked about a vLLM release, and a vLLM
// release older than every vLLM matrix is judged against the oldest with its advisories
// (check.release-older), not left unjudged. --engine-version (every engine) excludes them.
TEST_F(CheckCli, PerEngineReleaseOptions) {
  const std::string file = testing::TempDir() + "attnsel-two-engines.sh";
  std::ofstream(file) << "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --attention-backend fa3\n"
                         "vllm serve deepseek-ai/DeepSeek-V3 --kv-cache-dtype fp8\n";
  CliRun r = run("check --gpu H100 --vllm-version 0.10.1 '" + file + "'");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_FALSE(contains(r.err, "newer than any matrix")) << r.err;  // 0.10.1 is no SGLang release
  EXPECT_TRUE(contains(r.out, "vllm release 0.10.1 is older than every matrix attnsel has")) << r.out;
  EXPECT_TRUE(contains(r.out, "[check.release-older]")) << r.out;
  EXPECT_TRUE(contains(r.out, "release 0.10.1 is affected (fixed in 0.10.2: upgrade)")) << r.out;
  EXPECT_TRUE(contains(r.out, "[advisory.VLLM-ADV-0040]")) << r.out;
  EXPECT_FALSE(contains(r.out, "check.not-modelled")) << r.out;
  // From v0.10.2 FlashMLA takes the FP8 cache: the advisory is silent.
  r = run("check --gpu H100 --vllm-version 0.10.2 '" + file + "'");
  EXPECT_FALSE(contains(r.out, "VLLM-ADV-0040")) << r.out;
  // The SGLang command keeps its own release.
  r = run("check --gpu H100 --sglang-version 0.5.3 --vllm-version 0.15.0 --format json '" + file + "'");
  EXPECT_TRUE(contains(r.out, "engines/sglang/matrix-0.5.3.json")) << r.out;
  EXPECT_EQ(run("check --gpu H100 --engine-version 0.5.3 --vllm-version 0.15.0 '" + file + "'").code, 2);
  EXPECT_EQ(run("check --gpu H100 --vllm-version 0.x '" + file + "'").code, 2);
  // An SGLang release older than every SGLang matrix: the oldest, with a warning, not a usage error.
  r = run("check --gpu H100 --sglang-version 0.4.0 '" + file + "'");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.err, "sglang release 0.4.0 (--sglang-version) is older than every matrix attnsel has (the "
                              "oldest describes 0.4.6)"))
      << r.err;
  std::remove(file.c_str());
}

// vLLM commands in deployment files: judged by the vLLM profile and matrix, for the release the
// file's image tag or pinned install names (vllm/vllm-openai:v0.26.0). Those releases ignore
// VLLM_ATTENTION_BACKEND: the backend it names is lost (an error), but vLLM starts with its own
// choice, which is planned. Without a release the variable is judged as the releases that read it
// would: FlashInfer with gpt-oss's sinks on H100 fails, and a warning says that releases from 0.15
// ignore it.
TEST_F(CheckCli, VllmDeploymentsAndTheIgnoredEnvironmentVariable) {
  const std::string deploy = std::string(ATTNSEL_TESTS_DIR) + "/fixtures/deploy/vllm/";
  CliRun r = run("check '" + deploy + "deployment.yaml'");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_TRUE(contains(r.err, "vllm release 0.26.0 from")) << r.err;
  EXPECT_TRUE(contains(r.out, "VLLM_ATTENTION_BACKEND=FLASHINFER is ignored: vLLM 0.15.0 and later no longer read it, so "
                              "vLLM runs its own choice; pass --attention-backend FLASHINFER  [check.env-ignored]"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "runs   attention FLASH_ATTN")) << r.out;
  EXPECT_TRUE(contains(r.out, "vLLM starts, but not as the file asks")) << r.out;

  // The same file without the image's tag: the release is not known.
  std::string text = read_file(deploy + "deployment.yaml");
  text.replace(text.find("vllm/vllm-openai:v0.26.0"), 24, "vllm/vllm-openai:latest");
  const std::string untagged = testing::TempDir() + "attnsel-untagged-deployment.yaml";
  std::ofstream(untagged) << text;
  r = run("check '" + untagged + "'");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "VLLM_ATTENTION_BACKEND=FLASHINFER is read only by vLLM releases before 0.15.0 and ignored "
                              "from 0.15.0 on"))
      << r.out;
  EXPECT_TRUE(contains(r.out, "pass --attention-backend FLASHINFER  [check.env-ignored]")) << r.out;
  EXPECT_TRUE(contains(r.out, "[fi-sinks-need-trtllm]")) << r.out;  // gpt-oss on H100: FlashInfer has no sinks there
  EXPECT_EQ(run("check --strict '" + untagged + "'").code, 1);
  std::remove(untagged.c_str());

  // --attention-config.backend (dotted) and --tensor_parallel_size are read as vLLM reads them; the
  // flag wins, so the ignored variable is only a warning and the plan is the flag's.
  r = run("check --gpu B200 '" + deploy + "Dockerfile'");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_TRUE(contains(r.out, "! ") && contains(r.out, "VLLM_ATTENTION_BACKEND=FLASHMLA is ignored")) << r.out;
  EXPECT_TRUE(contains(r.out, "[flashmla-dense-hopper-only]")) << r.out;
  EXPECT_FALSE(contains(r.out, "args.unknown")) << r.out;
  r = run("check --gpu H100 --format json '" + deploy + "serve.sh'");  // pip install vllm==0.27.1
  const json j = json::parse(r.out)["results"];
  ASSERT_EQ(j.size(), 1u);
  ASSERT_TRUE(j[0]["plan"].is_object()) << r.out;
  EXPECT_EQ(j[0]["plan"]["attention_backend"], "TRITON_ATTN");  // from --attention-config '{"backend": "triton_attn"}'
  EXPECT_EQ(j[0]["plan"]["page_size"], 32);
}

// A TP size that does not divide the heads of the model's config.json: each engine's refusal, cited
// from its own profile (tp_heads_source).
TEST_F(CheckCli, TensorParallelSizeMustDivideTheHeadsOfEitherEngine) {
  const std::string dir = testing::TempDir() + "attnsel-tp-heads";
  namespace fs = std::filesystem;
  fs::create_directories(dir + "/model");
  fs::copy_file(std::string(ATTNSEL_TESTS_DIR) + "/fixtures/configs/mistral-7b-v0.1.json", dir + "/model/config.json",
                fs::copy_options::overwrite_existing);  // 32 attention heads
  std::ofstream(dir + "/serve.sh") << "python3 -m sglang.launch_server --model-path " << dir << "/model --tp 3\n"
                                   << "vllm serve " << dir << "/model --tensor-parallel-size 3\n"
                                   << "vllm serve " << dir << "/model --tensor-parallel-size 4\n";
  const CliRun r = run("check --gpu H100 --format json '" + dir + "/serve.sh'");
  const json results = json::parse(r.out)["results"];
  ASSERT_EQ(results.size(), 3u) << r.out;
  std::vector<std::string> sources;
  for (const json& c : results)
    for (const json& f : c["check_findings"])
      if (f["rule"] == "check.tp-heads") sources.push_back(f["source"]);
  ASSERT_EQ(sources.size(), 2u) << r.out;  // TP 4 divides 32
  EXPECT_TRUE(contains(sources[0], "sgl-project/sglang")) << sources[0];
  EXPECT_TRUE(contains(sources[1], "vllm-project/vllm")) << sources[1];
  fs::remove_all(dir);
}

TEST_F(CheckCli, GpuFromTheEnvironmentAndHelp) {
  const std::string cmd = "cd '" + kFixtures + "' && ATTNSEL_GPU=sm100 '" + std::string(ATTNSEL_CLI) +
                          "' check -- --model deepseek-ai/DeepSeek-R1 --attention-backend trtllm_mla >/dev/null 2>&1";
  const int status = std::system(cmd.c_str());
  EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0);
  const CliRun help = run("check --help");
  EXPECT_EQ(help.code, 0);
  EXPECT_TRUE(contains(help.out, "--gpu"));
  EXPECT_TRUE(contains(help.out, "Exit codes"));
}

}  // namespace
}  // namespace attnsel

namespace attnsel {
namespace {

// `sglang generate` runs the diffusion profile: its backends, packages and backend config.
TEST(CheckDiffusion, GenerateCommandsAreJudgedAgainstTheDiffusionProfile) {
  CheckOptions options;
  options.diffusion_matrix = *builtin_matrix("sglang-diffusion");
  options.installed = {"vsa"};
  options.installed_known = true;
  auto cmd = launch_command_from_argv({"sglang", "generate", "--model-path", "Wan-AI/Wan2.1-T2V-1.3B-Diffusers", "--prompt",
                                       "a cat", "--attention-backend", "video_sparse_attn", "--attention-backend-config",
                                       "sparsity=1.5"});
  ASSERT_TRUE(cmd.ok()) << cmd.error().describe();
  auto results = check_command(*builtin_matrix(), **builtin_catalog(), *cmd, targets("H100"), options);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].verdict(), Verdict::error);
  ASSERT_FALSE(results[0].errors.empty());
  EXPECT_EQ(results[0].errors[0].diagnostic.rule, "config.range");
  EXPECT_NE(results[0].errors[0].diagnostic.message.find("sparsity"), std::string::npos);

  auto sage = launch_command_from_argv({"sglang", "generate", "--model-path", "X", "--attention-backend", "sage_attn"});
  results = check_command(*builtin_matrix(), **builtin_catalog(), *sage, targets("T4"), options);
  EXPECT_EQ(results[0].verdict(), Verdict::error) << "SageAttention: no sm75 kernels, and the package is missing";

  // Without a diffusion matrix of the caller's, the built-in one judges it.
  results = check_command(*builtin_matrix(), **builtin_catalog(), *sage, targets("T4"), CheckOptions{});
  ASSERT_TRUE(results[0].selection);
  EXPECT_EQ(results[0].selection->matrix->info().engine, "sglang-diffusion");
}

}  // namespace
}  // namespace attnsel
