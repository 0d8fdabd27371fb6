// The machine formats of `attnsel check` (SARIF 2.1.0, concise lines, GitLab Code Quality) and the
// text writer's quiet mode: the fixture command set tests/fixtures/formats/serve.sh written in each
// format and compared with tests/golden/formats/ (regenerate after an intended change:
// ATTNSEL_UPDATE_GOLDEN=1 build/tests/check_formats_test), then what each format promises checked
// on the output itself; --exit-zero and -q through the CLI. The SARIF schema validation is
// tests/formats/validate_formats.py (ctest formats.*).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "attnsel/version.hpp"
#include "attnsel/catalog.hpp"
#include "attnsel/check.hpp"
#include "attnsel/launch.hpp"
#include "attnsel/matrix.hpp"
#include "attnsel/rules.hpp"

namespace attnsel {
namespace {

using json = nlohmann::json;

const std::string kSource = ATTNSEL_SOURCE_DIR;
const std::string kFixture = "tests/fixtures/formats/serve.sh";  // as named on the command line, from the root

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void expect_golden(const std::string& name, const std::string& actual) {
  const std::string path = kSource + "/tests/golden/formats/" + name;
  if (const char* update = std::getenv("ATTNSEL_UPDATE_GOLDEN"); update && *update == '1') {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in.good()) << "missing golden file " << path << " (run with ATTNSEL_UPDATE_GOLDEN=1)";
  std::ostringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(actual, expected.str()) << "golden " << name << " differs (ATTNSEL_UPDATE_GOLDEN=1 regenerates it)";
}

// The fixture's checks as `attnsel check --gpu sm90,sm100 --engine-version 0.5.12` makes them, without
// advisories (whose findings change as the data grows; tests/incidents_test pins those), and its
// skipped blocks.
struct Checked {
  std::vector<std::vector<CommandCheck>> commands;  // one entry per command, one check per target
  std::vector<Error> skipped;
};

Checked check_fixture(const std::string& name = kFixture) {
  auto matrix = builtin_matrix("sglang", parse_release("0.5.12"));
  EXPECT_TRUE(matrix.ok());
  auto catalog = builtin_catalog();
  EXPECT_TRUE(catalog.ok());
  auto targets = resolve_check_targets(**catalog, "sm90,sm100", std::nullopt);
  EXPECT_TRUE(targets.ok());
  const std::string text = read_file(kSource + "/" + kFixture);
  LaunchScan scan = scan_launch_input(text, name);
  CheckOptions options;
  options.advisories = false;
  options.release = "0.5.12";
  const FileLines lines(text);
  Checked out;
  for (const LaunchCommand& cmd : scan.commands) {
    std::vector<CommandCheck> results = check_command(*matrix, **catalog, cmd, *targets, options);
    locate_columns(results, lines);
    out.commands.push_back(std::move(results));
  }
  out.skipped = scan.skipped;
  return out;
}

std::string write(CheckFormat format, const Checked& checked, CheckWriterOptions options = {},
                  const CheckInputs& inputs = {}) {
  std::ostringstream out;
  auto writer = make_check_writer(format, out, options);
  for (const auto& command : checked.commands) writer->command(command, nullptr);
  writer->skipped(checked.skipped);
  writer->finish(inputs);
  return out.str();
}

CheckInputs one_file() {
  CheckInputs in;
  in.files = 1;
  in.files_with_commands = 1;
  return in;
}

// ---- goldens: the fixture command set in every new format ----

TEST(CheckFormatGoldens, EveryFormatOfTheFixtureCommandSet) {
  const Checked checked = check_fixture();
  ASSERT_EQ(checked.commands.size(), 5u);
  ASSERT_EQ(checked.skipped.size(), 1u);
  expect_golden("serve.sarif", write(CheckFormat::sarif, checked, {}, one_file()));
  expect_golden("serve.concise.txt", write(CheckFormat::concise, checked, {}, one_file()));
  expect_golden("serve.gitlab.json", write(CheckFormat::gitlab, checked, {}, one_file()));
  CheckWriterOptions quiet;
  quiet.quiet = true;
  expect_golden("serve.quiet.txt", write(CheckFormat::text, checked, quiet, one_file()));
  expect_golden("serve.concise-quiet.txt", write(CheckFormat::concise, checked, quiet, one_file()));
  CheckWriterOptions strict = quiet;
  strict.strict = true;
  expect_golden("serve.concise-quiet-strict.txt", write(CheckFormat::concise, checked, strict, one_file()));
}

// ---- format names ----

TEST(CheckFormatNames, ParseNamesEveryChoiceAndTheClosest) {
  for (const std::string& name : check_format_names()) {
    auto f = parse_check_format(name);
    ASSERT_TRUE(f.ok()) << name;
    EXPECT_EQ(name_of(*f), name);
  }
  EXPECT_EQ(check_format_names().size(), 7u);
  auto bad = parse_check_format("sarf");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::unknown_name);
  EXPECT_EQ(bad.error().where, "--format");
  EXPECT_EQ(bad.error().suggestion, "sarif");
  EXPECT_EQ(bad.error().choices, check_format_names());
  EXPECT_NE(bad.error().message.find("text, json, github, markdown, sarif, concise, gitlab"), std::string::npos)
      << bad.error().message;
}

// ---- SARIF ----

TEST(Sarif, ResultsNameTheirRuleWithItsPageAndTheGpu) {
  const json doc = json::parse(write(CheckFormat::sarif, check_fixture(), {}, one_file()));
  EXPECT_EQ(doc["version"], "2.1.0");
  ASSERT_EQ(doc["runs"].size(), 1u);
  const json& run = doc["runs"][0];
  const json& driver = run["tool"]["driver"];
  EXPECT_EQ(driver["name"], "attnsel");
  EXPECT_EQ(driver["version"], version());
  const json& rules = driver["rules"];
  std::set<std::string> rule_ids;
  for (const json& r : rules) {
    EXPECT_TRUE(rule_ids.insert(r["id"].get<std::string>()).second) << "a rule listed twice: " << r["id"];
    // Every rule the fixture reports has a page: summary, help, URI and default level from it.
    EXPECT_EQ(r["helpUri"], rule_help_uri(r["id"].get<std::string>())) << r;
    EXPECT_FALSE(r["shortDescription"]["text"].get<std::string>().empty()) << r;
    EXPECT_FALSE(r["fullDescription"]["text"].get<std::string>().empty()) << r;
    EXPECT_NE(r["help"]["text"].get<std::string>().find("How to fix: "), std::string::npos) << r;
    EXPECT_TRUE(r["defaultConfiguration"]["level"].is_string()) << r;
  }
  const json& results = run["results"];
  ASSERT_EQ(results.size(), 6u);
  std::set<std::string> used;
  for (const json& r : results) {
    const std::size_t index = r["ruleIndex"];
    ASSERT_LT(index, rules.size());
    EXPECT_EQ(rules[index]["id"], r["ruleId"]);
    used.insert(r["ruleId"].get<std::string>());
    EXPECT_TRUE(r["partialFingerprints"]["attnselFinding/v1"].is_string());
  }
  EXPECT_EQ(used, rule_ids) << "every rule listed is one a result names";

  // On one GPU of two: the message and the properties say which.
  const json& first = results[0];
  EXPECT_EQ(first["ruleId"], "cell.compute-capability");
  EXPECT_EQ(first["level"], "error");
  EXPECT_EQ(first["message"]["text"].get<std::string>().rfind("[sm90] --attention-backend trtllm_mla: ", 0), 0u)
      << first["message"];
  EXPECT_EQ(first["properties"]["gpus"], json::array({"sm90"}));
  EXPECT_EQ(first["properties"]["allGpus"], false);
  const json& where = first["locations"][0]["physicalLocation"];
  EXPECT_EQ(where["artifactLocation"]["uri"], kFixture);
  EXPECT_EQ(where["artifactLocation"]["uriBaseId"], "%SRCROOT%");
  EXPECT_EQ(where["region"]["startLine"], 7);
  EXPECT_EQ(where["region"]["startColumn"], 3);
  EXPECT_EQ(where["region"]["endColumn"], 22);
  EXPECT_EQ(run["columnKind"], "unicodeCodePoints");
  // On both GPUs: once, without a GPU in the message.
  EXPECT_EQ(results[1]["ruleId"], "flashmla-page-size");
  EXPECT_EQ(results[1]["properties"]["gpus"], json::array({"sm90", "sm100"}));
  EXPECT_EQ(results[1]["properties"]["allGpus"], true);
  EXPECT_EQ(results[1]["message"]["text"].get<std::string>().rfind("--page-size 16: ", 0), 0u);
  // A note is a note; the skipped block a warning of rule check.skipped at its line and column.
  EXPECT_EQ(results[3]["level"], "note");
  const json& skipped = results.back();
  EXPECT_EQ(skipped["ruleId"], "check.skipped");
  EXPECT_EQ(skipped["level"], "warning");
  EXPECT_EQ(skipped["locations"][0]["physicalLocation"]["region"]["startLine"], 22);
  EXPECT_EQ(skipped["locations"][0]["physicalLocation"]["region"]["startColumn"], 46);
  // The totals, and the run's success: inputs that could not be read are its notifications.
  EXPECT_EQ(run["properties"]["summary"]["commands"], 5);
  EXPECT_EQ(run["properties"]["ok"], false);
  EXPECT_EQ(run["invocations"][0]["executionSuccessful"], true);
  CheckInputs broken = one_file();
  broken.problems.push_back("missing.sh: cannot open: No such file or directory");
  const json failed = json::parse(write(CheckFormat::sarif, check_fixture(), {}, broken));
  const json& invocation = failed["runs"][0]["invocations"][0];
  EXPECT_EQ(invocation["executionSuccessful"], false);
  EXPECT_EQ(invocation["toolExecutionNotifications"][0]["level"], "error");
  EXPECT_EQ(invocation["toolExecutionNotifications"][0]["message"]["text"], broken.problems[0]);
}

TEST(Sarif, UrisKeepEveryFileNameAndRelativeOnesResolveAgainstTheWorkingDirectory) {
  const auto uri_of = [](const std::string& name) {
    const json doc = json::parse(write(CheckFormat::sarif, check_fixture(name)));
    return doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"];
  };
  EXPECT_EQ(uri_of("./deploy/serve.sh")["uri"], "deploy/serve.sh");
  EXPECT_EQ(uri_of("deploy/my serve:1%.sh")["uri"], "deploy/my%20serve%3A1%25.sh");
  EXPECT_EQ(uri_of("d\xc3\xa9ploy/\x01\xff.sh")["uri"], "d%C3%A9ploy/%01%FF.sh");  // bytes, invalid UTF-8 too
  const json absolute = uri_of("/srv/deploy/serve.sh");
  EXPECT_EQ(absolute["uri"], "file:///srv/deploy/serve.sh");
  EXPECT_FALSE(absolute.contains("uriBaseId"));
}

TEST(Sarif, ResultsStreamBeforeTheRunCloses) {
  // Results are written as commands come: memory does not hold them until the end.
  const Checked checked = check_fixture();
  std::ostringstream out;
  auto writer = make_check_writer(CheckFormat::sarif, out, CheckWriterOptions{});
  writer->command(checked.commands[0], nullptr);
  EXPECT_NE(out.str().find("\"ruleId\": \"cell.compute-capability\""), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("\"tool\""), std::string::npos);
  writer->finish();
  EXPECT_TRUE(json::accept(out.str())) << out.str();
}

TEST(Sarif, ACommandWithoutAFileHasNoLocation) {
  auto matrix = builtin_matrix("sglang", parse_release("0.5.12"));
  auto catalog = builtin_catalog();
  auto targets = resolve_check_targets(**catalog, "sm90", std::nullopt);
  auto cmd = launch_command_from_argv({"python3", "-m", "sglang.launch_server", "--model-path",
                                       "deepseek-ai/DeepSeek-V3", "--attention-backend", "trtllm_mla"});
  ASSERT_TRUE(cmd.ok());
  CheckOptions options;
  options.advisories = false;
  Checked checked;
  checked.commands.push_back(check_command(*matrix, **catalog, *cmd, *targets, options));
  const json doc = json::parse(write(CheckFormat::sarif, checked));
  const json& r = doc["runs"][0]["results"][0];
  EXPECT_EQ(r["ruleId"], "cell.compute-capability");
  EXPECT_FALSE(r.contains("locations"));
  EXPECT_EQ(r["properties"]["command"],
            "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --attention-backend trtllm_mla");
  const json gitlab = json::parse(write(CheckFormat::gitlab, checked));
  EXPECT_EQ(gitlab[0]["location"]["path"], "<command line>");
  EXPECT_EQ(gitlab[0]["location"]["lines"]["begin"], 1);
  EXPECT_EQ(write(CheckFormat::concise, checked).rfind("attnsel: error: --attention-backend trtllm_mla: ", 0), 0u);
}

// ---- concise ----

// The problem matcher the repository ships for the concise format (.github/attnsel-problem-matcher.json):
// GitHub's runner evaluates it as a JavaScript regular expression, std::regex's default grammar.
std::regex matcher_regex() {
  const json matcher = json::parse(read_file(kSource + "/.github/attnsel-problem-matcher.json"));
  const json& pattern = matcher["problemMatcher"][0]["pattern"][0];
  EXPECT_EQ(pattern["file"], 1);
  EXPECT_EQ(pattern["line"], 2);
  EXPECT_EQ(pattern["column"], 3);
  EXPECT_EQ(pattern["severity"], 4);
  EXPECT_EQ(pattern["message"], 5);
  EXPECT_EQ(pattern["code"], 6);
  return std::regex(pattern["regexp"].get<std::string>(), std::regex::ECMAScript);
}

TEST(Concise, EveryFindingIsALineTheProblemMatcherReads) {
  const std::regex re = matcher_regex();
  std::istringstream lines(write(CheckFormat::concise, check_fixture(), {}, one_file()));
  std::size_t matched = 0, notes = 0;
  for (std::string line; std::getline(lines, line);) {
    EXPECT_NE(line.rfind("::", 0), 0u) << "a line that would be a workflow command: " << line;
    EXPECT_EQ(line.find("##["), std::string::npos) << line;
    std::smatch m;
    if (line.find(": note: ") != std::string::npos) {
      ++notes;  // notes never fail a check: the matcher leaves them to the log
      EXPECT_FALSE(std::regex_match(line, m, re)) << line;
      continue;
    }
    if (line.rfind("attnsel: ", 0) == 0) {
      EXPECT_FALSE(std::regex_match(line, m, re)) << "the summary is not a finding: " << line;
      continue;
    }
    ASSERT_TRUE(std::regex_match(line, m, re)) << line;
    ++matched;
    EXPECT_EQ(m[1].str(), kFixture);
    EXPECT_TRUE(m[4] == "error" || m[4] == "warning") << line;
    EXPECT_EQ(line.substr(line.size() - m[6].length() - 2), "[" + m[6].str() + "]");
  }
  EXPECT_EQ(matched, 5u);  // 3 errors, a warning, the skipped block
  EXPECT_EQ(notes, 1u);
  // The column is there where it is known, left out where not.
  std::smatch m;
  const std::string with_column = "deploy/serve.sh:7:3: error: [sm90] x [cell.compute-capability]";
  ASSERT_TRUE(std::regex_match(with_column, m, re));
  EXPECT_EQ(m[3].str(), "3");
  const std::string no_column = "deploy/a:1:b.sh:9: warning: y [fa4-page-size-sm100]";
  ASSERT_TRUE(std::regex_match(no_column, m, re));
  EXPECT_EQ(m[1].str(), "deploy/a:1:b.sh");
  EXPECT_EQ(m[2].str(), "9");
  EXPECT_FALSE(m[3].matched);
}

// ---- GitLab Code Quality ----

TEST(Gitlab, IssuesHaveStableUniqueFingerprintsAndGitlabsSeverities) {
  const Checked checked = check_fixture();
  const std::string text = write(CheckFormat::gitlab, checked);
  EXPECT_EQ(text, write(CheckFormat::gitlab, check_fixture())) << "the same input, the same report";
  const json issues = json::parse(text);
  ASSERT_TRUE(issues.is_array());
  ASSERT_EQ(issues.size(), 6u);
  std::set<std::string> fingerprints;
  const std::set<std::string> severities = {"info", "minor", "major", "critical", "blocker"};
  for (const json& i : issues) {
    EXPECT_TRUE(fingerprints.insert(i["fingerprint"].get<std::string>()).second) << i;
    EXPECT_EQ(i["fingerprint"].get<std::string>().size(), 64u);
    EXPECT_EQ(severities.count(i["severity"].get<std::string>()), 1u) << i;
    EXPECT_FALSE(i["description"].get<std::string>().empty());
    EXPECT_FALSE(i["check_name"].get<std::string>().empty());
    EXPECT_EQ(i["location"]["path"], kFixture);
    EXPECT_GE(i["location"]["lines"]["begin"].get<int>(), 1);
  }
  EXPECT_EQ(issues[0]["severity"], "critical");  // an error
  EXPECT_EQ(issues[1]["severity"], "major");     // a warning
  EXPECT_EQ(issues[3]["severity"], "info");      // a note
  // A fingerprint is the finding's, not its place in the output: another command before it changes nothing.
  Checked later = checked;
  later.commands.erase(later.commands.begin());
  const json fewer = json::parse(write(CheckFormat::gitlab, later));
  EXPECT_EQ(fewer[0]["fingerprint"], issues[1]["fingerprint"]);
}

// ---- --exit-zero and -q through the CLI ----

class FormatsCli : public ::testing::Test {
 protected:
  struct Run {
    int code = -1;
    std::string out, err;
  };
  void SetUp() override {
    ASSERT_FALSE(std::string(ATTNSEL_CLI).empty()) << "the attnsel CLI is not built";
    dir_ = std::filesystem::temp_directory_path() / ("attnsel-formats-test-" + std::to_string(::getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string file(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
    return (dir_ / name).string();
  }
  Run run(const std::string& args) {
    const std::string out = (dir_ / "stdout").string(), err = (dir_ / "stderr").string();
    const std::string cmd = "cd '" + kSource + "' && env -u ATTNSEL_GPU -u ATTNSEL_MATRIX -u GITHUB_STEP_SUMMARY NO_COLOR=1 '" +
                            std::string(ATTNSEL_CLI) + "' " + args + " >'" + out + "' 2>'" + err + "'";
    const int status = std::system(cmd.c_str());
    Run r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = read_file(out);
    r.err = read_file(err);
    return r;
  }
  std::filesystem::path dir_;
};

TEST_F(FormatsCli, EveryFormatIsAcceptedAndAnUnknownOneNamesTheChoices) {
  for (const std::string& name : check_format_names()) {
    const Run r = run("check --gpu sm90 --format " + name + " tests/fixtures/check/launch.sh");
    EXPECT_EQ(r.code, 1) << name << ": " << r.err;
    EXPECT_FALSE(r.out.empty()) << name;
  }
  for (const char* name : {"sarif", "gitlab"}) {
    const Run r = run(std::string("check --gpu sm90 --format ") + name + " tests/fixtures/check/launch.sh");
    EXPECT_TRUE(json::accept(r.out)) << name;
    EXPECT_EQ(r.out.back(), '\n');
  }
  const Run bad = run("check --gpu sm90 --format sarf tests/fixtures/check/launch.sh");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("sarif"), std::string::npos) << bad.err;
}

TEST_F(FormatsCli, ExitZeroReportsFindingsWithoutFailingButNotUnreadableInput) {
  Run r = run("check --gpu sm90 --exit-zero --format concise tests/fixtures/check/launch.sh");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find(": error: "), std::string::npos) << "the findings are still reported";
  EXPECT_EQ(run("check --gpu sm90 --strict --exit-zero tests/fixtures/formats/serve.sh").code, 2)
      << "a skipped block is an incomplete verdict";
  EXPECT_EQ(run("check --gpu sm90 --exit-zero tests/fixtures/check/launch.sh does-not-exist.sh").code, 2);
  EXPECT_EQ(run("check --gpu sm99 --exit-zero tests/fixtures/check/launch.sh").code, 2);
  const std::string warned = file("warned.sh", "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 "
                                               "--attention-backend flashmla --page-size 16\n");
  EXPECT_EQ(run("check --gpu sm90 --strict '" + warned + "'").code, 1);
  EXPECT_EQ(run("check --gpu sm90 --strict --exit-zero '" + warned + "'").code, 0);
  // JSON's ok stays the verdict: the check did not pass, whatever the exit code.
  r = run("check --gpu sm90 --exit-zero --format json tests/fixtures/check/launch.sh");
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(json::parse(r.out)["ok"], false);
}

TEST_F(FormatsCli, QuietPrintsOnlyWhatFailsAndNothingOnSuccess) {
  const std::string clean = file("clean.sh", "python3 -m sglang.launch_server --model-path \"$MODEL\" --attention-backend fa3\n"
                                             "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 "
                                             "--attention-backend flashmla --page-size 16\n");
  const std::string other = file("notes.md", "# no command here\n");
  for (const char* format : {"text", "concise"}) {
    const Run r = run(std::string("check -q --gpu sm90 --format ") + format + " '" + clean + "' '" + other + "'");
    EXPECT_EQ(r.code, 0) << format;
    EXPECT_EQ(r.out, "") << format << ": a passing check prints nothing, notes and warnings included";
    EXPECT_EQ(r.err, "") << format;
  }
  const Run failing = run("check --quiet --gpu sm90 tests/fixtures/check/launch.sh");
  EXPECT_EQ(failing.code, 1);
  EXPECT_NE(failing.out.find("✗"), std::string::npos) << failing.out;
  EXPECT_EQ(failing.out.find(" ! "), std::string::npos) << "no warnings: " << failing.out;
  EXPECT_EQ(failing.out.find("runs "), std::string::npos) << "no plans: " << failing.out;
  EXPECT_NE(failing.out.find("failing"), std::string::npos) << "the totals when something fails";
  // With --strict a warning fails, so -q shows it.
  const Run strict = run("check -q --strict --gpu sm90 --format concise '" + clean + "'");
  EXPECT_EQ(strict.code, 1);
  EXPECT_NE(strict.out.find(": warning: --page-size 16: "), std::string::npos) << strict.out;
  EXPECT_EQ(strict.out.find(": note: "), std::string::npos) << strict.out;
  // A warning about the input (a release newer than any matrix) is told only where it fails, under --strict.
  const std::string newer = file("Dockerfile", "FROM lmsysorg/sglang:v9.0.0\nCMD [\"python3\", \"-m\", \"sglang.launch_server\", "
                                               "\"--model-path\", \"meta-llama/Llama-3.1-8B-Instruct\"]\n");
  Run r = run("check -q --gpu sm90 '" + newer + "'");
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out + r.err, "");
  r = run("check -q --strict --gpu sm90 '" + newer + "'");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("newer than any matrix"), std::string::npos) << r.err;
  // An input that cannot be read is still told.
  const Run missing = run("check -q --gpu sm90 does-not-exist.sh");
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("does-not-exist.sh"), std::string::npos);
}

}  // namespace
}  // namespace attnsel
