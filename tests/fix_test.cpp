// Fixes of failing commands (include/attnsel/fix.hpp): the table tests/cases/fixes.json, and the
// property every fix must have wherever it is proposed: the command with its changes made passes on
// the target (every target, for the one fix of them all). The property is checked on the table and
// on every failing command of the check fixtures (tests/fixtures/check, tests/fixtures/deploy).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "attnsel/catalog.hpp"
#include "attnsel/check.hpp"
#include "attnsel/fix.hpp"
#include "attnsel/launch.hpp"
#include "attnsel/matrix.hpp"

namespace attnsel {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

const std::string kSource = ATTNSEL_SOURCE_DIR;

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

const Catalog& catalog() {
  static const std::shared_ptr<const Catalog> c = *builtin_catalog();
  return *c;
}

std::shared_ptr<const Matrix> matrix() { return *builtin_matrix(); }

std::vector<CheckTarget> targets(const std::string& list) {
  auto t = resolve_check_targets(catalog(), list, std::nullopt);
  EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().describe());
  return t.ok() ? *t : std::vector<CheckTarget>{};
}

// The command with the fix's arguments (and environment) judged on `on`: no error, judged.
void expect_passes(const CommandCheck& failing, const CommandFix& fix, const std::vector<CheckTarget>& on,
                   const CheckOptions& options, const std::string& where) {
  CheckOptions o = options;
  o.propose_fixes = false;
  EXPECT_EQ(fix.command.file, failing.command.file) << where;
  const auto env = [](const LaunchCommand& c) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& e : c.environment) out.emplace_back(e.name, e.value);
    return out;
  };
  EXPECT_TRUE(fix.command.args != failing.command.args || env(fix.command) != env(failing.command))
      << where << ": the fix changes nothing";
  for (const CommandCheck& c : check_command(matrix(), catalog(), fix.command, on, o)) {
    EXPECT_FALSE(c.fails(o.strict)) << where << ": the fix '" << describe_fix(fix) << "' still fails on "
                                    << c.target.label;
    EXPECT_TRUE(c.judged()) << where << ": the fix '" << describe_fix(fix) << "' is not judged on " << c.target.label;
  }
}

// Every fix the checks carry passes where it is proposed.
void expect_fixes_pass(const std::vector<CommandCheck>& checks, const CheckOptions& options, const std::string& where) {
  std::vector<CheckTarget> all;
  for (const CommandCheck& c : checks) all.push_back(c.target);
  for (const CommandCheck& c : checks) {
    if (!c.fails(options.strict)) EXPECT_FALSE(c.fix) << where << ": a fix for " << c.target.label << ", which passes";
    if (c.fix) expect_passes(c, *c.fix, {c.target}, options, where + " on " + c.target.label);
  }
  if (!checks.empty() && checks.front().fix_all_targets)
    expect_passes(checks.front(), *checks.front().fix_all_targets, all, options, where + " on every target");
}

struct FixCase {
  std::string name;
  json spec;
};

std::vector<FixCase> fix_cases() {
  std::vector<FixCase> out;
  const json doc = json::parse(read_text(kSource + "/tests/cases/fixes.json"));
  for (const json& c : doc.at("cases")) out.push_back({c.at("name").get<std::string>(), c});
  return out;
}

class FixTable : public ::testing::TestWithParam<FixCase> {};

TEST_P(FixTable, ProposesTheNearestPassingCommand) {
  const json& spec = GetParam().spec;
  static const std::set<std::string> kKeys{"name", "command", "text", "file_name", "gpus", "release", "expect"};
  for (const auto& [key, value] : spec.items()) EXPECT_TRUE(kKeys.count(key)) << "unknown key '" << key << "'";
  LaunchCommand command;
  if (spec.contains("command")) {
    auto parsed = launch_command_from_argv(spec.at("command").get<std::vector<std::string>>());
    ASSERT_TRUE(parsed.ok()) << parsed.error().describe();
    command = *parsed;
  } else {
    const LaunchScan scan = scan_launch_input(spec.at("text").get<std::string>(), spec.at("file_name").get<std::string>());
    ASSERT_EQ(scan.commands.size(), 1u);
    command = scan.commands.front();
  }
  CheckOptions options;
  options.advisories = false;
  if (spec.contains("release")) {
    options.release = spec.at("release").get<std::string>();
    options.release_engine = command.engine;
  }
  const std::vector<CheckTarget> on = targets(spec.at("gpus").get<std::string>());
  const std::vector<CommandCheck> checks = check_command(matrix(), catalog(), command, on, options);
  ASSERT_EQ(checks.size(), on.size());
  const json& expect = spec.at("expect");
  for (const CommandCheck& c : checks) {
    const json& want = expect.at("per_target").at(c.target.label);
    const std::string got = c.fix ? describe_fix(*c.fix) : "(none)";
    EXPECT_EQ(got, want.is_null() ? "(none)" : want.get<std::string>()) << c.target.label;
  }
  const json& all = expect.at("all_targets");
  const auto& every = checks.front().fix_all_targets;
  EXPECT_EQ(every ? describe_fix(*every) : "(none)", all.is_null() ? "(none)" : all.get<std::string>()) << "every target";
  expect_fixes_pass(checks, options, GetParam().name);
}

INSTANTIATE_TEST_SUITE_P(Cases, FixTable, ::testing::ValuesIn(fix_cases()),
                         [](const ::testing::TestParamInfo<FixCase>& info) {
                           std::string n = info.param.name;
                           for (char& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

// Every failing command of the check fixtures, on GPUs of three vendors' generations: each fix
// passes where it is proposed, and most failing commands get one.
TEST(FixProperty, EveryProposedFixPassesOnTheFixtures) {
  const std::vector<CheckTarget> on = targets("sm80,sm90,sm100,MI300X");
  std::size_t failing = 0, fixed = 0, files = 0;
  for (const char* dir : {"/tests/fixtures/check", "/tests/fixtures/deploy"}) {
    for (const auto& entry : fs::recursive_directory_iterator(kSource + dir)) {
      if (!entry.is_regular_file()) continue;
      const std::string path = entry.path().string();
      const LaunchScan scan = scan_launch_input(read_text(path), entry.path().filename().string());
      if (scan.commands.empty()) continue;
      ++files;
      for (const LaunchCommand& command : scan.commands) {
        CheckOptions options;
        options.advisories = false;
        const std::vector<CommandCheck> checks = check_command(matrix(), catalog(), command, on, options);
        for (const CommandCheck& c : checks) {
          if (!c.fails(false)) continue;
          ++failing;
          if (c.fix) ++fixed;
        }
        expect_fixes_pass(checks, options, path + ":" + std::to_string(command.line));
      }
    }
  }
  EXPECT_GT(files, 20u);
  EXPECT_GT(failing, 50u);
  // Not every failure has a fix in its flags (an unknown model, a missing required flag), but most do.
  EXPECT_GT(fixed * 2, failing) << fixed << " of " << failing << " failing checks have a fix";
  std::cout << files << " files: " << fixed << " of " << failing << " failing checks have a fix\n";
}

// No fixes when they are not asked for, and none for a command that passes everywhere.
TEST(FixOptions, OffMeansNone) {
  auto command = launch_command_from_argv({"python3", "-m", "sglang.launch_server", "--model-path",
                                           "deepseek-ai/DeepSeek-V3", "--attention-backend", "trtllm_mla"});
  ASSERT_TRUE(command.ok());
  CheckOptions options;
  options.propose_fixes = false;
  for (const CommandCheck& c : check_command(matrix(), catalog(), *command, targets("sm90"), options)) {
    EXPECT_TRUE(c.fails(false));
    EXPECT_FALSE(c.fix);
    EXPECT_FALSE(c.fix_all_targets);
  }
}

// A command longer than any real launch line is not searched: no fix, and the budget says so.
TEST(FixBudget, AHugeCommandGetsNoFixSearch) {
  std::vector<std::string> argv{"python3", "-m", "sglang.launch_server", "--model-path", "deepseek-ai/DeepSeek-V3"};
  for (std::size_t i = 0; i < kFixMaxArguments; ++i) argv.insert(argv.end(), {"--attention-backend", "trtllm_mla"});
  auto command = launch_command_from_argv(argv);
  ASSERT_TRUE(command.ok());
  CheckOptions options;
  options.propose_fixes = false;
  const auto checks = check_command(matrix(), catalog(), *command, targets("sm90"), options);
  ASSERT_TRUE(checks.front().fails(false));
  const CommandFixes fixes = propose_fixes(matrix(), catalog(), checks, options);
  EXPECT_TRUE(fixes.budget_exhausted);
  EXPECT_EQ(fixes.judged, 0u);
  EXPECT_FALSE(fixes.per_target.front());
}

// The budget bounds the judgements: with 1 per target, only the first candidate is judged.
TEST(FixBudget, StopsAtTheBudgetAndSaysSo) {
  auto command = launch_command_from_argv({"python3", "-m", "sglang.launch_server", "--model-path",
                                           "deepseek-ai/DeepSeek-V3", "--attention-backend", "fa4", "--kv-cache-dtype",
                                           "fp8_e5m2", "--page-size", "7"});
  ASSERT_TRUE(command.ok());
  CheckOptions options;
  options.propose_fixes = false;
  const auto checks = check_command(matrix(), catalog(), *command, targets("sm90,sm100"), options);
  const CommandFixes fixes = propose_fixes(matrix(), catalog(), checks, options, 1);
  EXPECT_TRUE(fixes.budget_exhausted);
  EXPECT_LE(fixes.judged, 4u);  // one a failing target (2), then one a target for the fix of them all (2)
}

}  // namespace
}  // namespace attnsel
