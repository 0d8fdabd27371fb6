// The whole request space: automatic selection agrees with explicit validation on the built-in
// matrix, and lint_matrix() catches matrices where it does not.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "attnsel/lint.hpp"
#include "support/sweep.hpp"

namespace attnsel {
namespace {

using json = nlohmann::json;

std::shared_ptr<const Catalog> catalog() {
  auto c = builtin_catalog();
  EXPECT_TRUE(c.ok());
  return *c;
}

json read_json(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}

std::shared_ptr<const Matrix> load(const json& j) {
  auto m = load_matrix(j.dump(), "patched sglang.json");
  EXPECT_TRUE(m.ok()) << m.error().describe();
  return m.ok() ? *m : nullptr;
}

json sglang() { return read_json(std::string(ATTNSEL_SOURCE_DIR) + "/data/engines/sglang/matrix-0.5.12.json"); }

json rule(const std::string& id, const std::string& severity, json when, json set = nullptr) {
  json r = {{"id", id}, {"severity", severity}, {"when", std::move(when)}, {"message", "test rule"}, {"source", "whole_space_test"}};
  if (!set.is_null()) r["set"] = std::move(set);
  return r;
}

// The space of a sweep under ATTNSEL_SWEEP=sample (the sanitizer presets; tests/support/sweep.hpp):
// two CUDA versions that together name every architecture, the KV dtypes auto, fp8_e4m3 and
// fp4_e2m1, the page sizes unset, 1 and 64. Consistency is judged configuration by configuration,
// so a share of the space is judged as the whole is.
LintOptions in_sweep_mode(LintOptions o, const std::string& what) {
  if (sweep::mode() != sweep::Mode::sample) return o;
  if (o.cuda_versions.size() > 1) o.cuda_versions = {"12.9", "13.0"};
  o.kv_dtypes = {KvCacheDtype::auto_, KvCacheDtype::fp8_e4m3, KvCacheDtype::fp4_e2m1};
  o.page_sizes = {std::nullopt, 1, 64};
  std::cout << sweep::notice(what + ": CUDA 12.9 and 13.0, KV auto, fp8_e4m3 and fp4_e2m1, page unset, 1 and 64");
  return o;
}

// A small space around Hopper and Ampere: enough to catch a broken rule quickly.
LintOptions small_space() {
  LintOptions o;
  o.cuda_versions = {"12.9"};
  o.gpu_less_platforms = {};
  o.kv_dtypes = {KvCacheDtype::auto_};
  o.topks = {0};
  o.page_sizes = {std::nullopt, 16};
  return o;
}

std::string problems(const LintReport& r) {
  std::string out;
  for (const auto& p : r.problems)
    out += "\n  " + std::string(name_of(p.kind)) + " x" + std::to_string(p.count) + ": " + p.detail + "\n    attnsel " +
           p.args + "\n    attnsel " + p.args + " " + p.replay_args;
  return out;
}

bool has_problem(const LintReport& r, LintProblemKind kind, const std::string& text) {
  return std::any_of(r.problems.begin(), r.problems.end(),
                     [&](const LintProblem& p) { return p.kind == kind && p.detail.find(text) != std::string::npos; });
}

// One test for the default space on the built-in matrix: ctest runs every test in its own
// process, and the sweep is the expensive part (seconds; minutes under ASan).
TEST(WholeSpace, BuiltinMatrixIsConsistent) {
  auto matrix = builtin_matrix();
  ASSERT_TRUE(matrix.ok()) << matrix.error().describe();
  const auto start = std::chrono::steady_clock::now();
  const LintReport r = lint_matrix(*matrix, *catalog());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << render_lint_text(r, seconds);
  RecordProperty("configurations", static_cast<int>(r.configurations));
  RecordProperty("selections", static_cast<int>(r.selections));
  RecordProperty("seconds", std::to_string(seconds));

  // Every catalog architecture with every CUDA release it supports, ROCm and the GPU-less platforms.
  EXPECT_GE(r.devices, 60u);
  EXPECT_EQ(r.configurations, r.devices * 4 * 5 * 3 * 6 * 2);
  EXPECT_GT(r.auto_valid, r.configurations / 3);
  EXPECT_TRUE(r.consistent()) << r.inconsistencies() << " inconsistencies:" << problems(r);

  // Family- and determinism-specific entries are outside the default space, and say so.
  auto gpt_oss = std::find_if(r.dead.begin(), r.dead.end(), [](const DeadEntry& d) { return d.id == "auto-gpt-oss"; });
  ASSERT_NE(gpt_oss, r.dead.end());
  EXPECT_EQ(gpt_oss->outside_space, std::vector<std::string>{"family"});
  // Rules that judge only explicit, non-chosen or hybrid choices fire through the probes.
  for (const char* id : {"flashmla-fp8-kv", "fa3-fp8-e5m2-to-triton", "fp4-e2m1-deprecated", "auto-hopper-mla",
                         "dsa-kv-auto-blackwell", "trtllm-mha-page-size", "gdn-sm100-full-attention"})
    EXPECT_TRUE(std::binary_search(r.fired.begin(), r.fired.end(), id)) << id;
  // Backends that run only outside the linted space: wave needs the wave_lang package (absent from
  // SGLang's image), dsv4 only DeepSeek V4 (no such model in the space). Nothing else may be unreachable.
  for (const auto& b : r.unreachable_backends)
    EXPECT_TRUE(b == "attention:wave" || b == "attention:dsv4") << b;
}

// Every older SGLang generation (data/engines/<engine>/generations.json) is linted too: --sglang-version answers with
// them, so they must be as consistent as the newest. The newest is the test above. One test per generation: ctest
// runs them in parallel, and each stays well inside the per-test timeout under ASan, where the sweep is slowest.
std::vector<std::string> older_sglang_generations() {
  std::vector<std::string> files;
  auto generations = builtin_generations();
  if (!generations.ok()) return files;
  for (const auto& g : *generations)
    if (g.engine == "sglang") files.push_back(g.file);
  if (!files.empty()) files.pop_back();  // the newest: BuiltinMatrixIsConsistent
  return files;
}

TEST(WholeSpace, OlderGenerationsAreLinted) {
  auto generations = builtin_generations();
  ASSERT_TRUE(generations.ok()) << generations.error().describe();
  EXPECT_GE(older_sglang_generations().size(), 1u);
}

class EveryGeneration : public testing::TestWithParam<std::string> {};

TEST_P(EveryGeneration, IsConsistent) {
  const std::string& file = GetParam();
  auto matrix = builtin_matrix_file(file);
  ASSERT_TRUE(matrix.ok()) << file << ": " << matrix.error().describe();
  LintOptions o;
  o.explicit_probes = false;  // the sweep and its replays; the probes run on the newest
  o = in_sweep_mode(o, file);
  const LintReport r = lint_matrix(*matrix, *catalog(), o);
  EXPECT_GT(r.configurations, 0u) << file;
  EXPECT_TRUE(r.consistent()) << file << ": " << r.inconsistencies() << " inconsistencies:" << problems(r);
  if (file == "engines/sglang/matrix-0.5.12.json") {
    // v0.5.12 keeps the FP4 (fp4_e2m1) plan rules that SGLang main dropped with the dtype.
    const LintReport full = lint_matrix(*matrix, *catalog(), in_sweep_mode({}, file + " with the probes"));
    for (const char* id : {"fp4-kv-fa4-prefill-needs-other-decode", "fp4-kv-fa4-trtllm-mha"})
      EXPECT_TRUE(std::binary_search(full.fired.begin(), full.fired.end(), id)) << id;
  }
}

// "engines/sglang/matrix-0.5.12.json" -> "matrix_0_5_12": gtest names take letters, digits and '_'.
std::string generation_test_name(const testing::TestParamInfo<std::string>& info) {
  std::string name = info.param.substr(info.param.find_last_of('/') + 1);
  if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0) name.resize(name.size() - 5);
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(WholeSpace, EveryGeneration, testing::ValuesIn(older_sglang_generations()), generation_test_name);

TEST(WholeSpace, CatchesAPlanThatExplicitValidationRejects) {
  json m = sglang();
  // Passing fa3 by name fails, yet automatic selection picks it on Hopper.
  m["rules"].push_back(rule("broken-explicit-fa3", "error", {{"backend", "fa3"}, {"backend_explicit", true}}));
  const LintReport r = lint_matrix(load(m), *catalog(), small_space());
  EXPECT_FALSE(r.consistent());
  EXPECT_GT(r.replay_rejected, 0u);
  EXPECT_TRUE(has_problem(r, LintProblemKind::replay_rejected, "broken-explicit-fa3 (fa3")) << problems(r);
  const auto it = std::find_if(r.problems.begin(), r.problems.end(), [](const LintProblem& p) { return p.kind == LintProblemKind::replay_rejected; });
  ASSERT_NE(it, r.problems.end());
  EXPECT_NE(it->replay_args.find("--attention-backend fa3"), std::string::npos) << it->replay_args;
}

TEST(WholeSpace, CatchesAReplayThatRunsAnotherPageSize) {
  json m = sglang();
  // An explicit fa3 is silently moved to page size 64; the automatic fa3 is not.
  m["rules"].push_back(rule("broken-explicit-fa3-page", "warning",
                            {{"backend", "fa3"}, {"backend_explicit", true}, {"not", {{"page_size", 64}}}}, {{"page_size", 64}}));
  const LintReport r = lint_matrix(load(m), *catalog(), small_space());
  EXPECT_GT(r.replay_differs, 0u) << problems(r);
  EXPECT_TRUE(has_problem(r, LintProblemKind::replay_differs, "page=64")) << problems(r);
}

TEST(WholeSpace, CatchesAConfigurationAutomaticSelectionMisses) {
  json m = read_json(std::string(ATTNSEL_TESTS_DIR) + "/fixtures/matrices/minimal.json");
  // triton only prefills and "decoder" only decodes: no backend runs both phases, so automatic
  // selection (one backend for the joint slot) finds nothing, yet the hybrid of the two is valid.
  m["backends"][0]["cells"][0]["phases"] = {"prefill"};
  json decoder = m["backends"][0];
  decoder["name"] = "decoder";
  decoder["cells"][0]["phases"] = {"decode"};
  m["backends"].push_back(decoder);
  const LintReport r = lint_matrix(load(m), *catalog(), small_space());
  EXPECT_GT(r.missed, 0u) << problems(r);
  EXPECT_TRUE(has_problem(r, LintProblemKind::missed, "attention=triton/decoder")) << problems(r);
  const auto it = std::find_if(r.problems.begin(), r.problems.end(), [](const LintProblem& p) { return p.kind == LintProblemKind::missed; });
  ASSERT_NE(it, r.problems.end());
  EXPECT_NE(it->replay_args.find("--prefill-attention-backend triton --decode-attention-backend decoder"), std::string::npos)
      << it->replay_args;
}

TEST(WholeSpace, ReportsDeadRulesAndUnreachableBackends) {
  json m = read_json(std::string(ATTNSEL_TESTS_DIR) + "/fixtures/matrices/minimal.json");
  // A backend no GPU of the catalog can run, and a rule that needs a page size no backend accepts.
  json ghost = m["backends"][0];
  ghost["name"] = "ghost";
  ghost["cells"][0]["compute_capability"] = {{"min", "99.0"}};
  m["backends"].push_back(ghost);
  m["rules"].push_back(rule("never-fires", "warning", {{"backend", "triton"}, {"page_size", 7}}));
  m["rules"].push_back(rule("needs-a-family", "warning", {{"family", "gpt-oss"}}));
  LintOptions o = small_space();
  o.kv_dtypes = {KvCacheDtype::auto_, KvCacheDtype::fp8_e4m3};  // triton-fp8 fires on the explicit probe
  const LintReport r = lint_matrix(load(m), *catalog(), o);
  EXPECT_TRUE(r.consistent()) << problems(r);
  EXPECT_EQ(r.unreachable_backends, std::vector<std::string>{"attention:ghost"});
  auto dead = [&](const std::string& id) {
    return std::find_if(r.dead.begin(), r.dead.end(), [&](const DeadEntry& d) { return d.id == id; });
  };
  ASSERT_NE(dead("never-fires"), r.dead.end());
  EXPECT_TRUE(dead("never-fires")->outside_space.empty());
  ASSERT_NE(dead("needs-a-family"), r.dead.end());
  EXPECT_EQ(dead("needs-a-family")->outside_space, std::vector<std::string>{"family"});
  EXPECT_EQ(dead("triton-fp8"), r.dead.end());
  EXPECT_EQ(r.dead_count(), 1u);
  const std::string text = render_lint_text(r, 0);
  EXPECT_NE(text.find("attention:ghost"), std::string::npos) << text;
  const json j = json::parse(render_lint_json(r, 1.5));
  EXPECT_EQ(j["configurations"], r.configurations);
  EXPECT_EQ(j["unreachable_backends"], json::array({"attention:ghost"}));
  EXPECT_TRUE(j["consistent"].get<bool>());
}

// On several threads the sweep reports exactly what one thread does: the same problems in the same
// order with the same counts and first examples, the same dead entries and backends, byte for byte.
TEST(WholeSpace, ThreadsDoNotChangeTheReport) {
  auto same_on_threads = [](const std::shared_ptr<const Matrix>& m, LintOptions o, std::vector<std::size_t> counts) {
    o.threads = 1;
    const LintReport one = lint_matrix(m, *catalog(), o);
    const std::string expected = render_lint_json(one, 0);
    for (std::size_t threads : counts) {
      SCOPED_TRACE(threads);
      o.threads = threads;
      const LintReport r = lint_matrix(m, *catalog(), o);
      EXPECT_EQ(render_lint_json(r, 0), expected);
      EXPECT_EQ(r.fired, one.fired);
    }
    return one;
  };
  LintOptions o;
  o.cuda_versions = {"12.9"};
  o.topks = {0, 1};
  o = in_sweep_mode(o, "the threaded sweeps");
  auto generations = builtin_generations();
  ASSERT_TRUE(generations.ok());
  std::vector<std::string> engines;
  for (const auto& g : *generations)
    if (std::find(engines.begin(), engines.end(), g.engine) == engines.end()) engines.push_back(g.engine);
  ASSERT_GE(engines.size(), 2u);
  for (const std::string& engine : engines) {
    SCOPED_TRACE(engine);
    auto matrix = builtin_matrix(engine);
    ASSERT_TRUE(matrix.ok()) << matrix.error().describe();
    same_on_threads(*matrix, o, {2});
  }
  // Problems in many configurations, fewer kept than found: counts and first examples merge.
  json m = sglang();
  m["rules"].push_back(rule("broken-explicit-fa3", "error", {{"backend", "fa3"}, {"backend_explicit", true}}));
  m["rules"].push_back(rule("broken-explicit-fa3-page", "warning",
                            {{"backend", "flashinfer"}, {"backend_explicit", true}, {"not", {{"page_size", 64}}}},
                            {{"page_size", 64}}));
  o.max_examples = 3;
  const LintReport r = same_on_threads(load(m), o, {2, 3, 7});
  EXPECT_GT(r.problems.size(), 1u) << problems(r);

  // The hybrid pass stops at the first configuration (in space order) after which every plan rule
  // has fired; on several threads it must stop at the same one (the report counts its selections).
  json hybrid = sglang();
  json kept = json::array();
  for (const auto& rl : hybrid["rules"])
    if (rl.value("scope", "backend") != "plan") kept.push_back(rl);
  hybrid["rules"] = kept;
  json on_automatic = rule("test-any-plan", "info", {{"any_backend", "fa3"}});
  on_automatic["scope"] = "plan";
  json on_a_pair = rule("test-hybrid-pair", "warning", {{"prefill_backend", "flashinfer"}, {"decode_backend", "triton"},
                                                        {"cc", {{"min", "9.0"}}}, {"kv_dtype", "auto"}});
  on_a_pair["scope"] = "plan";
  hybrid["rules"].push_back(on_automatic);
  hybrid["rules"].push_back(on_a_pair);
  LintOptions h;
  h.cuda_versions = {"12.9"};
  h.topks = {0};
  const LintReport stopped = same_on_threads(load(hybrid), h, {2, 3, 7});
  for (const char* id : {"test-any-plan", "test-hybrid-pair"})
    EXPECT_EQ(std::count(stopped.fired.begin(), stopped.fired.end(), id), 1) << id << " fired";
}

}  // namespace
}  // namespace attnsel
