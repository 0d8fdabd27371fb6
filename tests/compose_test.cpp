// Matrix generations: "extends" composition, the registry of built-in matrices, and diffs.
#include <gtest/gtest.h>

#include "attnsel/matrix.hpp"
#include "attnsel/render.hpp"

namespace attnsel {
namespace {

std::string fixture(const std::string& name) { return std::string(ATTNSEL_TESTS_DIR) + "/fixtures/matrices/extends/" + name; }

TEST(Compose, AnOverlayAddsAndPlacesEntries) {
  auto m = load_matrix_file(fixture("adds_backend.json"));
  ASSERT_TRUE(m.ok()) << m.error().describe();
  EXPECT_EQ((*m)->info().version, "minimal+overlay");
  EXPECT_NE((*m)->info().extends.find("minimal.json"), std::string::npos);
  ASSERT_TRUE((*m)->find_backend("flashinfer"));
  ASSERT_TRUE((*m)->find_backend("triton")) << "the base's backends stay";
  ASSERT_EQ((*m)->selection().size(), 2u);
  EXPECT_EQ((*m)->selection()[0].info.id, "auto-flashinfer-first") << "placed before auto-triton";
}

struct BadOverlay {
  const char* file;
  ErrorCode code;
  const char* where;    // a fragment of Error::where
  const char* message;  // a fragment of Error::message
};

class ComposeErrors : public ::testing::TestWithParam<BadOverlay> {};

TEST_P(ComposeErrors, NameTheOverlayAndTheProblem) {
  const BadOverlay& c = GetParam();
  auto m = load_matrix_file(fixture(c.file));
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().code, c.code) << m.error().describe();
  EXPECT_NE(m.error().where.find(c.where), std::string::npos) << m.error().describe();
  EXPECT_NE(m.error().message.find(c.message), std::string::npos) << m.error().describe();
}

const BadOverlay kBad[] = {
    {"cycle_a.json", ErrorCode::invalid_matrix, "#/extends", "chains deeper than"},
    {"removes_missing.json", ErrorCode::invalid_matrix, "removes_missing.json#/rules/0", "removes \"no-such-rule\""},
    {"dangling_reference.json", ErrorCode::invalid_matrix, "(extending", "unknown backend \"triton\""},
    {"unknown_key.json", ErrorCode::invalid_matrix, "unknown_key.json#/backend", "did you mean"},
};
INSTANTIATE_TEST_SUITE_P(Fixtures, ComposeErrors, ::testing::ValuesIn(kBad), [](const ::testing::TestParamInfo<BadOverlay>& p) {
  std::string n = p.param.file;
  return n.substr(0, n.find('.'));
});

TEST(Registry, EveryBuiltinGenerationLoads) {
  auto gens = builtin_generations();
  ASSERT_TRUE(gens.ok()) << gens.error().describe();
  ASSERT_GE(gens->size(), 5u);
  for (const auto& g : *gens) {
    auto m = builtin_matrix_file(g.file);
    EXPECT_TRUE(m.ok()) << g.file << ": " << (m.ok() ? "" : m.error().describe());
    if (m.ok()) {
      EXPECT_EQ((*m)->info().engine, g.engine) << g.file;
    }
    EXPECT_FALSE(g.source.empty()) << g.file;
  }
}

TEST(Registry, PicksTheNewestGenerationNotNewerThanTheRelease) {
  auto file_of = [](const char* release) {
    auto m = builtin_matrix("sglang", parse_release(release));
    return m.ok() ? (*m)->info().origin : m.error().describe();
  };
  EXPECT_EQ(file_of("0.4.6"), "built-in:engines/sglang/matrix-0.4.6.json");
  EXPECT_EQ(file_of("0.4.7"), "built-in:engines/sglang/matrix-0.4.7.json");
  EXPECT_EQ(file_of("0.5.2"), "built-in:engines/sglang/matrix-0.4.7.json");
  EXPECT_EQ(file_of("v0.5.3"), "built-in:engines/sglang/matrix-0.5.3.json");
  EXPECT_EQ(file_of("0.5.4"), "built-in:engines/sglang/matrix-0.5.4.json");
  EXPECT_EQ(file_of("0.5.5"), "built-in:engines/sglang/matrix-0.5.5.json");
  EXPECT_EQ(file_of("0.5.5.post3"), "built-in:engines/sglang/matrix-0.5.5.json");
  EXPECT_EQ(file_of("0.5.6"), "built-in:engines/sglang/matrix-0.5.6.json");
  EXPECT_EQ(file_of("0.5.7"), "built-in:engines/sglang/matrix-0.5.7.json");
  EXPECT_EQ(file_of("0.5.9.post1"), "built-in:engines/sglang/matrix-0.5.8.json");
  EXPECT_EQ(file_of("0.5.10"), "built-in:engines/sglang/matrix-0.5.10.json");
  EXPECT_EQ(file_of("0.5.11.post2"), "built-in:engines/sglang/matrix-0.5.10.json");
  EXPECT_EQ(file_of("0.5.12"), "built-in:engines/sglang/matrix-0.5.12.json");
  EXPECT_EQ(file_of("0.5.12.post1"), "built-in:engines/sglang/matrix-0.5.12.json");
  EXPECT_EQ(file_of("0.5.13"), "built-in:engines/sglang/matrix-0.5.13.json");
  EXPECT_EQ(file_of("0.5.14"), "built-in:engines/sglang/matrix-0.5.14.json");
  EXPECT_EQ(file_of("0.5.14.post1"), "built-in:engines/sglang/matrix-0.5.14.json");
  EXPECT_EQ(file_of("0.5.15.post1"), "built-in:engines/sglang/matrix-0.5.15.json");
  EXPECT_EQ(file_of("0.5.16"), "built-in:engines/sglang/matrix-0.5.16.json");
  EXPECT_EQ(file_of("0.5.17"), "built-in:engines/sglang/matrix-0.5.17.json");
  EXPECT_EQ(file_of("1.0"), "built-in:engines/sglang/matrix-0.5.17.json");
  EXPECT_EQ((*builtin_matrix("sglang"))->info().origin, "built-in:engines/sglang/matrix-0.5.17.json") << "no release: the newest";

  auto too_old = builtin_matrix("sglang", parse_release("0.3.6"));
  ASSERT_FALSE(too_old.ok());
  EXPECT_NE(too_old.error().message.find("older than every matrix"), std::string::npos);
  auto unknown = builtin_matrix("sglang-difusion");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, ErrorCode::unknown_name);
  EXPECT_EQ(unknown.error().suggestion, "sglang-diffusion");
}

TEST(Registry, ReleaseParsing) {
  EXPECT_TRUE(parse_release("0.5.3") == (ReleaseVersion{0, 5, 3}));
  EXPECT_TRUE(parse_release("v0.5") == (ReleaseVersion{0, 5, 0}));
  EXPECT_TRUE(parse_release("0.5.3.post1") == (ReleaseVersion{0, 5, 3}));
  EXPECT_TRUE(parse_release("0.5.3rc0") == (ReleaseVersion{0, 5, 3}));
  for (const char* bad : {"", "0", "x.y", "0.5.3-foo", "0..5", "99999.1"}) EXPECT_FALSE(parse_release(bad)) << bad;
}

TEST(Diff, NamesWhatChangedBetweenGenerations) {
  auto middle = *builtin_matrix("sglang", parse_release("0.5.5"));
  auto current = *builtin_matrix("sglang");
  const std::string text = render_matrix_diff(*middle, *current, MatrixFormat::table);
  EXPECT_NE(text.find("~ attention:fa4"), std::string::npos) << text;
  EXPECT_NE(text.find("phases: [\"prefill\"] -> [\"prefill\",\"decode\"]"), std::string::npos) << text;
  EXPECT_NE(text.find("- attention:nsa"), std::string::npos);
  EXPECT_NE(text.find("+ attention:dsa"), std::string::npos);
  EXPECT_NE(text.find("+ linear:cutedsl"), std::string::npos);
  const std::string json = render_matrix_diff(*middle, *current, MatrixFormat::json);
  EXPECT_NE(json.find("\"change\": \"removed\""), std::string::npos);
  EXPECT_NE(render_matrix_diff(*current, *current, MatrixFormat::table).find("no differences"), std::string::npos);
}

// Issue 12: v0.5.12 -> SGLang main reads as release notes (removed names, new names, changed rules).
TEST(Diff, NamesWhatSglangMainChanged) {
  auto v0512 = *builtin_matrix("sglang", parse_release("0.5.12"));
  auto main = *builtin_matrix("sglang");
  const std::string text = render_matrix_diff(*v0512, *main, MatrixFormat::table);
  // The newest generation is v0.5.17 as the oracle executed it (main 92b1d382, docs/oracle.md).
  for (const char* line : {"+ attention:cutedsl_mla", "+ attention:hpc_ops", "+ sparse:flashinfer_sparse_mla",
                           "+ fp4-e2m1-deprecated", "~ attention:trtllm_mha", "- gdn-sm120-trtllm-prefill",
                           "+ nemotron-h-no-triton", "~ llama4-backends"})
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
}

}  // namespace
}  // namespace attnsel
