// The walk of `attnsel check DIR` (include/attnsel/walk.hpp): every kind of file recognised by
// name and first line, each found command as the table tests/cases/walk_fixtures.json says, every
// path passed over counted with why, a directory giving the same findings as its files named one
// by one, .gitignore files, --exclude and --include, and `check DIR` that reads nothing exiting 2.
// ATTNSEL_UPDATE_WALK_CASES=1 rewrites the table from what the walk and the readers find (review
// the diff).
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnsel/catalog.hpp"
#include "attnsel/check_input.hpp"
#include "attnsel/launch.hpp"
#include "attnsel/matrix.hpp"
#include "attnsel/walk.hpp"

#ifndef ATTNSEL_TESTS_DIR
#define ATTNSEL_TESTS_DIR "tests"
#endif
#ifndef ATTNSEL_CLI
#define ATTNSEL_CLI ""
#endif

namespace attnsel {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

const std::string kDir = std::string(ATTNSEL_TESTS_DIR) + "/fixtures/walk";
const std::string kCases = std::string(ATTNSEL_TESTS_DIR) + "/cases/walk_fixtures.json";

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_text(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

// A walked path relative to the walked directory ("build", "docs/serving.mdx").
std::string relative(const std::string& path, const std::string& root) {
  return fs::path(path).lexically_relative(root).generic_string();
}

// What the readers find in one file, in the shape of its expectation.
json actual_of(const std::string& rel) {
  const std::string text = read_text(kDir + "/" + rel);
  const LaunchScan scan = scan_launch_input(text, rel);
  json j;
  j["file"] = rel;
  j["format"] = std::string(name_of(detect_input_format(rel, text)));
  json commands = json::array();
  for (const LaunchCommand& c : scan.commands) {
    json cj;
    cj["line"] = c.line;
    cj["launcher"] = c.launcher;
    cj["args"] = c.args;
    json nonliteral = json::object();
    for (std::size_t k = 0; k < c.args.size(); ++k) {
      if (c.shape(k) == WordShape::value) nonliteral[std::to_string(k)] = "value";
      if (c.shape(k) == WordShape::words) nonliteral[std::to_string(k)] = "words";
    }
    cj["nonliteral"] = nonliteral;
    commands.push_back(cj);
  }
  j["commands"] = commands;
  json skipped = json::array();
  for (const Error& e : scan.skipped) skipped.push_back(e.where + ": " + e.message);
  j["skipped"] = skipped;
  return j;
}

json passed_over_of(const WalkResult& walk, const std::string& root) {
  json out = json::array();
  for (const SkippedPath& s : walk.skipped)
    out.push_back({{"path", relative(s.path, root)}, {"directory", s.directory}, {"reason", std::string(name_of(s.reason))},
                   {"detail", s.detail}});
  return out;
}

json walk_cases() {
  const WalkResult walk = walk_paths({kDir});
  json cases;
  cases["files"] = json::array();
  for (const std::string& f : walk.files) cases["files"].push_back(actual_of(relative(f, kDir)));
  cases["passed_over"] = passed_over_of(walk, kDir);
  return cases;
}

TEST(WalkFixtures, EveryFileAndEveryCommandAsTheTableSays) {
  if (const char* update = std::getenv("ATTNSEL_UPDATE_WALK_CASES"); update && *update == '1') {
    std::ofstream(kCases) << walk_cases().dump(2) << "\n";
    GTEST_SKIP() << "rewrote " << kCases;
  }
  const json expected = json::parse(read_text(kCases));
  const json actual = walk_cases();
  ASSERT_EQ(actual["files"].size(), expected["files"].size());
  for (std::size_t k = 0; k < expected["files"].size(); ++k) {
    const json& want = expected["files"][k];
    SCOPED_TRACE(want.at("file").get<std::string>());
    EXPECT_EQ(actual["files"][k], want);
  }
  EXPECT_EQ(actual["passed_over"], expected["passed_over"]);
}

// The table itself: each kind the issue names has a file, and each such file holds commands.
TEST(WalkFixtures, EveryKindHasAFileWithCommands) {
  const json expected = json::parse(read_text(kCases));
  std::map<std::string, std::size_t> commands_by_format;
  std::set<std::string> names;
  for (const json& f : expected["files"]) {
    commands_by_format[f["format"]] += f["commands"].size();
    names.insert(f["file"]);
  }
  for (const char* format : {"makefile", "justfile", "procfile", "systemd", "markdown", "shell", "kubernetes", "helm"})
    EXPECT_GT(commands_by_format[format], 0u) << format;
  for (const char* file : {"Makefile", "GNUmakefile", "make/vllm.mk", "justfile", "Procfile", "slurm/llama3-70b.sbatch",
                           "slurm/multinode.slurm", "pbs/vllm.pbs", "systemd/qwen3vl-eagle3.service",
                           "docs/serving.mdx", "ansible/serve.sh.j2", "ansible/values.yaml.j2", "sky/serve.sky.yaml",
                           "dstack/service.dstack.yml", "scripts/launch", ".github/workflows/smoke.yml"})
    EXPECT_TRUE(names.count(file)) << file << " is not walked";
  for (const json& f : expected["files"])
    EXPECT_TRUE(f["file"] == "README.md" || !f["commands"].empty()) << f["file"] << " holds no command";
}

// A file the walk reads is read the same way when named alone: its format is recognised by name
// and first line, and a file passed over is one recognised_format does not know.
TEST(WalkFixtures, TheWalkAndTheFileAloneAgree) {
  const WalkResult walk = walk_paths({kDir});
  for (const std::string& f : walk.files) {
    const std::string text = read_text(f);
    const std::optional<InputFormat> format = recognised_format(f, text);
    ASSERT_TRUE(format.has_value()) << f;
    EXPECT_EQ(*format, detect_input_format(f, text)) << f;
    const LaunchScan in_walk = scan_launch_input(text, f);
    const LaunchScan alone = scan_launch_input(read_text(f), fs::path(f).lexically_normal().string());
    EXPECT_EQ(in_walk.commands.size(), alone.commands.size()) << f;
  }
  for (const SkippedPath& s : walk.skipped)
    EXPECT_TRUE(s.reason != SkipReason::other_kind || !recognised_format(s.path, read_text(s.path))) << s.path;
}

// Every entry of the tree is a file read, a path passed over, or a folder walked into: nothing is
// skipped without being counted.
void expect_everything_counted(const std::string& root, const WalkResult& walk) {
  std::set<std::string> accounted;
  for (const std::string& f : walk.files) accounted.insert(fs::path(f).lexically_normal().string());
  std::set<std::string> passed_over;
  for (const SkippedPath& s : walk.skipped) passed_over.insert(fs::path(s.path).lexically_normal().string());
  std::vector<fs::path> folders = {fs::path(root)};
  std::size_t seen = 0;
  while (!folders.empty()) {
    const fs::path dir = folders.back();
    folders.pop_back();
    for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
      ++seen;
      const std::string p = e.path().lexically_normal().string();
      if (passed_over.count(p)) continue;
      if (e.is_directory() && !e.is_symlink()) {
        folders.push_back(e.path());
        continue;
      }
      EXPECT_TRUE(accounted.count(p)) << p << " was neither read nor counted as passed over";
    }
  }
  EXPECT_GT(seen, 0u);
}

TEST(WalkFixtures, NothingIsSkippedWithoutBeingCounted) {
  expect_everything_counted(kDir, walk_paths({kDir}));
}

// A folder of the skip list named on the command line is walked.
TEST(Walk, ANamedFolderOfTheSkipListIsWalked) {
  const WalkResult walk = walk_paths({kDir + "/build"});
  ASSERT_EQ(walk.files.size(), 1u);
  EXPECT_EQ(relative(walk.files[0], kDir), "build/run.sh");
  EXPECT_TRUE(walk.skipped.empty());
  EXPECT_TRUE(walk.empty_directories.empty());
}

// ---- globs ----

struct GlobCase {
  const char* pattern;
  const char* path;
  bool directory;
  bool matches;
};

TEST(Glob, GitignoreSyntax) {
  const GlobCase cases[] = {
      {"*.log", "a.log", false, true},
      {"*.log", "deep/er/a.log", false, true},  // no slash: a name at any depth
      {"*.log", "a.log.txt", false, false},
      {"build/", "build", true, true},
      {"build/", "build", false, false},  // a trailing slash: folders only
      {"build/", "src/build", true, true},
      {"/build", "build", true, true},
      {"/build", "src/build", true, false},  // a leading slash anchors
      {"docs/*.md", "docs/a.md", false, true},
      {"docs/*.md", "docs/x/a.md", false, false},  // * never crosses a slash
      {"docs/*.md", "x/docs/a.md", false, false},  // an inner slash anchors too
      {"docs/**", "docs", true, true},             // ** is zero or more folders
      {"docs/**", "docs/x/y/a.md", false, true},
      {"**/deploy", "deploy", true, true},
      {"**/deploy", "a/b/deploy", true, true},
      {"a/**/b", "a/b", true, true},
      {"a/**/b", "a/x/y/b", true, true},
      {"a/**/b", "a/x/y/c", true, false},
      {"serve-?.sh", "serve-1.sh", false, true},
      {"serve-?.sh", "serve-12.sh", false, false},
      {"serve-[0-9].sh", "serve-7.sh", false, true},
      {"serve-[!0-9].sh", "serve-7.sh", false, false},
      {"serve-[!0-9].sh", "serve-x.sh", false, true},
      {"\\*.sh", "*.sh", false, true},
      {"\\*.sh", "a.sh", false, false},
      {"*", "anything", false, true},
      {"a*b*c*d*e*f*g", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false, false},
  };
  for (const GlobCase& c : cases)
    EXPECT_EQ(glob_match(c.pattern, c.path, c.directory), c.matches)
        << c.pattern << " against " << c.path << (c.directory ? "/" : "");
}

// ---- trees built here: .gitignore, --exclude, --include, links, special files ----

class WalkTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("attnsel-walk-test-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  std::string path(const std::string& rel) const { return (root_ / rel).string(); }
  void file(const std::string& rel, const std::string& text = "python3 -m sglang.launch_server --model-path x\n") {
    write_text(root_ / rel, text);
  }
  std::vector<std::string> files_of(const WalkResult& w) const {
    std::vector<std::string> out;
    for (const std::string& f : w.files) out.push_back(relative(f, root_.string()));
    return out;
  }
  std::map<std::string, std::string> skipped_of(const WalkResult& w) const {
    std::map<std::string, std::string> out;
    for (const SkippedPath& s : w.skipped)
      out[relative(s.path, root_.string()) + (s.directory ? "/" : "")] = std::string(name_of(s.reason)) + " " + s.detail;
    return out;
  }
  fs::path root_;
};

TEST_F(WalkTree, GitignoreAtTheTopAndBelow) {
  file(".gitignore", "# comments and blanks\n\n*.log.sh\n/generated/\nout/\n!keep.log.sh\nsecrets/**\n");
  file("a.sh");
  file("debug.log.sh");
  file("keep.log.sh");
  file("generated/gen.sh");
  file("sub/generated/kept.sh");  // /generated/ is anchored at the top
  file("sub/out/x.sh");
  file("secrets/token.sh");
  file("sub/.gitignore", "local.sh\n!/again.sh\n");
  file("sub/local.sh");
  file("sub/deeper/local.sh");
  const WalkResult w = walk_paths({root_.string()});
  EXPECT_EQ(files_of(w), (std::vector<std::string>{"a.sh", "keep.log.sh", "sub/generated/kept.sh"}));
  const auto skipped = skipped_of(w);
  EXPECT_EQ(skipped.at("debug.log.sh"), "gitignored " + path(".gitignore") + ":3: *.log.sh");
  EXPECT_EQ(skipped.at("generated/"), "gitignored " + path(".gitignore") + ":4: /generated/");
  EXPECT_EQ(skipped.at("sub/out/"), "gitignored " + path(".gitignore") + ":5: out/");
  EXPECT_EQ(skipped.at("secrets/"), "gitignored " + path(".gitignore") + ":7: secrets/**");
  EXPECT_EQ(skipped.at("sub/local.sh"), "gitignored " + path("sub/.gitignore") + ":1: local.sh");
  EXPECT_EQ(skipped.at("sub/deeper/local.sh"), "gitignored " + path("sub/.gitignore") + ":1: local.sh");
  EXPECT_EQ(skipped.at(".gitignore").substr(0, 10), "other-kind");
  expect_everything_counted(root_.string(), w);
  // Without .gitignore files, every script is read.
  WalkOptions all;
  all.gitignore = false;
  EXPECT_EQ(walk_paths({root_.string()}, all).files.size(), 9u);
}

TEST_F(WalkTree, ExcludeAndInclude) {
  file("deploy/serve.sh");
  file("deploy/old/serve.sh");
  file("docs/guide.md", "# guide\n");
  file("build/run.sh");
  file("notes.txt", "python3 -m sglang.launch_server\n");
  WalkOptions o;
  o.exclude = {"old/", "docs"};
  o.include = {"build", "*.txt"};
  const WalkResult w = walk_paths({root_.string()}, o);
  EXPECT_EQ(files_of(w), (std::vector<std::string>{"build/run.sh", "deploy/serve.sh", "notes.txt"}));
  const auto skipped = skipped_of(w);
  EXPECT_EQ(skipped.at("deploy/old/"), "excluded --exclude 'old/'");
  EXPECT_EQ(skipped.at("docs/"), "excluded --exclude 'docs'");
  EXPECT_EQ(skipped.size(), 2u);
  // --exclude wins over --include, and holds for a file named too.
  o.exclude = {"build/**", "notes.txt"};
  o.include = {"build/**"};
  const WalkResult x = walk_paths({root_.string(), path("notes.txt")}, o);
  EXPECT_EQ(files_of(x), (std::vector<std::string>{"deploy/old/serve.sh", "deploy/serve.sh", "docs/guide.md"}));
  EXPECT_EQ(skipped_of(x).at("build/"), "excluded --exclude 'build/**'");
  // A glob with the walked directory in it matches the path as shown.
  WalkOptions shown;
  shown.exclude = {path("deploy")};
  EXPECT_EQ(skipped_of(walk_paths({root_.string()}, shown)).count("deploy/"), 1u);
}

TEST_F(WalkTree, LinksAndSpecialFilesAreCounted) {
  file("real/serve.sh");
  fs::create_symlink(root_ / "real" / "serve.sh", root_ / "link.sh");
  fs::create_directory_symlink(root_ / "real", root_ / "linked-dir");
  ASSERT_EQ(::mkfifo(path("pipe.sh").c_str(), 0600), 0);
  const WalkResult w = walk_paths({root_.string()});
  EXPECT_EQ(files_of(w), (std::vector<std::string>{"real/serve.sh"}));
  const auto skipped = skipped_of(w);
  EXPECT_EQ(skipped.at("link.sh").substr(0, 7), "symlink");
  EXPECT_EQ(skipped.at("linked-dir").substr(0, 7), "symlink");
  EXPECT_EQ(skipped.at("pipe.sh"), "special not a regular file");
  expect_everything_counted(root_.string(), w);
}

TEST_F(WalkTree, KindsByNameAndFirstLine) {
  file("run", "#!/usr/bin/env -S bash -e\npython3 -m sglang.launch_server\n");
  file("tool", "#!/usr/bin/python3\nimport os\n");
  file("ruby-tool", "#!/usr/bin/env ruby\nputs 1\n");
  file("plain", "python3 -m sglang.launch_server\n");
  file("job.sbatch", "python3 -m sglang.launch_server\n");
  file("Procfile.dev", "web: python3 -m sglang.launch_server\n");
  file("sub/makefile", "all:\n\ttrue\n");
  file("units/a.service", "[Service]\nExecStart=/bin/true\n");
  file("conf.yaml.j2", "a: 1\n");
  file("nginx.conf.j2", "server {}\n");
  file("Cargo.toml", "[package]\n");
  const WalkResult w = walk_paths({root_.string()});
  EXPECT_EQ(files_of(w), (std::vector<std::string>{"Procfile.dev", "conf.yaml.j2", "job.sbatch", "run", "sub/makefile",
                                                   "tool", "units/a.service"}));
  const auto skipped = skipped_of(w);
  EXPECT_EQ(skipped.at("ruby-tool"), "other-kind a ruby script, not a kind check reads");
  EXPECT_EQ(skipped.at("plain"), "other-kind not a kind check reads (no known name, extension or shebang)");
  EXPECT_EQ(skipped.at("nginx.conf.j2"), "other-kind a .j2 file, not a kind check reads");
  EXPECT_EQ(skipped.at("Cargo.toml"), "other-kind a .toml file, not a kind check reads");
  EXPECT_EQ(recognised_format("run", "#!/usr/bin/env -S bash -e\n"), InputFormat::shell);
  EXPECT_EQ(recognised_format("tool", "#!/usr/bin/python3\n"), InputFormat::python);
  EXPECT_EQ(recognised_format("GNUmakefile", ""), InputFormat::makefile);
  EXPECT_EQ(recognised_format("rules.mk", ""), InputFormat::makefile);
  EXPECT_EQ(recognised_format("Justfile", ""), InputFormat::justfile);
  EXPECT_EQ(recognised_format("docs/x.mdx", ""), InputFormat::markdown);
  EXPECT_EQ(recognised_format("serve.sh.jinja", ""), InputFormat::shell);
  EXPECT_EQ(recognised_format("deploy.yaml.j2", "a: {{ b }}\n"), InputFormat::helm);
  EXPECT_EQ(recognised_format("job.pbs", ""), InputFormat::shell);
  EXPECT_EQ(recognised_format("plain", "python3\n"), std::nullopt);
  EXPECT_EQ(detect_input_format("plain", "python3\n"), InputFormat::shell);  // named alone: read as a script
}

TEST_F(WalkTree, Budgets) {
  std::string deep;
  for (int i = 0; i < 6; ++i) deep += "d/";
  file(deep + "serve.sh");
  file("a.sh");
  file("b.sh");
  WalkOptions shallow;
  shallow.max_depth = 3;
  const WalkResult w = walk_paths({root_.string()}, shallow);
  ASSERT_EQ(w.problems.size(), 1u);
  EXPECT_NE(w.problems[0].message.find("deeper than 3 levels"), std::string::npos) << w.problems[0].message;
  WalkOptions few;
  few.max_entries = 2;
  const WalkResult x = walk_paths({root_.string()}, few);
  ASSERT_EQ(x.problems.size(), 1u);
  EXPECT_NE(x.problems[0].message.find("more than 2 entries"), std::string::npos) << x.problems[0].message;
}

TEST_F(WalkTree, NothingToReadSaysWhatWasPassedOver) {
  file("infra/build/run.sh");
  file("infra/notes.txt", "x\n");
  const WalkResult w = walk_paths({path("infra")});
  EXPECT_TRUE(w.files.empty());
  EXPECT_EQ(w.empty_directories, (std::vector<std::string>{path("infra")}));
  const std::string m = nothing_read_message(w);
  EXPECT_NE(m.find("passed over 1 folder and 1 file"), std::string::npos) << m;
  EXPECT_NE(m.find("build output"), std::string::npos) << m;
  EXPECT_NE(m.find("attnsel check " + path("infra/build")), std::string::npos) << m;
  EXPECT_NE(m.find("--include 'build'"), std::string::npos) << m;
  EXPECT_EQ(nothing_read_message(walk_paths({path("infra/build")})), "");
}

// ---- the library's path check, and the command line ----

TEST(CheckPaths, ADirectoryIsItsFilesCheckedOneByOne) {
  auto matrix = builtin_matrix();
  auto catalog = builtin_catalog();
  ASSERT_TRUE(matrix && catalog);
  CheckRun run;
  run.gpus = "sm90,sm100";
  auto walked = check_paths(*matrix, **catalog, {kDir}, run);
  ASSERT_TRUE(walked) << walked.error().describe();
  const WalkResult walk = walk_paths({kDir});
  ASSERT_EQ(walked->reports.size(), walk.files.size());
  std::size_t commands = 0;
  for (std::size_t k = 0; k < walk.files.size(); ++k) {
    auto one = check_paths(*matrix, **catalog, {walk.files[k]}, run);
    ASSERT_TRUE(one) << one.error().describe();
    ASSERT_EQ(one->reports.size(), 1u);
    EXPECT_EQ(render_check_json(one->reports, CheckInputs{}), render_check_json({walked->reports[k]}, CheckInputs{}))
        << walk.files[k];
    commands += one->reports[0].checks.size();
  }
  EXPECT_GT(commands, 40u);
  const json doc = json::parse(render_check_json(*walked));
  EXPECT_EQ(doc["summary"]["files"], walk.files.size());
  EXPECT_EQ(doc["summary"]["skipped_directories"], walk.skipped_directories());
  EXPECT_EQ(doc["summary"]["skipped_files"], walk.skipped_files());
  // A walk that reads nothing is an error that says why.
  auto nothing = check_paths(*matrix, **catalog, {kDir + "/node_modules/.."}, run, WalkOptions{{"*"}, {}, true, 64, 1000000});
  ASSERT_FALSE(nothing);
  EXPECT_EQ(nothing.error().code, ErrorCode::io_error);
}

struct CliRun {
  int code = -1;
  std::string out, err;
};

CliRun run_cli(const std::string& args) {
  const fs::path dir = fs::temp_directory_path();
  const std::string out = (dir / ("attnsel-walk-out-" + std::to_string(::getpid()))).string();
  const std::string err = (dir / ("attnsel-walk-err-" + std::to_string(::getpid()))).string();
  const std::string command = std::string("env -u ATTNSEL_GPU -u ATTNSEL_MATRIX NO_COLOR=1 '") + ATTNSEL_CLI + "' " +
                              args + " >'" + out + "' 2>'" + err + "'";
  const int status = std::system(command.c_str());
  CliRun r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_text(out);
  r.err = read_text(err);
  fs::remove(out);
  fs::remove(err);
  return r;
}

class WalkCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string(ATTNSEL_CLI).empty()) GTEST_SKIP() << "the attnsel CLI is not built";
  }
};

TEST_F(WalkCli, ADirectoryGivesTheFindingsOfItsFilesNamedOneByOne) {
  const CliRun walked = run_cli("check --gpu sm90,sm100 --format json '" + kDir + "'");
  ASSERT_TRUE(walked.code == 0 || walked.code == 1) << walked.err;
  const json dir = json::parse(walked.out);
  const WalkResult walk = walk_paths({kDir});
  json results = json::array(), skipped = json::array();
  std::string all;
  for (const std::string& f : walk.files) {
    all += " '" + f + "'";
    const CliRun one = run_cli("check --gpu sm90,sm100 --format json '" + f + "'");
    ASSERT_TRUE(one.code == 0 || one.code == 1) << f << ": " << one.err;
    const json doc = json::parse(one.out);
    for (const json& r : doc["results"]) results.push_back(r);
    for (const json& s : doc["skipped"]) skipped.push_back(s);
  }
  EXPECT_EQ(dir["results"], results);
  EXPECT_EQ(dir["skipped"], skipped);
  EXPECT_GT(results.size(), 40u);
  const json named = json::parse(run_cli("check --gpu sm90,sm100 --format json" + all).out);
  EXPECT_EQ(named["results"], dir["results"]);
  EXPECT_EQ(named["summary"]["files"], dir["summary"]["files"]);
  EXPECT_EQ(named["summary"]["skipped_files"], 0);
  EXPECT_EQ(dir["summary"]["files"], walk.files.size());
  EXPECT_EQ(dir["summary"]["skipped_directories"], walk.skipped_directories());
  EXPECT_EQ(dir["summary"]["skipped_files"], walk.skipped_files());
}

TEST_F(WalkCli, WhatIsPassedOverIsCountedAndListed) {
  const CliRun r = run_cli("check --gpu sm90 '" + kDir + "'");
  const WalkResult walk = walk_paths({kDir});
  EXPECT_NE(r.err.find("passed over " + describe_skipped(walk) + " (--verbose lists them)"), std::string::npos)
      << r.err;
  const CliRun v = run_cli("check --gpu sm90 --verbose '" + kDir + "'");
  for (const SkippedPath& s : walk.skipped)
    EXPECT_NE(v.err.find("passed over " + s.path + (s.directory ? "/" : "") + " (" + s.detail + ")"), std::string::npos)
        << s.path << "\n" << v.err;
  EXPECT_EQ(v.code, r.code);
}

TEST_F(WalkCli, ADirectoryThatGivesNothingToReadExitsTwo) {
  const std::string modules = kDir + "/node_modules";
  const CliRun nothing = run_cli("check --gpu sm90 --exclude '*.sh' '" + modules + "'");
  EXPECT_EQ(nothing.code, 2) << nothing.err;
  EXPECT_NE(nothing.err.find("no file to read: passed over 1 file"), std::string::npos) << nothing.err;
  const json doc = json::parse(run_cli("check --gpu sm90 --format json --exclude '*.sh' '" + modules + "'").out);
  EXPECT_EQ(doc["ok"], false);
  EXPECT_EQ(doc["summary"]["input_problems"].size(), 1u);
  // Named, a folder of the skip list is read; from above, --include opens it.
  EXPECT_EQ(run_cli("check --gpu sm90 '" + modules + "'").code, 0);
  const CliRun included = run_cli("check --gpu sm90 --format json --include node_modules --include build '" + kDir + "'");
  const json inc = json::parse(included.out);
  const json plain = json::parse(run_cli("check --gpu sm90 --format json '" + kDir + "'").out);
  EXPECT_EQ(inc["summary"]["files"].get<int>(), plain["summary"]["files"].get<int>() + 2);
  EXPECT_EQ(inc["summary"]["skipped_directories"].get<int>(), plain["summary"]["skipped_directories"].get<int>() - 2);
}

}  // namespace
}  // namespace attnsel
