// Engine profiles: the built-in ones load, bad ones are refused with the place, launchers come from data.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include <nlohmann/json.hpp>

#include "attnsel/check.hpp"
#include "attnsel/launch.hpp"
#include "attnsel/profile.hpp"
#include "matrix/embedded.hpp"

namespace attnsel {
namespace {

// tests/cases/grammar_releases.json: a value a flag takes (or not) in one release, as that
// release's source lists it, against the grammar attnsel picks for the release.
TEST(GrammarReleases, EachReleaseTakesTheValuesItsSourceLists) {
  std::ifstream in(std::string(ATTNSEL_TESTS_DIR) + "/cases/grammar_releases.json");
  ASSERT_TRUE(in) << "tests/cases/grammar_releases.json";
  const nlohmann::json doc = nlohmann::json::parse(in);
  std::size_t checked = 0;
  for (const nlohmann::json& c : doc.at("cases")) {
    const std::string engine = c.at("engine"), release = c.at("release"), flag = c.at("flag"), value = c.at("value");
    const std::string row = engine + " " + release + " " + flag + " " + value + " (" + c.at("source").get<std::string>() + ")";
    auto profile = builtin_profile(engine);
    ASSERT_TRUE(profile) << row;
    const Grammar* grammar = (*profile)->grammar("serve", release);
    ASSERT_NE(grammar, nullptr) << row;
    const GrammarFlag* f = grammar->exact(flag);
    ASSERT_NE(f, nullptr) << row;
    const bool takes = f->choices.empty() || std::find(f->choices.begin(), f->choices.end(), value) != f->choices.end();
    EXPECT_EQ(takes, c.at("accepted").get<bool>()) << row;
    ++checked;
  }
  EXPECT_GE(checked, 10u);
}

TEST(Profile, EveryBuiltinProfileLoadsWithAGrammarForEachLauncher) {
  std::size_t files = 0;
  for (const auto& file : embedded::files()) {
    const std::string name(file.name);
    if (name.rfind("engines/", 0) == 0 && name.find("/profile.json") != std::string::npos) ++files;
  }
  EXPECT_GE(files, 2u);
  EXPECT_EQ(builtin_profiles().size(), files);  // a profile that does not load is missing here
  for (const auto& p : builtin_profiles()) {
    EXPECT_FALSE(p->launchers.empty()) << p->engine;
    for (const Launcher& l : p->launchers) {
      const Grammar* g = p->grammar(l.grammar);
      ASSERT_NE(g, nullptr) << p->engine << " " << l.label;
      EXPECT_FALSE(g->flags.empty());
      EXPECT_NE(g->for_field("model"), nullptr) << p->engine << " " << l.grammar << ": no flag is bound to the model";
    }
  }
}

TEST(Profile, SglangGrammarsBindTheAttentionFlags) {
  auto p = builtin_profile("sglang");
  ASSERT_TRUE(p.ok());
  for (const Grammar& g : (*p)->grammars) {
    for (const char* field : {"attention.all", "attention.prefill", "attention.decode", "page_size", "kv_cache_dtype",
                              "speculative.topk", "sparse.prefill", "linear.all", "deterministic"})
      EXPECT_NE(g.for_field(field), nullptr) << g.name << " " << g.engine_version << ": " << field;
    // Deprecated aliases declared as flags of their own bind to the same field.
    const GrammarFlag* nsa = g.exact("--nsa-prefill-backend");
    ASSERT_NE(nsa, nullptr);
    EXPECT_EQ(nsa->field, "sparse.prefill");
    EXPECT_TRUE(nsa->deprecated);
  }
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
                   "/launchers/0/typo"},
        // The environment table: a variable that stands for nothing, a rule without a range, a bad
        // severity or release, an alias that is not a string.
        BadProfile{"{" + kHead + R"(, "launchers": [], "environment": [{"variable": "V", "source": "s"}]})", "/environment/0"},
        BadProfile{"{" + kHead +
                       R"(, "launchers": [], "environment": [{"variable": "V", "source": "s", "rules": [{"id": "r", "field": "page_size",
                           "message": "m", "source": "s"}]}]})",
                   "/environment/0/rules/0"},
        BadProfile{"{" + kHead +
                       R"(, "launchers": [], "environment": [{"variable": "V", "source": "s", "rules": [{"id": "r", "field": "page_size",
                           "max": 1, "severity": "fatal", "message": "m", "source": "s"}]}]})",
                   "/environment/0/rules/0/severity"},
        BadProfile{"{" + kHead +
                       R"(, "launchers": [], "environment": [{"variable": "V", "source": "s", "rules": [{"id": "r", "field": "page_size",
                           "max": 1, "until": "next", "message": "m", "source": "s"}]}]})",
                   "/environment/0/rules/0/until"},
        BadProfile{"{" + kHead + R"(, "launchers": [], "environment": [{"variable": "V", "field": "f", "aliases": {"A": 1}, "source": "s"}]})",
                   "/environment/0/aliases/A"}));

TEST(Profile, EnvironmentRulesLoad) {
  auto sglang = builtin_profile("sglang");
  ASSERT_TRUE(sglang.ok());
  const EngineProfile::EnvBinding* spec = nullptr;
  for (const auto& b : (*sglang)->environment)
    if (b.variable == "SGLANG_ENABLE_SPEC_V2") spec = &b;
  ASSERT_NE(spec, nullptr);
  EXPECT_TRUE(spec->field.empty());
  ASSERT_EQ(spec->rules.size(), 1u);
  EXPECT_EQ(spec->rules[0].id, "spec-v2-topk");
  EXPECT_EQ(spec->rules[0].field, "speculative.topk");
  EXPECT_EQ(spec->rules[0].max, 1);
  EXPECT_FALSE(spec->rules[0].min.has_value());
  EXPECT_EQ(spec->rules[0].severity, "error");
}

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

// An image whose entrypoint is a launcher: `docker run [OPTIONS] IMAGE ARGS` runs it with ARGS, under
// any registry, tag or digest; --entrypoint and other images leave the words after the image a command.
TEST(Profile, ImagesRunTheirEntrypointLauncher) {
  auto p = load_profile("{" + kHead + R"(, "launchers": [
      {"label": "toy.serve", "module": "toy.serve", "grammar": "server", "source": "s"},
      {"label": "toyctl up", "program": "toyctl", "subcommand": ["up"], "images": ["toy/toy-server"],
       "grammar": "server", "source": "s"}]})",
                        "toy.json");
  ASSERT_TRUE(p.ok()) << p.error().describe();
  const std::string script =
      "docker run --gpus all -it -p 8000:8000 --name=t -e A=1 --rm toy/toy-server:v1.2 --x 1\n"
      "podman container run -dp8000:8000 ghcr.io/toy/toy-server@sha256:ab --y\n"
      "docker run -v /a:/b localhost:5000/toy/toy-server\n"
      "docker run --entrypoint=python3 toy/toy-server:v1 -m toy.serve --z\n"
      "docker run other/image --x 2\n"
      "docker run -e toy/toy-server --w\n"  // -e takes the repository as its value: no image follows
      "docker ps toy/toy-server --v\n";
  auto found = find_launch_commands(script, "run.sh", InputFormat::shell, (*p)->launchers);
  ASSERT_TRUE(found.ok()) << found.error().describe();
  ASSERT_EQ(found->size(), 4u);
  EXPECT_EQ((*found)[0].launcher, "docker run toy/toy-server:v1.2");
  EXPECT_EQ((*found)[0].args, (std::vector<std::string>{"--x", "1"}));
  EXPECT_EQ((*found)[1].launcher, "podman run ghcr.io/toy/toy-server@sha256:ab");
  EXPECT_EQ((*found)[1].args, std::vector<std::string>{"--y"});
  EXPECT_EQ((*found)[2].line, 3);
  EXPECT_TRUE((*found)[2].args.empty());
  EXPECT_EQ((*found)[3].launcher, "python3 -m toy.serve");
  EXPECT_EQ((*found)[3].args, std::vector<std::string>{"--z"});

  for (const char* bad : {"Toy/Server", "toy/server:v1", "toy/server@sha256:a", "/toy", ""}) {
    auto q = load_profile("{" + kHead + R"(, "launchers": [{"label": "toyctl", "program": "toyctl", "images": [")" +
                              std::string(bad) + R"("], "grammar": "server", "source": "s"}]})",
                          "toy.json");
    ASSERT_FALSE(q.ok()) << bad;
    EXPECT_EQ(q.error().where, "toy.json#/launchers/0/images/0") << q.error().describe();
  }
}

// A made-up engine (tests/fixtures/engines/toy: its own launchers, flags, backends, vocabulary and
// speculative defaults) is selected and checked by the same code as the built-in engines.
class SyntheticEngine : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string dir = std::string(ATTNSEL_TESTS_DIR) + "/fixtures/engines/toy/";
    auto p = load_profile_file(dir + "profile.json");
    ASSERT_TRUE(p.ok()) << p.error().describe();
    profile = *p;
    auto m = load_matrix_file(dir + "matrix.json");
    ASSERT_TRUE(m.ok()) << m.error().describe();
    matrix = *m;
    auto c = builtin_catalog();
    ASSERT_TRUE(c.ok());
    catalog = *c;
  }

  // "rule@line" of every finding of the first target's check, in order.
  std::vector<std::string> check(const LaunchCommand& cmd, const std::string& gpu = "sm90") {
    auto targets = resolve_check_targets(*catalog, gpu, std::nullopt);
    EXPECT_TRUE(targets.ok());
    CheckOptions o;
    o.profile = profile;
    last = check_command(matrix, *catalog, cmd, *targets, o).at(0);
    std::vector<std::string> out;
    for (const CheckDiagnostic* d : last.all()) out.push_back(d->diagnostic.rule + "@" + std::to_string(d->line));
    return out;
  }

  std::shared_ptr<const EngineProfile> profile;
  std::shared_ptr<const Matrix> matrix;
  std::shared_ptr<const Catalog> catalog;
  CommandCheck last;
};

using Findings = std::vector<std::string>;

TEST_F(SyntheticEngine, ChecksCommandsFoundWithItsLaunchers) {
  const std::string script =
      "#!/bin/sh\n"
      "python3 -m toyserve.api --weights org/m \\\n"
      "    --kern turbo\n"
      "toyctl run org/m --kernel fast --block 32 --cache-type e4m3\n"
      "toyctl run org/m --cache-type nf4\n"
      "toyctl run org/m --kernel fast --draft lookahead\n"
      "toyctl run org/m --kernel fats\n";
  auto found = find_launch_commands(script, "run.sh", InputFormat::shell, profile->launchers);
  ASSERT_TRUE(found.ok()) << found.error().describe();
  ASSERT_EQ(found->size(), 5u);

  // A unique prefix resolves (a note); turbo needs compute capability 10.
  EXPECT_EQ(check((*found)[0]), (Findings{"args.prefix@3", "check.model-assumed@2", "cell.compute-capability@3"}));
  EXPECT_TRUE(last.fails(false));
  EXPECT_TRUE(check((*found)[0], "sm100").empty() || !last.fails(false));

  // The engine's spelling e4m3 is attnsel's fp8_e4m3; the fast kernel's page size is rewritten.
  EXPECT_EQ(check((*found)[1]), (Findings{"check.model-assumed@4", "fast-page-64@4"}));
  ASSERT_TRUE(last.selection.has_value());
  EXPECT_EQ(last.selection->request.kv_cache_dtype, KvCacheDtype::fp8_e4m3);
  EXPECT_EQ(last.selection->page.page_size, 64);

  // Accepted by the engine, unknown to the matrix: not judged, a warning (--strict fails on it).
  EXPECT_EQ(check((*found)[2]), (Findings{"select.not-judged@5", "check.model-assumed@5"}));
  EXPECT_FALSE(last.judged());
  EXPECT_FALSE(last.fails(false));
  EXPECT_TRUE(last.fails(true));

  // The alias names the engine's algorithm; the width comes from its automatic choice (2), which
  // the fast kernel cannot verify.
  EXPECT_EQ(check((*found)[3]), (Findings{"check.speculative-topk@6", "check.model-assumed@6", "cell.speculative@6"}));

  // A choice the grammar does not have: the engine would exit; the closest name is suggested.
  EXPECT_EQ(check((*found)[4]), (Findings{"args.choice@7", "check.model-assumed@7"}));
  EXPECT_NE(last.findings[0].diagnostic.message.find("did you mean fast?"), std::string::npos);
}

TEST_F(SyntheticEngine, PreparesARequestFromItsFlags) {
  LaunchCommand flags;
  flags.launcher = "flags";
  flags.args = {"--weights", "m", "--kernel", "slow", "--block", "16", "--draft-width", "3"};
  CheckOptions o;
  o.topk_implies_speculative = true;
  PreparedRequest p = prepare_request(matrix, *profile, *profile->grammar("server"), *catalog, flags, o);
  EXPECT_TRUE(p.plannable);
  EXPECT_EQ(p.request.attention.all, std::optional<std::string>("slow"));
  EXPECT_EQ(p.request.page_size, std::optional<int>(16));
  EXPECT_EQ(p.request.speculative_topk, 3);
}

}  // namespace
}  // namespace attnsel
