// The suggester behind every "did you mean": tests/cases/suggest.json, a table of unknown names and
// what attnsel should suggest among the built-in data's names.
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "attnsel/catalog.hpp"
#include "attnsel/matrix.hpp"
#include "attnsel/profile.hpp"
#include "attnsel/suggest.hpp"

namespace attnsel {
namespace {

std::vector<std::string> backend_names(std::string_view engine) {
  std::vector<std::string> out;
  for (const Backend& b : (*builtin_matrix(engine))->backends()) out.push_back(b.name);
  return out;
}

std::vector<std::string> candidates(const nlohmann::json& spec) {
  if (spec.is_array()) return spec.get<std::vector<std::string>>();
  const std::string name = spec.get<std::string>();
  if (name == "gpus") return (*builtin_catalog())->gpu_names();
  if (name == "backends") return backend_names("sglang");
  if (name == "vllm_backends") return backend_names("vllm");
  if (name == "sglang_flags") return (*builtin_profile("sglang"))->grammar("")->option_names();
  ADD_FAILURE() << "unknown candidate list " << name;
  return {};
}

nlohmann::json cases() {
  std::ifstream in(std::string(ATTNSEL_TESTS_DIR) + "/cases/suggest.json");
  return nlohmann::json::parse(in)["cases"];
}

TEST(Suggest, TableOfUnknownNames) {
  const nlohmann::json table = cases();
  ASSERT_GT(table.size(), 20u);
  for (const auto& c : table) {
    const std::string name = c["name"];
    EXPECT_EQ(closest_name(name, candidates(c["candidates"])), c["expect"].get<std::string>())
        << "for '" << name << "' (" << c.value("why", "") << ")";
  }
}

TEST(Suggest, RanksSeveralBestFirstAndOnceEach) {
  const std::vector<std::string> names = {"flashmla", "flashinfer", "flashinfer", "fa3", "flash_attn"};
  const std::vector<std::string> best = closest_names("flash", names, 3);
  ASSERT_EQ(best.size(), 3u);
  EXPECT_EQ(best[0], "flashmla") << "the shortest completion of an abbreviation first";
  EXPECT_EQ(best[1], "flash_attn") << "then the next shortest (letters and digits counted)";
  EXPECT_EQ(best[2], "flashinfer") << "listed twice, suggested once";
  EXPECT_TRUE(closest_names("flash", names, 0).empty());
}

TEST(Suggest, LongUnknownWordsAreNotTypos) {
  const std::string huge(100000, 'x');
  EXPECT_EQ(closest_name(huge, (*builtin_profile("sglang"))->grammar("")->option_names()), "");
}

}  // namespace
}  // namespace attnsel
