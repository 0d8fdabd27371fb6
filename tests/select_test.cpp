// The engine against a table of requests and expected plans (tests/cases/select.json).
#include <fstream>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "attnsel/catalog.hpp"
#include "attnsel/selection.hpp"

namespace attnsel {
namespace {

using json = nlohmann::json;

// A file may pin its rows to an engine ("engine": its built-in generations), a release, or a matrix
// file under tests/ ("matrix") at the top level; a row's own key wins. Rows may carry "source"
// (where upstream the expectation comes from), which the runner ignores. A missing file has no rows.
json load_cases(const char* file = "select.json") {
  std::ifstream in(std::string(ATTNSEL_TESTS_DIR) + "/cases/" + file);
  if (!in) return json::array();
  json doc = json::parse(in);
  json cases = doc["cases"];
  for (const char* key : {"engine", "release", "matrix"})
    if (doc.contains(key))
      for (auto& c : cases)
        if (!c.contains(key)) c[key] = doc[key];
  return cases;
}

std::optional<std::string> opt(const json& j, const char* key) {
  if (!j.contains(key)) return std::nullopt;
  return j[key].get<std::string>();
}

Result<Request> request_for(const Catalog& catalog, const json& c) {
  Request r;
  DeviceSpec spec{opt(c, "gpu"), c.contains("platform") ? parse_platform(c["platform"].get<std::string>()) : std::nullopt,
                  opt(c, "cuda"), "--gpu"};
  auto device = resolve_device(catalog, spec);
  if (!device) return device.error();
  r.device = *device;
  // "model" is a name; "model_file" a config.json under tests/.
  auto model = c.contains("model_file")
                   ? resolve_model(catalog, std::string(ATTNSEL_TESTS_DIR) + "/" + c["model_file"].get<std::string>())
                   : resolve_model(catalog, c["model"].get<std::string>());
  if (!model) return model.error();
  r.model = *model;
  r.model.sliding_window |= c.value("sliding_window", false);
  // The shape a config.json would give, for rules that read it.
  if (c.contains("architecture")) r.model.architecture = c["architecture"].get<std::string>();
  if (c.contains("kv_heads")) r.model.num_key_value_heads = c["kv_heads"].get<int>();
  if (c.contains("head_dim")) r.model.head_dim = c["head_dim"].get<int>();
  if (c.contains("mha_head_dim")) r.model.mha_head_dim = c["mha_head_dim"].get<int>();
  if (c.contains("num_heads")) r.model.num_attention_heads = c["num_heads"].get<int>();
  if (c.contains("qk_nope_head_dim")) r.model.qk_nope_head_dim = c["qk_nope_head_dim"].get<int>();
  r.model.attention_sinks |= c.value("sinks", false);
  if (c.contains("dtype")) r.dtype = *parse_compute_dtype(c["dtype"].get<std::string>());
  r.kv_cache_dtype = *parse_kv_dtype(c.value("kv", std::string("auto")));
  if (c.contains("page_size")) r.page_size = c["page_size"].get<int>();
  r.tensor_parallel_size = c.value("tp", 1);
  if (c.contains("installed")) {
    r.installed = c["installed"].get<std::vector<std::string>>();
    r.installed_known = true;
  }
  r.speculative_topk = c.value("topk", 0);
  r.attention = {opt(c, "attention_backend"), opt(c, "prefill_backend"), opt(c, "decode_backend")};
  r.linear = {opt(c, "linear"), opt(c, "linear_prefill"), opt(c, "linear_decode")};
  r.sparse = {std::nullopt, opt(c, "sparse_prefill"), opt(c, "sparse_decode")};
  r.deterministic = c.value("deterministic", false);
  r.strict = c.value("strict", false);
  r.prefer = *parse_preference(c.value("prefer", std::string("engine-default")));
  return r;
}

std::set<std::string> rule_ids(const std::vector<Finding>& fs) {
  std::set<std::string> out;
  for (const auto& f : fs) out.insert(f.rule->id);
  return out;
}

std::set<std::string> as_set(const json& j) { return j.get<std::set<std::string>>(); }

// A test name from a row's "name": letters and digits, the rest '_'.
std::string case_name(const ::testing::TestParamInfo<json>& param_info) {
  std::string n = param_info.param["name"].get<std::string>();
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

class SelectCase : public ::testing::TestWithParam<json> {};

TEST_P(SelectCase, MatchesExpectedPlan) {
  const json& c = GetParam();
  const json& e = c["expect"];
  // A case may name an engine release: the generation that describes it (data/engines/<engine>/generations.json).
  const std::string engine = c.value("engine", std::string("sglang"));
  auto matrix = c.contains("matrix") ? load_matrix_file(std::string(ATTNSEL_TESTS_DIR) + "/" + c["matrix"].get<std::string>())
                : c.contains("release") ? builtin_matrix(engine, parse_release(c["release"].get<std::string>()))
                                        : builtin_matrix(engine, std::nullopt);
  ASSERT_TRUE(matrix.ok()) << matrix.error().describe();
  auto catalog = builtin_catalog();
  ASSERT_TRUE(catalog.ok()) << catalog.error().describe();
  auto request = request_for(**catalog, c);
  ASSERT_TRUE(request.ok()) << request.error().describe();
  auto result = select(*matrix, *request);

  if (e.contains("error")) {
    ASSERT_FALSE(result.ok()) << "expected an error";
    const Error& err = result.error();
    EXPECT_EQ(e["error"], "unknown_name");
    EXPECT_EQ(err.code, ErrorCode::unknown_name);
    if (e.contains("suggestion")) { EXPECT_EQ(err.suggestion, e["suggestion"]); }
    if (e.contains("where")) { EXPECT_EQ(err.where, e["where"]); }
    if (e.contains("message")) { EXPECT_NE(err.message.find(e["message"].get<std::string>()), std::string::npos) << err.message; }
    EXPECT_FALSE(err.choices.empty());
    return;
  }
  ASSERT_TRUE(result.ok()) << result.error().describe();
  const Selection& s = *result;
  auto dump = [&] {
    std::string out;
    for (const auto* list : {&s.errors, &s.warnings, &s.notes})
      for (const auto& d : s.describe(*list)) out += "\n  [" + std::string(name_of(d.severity)) + "] " + d.rule + ": " + d.message;
    return out;
  };
  SCOPED_TRACE(c["name"].get<std::string>() + dump());

  auto name = [&](BackendId b) { return b == kNoBackend ? std::string("none") : s.name(b); };
  // ATTNSEL_REBASELINE=FILE: append what this plan gives for the keys the row expects (JSON Lines),
  // for re-deriving a table after the data changed on the engine's own word (docs/oracle.md).
  if (const char* path = std::getenv("ATTNSEL_REBASELINE")) {
    json got = {{"name", c["name"]}, {"ok", s.ok()}, {"prefill", name(s.backend(Phase::prefill))},
                {"decode", name(s.backend(Phase::decode))}, {"page_size", s.page.page_size},
                {"page_origin", std::string(name_of(s.page.origin))}, {"kv", std::string(name_of(s.kv_cache_dtype))},
                {"radix_cache", s.radix_cache}, {"errors", rule_ids(s.errors)}, {"warnings", rule_ids(s.warnings)},
                {"flags", s.flags()}, {"hybrid", s.slots.front().hybrid()},
                {"prefill_origin", std::string(name_of(s.slots.front().phase[0].origin))}};
    for (const char* slot : {"linear", "sparse"})
      if (const SlotPlan* sp = s.slot(slot)) got[slot] = {name(sp->phase[0].backend), name(sp->phase[1].backend)};
    std::ofstream(path, std::ios::app) << got.dump() << "\n";
  }
  EXPECT_EQ(s.ok(), e["ok"].get<bool>());
  if (e.contains("prefill")) { EXPECT_EQ(name(s.backend(Phase::prefill)), e["prefill"]); }
  if (e.contains("decode")) { EXPECT_EQ(name(s.backend(Phase::decode)), e["decode"]); }
  if (e.contains("hybrid")) { EXPECT_EQ(s.slots.front().hybrid(), e["hybrid"].get<bool>()); }
  if (e.contains("prefill_origin")) { EXPECT_EQ(name_of(s.slots.front().phase[0].origin), e["prefill_origin"]); }
  if (e.contains("page_size")) { EXPECT_EQ(s.page.page_size, e["page_size"].get<int>()); }
  if (e.contains("page_origin")) { EXPECT_EQ(name_of(s.page.origin), e["page_origin"]); }
  if (e.contains("kv")) { EXPECT_EQ(name_of(s.kv_cache_dtype), e["kv"]); }
  if (e.contains("cuda")) { EXPECT_EQ(to_string(*s.request.device.cuda), e["cuda"]); }
  if (e.contains("radix_cache")) { EXPECT_EQ(s.radix_cache, e["radix_cache"].get<bool>()); }
  for (const char* slot : {"linear", "sparse"}) {
    if (!e.contains(slot)) continue;
    const SlotPlan* sp = s.slot(slot);
    if (e[slot].is_null()) {  // the slot is not planned (it runs only inside other backends: Slot::only_with)
      EXPECT_EQ(sp, nullptr) << slot;
      continue;
    }
    ASSERT_NE(sp, nullptr) << slot;
    EXPECT_EQ(name(sp->phase[0].backend), e[slot][0]);
    EXPECT_EQ(name(sp->phase[1].backend), e[slot][1]);
  }
  if (e.contains("errors")) { EXPECT_EQ(rule_ids(s.errors), as_set(e["errors"])); }
  if (e.contains("warnings")) { EXPECT_EQ(rule_ids(s.warnings), as_set(e["warnings"])); }
  if (e.contains("notes")) {
    for (const auto& id : as_set(e["notes"])) EXPECT_TRUE(rule_ids(s.notes).count(id)) << "missing note " << id;
  }
  if (e.contains("flags")) { EXPECT_EQ(s.flags(), e["flags"].get<std::vector<std::string>>()); }
  if (e.contains("rejected")) {
    for (const auto& [backend, rules] : e["rejected"].items()) {
      auto it = std::find_if(s.rejected.begin(), s.rejected.end(), [&, &name = backend](const Rejection& r) {
        return s.name(r.backend) == name && s.matrix->backend(r.backend).slot == 0;
      });
      ASSERT_NE(it, s.rejected.end()) << backend << " not rejected";
      auto ids = rule_ids(it->reasons);
      for (const auto& id : as_set(rules)) EXPECT_TRUE(ids.count(id)) << backend << " lacks reason " << id;
    }
  }
  // Every finding renders to a message with no unfilled placeholder.
  for (const auto* list : {&s.errors, &s.warnings, &s.notes})
    for (const auto& d : s.describe(*list)) {
      EXPECT_FALSE(d.message.empty()) << d.rule;
      EXPECT_EQ(d.message.find('{'), std::string::npos) << d.message;
      EXPECT_FALSE(d.source.empty()) << d.rule;
    }
}

INSTANTIATE_TEST_SUITE_P(Table, SelectCase, ::testing::ValuesIn(load_cases().get<std::vector<json>>()),
                         case_name);

INSTANTIATE_TEST_SUITE_P(Generations, SelectCase, ::testing::ValuesIn(load_cases("generations.json").get<std::vector<json>>()),
                         case_name);

INSTANTIATE_TEST_SUITE_P(Main, SelectCase, ::testing::ValuesIn(load_cases("select-main.json").get<std::vector<json>>()),
                         case_name);

// A priority-list engine (tests/fixtures/matrices/priority.json): the walk, multiples, head sizes.
INSTANTIATE_TEST_SUITE_P(Priority, SelectCase,
                         ::testing::ValuesIn(load_cases("select-priority.json").get<std::vector<json>>()),
                         case_name);

// Issue 14: vLLM's rows (tests/cases/select-vllm.json) against the vLLM generation, each citing its line.
INSTANTIATE_TEST_SUITE_P(Vllm, SelectCase, ::testing::ValuesIn(load_cases("select-vllm.json").get<std::vector<json>>()),
                         case_name);

TEST(Select, VllmTableCitesItsSources) {
  const json cases = load_cases("select-vllm.json");
  EXPECT_GE(cases.size(), 80u);
  std::set<std::string> names, gpus;
  for (const auto& c : cases) {
    EXPECT_EQ(c.value("engine", std::string()), "vllm") << c["name"];
    EXPECT_TRUE(c.contains("source") && !c["source"].get<std::string>().empty()) << c["name"];
    EXPECT_TRUE(names.insert(c["name"].get<std::string>()).second) << "duplicate " << c["name"];
    gpus.insert(c.value("gpu", std::string()));
  }
  for (const char* gpu : {"T4", "A100", "H100", "B200", "GB10", "MI300X"}) EXPECT_TRUE(gpus.count(gpu)) << gpu;
}

// Issue 12: SGLang main's rows run against the newest generation and each cites its upstream line.
TEST(Select, MainTableCitesItsSources) {
  const json cases = load_cases("select-main.json");
  EXPECT_GE(cases.size(), 120u);
  std::set<std::string> names;
  for (const auto& c : cases) {
    EXPECT_TRUE(c.contains("source") && !c["source"].get<std::string>().empty()) << c["name"];
    EXPECT_FALSE(c.contains("release")) << c["name"];
    EXPECT_TRUE(names.insert(c["name"].get<std::string>()).second) << "duplicate " << c["name"];
  }
}

// A misspelt key ("prefill_attention_backend" for "prefill_backend") would leave the request at its
// default and could still meet a loose expectation: every key a row or its expectation carries is
// one the runner reads (or a comment).
TEST(Select, CaseRowsUseOnlyKnownKeys) {
  const std::set<std::string> row_keys = {
      "name", "comment", "source", "expect", "expect_note", "engine", "release", "matrix", "gpu", "platform", "cuda",
      "model", "model_file", "sliding_window", "architecture", "kv_heads", "head_dim", "mha_head_dim", "num_heads",
      "qk_nope_head_dim", "sinks", "dtype", "kv", "page_size", "tp", "installed", "topk", "attention_backend",
      "prefill_backend", "decode_backend", "linear", "linear_prefill", "linear_decode", "sparse_prefill",
      "sparse_decode", "deterministic", "strict", "prefer"};
  const std::set<std::string> expect_keys = {
      "ok",     "error",  "suggestion", "where",  "message",     "prefill", "decode",   "hybrid",
      "prefill_origin", "page_size", "page_origin", "kv", "cuda", "radix_cache", "linear", "sparse",
      "errors", "warnings", "notes", "flags", "rejected"};
  for (const char* file : {"select.json", "generations.json", "select-main.json", "select-priority.json", "select-vllm.json"}) {
    const json cases = load_cases(file);
    ASSERT_FALSE(cases.empty()) << file;
    for (const auto& c : cases) {
      for (const auto& [key, value] : c.items()) EXPECT_TRUE(row_keys.count(key)) << file << ": " << c["name"] << ": unknown key " << key;
      ASSERT_TRUE(c.contains("expect")) << file << ": " << c["name"];
      for (const auto& [key, value] : c["expect"].items())
        EXPECT_TRUE(expect_keys.count(key)) << file << ": " << c["name"] << ": unknown expect key " << key;
    }
  }
}

TEST(Select, CoversTheTableTheIssueAsksFor) {
  const json cases = load_cases();
  EXPECT_GE(cases.size(), 80u);
  std::set<std::string> kinds, dtypes;
  for (const auto& c : cases) {
    dtypes.insert(c.value("kv", std::string("auto")));
  }
  for (const char* d : {"auto", "bf16", "fp8_e4m3", "fp8_e5m2", "fp4_e2m1"}) EXPECT_TRUE(dtypes.count(d)) << d;
}

TEST(Select, IsDeterministicAndRepeatable) {
  auto matrix = *builtin_matrix();
  auto catalog = *builtin_catalog();
  Request r;
  r.device = *resolve_device(*catalog, DeviceSpec{std::string("sm90"), std::nullopt, std::nullopt, "--gpu"});
  r.model = *resolve_model(*catalog, "mla");
  auto a = select(matrix, r);
  auto b = select(matrix, r);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->flags(), b->flags());
  EXPECT_EQ(a->rejected.size(), b->rejected.size());
}

// Conditions on the model's architecture and shape: an unknown value never matches.
TEST(SelectShape, ArchitectureAndKvHeadConditions) {
  auto m = load_matrix(R"({
    "schema_version": 1,
    "matrix": {"engine": "e", "version": "1", "engine_version": "t", "source": "test"},
    "slots": [{"name": "attention", "kinds": ["mha", "mla"], "phased": false, "flag": "--b", "source": "s"}],
    "backends": [
      {"name": "a", "slot": "attention", "source": "s", "cells": [{"kinds": ["mha", "mla"], "platforms": ["cuda"], "page_size": "any", "kv_dtypes": ["auto"], "speculative": "none"}]},
      {"name": "b", "slot": "attention", "source": "s", "cells": [{"kinds": ["mha", "mla"], "platforms": ["cuda"], "page_size": "any", "kv_dtypes": ["auto"], "speculative": "none"}]}
    ],
    "rules": [{"id": "b-heads", "when": {"backend": "b", "head_dim": {"min": 257}},
               "message": "{title} takes head sizes up to 256", "source": "s"}],
    "selection": [
      {"id": "auto-b-arch", "slot": "attention", "when": {"architecture": ["FooForCausalLM"]}, "backend": "b", "message": "m", "source": "s"},
      {"id": "auto-b-heads", "slot": "attention", "when": {"kv_heads": [16, 128]}, "backend": "b", "message": "m", "source": "s"},
      {"id": "auto-a", "slot": "attention", "when": {"platform": "cuda"}, "backend": "a", "message": "m", "source": "s"}
    ]})", "shape.json");
  ASSERT_TRUE(m.ok()) << m.error().describe();
  auto catalog = builtin_catalog();
  Request r;
  r.device = *resolve_device(**catalog, DeviceSpec{"sm90", std::nullopt, std::nullopt, "--gpu"});
  auto pick = [&](const Request& req) { return select(*m, req)->backend(Phase::decode); };
  auto name = [&](BackendId id) { return (*m)->backend(id).name; };
  EXPECT_EQ(name(pick(r)), "a");  // nothing known about the model
  Request arch = r;
  arch.model.architecture = "FooForCausalLM";
  EXPECT_EQ(name(pick(arch)), "b");
  Request heads = r;
  heads.model.num_key_value_heads = 16;
  EXPECT_EQ(name(pick(heads)), "b");
  heads.model.num_key_value_heads = 8;
  EXPECT_EQ(name(pick(heads)), "a");
  Request big = r;
  big.attention.all = "b";
  big.model.head_dim = 512;
  auto s = select(*m, big);
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s->ok());
  EXPECT_EQ(rule_ids(s->errors).count("b-heads"), 1u);
}

// config_has / config_lacks test the keys of the model's config.json (traits_from_config); a
// model not read from one (a kind, a model id) matches neither, so such rules stay quiet.
TEST(SelectShape, ConfigKeyConditions) {
  auto m = load_matrix(R"({
    "schema_version": 1,
    "matrix": {"engine": "e", "version": "1", "engine_version": "t", "source": "test"},
    "slots": [{"name": "attention", "kinds": ["mha"], "phased": false, "flag": "--b", "source": "s"}],
    "backends": [
      {"name": "a", "slot": "attention", "source": "s", "cells": [{"kinds": ["mha"], "platforms": ["cuda"], "page_size": "any", "kv_dtypes": ["auto"], "speculative": "none"}]},
      {"name": "chunk", "slot": "attention", "source": "s", "cells": [{"kinds": ["mha"], "platforms": ["cuda"], "page_size": "any", "kv_dtypes": ["auto"], "speculative": "none"}]}
    ],
    "rules": [{"id": "chunk-needs-key", "when": {"backend": "chunk", "config_lacks": ["dual_chunk_attention_config"]},
               "message": "{title} needs the key", "source": "s"}],
    "selection": [
      {"id": "auto-chunk", "slot": "attention", "when": {"config_has": ["dual_chunk_attention_config"]}, "backend": "chunk", "message": "m", "source": "s"},
      {"id": "auto-a", "slot": "attention", "backend": "a", "message": "m", "source": "s"}
    ]})", "config-keys.json");
  ASSERT_TRUE(m.ok()) << m.error().describe();
  auto catalog = builtin_catalog();
  auto model = [&](const char* config) {
    auto t = traits_from_config(**catalog, config, "config.json");
    EXPECT_TRUE(t.ok()) << t.error().describe();
    return *t;
  };
  Request r;
  r.device = *resolve_device(**catalog, DeviceSpec{"sm90", std::nullopt, std::nullopt, "--gpu"});
  auto plan = [&](const ModelTraits& t, std::optional<std::string> backend) {
    Request req = r;
    req.model = t;
    req.attention.all = std::move(backend);
    return *select(*m, req);
  };
  const char* with = R"({"architectures": ["Qwen2ForCausalLM"], "num_attention_heads": 40,
                        "text_config": {"dual_chunk_attention_config": {"chunk_size": 262144}}})";
  const char* without = R"({"architectures": ["Qwen2ForCausalLM"], "num_attention_heads": 40,
                           "dual_chunk_attention_config": null})";
  EXPECT_EQ(plan(model(with), std::nullopt).name(plan(model(with), std::nullopt).backend(Phase::decode)), "chunk");
  EXPECT_EQ(plan(model(without), std::nullopt).name(plan(model(without), std::nullopt).backend(Phase::decode)), "a");
  EXPECT_TRUE(plan(model(with), "chunk").ok());
  const Selection refused = plan(model(without), "chunk");  // a null key is no key
  EXPECT_EQ(rule_ids(refused.errors), std::set<std::string>{"chunk-needs-key"});
  ModelTraits by_kind;  // no config.json read: neither condition holds
  EXPECT_TRUE(plan(by_kind, "chunk").ok());
  EXPECT_EQ(plan(by_kind, std::nullopt).name(plan(by_kind, std::nullopt).backend(Phase::decode)), "a");
  // An empty key list says nothing: the loader refuses it.
  auto empty = load_matrix(R"({"schema_version": 1, "matrix": {"engine": "e", "version": "1", "engine_version": "t", "source": "test"},
    "slots": [{"name": "attention", "kinds": ["mha"], "phased": false, "flag": "--b", "source": "s"}],
    "backends": [{"name": "a", "slot": "attention", "source": "s", "cells": [{"kinds": ["mha"], "platforms": ["cuda"], "page_size": "any", "kv_dtypes": ["auto"], "speculative": "none"}]}],
    "rules": [{"id": "r", "when": {"config_has": []}, "message": "m", "source": "s"}],
    "selection": [{"id": "auto-a", "slot": "attention", "backend": "a", "message": "m", "source": "s"}]})", "empty.json");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.error().message.find("expected at least one config.json key"), std::string::npos) << empty.error().describe();
}

}  // namespace
}  // namespace attnsel
