// Suppression comments and rule selection (suppress.hpp), in every input format: the fixtures of
// tests/fixtures/suppress are checked with the options of tests/cases/suppress_fixtures.json and what
// counts, what is suppressed (and by what) and the findings about the comments must be as listed there.
// ATTNSEL_UPDATE_SUPPRESS_CASES=1 rewrites the expectations from what the library reports (review the diff).
// Then the patterns, the output formats' view of suppressed findings, and hostile comments.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnsel/catalog.hpp"
#include "attnsel/check.hpp"
#include "attnsel/check_input.hpp"
#include "attnsel/matrix.hpp"
#include "attnsel/suppress.hpp"

#ifndef ATTNSEL_TESTS_DIR
#define ATTNSEL_TESTS_DIR "tests"
#endif

namespace attnsel {
namespace {

using json = nlohmann::json;

const std::string kDir = std::string(ATTNSEL_TESTS_DIR) + "/fixtures/suppress/";
const std::string kCases = std::string(ATTNSEL_TESTS_DIR) + "/cases/suppress_fixtures.json";

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<RulePattern> patterns(const json& j, const char* key, const std::string& where) {
  std::vector<RulePattern> out;
  for (const auto& p : j.value(key, json::array())) out.push_back({p.get<std::string>(), where});
  return out;
}

CheckReport check_case(const json& c) {
  const std::string file = c.at("file").get<std::string>();
  CheckInput input;
  input.text = read_text(kDir + file);
  input.file_name = file;
  CheckRun run;
  if (c.contains("gpus")) run.gpus = c.at("gpus").get<std::string>();
  run.rules.select = patterns(c, "select", "--select");
  run.rules.ignore = patterns(c, "ignore", "--ignore");
  const json per_file = c.value("per_file_ignores", json::object());
  for (const auto& [glob, ids] : per_file.items())
    run.rules.per_path.push_back({glob, "settings:1:1", patterns(json{{"ids", ids}}, "ids", "settings:1:1")});
  run.report_unused_suppressions = c.value("report_unused", false);
  run.source_suppressions = c.value("comments", true);
  auto matrix = builtin_matrix();
  auto catalog = builtin_catalog();
  EXPECT_TRUE(matrix.ok() && catalog.ok());
  EXPECT_FALSE(validate_rule_selection(run.rules).has_value());
  auto report = check_input(*matrix, **catalog, input, run);
  EXPECT_TRUE(report.ok()) << file << ": " << (report.ok() ? "" : report.error().describe());
  return report.ok() ? std::move(*report) : CheckReport{};
}

// What a case's expectation lists: each (line, rule) once, whatever the targets.
json actual_of(const CheckReport& r) {
  std::vector<std::string> counted, suppressed, about;
  std::set<std::string> seen;
  auto once = [&](std::vector<std::string>& list, std::string entry) {
    if (seen.insert(entry).second) list.push_back(std::move(entry));
  };
  for (const CommandCheck& c : r.checks) {
    // The check's own findings (args.prefix notes too), the errors and warnings; not the plan's notes.
    for (const auto* list : {&c.findings, &c.errors, &c.warnings})
      for (const CheckDiagnostic& d : *list) once(counted, std::to_string(d.line) + " " + d.diagnostic.rule);
    for (const SuppressedFinding& s : c.suppressed)
      once(suppressed, std::to_string(s.finding.line) + " " + s.finding.diagnostic.rule + " <- " +
                           (s.suppression.kind == Suppression::Kind::in_source ? "comment " : "") + s.suppression.by +
                           " (" + s.suppression.pattern + ")");
  }
  for (const FileFinding& f : r.file_findings)
    about.push_back(std::to_string(f.finding.line) + ":" + std::to_string(f.finding.column) + " " +
                    f.finding.diagnostic.rule + (f.suppression ? " <- " + f.suppression->by : std::string()));
  return {{"counted", counted}, {"suppressed", suppressed}, {"file_findings", about}, {"fails", r.fails(false)}};
}

TEST(SuppressFixtures, EveryFormatAsExpected) {
  json cases = json::parse(read_text(kCases));
  const bool update = std::getenv("ATTNSEL_UPDATE_SUPPRESS_CASES") != nullptr;
  std::set<std::string> formats;
  for (json& c : cases.at("cases")) {
    const json actual = actual_of(check_case(c));
    const std::string file = c.at("file").get<std::string>();
    formats.insert(std::string(name_of(detect_input_format(file, read_text(kDir + file)))));
    if (update) {
      c["expect"] = actual;
      continue;
    }
    EXPECT_EQ(actual, c.at("expect")) << file << " with " << c.dump() << "\nactual: " << actual.dump(2);
  }
  if (update) {
    std::ofstream(kCases) << cases.dump(2) << "\n";
    return;
  }
  // Every format the issue names has its case: shell, Dockerfile, compose, Kubernetes, Markdown, Python, Makefile.
  for (const char* f : {"shell", "dockerfile", "compose", "kubernetes", "markdown", "python", "makefile"})
    EXPECT_TRUE(formats.count(f)) << "no fixture of format " << f;
}

TEST(SuppressFixtures, EachFixtureHasFindingsSuppressedByAComment) {
  // A fixture whose comments suppress nothing would let the table above pass vacuously.
  json cases = json::parse(read_text(kCases));
  std::set<std::string> with_comment;
  for (const json& c : cases.at("cases"))
    for (const auto& s : c.at("expect").at("suppressed"))
      if (s.get<std::string>().find("<- comment ") != std::string::npos) with_comment.insert(c.at("file").get<std::string>());
  for (const char* f : {"serve.sh", "Dockerfile", "Dockerfile.shell", "docker-compose.yml", "deployment.yaml", "README.md",
                        "launch.py", "Makefile"})
    EXPECT_TRUE(with_comment.count(f)) << f << ": no finding suppressed by a comment";
}

// ---- patterns ----

TEST(RulePatterns, IdsFamiliesAndPrefixes) {
  struct Case {
    const char* pattern;
    const char* rule;
    bool matches;
  } cases[] = {
      {"args.prefix", "args.prefix", true},     {"args", "args.prefix", true},
      {"args.pre", "args.prefix", false},       {"args.pre*", "args.prefix", true},
      {"*", "cell.kind", true},                 {"advisory", "advisory.SGL-ADV-0015", true},
      {"advisory.SGL", "advisory.SGL-ADV-0015", false}, {"fa4-*", "fa4-page-size-sm100", true},
      {"fa4", "fa4-page-size-sm100", false},    {"ARGS.prefix", "args.prefix", false},
      {"args.prefix", "args", false},           {"cell.kind", "cell.kind-x", false},
  };
  for (const Case& c : cases) EXPECT_EQ(rule_pattern_matches(c.pattern, c.rule), c.matches) << c.pattern << " " << c.rule;
}

TEST(RulePatterns, AnUnknownRuleIsAnErrorNamingTheClosest) {
  EXPECT_FALSE(check_rule_pattern("args.prefix", "--ignore"));
  EXPECT_FALSE(check_rule_pattern("advisory", "--ignore"));
  EXPECT_FALSE(check_rule_pattern("advisory.SGL-*", "--ignore"));
  EXPECT_FALSE(check_rule_pattern("check.unused-suppression", "--ignore"));
  auto e = check_rule_pattern("args.prefx", "--ignore");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code, ErrorCode::unknown_name);
  EXPECT_EQ(e->where, "--ignore");
  EXPECT_EQ(e->suggestion, "args.prefix");
  EXPECT_NE(e->message.find("args.prefx"), std::string::npos);
  EXPECT_TRUE(check_rule_pattern("nosuch*", "--select"));
  EXPECT_TRUE(check_rule_pattern("", "--select"));
}

TEST(RulePatterns, SelectionSuppressesWhatIsNotSelectedOrIgnored) {
  RuleSelection r;
  r.select = {{"cell", "--select"}};
  auto s = selection_suppression(r, "args.prefix", "x.sh");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->kind, Suppression::Kind::external);
  EXPECT_EQ(s->by, "--select");
  EXPECT_FALSE(selection_suppression(r, "cell.kind", "x.sh"));
  r.ignore = {{"cell.kind", ".attnsel.toml:3:10"}};
  s = selection_suppression(r, "cell.kind", "x.sh");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->by, ".attnsel.toml:3:10");
  EXPECT_EQ(s->pattern, "cell.kind");
  RuleSelection per;
  per.base = "/project";
  per.per_path = {{"deploy/**", "pyproject.toml:9:1", {{"args", "pyproject.toml:9:15"}}}};
  EXPECT_TRUE(selection_suppression(per, "args.prefix", "/project/deploy/a/serve.sh"));
  EXPECT_FALSE(selection_suppression(per, "args.prefix", "/project/docs/serve.sh"));
  EXPECT_FALSE(selection_suppression(per, "args.prefix", "/elsewhere/deploy/serve.sh"));
  EXPECT_FALSE(selection_suppression(per, "cell.kind", "/project/deploy/serve.sh"));
}

// ---- comments ----

TEST(SuppressionComments, WhereAndHowTheyAreRead) {
  const std::string text =
      "# attnsel: ignore[args.prefix]\n"       // 1: holds for line 3 (blank and comment lines skipped)
      "\n"                                     // 2
      "cmd --model-pa x\n"                     // 3
      "cmd  # attnsel: ignore[cell]\n"         // 4: after code: holds for its own line
      "echo 'attnsel: ignore[cell]'\n"         // 5: no comment opener: not a directive
      "// attnsel: ignore-file[advisory]\n"    // 6: the whole file
      "<!-- attnsel: ignore -->\n"             // 7: bare: every rule, for line 9
      "```bash\n"                              // 8: a fence is skipped
      "cmd\n";                                 // 9
  SourceSuppressions s(text, "f.sh");
  EXPECT_EQ(s.size(), 4u);
  auto m = s.match("args.prefix", 3, 3, 3);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->kind, Suppression::Kind::in_source);
  EXPECT_EQ(m->by, "f.sh:1");
  EXPECT_EQ(m->pattern, "args.prefix");
  EXPECT_FALSE(s.match("args.prefix", 4, 4, 4));
  EXPECT_TRUE(s.match("cell.kind", 4, 4, 4));
  EXPECT_FALSE(s.match("cell.kind", 5, 5, 5));
  EXPECT_TRUE(s.match("advisory.SGL-ADV-0015", 5, 5, 5));
  m = s.match("args.unknown", 9, 9, 9);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->pattern, "*");
  // A finding on a line of a multi-line command: a comment on any of its lines holds.
  EXPECT_TRUE(s.match("cell.kind", 2, 2, 4));
  EXPECT_TRUE(suppression_findings(s, {}, true).empty());  // every comment suppressed something
}

TEST(SuppressionComments, TyposAndUnusedCommentsAreFindings) {
  const std::string text =
      "# attnsel: ignore[args.prefx, args.prefix]\n"  // 1
      "cmd\n"                                          // 2
      "# attnsel: ingore[args.prefix]\n"               // 3
      "# attnsel: ignore[args.prefix\n"                // 4
      "# attnsel: ignore:args.prefix\n"                // 5
      "# attnsel: ignore[]\n"                          // 6
      "# attnsel: ignore[a$b]\n";                      // 7
  SourceSuppressions s(text, "f.sh");
  const auto found = suppression_findings(s, {}, true);
  std::vector<std::string> got;
  for (const FileFinding& f : found)
    got.push_back(std::to_string(f.finding.line) + ":" + std::to_string(f.finding.column) + " " + f.finding.diagnostic.rule);
  const std::vector<std::string> expected = {"1:19 check.invalid-suppression", "1:31 check.unused-suppression",
                                             "3:1 check.invalid-suppression",  "4:1 check.invalid-suppression",
                                             "5:1 check.invalid-suppression",  "6:1 check.invalid-suppression",
                                             "7:19 check.invalid-suppression"};
  EXPECT_EQ(got, expected);
  ASSERT_FALSE(found.empty());
  EXPECT_NE(found[0].finding.diagnostic.message.find("did you mean 'args.prefix'"), std::string::npos)
      << found[0].finding.diagnostic.message;
  EXPECT_NE(found[2].finding.diagnostic.message.find("did you mean 'ignore'"), std::string::npos)
      << found[2].finding.diagnostic.message;
  // Not asked: only the typos.
  EXPECT_EQ(suppression_findings(s, {}, false).size(), 6u);
  // --ignore check.unused-suppression: reported as suppressed, failing nothing.
  RuleSelection quiet;
  quiet.ignore = {{"check.unused-suppression", "--ignore"}};
  for (const FileFinding& f : suppression_findings(s, quiet, true)) {
    EXPECT_EQ(f.suppression.has_value(), f.finding.diagnostic.rule == "check.unused-suppression");
    if (f.suppression) EXPECT_FALSE(f.fails(true));
  }
}

// ---- hostile comments ----

TEST(SuppressionComments, AMillionIdsInOneCommentIsLinear) {
  std::string text = "# attnsel: ignore[";
  for (int i = 0; i < 1000000; ++i) text += i % 2 ? "args.prefix," : "nosuch.rule,";
  text += "]\ncmd\n";
  const auto start = std::chrono::steady_clock::now();
  SourceSuppressions s(text, "f.sh");
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(s.match("args.prefix", 2, 2, 2));
  const auto found = suppression_findings(s, {}, true);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 20.0);  // linear: well under a second unsanitized
  // Capped: 100 typos and one finding that says how many more.
  ASSERT_EQ(found.size(), 101u);
  EXPECT_NE(found.back().finding.diagnostic.message.find("499900 more"), std::string::npos) << found.back().finding.diagnostic.message;
}

TEST(SuppressionComments, ACommentOnEveryLineAndACommandOverAllOfThem) {
  std::string text;
  for (int i = 0; i < 200000; ++i) text += "  --flag \\  # attnsel: ignore[args.prefix,cell,advisory]\n";
  text += "x\n";
  const auto start = std::chrono::steady_clock::now();
  SourceSuppressions s(text, "f.sh");
  EXPECT_EQ(s.size(), 200000u);
  for (int i = 1; i <= 20000; ++i) EXPECT_TRUE(s.match("cell.kind", i, 1, 200000));
  EXPECT_FALSE(s.match("args.unknown", 7, 1, 200000));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 20.0);
  const auto found = suppression_findings(s, {}, true);
  EXPECT_EQ(found.size(), 101u);  // args.prefix of each line unused: capped
}

TEST(SuppressionComments, HostileBytesInACommentAreNeverEchoedRaw) {
  const std::string text = "# attnsel: ignore[\x1b[31mred\x07,\xff\xfe]\ncmd\n";
  SourceSuppressions s(text, "f.sh");
  const auto found = suppression_findings(s, {}, true);
  ASSERT_FALSE(found.empty());
  // Messages are data: every writer encodes them for its channel (the text writer shown here).
  std::ostringstream out;
  auto writer = make_check_writer(CheckFormat::text, out);
  writer->file_findings(found);
  writer->finish();
  EXPECT_EQ(out.str().find('\x1b'), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find('\x07'), std::string::npos) << out.str();
}

// ---- what each format says about suppressed findings ----

std::string write(CheckFormat format, const CheckReport& r, bool verbose = false) {
  std::ostringstream out;
  CheckWriterOptions o;
  o.show_suppressed = verbose;
  auto writer = make_check_writer(format, out, o);
  writer->command(r.checks, &r.context);
  writer->skipped(r.skipped);
  writer->file_findings(r.file_findings);
  writer->finish();
  return out.str();
}

TEST(SuppressedFindings, EveryFormatCountsThemAndTheDocumentsCarryThem) {
  json c = {{"file", "serve.sh"}, {"gpus", "sm90"}, {"report_unused", true}};
  const CheckReport r = check_case(c);
  std::size_t suppressed = 0;
  for (const CommandCheck& k : r.checks) suppressed += k.suppressed.size();
  ASSERT_GT(suppressed, 0u);

  const json doc = json::parse(write(CheckFormat::json, r));
  EXPECT_GT(doc["summary"]["suppressed"].get<int>(), 0);
  bool in_source = false;
  for (const json& result : doc["results"])
    for (const json& s : result["suppressed"]) {
      in_source = in_source || s["suppression"]["kind"] == "inSource";
      for (const char* list : {"errors", "warnings", "notes"})
        for (const json& d : result[list]) EXPECT_FALSE(d["rule"] == s["rule"] && d["message"] == s["message"]) << s.dump();
    }
  EXPECT_TRUE(in_source);
  EXPECT_FALSE(doc["file_findings"].empty());

  const json sarif = json::parse(write(CheckFormat::sarif, r));
  std::size_t with_suppressions = 0;
  for (const json& result : sarif["runs"][0]["results"])
    if (result.contains("suppressions")) {
      ++with_suppressions;
      EXPECT_EQ(result["suppressions"][0]["kind"], "inSource");
    }
  EXPECT_GT(with_suppressions, 0u);

  const std::string text = write(CheckFormat::text, r);
  EXPECT_NE(text.find("suppressed (--verbose shows them)"), std::string::npos) << text;
  EXPECT_NE(text.find("[check.invalid-suppression]"), std::string::npos) << text;
  const std::string verbose = write(CheckFormat::text, r, true);
  EXPECT_NE(verbose.find("suppressed by serve.sh:4 (args.prefix)"), std::string::npos) << verbose;
  for (CheckFormat f : {CheckFormat::github, CheckFormat::concise, CheckFormat::markdown})
    EXPECT_NE(write(f, r).find(" suppressed"), std::string::npos) << name_of(f) << "\n" << write(f, r);
  // GitLab's report has no suppressed state: they are left out, and the comment findings are issues.
  const json gitlab = json::parse(write(CheckFormat::gitlab, r));
  bool unused = false;
  for (const json& issue : gitlab) unused = unused || issue["check_name"] == "check.unused-suppression";
  EXPECT_TRUE(unused);
}

TEST(SuppressedFindings, ASuppressedNotJudgedCommandIsStillNotJudged) {
  CommandCheck c;
  CheckDiagnostic d;
  d.diagnostic.rule = "select.not-judged";
  d.diagnostic.severity = Severity::warning;
  c.suppressed.push_back({d, Suppression{}});
  EXPECT_FALSE(c.judged());
  EXPECT_EQ(c.verdict(), Verdict::clean);
}

}  // namespace
}  // namespace attnsel
