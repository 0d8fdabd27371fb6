// Advisories (include/attnsel/advisory.hpp, docs/advisories.md): the built-in files load, invalid
// documents are refused with the JSON pointer, matching follows the severity policy, a checked
// command reports advisory.<ID>, and `attnsel advisories` lists and filters them.
#include "attnsel/advisory.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <array>
#include <functional>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>

#include "attnsel/check_input.hpp"

#ifndef ATTNSEL_SOURCE_DIR
#define ATTNSEL_SOURCE_DIR "."
#endif
#ifndef ATTNSEL_CLI
#define ATTNSEL_CLI ""
#endif

namespace attnsel {
namespace {

using json = nlohmann::json;

TEST(Advisories, BuiltInFilesLoad) {
  EXPECT_EQ(advisory_engines(), (std::vector<std::string>{"sglang", "vllm"}));
  for (const std::string& engine : advisory_engines()) {
    auto list = builtin_advisories(engine);
    ASSERT_TRUE(list.ok()) << list.error().describe();
    EXPECT_GE((*list)->size(), 30U) << engine;
    std::set<std::string> ids;
    for (const Advisory& a : **list) {
      EXPECT_TRUE(ids.insert(a.id).second) << a.id;
      EXPECT_EQ(a.engine, engine);
      EXPECT_FALSE(a.link().empty()) << a.id;
    }
  }
  auto none = builtin_advisories("sglang-diffusion");  // its bugs live in sglang's file (runtime: diffusion)
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE((*none)->empty());
}

// A valid one-advisory document to break in one place per case.
json valid_document() {
  return json::parse(R"({
    "schema_version": 1, "engine": "vllm", "source": "test",
    "advisories": [{
      "id": "VLLM-ADV-0001", "engine": "vllm", "title": "t", "status": "fixed",
      "introduced": "0.10.0", "fixed": "0.11.0", "effect": "crash", "summary": "s",
      "platform": "cuda", "gpus": ["sm100"], "backends": ["FLASHINFER"], "kv_cache_dtype": ["fp8_e4m3"],
      "flags": [{"flag": "--page-size", "min": 2}],
      "links": {"issues": ["https://github.com/vllm-project/vllm/issues/1"], "fix": ["https://github.com/vllm-project/vllm/pull/2"]},
      "evidence": [{"url": "https://github.com/vllm-project/vllm/pull/2", "text": "fixed"}]
    }]})");
}

TEST(Advisories, InvalidDocumentsAreRefusedWithThePointer) {
  ASSERT_TRUE(load_advisories(valid_document().dump(), "t.json").ok());
  struct Case {
    const char* pointer;  // JSON pointer of the value to set
    json value;
    const char* where;    // expected in Error::where
    const char* message;  // expected in Error::message
  };
  const std::vector<Case> cases = {
      {"/advisories/0/id", "VLLM-ADV-0002", "#/advisories/0/id", "out of order"},
      {"/advisories/0/engine", "sglang", "#/advisories/0/engine", "engine vllm"},
      {"/advisories/0/effect", "explodes", "#/advisories/0/effect", "not one of"},
      {"/advisories/0/status", "sleeping", "#/advisories/0/status", "not one of"},
      {"/advisories/0/fixed", "0.9.0", "#/advisories/0/fixed", "before introduced"},
      {"/advisories/0/introduced", "soon", "#/advisories/0/introduced", "not a release"},
      {"/advisories/0/kv_cache_dtype/0", "fp8", "#/advisories/0/kv_cache_dtype/0", "canonical"},
      {"/advisories/0/flags/0/flag", "page-size", "#/advisories/0/flags/0/flag", "no flag"},
      {"/advisories/0/flags/0/absent", true, "#/advisories/0/flags/0", "absent"},
      {"/advisories/0/links/fix", json::array(), "#/advisories/0/status", "without a fix link"},
      {"/advisories/0/evidence/0/url", "https://github.com/vllm-project/vllm/issues/9", "#/advisories/0/evidence/0/url",
       "not one of the advisory's links"},
      {"/advisories/0/links/issues/0", "https://example.com/x", "#/advisories/0/links", "not a GitHub"},
      {"/advisories/0/colour", "red", "#/advisories/0", "colour"},
      {"/advisories/0/platform", "tpu", "#/advisories/0/platform", "not one of"},
      {"/schema_version", 2, "#/schema_version", "schema_version 1"},
  };
  for (const Case& c : cases) {
    json doc = valid_document();
    doc[json::json_pointer(c.pointer)] = c.value;
    auto r = load_advisories(doc.dump(), "t.json");
    ASSERT_FALSE(r.ok()) << c.pointer;
    EXPECT_NE(r.error().where.find(c.where), std::string::npos) << c.pointer << ": " << r.error().describe();
    EXPECT_NE(r.error().message.find(c.message), std::string::npos) << c.pointer << ": " << r.error().describe();
  }
  auto syntax = load_advisories("{\"advisories\": [", "t.json");
  ASSERT_FALSE(syntax.ok());
  EXPECT_EQ(syntax.error().code, ErrorCode::parse_error);
}

Advisory sample() {
  auto list = load_advisories(valid_document().dump(), "t.json");
  EXPECT_TRUE(list.ok());
  return list->front();
}

AdvisoryQuery query(std::optional<std::string> release) {
  AdvisoryQuery q;
  q.engine = "vllm";
  if (release) {
    q.release = parse_release(*release);
    q.release_text = *release;
  }
  q.device.platform = Platform::cuda;
  q.device.arch = "sm100";
  q.backends = {"FLASHINFER"};
  q.kv_cache_dtype = "fp8_e4m3";
  q.flags.push_back({{"--page-size", "--block-size"}, "--block-size", "16"});
  return q;
}

TEST(Advisories, SeverityFollowsTheRelease) {
  struct Case {
    const char* name;
    std::function<void(Advisory&, AdvisoryQuery&)> change;
    std::optional<Severity> expected;  // nullopt: no match
  };
  const std::vector<Case> cases = {
      {"inside [introduced, fixed)", [](Advisory&, AdvisoryQuery& q) { q = query("0.10.2"); }, Severity::error},
      {"at the fix", [](Advisory&, AdvisoryQuery& q) { q = query("0.11.0"); }, std::nullopt},
      {"before the introduction", [](Advisory&, AdvisoryQuery& q) { q = query("0.9.9"); }, std::nullopt},
      {"release unknown, fix known: a note", [](Advisory&, AdvisoryQuery& q) { q = query(std::nullopt); }, Severity::info},
      {"slowdown inside the range", [](Advisory& a, AdvisoryQuery& q) { a.effect = "silent-slowdown"; q = query("0.10.0"); },
       Severity::warning},
      {"range unknown",
       [](Advisory& a, AdvisoryQuery& q) {
         a.introduced.reset();
         a.fixed.reset();
         q = query("0.10.0");
       },
       Severity::warning},
      {"open with a known start",
       [](Advisory& a, AdvisoryQuery& q) {
         a.fixed.reset();
         a.status = "open";
         q = query("0.12.0");
       },
       Severity::error},
      {"open, start unknown",
       [](Advisory& a, AdvisoryQuery& q) {
         a.introduced.reset();
         a.fixed.reset();
         a.status = "open";
         q = query("0.12.0");
       },
       Severity::warning},
      {"main only, tagged release", [](Advisory& a, AdvisoryQuery& q) { a.likely_main_only = true; q = query("0.10.1"); },
       std::nullopt},
      {"main only, release unknown", [](Advisory& a, AdvisoryQuery& q) { a.likely_main_only = true; q = query(std::nullopt); },
       Severity::info},
      {"main only, a development build", [](Advisory& a, AdvisoryQuery& q) { a.likely_main_only = true; q = query("0.10.2.dev638+g541a2ef89"); },
       Severity::warning},
      {"a pre-release of the fixing release may predate the fix", [](Advisory&, AdvisoryQuery& q) { q = query("0.11.0rc1.dev12+gabc"); },
       Severity::warning},
      {"a development build after the fixing release", [](Advisory&, AdvisoryQuery& q) { q = query("0.11.1.dev3+gabc"); },
       std::nullopt},
      {"a development build inside the range", [](Advisory&, AdvisoryQuery& q) { q = query("0.10.2.dev5"); }, Severity::error},
      {"traits not read cap at a warning",
       [](Advisory& a, AdvisoryQuery& q) {
         a.model_traits = {"attention_sinks"};
         q = query("0.10.0");
       },
       Severity::warning},
      {"traits read decide",
       [](Advisory& a, AdvisoryQuery& q) {
         a.model_traits = {"attention_sinks"};
         q = query("0.10.0");
         q.model_known = true;
         q.model.attention_sinks = true;
       },
       Severity::error},
      {"a trait the model lacks", [](Advisory& a, AdvisoryQuery& q) {
         a.model_traits = {"attention_sinks"};
         q = query("0.10.0");
         q.model_known = true;
       }, std::nullopt},
      {"other GPU", [](Advisory&, AdvisoryQuery& q) { q = query("0.10.0"); q.device.arch = "sm90"; }, std::nullopt},
      {"GPU by name", [](Advisory& a, AdvisoryQuery& q) { a.gpus = {"Radeon PRO W7900"}; q = query("0.10.0"); q.device.name = "radeon pro w7900"; },
       Severity::error},
      {"other backend", [](Advisory&, AdvisoryQuery& q) { q = query("0.10.0"); q.backends = {"FLASH_ATTN"}; }, std::nullopt},
      {"no plan, backend condition", [](Advisory&, AdvisoryQuery& q) { q = query("0.10.0"); q.backends_known = false; },
       std::nullopt},
      {"backend case-insensitive", [](Advisory&, AdvisoryQuery& q) { q = query("0.10.0"); q.backends = {"flashinfer"}; },
       Severity::error},
      {"other KV dtype", [](Advisory&, AdvisoryQuery& q) { q = query("0.10.0"); q.kv_cache_dtype = "auto"; }, std::nullopt},
      {"flag by alias below min", [](Advisory&, AdvisoryQuery& q) { q = query("0.10.0"); q.flags[0].value = "1"; }, std::nullopt},
      {"flag not given", [](Advisory&, AdvisoryQuery& q) { q = query("0.10.0"); q.flags.clear(); }, std::nullopt},
      {"absent flag given",
       [](Advisory& a, AdvisoryQuery& q) {
         a.flags = {AdvisoryCondition{"--enforce-eager", {}, std::nullopt, true, ""}};
         q = query("0.10.0");
         q.flags.push_back({{"--enforce-eager"}, "--enforce-eager", std::nullopt});
       },
       std::nullopt},
      {"absent flag of the other polarity",
       [](Advisory& a, AdvisoryQuery& q) {
         a.flags = {AdvisoryCondition{"--no-enable-prefix-caching", {}, std::nullopt, true, ""}};
         q = query("0.10.0");
         q.flags.push_back({{"--enable-prefix-caching", "--no-enable-prefix-caching"}, "--enable-prefix-caching", std::nullopt});
       },
       Severity::error},
      {"env value",
       [](Advisory& a, AdvisoryQuery& q) {
         a.env = {AdvisoryCondition{"VLLM_ROCM_USE_AITER", {"1"}, std::nullopt, false, ""}};
         q = query("0.10.0");
         q.env = {{"VLLM_ROCM_USE_AITER", "0"}};
       },
       std::nullopt},
      {"other runtime", [](Advisory& a, AdvisoryQuery& q) { a.runtime = "diffusion"; q = query("0.10.0"); }, std::nullopt},
      {"other engine", [](Advisory&, AdvisoryQuery& q) { q = query("0.10.0"); q.engine = "sglang"; }, std::nullopt},
  };
  for (const Case& c : cases) {
    Advisory a = sample();
    AdvisoryQuery q;
    c.change(a, q);
    const std::vector<Advisory> list = {a};
    const auto matches = match_advisories(list, q);
    if (!c.expected) {
      EXPECT_TRUE(matches.empty()) << c.name << ": " << (matches.empty() ? "" : matches.front().standing);
      continue;
    }
    ASSERT_EQ(matches.size(), 1U) << c.name;
    EXPECT_EQ(matches.front().severity, *c.expected) << c.name << ": " << matches.front().standing;
    EXPECT_FALSE(matches.front().standing.empty()) << c.name;
  }
}

const Catalog& catalog() {
  static const std::shared_ptr<const Catalog> c = *builtin_catalog();
  return *c;
}

TEST(Advisories, CheckReportsTheEnginesOwnChoice) {
  // No backend flag: vLLM's automatic choice for gpt-oss with FP8 KV on B200 is FLASHINFER, which VLLM-ADV-0021 names.
  auto matrix = builtin_matrix("vllm");
  ASSERT_TRUE(matrix.ok());
  CheckInput input;
  input.text = "vllm serve openai/gpt-oss-120b --kv-cache-dtype fp8\n";
  input.file_name = "serve.sh";
  CheckRun run;
  run.gpus = "B200";
  auto report = check_input(*matrix, catalog(), input, run);
  ASSERT_TRUE(report.ok()) << report.error().describe();
  bool found = false;
  for (const ReportFinding& f : report_findings(*report))
    if (f.finding.diagnostic.rule == "advisory.VLLM-ADV-0021") {
      found = true;
      EXPECT_EQ(f.finding.diagnostic.severity, Severity::warning);  // open, first affected release unknown
      EXPECT_NE(f.finding.diagnostic.message.find("--attention-backend TRITON_ATTN"), std::string::npos);
      EXPECT_EQ(f.finding.diagnostic.source, "https://github.com/vllm-project/vllm/issues/30919");
    }
  EXPECT_TRUE(found);
}

TEST(Advisories, EnvironmentFromTheFileIsMatched) {
  auto matrix = builtin_matrix("sglang");
  ASSERT_TRUE(matrix.ok());
  const std::string command =
      "python3 -m sglang.launch_server --model deepseek-ai/DeepSeek-V3.2 --attention-backend aiter "
      "--nsa-prefill-backend aiter --nsa-decode-backend aiter\n";
  for (const bool with_env : {true, false}) {
    CheckInput input;
    input.text = (with_env ? "export SGLANG_USE_AITER=1\n" : "") + command;
    input.file_name = "serve.sh";
    CheckRun run;
    run.gpus = "gfx950";
    auto report = check_input(*matrix, catalog(), input, run);
    ASSERT_TRUE(report.ok());
    bool found = false;
    for (const ReportFinding& f : report_findings(*report)) found |= f.finding.diagnostic.rule == "advisory.SGL-ADV-0012";
    EXPECT_EQ(found, with_env);
  }
}

struct CliRun {
  int code = -1;
  std::string out;
};

CliRun cli(const std::string& args) {
  CliRun r;
  const std::string command = std::string(ATTNSEL_CLI) + " " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) r.out.append(buffer.data(), n);
  const int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

TEST(Advisories, CommandListsAndFilters) {
  ASSERT_STRNE(ATTNSEL_CLI, "");
  CliRun all = cli("advisories --json");
  ASSERT_EQ(all.code, 0) << all.out;
  const json doc = json::parse(all.out);
  EXPECT_EQ(doc["kind"], "advisories");
  std::size_t total = 0;
  for (const std::string& engine : advisory_engines()) total += (*builtin_advisories(engine))->size();
  EXPECT_EQ(doc["advisories"].size(), total);

  CliRun filtered = cli("advisories --engine vllm --gpu B200 --backend FLASHINFER --json");
  ASSERT_EQ(filtered.code, 0) << filtered.out;
  const json some = json::parse(filtered.out);
  EXPECT_GT(some["advisories"].size(), 0U);
  EXPECT_LT(some["advisories"].size(), total);
  for (const json& a : some["advisories"]) {
    EXPECT_EQ(a["engine"], "vllm");
    if (!a["gpus"].empty()) {
      EXPECT_NE(a["gpus"].dump().find("sm100"), std::string::npos) << a["id"];
    }
    if (!a["backends"].empty()) {
      EXPECT_NE(a["backends"].dump().find("FLASHINFER"), std::string::npos) << a["id"];
    }
  }

  CliRun text = cli("advisories --engine sglang --effect wrong-output");
  ASSERT_EQ(text.code, 0) << text.out;
  EXPECT_NE(text.out.find("SGL-ADV-0001  wrong-output"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("VLLM-ADV-"), std::string::npos);

  // A release at or after an advisory's fix drops it.
  CliRun fixed = cli("advisories --engine vllm --engine-version 0.18.1 --json");
  ASSERT_EQ(fixed.code, 0);
  EXPECT_EQ(fixed.out.find("VLLM-ADV-0024"), std::string::npos);
  CliRun before = cli("advisories --engine vllm --engine-version 0.18.0 --json");
  EXPECT_NE(before.out.find("VLLM-ADV-0024"), std::string::npos);

  CliRun bad = cli("advisories --engine tgi");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.out.find("sglang"), std::string::npos) << bad.out;
  EXPECT_EQ(cli("advisories --engine-version banana").code, 2);
  EXPECT_EQ(cli("advisories --gpu sm999").code, 2);
}

}  // namespace
}  // namespace attnsel
