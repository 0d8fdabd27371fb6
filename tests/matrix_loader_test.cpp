// The matrix loader: every bad file in tests/fixtures/matrices/bad fails with the code, location
// and message its expectations.json row names; the real matrix and the minimal one load intact;
// hostile inputs (100 MB, deep nesting, number overflow) end in a value, never a crash.
#include <gtest/gtest.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <ostream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnsel/matrix.hpp"

#ifndef ATTNSEL_SOURCE_DIR
#define ATTNSEL_SOURCE_DIR "."
#endif
#ifndef ATTNSEL_TESTS_DIR
#define ATTNSEL_TESTS_DIR "tests"
#endif

namespace attnsel {
namespace {

using json = nlohmann::json;

const std::string kMatrices = std::string(ATTNSEL_TESTS_DIR) + "/fixtures/matrices/";
const std::string kBadDir = kMatrices + "bad/";
const std::string kExpectations = kBadDir + "expectations.json";
const std::string kSglang = std::string(ATTNSEL_SOURCE_DIR) + "/data/engines/sglang/matrix-0.5.12.json";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::invalid_argument: return "invalid_argument";
    case ErrorCode::unknown_name: return "unknown_name";
    case ErrorCode::parse_error: return "parse_error";
    case ErrorCode::invalid_matrix: return "invalid_matrix";
    case ErrorCode::io_error: return "io_error";
    case ErrorCode::no_device: return "no_device";
  }
  return "?";
}

// ---- the bad-matrix table ----

struct BadCase {
  std::string file;
  std::string code;     // "parse_error" | "invalid_matrix"
  std::string where;    // exact suffix after the origin: ":3:17" or "#/backends/0/..."
  std::string message;  // a substring of the message
};

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.file; }

// Read at registration time; a broken table yields no cases, and BadMatrixTable below fails.
std::vector<BadCase> load_bad_cases() {
  std::vector<BadCase> cases;
  const json table = json::parse(read_file(kExpectations), nullptr, /*allow_exceptions=*/false);
  if (!table.is_object()) return cases;
  for (auto it = table.begin(); it != table.end(); ++it) {
    const json& row = it.value();
    cases.push_back({it.key(), row.value("code", ""), row.value("where", ""), row.value("message", "")});
  }
  return cases;
}

std::string case_name(const testing::TestParamInfo<BadCase>& info) {
  std::string name = info.param.file.substr(0, info.param.file.rfind(".json"));
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

class BadMatrixTest : public testing::TestWithParam<BadCase> {};

TEST_P(BadMatrixTest, FailsWithTheExpectedCodeLocationAndMessage) {
  const BadCase& c = GetParam();
  const std::string text = read_file(kBadDir + c.file);
  std::unique_ptr<Result<std::shared_ptr<const Matrix>>> loaded;
  // Errors are values at the boundary: an exception escaping load_matrix is a bug of its own.
  ASSERT_NO_THROW(loaded = std::make_unique<Result<std::shared_ptr<const Matrix>>>(load_matrix(text, c.file)));
  ASSERT_FALSE(loaded->ok()) << c.file << " loaded, but should fail: " << c.message;
  const Error& e = loaded->error();
  EXPECT_EQ(code_name(e.code), c.code) << e.describe();
  EXPECT_EQ(e.where, c.file + c.where) << e.describe();
  EXPECT_NE(e.message.find(c.message), std::string::npos)
      << "message \"" << e.message << "\" lacks \"" << c.message << "\"";
  // describe() is what people read: it carries the location and the message.
  const std::string line = e.describe();
  EXPECT_NE(line.find(e.where), std::string::npos) << line;
  EXPECT_NE(line.find(e.message), std::string::npos) << line;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, BadMatrixTest, testing::ValuesIn(load_bad_cases()), case_name);

TEST(BadMatrixTable, CoversEveryFileInTheFolderAndNothingElse) {
  const std::vector<BadCase> cases = load_bad_cases();
  ASSERT_GE(cases.size(), 30u) << "expectations.json is missing, malformed or too small: " << kExpectations;
  std::set<std::string> in_table;
  for (const auto& c : cases) in_table.insert(c.file);
  std::set<std::string> on_disk;
  for (const auto& entry : std::filesystem::directory_iterator(kBadDir)) {
    const std::string name = entry.path().filename().string();
    if (name != "expectations.json") on_disk.insert(name);
  }
  for (const auto& name : on_disk) EXPECT_TRUE(in_table.count(name)) << name << " has no row in expectations.json";
  for (const auto& name : in_table) EXPECT_TRUE(on_disk.count(name)) << "expectations.json names " << name << ", which does not exist";
}

TEST(BadMatrixTable, RowsAreWellFormed) {
  const std::regex line_col(R"(:[0-9]+:[0-9]+)");
  for (const auto& c : load_bad_cases()) {
    SCOPED_TRACE(c.file);
    EXPECT_FALSE(c.message.empty());
    if (c.code == "invalid_matrix") {
      EXPECT_EQ(c.where.rfind("#/", 0), 0u) << "a semantic error points into the document: " << c.where;
    } else if (c.code == "parse_error") {
      // Empty only for duplicate keys, which the reader reports without a position today.
      EXPECT_TRUE(c.where.empty() || std::regex_match(c.where, line_col)) << c.where;
    } else {
      ADD_FAILURE() << "code must be parse_error or invalid_matrix, not \"" << c.code << "\"";
    }
  }
}

// ---- the minimal valid matrix, part by part ----

class MinimalMatrixTest : public testing::Test {
 protected:
  void SetUp() override {
    auto loaded = load_matrix_file(kMatrices + "minimal.json");
    ASSERT_TRUE(loaded.ok()) << loaded.error().describe();
    m = loaded.value();
  }
  std::shared_ptr<const Matrix> m;
};

TEST_F(MinimalMatrixTest, Info) {
  EXPECT_EQ(m->info().engine, "sglang");
  EXPECT_EQ(m->info().version, "0.0.1");
  EXPECT_EQ(m->info().engine_version, "test");
  EXPECT_EQ(m->info().schema_version, 1);
  EXPECT_EQ(m->info().description, "");
  EXPECT_EQ(m->info().origin, kMatrices + "minimal.json");
  EXPECT_EQ(m->default_page_size(), 1);  // absent: 1
}

TEST_F(MinimalMatrixTest, Slot) {
  ASSERT_EQ(m->slots().size(), 1u);
  const Slot& s = m->slot(0);
  EXPECT_EQ(s.name, "attention");
  EXPECT_EQ(s.title, "attention");  // defaults to the name
  EXPECT_EQ(s.kinds, EnumSet<AttentionKind>{AttentionKind::mha});
  EXPECT_TRUE(s.joint);
  EXPECT_EQ(s.flag, "--attention-backend");
  EXPECT_EQ(s.prefill_flag, "--prefill-attention-backend");
  EXPECT_EQ(s.decode_flag, "--decode-attention-backend");
  EXPECT_TRUE(s.flag_aliases.empty());
  EXPECT_FALSE(s.sglang_default.has_value());
  EXPECT_EQ(s.source, "test: slot");
  EXPECT_EQ(m->find_slot("attention"), std::optional<SlotId>(0));
  EXPECT_FALSE(m->find_slot("linear").has_value());
}

TEST_F(MinimalMatrixTest, BackendAndCell) {
  ASSERT_EQ(m->backends().size(), 1u);
  const Backend& b = m->backend(0);
  EXPECT_EQ(b.name, "triton");
  EXPECT_EQ(b.title, "triton");  // defaults to the name
  EXPECT_EQ(b.slot, 0);
  EXPECT_EQ(b.source, "test: backend");
  EXPECT_EQ(b.pointer, "/backends/0");
  EXPECT_EQ(m->find_backend("triton"), std::optional<BackendId>(0));
  EXPECT_FALSE(m->find_backend("fa3").has_value());
  EXPECT_EQ(m->backend_names(0), std::vector<std::string>{"triton"});

  ASSERT_EQ(b.cells.size(), 1u);
  const Cell& c = b.cells[0];
  EXPECT_EQ(c.kinds, EnumSet<AttentionKind>{AttentionKind::mha});
  EXPECT_EQ(c.platforms, EnumSet<Platform>{Platform::cuda});
  ASSERT_EQ(c.compute_capability.size(), 1u);
  ASSERT_TRUE(c.compute_capability[0].min.has_value());
  EXPECT_EQ(*c.compute_capability[0].min, (Version{8, 0}));
  EXPECT_FALSE(c.compute_capability[0].max.has_value());
  EXPECT_FALSE(c.min_cuda.has_value());
  EXPECT_EQ(c.phases, (EnumSet<Phase>{Phase::prefill, Phase::decode}));  // absent: both
  EXPECT_EQ(c.page_size.mode, PageMode::fixed);
  EXPECT_EQ(c.page_size.sizes, (std::vector<int>{16, 64}));
  EXPECT_TRUE(c.page_size.allows(64));
  EXPECT_FALSE(c.page_size.allows(32));
  EXPECT_EQ(c.kv_dtypes, (EnumSet<KvCacheDtype>{KvCacheDtype::auto_, KvCacheDtype::bf16}));
  EXPECT_EQ(c.speculative, TopkSupport::one);
  EXPECT_FALSE(c.preferred_page_size.has_value());
  for (int f = 0; f < kFeatureCount; ++f) EXPECT_FALSE(c.has(static_cast<Feature>(f))) << name_of(static_cast<Feature>(f));
  EXPECT_EQ(c.source, "test: backend");  // inherited from the backend
  EXPECT_EQ(c.pointer, "/backends/0/cells/0");

  EXPECT_EQ(m->cell_for(0, AttentionKind::mha, Platform::cuda), &c);
  EXPECT_EQ(m->cell_for(0, AttentionKind::mla, Platform::cuda), nullptr);
  EXPECT_EQ(m->cell_for(0, AttentionKind::mha, Platform::rocm), nullptr);
}

TEST_F(MinimalMatrixTest, Rule) {
  ASSERT_EQ(m->rules().size(), 1u);
  const Rule& r = m->rules()[0];
  EXPECT_EQ(r.info.id, "triton-fp8");
  EXPECT_EQ(r.info.severity, Severity::warning);
  EXPECT_EQ(r.info.message, "{title} with {kv_dtype} is slow");
  EXPECT_EQ(r.info.source, "test: rule");
  EXPECT_EQ(r.info.pointer, "/rules/0");
  EXPECT_EQ(r.scope, RuleScope::backend);  // absent: backend
  EXPECT_EQ(r.slot, 0);
  EXPECT_FALSE(r.strict_error);
  EXPECT_FALSE(r.set.any());
  EXPECT_EQ(r.when.fields, Condition::f_backend | Condition::f_kv_dtype);
  EXPECT_TRUE(r.when.backend.test(0));
  EXPECT_EQ(r.when.backend.count(), 1u);
  EXPECT_EQ(r.when.kv_dtype, EnumSet<KvCacheDtype>{KvCacheDtype::fp8_e4m3});

  EXPECT_EQ(m->find_rule("triton-fp8"), &r);
  EXPECT_EQ(m->find_rule("auto-triton"), nullptr);  // selection entries are not rules
  ASSERT_EQ(m->rules_in(RuleScope::backend).size(), 1u);
  EXPECT_EQ(m->rules_in(RuleScope::backend)[0], &r);
  EXPECT_TRUE(m->rules_in(RuleScope::request).empty());
  EXPECT_TRUE(m->rules_in(RuleScope::plan).empty());
  ASSERT_EQ(m->backend_rules(0).size(), 1u);
  EXPECT_EQ(m->backend_rules(0)[0], &r);
  for (int f = 0; f < kFeatureCount; ++f) EXPECT_EQ(m->feature_rule(static_cast<Feature>(f)), nullptr);
}

TEST_F(MinimalMatrixTest, SelectionEntry) {
  ASSERT_EQ(m->selection().size(), 1u);
  const SelectionEntry& e = m->selection()[0];
  EXPECT_EQ(e.info.id, "auto-triton");
  EXPECT_EQ(e.info.severity, Severity::info);
  EXPECT_EQ(e.info.message, "CUDA defaults to triton");
  EXPECT_EQ(e.info.source, "test: selection");
  EXPECT_EQ(e.info.pointer, "/selection/0");
  EXPECT_EQ(e.slot, 0);
  EXPECT_EQ(e.backend, 0);
  EXPECT_EQ(e.phases, (EnumSet<Phase>{Phase::prefill, Phase::decode}));
  EXPECT_EQ(e.when.fields, Condition::f_platform);
  EXPECT_EQ(e.when.platform, EnumSet<Platform>{Platform::cuda});
}

TEST_F(MinimalMatrixTest, BuiltinRulesHaveStableIds) {
  EXPECT_EQ(m->builtin(BuiltinRule::kind).id, "cell.kind");
  EXPECT_EQ(m->builtin(BuiltinRule::page_size).id, "cell.page-size");
  EXPECT_EQ(m->builtin(BuiltinRule::no_backend).id, "select.no-backend");
  EXPECT_EQ(m->builtin(BuiltinRule::page_rewrite_conflict).id, "page.rewrite-conflict");
  for (std::size_t i = 0; i < static_cast<std::size_t>(BuiltinRule::count); ++i) {
    const RuleInfo& info = m->builtin(static_cast<BuiltinRule>(i));
    EXPECT_FALSE(info.id.empty()) << i;
    EXPECT_FALSE(info.message.empty()) << info.id;
    EXPECT_FALSE(info.source.empty()) << info.id;
  }
}

// One kind on one platform split by GPU: each cell names compute capability ranges no GPU falls in
// twice (SGLang v0.5.12's FA4 pages at 128 only on SM90, at any size on SM100). The GPU picks its cell;
// a GPU in neither gets the first, whose range check then rejects it.
TEST(MatrixLoaderTest, CellsSplitByComputeCapability) {
  std::ifstream in(kMatrices + "minimal.json");
  json j = json::parse(in);
  json& cells = j["backends"][0]["cells"];
  cells[0]["compute_capability"] = {{"min", "9.0"}, {"max", "10.0"}};
  cells[0]["page_size"] = {128};
  json sm100 = cells[0];
  sm100["compute_capability"] = {{"min", "10.0"}, {"max", "11.0"}};
  sm100["page_size"] = "any";
  cells.push_back(sm100);
  auto m = load_matrix(j.dump(), "split.json");
  ASSERT_TRUE(m.ok()) << m.error().describe();
  const Backend& b = (*m)->backend(0);
  ASSERT_EQ(b.cells.size(), 2u);
  EXPECT_EQ((*m)->cell_for(0, AttentionKind::mha, Platform::cuda, Version{9, 0}), &b.cells[0]);
  EXPECT_EQ((*m)->cell_for(0, AttentionKind::mha, Platform::cuda, Version{10, 0}), &b.cells[1]);
  EXPECT_EQ((*m)->cell_for(0, AttentionKind::mha, Platform::cuda, Version{8, 0}), &b.cells[0]);
  EXPECT_EQ((*m)->cell_for(0, AttentionKind::mha, Platform::cuda), &b.cells[0]);

  // Ranges that share a GPU (9.5 up to 10.0 here) are still an overlap.
  cells[1]["compute_capability"] = {{"min", "9.5"}, {"max", "11.0"}};
  auto overlapping = load_matrix(j.dump(), "split.json");
  ASSERT_FALSE(overlapping.ok());
  EXPECT_NE(overlapping.error().message.find("share a GPU"), std::string::npos) << overlapping.error().message;
  // So is a cell without a range beside one with a range.
  cells[1].erase("compute_capability");
  EXPECT_FALSE(load_matrix(j.dump(), "split.json").ok());
}

// "set": {"kind": ...}: the engine runs the model as another attention kind; request scope only.
TEST(MatrixLoaderTest, KindChangeIsARequestScopeEffect) {
  std::ifstream in(kMatrices + "minimal.json");
  const json base = json::parse(in);
  json j = base;
  j["rules"].push_back({{"id", "runs-as-mha"}, {"scope", "request"}, {"severity", "info"},
                        {"when", {{"kind", "mla"}}}, {"set", {{"kind", "mha"}}},
                        {"message", "runs as mha"}, {"source", "test"}});
  auto m = load_matrix(j.dump(), "kind.json");
  ASSERT_TRUE(m.ok()) << m.error().describe();
  const Rule* r = (*m)->find_rule("runs-as-mha");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->set.kind, std::optional<AttentionKind>(AttentionKind::mha));

  j["rules"].back()["set"]["kind"] = "mqa";
  auto unknown = load_matrix(j.dump(), "kind.json");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("valid: mha"), std::string::npos) << unknown.error().message;

  j["rules"].back()["set"]["kind"] = "mha";
  j["rules"].back()["scope"] = "backend";
  j["rules"].back()["when"] = {{"backend", "triton"}};
  auto backend_scope = load_matrix(j.dump(), "kind.json");
  ASSERT_FALSE(backend_scope.ok());
  EXPECT_NE(backend_scope.error().message.find("needs scope \"request\""), std::string::npos)
      << backend_scope.error().message;
}

TEST(MatrixEnumNames, FeatureAndTopkSupport) {
  EXPECT_EQ(name_of(Feature::sliding_window), "sliding_window");
  EXPECT_EQ(name_of(Feature::attention_sinks), "attention_sinks");
  EXPECT_EQ(name_of(Feature::chunked_prefix_cache), "chunked_prefix_cache");
  EXPECT_EQ(name_of(TopkSupport::one), "topk1");
  EXPECT_EQ(name_of(TopkSupport::many_at_page1), "topk>1 at page 1");  // as spelled in the matrix
}

// ---- the real matrix ----

TEST(SglangMatrixTest, BuiltinAndFileLoadAndAgree) {
  // data/engines/sglang/matrix-0.5.12.json is the v0.5.12 generation; newer ones (matrix-0.5.13.json) extend it.
  auto builtin = builtin_matrix_file("engines/sglang/matrix-0.5.12.json");
  ASSERT_TRUE(builtin.ok()) << builtin.error().describe();
  auto file = load_matrix_file(kSglang);
  ASSERT_TRUE(file.ok()) << file.error().describe();
  const Matrix& a = **builtin;
  const Matrix& b = **file;
  EXPECT_EQ(a.info().origin, "built-in:engines/sglang/matrix-0.5.12.json");
  EXPECT_EQ(b.info().origin, kSglang);
  EXPECT_EQ(a.info().engine, "sglang");
  ASSERT_EQ(a.backends().size(), b.backends().size());
  for (std::size_t i = 0; i < a.backends().size(); ++i) EXPECT_EQ(a.backends()[i].name, b.backends()[i].name);
  ASSERT_EQ(a.rules().size(), b.rules().size());
  for (std::size_t i = 0; i < a.rules().size(); ++i) EXPECT_EQ(a.rules()[i].info.id, b.rules()[i].info.id);
  EXPECT_EQ(a.selection().size(), b.selection().size());
  // Loaded once and shared.
  EXPECT_EQ(builtin.value().get(), builtin_matrix_file("engines/sglang/matrix-0.5.12.json").value().get());
  EXPECT_EQ(builtin_matrix().value().get(), builtin_matrix("sglang", parse_release("0.5.17")).value().get());
}

TEST(SglangMatrixTest, HasTheSlotsAndBackendsSglangHas) {
  auto m = load_matrix_file(kSglang);
  ASSERT_TRUE(m.ok()) << m.error().describe();
  const auto attention = (*m)->find_slot("attention");
  const auto linear = (*m)->find_slot("linear");
  const auto sparse = (*m)->find_slot("sparse");
  ASSERT_TRUE(attention && linear && sparse);
  for (const char* name : {"flashinfer", "fa3", "fa4", "triton", "flashmla", "cutlass_mla", "trtllm_mla", "trtllm_mha", "dsa"})
    EXPECT_TRUE((*m)->find_backend(name, *attention).has_value()) << name;
  EXPECT_EQ((*m)->find_backend("nsa", *attention), (*m)->find_backend("dsa", *attention));  // deprecated alias
  EXPECT_TRUE((*m)->find_backend("cutedsl", *linear).has_value());
  EXPECT_FALSE((*m)->find_backend("cutedsl", *attention).has_value());
  // Same name, different slots: distinct backends.
  EXPECT_NE((*m)->find_backend("triton", *attention), (*m)->find_backend("triton", *linear));
  ASSERT_TRUE((*m)->slot(*linear).sglang_default.has_value());
  EXPECT_EQ((*m)->backend(*(*m)->slot(*linear).sglang_default).name, "triton");
}

TEST(SglangMatrixTest, EveryFactHasASource) {
  auto m = load_matrix_file(kSglang);
  ASSERT_TRUE(m.ok()) << m.error().describe();
  for (const auto& s : (*m)->slots()) EXPECT_FALSE(s.source.empty()) << "slot " << s.name;
  for (const auto& b : (*m)->backends()) {
    EXPECT_FALSE(b.source.empty()) << "backend " << b.pointer;
    for (const auto& c : b.cells) EXPECT_FALSE(c.source.empty()) << "cell " << c.pointer;
  }
  for (const auto& r : (*m)->rules()) EXPECT_FALSE(r.info.source.empty()) << "rule " << r.info.id;
  for (const auto& e : (*m)->selection()) EXPECT_FALSE(e.info.source.empty()) << "selection " << e.info.id;
  for (int f = 0; f < kFeatureCount; ++f) {
    if (const FeatureRule* fr = (*m)->feature_rule(static_cast<Feature>(f))) {
      EXPECT_FALSE(fr->info.source.empty()) << "feature " << name_of(static_cast<Feature>(f));
    }
  }
  EXPECT_FALSE((*m)->info().source.empty());
}

// Error messages and reports name entries by pointer: each must lead back to the entry in the file.
TEST(SglangMatrixTest, PointersLeadBackToTheirEntries) {
  auto m = load_matrix_file(kSglang);
  ASSERT_TRUE(m.ok()) << m.error().describe();
  const json doc = json::parse(read_file(kSglang));
  for (const auto& b : (*m)->backends()) {
    ASSERT_TRUE(doc.contains(json::json_pointer(b.pointer))) << b.pointer;
    EXPECT_EQ(doc.at(json::json_pointer(b.pointer)).at("name"), b.name);
    for (const auto& c : b.cells) EXPECT_TRUE(doc.contains(json::json_pointer(c.pointer))) << c.pointer;
  }
  for (const auto& r : (*m)->rules()) {
    ASSERT_TRUE(doc.contains(json::json_pointer(r.info.pointer))) << r.info.pointer;
    EXPECT_EQ(doc.at(json::json_pointer(r.info.pointer)).at("id"), r.info.id);
  }
  for (const auto& e : (*m)->selection()) {
    ASSERT_TRUE(doc.contains(json::json_pointer(e.info.pointer))) << e.info.pointer;
    EXPECT_EQ(doc.at(json::json_pointer(e.info.pointer)).at("id"), e.info.id);
  }
}

TEST(SglangMatrixTest, RuleAndSelectionIdsAreUnique) {
  auto m = load_matrix_file(kSglang);
  ASSERT_TRUE(m.ok()) << m.error().describe();
  std::set<std::string> ids;
  for (const auto& r : (*m)->rules()) EXPECT_TRUE(ids.insert(r.info.id).second) << r.info.id;
  for (const auto& e : (*m)->selection()) EXPECT_TRUE(ids.insert(e.info.id).second) << e.info.id;
}

// ---- inputs that are not files of the format at all ----

TEST(MatrixLoaderTest, MissingFileIsAnIoError) {
  const std::string path = kMatrices + "no-such-matrix.json";
  auto r = load_matrix_file(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::io_error);
  EXPECT_EQ(r.error().where, path);
}

TEST(MatrixLoaderTest, DescribePutsLocationMessageAndSuggestionOnOneLine) {
  auto r = load_matrix_file(kBadDir + "rule_unknown_backend.json");
  ASSERT_FALSE(r.ok());
  const std::string line = r.error().describe();
  EXPECT_EQ(line.rfind(kBadDir + "rule_unknown_backend.json#/rules/0/when/backend: ", 0), 0u) << line;
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;
}

// nlohmann reports "1e400" as out_of_range, not parse_error: it must still come back as a value.
TEST(MatrixLoaderTest, NumberOverflowIsAParseErrorNotAnException) {
  std::string text = read_file(kMatrices + "minimal.json");
  const std::string sizes = "\"page_size\": [16, 64]";
  ASSERT_NE(text.find(sizes), std::string::npos);
  text.replace(text.find(sizes), sizes.size(), "\"page_size\": [16, 1e400]");
  std::unique_ptr<Result<std::shared_ptr<const Matrix>>> loaded;
  ASSERT_NO_THROW(loaded = std::make_unique<Result<std::shared_ptr<const Matrix>>>(load_matrix(text, "overflow.json")));
  ASSERT_FALSE(loaded->ok());
  EXPECT_EQ(loaded->error().code, ErrorCode::parse_error) << loaded->error().describe();
  EXPECT_EQ(loaded->error().where.rfind("overflow.json", 0), 0u) << loaded->error().describe();
}

// ---- size and depth: bounded time, no crash ----

constexpr std::size_t kHuge = std::size_t{100} << 20;  // 100 MiB

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string minimal_with(const std::string& old_text, const std::string& new_text) {
  std::string text = read_file(kMatrices + "minimal.json");
  const auto at = text.find(old_text);
  if (at == std::string::npos) return {};
  return text.replace(at, old_text.size(), new_text);
}

TEST(MatrixLoaderLargeInputTest, HundredMegabyteStringIsReadInBoundedTime) {
  const std::string text =
      minimal_with("\"engine_version\": \"test\",", "\"engine_version\": \"test\", \"description\": \"" + std::string(kHuge, 'd') + "\",");
  ASSERT_GT(text.size(), kHuge);
  const auto start = std::chrono::steady_clock::now();
  auto r = load_matrix(text, "huge.json");
  EXPECT_LT(seconds_since(start), 60.0);
  ASSERT_TRUE(r.ok()) << r.error().message.substr(0, 200);
  EXPECT_EQ((*r)->info().description.size(), kHuge);
}

TEST(MatrixLoaderLargeInputTest, HundredMegabyteBackendNameIsRejectedInBoundedTime) {
  const std::string text = minimal_with("\"backend\": \"triton\",\n      \"message\": \"CUDA",
                                        "\"backend\": \"" + std::string(kHuge, 't') + "\",\n      \"message\": \"CUDA");
  ASSERT_GT(text.size(), kHuge);
  const auto start = std::chrono::steady_clock::now();
  auto r = load_matrix(text, "huge.json");
  EXPECT_LT(seconds_since(start), 60.0);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::invalid_matrix);
  EXPECT_EQ(r.error().where, "huge.json#/selection/0/backend");
  EXPECT_EQ(r.error().message.rfind("unknown backend \"ttt", 0), 0u) << r.error().message.substr(0, 200);
  EXPECT_EQ(r.error().message.find("did you mean"), std::string::npos);  // 100 MB is no typo
}

TEST(MatrixLoaderLargeInputTest, HundredMegabyteUnterminatedStringIsAParseError) {
  std::string text = read_file(kMatrices + "minimal.json");
  text.resize(text.find("\"engine\": \"") + 11);  // cut inside the engine string ...
  text.append(kHuge, 'e');                       // ... and never close it
  const auto start = std::chrono::steady_clock::now();
  auto r = load_matrix(text, "huge.json");
  EXPECT_LT(seconds_since(start), 60.0);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::parse_error);
  EXPECT_EQ(r.error().where, "huge.json:4:" + std::to_string(16 + kHuge)) << r.error().where;
}

// A crash takes the whole process down, so each deep input runs in a child (a death test that
// expects a clean exit). Either verdict is fine; only a crash fails.
std::string nested_not(std::size_t depth) {
  std::string cond;
  cond.reserve(depth * 10 + 32);
  for (std::size_t i = 0; i < depth; ++i) cond += "{\"not\": ";
  cond += "{\"platform\": \"cuda\"}";
  cond.append(depth, '}');
  return minimal_with("\"when\": {\"platform\": \"cuda\"}", "\"when\": " + cond);
}

TEST(MatrixLoaderDeathTest, ModeratelyNestedConditionsLoad) {
  const std::string text = nested_not(30);
  ASSERT_FALSE(text.empty());
  auto r = load_matrix(text, "nested.json");
  EXPECT_TRUE(r.ok()) << r.error().describe();
}

TEST(MatrixLoaderDeathTest, NestingBeyondTheLimitIsAnError) {
  auto r = load_matrix(nested_not(1000), "nested.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::invalid_matrix);
  EXPECT_NE(r.error().message.find("nest deeper than"), std::string::npos) << r.error().describe();
}

TEST(MatrixLoaderDeathTest, DeeplyNestedConditionsDoNotCrash) {
  const std::string text = nested_not(100000);
  ASSERT_FALSE(text.empty());
  EXPECT_EXIT(
      {
        auto r = load_matrix(text, "nested.json");
        // The reader refuses JSON nested deeper than 4096 levels before any walker recurses.
        std::exit(r.ok() || r.error().code == ErrorCode::invalid_matrix ||
                          r.error().message.find("nested deeper than") != std::string::npos
                      ? 0
                      : 1);
      },
      testing::ExitedWithCode(0), "");
}

TEST(MatrixLoaderDeathTest, DeeplyNestedArraysDoNotCrash) {
  const std::size_t depth = 1000000;
  const std::string text =
      minimal_with("\"source\": \"test: slot\"", "\"source\": \"test: slot\", \"x\": " + std::string(depth, '[') + std::string(depth, ']'));
  ASSERT_FALSE(text.empty());
  EXPECT_EXIT(
      {
        auto r = load_matrix(text, "nested.json");
        std::exit(!r.ok() ? 0 : 1);  // "x" is an unknown key
      },
      testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace attnsel
