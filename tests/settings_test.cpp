// Settings files (settings.hpp): discovery in a scratch tree and parsing, each case a row of
// tests/cases/settings_cases.json; then the CLI's precedence (a flag wins over its key) end to end.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include "attnsel/settings.hpp"

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

json cases() {
  std::ifstream in(std::string(ATTNSEL_TESTS_DIR) + "/cases/settings_cases.json");
  return json::parse(in);
}

// A scratch directory, removed at the end.
struct Scratch {
  fs::path root;
  Scratch() {
    std::string tmpl = (fs::temp_directory_path() / "attnsel-settings-XXXXXX").string();
    root = ::mkdtemp(tmpl.data());
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  void write(const std::string& rel, const std::string& text) const {
    fs::create_directories((root / rel).parent_path());
    std::ofstream(root / rel, std::ios::binary) << text;
  }
};

std::string code_name(ErrorCode c) {
  switch (c) {
    case ErrorCode::invalid_argument: return "invalid_argument";
    case ErrorCode::unknown_name: return "unknown_name";
    case ErrorCode::parse_error: return "parse_error";
    case ErrorCode::io_error: return "io_error";
    default: return "other";
  }
}

TEST(SettingsDiscovery, AsTheTableSays) {
  const json all = cases();  // a range-for over a temporary's member would read freed memory
  for (const json& c : all.at("discovery")) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    Scratch s;
    for (const auto& [path, text] : c.at("files").items()) s.write(path, text.get<std::string>());
    auto found = find_settings_file((s.root / c.at("path").get<std::string>()).string());
    if (c.contains("error")) {
      ASSERT_FALSE(found.ok());
      const std::string where = found.error().where;
      const std::string expected = (s.root / c.at("error").get<std::string>()).string();
      EXPECT_EQ(where.rfind(expected, 0), 0u) << where;
      continue;
    }
    ASSERT_TRUE(found.ok()) << found.error().describe();
    if (c.at("found").is_null()) {
      EXPECT_FALSE(found->has_value()) << **found;
    } else {
      ASSERT_TRUE(found->has_value());
      EXPECT_EQ(fs::path(**found), s.root / c.at("found").get<std::string>());
    }
  }
}

json as_json(const Settings& s) {
  json j = json::object();
  auto put = [&](const char* key, const auto& v) {
    if (v) j[key] = *v;
  };
  put("gpus", s.gpus);
  put("cuda", s.cuda);
  put("engine_version", s.engine_version);
  put("sglang_version", s.sglang_version);
  put("vllm_version", s.vllm_version);
  put("unknown_model", s.unknown_model);
  put("model_kind", s.model_kind);
  put("strict", s.strict);
  put("gitignore", s.gitignore);
  put("report_unused_suppressions", s.report_unused_suppressions);
  if (!s.exclude.empty()) j["exclude"] = s.exclude;
  if (!s.include.empty()) j["include"] = s.include;
  for (const auto& [key, list] : {std::pair{"select", &s.rules.select}, std::pair{"ignore", &s.rules.ignore}})
    for (const RulePattern& p : *list) j[key].push_back(p.pattern + " @ " + p.where);
  for (const PathRules& r : s.rules.per_path)
    for (const RulePattern& p : r.ignore) j["per_path"].push_back(r.glob + " = " + p.pattern + " @ " + p.where);
  return j;
}

TEST(SettingsParse, AsTheTableSays) {
  const json all = cases();
  for (const json& c : all.at("parse")) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    std::string text;
    if (c.contains("text")) text = c.at("text").get<std::string>();
    if (c.contains("text_hex")) {
      const std::string hex = c.at("text_hex").get<std::string>();
      for (std::size_t i = 0; i + 1 < hex.size(); i += 2) text += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
    }
    if (c.contains("text_repeat")) {
      const json& r = c.at("text_repeat");
      text = r[0].get<std::string>();
      for (int k = 0; k < r[2].get<int>(); ++k) text += r[1].get<std::string>();
    }
    const std::string file = c.at("file").get<std::string>();
    auto parsed = parse_settings(text, file, file == "pyproject.toml");
    if (c.contains("error")) {
      ASSERT_FALSE(parsed.ok()) << as_json(*parsed).dump();
      const json& e = c.at("error");
      EXPECT_EQ(code_name(parsed.error().code), e.at("code").get<std::string>()) << parsed.error().describe();
      if (e.contains("where")) {
        const std::string where = e.at("where").get<std::string>();
        if (where.back() == ':') {
          EXPECT_EQ(parsed.error().where.rfind(where, 0), 0u) << parsed.error().where;
        } else {
          EXPECT_EQ(parsed.error().where, where);
        }
      }
      if (e.contains("contains")) {
        EXPECT_NE(parsed.error().message.find(e.at("contains").get<std::string>()), std::string::npos)
            << parsed.error().message;
      }
      if (e.contains("suggestion")) {
        EXPECT_EQ(parsed.error().suggestion, e.at("suggestion").get<std::string>());
      }
      continue;
    }
    ASSERT_TRUE(parsed.ok()) << parsed.error().describe();
    EXPECT_EQ(as_json(*parsed), c.at("expect"));
  }
}

TEST(SettingsParse, EveryKeyIsDocumented) {
  std::ifstream in(std::string(ATTNSEL_SOURCE_DIR) + "/docs/ci.md");
  std::stringstream doc;
  doc << in.rdbuf();
  for (const std::string& k : settings_keys()) EXPECT_NE(doc.str().find("`" + k + "`"), std::string::npos) << k;
}

// ---- the CLI: discovery, precedence, errors (exit 2 with the place) ----

struct CliRun {
  int code = -1;
  std::string out;
};

CliRun cli(const fs::path& cwd, const std::string& args) {
  const std::string command = "cd '" + cwd.string() + "' && env -u ATTNSEL_GPU -u ATTNSEL_MATRIX NO_COLOR=1 '" +
                              std::string(ATTNSEL_CLI) + "' " + args + " 2>&1";
  CliRun r;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf{};
  std::size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

const char* kPrefixed = "python3 -m sglang.launch_server --model-pa meta-llama/Llama-3.1-8B-Instruct --attention-backend trtllm_mla\n";

TEST(SettingsCli, TheNearestFileHoldsAndFlagsWin) {
  if (std::string(ATTNSEL_CLI).empty()) GTEST_FAIL() << "built without the CLI";
  Scratch s;
  s.write(".git/HEAD", "ref\n");
  s.write(".attnsel.toml", "gpus = \"sm90\"\nignore = [\"cell\"]\n");
  s.write("deploy/serve.sh", kPrefixed);
  // The settings give the GPU and ignore the cell.* errors: clean, 1 suppressed.
  CliRun r = cli(s.root, "check deploy/serve.sh");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("finding suppressed"), std::string::npos) << r.out;
  // --isolated: no settings, so no GPU.
  r = cli(s.root, "check --isolated deploy/serve.sh");
  EXPECT_EQ(r.code, 2) << r.out;
  // --gpu wins over gpus; --ignore adds to ignore; --select replaces select.
  r = cli(s.root, "check --gpu B200 --format json deploy/serve.sh");
  EXPECT_NE(r.out.find("\"gpu\": \"B200\""), std::string::npos) << r.out;
  r = cli(s.root, "check --select args --format json deploy/serve.sh");
  const json doc = json::parse(r.out.substr(r.out.find('{')));
  EXPECT_EQ(doc["summary"]["errors"], 0) << r.out;
  EXPECT_TRUE(doc["ok"].get<bool>());
  // A nested directory's own file wins for the paths under it.
  s.write("deploy/.attnsel.toml", "gpus = \"sm90\"\n");
  r = cli(s.root, "check deploy/serve.sh");
  EXPECT_EQ(r.code, 1) << r.out;
  // Two paths whose nearest files differ: one run cannot honour both.
  s.write("other/serve.sh", kPrefixed);
  r = cli(s.root, "check deploy/serve.sh other/serve.sh");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("different settings files"), std::string::npos) << r.out;
  // --settings names one for both.
  r = cli(s.root, "check --settings .attnsel.toml deploy/serve.sh other/serve.sh");
  EXPECT_EQ(r.code, 0) << r.out;
}

TEST(SettingsCli, BadSettingsAndUnknownRulesExitTwoWithThePlace) {
  if (std::string(ATTNSEL_CLI).empty()) GTEST_FAIL() << "built without the CLI";
  Scratch s;
  s.write(".git/HEAD", "ref\n");
  s.write("serve.sh", kPrefixed);
  s.write(".attnsel.toml", "gpus = \"sm90\"\nstirct = true\n");
  CliRun r = cli(s.root, "check serve.sh");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find(".attnsel.toml:2:1: unknown key 'stirct'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("did you mean 'strict'"), std::string::npos) << r.out;
  s.write(".attnsel.toml", "gpus = \"sm90\"\n");
  r = cli(s.root, "check --ignore args.prefx serve.sh");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("--ignore: unknown rule 'args.prefx'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("did you mean 'args.prefix'"), std::string::npos) << r.out;
  // A GPU the settings name that does not exist: the error says where it came from.
  s.write(".attnsel.toml", "gpus = \"H1OO\"\n");
  r = cli(s.root, "check serve.sh");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("H1OO"), std::string::npos) << r.out;
  // pyproject.toml's [tool.attnsel], with per-file-ignores relative to it.
  fs::remove(s.root / ".attnsel.toml");
  s.write("pyproject.toml", "[project]\nname = \"x\"\n[tool.attnsel]\ngpus = \"sm90\"\n[tool.attnsel.per-file-ignores]\n\"deploy/**\" = [\"cell\"]\n");
  s.write("deploy/a/serve.sh", kPrefixed);
  r = cli(s.root, "check deploy/a/serve.sh");
  EXPECT_EQ(r.code, 0) << r.out;
  r = cli(s.root / "deploy", "check a/serve.sh");  // found from below, the glob still relative to pyproject.toml
  EXPECT_EQ(r.code, 0) << r.out;
  r = cli(s.root, "check serve.sh");
  EXPECT_EQ(r.code, 1) << r.out;
}

}  // namespace
}  // namespace attnsel
