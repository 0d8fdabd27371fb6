// Engine profiles: the built-in ones load, bad ones are refused with the place, launchers come from data.
#include <gtest/gtest.h>

#include "attnsel/launch.hpp"
#include "attnsel/profile.hpp"
#include "matrix/embedded.hpp"

namespace attnsel {
namespace {

TEST(Profile, EveryBuiltinProfileLoads) {
  int files = 0;
  for (const auto& file : embedded::files()) {
    const std::string name(file.name);
    if (name.rfind("engines/", 0) != 0 || name.find("/profile.json") == std::string::npos) continue;
    ++files;
    auto p = load_profile(file.text, name);
    ASSERT_TRUE(p.ok()) << p.error().describe();
    EXPECT_FALSE((*p)->launchers.empty()) << name;
  }
  EXPECT_GE(files, 2);
  EXPECT_EQ(builtin_profiles().size(), static_cast<std::size_t>(files));
}

TEST(Profile, UnknownEngineListsTheKnownOnes) {
  auto p = builtin_profile("sglangg");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().code, ErrorCode::unknown_name);
  EXPECT_FALSE(p.error().choices.empty());
  EXPECT_FALSE(p.error().suggestion.empty());
}

struct BadProfile {
  std::string json;
  std::string where;  // the JSON pointer the error names
};

class BadProfiles : public ::testing::TestWithParam<BadProfile> {};

TEST_P(BadProfiles, AreRefusedWithThePlace) {
  auto p = load_profile(GetParam().json, "p.json");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().where, "p.json#" + GetParam().where) << p.error().describe();
}

const std::string kHead = R"("schema_version": 1, "engine": "e", "title": "E", "source": "s")";

INSTANTIATE_TEST_SUITE_P(
    Cases, BadProfiles,
    ::testing::Values(
        BadProfile{R"({"schema_version": 2, "engine": "e", "title": "E", "source": "s", "launchers": []})",
                   "/schema_version"},
        BadProfile{"{" + kHead + R"(, "launchers": {}})", "/launchers"},
        BadProfile{"{" + kHead +
                       R"(, "launchers": [{"label": "x", "module": "m", "program": "p", "grammar": "g", "source": "s"}]})",
                   "/launchers/0"},
        BadProfile{"{" + kHead +
                       R"(, "launchers": [{"label": "x", "module": "m", "grammar": "g", "source": "s", "typo": 1}]})",
                   "/launchers/0/typo"}));

TEST(Profile, LaunchersComeFromTheProfile) {
  auto p = load_profile("{" + kHead + R"(, "launchers": [
      {"label": "toy.serve", "module": "toy.serve", "grammar": "server", "source": "s"},
      {"label": "toyctl up", "program": "toyctl", "subcommand": ["up"], "grammar": "server", "source": "s"}]})",
                        "toy.json");
  ASSERT_TRUE(p.ok()) << p.error().describe();
  auto found = find_launch_commands("python3 -m toy.serve --x 1\nexport A=1\ntoyctl up --y\ntoyctl down --z\n",
                                    "run.sh", InputFormat::shell, (*p)->launchers);
  ASSERT_TRUE(found.ok()) << found.error().describe();
  ASSERT_EQ(found->size(), 2u);
  EXPECT_EQ((*found)[0].launcher, "python3 -m toy.serve");
  EXPECT_EQ((*found)[0].engine, "e");
  EXPECT_EQ((*found)[1].launcher, "toyctl up");
  EXPECT_EQ((*found)[1].args, std::vector<std::string>{"--y"});
}

}  // namespace
}  // namespace attnsel
