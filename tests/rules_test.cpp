// The rule pages (include/attnsel/rules.hpp): every rule id attnsel can report has one, found from
// the data and the code themselves (a new matrix rule, advisory or finding without a page fails
// here); every example runs and reports its rule; docs/rules.md is what `attnsel rule --list
// --format markdown` prints (regenerate: ATTNSEL_UPDATE_GOLDEN=1 build/tests/rules_test).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "attnsel/advisory.hpp"
#include "attnsel/matrix.hpp"
#include "attnsel/rules.hpp"

namespace attnsel {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

const std::string kSource = ATTNSEL_SOURCE_DIR;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

const std::vector<RuleDoc>& docs() {
  static const std::shared_ptr<const std::vector<RuleDoc>> all = [] {
    auto d = rule_docs();
    EXPECT_TRUE(d.ok()) << (d.ok() ? "" : d.error().describe());
    return d.ok() ? *d : std::make_shared<const std::vector<RuleDoc>>();
  }();
  return *all;
}

std::vector<std::string> without_page(const std::set<std::string>& ids) {
  std::vector<std::string> missing;
  for (const std::string& id : ids)
    if (find_rule_doc(docs(), id) == nullptr) missing.push_back(id);
  return missing;
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += "\n  " + s;
  return out;
}

// ---- every rule id has a page ----

TEST(RulePages, EveryRuleOfEveryMatrixFileHasAPage) {
  std::set<std::string> ids;
  std::size_t files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(kSource + "/data/engines")) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("matrix", 0) != 0 || entry.path().extension() != ".json") continue;
    ++files;
    const json doc = json::parse(read_file(entry.path().string()));
    for (const char* section : {"rules", "selection"})
      if (doc.contains(section))
        for (const json& e : doc[section])
          if (e.contains("id")) ids.insert(e["id"].get<std::string>());
    if (doc.contains("features"))
      for (const auto& [feature, e] : doc["features"].items())
        if (e.is_object() && e.contains("id")) ids.insert(e["id"].get<std::string>());
  }
  EXPECT_GE(files, 20u);
  EXPECT_GE(ids.size(), 150u);
  EXPECT_EQ(without_page(ids), std::vector<std::string>{}) << "matrix rules without a page:" << joined(without_page(ids));
}

TEST(RulePages, EveryAdvisoryHasAPage) {
  std::set<std::string> ids;
  for (const auto& entry : fs::directory_iterator(kSource + "/data/engines")) {
    const fs::path file = entry.path() / "advisories.json";
    if (!fs::exists(file)) continue;
    const json doc = json::parse(read_file(file.string()));
    for (const json& a : doc["advisories"]) ids.insert("advisory." + a["id"].get<std::string>());
  }
  EXPECT_GE(ids.size(), 50u);
  EXPECT_EQ(without_page(ids), std::vector<std::string>{}) << joined(without_page(ids));
  ASSERT_FALSE(ids.empty());
  const RuleDoc* one = find_rule_doc(docs(), *ids.begin());
  ASSERT_NE(one, nullptr);
  EXPECT_EQ(one->origin, RuleOrigin::advisory);
  EXPECT_FALSE(one->links.empty());
  EXPECT_FALSE(one->example_text.empty()) << "an advisory's page says what it matches";
}

// The rule ids the library's code reports, as its sources write them: "args.unknown", "check.skipped" ...
std::set<std::string> rule_ids_in_the_code() {
  // Strings of the same shape that are no rule id.
  static const std::set<std::string> kNotRules = {"config.json"};
  const std::regex literal(R"re("((?:args|check|select|cell|page|config)\.[a-z][a-z0-9-]*)")re");
  std::set<std::string> ids;
  for (const auto& entry : fs::recursive_directory_iterator(kSource + "/src")) {
    const std::string ext = entry.path().extension().string();
    if (ext != ".cpp" && ext != ".hpp") continue;
    const std::string text = read_file(entry.path().string());
    for (std::sregex_iterator it(text.begin(), text.end(), literal), end; it != end; ++it)
      if (kNotRules.count((*it)[1].str()) == 0) ids.insert((*it)[1].str());
  }
  return ids;
}

TEST(RulePages, EveryRuleTheCodeReportsHasAPage) {
  const std::set<std::string> ids = rule_ids_in_the_code();
  EXPECT_GE(ids.size(), 50u);
  EXPECT_EQ(without_page(ids), std::vector<std::string>{}) << "rule ids in src/ without a page in data/rules.json:"
                                                           << joined(without_page(ids));
  // The matrix engine's own rules, as every built-in matrix has them.
  auto generations = builtin_generations();
  ASSERT_TRUE(generations.ok());
  std::set<std::string> builtin;
  for (const MatrixGeneration& g : *generations) {
    auto m = builtin_matrix_file(g.file);
    ASSERT_TRUE(m.ok()) << g.file;
    for (std::size_t b = 0; b < static_cast<std::size_t>(BuiltinRule::count); ++b)
      builtin.insert((*m)->builtin(static_cast<BuiltinRule>(b)).id);
  }
  EXPECT_EQ(without_page(builtin), std::vector<std::string>{}) << joined(without_page(builtin));
}

TEST(RulePages, EveryPageOfDataRulesJsonIsARuleTheCodeReports) {
  // A page whose rule is gone from the code is stale: rename or remove it with the code.
  const std::set<std::string> code = rule_ids_in_the_code();
  std::vector<std::string> stale;
  std::size_t pages = 0;
  for (const RuleDoc& d : docs()) {
    if (d.origin != RuleOrigin::engine && d.origin != RuleOrigin::check && d.origin != RuleOrigin::args) continue;
    ++pages;
    if (code.count(d.id) == 0) stale.push_back(d.id);
  }
  EXPECT_GE(pages, 50u);
  EXPECT_EQ(stale, std::vector<std::string>{}) << "pages of rules no code reports:" << joined(stale);
}

// ---- the pages themselves ----

std::string severity_of_line(const std::string& line) {
  std::size_t best = std::string::npos;
  std::string word;
  for (const char* w : {"error", "warning", "note"}) {
    const std::size_t at = line.find(std::string(": ") + w + ": ");
    if (at < best) {
      best = at;
      word = w;
    }
  }
  return word == "note" ? "info" : word;
}

TEST(RulePages, EveryExampleReportsItsRuleAtTheDocumentedLevel) {
  std::size_t examples = 0;
  for (const RuleDoc& d : docs()) {
    if (d.examples.empty()) continue;
    auto page = run_rule_examples(d);
    ASSERT_TRUE(page.ok()) << page.error().describe();
    for (const RuleExample& e : page->examples) {
      ++examples;
      ASSERT_FALSE(e.findings.empty()) << d.id << ": `" << e.command_line() << "` does not report it";
      for (const std::string& line : e.findings) {
        EXPECT_NE(line.find("[" + d.id + "]"), std::string::npos) << line;
        // The default level, unless the example says it shows the other case its page names.
        const std::string expected(name_of(e.level.value_or(d.severity)));
        EXPECT_EQ(severity_of_line(line), expected) << d.id << ": " << line;
      }
    }
  }
  EXPECT_GE(examples, 45u);
}

TEST(RulePages, EveryPageHasWhatADocumentedRuleNeeds) {
  std::map<RuleOrigin, std::size_t> by_origin;
  for (const RuleDoc& d : docs()) {
    ++by_origin[d.origin];
    EXPECT_FALSE(d.summary.empty()) << d.id;
    EXPECT_FALSE(d.description().empty()) << d.id;
    EXPECT_FALSE(d.source.empty()) << d.id << ": every page cites where the rule comes from";
    EXPECT_FALSE(d.fix.empty()) << d.id;
    EXPECT_FALSE(d.ignore.empty()) << d.id;
    EXPECT_TRUE(!d.examples.empty() || !d.example_text.empty() || !d.variants.empty())
        << d.id << ": an example, the conditions it matches, or why there is none";
    for (const RuleVariant& v : d.variants) {
      EXPECT_FALSE(v.generations.empty()) << d.id;
      EXPECT_TRUE(fs::exists(kSource + "/" + v.file)) << d.id << ": " << v.file;
    }
  }
  for (RuleOrigin o : {RuleOrigin::matrix, RuleOrigin::feature, RuleOrigin::selection, RuleOrigin::engine,
                       RuleOrigin::check, RuleOrigin::args, RuleOrigin::advisory})
    EXPECT_GT(by_origin[o], 0u) << name_of(o);
}

TEST(RulePages, AMatrixRuleShowsEachWordingWithItsGenerationsAndCondition) {
  const RuleDoc* d = find_rule_doc(docs(), "fa4-page-size-sm100");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->origin, RuleOrigin::matrix);
  EXPECT_EQ(d->severity, Severity::warning);
  // Two wordings: v0.5.12 to v0.5.14 (only --prefill-attention-backend fa4) and v0.5.15 on (any fa4 flag).
  const auto variant = [&](const std::string& file) -> const RuleVariant* {
    for (const RuleVariant& v : d->variants)
      if (v.file == file) return &v;
    return nullptr;
  };
  const RuleVariant* old = variant("data/engines/sglang/matrix-0.5.12.json");
  ASSERT_NE(old, nullptr);
  EXPECT_EQ(old->engine, "sglang");
  EXPECT_NE(old->when.find("\"phase_flag\":true"), std::string::npos) << old->when;
  EXPECT_EQ(old->effect, "{\"page_size\":128}");
  EXPECT_NE(std::find(old->generations.begin(), old->generations.end(), "v0.5.14"), old->generations.end());
  const RuleVariant* now = variant("data/engines/sglang/matrix-0.5.17.json");
  ASSERT_NE(now, nullptr);
  EXPECT_NE(now->when.find("\"backend\":\"fa4\""), std::string::npos) << now->when;
  EXPECT_EQ(now->when.find("phase_flag"), std::string::npos) << now->when;
  EXPECT_NE(now->source.find("overrides.py@"), std::string::npos) << "the upstream citation: " << now->source;
  EXPECT_NE(d->summary.find("SGLang silently changes --page-size X to 128"), std::string::npos) << d->summary;
}

TEST(RulePages, LookupIgnoresCaseAndSuggestsTheNearestIds) {
  auto exact = lookup_rule("CELL.Compute-Capability");
  ASSERT_TRUE(exact.ok());
  EXPECT_EQ((*exact)->id, "cell.compute-capability");
  auto typo = lookup_rule("cell.compute-capabilty");
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.error().code, ErrorCode::unknown_name);
  EXPECT_EQ(typo.error().suggestion, "cell.compute-capability");
  EXPECT_NE(typo.error().message.find("cell.compute-capability"), std::string::npos);
  auto bare = lookup_rule("SGL-ADV-0001");
  ASSERT_FALSE(bare.ok());
  EXPECT_EQ(bare.error().suggestion, "advisory.SGL-ADV-0001") << bare.error().message;
}

TEST(RulePages, AnchorsAreUniqueAndHelpUrisPointIntoTheRulesPage) {
  std::set<std::string> anchors;
  for (const RuleDoc& d : docs()) EXPECT_TRUE(anchors.insert(rule_anchor(d.id)).second) << d.id;
  EXPECT_EQ(rule_anchor("advisory.SGL-ADV-0001"), "advisory.sgl-adv-0001");
  EXPECT_EQ(rule_anchor("a b/c"), "a-b-c");
  EXPECT_EQ(rule_help_uri("cell.kind"), rules_page_url() + "#cell.kind");
  EXPECT_EQ(rules_page_url().rfind(std::string(kProjectUrl) + "/blob/v", 0), 0u);
  EXPECT_NE(rules_page_url().find("/docs/rules.md"), std::string::npos);
}

// ---- docs/rules.md and the CLI ----

struct CliRun {
  int code = -1;
  std::string out, err;
};

CliRun cli(const std::string& args) {
  EXPECT_FALSE(std::string(ATTNSEL_CLI).empty()) << "the attnsel CLI is not built";
  const std::string base = (fs::temp_directory_path() / ("attnsel-rules-test-" + std::to_string(::getpid()))).string();
  const std::string cmd = "cd '" + kSource + "' && env -u ATTNSEL_GPU -u ATTNSEL_MATRIX NO_COLOR=1 '" + ATTNSEL_CLI + "' " +
                          args + " >'" + base + ".out' 2>'" + base + ".err'";
  const int status = std::system(cmd.c_str());
  CliRun r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(base + ".out");
  r.err = read_file(base + ".err");
  fs::remove(base + ".out");
  fs::remove(base + ".err");
  return r;
}

TEST(RulesDoc, DocsRulesMdIsWhatAttnselPrints) {
  const CliRun r = cli("rule --list --format markdown");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string path = kSource + "/docs/rules.md";
  if (const char* update = std::getenv("ATTNSEL_UPDATE_GOLDEN"); update && *update == '1') {
    std::ofstream(path, std::ios::binary) << r.out;
    return;
  }
  EXPECT_TRUE(read_file(path) == r.out)
      << "docs/rules.md differs from `attnsel rule --list --format markdown`; regenerate it: "
         "ATTNSEL_UPDATE_GOLDEN=1 build/tests/rules_test --gtest_filter=RulesDoc.*";
  // Every page has its anchor there, once.
  for (const RuleDoc& d : docs()) {
    const std::string anchor = "<a id=\"" + rule_anchor(d.id) + "\"></a>";
    const std::size_t at = r.out.find(anchor);
    EXPECT_NE(at, std::string::npos) << d.id;
    EXPECT_EQ(r.out.find(anchor, at + 1), std::string::npos) << d.id;
  }
}

TEST(RulesCli, APageAsTextAndJson) {
  CliRun r = cli("rule args.unknown");
  EXPECT_EQ(r.code, 0) << r.err;
  for (const char* part : {"args.unknown", "What it means", "Source", "Example", "$ attnsel check --gpu sm90 -- ",
                           "[args.unknown]", "How to fix", "How to ignore", "More: "})
    EXPECT_NE(r.out.find(part), std::string::npos) << part << "\n" << r.out;
  r = cli("rule args.unknown --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["kind"], "rule");
  EXPECT_EQ(j["id"], "args.unknown");
  EXPECT_EQ(j["help_uri"], rule_help_uri("args.unknown"));
  EXPECT_FALSE(j["examples"][0]["findings"].empty());
  r = cli("rule --list --json");
  ASSERT_EQ(r.code, 0);
  const json list = json::parse(r.out);
  EXPECT_EQ(list["kind"], "rules");
  EXPECT_EQ(list["count"], docs().size());
  r = cli("rule --list");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("cell.compute-capability"), std::string::npos);
}

TEST(RulesCli, AnUnknownIdExitsTwoNamingTheNearest) {
  CliRun r = cli("rule cell.compute-capabilty");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("cell.compute-capability"), std::string::npos) << r.err;
  r = cli("rule cell.compute-capabilty --format json");
  EXPECT_EQ(r.code, 2);
  const json j = json::parse(r.out);
  EXPECT_EQ(j["kind"], "error");
  EXPECT_EQ(j["error"]["suggestion"], "cell.compute-capability");
  EXPECT_FALSE(j["error"]["choices"].empty());
  EXPECT_EQ(cli("rule").code, 2);
  EXPECT_EQ(cli("rule cell.kind --list").code, 2);
}

}  // namespace
}  // namespace attnsel
