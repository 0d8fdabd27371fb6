// The incident table (tests/incidents/incidents.json): every real incident's launch command run
// through the library's check on its GPU and release, and the verdict asserted. An in-scope
// incident must fail with a finding that names its cause, unless tests/incidents/expected.json
// lists it as an expected miss (with the reason); a listed miss that starts being caught fails
// the test too, so the list stays honest. Every confirmed-working command must raise no error.
//
// The measure: ATTNSEL_INCIDENT_REPORT=1 ./incidents_test --gtest_filter='Incidents.Recall'
// prints one line per incident and the recall; the summary line is printed on every run.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "attnsel/check_input.hpp"

#ifndef ATTNSEL_SOURCE_DIR
#define ATTNSEL_SOURCE_DIR "."
#endif

namespace attnsel {
namespace {

using json = nlohmann::json;

json read_json(const std::string& relative) {
  const std::string path = std::string(ATTNSEL_SOURCE_DIR) + "/" + relative;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::ostringstream text;
  text << in.rdbuf();
  return json::parse(text.str());
}

const json& incidents() {
  static const json j = read_json("tests/incidents/incidents.json");
  return j;
}
const json& expectations() {
  static const json j = read_json("tests/incidents/expected.json");
  return j;
}

// Advisory id -> the advisory, both engines.
const std::map<std::string, json>& advisories() {
  static const std::map<std::string, json> m = [] {
    std::map<std::string, json> out;
    for (const char* engine : {"sglang", "vllm"}) {
      const json doc = read_json(std::string("data/engines/") + engine + "/advisories.json");
      for (const json& a : doc["advisories"]) out[a["id"].get<std::string>()] = a;
    }
    return out;
  }();
  return m;
}

const Catalog& catalog() {
  static const std::shared_ptr<const Catalog> c = *builtin_catalog();
  return *c;
}

std::string str(const json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

// The GPU an incident is checked on: its architecture; when the thread names none, the first
// architecture its advisory names, else the platform's usual one (documented in the README).
std::string target_of(const json& entry) {
  if (!str(entry, "arch").empty()) return str(entry, "arch");
  const json& expected = entry.contains("expected") ? entry["expected"] : json::object();
  const std::string id = str(expected, "advisory");
  if (auto it = advisories().find(id); it != advisories().end() && it->second.contains("gpus"))
    for (const json& g : it->second["gpus"])
      if (g.get<std::string>().rfind("sm", 0) == 0 || g.get<std::string>().rfind("gfx", 0) == 0) return g;
  const std::string platform = str(entry, "platform");
  if (platform == "rocm") return "gfx942";
  if (platform == "npu") return "npu";
  return "sm90";
}

struct Outcome {
  std::string gpu;
  std::string problem;  // the check itself failed (no report)
  std::vector<CheckDiagnostic> findings;  // errors and warnings of every command
  bool caught = false;           // a finding names the cause
  bool caught_as_error = false;  // ... and it is an error
  bool any_error = false;
};

// Rules that say something about the command's grammar or attnsel's reading of it, not about why
// the launch broke; they do not name an incident's cause unless its rule class is a grammar one.
bool generic_rule(const std::string& rule) {
  return rule.rfind("args.", 0) == 0 || rule.rfind("check.", 0) == 0;
}

Outcome run(const json& entry) {
  Outcome out;
  out.gpu = target_of(entry);
  auto matrix = builtin_matrix(str(entry, "engine"), std::nullopt);
  if (!matrix) {
    out.problem = matrix.error().describe();
    return out;
  }
  CheckInput input;
  input.text = str(entry, "command") + "\n";
  input.file_name = "incident.sh";
  CheckRun run;
  run.gpus = out.gpu;
  if (!str(entry, "release").empty()) run.release = str(entry, "release");
  auto report = check_input(*matrix, catalog(), input, run);
  if (!report) {
    out.problem = report.error().describe();
    return out;
  }
  for (const ReportFinding& f : report_findings(*report)) {
    const Severity s = f.finding.diagnostic.severity;
    if (s == Severity::info) continue;
    out.findings.push_back(f.finding);
    if (s == Severity::error) out.any_error = true;
  }
  const json& expected = entry.contains("expected") ? entry["expected"] : json::object();
  const std::string advisory = str(expected, "advisory"), rule_class = str(expected, "rule");
  bool range_unknown = false;
  if (auto it = advisories().find(advisory); it != advisories().end())
    range_unknown = it->second["introduced"].is_null() && it->second["fixed"].is_null();
  const bool grammar_class = rule_class == "unknown-flag" || rule_class == "flag-conflict" || rule_class == "env";
  for (const CheckDiagnostic& d : out.findings) {
    const std::string& rule = d.diagnostic.rule;
    const bool error = d.diagnostic.severity == Severity::error;
    bool names = false;
    if (!advisory.empty() && rule == "advisory." + advisory) names = error || range_unknown;
    if (rule_class != "advisory" && error && rule.rfind("advisory.", 0) != 0)
      names = names || !generic_rule(rule) || (grammar_class && rule.rfind("check.env", 0) == 0);
    if (names) {
      out.caught = true;
      out.caught_as_error = out.caught_as_error || error;
    }
  }
  return out;
}

std::string describe(const Outcome& o) {
  std::string s = "[" + o.gpu + "]";
  if (!o.problem.empty()) return s + " check failed: " + o.problem;
  for (const CheckDiagnostic& d : o.findings)
    s += std::string(" ") + (d.diagnostic.severity == Severity::error ? "E:" : "W:") + d.diagnostic.rule;
  return s;
}

std::map<std::string, std::string> listed(const char* key) {
  std::map<std::string, std::string> out;
  for (const json& m : expectations()[key]) out[m["id"].get<std::string>()] = str(m, "reason");
  return out;
}

TEST(Incidents, ExpectationsListIsWellFormed) {
  std::set<std::string> ids;
  for (const char* kind : {"incidents", "working"})
    for (const json& e : incidents()[kind]) ids.insert(str(e, "id"));
  for (const char* key : {"expected_misses", "known_false_alarms"}) {
    ASSERT_TRUE(expectations().contains(key)) << key;
    for (const json& m : expectations()[key]) {
      EXPECT_TRUE(ids.count(str(m, "id"))) << key << ": no incident " << m.dump();
      EXPECT_GE(str(m, "reason").size(), 20U) << key << ": " << str(m, "id") << " needs a reason";
    }
  }
}

TEST(Incidents, InScopeIncidentsAreCaughtOrExpectedMisses) {
  const auto misses = listed("expected_misses");
  for (const json& inc : incidents()["incidents"]) {
    const std::string id = str(inc, "id");
    const Outcome o = run(inc);
    EXPECT_TRUE(o.problem.empty()) << id << ": " << o.problem;
    if (!inc.value("in_scope", true)) {
      EXPECT_FALSE(misses.count(id)) << id << " is out of scope; it is no expected miss";
      continue;
    }
    if (misses.count(id))
      EXPECT_FALSE(o.caught) << id << " is listed as an expected miss (" << misses.at(id)
                             << ") but is caught now: remove it from tests/incidents/expected.json. " << describe(o);
    else
      EXPECT_TRUE(o.caught) << id << " (" << inc["expected"].dump() << ") is not caught: " << describe(o);
  }
}

TEST(Incidents, ConfirmedWorkingCommandsRaiseNoError) {
  const auto alarms = listed("known_false_alarms");
  for (const json& work : incidents()["working"]) {
    const std::string id = str(work, "id");
    const Outcome o = run(work);
    EXPECT_TRUE(o.problem.empty()) << id << ": " << o.problem;
    if (alarms.count(id))
      EXPECT_TRUE(o.any_error) << id << " is listed as a known false alarm (" << alarms.at(id)
                               << ") but raises no error now: remove it from tests/incidents/expected.json";
    else
      EXPECT_FALSE(o.any_error) << id << " works (" << str(work, "link") << ") but check reports an error: " << describe(o);
  }
}

// The measure of issue 22: in-scope incidents caught (a finding naming the cause; as an error), and
// confirmed-working commands with an error. Printed always; per incident with ATTNSEL_INCIDENT_REPORT.
TEST(Incidents, Recall) {
  const bool verbose = std::getenv("ATTNSEL_INCIDENT_REPORT") != nullptr;
  int in_scope = 0, caught = 0, as_error = 0, working = 0, false_alarms = 0;
  for (const json& inc : incidents()["incidents"]) {
    if (!inc.value("in_scope", true)) continue;
    ++in_scope;
    const Outcome o = run(inc);
    caught += o.caught;
    as_error += o.caught_as_error;
    if (verbose)
      std::cout << str(inc, "id") << (o.caught_as_error ? " caught (error)  " : o.caught ? " caught (warning)" : " missed          ")
                << " expected " << inc["expected"].value("rule", "") << " " << inc["expected"].value("advisory", "")
                << "  got " << describe(o) << "\n";
  }
  for (const json& work : incidents()["working"]) {
    ++working;
    const Outcome o = run(work);
    false_alarms += o.any_error;
    if (verbose) std::cout << str(work, "id") << (o.any_error ? " ERROR " : " ok    ") << describe(o) << "\n";
  }
  std::cout << "incident recall: " << caught << "/" << in_scope << " in-scope incidents caught (" << as_error
            << " as errors); " << false_alarms << "/" << working << " confirmed-working commands raise an error\n";
  SUCCEED();
}

}  // namespace
}  // namespace attnsel
